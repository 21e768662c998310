#!/usr/bin/env bash
# bench/s3/run.sh — local disk vs the S3 test store, same run (issue 8's benchmark): starts a
# throwaway Ceph RGW (scripts/s3-test-store.sh, own directory and random ports), runs
#   bench_s3 bench <fresh local dir> s3://<bucket>/bench-<id> --rows ROWS --commits K
# (examples/bench_s3.c: commit latency of one-row graph writes, and a cold two-column scan of
# a ROWS-row, 8-column table in 4 fragments; on S3 with the prefetch pool off and on), prints
# both sides and the ratio, and stops the store again (also on failure).
#
#   bash bench/s3/run.sh [BUILD_DIR] [ROWS] [COMMITS]   (default build/release 1000000 20)
#
# Results are recorded in docs/benchmarks.md ("Local disk vs S3").
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-build/release}
case $BUILD in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
ROWS=${2:-1000000}
COMMITS=${3:-20}
[ -x "$BUILD/bench_s3" ] || { echo "bench/s3: $BUILD/bench_s3 is missing (build first)" >&2; exit 1; }

export OG_S3_STORE_DIR
OG_S3_STORE_DIR=$(mktemp -d /tmp/og-s3-bench.XXXXXX)
# memstore keeps objects in RAM at ~2.2x: leave room for the table
export OG_S3_STORE_MEM_BYTES=${OG_S3_STORE_MEM_BYTES:-1073741824}
local_dir=$(mktemp -d /tmp/og-bench-local.XXXXXX)
cleanup() {
    bash "$ROOT/scripts/s3-test-store.sh" stop >/dev/null 2>&1 || true
    rm -rf "$local_dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

envtext=""
for try in 1 2; do
    export OG_S3_STORE_PORT=$((20000 + RANDOM % 20000)) OG_S3_STORE_MON_PORT=$((40000 + RANDOM % 10000))
    if envtext=$(bash "$ROOT/scripts/s3-test-store.sh" start); then break; fi
    envtext=""
    bash "$ROOT/scripts/s3-test-store.sh" stop >/dev/null 2>&1 || true
done
[ -n "$envtext" ] || { echo "bench/s3: could not start the S3 test store" >&2; exit 1; }
eval "$envtext"

echo "bench/s3: $(nproc) cores, rows=$ROWS commits=$COMMITS, build $BUILD"
echo "bench/s3: local = $local_dir, s3 = Ceph RGW 16 (memstore) on $AWS_ENDPOINT_URL"
"$BUILD/bench_s3" bench "$local_dir/g" "s3://$OG_S3_BUCKET/bench-$$" --rows "$ROWS" --commits "$COMMITS"
