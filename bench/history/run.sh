#!/usr/bin/env bash
# bench/history/run.sh — flat history (issue 17; `make bench`; docs/benchmarks.md "Flat
# history"): the everyday operations at 10 and at BIG (default 10,000) commits of history,
# both graphs with 100 branches, the big one grown by one-row commits on the same table.
# Everything is built through the C API in one process (examples/bench_history.c: ~1-3 min
# for 10,000 commits on a local disk here), then measured in alternating rounds on the two
# graphs so that a change of machine load hits both:
#   - in process (C API, a warm handle; reads also on a fresh handle): head lookup, one-row
#     commit, `changes` between adjacent commits, commit list --limit 20 (and 10), branch
#     create, merge of a 10-row divergence — REPS rounds (default 15), medians;
#   - through the CLI (a fresh `omnigraph` process each): head lookup, one-row commit, commit
#     list --limit 20, branch create — CLI_REPS rounds (default 9), medians;
#   - the amortised cost of every 1,000 one-row commits while the big graph grows (automatic
#     compaction included).
# Prints the table with wall and CPU-time medians and their ratios (target: each <= 1.5; on a
# loaded machine wall times include waiting for a core, CPU times do not), writes $OUT/history.tsv,
# $OUT/grow.tsv and, with gnuplot, $OUT/history.svg (OUT default: $TMPDIR/og-history-bench).
# Usage: bench/history/run.sh [BUILD_DIR]   env: BIG, REPS, CLI_REPS, WORK (the graphs' parent
# directory; default a temp dir under $TMPDIR, removed at the end), OUT
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin="${1:-$here/build/release}"
case "$bin" in /*) ;; *) bin="$here/$bin" ;; esac
big="${BIG:-10000}"
reps="${REPS:-15}"
cli_reps="${CLI_REPS:-9}"
tool="$bin/bench_history"
og="$bin/omnigraph"
[ -x "$tool" ] && [ -x "$og" ] || { echo "bench/history: build first (make build)" >&2; exit 1; }
out="${OUT:-${TMPDIR:-/tmp}/og-history-bench}"
mkdir -p "$out"
work=$(mktemp -d "${WORK:-${TMPDIR:-/tmp}}/og-history-XXXXXX")
trap 'rm -rf "$work"' EXIT

t0=$(date +%s)
"$tool" init "$work/small" >/dev/null
"$tool" grow "$work/small" 10 >/dev/null
"$tool" init "$work/big" >/dev/null
"$tool" grow "$work/big" "$big" >"$work/grow.jsonl"
echo "bench/history: grew $big commits in $(( $(date +%s) - t0 )) s ($(du -sh "$work/big" | cut -f1) on disk)" >&2
"$tool" compare "$work/small" "$work/big" "$reps" >"$work/compare.json"
"$tool" cli "$og" "$work/small" "$work/big" "$cli_reps" >"$work/cli.json"

python3 - "$work" "$out" <<'PY'
import json, sys
work, out = sys.argv[1], sys.argv[2]
cmp = json.load(open(f"{work}/compare.json"))
cli = json.load(open(f"{work}/cli.json"))
rows = [  # (name, source, key, short label for the chart)
    ("head lookup (C API, warm handle)", cmp, "lookup", "lookup"),
    ("head lookup (C API, open + lookup)", cmp, "lookup_cold", "lookup, open"),
    ("head lookup (CLI process)", cli, "lookup", "lookup, CLI"),
    ("one-row commit (C API)", cmp, "commit", "commit"),
    ("one-row commit (CLI process)", cli, "commit", "commit, CLI"),
    ("branch create (C API)", cmp, "branch_create", "branch"),
    ("branch create (CLI process)", cli, "branch_create", "branch, CLI"),
    ("merge, 10-row divergence (C API)", cmp, "merge10", "merge 10 rows"),
    ("changes, adjacent commits (C API)", cmp, "changes", "changes"),
    ("changes, adjacent commits (open + changes)", cmp, "changes_cold", "changes, open"),
    ("commit list --limit 20 (C API)", cmp, "list20", "list 20"),
    ("commit list --limit 20 (open + list)", cmp, "list20_cold", "list 20, open"),
    ("commit list --limit 10 (C API)", cmp, "list10", "list 10"),
    ("commit list --limit 20 (CLI process)", cli, "list20", "list 20, CLI"),
]
hs, hb = cmp["small"]["history"], cmp["big"]["history"]
with open(f"{out}/history.tsv", "w") as f:
    f.write(f"operation\tms_at_{hs}\tms_at_{hb}\tratio\tcpu_ms_at_{hs}\tcpu_ms_at_{hb}\tcpu_ratio\tlabel\n")
    print(f"\n{'':44} {'wall ms':^27} {'CPU ms':^27}")
    print(f"{'operation':44} {'at ' + str(hs):>8} {'at ' + str(hb):>9} {'ratio':>7}  {'at ' + str(hs):>8} {'at ' + str(hb):>9} {'ratio':>7}")
    for name, src, key, label in rows:
        a, b = src["small"][key + "_ms"], src["big"][key + "_ms"]
        ca, cb = src["small"][key + "_cpu_ms"], src["big"][key + "_cpu_ms"]
        r = b / a if a else float("nan")
        cr = cb / ca if ca else float("nan")
        mark = "" if min(r, cr) <= 1.5 else "  MISSED"
        print(f"{name:44} {a:8.3f} {b:9.3f} {r:7.2f}  {ca:8.3f} {cb:9.3f} {cr:7.2f}{mark}")
        f.write(f"\"{name}\"\t{a:.3f}\t{b:.3f}\t{r:.2f}\t{ca:.3f}\t{cb:.3f}\t{cr:.2f}\t\"{label}\"\n")
with open(f"{out}/grow.tsv", "w") as f:
    f.write("history\tms_per_commit\n")
    for line in open(f"{work}/grow.jsonl"):
        o = json.loads(line)
        if o.get("mode") == "grow_chunk":
            f.write(f"{o['history']}\t{o['ms_per_commit']:.3f}\n")
print(f"\nmedians of {cmp['reps']} rounds (C API) and {cli['reps']} rounds (CLI); CPU = the calling thread's"
      f" (C API) or the process's user + system time (CLI); MISSED = both ratios above the target; grow: {out}/grow.tsv")
PY
if command -v gnuplot >/dev/null; then
  gnuplot <<GP
set terminal svg size 1100,400 font "sans,10"
set output "$out/history.svg"
set title "Flat history: cost at 10 commits vs at $big commits (ratio, target <= 1.5)"
set style data histograms
set style fill solid 0.8 border -1
set boxwidth 0.8
set ylabel "cost at $big commits / cost at 10"
set yrange [0:2.5]
set xtics font "sans,8"
set bmargin 3
set arrow from graph 0, first 1.5 to graph 1, first 1.5 nohead dt 2 lc rgb "red"
set datafile separator "\t"
set style histogram clustered gap 1
set key top right
plot "$out/history.tsv" every ::1 using 4:xtic(8) title "wall time" lc rgb "#4477aa", '' every ::1 using 7 title "CPU time" lc rgb "#66ccee"
GP
  echo "chart: $out/history.svg"
else
  echo "SKIP: no gnuplot (apt-get install gnuplot-nox) — no chart" >&2
fi
