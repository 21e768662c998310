# Fleet benchmark chart (bench/fleet/run.sh): ops/s by fleet size, this build with 1, 2 and 4
# replicas and the baseline with one, local disk and the counting remote store.
# fleet.dat columns: store agents replicas base_ops this_ops base_p99 this_p99 base_req this_req
# gnuplot -e "dat='fleet.dat'; out='fleet.svg'" chart.gp
set terminal svg size 900,420 font "sans,11"
set output out
set multiplot layout 1,2
set logscale x 2
set xlabel "agents"
set ylabel "ops/s"
set key top right
set grid ytics
sel(s, r) = (strcol(1) eq s && $3 == r) ? $2 : 1/0
set title "local disk"
plot dat using (sel("local", 1)):4 with linespoints title "baseline, 1 replica", \
     for [r in "1 2 4"] dat using (sel("local", int(r))):5 with linespoints title "this build, ".r." replica(s)"
set title "remote store (latency per request)"
plot dat using (sel("remote", 1)):4 with linespoints title "baseline, 1 replica", \
     for [r in "1 2 4"] dat using (sel("remote", int(r))):5 with linespoints title "this build, ".r." replica(s)"
unset multiplot
