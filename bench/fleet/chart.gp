# Fleet benchmark chart (bench/fleet/run.sh): ops/s by fleet size, baseline vs this build,
# local disk and the counting remote store.  gnuplot -e "dat='fleet.dat'; out='fleet.svg'" chart.gp
set terminal svg size 900,420 font "sans,11"
set output out
set multiplot layout 1,2
set logscale x 2
set xlabel "agents"
set key top right
set grid ytics
set title "ops/s, local disk"
plot dat using (strcol(1) eq "local" ? $2 : 1/0):3 with linespoints title "baseline", \
     dat using (strcol(1) eq "local" ? $2 : 1/0):4 with linespoints title "this build"
set title "ops/s, remote store (latency per request)"
plot dat using (strcol(1) eq "remote" ? $2 : 1/0):3 with linespoints title "baseline", \
     dat using (strcol(1) eq "remote" ? $2 : 1/0):4 with linespoints title "this build"
unset multiplot
