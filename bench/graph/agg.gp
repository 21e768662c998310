# agg.gp — the graph benchmark's filter + aggregate + order query (bench/graph/run.sh, `agg`):
# warm medians of ours and Kùzu per recorded run (bars, ms) and their ratio (points, right
# axis) against the ≤ 0.67× target of issue 17.
#   gnuplot -e "tsv='agg.tsv'; svg='out.svg'" agg.gp
# agg.tsv: one line per run: label <TAB> ours ms <TAB> Kùzu ms
set terminal svg size 1000,420 font "sans,10"
set output svg
set title "filter + aggregate + order at N = 1,000,000 nodes: warm medians (bench/graph/run.sh)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set ylabel "milliseconds"
set yrange [0:*]
set y2label "ours / Kùzu"
set y2range [0:2.5]
set y2tics
set ytics nomirror
set key top right
set datafile separator "\t"
set datafile commentschars "#"
set grid ytics
set arrow from graph 0, second 0.67 to graph 1, second 0.67 nohead dt 2 lw 1.5 lc rgb "red"
set label "target: ours / Kùzu ≤ 0.67" at graph 0.30, second 0.60 tc rgb "red"
plot tsv using 2:xtic(1) title "omnigraph-c" lc rgb "#4477aa", \
     ''  using 3 title "Kùzu 0.11.3" lc rgb "#ee7733", \
     ''  using 0:($2/$3) axes x1y2 with linespoints pt 7 ps 1.2 lw 1.5 lc rgb "black" title "ours / Kùzu"
