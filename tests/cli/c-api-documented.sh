#!/usr/bin/env bash
# c-api-documented.sh — fails when a function declared in include/omnigraph.h is not named in
# docs/c-api.md (the user documentation of the C API must cover every public call).
set -euo pipefail
src=${1:?usage: c-api-documented.sh SOURCE_DIR}
header="$src/include/omnigraph.h" doc="$src/docs/c-api.md"
# declarations: a name og_... followed by "(" on a line that is not a comment line
fns=$(grep -v '^\s*\(/\*\|\*\)' "$header" | grep -oE '\bog_[a-z0-9_]+[[:space:]]*\(' | tr -d '( ' | sort -u)
[ -n "$fns" ] || { echo "no functions found in $header" >&2; exit 1; }
missing=0
for f in $fns; do
  if ! grep -qw "$f" "$doc"; then echo "not documented in docs/c-api.md: $f" >&2; missing=1; fi
done
n=$(echo "$fns" | wc -l)
[ "$missing" = 0 ] && echo "all $n functions of include/omnigraph.h are documented"
exit "$missing"
