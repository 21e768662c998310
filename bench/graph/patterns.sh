#!/usr/bin/env bash
# Whole-graph pattern counts against Kùzu (issue 32): 2-paths, triangles and 4-cycles over the
# graph benchmark's generated graph (bench/graph/gen.mjs: N nodes, 5N edges), ours through
# examples/bench_graph.c `patterns` (in process, after load + optimize), Kùzu through
# kuzu_bench.mjs `patterns` (prepared statements); first call and the median of REPS warm calls
# each, wall and CPU time (on a shared machine compare CPU: Kùzu's is summed over its
# threads).  The 2-path and triangle counts of both systems must agree (exit 1 otherwise).
# OG_BENCH_ONLY=two_paths runs one pattern; OG_BENCH_COUNT_DEGREES=0 times our enumerating
# path instead of the counted last hop.  GRAPH_BENCH_DIR with a graph already there reuses it.
#
# Usage: bench/graph/patterns.sh BUILD_DIR [N] [REPS]     (defaults: N = 100,000, REPS = 5)
# Env: GRAPH_BENCH_DIR (default a fresh mktemp dir, removed afterwards), KUZU_THREADS.
# On a shared machine run it under `nice`: at N = 100,000 it takes about a minute.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin="${1:-$root/build/release}"
case "$bin" in /*) ;; *) bin="$root/$bin" ;; esac
n="${2:-100000}" reps="${3:-5}"
[ -x "$bin/bench_graph" ] || { echo "patterns: $bin/bench_graph is missing (make build)" >&2; exit 1; }
if [ ! -f "$here/node_modules/kuzu/kuzujs.node" ]; then
  (cd "$here" && npm ci --no-audit --no-fund >&2)
fi
if [ -n "${GRAPH_BENCH_DIR:-}" ]; then
  dir="$GRAPH_BENCH_DIR" keep=1
  mkdir -p "$dir"
else
  dir=$(mktemp -d "${TMPDIR:-/tmp}/og-patterns-XXXXXX") keep=0
fi
trap '[ "$keep" = 1 ] || rm -rf "$dir"' EXIT
if [ ! -f "$dir/graph.ndjson" ]; then
  node "$here/gen.mjs" "$dir" "$n" >&2
fi
if [ ! -d "$dir/og" ] || [ ! -e "$dir/kuzu" ]; then
  rm -rf "$dir/og" "$dir/kuzu"
  "$bin/bench_graph" load "$dir/og" "$here/graph.pg" "$dir/graph.ndjson" >/dev/null
  "$bin/bench_graph" optimize "$dir/og" >/dev/null
  node "$here/kuzu_bench.mjs" load "$dir/kuzu" "$dir/nodes.csv" "$dir/edges.csv" >/dev/null
fi
"$bin/bench_graph" patterns "$dir/og" "$here/patterns.gq" "$reps" | tee "$dir/ours.jsonl"
node "$here/kuzu_bench.mjs" patterns "$dir/kuzu" "$reps" | tee "$dir/kuzu.jsonl"
node -e '
const fs = require("fs");
const read = (f) => Object.fromEntries(fs.readFileSync(f, "utf8").trim().split("\n").map((l) => JSON.parse(l)).map((r) => [r.query, r]));
const o = read(process.argv[1]), k = read(process.argv[2]);
let bad = 0;
console.log("| pattern | count (ours) | count (Kùzu) | ours median ms (CPU ms) | Kùzu median ms (CPU ms) | ours / Kùzu (CPU) |");
console.log("|---|---|---|---|---|---|");
for (const q of Object.keys(o)) {
  const a = o[q], b = k[q] || {};
  if (q !== "four_cycles" && a.count !== b.count) bad = 1;
  const ms = (r) => `${(r.median_us / 1e3).toFixed(1)} (${(r.median_cpu_us / 1e3).toFixed(1)})`;
  console.log(`| ${q} | ${a.count} | ${b.count} | ${ms(a)} | ${ms(b)} | ${(a.median_cpu_us / b.median_cpu_us).toFixed(2)} |`);
}
if (bad) { console.error("patterns: the 2-path or triangle counts differ"); process.exit(1); }
' "$dir/ours.jsonl" "$dir/kuzu.jsonl"
