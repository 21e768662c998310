#!/usr/bin/env bash
# bench/search/defaults_run.sh — search at its defaults against its peers, in one run (issue 35;
# docs/benchmarks.md "Search defaults"): DOCS documents (bench_hybrid gen: a Zipf text body, a 64-d
# vector clustered by topic), loaded by `omnigraph load` at its defaults (which indexes what it
# loaded) and then `omnigraph optimize`d; in each state a key lookup, a bm25 top 10 and a nearest
# top 10, each
#   - through the CLI: RUNS `omnigraph query` processes (process CPU and wall, start to exit);
#   - in process: RUNS fresh `bench_fresh` processes (open + the first query, then the warm
#     median of WARM more queries), plus recall@10 of nearest against --exact (RECALL_Q queries);
# and the peers, in process, the same way: SQLite FTS5 (bm25; C, libsqlite3) and LanceDB
# (tests/interop's pinned @lancedb/lancedb: nearest through IVF_FLAT and full text through its
# FTS index, both at LanceDB's default options; recall against our exact top 10s).
# The data, the FTS5 file and the LanceDB table are made once in WORK and reused by later runs
# (the graph is loaded afresh each run: "right after load" is one of the states).
# Writes $OUT/defaults.tsv (one line per system/state/shape/way), $OUT/loadavg.log and, with
# gnuplot, $OUT/defaults.svg.
# Usage: bench/search/defaults_run.sh [BUILD_DIR]
#   env: DOCS (100000), RUNS (11), WARM (20), RECALL_Q (50), WORK (/tmp/og-defaults-$DOCS),
#        OUT ($WORK/out), PEERS (1; 0 = ours only), NICE (10), CHART_ONLY (1: redraw the chart
#        from an existing $OUT/defaults.tsv, nothing else)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin="${1:-$here/build/release}"
case "$bin" in /*) ;; *) bin="$here/$bin" ;; esac
docs="${DOCS:-100000}" runs="${RUNS:-11}" warm="${WARM:-20}" recall_q="${RECALL_Q:-50}"
work="${WORK:-/tmp/og-defaults-$docs}"
out="${OUT:-$work/out}"
og="$bin/omnigraph"
nice_="nice -n ${NICE:-10}"
[ -x "$og" ] && [ -f "$bin/libomnigraph.a" ] || { echo "bench/search/defaults: build first (make build)" >&2; exit 1; }
mkdir -p "$work/data" "$out"
libs="$(pkg-config --libs jansson libcurl openssl libzstd liblz4 libpcre2-8 libutf8proc yaml-0.1 icu-uc icu-i18n) -lroaring -lstemmer -lstdc++ -lm -lpthread"
cc -O2 -std=c11 -o "$work/bench_hybrid" "$here/bench/search/bench_hybrid.c" -I"$here/include" "$bin/libomnigraph.a" $libs
cc -O2 -std=c11 -o "$work/bench_fresh" "$here/bench/search/bench_fresh.c" -I"$here/include" "$bin/libomnigraph.a" $libs -lsqlite3
d="$work/data"
la() { echo "$(date -u +%H:%M:%S) $1: load average $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/loadavg.log" >&2; }
[ "${CHART_ONLY:-0}" = 1 ] || : >"$out/loadavg.log"
if [ ! -s "$d/docs.ndjson" ]; then
  la "generate $docs documents"
  $nice_ "$work/bench_hybrid" gen "$d" "$docs" >&2
  grep '"type":"Doc"' "$d/data.ndjson" >"$d/docs.ndjson"
  rm -f "$d/data.ndjson"
fi
cat >"$work/s.pg" <<'PG'
node Doc { slug: String @key  year: I32  body: String @index  emb: Vector(64) @index }
PG
cat >"$work/q.gq" <<'GQ'
query lookup($s: String) { match { $d: Doc { slug: $s } } return { $d.slug, $d.year } }
query bm25($q: String) { match { $d: Doc } return { $d.slug, bm25($d.body, $q) as s } order { bm25($d.body, $q) } limit 10 }
query nearest($v: Vector(64)) { match { $d: Doc } return { $d.slug } order { nearest($d.emb, $v) } limit 10 }
GQ

# "cpu_ms wall_ms" of one process (user + system CPU; wall from fork to exit)
times_of() {
  local TIMEFORMAT='%3R %3U %3S'
  { time $nice_ "$@" >/dev/null 2>&1; } 2>&1 | awk '{printf "%.1f %.1f\n", ($2 + $3) * 1e3, $1 * 1e3}'
}
med() { sort -n | awk '{a[NR]=$1} END {if (NR) printf "%.2f", a[int((NR+1)/2)]; else printf "-"}'; }
field() { sed -n "s/.*\"$2\":\([0-9.e+-]*\).*/\1/p" <<<"$1"; }
row() { printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$out/defaults.tsv"; }
[ "${CHART_ONLY:-0}" = 1 ] || printf 'state\tsystem\tshape\tway\tfirst_cpu_ms\tfirst_wall_ms\twarm_cpu_ms\twarm_wall_ms\trecall10\n' >"$out/defaults.tsv"

cli() { # state graph shape -> a row: medians over RUNS processes
  local st=$1 g=$2 shape=$3 c=() w=() i p
  for i in $(seq "$runs"); do
    case $shape in
      lookup) p="{\"s\":\"d$(( i * 9973 % docs ))\"}" ;;
      bm25) p="{\"q\":\"$(sed -n "${i}p" "$d/queries.tsv" | cut -f3)\"}" ;;
      nearest) p="{\"v\":[$(sed -n "${i}p" "$d/queries.tsv" | cut -f4)]}" ;;
    esac
    read -r a b < <(times_of "$og" query --query "$work/q.gq" "$shape" --params "$p" "$g")
    c+=("$a"); w+=("$b")
  done
  row "$st" omnigraph "$shape" cli "$(printf '%s\n' "${c[@]}" | med)" "$(printf '%s\n' "${w[@]}" | med)" - - "${4:--}"
}
inproc() { # state system shape recall cmd... -> a row: medians over RUNS fresh processes
  local st=$1 sys=$2 shape=$3 rc=$4 fc=() fw=() wc=() ww=() i r
  shift 4
  for i in $(seq "$runs"); do
    r=$($nice_ "$@" "$i" "$warm")
    fc+=("$(field "$r" first_cpu_ms)"); fw+=("$(field "$r" first_wall_ms)")
    wc+=("$(field "$r" warm_cpu_ms)"); ww+=("$(field "$r" warm_wall_ms)")
    [ -n "$(field "$r" recall10)" ] && rc=$(field "$r" recall10)
  done
  row "$st" "$sys" "$shape" inproc "$(printf '%s\n' "${fc[@]}" | med)" "$(printf '%s\n' "${fw[@]}" | med)" \
    "$(printf '%s\n' "${wc[@]}" | med)" "$(printf '%s\n' "${ww[@]}" | med)" "$rc"
}
ours() { # state graph
  local st=$1 g=$2 rec
  la "ours, $st: recall"
  rec=$(field "$($nice_ "$work/bench_fresh" recall "$g" "$d" "$recall_q" "$work/gt.tsv")" recall10)
  la "ours, $st: CLI"
  for s in lookup bm25 nearest; do cli "$st" "$g" "$s" "$([ $s = nearest ] && echo "$rec" || echo -)"; done
  la "ours, $st: in process"
  for s in lookup bm25 nearest; do
    inproc "$st" omnigraph "$s" "$([ $s = nearest ] && echo "$rec" || echo -)" "$work/bench_fresh" og "$g" "$d" "$s" "$docs"
  done
}

g="$work/graph"
if [ "${CHART_ONLY:-0}" = 1 ]; then :; else # CHART_ONLY=1: only redraw $OUT/defaults.svg from $OUT/defaults.tsv
rm -rf "$g"
$nice_ "$og" init --schema "$work/s.pg" "$g" --quiet >/dev/null
la "load (default: indexes what it loaded)"
read -r lc lw < <(times_of "$og" load --mode overwrite --data "$d/docs.ndjson" "$g" --quiet)
echo "load: ${lw} ms wall, ${lc} ms CPU" | tee -a "$out/loadavg.log" >&2
"$og" index status "$g" >"$out/index-status-after-load.txt" 2>&1 || true
ours "after load" "$g"
la "optimize"
read -r oc ow < <(times_of "$og" optimize "$g" --quiet)
echo "optimize: ${ow} ms wall, ${oc} ms CPU" | tee -a "$out/loadavg.log" >&2
"$og" index status "$g" >"$out/index-status-after-optimize.txt" 2>&1 || true
ours "after optimize" "$g"

if [ "${PEERS:-1}" = 1 ]; then
  if [ ! -s "$work/fts5.db" ]; then
    la "fts5 build"
    $nice_ "$work/bench_fresh" fts5-build "$work/fts5.db.tmp" "$d/docs.ndjson" | tee -a "$out/loadavg.log" >&2
    mv "$work/fts5.db.tmp" "$work/fts5.db"
  fi
  la "fts5 in process"
  inproc peer "sqlite fts5" bm25 - "$work/bench_fresh" fts5 "$work/fts5.db" "$d" bm25 "$docs"
  mjs="$here/bench/search/defaults_lancedb.mjs"
  [ -d "$here/tests/interop/node_modules/@lancedb/lancedb" ] || (cd "$here/tests/interop" && npm ci --no-audit --no-fund)
  if [ ! -e "$work/lance.done" ]; then
    la "lancedb build"
    # LANCE_CPU_THREADS: LanceDB's FTS index build hung (every thread waiting, no CPU) at its
    # default CPU pool on the 2-core bench machine, twice at 1M rows; with 4 it took 10 s
    LANCE_CPU_THREADS="${LANCE_CPU_THREADS:-4}" $nice_ node "$mjs" build "$d/docs.ndjson" "$work/lance" | tee -a "$out/loadavg.log" >&2
    touch "$work/lance.done"
  fi
  la "lancedb in process"
  inproc peer lancedb bm25 - node "$mjs" query "$work/lance" "$d/queries.tsv" bm25
  inproc peer lancedb nearest - env LANCEDB_GT="$work/gt.tsv" node "$mjs" query "$work/lance" "$d/queries.tsv" nearest
fi
la "done"
fi
echo
echo "search at its defaults: $docs documents, median of $runs fresh processes (first call) and of their warm medians ($warm queries each); ms"
column -t -s $'\t' "$out/defaults.tsv"

if command -v gnuplot >/dev/null; then
  # wide tables for the chart: one line per system/state, first-call CPU of lookup, bm25, nearest
  awk -F'\t' -v col=5 -v way=inproc 'NR > 1 && $4 == way { k = $2 " " ($1 == "peer" ? "" : $1); v[k, $3] = $col; if (!(k in seen)) { seen[k] = 1; ord[++n] = k } }
    END { print "who\tlookup\tbm25\tnearest"; for (i = 1; i <= n; i++) { k = ord[i]; printf "%s\t%s\t%s\t%s\n", k, ((k, "lookup") in v) ? v[k, "lookup"] : "-", ((k, "bm25") in v) ? v[k, "bm25"] : "-", ((k, "nearest") in v) ? v[k, "nearest"] : "-" } }' \
    "$out/defaults.tsv" >"$out/first.tsv"
  awk -F'\t' -v col=7 -v way=inproc 'NR > 1 && $4 == way { k = $2 " " ($1 == "peer" ? "" : $1); v[k, $3] = $col; if (!(k in seen)) { seen[k] = 1; ord[++n] = k } }
    END { print "who\tlookup\tbm25\tnearest"; for (i = 1; i <= n; i++) { k = ord[i]; printf "%s\t%s\t%s\t%s\n", k, ((k, "lookup") in v) ? v[k, "lookup"] : "-", ((k, "bm25") in v) ? v[k, "bm25"] : "-", ((k, "nearest") in v) ? v[k, "nearest"] : "-" } }' \
    "$out/defaults.tsv" >"$out/warm.tsv"
  gnuplot <<GP
set terminal svg size 900,380 font "sans,10"
set output "$out/defaults.svg"
set datafile separator "\t"
set datafile missing "-"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set ylabel "CPU ms (log)"
set xtics rotate by -20
set key top left
set multiplot layout 1,2 title "search at its defaults, $docs docs, in process (lower is better)"
set title "first call of a fresh process (open + query)"
plot "$out/first.tsv" using 2:xtic(1) title "key lookup", '' using 3 title "bm25 top 10", '' using 4 title "nearest top 10"
set title "warm median"
plot "$out/warm.tsv" using 2:xtic(1) title "key lookup", '' using 3 title "bm25 top 10", '' using 4 title "nearest top 10"
unset multiplot
GP
  echo "chart: $out/defaults.svg"
fi
echo "results: $out"
