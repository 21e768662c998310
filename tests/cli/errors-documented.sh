#!/usr/bin/env bash
# errors-documented.sh — docs/errors.md and the code agree, both ways: every og_status code
# (include/omnigraph.h, named by src/util/error.c) has a "### `name` (N)" section with its
# number; every `code` the server can put in an error body (src/server, src/mcp) has a row in
# "Server error codes"; every query type-check code (T1…), migration code (OG-MF-…) and merge
# conflict kind in the sources has a row; and the page names none that do not exist.  Its
# links stay inside the repository.
# Usage: errors-documented.sh SOURCE_DIR
set -euo pipefail
src=${1:?usage: errors-documented.sh SOURCE_DIR}
doc="$src/docs/errors.md"
bad=0
fail() { echo "$*" >&2; bad=1; }
# the text of one "## " section of the page
section() { awk -v h="## $1" '$0 == h { on = 1; next } on && /^## / { on = 0 } on' "$doc"; }
# the first-column `codes` of the table rows of a text
row_codes() { grep -oE '^\| `[A-Za-z0-9_-]+`' | sed -E 's/^\| `//; s/`$//' | sort -u; }
# compare two sorted lists: $1 what, $2 the code's, $3 the page's
compare() {
  local only_code only_doc
  only_code=$(comm -23 <(echo "$2") <(echo "$3") | grep . || true)
  only_doc=$(comm -13 <(echo "$2") <(echo "$3") | grep . || true)
  [ -z "$only_code" ] || fail "docs/errors.md does not document $1: $(echo $only_code)"
  [ -z "$only_doc" ] || fail "docs/errors.md documents $1 that do not exist: $(echo $only_doc)"
  [ -n "$2" ] || fail "no $1 found in the sources (has the code moved?)"
}

# 1. og_status: enum values from the header, names from error.c
enum=$(awk '/typedef enum og_status/ { on = 1 } on && /OG_ERR_[A-Z_]+ *= *[0-9]+/ {
         match($0, /OG_ERR_[A-Z_]+/); n = substr($0, RSTART, RLENGTH)
         v = $0; sub(/.*= */, "", v); sub(/[^0-9].*/, "", v); print n, v } on && /} og_status;/ { exit }' \
       "$src/include/omnigraph.h")
[ "$(echo "$enum" | wc -l)" -ge 17 ] || fail "too few og_status values parsed from include/omnigraph.h"
want=""
while read -r sym val; do
  name=$(grep -oE "\[$sym\] = \"[a-z_]+\"" "$src/src/util/error.c" | sed -E 's/.*"(.*)"/\1/' || true)
  [ -n "$name" ] || { fail "src/util/error.c gives $sym no name"; continue; }
  want+="$name ($val)"$'\n'
done <<<"$enum"
want=$(echo -n "$want" | sort -u)
have=$(section "Error codes" | grep -oE '^### `[a-z_]+` \([0-9]+\)' | sed -E 's/^### `([a-z_]+)` /\1 /' | sort -u)
compare "og_status codes (as \"### \`name\` (number)\")" "$want" "$have"

# 2. server error body codes: the OpenAPI ErrorCode enum and every literal the code answers with
openapi=$(awk '/"ErrorCode"/ { on = 1 } on { print } on && /\)\);/ { exit }' "$src/src/server/openapi.c" |
          grep -oE '"[a-z_]+"' | tr -d '"' | grep -vxE 'type|string|enum' | sort -u)
used=$(cat "$src"/src/server/*.c "$src"/src/mcp/*.c 2>/dev/null |
       grep -oE 'og_resp_error\([a-z_]+, [0-9]+, "[a-z_]+"|\*code = "[a-z_]+"' | grep -oE '"[a-z_]+"' | tr -d '"' | sort -u)
extra=$(comm -13 <(echo "$openapi") <(echo "$used") | grep . || true)
[ -z "$extra" ] || fail "the server answers codes its OpenAPI ErrorCode enum lacks: $(echo $extra)"
compare "server error codes" "$(printf '%s\n%s\n' "$openapi" "$used" | grep . | sort -u)" \
        "$(section "Server error codes" | row_codes)"

# 3. codes inside messages
tcodes=$(cat "$src"/src/compiler/*.c | grep -oE '"T[0-9]+"' | tr -d '"' | sort -u)
compare "query type-check codes" "$tcodes" "$(section "Codes inside messages" | row_codes | grep -E '^T[0-9]+$' || true)"
mcodes=$(cat "$src"/src/compiler/*.c | grep -oE '"OG-[A-Z]+-[0-9]+"' | tr -d '"' | sort -u)
compare "schema migration codes" "$mcodes" "$(section "Codes inside messages" | row_codes | grep -E '^OG-' || true)"
kinds=$(awk '/og_conflict_kind_name\(/ { on = 1 } on && /return "/ { match($0, /"[a-z_]+"/); print substr($0, RSTART + 1, RLENGTH - 2) }
             on && /^}/ { exit }' "$src/src/engine/merge.c" | grep -vx unknown | sort -u)
compare "merge conflict kinds" "$kinds" "$(section "Codes inside messages" | row_codes | grep -E '^[a-z_]+$' || true)"

# 4. links stay in the repository and point at files that exist
for l in $(grep -oE '\]\([^)#]+' "$doc" | sed 's/^](//'); do
  case "$l" in http*) continue ;; esac
  [ -e "$src/docs/$l" ] || fail "docs/errors.md links to '$l', which is not in docs/"
done

[ "$bad" = 0 ] && echo "docs/errors.md documents $(echo "$want" | wc -l) og_status codes," \
  "$(echo "$openapi" | wc -l) server codes, $(echo "$tcodes" | wc -l) type-check codes," \
  "$(echo "$mcodes" | wc -l) migration codes and $(echo "$kinds" | wc -l) conflict kinds, and no others"
exit "$bad"
