#!/usr/bin/env bash
# Cold-start bench (issue 17, docs/indexes.md): what a NEW process pays for its first query
# once the persisted graph indexes exist, on a graph bench/graph/run.sh loaded.
#
# Usage: bench/graph/coldstart.sh BUILD_DIR GRAPH_BENCH_DIR [SAMPLES]
#   GRAPH_BENCH_DIR is the directory run.sh used (GRAPH_BENCH_DIR=... bench/graph/run.sh keeps
#   it): its og/ graph and data/starts.txt.
# Prints, as JSON lines:
#   - bench_graph query in a fresh process with OG_INDEX=off (every first call rebuilds in
#     memory, as before the index files), then twice with the files (the first of those two
#     writes whatever was missing, the second is a process that finds them all);
#   - `omnigraph query` end to end (process start -> rows printed) for a key lookup and a
#     3-hop count, SAMPLES (default 20) fresh processes each, different start keys: median/min/max ms.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin="$1"; work="$2"; samples="${3:-20}"
lo=$(node -e 'const p=require(process.argv[1]);console.log(p.agg_lo)' "$work/data/params.json")
hi=$(node -e 'const p=require(process.argv[1]);console.log(p.agg_hi)' "$work/data/params.json")
for mode in off on on; do
  echo "{\"coldstart\":\"bench_graph query\",\"index\":\"$mode\"}"
  if [ "$mode" = off ]; then env OG_INDEX=off "$bin/bench_graph" query "$work/og" "$here/graph.gq" "$work/data/starts.txt" "$lo" "$hi" /dev/null 1
  else "$bin/bench_graph" query "$work/og" "$here/graph.gq" "$work/data/starts.txt" "$lo" "$hi" /dev/null 1; fi
done
for q in lookup hop3; do
  node -e '
    const { execFileSync } = require("child_process");
    const [bin, store, gq, starts, q, n] = process.argv.slice(1);
    const keys = require("fs").readFileSync(starts, "utf8").trim().split("\n");
    const ms = [];
    for (let i = 0; i < +n; i++) {
      const t = process.hrtime.bigint();
      execFileSync(bin + "/omnigraph", ["query", "--query", gq, q, "--params", JSON.stringify({ k: keys[i % keys.length] }),
        "--store", store, "--quiet", "--format", "jsonl"]);
      ms.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    ms.sort((a, b) => a - b);
    console.log(JSON.stringify({ coldstart: "omnigraph query end to end", query: q, samples: ms.length,
      median_ms: +ms[ms.length >> 1].toFixed(1), min_ms: +ms[0].toFixed(1), max_ms: +ms[ms.length - 1].toFixed(1) }));
  ' "$bin" "$work/og" "$here/graph.gq" "$work/data/starts.txt" "$q" "$samples"
done
