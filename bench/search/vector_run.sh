#!/usr/bin/env bash
# Vector search benchmark (issue 15; `make bench` runs it after the graph bench).  One
# deterministic clustered data set (examples/bench_vector.c gen: N x 128 float32, 1,000
# overlapping Gaussian clusters, Q queries, exact top-10 ground truth by brute force), then in
# the same run, on the same disk, one system after the other:
#   OmniGraph-C  bench_vector run       load, exact top-10, index build (HNSW), ANN top-10
#   LanceDB 0.31 vector_lancedb.mjs     load, exact (bypassVectorIndex), IVF_HNSW_SQ, IVF_PQ
#   Kùzu 0.11.3  vector_kuzu.mjs        load, exact (ORDER BY distance), HNSW vector index
# Latency = median of a warm pass over the queries (after one warm-up pass), in-process (no
# process start), top 10; recall@10 against the exact ground truth.  Exact OmniGraph-C is also
# compared with the memory-bandwidth bound (N x 128 x 4 bytes / measured memcpy bandwidth).
#
# Usage: bench/search/vector_run.sh BUILD_DIR [N] [Q]
# Defaults: N = $VECTOR_BENCH_N or 200,000, Q = $VECTOR_BENCH_Q or 200.  VECTOR_BENCH_DIR =
# where data and databases go (default a fresh mktemp dir, removed afterwards);
# VECTOR_BENCH_PEERS=0 skips LanceDB and Kùzu, VECTOR_BENCH_KUZU=0 only Kùzu; LANCEDB_INDEXES
# picks LanceDB's index types (vector_lancedb.mjs).  A VECTOR_BENCH_DIR that already holds the
# generated files for this N and Q is reused (the generator is deterministic).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin="${1:-$root/build/release}"
case "$bin" in /*) ;; *) bin="$root/$bin" ;; esac
n="${2:-${VECTOR_BENCH_N:-200000}}"
q="${3:-${VECTOR_BENCH_Q:-200}}"
driver="$bin/bench_vector"
[ -x "$driver" ] || { echo "vector bench: $driver is missing (make build)" >&2; exit 1; }
peers="${VECTOR_BENCH_PEERS:-1}"
if [ "$peers" = 1 ]; then
  [ -d "$root/tests/interop/node_modules/@lancedb/lancedb" ] || (cd "$root/tests/interop" && npm ci --no-audit --no-fund >&2)
  [ "${VECTOR_BENCH_KUZU:-1}" = 0 ] || [ -f "$root/bench/graph/node_modules/kuzu/kuzujs.node" ] || (cd "$root/bench/graph" && npm ci --no-audit --no-fund >&2)
fi
if [ -n "${VECTOR_BENCH_DIR:-}" ]; then
  work="$VECTOR_BENCH_DIR"; mkdir -p "$work"
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/og-vector-bench-XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi
out="$work/results.jsonl"
: >"$out"
if [ -f "$work/data.ndjson" ] && [ "$(stat -c %s "$work/base.f32" 2>/dev/null)" = $((n * 512)) ] &&
   [ "$(stat -c %s "$work/queries.f32" 2>/dev/null)" = $((q * 512)) ] && [ -f "$work/gt.u32" ]; then
  echo "vector bench: reusing the N=$n Q=$q data in $work" >&2
else
  echo "vector bench: generating N=$n Q=$q in $work" >&2
  "$driver" gen "$work" "$n" "$q" | tee -a "$out" >&2
fi
rm -rf "$work/og"
"$driver" run "$work" "$work/og" | tee -a "$out" >&2
[ -n "${VECTOR_BENCH_DIR:-}" ] || rm -f "$work/data.ndjson"
if [ "$peers" = 1 ]; then
  node "$here/vector_lancedb.mjs" "$work" "$work/lance" | tee -a "$out" >&2
  [ "${VECTOR_BENCH_KUZU:-1}" = 0 ] || node "$here/vector_kuzu.mjs" "$work" "$work/kuzu" | tee -a "$out" >&2
fi
bash "$here/vector_chart.sh" "$out" "$n" "$q" "${TMPDIR:-/tmp}/og-vector-bench.svg"
