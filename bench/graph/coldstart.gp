# coldstart.gp — the chart of bench/graph/coldstart.sh: `omnigraph query` end to end (a fresh
# process per sample), median CPU and wall time per query, before and after, with the 20 ms
# target of issue 17.  gnuplot -e "tsv='e2e.tsv'; svg='out.svg'; n='1000000'" coldstart.gp
set terminal svg size 1000,420 font "sans,10"
set output svg
set title sprintf("omnigraph query end to end at N = %s nodes (fresh process per sample; medians)", n)
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set ylabel "milliseconds"
set yrange [0:*]
set key top left
set datafile separator "\t"
set datafile missing "NaN"
set grid ytics
set arrow from graph 0, first 20 to graph 1, first 20 nohead dt 2 lw 1.5 lc rgb "red"
set label "target: 20 ms wall" at graph 0.80, first 21.5 tc rgb "red"
plot tsv using 2:xtic(1) title "CPU, before" lc rgb "#bbbbbb", \
     ''  using 3 title "CPU, after" lc rgb "#4477aa", \
     ''  using 4 title "wall, before" lc rgb "#eecc99", \
     ''  using 5 title "wall, after" lc rgb "#ee7733"
