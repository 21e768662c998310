#!/usr/bin/env bash
# bench/search/defaults_chart.sh — one chart over several defaults_run.sh runs (issue 35;
# docs/benchmarks.md "Search defaults"): per size and state, the CPU of one `omnigraph query`
# process (the first search call of a new process) for a key lookup, a bm25 top 10 and a
# nearest top 10, with the issue's line at 1.5x the lookup; and recall@10 of nearest.
# Usage: bench/search/defaults_chart.sh OUT.svg LABEL=defaults.tsv [LABEL=defaults.tsv ...]
set -euo pipefail
out=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/cli.tsv" # columns: who, lookup, bm25, nearest, 1.5 x lookup, recall
for arg in "$@"; do
  label=${arg%%=*} tsv=${arg#*=}
  awk -F'\t' -v label="$label" 'NR > 1 && $2 == "omnigraph" && $4 == "cli" { v[$1, $3] = $5; if ($3 == "nearest") r[$1] = $9; if (!($1 in seen)) { seen[$1] = 1; ord[++n] = $1 } }
    END { for (i = 1; i <= n; i++) { s = ord[i]; printf "%s, %s\t%s\t%s\t%s\t%s\t%s\n", label, s, v[s, "lookup"], v[s, "bm25"], v[s, "nearest"], 1.5 * v[s, "lookup"], r[s] } }' \
    "$tsv" >>"$tmp/cli.tsv"
done
term=${TERM_SPEC:-'svg size 900,400 font "sans,10"'}
gnuplot <<GP
set terminal $term noenhanced
set output "$out"
set datafile separator "\t"
set multiplot layout 1,2 title "search at its defaults: one omnigraph query process (the first call of a new process)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel "CPU ms per process"
set yrange [0:*]
set xtics rotate by -25
set key top left
set title "lookup, bm25, nearest; the 1.5x-lookup line"
plot "$tmp/cli.tsv" using 2:xtic(1) title "key lookup", '' using 3 title "bm25 top 10", '' using 4 title "nearest top 10", \
     '' using 0:5 with points pt 7 ps 0.8 lc rgb "black" title "1.5 x lookup"
set title "recall@10 of nearest at the defaults (dashed: the 0.95 target)"
unset key
set yrange [0.7:1.0]
set ylabel "recall@10"
set arrow from graph 0, first 0.95 to graph 1, first 0.95 nohead dt 2
plot "$tmp/cli.tsv" using 6:xtic(1) title "recall@10 (target 0.95: dashed)"
unset multiplot
GP
echo "chart: $out"
