# netns-store.sh — sourced by the tests that run the S3 test store inside a network namespace
# of their own (lossy-store.sh, netem-latency.sh), so the network faults they inject reach the
# store's traffic and nothing else on the machine.  Two halves:
#
#   netns_preflight NAME TEST_BINARY TOOL...   outside: root, the tools, the binary built and
#                                              the Ceph packages present; else one SKIP line
#                                              ("SKIP NAME: why") and exit 0
#   netns_store_start NAME                     inside the namespace: loopback up, the store
#                                              started and stopped on exit, its environment
#                                              exported, $port set to its port
#
# Both expect ROOT (the repository) and BUILD (an absolute build directory).

netns_skip() { echo "SKIP $1: $2"; exit 0; }

netns_preflight()
{
    local name=$1 bin=$2 b
    shift 2
    [ "$(id -u)" = 0 ] || netns_skip "$name" "not root (a network namespace needs it)"
    for b in unshare "$@"; do command -v "$b" >/dev/null || netns_skip "$name" "$b is missing"; done
    [ -x "$BUILD/$bin" ] || { echo "$name: $BUILD/$bin not built" >&2; exit 1; }
    if ! command -v radosgw >/dev/null; then
        bash "$ROOT/scripts/s3-test-store.sh" install >/dev/null 2>&1 ||
            netns_skip "$name" "the Ceph packages are missing and could not be installed"
    fi
}

netns_store_start()
{
    local name=$1 envtext
    ip link set lo up
    export OG_S3_STORE_DIR
    OG_S3_STORE_DIR=$(mktemp -d "/tmp/og-$name-s3.XXXXXX")
    trap 'bash "$ROOT/scripts/s3-test-store.sh" stop >/dev/null 2>&1 || true' EXIT
    envtext=$(bash "$ROOT/scripts/s3-test-store.sh" start) || { echo "$name: the S3 test store did not start" >&2; exit 1; }
    eval "$envtext"
    port=${AWS_ENDPOINT_URL##*:}
}
