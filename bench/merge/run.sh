#!/usr/bin/env bash
# bench/merge/run.sh — merge cost vs. table size (issue 7; docs/benchmarks.md "Merge benchmark").
# Builds examples/bench_merge.c in an optimised build dir and runs it on a fresh directory:
# a ROWS-row table (default 1,000,000), a branch that changes 10 rows in one mutation, one
# other row changed on main, then the merge, the diff alone and a full scan, each on a fresh
# handle, with times, bytes touched and the merge's fragment counters (one JSON object).
#   usage: bench/merge/run.sh [ROWS]     env: BUILD (default build/bench-merge), WORK (default mktemp)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
rows=${1:-1000000}
build=${BUILD:-$root/build/bench-merge}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j1 --target bench_merge >/dev/null
work=${WORK:-$(mktemp -d)}
trap 'rm -rf "$work"' EXIT
"$build/bench_merge" "$work/run" "$rows"
echo "table on disk: $(du -sh "$work"/run/graph/tables | cut -f1)" >&2
