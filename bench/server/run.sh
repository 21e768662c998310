#!/usr/bin/env bash
# Server benchmark (issue 18): loopback only, bounded in time.  In one run:
#   1. the static-200 limit of libmicrohttpd configured like omnigraph-server
#      (bench_http_static), and omnigraph-server's /healthz;
#   2. a key lookup (POST /query, one parameterised match on a @key) at 16 connections;
#   3. one-row insert mutations over HTTP at 16 connections vs the embedded og_db rate;
#   and the same lookup embedded on one thread (what the engine alone costs).
# Prints requests/s, p99 latency and the ratios.  Needs wrk (Debian).
# Usage: [ROUNDS=5] [MROUNDS=3] [VERBOSE=1] [OUT=DIR] bench/server/run.sh [BUILD_DIR] [SECONDS]
# Results: docs/benchmarks.md (HTTP server) and docs/server.md.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin="${1:-$here/build/release}"
case "$bin" in /*) ;; *) bin="$here/$bin" ;; esac
secs="${2:-5}"
command -v wrk >/dev/null || { echo "bench/server: wrk is missing (apt-get install wrk)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench/server: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }
for t in omnigraph omnigraph-server bench_http_static bench_embedded_mutate bench_embedded_query; do
  [ -x "$bin/$t" ] || { echo "bench/server: $bin/$t is missing (make build)" >&2; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/og-srvbench-XXXXXX")
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

# a graph of 10,000 people (the lookup target) and an empty Note type (the mutation target)
printf 'node Person { name: String @key  age: I32 }\nnode Note { title: String }\n' > "$work/schema.pg"
awk 'BEGIN { for (i = 0; i < 10000; i++) printf "{\"type\":\"Person\",\"data\":{\"name\":\"p-%d\",\"age\":%d}}\n", i, i % 90 }' > "$work/seed.jsonl"
"$bin/omnigraph" init --quiet --schema "$work/schema.pg" "$work/g" >/dev/null
"$bin/omnigraph" load --quiet --data "$work/seed.jsonl" --mode overwrite "$work/g" >/dev/null

start() { # start CMD...: runs it, waits for its listen line, sets $addr
  local o="$work/out.${#pids[@]}"
  : > "$o" # exists before the background redirection opens it (else the first sed races it)
  "$@" > "$o" 2>>"$work/server.log" &
  pids+=($!)
  for _ in $(seq 100); do
    addr=$(sed -n 's/^OMNIGRAPH_LISTEN_ADDR=//p' "$o")
    [ -n "$addr" ] && return 0
    sleep 0.1
  done
  echo "bench/server: $1 did not start" >&2; exit 1
}
rps() { sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p' <<<"$1"; }
p99() { sed -n 's/^ *99% *\([0-9.]*[a-z]*\).*/\1/p' <<<"$1"; }
non2xx() { sed -n 's/^ *Non-2xx or 3xx responses: *\([0-9]*\).*/\1/p' <<<"$1"; }
total() { sed -n 's/^ *\([0-9]*\) requests in.*/\1/p' <<<"$1"; }
run_wrk() { wrk -t2 -c16 -d"${secs}s" --latency "$@" 2>&1; }
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; } # user + system CPU of a process, in clock ticks
# cpu_run PID ARGS...: run_wrk ARGS, then three more lines: "CPU_US_PER_REQ x", the CPU time
# the server PID and wrk itself spent per request; "SRV_US_PER_REQ x", the server's alone;
# "CORES x", the cores the two kept busy on average.  On a shared machine the rate is the
# share of CPU the run got (CORES says how much); the CPU per request is what the rate on an
# idle machine follows (rate = cores / CPU per request).
cpu_run() {
  local p=$1; shift
  local t0 t1 out w0 w1
  t0=$(ticks "$p"); w0=$(date +%s.%N)
  out=$( { /usr/bin/time -f 'WRKCPU %U %S' wrk -t2 -c16 -d"${secs}s" --latency "$@"; } 2>&1)
  t1=$(ticks "$p"); w1=$(date +%s.%N)
  local n wu ws hz
  n=$(total "$out"); read -r wu ws < <(sed -n 's/^WRKCPU //p' <<<"$out"); hz=$(getconf CLK_TCK)
  echo "$out"
  echo "CPU_US_PER_REQ $(awk "BEGIN{printf \"%.1f\", (($t1 - $t0) / $hz + $wu + $ws) * 1e6 / $n}")"
  echo "SRV_US_PER_REQ $(awk "BEGIN{printf \"%.1f\", ($t1 - $t0) / $hz * 1e6 / $n}")"
  echo "CORES $(awk "BEGIN{printf \"%.2f\", (($t1 - $t0) / $hz + $wu + $ws) / ($w1 - $w0)}")"
}
cpu() { sed -n 's/^CPU_US_PER_REQ //p' <<<"$1"; }
srvcpu() { sed -n 's/^SRV_US_PER_REQ //p' <<<"$1"; }
cores() { sed -n 's/^CORES //p' <<<"$1"; }
median() { sort -g | awk '{a[NR]=$1} END{print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

# The static server and omnigraph-server run side by side, and the static-200 and key-lookup
# runs alternate for $rounds rounds: on a shared machine the load drifts, so each round's
# ratio compares two runs made seconds apart, and the median round is reported.
rounds="${ROUNDS:-5}"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
start "$bin/bench_http_static" 8
st_addr=$addr; st_pid=${pids[-1]}
start "$bin/omnigraph-server" --graph "bench=$work/g" --bind 127.0.0.1:0 --unauthenticated
srv=$addr; srv_pid=${pids[-1]}
health=$(run_wrk "http://$srv/healthz")
ratios=() ; statics=() ; lookups=() ; cratios=() ; sratios=()
for r in $(seq "$rounds"); do
  static=$(cpu_run "$st_pid" "http://$st_addr/")
  lookup=$(cpu_run "$srv_pid" -s "$here/bench/server/lookup.lua" "http://$srv/graphs/bench/query")
  statics+=("$(rps "$static")|$(p99 "$static")|$(cpu "$static")|$(srvcpu "$static")|$(cores "$static")")
  lookups+=("$(rps "$lookup")|$(p99 "$lookup")|$(cpu "$lookup")|$(srvcpu "$lookup")|$(cores "$lookup")")
  ratios+=("$(awk "BEGIN{printf \"%.3f\", $(rps "$lookup")/$(rps "$static")}")|$r")
  cratios+=("$(awk "BEGIN{printf \"%.3f\", $(cpu "$static")/$(cpu "$lookup")}")")
  sratios+=("$(awk "BEGIN{printf \"%.3f\", $(srvcpu "$static")/$(srvcpu "$lookup")}")")
  [ -n "${VERBOSE:-}" ] && echo "round $r: static ${statics[-1]}  lookup ${lookups[-1]}  (req/s|p99|cpu us/req|server us/req|cores)" >&2
done
# the median round (by ratio)
med=$(printf '%s\n' "${ratios[@]}" | sort -t'|' -k1,1g | sed -n "$(( (rounds + 1) / 2 ))p")
mr=${med#*|}; ratio=${med%|*}
IFS='|' read -r s_rps s_p99 s_cpu s_srv s_cores <<<"${statics[$((mr - 1))]}"
IFS='|' read -r l_rps l_p99 l_cpu l_srv l_cores <<<"${lookups[$((mr - 1))]}"
cratio=$(printf '%s\n' "${cratios[@]}" | median)
sratio=$(printf '%s\n' "${sratios[@]}" | median)
ratio=$(printf '%s\n' "${ratios[@]%|*}" | median)
# One-row mutations: commit-bound, a few dozen per run, so MROUNDS alternating rounds of
# HTTP (wrk, 16 connections) and embedded (og_db_mutate in a loop), and the median of the
# per-round ratios.  The server is stopped (gracefully: its in-flight writes finish) before
# each embedded run, so the two never write at once, and started again after it.
mrounds="${MROUNDS:-3}"
mratios=() ; mhttp=() ; membd=()
for r in $(seq "$mrounds"); do
  mutate=$(run_wrk -s "$here/bench/server/mutate.lua" "http://$srv/graphs/bench/mutate")
  m_total=$(total "$mutate"); m_bad=$(non2xx "$mutate"); m_bad=${m_bad:-0}
  m_ok_rps=$(awk "BEGIN{print ($m_total - $m_bad) / $secs}")
  kill "$srv_pid"; wait "$srv_pid" 2>/dev/null || true
  embedded=$("$bin/bench_embedded_mutate" "$work/g" "${MCOUNT:-60}" | sed -n 's/^embedded_mutations_per_s: //p')
  mhttp+=("$m_ok_rps"); membd+=("$embedded")
  mratios+=("$(awk "BEGIN{printf \"%.3f\", $m_ok_rps/$embedded}")")
  if [ "$r" -lt "$mrounds" ]; then
    start "$bin/omnigraph-server" --graph "bench=$work/g" --bind 127.0.0.1:0 --unauthenticated
    srv=$addr; srv_pid=${pids[-1]}
  fi
done
mratio=$(printf '%s\n' "${mratios[@]}" | median)
m_ok_rps=$(printf '%s\n' "${mhttp[@]}" | median); embedded=$(printf '%s\n' "${membd[@]}" | median)
embedded_q=$("$bin/bench_embedded_query" "$work/g" 3000 | sed -n 's/^embedded_lookups_per_s: //p')

h_rps=$(rps "$health")
echo "server bench ($secs s per run, wrk -t2 -c16, loopback, $(nproc) cores, $rounds alternating static/lookup rounds)"
echo "  $(date -u '+%Y-%m-%d %H:%M UTC'), load average $load0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
printf '  round ratios (lookup/static req/s)              %s\n' "$(printf '%s ' "${ratios[@]%|*}")"
printf '  round ratios (static/lookup CPU/req, srv + wrk) %s\n' "$(printf '%s ' "${cratios[@]}")"
printf '  round ratios (static/lookup CPU/req, server)    %s\n' "$(printf '%s ' "${sratios[@]}")"
echo "  the median round (by req/s ratio):"
printf '  static 200 (libmicrohttpd)   %10.0f req/s  p99 %s  CPU %s us/req (server %s + wrk), %s cores busy\n' \
  "$s_rps" "$s_p99" "$s_cpu" "$s_srv" "$s_cores"
printf '  omnigraph-server /healthz    %10.0f req/s  p99 %s\n' "$h_rps" "$(p99 "$health")"
printf '  key lookup (POST /query)     %10.0f req/s  p99 %s  CPU %s us/req (server %s + wrk), %s cores busy\n' \
  "$l_rps" "$l_p99" "$l_cpu" "$l_srv" "$l_cores"
printf '  key lookup / static 200 (medians over the rounds; target >= 0.5):\n'
printf '    by req/s %.2f   by CPU per request (server + wrk) %.2f   by the server'"'"'s CPU per request %.2f\n' \
  "$ratio" "$cratio" "$sratio"
printf '  key lookup (embedded, 1 thread) %7.0f req/s   (the engine alone: og_db_query + render)\n' "$embedded_q"
printf '  one-row mutation, %s rounds: HTTP %s commits/s, embedded %s commits/s; ratios %s\n' "$mrounds" \
  "$(printf '%s ' "${mhttp[@]}")" "$(printf '%s ' "${membd[@]}")" "$(printf '%s ' "${mratios[@]}")"
printf '  one-row mutation (HTTP)      %10.1f commits/s  p99 %s (last round; %s of %s answered non-2xx)\n' \
  "$m_ok_rps" "$(p99 "$mutate")" "$m_bad" "$m_total"
printf '  one-row mutation (embedded)  %10.1f commits/s   ratio HTTP/embedded %.2f, median of the rounds (target >= 0.8)\n' \
  "$embedded" "$mratio"

# the median round as a table and, when gnuplot is installed, a chart ($OUT, default a temp dir)
out="${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/og-srvbench-out-XXXXXX")}"
mkdir -p "$out"
printf 'run\treq_per_s\tcpu_us_per_req\tp99\tserver_us_per_req\n"static 200"\t%s\t%s\t%s\t%s\n"key lookup"\t%s\t%s\t%s\t%s\n' \
  "$s_rps" "$s_cpu" "$s_p99" "$s_srv" "$l_rps" "$l_cpu" "$l_p99" "$l_srv" > "$out/server.tsv"
{ printf 'round\treq_per_s_ratio\tcpu_ratio\tserver_cpu_ratio\n'
  for i in $(seq "$rounds"); do
    printf '%s\t%s\t%s\t%s\n' "$i" "${ratios[$((i - 1))]%|*}" "${cratios[$((i - 1))]}" "${sratios[$((i - 1))]}"
  done; } > "$out/rounds.tsv"
if command -v gnuplot >/dev/null; then
  gnuplot -e "dir='$out'" "$here/bench/server/chart.gp"
  echo "tables: $out/server.tsv $out/rounds.tsv  chart: $out/server.svg"
else
  echo "table: $out/server.tsv  (SKIP: no gnuplot, apt-get install gnuplot-nox: no chart)"
fi
