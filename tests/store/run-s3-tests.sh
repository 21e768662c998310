#!/usr/bin/env bash
# run-s3-tests.sh — runs the store tests against a real S3 store: starts a throwaway Ceph RGW
# (scripts/s3-test-store.sh, installing its Debian packages if missing), points
# OG_TEST_STORE_URI at s3://<bucket>/<unique prefix>, runs from the given build directory
#   - the store contract suite, the put_if_absent race and the S3 adapter tests,
#   - the table tests over ranged reads (table_test_table_remote on S3; table_test_table,
#     _types and _deletion on local dirs with OG_TABLE_RANGE_READS=1, so the range reader
#     sees every case they cover),
#   - the graph-authority crash and multi-process concurrency tests on S3,
#   - a cluster apply with its storage root on S3 (ledger CAS, lock, catalog, graph roots),
#   - two served replicas while radosgw is killed and restarted (test_server_store_outage),
#   - `cleanup` on a graph on S3 (api_test_cleanup's store scenario),
#   - tests/store/lossy-store.sh: writes while 20 % of the store's packets are dropped
#     (nftables in a network namespace; SKIP without root or nft),
#   - tests/store/netem-latency.sh: a one-row write with 10 ms round trips (tc netem in a
#     network namespace, or a delaying relay where the kernel has no netem),
#   - tests/interop/s3.test.mjs: LanceDB (npm) opens tables our engine wrote to S3 at the
#     versions graph commits name (needs node and the build's bench_s3 + lance_tool),
# and stops the store again (also on failure or interrupt).
#
#   bash tests/store/run-s3-tests.sh [BUILD_DIR]     (default build/asan)
#
# OG_SKIP_S3_TESTS=1 skips everything, loudly (for machines that cannot install Ceph).
# OG_SKIP_S3_INTEROP=1 skips only the LanceDB test, loudly (no node/npm).
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-build/asan}
case $BUILD in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
TESTS="store_test_store_contract store_test_store_race store_test_s3_adapter table_test_table_remote
table_test_table table_test_table_types table_test_deletion graph_test_crash graph_test_concurrency
cluster_test_cluster_s3 server_test_server_cluster_s3
api_test_cleanup server_test_server_store_outage api_test_write_latency"

if [ "${OG_SKIP_S3_TESTS:-0}" = 1 ]; then
    echo "run-s3-tests: SKIPPED (OG_SKIP_S3_TESTS=1): the S3 adapter was not tested against a real store"
    exit 0
fi
for t in $TESTS; do
    [ -x "$BUILD/$t" ] || { echo "run-s3-tests: $BUILD/$t not built" >&2; exit 1; }
done

t0=$(date +%s.%N)
export OG_S3_STORE_DIR
OG_S3_STORE_DIR=$(mktemp -d /tmp/og-s3-run.XXXXXX)
trap 'bash "$ROOT/scripts/s3-test-store.sh" stop >/dev/null 2>&1 || true' EXIT
trap 'exit 130' INT TERM

# Ports: a random base, so two runs on one machine rarely probe the same ports; one retry.
envtext=""
for try in 1 2; do
    export OG_S3_STORE_PORT=$((20000 + RANDOM % 20000)) OG_S3_STORE_MON_PORT=$((40000 + RANDOM % 10000))
    if envtext=$(bash "$ROOT/scripts/s3-test-store.sh" start); then break; fi
    envtext=""
    echo "run-s3-tests: store start failed (try $try)" >&2
    bash "$ROOT/scripts/s3-test-store.sh" stop >/dev/null 2>&1 || true
done
[ -n "$envtext" ] || { echo "run-s3-tests: could not start the S3 test store" >&2; exit 1; }
eval "$envtext"
t_ready=$(date +%s.%N)

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export OG_SOURCE_DIR="$ROOT" OG_BINARY_DIR="$BUILD"
run_id="run-$(date +%s)-$$"
pass=0 failed=0 failures=""
run() { # name uri exe [VAR=value...]
    local name=$1 uri=$2 exe=$3 log
    shift 3
    log=$(mktemp)
    if (cd "$BUILD" && env OG_TEST_STORE_URI="$uri" "$@" "./$exe") >"$log" 2>&1; then
        pass=$((pass + 1)); echo "PASS $name ($uri)"
    else
        failed=$((failed + 1)); failures="$failures $name"; echo "FAIL $name ($uri)"; cat "$log"
    fi
    rm -f "$log"
}
run contract "s3://$OG_S3_BUCKET/$run_id/contract" store_test_store_contract
# at the bucket root, and with 2 keys per ListObjectsV2 page so RGW's continuation tokens are used
run contract-bucket-root-paged "s3://$OG_S3_BUCKET" store_test_store_contract OG_S3_LIST_PAGE=2
run race "s3://$OG_S3_BUCKET/$run_id/race" store_test_store_race
run adapter "s3://$OG_S3_BUCKET/$run_id/adapter" store_test_s3_adapter
run table-remote "s3://$OG_S3_BUCKET/$run_id/tables" table_test_table_remote
# the local table suites through the range reader (OG_TEST_STORE_URI is ignored by them)
for t in table_test_table table_test_table_types table_test_deletion; do
    run "$t-range-reads" "local dir, OG_TABLE_RANGE_READS=1" "$t" OG_TABLE_RANGE_READS=1 OG_TEST_STORE_URI=
done
# a 40-byte first read (footer only: the metadata takes the two further reads) and no cache
run table_test_table_types-range-tail40-nocache "local dir, OG_TABLE_RANGE_READS=1" table_test_table_types \
    OG_TABLE_RANGE_READS=1 OG_RANGE_TAIL_BYTES=40 OG_RANGE_CACHE_BYTES=0 OG_TEST_STORE_URI=
run graph-crash "s3://$OG_S3_BUCKET/$run_id/crash" graph_test_crash
run graph-concurrency "s3://$OG_S3_BUCKET/$run_id/concurrency" graph_test_concurrency
# a cluster whose ledger, lock, catalog and graph roots live on S3 (storage: s3://...)
run cluster-s3 "s3://$OG_S3_BUCKET/$run_id/cluster" cluster_test_cluster_s3
# omnigraph-server --cluster serving that kind of cluster (config dir, and the s3:// root itself)
run server-cluster-s3 "s3://$OG_S3_BUCKET/$run_id/server" server_test_server_cluster_s3
# cleanup (dry run, retention, deleted branch, orphans) on S3 (Last-Modified for the grace period)
run cleanup-s3 "s3://$OG_S3_BUCKET/$run_id/cleanup" api_test_cleanup
# two replicas serving a fleet while radosgw is killed and started again: typed 503s, recovery
# without a restart, nothing acknowledged lost (test_server_store_outage.c).  Last of the
# store-level runs: it takes the endpoint away for a few seconds.
run store-outage "s3://$OG_S3_BUCKET/$run_id/outage" server_test_server_store_outage \
    OG_TEST_STORE_DOWN_CMD="bash '$ROOT/scripts/s3-test-store.sh' rgw-stop" \
    OG_TEST_STORE_UP_CMD="bash '$ROOT/scripts/s3-test-store.sh' rgw-start"

# The graph verbs of the CLI on an s3:// root: init, load (one commit), query, mutate with
# --if-commit (a stale head exits 4), export (same records as the seed), snapshot.
cli_graph() {
    local og="$BUILD/omnigraph" uri="${1:-s3://$OG_S3_BUCKET/$run_id/cli}" cb="$ROOT/examples/library" log out
    log=$(mktemp)
    if {
        "$og" init --quiet --schema "$cb/schema.pg" "$uri" &&
        "$og" load --quiet --data "$cb/seed.jsonl" --mode overwrite "$uri" &&
        first=$("$og" snapshot "$uri" | sed -n 's/.*"commit": "\([0-9A-Z]*\)".*/\1/p') &&
        out=$("$og" query --store "$uri" --format csv -e \
            'query q($s: String) { match { $b: Book { isbn: $s } } return { $b.name } }' --params '{"s":"9780000000011"}') &&
        [ "$out" = "$(printf 'b.name\r\nFrankenstein\r')" ] &&
        "$og" mutate --quiet --store "$uri" --if-commit "$first" -e \
            'query m() { update Book set { name: "Frankenstein; or, The Modern Prometheus" } where isbn = "9780000000011" }' &&
        { "$og" mutate --quiet --store "$uri" --if-commit "$first" -e \
            'query m() { update Book set { name: "x" } where isbn = "9780000000011" }'; [ $? = 4 ]; } &&
        [ "$("$og" export "$uri" | wc -l)" = "$(grep -c . "$cb/seed.jsonl")" ] &&
        "$og" query --store "$uri" --at "$first" --format csv -e \
            'query q() { match { $b: Book { isbn: "9780000000011" } } return { $b.name } }' | grep -qx 'Frankenstein.'
    } >"$log" 2>&1; then
        pass=$((pass + 1)); echo "PASS cli-graph ($uri)"
    else
        failed=$((failed + 1)); failures="$failures cli-graph"; echo "FAIL cli-graph ($uri)"; cat "$log"
    fi
    rm -f "$log"
}
if [ -x "$BUILD/omnigraph" ]; then cli_graph; else failed=$((failed + 1)); failures="$failures cli-graph(omnigraph missing)"; fi

# LanceDB against the same store
interop() {
    local dir="$ROOT/tests/interop" log
    if [ "${OG_SKIP_S3_INTEROP:-0}" = 1 ]; then
        echo "SKIPPED interop-s3 (OG_SKIP_S3_INTEROP=1): LanceDB was not run against S3"
        return
    fi
    log=$(mktemp)
    if ! command -v node >/dev/null; then
        echo "node is not installed (OG_SKIP_S3_INTEROP=1 skips this test)" >"$log"
    elif [ -d "$dir/node_modules/@lancedb/lancedb" ] || (cd "$dir" && npm ci --no-audit --no-fund) >"$log" 2>&1; then
        if (cd "$dir" && OG_BIN_DIR="$BUILD" ASAN_OPTIONS=detect_leaks=0 node --test s3.test.mjs) >"$log" 2>&1 &&
            ! grep -q '^# skipped [1-9]' "$log"; then
            pass=$((pass + 1)); echo "PASS interop-s3 (s3://$OG_S3_BUCKET/interop-*)"
            rm -f "$log"
            return
        fi
    fi
    failed=$((failed + 1)); failures="$failures interop-s3"; echo "FAIL interop-s3"; cat "$log"
    rm -f "$log"
}
for exe in bench_s3 lance_tool; do
    [ -x "$BUILD/$exe" ] || { failed=$((failed + 1)); failures="$failures interop-s3($exe missing)"; }
done
case $failures in *interop-s3*) ;; *) interop ;; esac

# A one-row write over a network with 10 ms round trips, bounded by its critical path: its
# own store in a network namespace with tc netem or a delaying relay (SKIP without root/iproute2).
netem() {
    local log; log=$(mktemp)
    if bash "$ROOT/tests/store/netem-latency.sh" "$BUILD" >"$log" 2>&1; then
        if grep -q '^SKIP' "$log"; then cat "$log"; else pass=$((pass + 1)); echo "PASS netem-latency"; grep '^# one-row' "$log"; fi
    else
        failed=$((failed + 1)); failures="$failures netem-latency"; echo "FAIL netem-latency"; cat "$log"
    fi
    rm -f "$log"
}
netem

# Writes through a network that drops 20 % of the store's packets (nftables in a network
# namespace; SKIP without root/nft): nothing acknowledged lost, nothing published twice.
lossy() {
    local log; log=$(mktemp)
    if bash "$ROOT/tests/store/lossy-store.sh" "$BUILD" >"$log" 2>&1; then
        if grep -q '^SKIP' "$log"; then cat "$log"; else pass=$((pass + 1)); echo "PASS lossy-store"; grep -E '^# (packets dropped|[0-9]+ of [0-9]+ inserts)' "$log"; fi
    else
        failed=$((failed + 1)); failures="$failures lossy-store"; echo "FAIL lossy-store"; cat "$log"
    fi
    rm -f "$log"
}
lossy

t_end=$(date +%s.%N)
awk -v a="$t0" -v b="$t_ready" -v c="$t_end" \
    'BEGIN{printf "run-s3-tests: store ready in %.1fs, tests took %.1fs\n", b-a, c-b}'
[ -z "$failures" ] || echo "run-s3-tests: failed:$failures"
echo "s3: $pass passed, $failed failed"
[ "$failed" = 0 ]
