#!/usr/bin/env bash
# netem-latency.sh — a one-row write over a real network with 10 ms of round-trip latency is
# bounded by its critical path (tests/api/test_write_latency.c, issue 30).  It creates a
# network namespace (unshare -n), starts the S3 test store inside it (scripts/s3-test-store.sh,
# everything on that namespace's 127.0.0.1), delays the store's port on the loopback with
# `tc netem` (5 ms each way: only the S3 traffic, not the store's own mon/osd traffic), and
# runs api_test_write_latency against it with OG_TEST_NETEM_MS=10.
#
#   bash tests/store/netem-latency.sh [BUILD_DIR]      (default build/asan)
#
# Needs root, iproute2 (ip, tc), unshare and the Ceph packages (installed beforehand, outside
# the namespace, which has no network).  A kernel without the netem queueing discipline gets
# the same delay from a relay in front of the store's port (tests/store/delay-proxy.py,
# python3): each chunk forwarded either way waits 5 ms.  Without root, the tools or both
# netem and python3 it prints one SKIP line naming what is missing and exits 0; the in-process
# half of the test (injected latency, no network) runs in plain ctest either way.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-build/asan}
case $BUILD in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
NETEM_MS=${OG_NETEM_MS:-10}

. "$ROOT/tests/store/netns-store.sh"
netns_preflight netem-latency api_test_write_latency ip tc
MODE=netem
if ! unshare -n sh -c 'ip link set lo up && tc qdisc add dev lo root netem delay 1ms' 2>/dev/null; then
    # no netem in this kernel: the same delay from a relay in front of the store's port
    command -v python3 >/dev/null ||
        netns_skip netem-latency "no netem in this kernel (tc qdisc add … netem failed in a fresh network namespace) and no python3 for the relay"
    MODE=relay
    echo "# netem-latency: this kernel has no netem; the delay comes from tests/store/delay-proxy.py"
fi

# Inside the namespace: loopback up, the store, netem on its port, the test, the store stopped.
exec unshare -n env ROOT="$ROOT" BUILD="$BUILD" NETEM_MS="$NETEM_MS" MODE="$MODE" bash -c '
set -uo pipefail
. "$ROOT/tests/store/netns-store.sh"
netns_store_start netem
half=$(awk -v m="$NETEM_MS" "BEGIN{printf \"%g\", m / 2}")
if [ "$MODE" = relay ]; then
    # the relay forwards to the store and delays each direction by half the round trip once
    # the flag file exists; the test creates it once it has timed the write without the delay
    exec 3< <(exec python3 "$ROOT/tests/store/delay-proxy.py" 0 127.0.0.1 "$port" "$OG_S3_STORE_DIR/delay-on" "$half")
    relay=$!
    read -r ready rport <&3 || { echo "netem-latency: the relay did not start" >&2; exit 1; }
    [ "$ready" = ready ] || { echo "netem-latency: the relay said: $ready" >&2; exit 1; }
    export AWS_ENDPOINT_URL="http://127.0.0.1:$rport"
    echo "touch \"$OG_S3_STORE_DIR/delay-on\"" > "$OG_S3_STORE_DIR/netem-on.sh"
else
    # band 3 of a prio qdisc delays; only the S3 port is filtered into it (both directions).
    # The test runs this itself once it has timed the write without the delay.
    cat > "$OG_S3_STORE_DIR/netem-on.sh" <<EOF
tc qdisc add dev lo root handle 1: prio &&
tc qdisc add dev lo parent 1:3 handle 30: netem delay ${half}ms &&
tc filter add dev lo protocol ip parent 1:0 prio 1 u32 match ip dport $port 0xffff flowid 1:3 &&
tc filter add dev lo protocol ip parent 1:0 prio 1 u32 match ip sport $port 0xffff flowid 1:3
EOF
fi
cd "$BUILD" && OG_TEST_STORE_URI="s3://$OG_S3_BUCKET/netem" OG_TEST_NETEM_MS="$NETEM_MS" \
    OG_TEST_NETEM_ON="bash $OG_S3_STORE_DIR/netem-on.sh" \
    ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1} ./api_test_write_latency
rc=$?
[ -n "${relay:-}" ] && kill "$relay" 2>/dev/null
exit $rc
'
