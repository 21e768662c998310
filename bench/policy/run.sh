#!/usr/bin/env bash
# Policy decision benchmark: og_policy_decide (examples/bench_policy.c) against Cedar itself
# (@cedar-policy/cedar-wasm, bench/policy/cedar_bench.mjs) on the same 1024 requests over the
# same bundle, CPU time per decision on both sides; prints both and the ratio.
# Usage: bench/policy/run.sh [BUILD_DIR] [BUNDLE]     Results: docs/policy.md.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin="${1:-$here/build/release}"
case "$bin" in /*) ;; *) bin="$here/$bin" ;; esac
bundle="${2:-$here/examples/policy/graph.policy.yaml}"
[ -x "$bin/bench_policy" ] || { echo "bench: $bin/bench_policy is missing (make build)" >&2; exit 1; }
if [ ! -d "$here/tests/policy/node_modules/@cedar-policy/cedar-wasm" ]; then
  (cd "$here/tests/policy" && npm ci --no-audit --no-fund)
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/og-bench-policy-XXXXXX")
trap 'rm -rf "$work"' EXIT
ours=$("$bin/bench_policy" "$bundle" 2000000 "$work/requests.json")
theirs=$(node "$here/bench/policy/cedar_bench.mjs" "$work/requests.json" 20000)
echo "$ours"
echo "$theirs"
a=$(sed -n 's/^ns_per_decision: //p' <<<"$ours")
b=$(sed -n 's/^cedar_ns_per_decision: //p' <<<"$theirs")
awk -v a="$a" -v b="$b" 'BEGIN { printf "ratio_cedar_over_ours: %.1f\n", b / a }'
