# scaling.gp — the graph benchmark's scaling series (bench/graph/run.sh --scaling): per cost,
# how much it grew from the first size, ours and Kùzu side by side (log scale; 1 = flat).
#   gnuplot -e "tsv='scaling.tsv'; svg='out.svg'; cols=COLUMNS" scaling.gp
# scaling.tsv (bench/graph/scaling.mjs): a header line, then one line per cost: label, then
# for each larger size the growth factor of ours and of Kùzu (NaN where Kùzu has no such cost).
set terminal svg size 1200,520 font "sans,10"
set output svg
set title "growth of each cost from the smallest size (bench/graph/run.sh --scaling; lower is better)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y 2
set ylabel "growth factor (x)"
set xtics rotate by -35 left
set key top left
set datafile separator "\t"
set datafile missing "NaN"
set grid ytics
if (!exists("cols")) cols = 3   # run.sh passes the TSV's column count
plot for [c=2:cols] tsv using c:xtic(1) title columnhead(c)
