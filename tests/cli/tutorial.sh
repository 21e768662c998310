#!/usr/bin/env bash
# docs/tutorial.md cannot rot: every ```sh block of the page runs, in order, in one bash
# process (so shell variables carry from block to block) with `set -euo pipefail`; a block
# fenced ```sh expect-failure must exit non-zero. The tutorial's working directory
# /tmp/og-tutorial is replaced by a fresh temporary directory.
# Usage: tutorial.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 bin=$2
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
awk -v work="$d/work" '
    /^```sh/ { inblock = 1; fail = ($0 ~ /expect-failure/); n++;
               printf "echo \"--- tutorial block %d\"\n", n;
               if (fail) print "if ("; next }
    /^```/ && inblock { inblock = 0;
               if (fail) printf ") ; then echo \"tutorial block %d should have failed\" >&2; exit 1; fi\n", n;
               next }
    inblock { gsub("/tmp/og-tutorial", work); print }
' "$src/docs/tutorial.md" > "$d/tutorial-script.sh"
[ "$(grep -c '^echo "--- tutorial block' "$d/tutorial-script.sh")" -ge 10 ]
cd "$d"
PATH="$bin:$PATH" bash -euo pipefail "$d/tutorial-script.sh" > "$d/out.txt" 2>&1 || {
    cat "$d/out.txt"; echo "FAILED: the script was:"; cat -n "$d/tutorial-script.sh"; exit 1; }
cat "$d/out.txt"
# what the page promises
grep -q 'conflict' "$d/out.txt"                      # the merge was refused with a conflict
# ... naming the row and the differing property with both sides' values, once
grep -q "^  divergent_update: Project 'engine' was changed differently on pause-engine and main: status: \"paused\" on pause-engine, \"done\" on main (was \"active\")\$" "$d/out.txt"
[ "$(grep -c "Project 'engine'" "$d/out.txt")" -eq 2 ]  # the refusal, then the settled list
grep -q '^  settled divergent_update (theirs): ' "$d/out.txt"
grep -q '^merged: merged pause-engine into main' "$d/out.txt"
[ "$(grep -c '^engine  *paused' "$d/out.txt")" -ge 2 ]  # on the branch, and on main after the merge
grep -q '^engine  *active' "$d/out.txt"              # time travel to the load
[ "$(wc -l < "$d/work/backup.jsonl")" -eq 12 ]       # 10 seed lines + 1 person + 1 edge
