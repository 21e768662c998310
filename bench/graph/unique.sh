#!/usr/bin/env bash
# One-row inserts into a table with a @unique property (issue 17 "Small writes stay cheap";
# docs/benchmarks.md "One-row writes"): the @unique check must not grow a hash map of the whole
# table for every write.  Builds N `Person` rows with `email: String @unique` (load + optimize),
# then times REPS one-row inserts (fresh `omnigraph mutate` processes, /usr/bin/time: wall, user +
# system CPU, peak RSS) and one insert that clashes, alternating with a baseline binary when one
# is given.
#
# Usage: bench/graph/unique.sh BUILD_DIR [N] [REPS] [BASELINE_OMNIGRAPH]   (N 1000000, REPS 5)
#   WORK: where the graph goes (default: a temporary directory, removed at the end).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin="$1"; n="${2:-1000000}"; reps="${3:-5}"; base="${4:-}"
case "$bin" in /*) ;; *) bin="$root/$bin" ;; esac
og="$bin/omnigraph"
[ -x "$og" ] || { echo "unique: $og is missing (make build)" >&2; exit 1; }
work="${WORK:-}"; own=0
[ -n "$work" ] || { work=$(mktemp -d); own=1; }
trap '[ $own = 1 ] && rm -rf "$work"' EXIT
mkdir -p "$work"; rm -rf "$work/g"
cat >"$work/s.pg" <<'PG'
node Person {
    name: String @key
    email: String @unique
    age: I32
}
PG
awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++)
  printf "{\"type\":\"Person\",\"data\":{\"name\":\"p%07d\",\"email\":\"u%07d@x.org\",\"age\":%d}}\n", i, i, i % 90 }' >"$work/d.jsonl"
"$og" init --schema "$work/s.pg" "$work/g" >/dev/null
"$og" load --data "$work/d.jsonl" --mode overwrite "$work/g" >/dev/null
"$og" optimize "$work/g" >/dev/null
echo "unique: $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg), N = $n, $reps inserts per binary" >&2

# timed LABEL BINARY EXPECT QUERY: one process; prints "label wall_ms cpu_ms rss_mib"
timed() {
  local tf; tf=$(mktemp)
  local rc=0
  /usr/bin/time -f '%e %U %S %M' -o "$tf" "$2" mutate -e "$4" "$work/g" >"$tf.out" 2>&1 || rc=$?
  if { [ "$3" = ok ] && [ $rc != 0 ]; } || { [ "$3" = clash ] && ! grep -q '@unique violation' "$tf.out"; }; then
    echo "unique: $1 expected $3:" >&2; cat "$tf.out" >&2; exit 1
  fi
  awk -v l="$1" 'END { printf "%s %.0f %.0f %.1f\n", l, $1 * 1000, ($2 + $3) * 1000, $4 / 1024 }' "$tf"
  rm -f "$tf" "$tf.out"
}

samples="$work/samples"; : >"$samples"
for i in $(seq 1 "$reps"); do
  for which in this base; do
    b="$og"; [ $which = base ] && b="$base"
    [ -n "$b" ] || continue
    timed "$which" "$b" ok "query m() { insert Person { name: \"n$which$i\", email: \"n$which$i@x.org\", age: 1 } }" >>"$samples"
  done
done
for which in this base; do
  b="$og"; [ $which = base ] && b="$base"
  [ -n "$b" ] || continue
  timed "$which-clash" "$b" clash 'query m() { insert Person { name: "clash", email: "u0000007@x.org", age: 1 } }' >>"$samples"
done
printf 'binary\twall_ms\tcpu_ms\tpeak_rss_mib\n'
for l in this base this-clash base-clash; do
  grep -q "^$l " "$samples" || continue
  med() { awk -v l="$l" -v f="$1" '$1 == l { print $f }' "$samples" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
  printf '%s\t%s\t%s\t%s\n' "$l" "$(med 2)" "$(med 3)" "$(med 4)"
done
