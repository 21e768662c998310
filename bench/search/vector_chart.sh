#!/usr/bin/env bash
# bench/search/vector_chart.sh — the table and chart of the vector benchmark from its JSON lines
# (vector_run.sh calls it; also usable on results gathered by hand, e.g. LanceDB run beside
# ours): vector_summary.mjs prints the table and the target ratios and writes vector.tsv beside
# RESULTS; gnuplot draws two panels into OUT.svg: top-10 latency (exact and the fastest ANN
# setting at recall@10 >= 0.95, log scale) and that ANN index's build time.
# Usage: bench/search/vector_chart.sh RESULTS.jsonl N Q OUT.svg
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# = 4 ] || { echo "usage: $0 RESULTS.jsonl N Q OUT.svg" >&2; exit 2; }
res=$1 n=$2 q=$3 chart=$4
node "$here/vector_summary.mjs" "$res" "$n" "$q"
tsv="$(dirname "$res")/vector.tsv"
if ! command -v gnuplot >/dev/null; then
  echo "SKIP: no gnuplot (apt-get install gnuplot-nox) — no chart" >&2
  exit 0
fi
gnuplot <<GP
set terminal svg size 900,380 font "sans,11"
set output "$chart"
set datafile missing "-"
set style data histograms
set style fill solid 0.8 border -1
set multiplot layout 1,2 title "vector search, N = $n x 128 float32, $q queries (lower is better)"
set style histogram clustered gap 1
set title "top-10 latency, median ms (log scale)"
set logscale y
set ylabel "ms"
set key top left
plot "$tsv" using 2:xtic(1) title "exact", '' using 3 title "ANN, recall@10 >= 0.95"
unset logscale y
set title "build of that ANN index, s (wall)"
set ylabel "s"
set yrange [0:*]
set key off
plot "$tsv" using 4:xtic(1) lc rgb "#4477aa"
unset multiplot
GP
echo "chart: $chart"
