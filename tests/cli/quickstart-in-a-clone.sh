#!/usr/bin/env bash
# What a stranger does first: clone the repository into an empty directory (so nothing
# like ../shared sits beside it) and run the quickstart. Uses the binary of this build.
# Usage: quickstart-in-a-clone.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 bin=$2
if ! git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
    echo "SKIP: quickstart_in_a_clone: $src is not a git checkout"
    exit 77
fi
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
git clone -q "$src" "$d/x"
[ ! -e "$d/shared" ] || { echo "unexpected $d/shared" >&2; exit 1; }
out=$(bash "$d/x/scripts/quickstart.sh" "$bin" 2>&1) || { printf '%s\n' "$out"; exit 1; }
printf '%s\n' "$out"
# the load, the branch merge and the time-travel reads all happened
grep -q '^loaded 48 records' <<<"$out"
grep -q 'merged returns into main' <<<"$out"
[ "$(grep -c '^Ada Okafor' <<<"$out")" -ge 2 ]
grep -q '^(3 rows)$' <<<"$out"
