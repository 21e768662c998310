#!/usr/bin/env bash
# One-row writes at 1M nodes (issue 17 "Small writes stay cheap"; docs/benchmarks.md "One-row
# writes at 1M nodes / 5M edges"): what a user pays for `omnigraph mutate` of ONE row, and for
# the key lookup right after it, on the graph bench/graph/run.sh loaded and optimized (run it
# first with GRAPH_BENCH_DIR set, so it keeps the graph).  Every write must cost milliseconds
# whatever the graph's size: nothing on the write path may read a whole table when the key
# maps and topologies of its base exist.
#
# Usage: bench/graph/writes.sh BUILD_DIR GRAPH_BENCH_DIR [ROUNDS] [BASELINE_OMNIGRAPH]
#   ROUNDS (default 3): each round creates a branch from main (untimed; main keeps the
#   load + optimize state, so every round starts from the same head and its persisted
#   indexes), runs the sequence below on it in fresh processes, and deletes the branch.
#   BASELINE_OMNIGRAPH: another build's `omnigraph` (e.g. main before a change), measured the
#   same way in the same rounds (alternating), for before/after columns.
# The sequence, each step a fresh `omnigraph` process timed with /usr/bin/time (wall, user +
# system CPU, peak RSS), each write followed by a key lookup of the row it wrote:
#   delete0  delete a node by key on the optimized head (its topology at hand: cascade by it)
#   insert   a node (new key)
#   link     an edge between two existing nodes
#   update   one property of a node, by key
#   delete   a node by key, 3 writes after the optimized head (no topology at hand for that
#            base: the cascade reads the edge table's src/dst columns once)
# Prints one TSV row per step (medians over the rounds) and leaves writes.jsonl in OUT
# (default GRAPH_BENCH_DIR/writes).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin="$1"; work="$2"; rounds="${3:-3}"; base="${4:-}"
case "$bin" in /*) ;; *) bin="$root/$bin" ;; esac
out="${OUT:-$work/writes}"
mkdir -p "$out"
og="$bin/omnigraph"
[ -x "$og" ] || { echo "writes: $og is missing (make build)" >&2; exit 1; }
[ -d "$work/og" ] || { echo "writes: no graph in $work (GRAPH_BENCH_DIR=$work bench/graph/run.sh first)" >&2; exit 1; }
g="$work/og"
n=$(wc -l <"$work/data/nodes.csv" 2>/dev/null || echo 0); n=$((n > 0 ? n - 1 : 0))
echo "writes: $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg), N = $n, $rounds rounds" >&2
lookup='query lookup($k: String) { match { $n: Node { key: $k } } return { $n.val, $n.cat } }'
jsonl="$out/writes.jsonl"
: >"$jsonl"

# step LABEL BINARY BRANCH STEP -- ARGS...: one timed process, one JSON line
step() {
  local label="$1" bin_="$2" branch="$3" name="$4"
  shift 5
  local tf; tf=$(mktemp)
  if ! /usr/bin/time -f '%e %U %S %M' -o "$tf" "$bin_" "$@" --branch "$branch" --store "$g" >"$tf.out" 2>&1; then
    echo "writes: $name failed:" >&2; cat "$tf.out" >&2; exit 1
  fi
  read -r wall user sys rss <"$tf"
  node -e 'const [l,s,w,u,y,r]=process.argv.slice(1);console.log(JSON.stringify({binary:l,step:s,wall_ms:+w*1000,
    cpu_ms:Math.round((+u + +y)*1000),maxrss_mib:+(r/1024).toFixed(1)}))' "$label" "$name" "$wall" "$user" "$sys" "$rss" |
    tee -a "$jsonl" >&2
  rm -f "$tf" "$tf.out"
}

round() { # LABEL BINARY I
  local label="$1" b="$2" br
  br="w-$1-$3"
  "$b" branch create --from main "$br" --store "$g" >/dev/null
  step "$label" "$b" "$br" delete0 -- mutate -e 'query m() { delete Node where key = "k00000004" }'
  step "$label" "$b" "$br" lookup_after_delete0 -- query -e "$lookup" --params '{"k":"k00000004"}' --format jsonl
  step "$label" "$b" "$br" insert -- mutate -e 'query m() { insert Node { key: "knew00001", val: 1, cat: "alpha" } }'
  step "$label" "$b" "$br" lookup_after_insert -- query -e "$lookup" --params '{"k":"knew00001"}' --format jsonl
  step "$label" "$b" "$br" link -- mutate -e 'query m() { insert Link { from: "k00000001", to: "k00000002" } }'
  step "$label" "$b" "$br" lookup_after_link -- query -e "$lookup" --params '{"k":"k00000001"}' --format jsonl
  step "$label" "$b" "$br" update -- mutate -e 'query m() { update Node set { val: 7 } where key = "k00000003" }'
  step "$label" "$b" "$br" lookup_after_update -- query -e "$lookup" --params '{"k":"k00000003"}' --format jsonl
  step "$label" "$b" "$br" delete -- mutate -e 'query m() { delete Node where key = "k00000005" }'
  step "$label" "$b" "$br" lookup_after_delete -- query -e "$lookup" --params '{"k":"k00000005"}' --format jsonl
  "$b" branch delete "$br" --store "$g" >/dev/null 2>&1
}

for i in $(seq "$rounds"); do
  [ -n "$base" ] && round before "$base" "$i"
  round after "$og" "$i"
done
node -e '
  // medians per step and binary: wall, CPU, peak RSS
  const rows = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
  const med = (v) => { const s = [...v].sort((a, b) => a - b); return s.length ? s[(s.length - 1) >> 1] : NaN; };
  const get = (st, b, f) => med(rows.filter((r) => r.step === st && r.binary === b).map((r) => r[f]));
  console.log(["step", "before_wall_ms", "before_cpu_ms", "before_rss_mib", "after_wall_ms", "after_cpu_ms", "after_rss_mib"].join("\t"));
  for (const st of [...new Set(rows.map((r) => r.step))])
    console.log([st, get(st, "before", "wall_ms"), get(st, "before", "cpu_ms"), get(st, "before", "maxrss_mib"),
      get(st, "after", "wall_ms"), get(st, "after", "cpu_ms"), get(st, "after", "maxrss_mib")].join("\t"));
' "$jsonl" | tee "$out/writes.tsv"
echo "writes: done $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
