#!/usr/bin/env bash
# Connections benchmark (issues 30 and 37): many mostly-waiting clients.  An omnigraph-server
# over a graph of 1,000 people holds IDLE open connections that never send a byte (idle
# agents, or a flood) while wrk runs key lookups over CONNS keep-alive connections; a probe
# times /healthz once a second meanwhile.  Reports lookups/s, their p99, non-2xx answers, and
# the worst /healthz latency (or "timeout" past 5 s).  Loopback only, SECS seconds.
# Usage: bench/server/connections.sh [BUILD_DIR] [IDLE] [CONNS] [SECS]   (defaults 600 256 10)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin="${1:-$here/build/release}"
case "$bin" in /*) ;; *) bin="$here/$bin" ;; esac
idle="${2:-600}" conns="${3:-256}" secs="${4:-10}"
for t in omnigraph omnigraph-server; do
  [ -x "$bin/$t" ] || { echo "bench/server: $bin/$t is missing (make build)" >&2; exit 1; }
done
command -v wrk >/dev/null || { echo "bench/server: wrk is missing (apt-get install wrk)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/og-srvconn-XXXXXX")
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
ulimit -n 4096 2>/dev/null || true

printf 'node Person { name: String @key  age: I32 }\n' > "$work/schema.pg"
awk 'BEGIN { for (i = 0; i < 1000; i++) printf "{\"type\":\"Person\",\"data\":{\"name\":\"p-%d\",\"age\":%d}}\n", i, i % 90 }' > "$work/seed.jsonl"
"$bin/omnigraph" init --quiet --schema "$work/schema.pg" "$work/g" >/dev/null
"$bin/omnigraph" load --quiet --data "$work/seed.jsonl" --mode overwrite "$work/g" >/dev/null

"$bin/omnigraph-server" --graph "bench=$work/g" --bind 127.0.0.1:0 --unauthenticated >"$work/out" 2>"$work/log" &
pids+=($!)
addr=
for _ in $(seq 100); do
  addr=$(sed -n 's/^OMNIGRAPH_LISTEN_ADDR=//p' "$work/out")
  [ -n "$addr" ] && break
  sleep 0.1
done
[ -n "$addr" ] || { echo "bench/server: the server did not start" >&2; exit 1; }

# IDLE connections that never send a byte, held for the run, from another loopback address
# (FROM, default 127.0.0.2: a remote flood; FROM=127.0.0.1 shares the clients' address)
python3 - "$addr" "$idle" "$((secs + 3))" "${FROM:-127.0.0.2}" <<'EOF' &
import socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
socks = []
for _ in range(int(sys.argv[2])):
    try:
        s = socket.create_connection((host, int(port)), timeout=2, source_address=(sys.argv[4], 0))
        socks.append(s)
    except OSError:
        pass
time.sleep(float(sys.argv[3]))
EOF
pids+=($!)
sleep 1

worst=0
probe() {
  for _ in $(seq "$secs"); do
    t=$(curl -s -o /dev/null -m 5 -w '%{http_code} %{time_total}' "http://$addr/healthz" || echo "000 5")
    echo "$t"
    sleep 1
  done
}
probe > "$work/probe" &
pids+=($!)
out=$(wrk -t2 -c"$conns" -d"${secs}s" --latency -s "$here/bench/server/lookup.lua" "http://$addr/graphs/bench/query" 2>&1)
wait "${pids[-1]}" || true
rps=$(sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p' <<<"$out")
p99=$(sed -n 's/^ *99% *\([0-9.]*[a-z]*\).*/\1/p' <<<"$out")
non2xx=$(sed -n 's/^ *Non-2xx or 3xx responses: *\([0-9]*\).*/\1/p' <<<"$out")
errs=$(sed -n 's/^ *Socket errors: *\(.*\)/\1/p' <<<"$out")
worst=$(awk '$1 != "200" { t = "timeout"; exit } { if ($2 > m) m = $2 } END { print t ? t : sprintf("%.0f ms", m * 1000) }' "$work/probe")
echo "idle=$idle conns=$conns secs=$secs: lookups ${rps:-0}/s, p99 ${p99:--}, non-2xx ${non2xx:-0}, socket errors ${errs:-none}; worst /healthz $worst"
