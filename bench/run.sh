#!/usr/bin/env bash
# Table benchmark (`make bench`): writes 1M rows (id String, i64, f64, name String,
# vec Vector(128)) as one Lance table version and scans two columns (i64, f64) of it, with
# OmniGraph-C (lance_tool bench-write / bench-scan) and with LanceDB 0.31 for Node
# (bench/lance_write_scan.mjs), in the same run on the same disk; each side REPS times, the
# median kept.  Prints rows/s for both and the ratios (ours / LanceDB's).
# Usage: bench/run.sh BUILD_DIR [ROWS] [REPS]    Results are recorded in docs/benchmarks.md.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin="${1:-$here/build/release}"
case "$bin" in /*) ;; *) bin="$here/$bin" ;; esac
rows="${2:-1000000}"
reps="${3:-3}"
tool="$bin/lance_tool"
[ -x "$tool" ] || { echo "bench: $tool is missing (make build)" >&2; exit 1; }
if [ ! -d "$here/tests/interop/node_modules/@lancedb/lancedb" ]; then
  (cd "$here/tests/interop" && npm ci --no-audit --no-fund)
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/og-bench-XXXXXX")
trap 'rm -rf "$work"' EXIT

field() { sed -n "s/.*\"$2\":\([0-9.e+-]*\).*/\1/p" <<<"$1"; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

c_w=(); c_s=(); l_w=(); l_s=()
for i in $(seq "$reps"); do
  rm -rf "$work/root"; mkdir -p "$work/root"
  w=$("$tool" bench-write "$work/root" og_bench "$rows")
  s=$("$tool" bench-scan "$work/root" og_bench)
  c_w+=("$(field "$w" rows_per_s)"); c_s+=("$(field "$s" rows_per_s)")
  out=$(node "$here/bench/lance_write_scan.mjs" "$work/root" "$rows" 2>/dev/null)
  l_w+=("$(field "$(grep '"write"' <<<"$out")" rows_per_s)")
  l_s+=("$(field "$(grep '"scan"' <<<"$out")" rows_per_s)")
  echo "run $i: write ours ${c_w[-1]} rows/s, LanceDB ${l_w[-1]} rows/s; scan ours ${c_s[-1]} rows/s, LanceDB ${l_s[-1]} rows/s"
done
cw=$(printf '%s\n' "${c_w[@]}" | median); cs=$(printf '%s\n' "${c_s[@]}" | median)
lw=$(printf '%s\n' "${l_w[@]}" | median); ls=$(printf '%s\n' "${l_s[@]}" | median)
echo
echo "lance_write_scan ($rows rows, median of $reps)"
printf '  write: omnigraph-c %12.0f rows/s   lancedb %12.0f rows/s   ratio %.2f (target >= 0.7)\n' "$cw" "$lw" "$(awk "BEGIN{print $cw/$lw}")"
printf '  scan:  omnigraph-c %12.0f rows/s   lancedb %12.0f rows/s   ratio %.2f (target >= 1.0)\n' "$cs" "$ls" "$(awk "BEGIN{print $cs/$ls}")"
bash "$here/bench/graph/run.sh" "$bin"  # the graph benchmark against Kùzu (docs/benchmarks.md)
bash "$here/bench/search/run.sh" "$bin"  # full-text search against SQLite FTS5 (docs/benchmarks.md)
bash "$here/bench/search/vector_run.sh" "$bin"  # the vector search benchmark (docs/benchmarks.md)
bash "$here/bench/history/run.sh" "$bin"  # flat history: costs at 10 vs 10,000 commits (docs/benchmarks.md)
