#!/usr/bin/env bash
# Graph benchmark against Kùzu 0.11.3 (issue 6; `make bench` runs it after the table bench).
# Generates one deterministic graph (bench/graph/gen.mjs: N nodes, 5N edges, fixed seed), then
# in the same run, on the same disk, one system after the other:
#   load   — OmniGraph-C og_db_load of the NDJSON (examples/bench_graph.c) vs Kùzu COPY FROM
#            CSV (bench/graph/kuzu_bench.mjs); LOAD_REPS times each, median kept — ours' loads
#            and then its queries, then Kùzu's loads and then its queries, so each system's
#            first queries follow its own last load (since 2026-12-06: see below);
#   optimize — only with GRAPH_BENCH_OPTIMIZE=1 (ours only, once, on the last loaded copy:
#            og_db_optimize, examples/bench_graph.c optimize).  Off by default since 2026-12-06:
#            the load writes the key maps, topology and text indexes its first queries open
#            (docs/load.md "Graph indexes"), so the queries below measure what a user feels
#            right after `omnigraph load`, and "load + index build" is the load alone;
#   query  — key lookup, 1/2/3-hop distinct-neighbourhood counts from 100 fixed start nodes,
#            and a filter + aggregate + order query, on the last loaded copy, in a new process
#            per system: the first call after open (cold handle) and the median of REPS warm
#            passes; the peak RSS of each query kind and of the process;
#   verify — every answer of both systems (per start node) must be identical, else exit 1.
# Prints medians and ratios (ours / Kùzu) and a Markdown table for docs/benchmarks.md.
#
# Usage: bench/graph/run.sh BUILD_DIR [N] [REPS] [LOAD_REPS]
#        bench/graph/run.sh BUILD_DIR --smoke        (N = 10,000; well under a minute)
#        bench/graph/run.sh BUILD_DIR --scaling ["N1 N2 …"] [REPS]
#            the scaling series (issue 36; docs/benchmarks.md "Scaling"): one run per size
#            (default "1000000 5000000 10000000"; one load each, data generated into a fresh
#            directory and removed after the size), skipping a size the free disk cannot hold
#            (~3 KB per node: both systems' data and databases, checked before it starts),
#            (a size that fails is noted in failed-N.txt and skipped: a 10M load needs more
#            than the load's default 4 GiB budget of intermediate rows, so run the series with
#            OG_WRITE_MAX_MEMORY=10G, docs/benchmarks.md "Scaling"),
#            then bench/graph/scaling.mjs prints each cost's growth factor from the first size
#            for both systems and writes scaling.tsv + scaling.svg (gnuplot, when installed)
#            to $GRAPH_BENCH_OUT (default bench-graph-scaling under $TMPDIR).
# Defaults: N = $GRAPH_BENCH_N or 1,000,000, REPS = 3, LOAD_REPS = 3 (so `GRAPH_BENCH_N=10000
# make bench` is a quick end-to-end check).  Env: GRAPH_BENCH_DIR = where the data and
# databases go (default a fresh mktemp dir under $TMPDIR, removed afterwards);
# KUZU_THREADS, KUZU_BUFFER_MB, OG_BENCH_CACHE_MB as the drivers document; GRAPH_BENCH_KEEP = a
# directory to copy this run's JSON lines into (ours-N.jsonl, kuzu-N.jsonl).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin="${1:-$root/build/release}"
case "$bin" in /*) ;; *) bin="$root/$bin" ;; esac
if [ "${2:-}" = "--scaling" ]; then
  sizes="${3:-1000000 5000000 10000000}" reps="${4:-3}"
  out="${GRAPH_BENCH_OUT:-${TMPDIR:-/tmp}/bench-graph-scaling}"
  mkdir -p "$out"
  base="${GRAPH_BENCH_DIR:-${TMPDIR:-/tmp}}"
  for n in $sizes; do
    need_kb=$((n * 3))
    free_kb=$(df -Pk "$base" | awk 'NR == 2 { print $4 }')
    if [ "$free_kb" -lt "$need_kb" ]; then
      echo "graph bench scaling: N=$n skipped: needs ~$((need_kb / 1048576)) GiB of disk, $((free_kb / 1048576)) GiB free" |
        tee "$out/skipped-$n.txt" >&2
      continue
    fi
    dir=$(mktemp -d "$base/og-graph-scale-$n-XXXXXX")
    echo "graph bench scaling: N=$n in $dir ($(date -u +%H:%M:%S) UTC, load average $(cut -d' ' -f1 /proc/loadavg))" >&2
    # A size that fails (a load past its memory budget, answers that disagree) is recorded in
    # failed-N.txt and the series goes on: the growth table covers the sizes that ran.
    if ! GRAPH_BENCH_DIR="$dir" GRAPH_BENCH_KEEP="$out" bash "$0" "$bin" "$n" "$reps" 1 2> >(tee "$out/log-$n.txt" >&2) |
      tee "$out/summary-$n.txt"; then
      { echo "graph bench scaling: N=$n failed:"; grep -v '^{' "$out/log-$n.txt" | tail -5; } | tee "$out/failed-$n.txt" >&2
      rm -f "$out/ours-$n.jsonl" "$out/kuzu-$n.jsonl"
    fi
    rm -rf "$dir"
  done
  node "$(cd "$(dirname "$0")" && pwd)/scaling.mjs" "$out"
  if command -v gnuplot >/dev/null; then
    cols=$(head -1 "$out/scaling.tsv" | awk -F'\t' '{ print NF }')
    gnuplot -e "tsv='$out/scaling.tsv'; svg='$out/scaling.svg'; cols=$cols" "$(cd "$(dirname "$0")" && pwd)/scaling.gp" &&
      echo "chart: $out/scaling.svg" >&2
  fi
  exit 0
fi
if [ "${2:-}" = "--smoke" ]; then
  n=10000 reps=3 load_reps=1
else
  n="${2:-${GRAPH_BENCH_N:-1000000}}" reps="${3:-3}" load_reps="${4:-3}"
fi
driver="$bin/bench_graph"
[ -x "$driver" ] || { echo "graph bench: $driver is missing (make build)" >&2; exit 1; }
if [ ! -f "$here/node_modules/kuzu/kuzujs.node" ]; then
  (cd "$here" && npm ci --no-audit --no-fund >&2)
fi

if [ -n "${GRAPH_BENCH_DIR:-}" ]; then
  work="$GRAPH_BENCH_DIR"; mkdir -p "$work"
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/og-graph-bench-XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi
data="$work/data"
echo "graph bench: generating N=$n (5N edges) in $data" >&2
node "$here/gen.mjs" "$data" "$n" >&2
lo=$(node -e 'const p=require(process.argv[1]);console.log(p.agg_lo)' "$data/params.json")
hi=$(node -e 'const p=require(process.argv[1]);console.log(p.agg_hi)' "$data/params.json")

ours="$work/ours.jsonl"; kuzu="$work/kuzu.jsonl"
: >"$ours"; : >"$kuzu"
# Each system's queries run right after its own loads, in turn: with the other system's load
# in between, a 10M graph's files were partly evicted from the page cache before our first
# queries (docs/benchmarks.md "Scaling": the order is part of the method).
rm -rf "$work/og" "$work/kuzu.db" "$work/kuzu.db.wal"
for _ in $(seq "$load_reps"); do
  rm -rf "$work/og"
  "$driver" load "$work/og" "$here/graph.pg" "$data/graph.ndjson" | tee -a "$ours" >&2
done
if [ "${GRAPH_BENCH_OPTIMIZE:-0}" != 0 ]; then
  "$driver" optimize "$work/og" | tee -a "$ours" >&2
fi
"$driver" query "$work/og" "$here/graph.gq" "$data/starts.txt" "$lo" "$hi" "$work/answers-ours.txt" "$reps" |
  tee -a "$ours" >&2
for _ in $(seq "$load_reps"); do
  rm -rf "$work/kuzu.db" "$work/kuzu.db.wal"
  node "$here/kuzu_bench.mjs" load "$work/kuzu.db" "$data/nodes.csv" "$data/edges.csv" | tee -a "$kuzu" >&2
done
node "$here/kuzu_bench.mjs" query "$work/kuzu.db" "$data/starts.txt" "$lo" "$hi" "$work/answers-kuzu.txt" "$reps" |
  tee -a "$kuzu" >&2

if ! diff -q "$work/answers-ours.txt" "$work/answers-kuzu.txt" >/dev/null; then
  echo "graph bench: the two systems disagree:" >&2
  diff "$work/answers-ours.txt" "$work/answers-kuzu.txt" | head -20 >&2
  exit 1
fi
echo
echo "verified: $(wc -l <"$work/answers-ours.txt") answers identical on both systems" \
  "(lookup, hop1..3 for $(wc -l <"$data/starts.txt") start nodes, agg groups)"
node "$here/summarize.mjs" "$ours" "$kuzu" "$n"
if [ -n "${GRAPH_BENCH_KEEP:-}" ]; then # the scaling series keeps each size's JSON lines
  cp "$ours" "$GRAPH_BENCH_KEEP/ours-$n.jsonl"
  cp "$kuzu" "$GRAPH_BENCH_KEEP/kuzu-$n.jsonl"
fi
