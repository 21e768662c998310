#!/usr/bin/env bash
# readme-taste.sh — the "A taste" commands of README.md run as printed (from a directory that
# has the repository's examples/, as the repository root does), with the build's binary for
# `og=./build/release/omnigraph` and, where the README leaves a placeholder, `<commit>` as
# main~1 / main and `-e '...'` as a small query.
# Usage: readme-taste.sh SOURCE_DIR OMNIGRAPH_BINARY
set -euo pipefail
src=${1:?usage: readme-taste.sh SOURCE_DIR OMNIGRAPH} og=${2:?usage: readme-taste.sh SOURCE_DIR OMNIGRAPH}
src=$(cd "$src" && pwd) og=$(cd "$(dirname "$og")" && pwd)/$(basename "$og")
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
ln -s "$src/examples" "$d/examples"
# the indented block of "## A taste"
awk '/^## A taste/ { on = 1; next } on && /^## / { exit } on && /^    / { print substr($0, 5) }' "$src/README.md" > "$d/taste.sh"
grep -q '^og=./build/release/omnigraph$' "$d/taste.sh" || { echo "README's taste no longer sets og=./build/release/omnigraph" >&2; exit 1; }
[ "$(grep -c '^\$og ' "$d/taste.sh")" -ge 8 ] || { echo "too few commands in README's taste" >&2; exit 1; }
sed -i -e "s|^og=./build/release/omnigraph\$|og='$og'|" \
       -e 's|--from <commit> --to <commit>|--from main~1 --to main|' \
       -e "s|--at <commit> -e '...'|--at main~1 -e 'query q() { match { \$b: Book } return { \$b.name } }'|" \
       -e 's|<commit>|main|g' "$d/taste.sh"
! grep -n '<[a-z]*>\|\.\.\.' "$d/taste.sh" || { echo "README's taste has a placeholder this test does not fill" >&2; exit 1; }
(cd "$d" && bash -euo pipefail taste.sh > out 2>&1) || { cat "$d/out" >&2; echo "README's taste failed" >&2; exit 1; }
grep -q '^loaded 48 records' "$d/out" && grep -q 'Ada Okafor' "$d/out" && grep -q 'merged experiment into main\|fast-forward' "$d/out" ||
  { cat "$d/out" >&2; echo "README's taste printed something unexpected" >&2; exit 1; }
echo "README.md: $(grep -c '^\$og ' "$d/taste.sh") taste commands run as printed"
