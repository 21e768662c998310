#!/usr/bin/env bash
# The generated man page and shell completions (scripts/gen-cli-docs.sh) cover the binary:
# bash completes verbs, a verb's subcommands and its flags; the man page renders without
# warnings and has a section per verb; the zsh and fish files name every verb (and parse,
# where those shells are installed).
# Usage: completions.sh SOURCE_DIR OMNIGRAPH_BIN
set -euo pipefail
src=$1 og=$2
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
bash "$src/scripts/gen-cli-docs.sh" "$og" "$d"
complete_words() { # the completions bash offers for the words given
    bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _omnigraph; echo "${COMPREPLY[*]}"' \
        _ "$d/omnigraph.bash" "$@"
}
[ "$(complete_words omnigraph que)" = "queries query" ] || { echo "verbs: $(complete_words omnigraph que)"; exit 1; }
[ "$(complete_words omnigraph branch me)" = "merge" ] || { echo "subcommands: $(complete_words omnigraph branch me)"; exit 1; }
grep -qw -- "--format" <<<"$(complete_words omnigraph query --fo)" || { echo "flags: $(complete_words omnigraph query --fo)"; exit 1; }
grep -qw -- "--message" <<<"$(complete_words omnigraph mutate --mes)" || { echo "no --message for mutate"; exit 1; }
verbs=$("$og" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }')
for v in $verbs; do
    grep -q "^\.SS $v\$" "$d/omnigraph.1" || { echo "man page lacks $v"; exit 1; }
    grep -q "^        '$v:" "$d/_omnigraph" || { echo "zsh lacks $v"; exit 1; }
    grep -q -- "-a $v -d" "$d/omnigraph.fish" || { echo "fish lacks $v"; exit 1; }
done
if command -v groff > /dev/null; then
    warn=$(groff -man -Tutf8 -ww "$d/omnigraph.1" 2>&1 > /dev/null)
    [ -z "$warn" ] || { echo "groff: $warn"; exit 1; }
fi
if command -v zsh > /dev/null; then zsh -n "$d/_omnigraph"; fi
if command -v fish > /dev/null; then fish -n "$d/omnigraph.fish"; fi
echo "man page and completions cover $(echo "$verbs" | wc -w) verbs"
