#!/usr/bin/env bash
# bench/search/run.sh — full-text search benchmark (`make bench`; docs/benchmarks.md "Full-text
# search"): OmniGraph-C bm25 top-10 against SQLite FTS5, same documents, same queries, same
# process (bench_search.c over the public API and libsqlite3), on
#   - WordNet 3.0 glosses (Debian package wordnet-base, 117,659 documents; installed here with
#     apt-get when missing and we may, else that corpus is skipped with a SKIP line), and
#   - ZIPF_DOCS (default 1,000,000) generated Zipf(1.1) documents of 10-60 words.
# Per corpus: load time, `omnigraph index build` time, FTS5 build time, latency p50/p95 in
# wall and thread-CPU time (REPS runs of 100 queries after a warm-up), the top-10 overlap,
# and the latency without index files (OG_INDEX=off, 10 queries: the first analyses the
# column, later ones read the process's cache of analysed fragments) for scale.  For corpora
# of at most COMPARE_MAX documents (default 200,000) also the ranking comparison
# (bench_search --compare: fraction of queries with FTS5's exact top 10, each difference
# attributed; docs/search.md) into $OUT/ranking.tsv and $OUT/<corpus>.ranking.tsv.  Writes
# $OUT/search.tsv and, when gnuplot is installed, $OUT/search.svg (OUT default: a temp dir,
# printed).  Usage: bench/search/run.sh [BUILD_DIR]   env: ZIPF_DOCS, REPS, OUT, COMPARE_MAX
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin="${1:-$here/build/release}"
case "$bin" in /*) ;; *) bin="$here/$bin" ;; esac
zipf_docs="${ZIPF_DOCS:-1000000}"
reps="${REPS:-5}"
compare_max="${COMPARE_MAX:-200000}"
og="$bin/omnigraph"
[ -x "$og" ] && [ -f "$bin/libomnigraph.a" ] || { echo "bench/search: build first (make build)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/og-search-bench-XXXXXX")
trap 'rm -rf "$work"' EXIT
out="${OUT:-$work/out}"
mkdir -p "$out"

cc -O2 -std=c11 -o "$work/bench_search" "$here/bench/search/bench_search.c" -I"$here/include" -I"$here/src" \
  "$bin/libomnigraph.a" $(pkg-config --libs jansson libcurl openssl libzstd liblz4 libpcre2-8 libutf8proc yaml-0.1 icu-uc icu-i18n) \
  -lroaring -lstemmer -lsqlite3 -lstdc++ -lm -lpthread

if [ ! -f /usr/share/wordnet/data.noun ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q wordnet-base >/dev/null 2>&1 || true
fi

secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N); awk "BEGIN{printf \"%.2f\", $t1-$t0}"; }
field() { sed -n "s/.*\"$2\":\([0-9.e+-]*\).*/\1/p" <<<"$1"; }

printf 'corpus\tdocs\tload_s\tindex_s\tfts5_build_s\tog_p50_ms\tog_p95_ms\tog_cpu_p50_ms\tfts5_p50_ms\tfts5_p95_ms\tfts5_cpu_p50_ms\ttop10_overlap\tnoindex_first_ms\tnoindex_p50_ms\n' >"$out/search.tsv"
printf 'corpus\tqueries\tstock_same_order\tstock_same_set\tstock_own_ties_same_order\tcomparable_same_order\tcategories\n' >"$out/ranking.tsv"

one() { # name docs.ndjson queries.txt
  local name=$1 docs=$2 q=$3 g="$work/$1.graph" n
  n=$(wc -l <"$docs")
  printf 'node Doc { slug: String @key  body: String @index }\n' >"$work/s.pg"
  "$og" init --schema "$work/s.pg" "$g" --quiet >/dev/null
  local load_s index_s res noidx
  load_s=$(secs "$og" load --mode overwrite --data "$docs" "$g" --quiet)
  index_s=$(secs "$og" index build --property Doc.body "$g" --quiet)
  res=$("$work/bench_search" "$g" "$work/$name.fts5" "$docs" "$q" "$reps")
  head -10 "$q" >"$work/q10"
  # a cache big enough for the whole column (the default 256 MB would cycle at 1M documents)
  noidx=$(OG_INDEX=off OG_TEXT_CACHE_MB="${OG_TEXT_CACHE_MB:-2048}" "$work/bench_search" "$g" "$work/$name.fts5" "$docs" "$work/q10" 1)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$n" "$load_s" "$index_s" \
    "$(field "$res" fts5_build_s)" "$(field "$res" og_wall_ms_p50)" "$(field "$res" og_wall_ms_p95)" \
    "$(field "$res" og_cpu_ms_p50)" "$(field "$res" fts5_wall_ms_p50)" "$(field "$res" fts5_wall_ms_p95)" \
    "$(field "$res" fts5_cpu_ms_p50)" "$(field "$res" top10_overlap)" "$(field "$noidx" og_first_query_ms)" \
    "$(field "$noidx" og_wall_ms_p50)" >>"$out/search.tsv"
  echo "$name ($n docs): load ${load_s}s, index build ${index_s}s; $res; no index files: $noidx" >&2
  if [ "$n" -le "$compare_max" ]; then
    local cmp
    cmp=$("$work/bench_search" --compare "$g" "$docs" "$q" "$out/$name.ranking.tsv")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$(field "$cmp" queries)" "$(field "$cmp" stock_same_order)" \
      "$(field "$cmp" stock_same_set)" "$(field "$cmp" stock_own_ties_same_order)" \
      "$(field "$cmp" comparable_same_order)" "$(sed 's/.*"categories":{\(.*\)}}/\1/' <<<"$cmp")" >>"$out/ranking.tsv"
    echo "$name ranking against FTS5: $cmp" >&2
  fi
  rm -rf "$g" "$work/$name.fts5"
}

if [ -f /usr/share/wordnet/data.noun ]; then
  python3 "$here/bench/search/corpus.py" wordnet "$work/wn.ndjson" "$work/wn.q"
  one wordnet "$work/wn.ndjson" "$work/wn.q"
  rm -f "$work/wn.ndjson"
else
  echo "SKIP: bench/search wordnet corpus: /usr/share/wordnet is missing (apt-get install wordnet-base)" >&2
fi
python3 "$here/bench/search/corpus.py" zipf "$zipf_docs" "$work/zipf.ndjson" "$work/zipf.q"
one "zipf$zipf_docs" "$work/zipf.ndjson" "$work/zipf.q"

echo
column -t -s $'\t' "$out/search.tsv"
echo
column -t -s $'\t' "$out/ranking.tsv"
if command -v gnuplot >/dev/null; then
  gnuplot <<GP
set terminal svg size 720,360 font "sans,11"
set output "$out/search.svg"
set title "bm25 top-10 latency, median thread-CPU ms (lower is better; log scale)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set ylabel "ms"
set logscale y
set yrange [0.1:*]
set key top left
plot "$out/search.tsv" every ::1 using 8:xtic(1) title "OmniGraph-C (indexed)", '' every ::1 using 11 title "SQLite FTS5"
GP
  echo "chart: $out/search.svg"
else
  echo "SKIP: no gnuplot (apt-get install gnuplot-nox) — no chart" >&2
fi
if [ -z "${OUT:-}" ]; then
  cp "$out/search.tsv" "${TMPDIR:-/tmp}/og-search-bench.tsv"
  cp "$out/ranking.tsv" "${TMPDIR:-/tmp}/og-search-ranking.tsv"
fi
