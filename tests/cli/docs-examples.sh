#!/usr/bin/env bash
# docs-examples.sh — the examples of docs/reference.md work as printed: every ```pg block is a
# valid schema (`omnigraph schema check`), every ```gq block type-checks against the library
# example's schema (`omnigraph lint`), and the ```json NDJSON lines load into the library graph.
# Usage: docs-examples.sh SOURCE_DIR OMNIGRAPH_BINARY
set -euo pipefail
src=${1:?usage: docs-examples.sh SOURCE_DIR OMNIGRAPH} og=${2:?usage: docs-examples.sh SOURCE_DIR OMNIGRAPH}
doc="$src/docs/reference.md" lib="$src/examples/library"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
# split the fenced blocks into $d/N.LANG
awk -v d="$d" '/^```(pg|gq|json)$/ { n++; f = d "/" n "." substr($0, 4); next }
               /^```/ { f = ""; next } f { print > f }' "$doc"
bad=0 npg=0 ngq=0 njson=0
for f in "$d"/*.pg; do
  [ -e "$f" ] || continue
  npg=$((npg + 1))
  "$og" schema check "$f" > "$d/out" 2>&1 || { echo "docs/reference.md: a pg block does not check:" >&2; cat "$d/out" >&2; bad=1; }
done
for f in "$d"/*.gq; do
  [ -e "$f" ] || continue
  ngq=$((ngq + 1))
  "$og" lint --schema "$lib/schema.pg" --query "$f" > "$d/out" 2>&1 ||
    { echo "docs/reference.md: a gq block does not type-check against examples/library/schema.pg:" >&2; cat "$d/out" >&2; bad=1; }
done
for f in "$d"/*.json; do
  [ -e "$f" ] || continue
  njson=$((njson + 1))
  rm -rf "$d/g"
  "$og" init --quiet --schema "$lib/schema.pg" "$d/g" > /dev/null
  "$og" load --quiet --data "$lib/seed.jsonl" --mode overwrite "$d/g"
  "$og" load --quiet --data "$f" --mode merge "$d/g" > "$d/out" 2>&1 ||
    { echo "docs/reference.md: a json block does not load into the library graph:" >&2; cat "$d/out" >&2; bad=1; }
done
[ "$npg" -ge 1 ] && [ "$ngq" -ge 2 ] && [ "$njson" -ge 1 ] || { echo "too few blocks found in docs/reference.md" >&2; exit 1; }
[ "$bad" = 0 ] && echo "docs/reference.md: $npg schema, $ngq query and $njson NDJSON examples work as printed"
exit "$bad"
