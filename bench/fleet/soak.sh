#!/usr/bin/env bash
# The fleet soak (issue 30): minutes of the fleet workload through several omnigraph-server
# replicas over one graph while replicas are killed with SIGKILL and restarted and the store
# goes down and comes back, then a check that every acknowledged write is in main exactly
# once (bench/fleet/soak.py has the details).  Exits 1 on a violation.
#
#   [DURATION=180] [AGENTS=16] [REPLICAS=2] [K=3] [KILL_EVERY=10] [OUTAGE_EVERY=15] [OUTAGE_MS=700]
#   [STORE=remote|local] [LATENCY_MS=2] bash bench/fleet/soak.sh [BUILD_DIR]     (default build/release)
#
# STORE=remote (the default) serves the graph through the counting adapter read as S3 is
# (LATENCY_MS a request) with an injectable outage (OG_STORE_DOWN_FILE, src/store/store_count.h);
# STORE=local serves it from the disk as it is, without outages.  Results: docs/benchmarks.md
# ("Fleet soak").
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin="${1:-$here/build/release}"
case "$bin" in /*) ;; *) bin="$here/$bin" ;; esac
for t in omnigraph omnigraph-server; do
  [ -x "$bin/$t" ] || { echo "bench/fleet/soak: $bin/$t is missing (make build)" >&2; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/og-soak-XXXXXX")
trap 'rm -rf "$work"' EXIT
printf 'node Person { name: String @key  age: I32? }\n' > "$work/schema.pg"
printf '{"type":"Person","data":{"name":"seed-%d","age":1}}\n' 1 2 3 > "$work/seed.jsonl"
"$bin/omnigraph" init --quiet --schema "$work/schema.pg" "$work/g" >/dev/null
"$bin/omnigraph" load --quiet --data "$work/seed.jsonl" --mode overwrite "$work/g" >/dev/null
if [ "${STORE:-remote}" = remote ]; then
  export OG_STORE_COUNT="${LATENCY_MS:-2},remote" OG_STORE_DOWN_FILE="$work/store-down"
  export OUTAGE_EVERY="${OUTAGE_EVERY:-15}"
else
  export OUTAGE_EVERY=0
fi
echo "fleet soak: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "  ${DURATION:-180} s, ${AGENTS:-16} agents, ${REPLICAS:-2} replicas, store ${STORE:-remote}; a replica killed every ${KILL_EVERY:-10} s, the store down every ${OUTAGE_EVERY} s for ${OUTAGE_MS:-700} ms"
rc=0
python3 "$here/bench/fleet/soak.py" "$bin/omnigraph-server" "$work/g" "$work" || rc=$?
echo "  load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
[ "$rc" = 0 ] || { echo "bench/fleet/soak: FAILED (server logs: $work/server.*.log)"; tail -20 "$work"/server.*.log; }
exit "$rc"
