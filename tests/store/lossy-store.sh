#!/usr/bin/env bash
# lossy-store.sh — writes through a network that drops packets lose nothing they acknowledged
# and publish nothing twice (tests/api/test_lossy_store.c, issue 30).  It creates a network
# namespace (unshare -n), starts the S3 test store inside it (scripts/s3-test-store.sh, all on
# that namespace's 127.0.0.1) and runs api_test_lossy_store, which turns on an nftables rule
# dropping OG_LOSS_PCT (20) % of the packets to and from the store's port (`numgen random`: this kernel has
# nf_tables but no netem) and later clears it.
#
#   bash tests/store/lossy-store.sh [BUILD_DIR]      (default build/asan)
#
# Needs root, iproute2, unshare, nft (Debian's nftables: scripts/install-deps.sh) and the Ceph
# packages; without one of them it prints one SKIP line naming what is missing and exits 0.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-build/asan}
case $BUILD in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac

. "$ROOT/tests/store/netns-store.sh"
netns_preflight lossy-store api_test_lossy_store ip nft
unshare -n sh -c 'nft add table inet og_probe' 2>/dev/null ||
    netns_skip lossy-store "no nf_tables in this kernel (nft add table failed in a fresh network namespace)"

exec unshare -n env ROOT="$ROOT" BUILD="$BUILD" LOSS_PCT="${OG_LOSS_PCT:-20}" bash -c '
set -uo pipefail
. "$ROOT/tests/store/netns-store.sh"
netns_store_start lossy
cat > "$OG_S3_STORE_DIR/loss-on.sh" <<EOF
nft add table inet og_loss &&
nft add chain inet og_loss out "{ type filter hook output priority 0; }" &&
nft add rule inet og_loss out tcp dport $port numgen random mod 100 \< $LOSS_PCT counter drop &&
nft add rule inet og_loss out tcp sport $port numgen random mod 100 \< $LOSS_PCT counter drop
EOF
# off: the rule must have dropped something (else the test proved nothing), then it goes
cat > "$OG_S3_STORE_DIR/loss-off.sh" <<\EOF
d=0
for n in $(nft list table inet og_loss | grep -o "packets [0-9]*" | cut -d" " -f2); do d=$((d + n)); done
echo "# packets dropped: $d"
nft delete table inet og_loss
[ "$d" -gt 0 ]
EOF
cd "$BUILD" && OG_TEST_STORE_URI="s3://$OG_S3_BUCKET/lossy" OG_S3_TIMEOUT_MS=1000 \
    OG_TEST_LOSS_ON="bash $OG_S3_STORE_DIR/loss-on.sh" OG_TEST_LOSS_OFF="bash $OG_S3_STORE_DIR/loss-off.sh" \
    ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1} ./api_test_lossy_store
'
