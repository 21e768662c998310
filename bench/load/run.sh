#!/usr/bin/env bash
# Bulk load against Kùzu's COPY (issue 33 "Bulk load"; docs/benchmarks.md "Bulk load").
# The question: how long from the files to a graph that answers its first query at full speed,
# and with how much memory. Same data as the graph benchmark (bench/graph/gen.mjs: N nodes,
# 5N edges, fixed seed), same disk, one process per load, LOAD_REPS rounds, each round:
#   ours NDJSON — bench_graph load: og_db_load (overwrite, one commit) of graph.ndjson, which
#                 also writes the key maps and topology the first query opens (docs/load.md
#                 "Graph indexes") and the text index of the @key (docs/indexes.md);
#   ours CSV    — bench_graph load-csv: og_db_load_csv of the two CSV files Kùzu reads;
#   Kùzu        — kuzu_bench.mjs load: COPY Node + COPY Link from the same CSV files.
# Each prints its in-process seconds (schema creation excluded on both sides), its stages (ours:
# read+stage, validate, write+publish, index) and its peak RSS (getrusage / process.resourceUsage);
# GNU time adds each process's CPU seconds (all threads), which a shared machine distorts less
# than wall time.
# No `optimize` runs: then one query process per graph (the last NDJSON and CSV loads, and
# Kùzu's) runs the graph benchmark's queries (bench/graph/graph.gq) — first calls and warm
# medians — and the answers must be identical on all three, else exit 1.
# Prints medians and ratios, and writes load.tsv + load.svg (gnuplot, when installed: where the
# load time goes) into $LOAD_BENCH_OUT (default: the work directory's out/).
#
# Usage: bench/load/run.sh BUILD_DIR [N] [LOAD_REPS]      (defaults 1,000,000 and 3)
# Env: GRAPH_BENCH_DIR = where data and databases go (default a fresh mktemp dir under $TMPDIR,
# removed afterwards; data already generated there for the same N is reused).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
graph="$root/bench/graph"
bin="${1:-$root/build/release}"
case "$bin" in /*) ;; *) bin="$root/$bin" ;; esac
n="${2:-1000000}" reps="${3:-3}"
driver="$bin/bench_graph"
[ -x "$driver" ] || { echo "load bench: $driver is missing (make build)" >&2; exit 1; }
if [ ! -f "$graph/node_modules/kuzu/kuzujs.node" ]; then
  (cd "$graph" && npm ci --no-audit --no-fund >&2)
fi
if [ -n "${GRAPH_BENCH_DIR:-}" ]; then
  work="$GRAPH_BENCH_DIR"; mkdir -p "$work"
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/og-load-bench-XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi
out="${LOAD_BENCH_OUT:-$work/out}"
mkdir -p "$out"
data="$work/data"
if [ ! -f "$data/params.json" ] || ! grep -q "\"n\":$n," "$data/params.json" 2>/dev/null; then
  echo "load bench: generating N=$n (5N edges) in $data" >&2
  node "$graph/gen.mjs" "$data" "$n" >&2
fi
lo=$(node -e 'const p=require(process.argv[1]);console.log(p.agg_lo)' "$data/params.json")
hi=$(node -e 'const p=require(process.argv[1]);console.log(p.agg_hi)' "$data/params.json")

ours="$out/ours.jsonl" kuzu="$out/kuzu.jsonl"
: >"$ours"; : >"$kuzu"
# timed OUT.jsonl LABEL CMD… — CMD's JSON lines, then {"cpu":LABEL,"cpu_s":…}: the CPU seconds
# (user + system, all threads) of its whole process (GNU time; Kùzu's includes Node's start-up)
timed() {
  local o=$1 label=$2
  shift 2
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f '%U %S' -o "$work/cpu.txt" "$@" | tee -a "$o" >&2
    awk -v l="$label" '{ printf "{\"cpu\":\"%s\",\"cpu_s\":%.2f}\n", l, $1 + $2 }' "$work/cpu.txt" >>"$o"
  else
    "$@" | tee -a "$o" >&2
  fi
}
for r in $(seq "$reps"); do
  echo "load bench: round $r of $reps ($(date -u +%H:%M:%S) UTC, load average $(cut -d' ' -f1-3 /proc/loadavg))" >&2
  rm -rf "$work/og" "$work/ogc" "$work/kuzu.db" "$work/kuzu.db.wal"
  timed "$ours" ndjson "$driver" load "$work/og" "$graph/graph.pg" "$data/graph.ndjson"
  timed "$ours" csv "$driver" load-csv "$work/ogc" "$graph/graph.pg" "$data/nodes.csv" "$data/edges.csv"
  timed "$kuzu" kuzu node "$graph/kuzu_bench.mjs" load "$work/kuzu.db" "$data/nodes.csv" "$data/edges.csv"
done
echo "load bench: queries, no optimize ($(date -u +%H:%M:%S) UTC, load average $(cut -d' ' -f1-3 /proc/loadavg))" >&2
"$driver" query "$work/og" "$graph/graph.gq" "$data/starts.txt" "$lo" "$hi" "$work/answers-ours.txt" 3 |
  sed 's/"system":"omnigraph-c"/"system":"omnigraph-c","from":"ndjson"/' | tee -a "$ours" >&2
"$driver" query "$work/ogc" "$graph/graph.gq" "$data/starts.txt" "$lo" "$hi" "$work/answers-ours-csv.txt" 3 |
  sed 's/"system":"omnigraph-c"/"system":"omnigraph-c","from":"csv"/' | tee -a "$ours" >&2
node "$graph/kuzu_bench.mjs" query "$work/kuzu.db" "$data/starts.txt" "$lo" "$hi" "$work/answers-kuzu.txt" 3 |
  tee -a "$kuzu" >&2
for a in answers-ours.txt answers-ours-csv.txt; do
  if ! diff -q "$work/$a" "$work/answers-kuzu.txt" >/dev/null; then
    echo "load bench: $a and Kùzu's answers differ:" >&2
    diff "$work/$a" "$work/answers-kuzu.txt" | head -20 >&2
    exit 1
  fi
done
echo
echo "verified: $(wc -l <"$work/answers-kuzu.txt") answers identical (NDJSON load, CSV load, Kùzu), no optimize"
node "$here/summarize.mjs" "$ours" "$kuzu" "$n" "$out/load.tsv"
if command -v gnuplot >/dev/null; then
  gnuplot -e "tsv='$out/load.tsv'; svg='$out/load.svg'" "$here/load.gp" && echo "chart: $out/load.svg" >&2
fi
