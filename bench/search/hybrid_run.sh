#!/usr/bin/env bash
# bench/search/hybrid_run.sh — hybrid search benchmark (`make bench`; docs/benchmarks.md
# "Hybrid search"): one query with a filter, a traversal and rrf(nearest, bm25), against the
# sum of its parts each run alone (traversal, filter, nearest through the vector index, bm25
# through the full-text index), same graph, same process, same run (bench_hybrid.c over the
# public C API).  Also the unfiltered rrf with its nearest arm through the vector index and
# forced exact.  Steps: generate HYBRID_DOCS (default 100,000) documents with 64-d vectors,
# 200 tags and 1-3 tag edges each; `omnigraph load`; `omnigraph index build` (fts, vector,
# scalar; timed); then 100 queries x REPS (default 3) per shape, median latency.
# Writes $OUT/hybrid.tsv and, with gnuplot, $OUT/hybrid.svg (OUT default: /tmp/og-hybrid-bench).
# Usage: bench/search/hybrid_run.sh [BUILD_DIR]   env: HYBRID_DOCS, REPS, OUT, HYBRID_WORK (a
# directory to work in and keep; default a temporary one, removed)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin="${1:-$here/build/release}"
case "$bin" in /*) ;; *) bin="$here/$bin" ;; esac
docs="${HYBRID_DOCS:-100000}"
reps="${REPS:-3}"
og="$bin/omnigraph"
[ -x "$og" ] && [ -f "$bin/libomnigraph.a" ] || { echo "bench/search/hybrid: build first (make build)" >&2; exit 1; }
if [ -n "${HYBRID_WORK:-}" ]; then # kept afterwards (graph, data, bench_hybrid: for profiling)
  work="$HYBRID_WORK"
  rm -rf "$work/graph"
  mkdir -p "$work"
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/og-hybrid-bench-XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi
out="${OUT:-${TMPDIR:-/tmp}/og-hybrid-bench}"
mkdir -p "$out"

cc -O2 -std=c11 -o "$work/bench_hybrid" "$here/bench/search/bench_hybrid.c" -I"$here/include" \
  "$bin/libomnigraph.a" $(pkg-config --libs jansson libcurl openssl libzstd liblz4 libpcre2-8 libutf8proc yaml-0.1 icu-uc icu-i18n) \
  -lroaring -lstemmer -lstdc++ -lm -lpthread

secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N); awk "BEGIN{printf \"%.2f\", $t1-$t0}"; }
field() { sed -n "s/.*\"$2\":\([0-9.e+-]*\).*/\1/p" <<<"$1"; }

echo "hybrid bench: generating $docs documents in $work" >&2
"$work/bench_hybrid" gen "$work" "$docs" >&2
cat >"$work/s.pg" <<'PG'
node Doc { slug: String @key  year: I32 @index  body: String @index  emb: Vector(64) @index }
node Tag { name: String @key }
edge Tagged: Doc -> Tag
PG
g="$work/graph"
"$og" init --schema "$work/s.pg" "$g" --quiet >/dev/null
load_s=$(secs "$og" load --mode overwrite --data "$work/data.ndjson" "$g" --quiet)
index_s=$(secs "$og" index build "$g" --quiet)
echo "hybrid bench: load ${load_s}s, index build ${index_s}s" >&2
res=$("$work/bench_hybrid" run "$g" "$work" "$reps")
echo "$res" >&2

printf 'shape\tmedian_ms\tmean_rows\n' >"$out/hybrid.tsv"
for s in hybrid traversal filter nearest bm25 rrf rrf_exact; do
  printf '%s\t%s\t%s\n' "$s" "$(field "$res" "${s}_ms")" "$(field "$res" "${s}_rows")" >>"$out/hybrid.tsv"
done
parts=$(field "$res" parts_ms)
ratio=$(field "$res" hybrid_over_parts)
echo
echo "hybrid search ($docs documents, 64-d, 100 queries x $reps, median ms; load ${load_s}s, index build ${index_s}s)"
column -t -s $'\t' "$out/hybrid.tsv"
printf 'sum of the parts (traversal + filter + nearest + bm25): %s ms; hybrid / parts = %s (target <= 1)\n' "$parts" "$ratio"
if command -v gnuplot >/dev/null; then
  gnuplot <<GP
set terminal svg size 720,360 font "sans,11"
set output "$out/hybrid.svg"
set title "hybrid query vs its parts, $docs docs, median ms (lower is better)"
set style data histograms
set style fill solid 0.8 border -1
set boxwidth 0.7
set ylabel "ms"
set key off
plot "$out/hybrid.tsv" every ::1 using 2:xtic(1) lc rgb "#4477aa"
GP
  echo "chart: $out/hybrid.svg"
else
  echo "SKIP: no gnuplot (apt-get install gnuplot-nox) — no chart" >&2
fi
echo "results: $out"
