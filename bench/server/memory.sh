#!/usr/bin/env bash
# Server memory benchmark (issue 18): an idle omnigraph-server with one open graph of N
# people, against the embedded query process (bench_embedded_query: og_db_open, key lookups,
# exit).  Both answer the same key lookup first, so both have opened and warmed the same
# things.  Reports the server's RSS and PSS after it has been idle (from /proc/PID/status and
# /proc/PID/smaps_rollup), its peak (VmHWM), and the embedded process's peak RSS
# (/usr/bin/time).  Loopback only.
# Usage: bench/server/memory.sh [BUILD_DIR] [N]     (N = 1000000 by default)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin="${1:-$here/build/release}"
case "$bin" in /*) ;; *) bin="$here/$bin" ;; esac
n="${2:-1000000}"
for t in omnigraph omnigraph-server bench_embedded_query; do
  [ -x "$bin/$t" ] || { echo "bench/server: $bin/$t is missing (make build)" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "bench/server: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/og-srvmem-XXXXXX")
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

printf 'node Person { name: String @key  age: I32 }\n' > "$work/schema.pg"
awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) printf "{\"type\":\"Person\",\"data\":{\"name\":\"p-%d\",\"age\":%d}}\n", i, i % 90 }' > "$work/seed.jsonl"
"$bin/omnigraph" init --quiet --schema "$work/schema.pg" "$work/g" >/dev/null
t0=$(date +%s)
"$bin/omnigraph" load --quiet --data "$work/seed.jsonl" --mode overwrite "$work/g" >/dev/null
echo "graph: $n people loaded in $(( $(date +%s) - t0 )) s"
rm -f "$work/seed.jsonl"

# the embedded query process: open, 100 key lookups (p-4242 exists for N > 4242), exit
emb_kb=$( { /usr/bin/time -f 'MAXRSS %M' "$bin/bench_embedded_query" "$work/g" 100 >/dev/null; } 2>&1 | sed -n 's/^MAXRSS //p')
# and the CLI answering one lookup
q='query q($n: String) { match { $p: Person { name: $n } } return { $p.name, $p.age } }'
cli_kb=$( { /usr/bin/time -f 'MAXRSS %M' "$bin/omnigraph" query -e "$q" --params '{"n":"p-4242"}' "$work/g" >/dev/null; } 2>&1 | sed -n 's/^MAXRSS //p')

"$bin/omnigraph-server" --graph "m=$work/g" --bind 127.0.0.1:0 --unauthenticated >"$work/out" 2>"$work/log" &
pid=$!
addr=
for _ in $(seq 100); do
  addr=$(sed -n 's/^OMNIGRAPH_LISTEN_ADDR=//p' "$work/out")
  [ -n "$addr" ] && break
  sleep 0.1
done
[ -n "$addr" ] || { echo "bench/server: the server did not start" >&2; exit 1; }
body='{"query":"query q($n: String) { match { $p: Person { name: $n } } return { $p.name, $p.age } }","params":{"n":"p-4242"}}'
for _ in $(seq 100); do
  curl -sf "http://$addr/graphs/m/query" -H 'content-type: application/json' -d "$body" >/dev/null
done
sleep 2 # idle
rss=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$pid/status")
hwm=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$pid/status")
pss=$(sed -n 's/^Pss: *\([0-9]*\) kB/\1/p' "/proc/$pid/smaps_rollup")
threads=$(sed -n 's/^Threads:[[:space:]]*\([0-9]*\)/\1/p' "/proc/$pid/status")
echo "server memory bench ($n people, one graph, 100 key lookups each)"
printf '  embedded query process      peak RSS %8d kB   (bench_embedded_query: og_db_open + 100 lookups)\n' "$emb_kb"
printf '  omnigraph query (CLI)       peak RSS %8d kB   (one lookup)\n' "$cli_kb"
printf '  omnigraph-server, idle      RSS %8d kB  PSS %8d kB  (peak %d kB, %d threads)\n' "$rss" "$pss" "$hwm" "$threads"
printf '  ratio server idle RSS / embedded peak RSS: %.2f (target <= 1); server peak / embedded peak: %.2f\n' \
  "$(awk "BEGIN{print $rss/$emb_kb}")" "$(awk "BEGIN{print $hwm/$emb_kb}")"
