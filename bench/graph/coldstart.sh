#!/usr/bin/env bash
# Cold-start bench (issue 17, docs/indexes.md, docs/benchmarks.md "Cold start"): what a NEW
# process pays for its first query once the persisted graph indexes exist, on the graph and the
# Kùzu database bench/graph/run.sh loaded (run it first with GRAPH_BENCH_DIR set, so it keeps them).
#
# Usage: bench/graph/coldstart.sh BUILD_DIR GRAPH_BENCH_DIR [SAMPLES] [BASELINE_OMNIGRAPH]
#   SAMPLES (default 100): fresh processes per end-to-end measurement.
#   BASELINE_OMNIGRAPH: another build's `omnigraph` (e.g. main before a change), measured the
#   same way, alternating with ours query by query, for the before/after rows of the chart.
# Env: OUT = where the results go (default GRAPH_BENCH_DIR/coldstart); FIRST_RUNS (5; 0 skips
#   part 1); E2E_PREFIX = a command prefix for part 2's sampler and its children, e.g.
#   "chrt -f 1" (root) on a shared machine, so other work cannot stretch the wall times.
# Prints, and leaves in OUT:
#   1. first calls in a fresh process, ours (examples/bench_graph.c query) then Kùzu's
#      (kuzu_bench.mjs query), the same queries and 100 start nodes, FIRST_RUNS (5) processes
#      each, alternating: run.sh's summary over the medians of the runs (first-call and warm
#      ratios, peak RSS of the query process);
#      and ours once more with OG_INDEX=off (every structure rebuilt in memory: the old cost);
#   2. `omnigraph query` end to end (process start -> rows printed, a fresh process per sample,
#      a different start key each: examples/bench_spawn.c): `--version` (the floor: start-up
#      alone), the key lookup, the 1-hop and the 3-hop count; wall and CPU (user + system)
#      median and p90, peak RSS;  e2e.tsv + coldstart.svg (gnuplot, bench/graph/coldstart.gp).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin="$1"; work="$2"; samples="${3:-100}"; base="${4:-}"
case "$bin" in /*) ;; *) bin="$root/$bin" ;; esac
out="${OUT:-$work/coldstart}"
mkdir -p "$out"
for t in bench_graph bench_spawn omnigraph; do
  [ -x "$bin/$t" ] || { echo "coldstart: $bin/$t is missing (make build)" >&2; exit 1; }
done
[ -d "$work/og" ] && [ -f "$work/data/starts.txt" ] ||
  { echo "coldstart: no graph in $work (GRAPH_BENCH_DIR=$work bench/graph/run.sh first)" >&2; exit 1; }
lo=$(node -e 'const p=require(process.argv[1]);console.log(p.agg_lo)' "$work/data/params.json")
hi=$(node -e 'const p=require(process.argv[1]);console.log(p.agg_hi)' "$work/data/params.json")
n=$(wc -l <"$work/data/nodes.csv"); n=$((n - 1))
E2E_PREFIX="${E2E_PREFIX:-}"
echo "coldstart: $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg), N = $n, $samples samples${E2E_PREFIX:+, end to end under: $E2E_PREFIX}"

# 1. first calls with the index files present, ours vs Kùzu, each in a fresh process, FIRST_RUNS
#    times alternating (default 5; one pass over the 100 start nodes each): medians over the runs.
runs="${FIRST_RUNS:-5}"
if [ "$runs" -gt 0 ]; then
  # the load wrote the graph indexes (docs/load.md); this writes any still missing
  "$bin/bench_graph" query "$work/og" "$here/graph.gq" "$work/data/starts.txt" "$lo" "$hi" /dev/null 1 >/dev/null
  have_kuzu=0; { [ -d "$work/kuzu.db" ] || [ -f "$work/kuzu.db" ]; } && have_kuzu=1
  : >"$out/ours.jsonl"; : >"$out/kuzu.jsonl"
  for _ in $(seq "$runs"); do
    "$bin/bench_graph" query "$work/og" "$here/graph.gq" "$work/data/starts.txt" "$lo" "$hi" /dev/null 1 >>"$out/ours.jsonl"
    [ "$have_kuzu" = 1 ] &&
      node "$here/kuzu_bench.mjs" query "$work/kuzu.db" "$work/data/starts.txt" "$lo" "$hi" /dev/null 1 >>"$out/kuzu.jsonl"
  done
  fold='
    // medians over the runs of each query: first call, warm median, peak RSS; the runs listed
    const fs = require("fs");
    const rows = fs.readFileSync(process.argv[1], "utf8").split("\n").filter((l) => l.startsWith("{")).map(JSON.parse);
    const med = (v) => { const s = [...v].sort((a, b) => a - b); return s[(s.length - 1) >> 1]; };
    const out = [];
    for (const q of ["lookup", "hop1", "hop2", "hop3", "agg"]) {
      const r = rows.filter((x) => x.query === q);
      if (!r.length) continue;
      out.push({ system: r[0].system, query: q, first_us: med(r.map((x) => x.first_us)), runs: r.length,
        first_us_runs: r.map((x) => x.first_us), first_cpu_us: med(r.map((x) => x.first_cpu_us)),
        first_cpu_us_runs: r.map((x) => x.first_cpu_us), samples: r.reduce((a, x) => a + x.samples, 0),
        median_us: med(r.map((x) => x.median_us)), peak_rss_kb: med(r.map((x) => x.peak_rss_kb || 0)),
        rss_anon_kb: med(r.map((x) => x.rss_anon_kb || 0)), rss_file_kb: med(r.map((x) => x.rss_file_kb || 0)) });
    }
    const d = rows.filter((x) => x.phase === "done");
    out.push({ system: d[0].system, phase: "done", max_rss_kb: med(d.map((x) => x.max_rss_kb)),
      max_rss_kb_runs: d.map((x) => x.max_rss_kb) });
    fs.writeFileSync(process.argv[2], out.map((o) => JSON.stringify(o)).join("\n") + "\n");
    for (const o of out) console.log(JSON.stringify(o));
  '
  node -e "$fold" "$out/ours.jsonl" "$out/ours.folded.jsonl"
  if [ "$have_kuzu" = 1 ]; then
    node -e "$fold" "$out/kuzu.jsonl" "$out/kuzu.folded.jsonl"
    echo "first calls: medians over $runs fresh processes per system (summarize.mjs's \"one sample\" = one per run)"
    node "$here/summarize.mjs" "$out/ours.folded.jsonl" "$out/kuzu.folded.jsonl" "$n"
  else
    echo "coldstart: no Kùzu database in $work: our side only" >&2
  fi
  echo "OG_INDEX=off (rebuilt in memory, one process):"
  env OG_INDEX=off "$bin/bench_graph" query "$work/og" "$here/graph.gq" "$work/data/starts.txt" "$lo" "$hi" /dev/null 1 |
    grep -E '"query":"(lookup|hop1)"' || true
fi

# 2. end to end, a fresh process per sample.
: >"$out/e2e.jsonl"
run() { # LABEL BINARY QUERY
  local label="$1" og="$2" q="$3" j
  if [ "$q" = version ]; then
    j=$($E2E_PREFIX "$bin/bench_spawn" "$samples" "$work/data/starts.txt" "$og" --version)
  else
    j=$($E2E_PREFIX "$bin/bench_spawn" "$samples" "$work/data/starts.txt" "$og" query --query "$here/graph.gq" "$q" \
      --params '{"k":"%k"}' --store "$work/og" --quiet --format jsonl)
  fi
  echo "{\"e2e\":\"$q\",\"binary\":\"$label\",${j#\{}" | tee -a "$out/e2e.jsonl"
}
k=$(head -1 "$work/data/starts.txt")
"$bin/omnigraph" query --query "$here/graph.gq" lookup --params "{\"k\":\"$k\"}" --store "$work/og" --quiet --format jsonl |
  grep -q '"n.val"' || { echo "coldstart: the lookup printed no row" >&2; exit 1; }
for q in version lookup hop1 hop3; do
  [ -n "$base" ] && run before "$base" "$q"
  run after "$bin/omnigraph" "$q"
done
node -e '
  // one row per query: before/after CPU and wall medians and p90s (NaN = not measured)
  const rows = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
  const get = (q, b, f, s) => { const r = rows.find((x) => x.e2e === q && x.binary === b); return r ? r[f][s] : NaN; };
  console.log(["query", "before_cpu", "after_cpu", "before_wall", "after_wall", "before_wall_p90", "after_wall_p90",
    "before_cpu_p90", "after_cpu_p90", "after_rss_mib"].join("\t"));
  for (const q of ["version", "lookup", "hop1", "hop3"])
    console.log([q, get(q, "before", "cpu_ms", "median"), get(q, "after", "cpu_ms", "median"),
      get(q, "before", "wall_ms", "median"), get(q, "after", "wall_ms", "median"),
      get(q, "before", "wall_ms", "p90"), get(q, "after", "wall_ms", "p90"),
      get(q, "before", "cpu_ms", "p90"), get(q, "after", "cpu_ms", "p90"), get(q, "after", "maxrss_mib", "median")].join("\t"));
' "$out/e2e.jsonl" >"$out/e2e.tsv"
if command -v gnuplot >/dev/null; then
  gnuplot -e "tsv='$out/e2e.tsv'; svg='$out/coldstart.svg'; n='$n'" "$here/coldstart.gp" &&
    echo "coldstart: chart in $out/coldstart.svg"
fi
echo "coldstart: done $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
