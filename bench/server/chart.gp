# bench/server/chart.gp — the server bench's chart (gnuplot).  bench/server/run.sh calls it:
#   gnuplot -e "dir='OUT'" bench/server/chart.gp
# reads OUT/server.tsv (the median round) and OUT/rounds.tsv (every round) and writes
# OUT/server.svg: left, CPU per request of a static 200 and a key lookup (server and wrk
# stacked); right, each round's lookup/static ratio by req/s and by CPU per request, with
# the target line at 0.5.
if (!exists("dir")) dir = "."
set terminal svg size 960,380 font "sans,11"
set output dir."/server.svg"
set datafile separator "\t"
set multiplot layout 1,2 title "omnigraph-server vs a static 200 (libmicrohttpd), wrk -t2 -c16, loopback"
set title "CPU per request (µs, lower is better)"
set style data histograms
set style histogram rowstacked
set style fill solid 0.8 border -1
set boxwidth 0.6
set ylabel "µs per request"
set yrange [0:*]
set key top left
plot dir."/server.tsv" every ::1 using 5:xtic(1) title "server", "" every ::1 using ($3 - $5) title "wrk"
set title "key lookup / static 200, per round"
set xlabel "round"
set ylabel "ratio"
set yrange [0:1.6]
set xtics 1
set key top left opaque box
plot dir."/rounds.tsv" every ::1 using 1:2 with linespoints title "by req/s" lw 2, \
     "" every ::1 using 1:3 with linespoints title "by CPU/req (server + wrk)" lw 2, \
     "" every ::1 using 1:4 with linespoints title "by CPU/req (server)" lw 2, \
     0.5 with lines title "target 0.5" dt 2 lc rgb "black"
unset multiplot
