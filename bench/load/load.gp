# load.gp — where the bulk load's time goes (bench/load/run.sh): one bar per system, stacked by
# stage (ours: read + stage, validate, write + publish, graph + text indexes; Kùzu: COPY Node,
# COPY Link), medians in seconds.
#   gnuplot -e "tsv='load.tsv'; svg='load.svg'[; cols=N][; relative=1][; size='…'][; rotate=1]" load.gp
#   (N: the TSV's columns, default 7; relative=1: the TSV's values are fractions of the same
#   run's Kùzu COPY, to put runs made at different machine loads side by side; size: the
#   title's data size, default "1M nodes / 5M edges"; rotate=1: slanted labels, for many bars)
set terminal svg size 1200,440 font "sans,11"
set output svg
if (!exists("relative")) relative = 0
if (!exists("size")) size = "1M nodes / 5M edges"
set title (relative ? "bulk load to a graph at full speed, ".size.", each run relative to its own Kùzu COPY (bench/load/run.sh; lower is better)" : "bulk load to a graph at full speed, ".size." (bench/load/run.sh; lower is better)")
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.6
set ylabel (relative ? "median time / the run's Kùzu COPY median" : "seconds (median)")
set key outside right top
set datafile separator "\t"
set grid ytics
set yrange [0:*]
if (!exists("cols")) cols = 7
if (exists("rotate")) set xtics rotate by -30 left; set bmargin 9
plot for [c=2:cols] tsv using c:xtic(1) title columnhead(c)
