#!/usr/bin/env bash
# shell-tmux.sh — `omnigraph shell` used as a person uses it, in a real terminal: tmux types
# the keys (send-keys) and reads the screen (capture-pane).  It types a query, a multi-line
# query, completes with Tab, makes an error and reads its caret, runs a mutation and reads its
# receipt, switches branch, travels in time, abandons a half-typed statement and cancels a
# running query with Ctrl-C, leaves with .quit, and in a second session recalls the first one's
# history with the Up arrow (docs/shell.md).
# Usage: shell-tmux.sh SOURCE_DIR OMNIGRAPH_BINARY
set -euo pipefail
og=${2:?usage: shell-tmux.sh SOURCE_DIR OMNIGRAPH}
og=$(cd "$(dirname "$og")" && pwd)/$(basename "$og")
command -v tmux >/dev/null || { echo "tmux is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
d=$(mktemp -d)
TMUX_LIB_NAME=og-shell-test
. "$(dirname "$0")/tmux-lib.sh"
trap 'tmux_lib_cleanup; rm -rf "$d"' EXIT
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}

cat > "$d/schema.pg" <<'EOF'
node Person {
    handle: String @key
    name: String
}
node Project {
    slug: String @key
    title: String
}
edge WorksOn: Person -> Project
node P { name: String @key }
edge K: P -> P
EOF
{
  echo '{"type":"Person","data":{"handle":"ada","name":"Ada"}}'
  echo '{"type":"Person","data":{"handle":"grace","name":"Grace"}}'
  echo '{"type":"Project","data":{"slug":"engine","title":"Analytical engine"}}'
  echo '{"edge":"WorksOn","from":"ada","to":"engine"}'
  # a dense graph for a query that runs until it is cancelled
  for i in $(seq 0 399); do echo "{\"type\":\"P\",\"data\":{\"name\":\"p$i\"}}"; done
  for i in $(seq 0 399); do for k in 1 2 3 4 5 6; do
    echo "{\"edge\":\"K\",\"from\":\"p$i\",\"to\":\"p$(( (i * 31 + k * 97) % 400 ))\"}"; done; done
} > "$d/seed.jsonl"
"$og" init --quiet --schema "$d/schema.pg" "$d/g"
"$og" load --quiet --data "$d/seed.jsonl" --mode overwrite "$d/g"
"$og" branch create --quiet --store "$d/g" --from main dev
mkdir "$d/home"

start() { tmux_start "cd '$d' && OMNIGRAPH_HOME='$d/home' '$og' shell --store g" '^main> ?$'; }

start

# 1. a query typed on one line runs, its rows as a table
mark
type_line 'query people() { match { $p: Person } return { $p.name } order { $p.name } }'
expect '^\(2 rows\)$' "a query on one line"
has -x 'Ada' && has -x 'Grace' || fail "the rows of people()"

# 2. a multi-line query: continuation prompts, and it runs when its braces close
mark
type_line 'query team() {'
expect '^ *\.\.\.> ?$' "a continuation prompt"
type_line '  match { $p: Person  $p worksOn $j }'
type_line '  return { $j.title, $p.name }'
has 'Analytical engine' && fail "the query ran before its braces closed"
type_line '}'
expect '^Analytical engine +Ada$' "the multi-line query's row"

# 3. Tab completes a type, a property of the variable's type, and a dot command
mark
tm send-keys -t s -l 'query c() { match { $p: Pers'
tm send-keys -t s Tab
expect 'match \{ \$p: Person ?$' "Tab completing Pers"
tm send-keys -t s -l '} return { $p.han'
tm send-keys -t s Tab
expect 'return \{ \$p\.handle$' "Tab completing \$p.han"
tm send-keys -t s -l ' } }'
tm send-keys -t s Enter
expect '^ada$' "the completed query's rows"
mark
tm send-keys -t s -l '.sch'
tm send-keys -t s Tab
tm send-keys -t s -l 'Proj'
tm send-keys -t s Tab Enter
expect '^node Project \{$' ".schema Project completed and run"

# 4. an error: its message and a caret under the column it names
mark
type_line 'query e() { match { $p: Person } return { $p.nme } }'
expect 'has no property `nme`' "the type error"
expect_caret '^ +1 \| query e\(\)' '$p.nme'

# 5. a mutation publishes one commit and prints its receipt
mark
type_line 'query add() { insert Person { handle: "linus", name: "Linus" } }'
expect '^affected 1 nodes, 0 edges in commit [0-9A-Z]{26} on main$' "the mutation's receipt"

# 6. .branch switches what is read and written
mark
type_line '.branch dev'
expect '^dev> ?$' "the prompt of branch dev"
type_line 'query add() { insert Person { handle: "margaret", name: "Margaret" } }'
expect 'in commit [0-9A-Z]{26} on dev$' "a mutation on dev"
mark
type_line 'query people() { match { $p: Person } return { $p.name } order { $p.name } }'
expect '^\(3 rows\)$' "dev's people"
has -x 'Margaret' && ! has -x 'Linus' || fail "dev sees Margaret, not main's Linus"
mark
type_line '.branch main'
type_line 'query people() { match { $p: Person } return { $p.name } order { $p.name } }'
expect '^\(3 rows\)$' "main's people"
has -x 'Linus' && ! has -x 'Margaret' || fail "main sees Linus, not dev's Margaret"

# 7. .at reads an earlier commit; .at alone returns to the head
mark
type_line '.at main~1'
expect '^main@[0-9A-Z]{10}> ?$' "the prompt while reading main~1"
type_line 'query people() { match { $p: Person } return { $p.name } order { $p.name } }'
expect '^\(2 rows\)$' "people before Linus was added"
has -x 'Linus' && fail "main~1 still shows Linus"
mark
type_line '.at'
type_line 'query people() { match { $p: Person } return { $p.name } order { $p.name } }'
expect '^\(3 rows\)$' "people at the head again"

# 8. Ctrl-C drops a half-typed statement, and cancels a running query; the shell stays
mark
type_line 'query half() { match {'
expect '\.\.\.> ?$' "the half-typed statement's continuation prompt"
tm send-keys -t s C-c
expect '^main> ?$' "a fresh prompt after Ctrl-C"
mark
type_line 'query slow() { match { $a: P  $b: P  $c: P  $d: P } return { count($d) as n } }' # 400^4 rows
sleep 1
tm send-keys -t s C-c
expect 'cancelled \(Ctrl-C\): query cancelled' "the cancelled query"
mark
type_line 'query one() { match { $p: Person { handle: "ada" } } return { $p.name } }'
expect '^\(1 row\)$' "a query after the cancel"

# 9. .quit leaves with status 0
mark
type_line '.quit'
expect '^shell exited with status 0$' ".quit"

# 10. a second session recalls the first one's history: Up, Up gives the query before .quit
start
mark
tm send-keys -t s Up
expect '^main> \.quit$' "Up recalls .quit"
tm send-keys -t s Up
expect 'query one\(\) \{ match' "Up again recalls the last query"
tm send-keys -t s Enter
expect '^\(1 row\)$' "the recalled query runs"
# the multi-line query is one entry, its lines joined
# (libedit writes blanks as \040)
sed 's/\\040/ /g' "$d/home/history" |
  grep -F 'query team() {   match { $p: Person  $p worksOn $j }   return { $j.title, $p.name } }' > /dev/null ||
  { cat "$d/home/history" >&2; fail "the multi-line query is not one history entry"; }
tm send-keys -t s C-d
expect '^shell exited with status 0$' "Ctrl-D leaves"
echo "omnigraph shell: $step steps typed in tmux, all as expected"
