# delta.gp — the first traversal after a one-row write at 1M nodes / 5M edges
# (bench/graph/delta.sh): wall time of the first `omnigraph query hop1` in a fresh process
# before (a topology built and written) and after composing (nothing built or written), and
# the first hop1 call inside a fresh process, ours against Kùzu 0.11.3's after the same write.
#   gnuplot -e "tsv='bench/graph/delta.tsv'; svg='docs/benchmarks-delta.svg'" bench/graph/delta.gp
# delta.tsv: one line per write: label <TAB> CLI before <TAB> CLI after <TAB> in-process ours
# <TAB> in-process Kùzu (ms, medians)
set terminal svg size 1000,420 font "sans,10"
set output svg
set title "first 1-hop after a one-row write, N = 1,000,000 nodes / 5,000,000 edges (bench/graph/delta.sh)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set ylabel "milliseconds (log scale)"
set logscale y
set yrange [1:200000]
set key top right
set datafile separator "\t"
set datafile commentschars "#"
set grid ytics
plot tsv using 2:xtic(1) title "omnigraph query (new process), before: builds + writes" lc rgb "#bbbbbb", \
     ''  using 3 title "omnigraph query (new process), composed" lc rgb "#4477aa", \
     ''  using 4 title "first call after open: omnigraph-c" lc rgb "#66ccee", \
     ''  using 5 title "first call after open: Kùzu 0.11.3" lc rgb "#ee7733"
