#!/usr/bin/env bash
# cli-documented.sh — docs/cli.md and the binary agree: every verb `omnigraph --help` lists,
# every subcommand its help names, and every flag any help prints is in docs/cli.md; every
# flag docs/cli.md names is one the binary has.  `omnigraph help VERB [SUB]` works for each.
# Usage: cli-documented.sh SOURCE_DIR OMNIGRAPH_BINARY
set -euo pipefail
src=${1:?usage: cli-documented.sh SOURCE_DIR OMNIGRAPH} og=${2:?usage: cli-documented.sh SOURCE_DIR OMNIGRAPH}
doc="$src/docs/cli.md"
help_all=$(mktemp)
trap 'rm -f "$help_all"' EXIT
bad=0
"$og" --help > "$help_all"
verbs=$(awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }' "$help_all")
[ "$(echo "$verbs" | wc -w)" -ge 20 ] || { echo "too few verbs parsed from omnigraph --help" >&2; exit 1; }
for v in $verbs; do
  out=$("$og" help "$v") || { echo "omnigraph help $v failed" >&2; bad=1; continue; }
  [ "$out" = "$("$og" "$v" --help)" ] || { echo "omnigraph help $v differs from omnigraph $v --help" >&2; bad=1; }
  echo "$out" >> "$help_all"
  grep -q "\`$v[ \`]" "$doc" || grep -q "\*\*\`$v" "$doc" || { echo "docs/cli.md does not document verb '$v'" >&2; bad=1; }
  # subcommands: the words after "omnigraph VERB " on usage lines (and "VERB a|b|c ...")
  subs=$(echo "$out" | grep -oE "omnigraph $v [a-z][a-z|-]*" | awk '{ print $3 }' | tr '|' '\n' | sort -u || true)
  for s in $subs; do
    case "$s" in -*) continue ;; esac
    sub_out=$("$og" help "$v" "$s") || { echo "omnigraph help $v $s failed" >&2; bad=1; continue; }
    echo "$sub_out" >> "$help_all"
    grep -qE "(\`|\*\*\`|\|)$v [^\`]*\b$s\b|\`$v $s|$v [a-z|-]*\b$s\b" "$doc" ||
      { echo "docs/cli.md does not document '$v $s'" >&2; bad=1; }
  done
done
# every flag of every help is documented
flags=$(grep -oE -- '(^|[][ (,|])--?[a-zA-Z][a-zA-Z-]*' "$help_all" | sed -E 's/^[][ (,|]//' | grep -E '^--[a-z]|^-[a-zA-Z]$' | sort -u || true)
for f in $flags; do
  grep -qF -- "\`$f" "$doc" || grep -qE -- "[][ (\`|]$f([][ \`,=)|]|$)" "$doc" ||
    { echo "docs/cli.md does not document flag '$f'" >&2; bad=1; }
done
# every flag docs/cli.md names exists
for f in $(grep -oE -- '`--?[a-zA-Z][a-zA-Z-]*' "$doc" | tr -d '`' | grep -E '^--[a-z]|^-[a-zA-Z]$' | sort -u); do
  grep -qx -- "$f" <<<"$flags" || { echo "docs/cli.md names '$f', which no help lists" >&2; bad=1; }
done
[ "$bad" = 0 ] && echo "docs/cli.md documents all $(echo "$verbs" | wc -w) verbs and $(echo "$flags" | wc -w) flags, and no others"
exit "$bad"
