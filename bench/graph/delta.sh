#!/usr/bin/env bash
# Topologies after a one-row write at 1M nodes (issue 17; docs/benchmarks.md "Delta
# topologies", "Composed topologies"): what the first traversal after a one-row write costs in
# a fresh process, on the graph bench/graph/run.sh loaded and optimized (run it first with
# GRAPH_BENCH_DIR set, so it keeps the graph; or load + optimize with build/release/bench_graph
# as run.sh does).  The optimized head has a persisted topology; a commit that deletes, updates
# or inserts needs the topology of a new version triple: built in full (2 x E endpoint
# lookups), as a delta from the optimized head's file and written (src/engine/tableview_delta.c),
# or composed from that file without building or writing anything
# (src/engine/tableview_compose.c) — whichever the binary does.
#
# Usage: bench/graph/delta.sh BUILD_DIR GRAPH_BENCH_DIR [ROUNDS] [BASELINE_OMNIGRAPH]
#   Each round and binary: a branch from main (untimed), one write on it (untimed), then the
#   first `omnigraph query hop1` on it in a fresh process, timed with /usr/bin/time (wall,
#   user + system CPU, peak RSS), then a second fresh `hop1` and a fresh `hop3` (a file the
#   first one wrote, mapped — or composed again); the branch is deleted and the topology files
#   the round wrote are removed, so every round starts from the optimized head's file alone.
#   Writes: `delete` (a node and its edges), `update` (one property: the node re-inserted, its
#   edges follow it), `insert` (one edge appended).
#   BASELINE_OMNIGRAPH: another build's `omnigraph` (e.g. main before a change), measured in
#   the same rounds (alternating).
#   In-process first call against Kùzu (KUZU_DB=the database run.sh loaded, which the writes
#   change): right after our write, `bench_graph query` on the branch gives the first hop1's
#   wall and CPU time after opening (step first_hop1_<write>), and `kuzu_bench.mjs
#   first-after-write` makes the same write in Kùzu, reopens it and times its first hop1.
# Prints one TSV row per step (medians over the rounds); leaves delta.jsonl in OUT (default
# GRAPH_BENCH_DIR/delta).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin="$1"; work="$2"; rounds="${3:-3}"; base="${4:-}"
case "$bin" in /*) ;; *) bin="$root/$bin" ;; esac
out="${OUT:-$work/delta}"
mkdir -p "$out"
og="$bin/omnigraph"
[ -x "$og" ] || { echo "delta: $og is missing (make build)" >&2; exit 1; }
[ -d "$work/og" ] || { echo "delta: no graph in $work (GRAPH_BENCH_DIR=$work bench/graph/run.sh first)" >&2; exit 1; }
g="$work/og"
keep=$(cd "$g" && find _index -name '*.csr' | sort)
echo "delta: $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg), $rounds rounds" >&2
hop1='query hop1($k: String) { match { $s: Node { key: $k }  $s link{1,1} $f } return { count($f) as n } }'
hop3='query hop3($k: String) { match { $s: Node { key: $k }  $s link{1,3} $f } return { count($f) as n } }'
jsonl="$out/delta.jsonl"
start1="$out/start1.txt"
echo k00000001 >"$start1"
: >"$jsonl"

timed() { # LABEL STEP BINARY ARGS...: one timed process, one JSON line
  local label="$1" name="$2" b="$3"
  shift 3
  local tf; tf=$(mktemp)
  if ! /usr/bin/time -f '%e %U %S %M' -o "$tf" "$b" "$@" >"$tf.out" 2>&1; then
    echo "delta: $name failed:" >&2; cat "$tf.out" >&2; exit 1
  fi
  read -r wall user sys rss <"$tf"
  node -e 'const [l,s,w,u,y,r]=process.argv.slice(1);console.log(JSON.stringify({binary:l,step:s,wall_ms:+w*1000,
    cpu_ms:Math.round((+u + +y)*1000),maxrss_mib:+(r/1024).toFixed(1)}))' "$label" "$name" "$wall" "$user" "$sys" "$rss" |
    tee -a "$jsonl" >&2
  rm -f "$tf" "$tf.out"
}

clean() { # removes the topology files written since the optimized head
  (cd "$g" && find _index -name '*.csr' | sort | comm -13 <(echo "$keep") - | xargs -r rm -f)
}

round() { # LABEL BINARY I
  local label="$1" b="$2" i="$3" br
  for w in delete update insert; do
    br="d-$label-$w-$i"
    "$b" branch create --from main "$br" --store "$g" >/dev/null
    case "$w" in
    delete) "$b" mutate -e "query m() { delete Node where key = \"k0000002$i\" }" --branch "$br" --store "$g" >/dev/null ;;
    update) "$b" mutate -e "query m() { update Node set { val: 7 } where key = \"k0000003$i\" }" --branch "$br" --store "$g" >/dev/null ;;
    insert) "$b" mutate -e "query m() { insert Link { from: \"k0000004$i\", to: \"k00000001\" } }" --branch "$br" --store "$g" >/dev/null ;;
    esac
    sync
    if [ "$label" = after ] && [ -n "${KUZU_DB:-}" ]; then # first call inside a fresh process, vs Kùzu's
      OG_BENCH_BRANCH="$br" OG_BENCH_ONLY=hop1 "$bin/bench_graph" query "$g" "$here/graph.gq" "$start1" 0 1 /dev/null 1 |
        node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{for(const l of s.trim().split("\n")){const r=JSON.parse(l);
          if(r.query==="hop1")console.log(JSON.stringify({binary:"after",step:"first_hop1_"+process.argv[1],wall_ms:r.first_us/1e3,
          cpu_ms:r.first_cpu_us/1e3,maxrss_mib:+(r.peak_rss_kb/1024).toFixed(1)}))}})' "$w" | tee -a "$jsonl" >&2
      node "$here/kuzu_bench.mjs" first-after-write "$KUZU_DB" "$w" "$i" k00000001 |
        node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=JSON.parse(s);
          console.log(JSON.stringify({binary:"kuzu",step:"first_hop1_"+r.write,wall_ms:r.first_us/1e3,cpu_ms:r.first_cpu_us/1e3,
          maxrss_mib:+(r.max_rss_kb/1024).toFixed(1)}))})' | tee -a "$jsonl" >&2
    fi
    timed "$label" "hop1_after_$w" "$b" query -e "$hop1" --params '{"k":"k00000001"}' --format jsonl --branch "$br" --store "$g"
    timed "$label" "hop1_again_$w" "$b" query -e "$hop1" --params '{"k":"k00000001"}' --format jsonl --branch "$br" --store "$g"
    timed "$label" "hop3_then_$w" "$b" query -e "$hop3" --params '{"k":"k00000001"}' --format jsonl --branch "$br" --store "$g"
    "$b" branch delete "$br" --store "$g" >/dev/null 2>&1
    clean
  done
}

for i in $(seq "$rounds"); do
  [ -n "$base" ] && round before "$base" "$i"
  round after "$og" "$i"
done
node -e '
  const rows = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
  const med = (v) => { const s = [...v].sort((a, b) => a - b); return s.length ? s[(s.length - 1) >> 1] : NaN; };
  const get = (st, b, f) => med(rows.filter((r) => r.step === st && r.binary === b).map((r) => r[f]));
  console.log(["step", "before_wall_ms", "before_cpu_ms", "before_rss_mib", "after_wall_ms", "after_cpu_ms", "after_rss_mib",
    "kuzu_wall_ms", "kuzu_cpu_ms"].join("\t"));
  for (const st of [...new Set(rows.map((r) => r.step))])
    console.log([st, get(st, "before", "wall_ms"), get(st, "before", "cpu_ms"), get(st, "before", "maxrss_mib"),
      get(st, "after", "wall_ms"), get(st, "after", "cpu_ms"), get(st, "after", "maxrss_mib"),
      get(st, "kuzu", "wall_ms"), get(st, "kuzu", "cpu_ms")].join("\t"));
' "$jsonl" | tee "$out/delta.tsv"
echo "delta: done $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
