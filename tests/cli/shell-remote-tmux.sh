#!/usr/bin/env bash
# shell-remote-tmux.sh — `omnigraph shell --server URL --graph ID` (docs/shell.md "A served
# graph") used as a person uses it, in a real terminal (tmux send-keys / capture-pane, each
# session on its own tmux server, as tests/cli/shell-tmux.sh): against an omnigraph-server with
# a token and a policy (main protected), it runs a query, completes a type and a property from
# the served schema, reads an error's caret, is refused a write on main with the server's
# message, writes on dev and reads the receipt, lists branches with their heads, travels to
# dev~1 and back, reads a plan with .explain (POST …/query/explain), and leaves with .quit.  A wrong token is
# refused when the shell starts.
# Usage: shell-remote-tmux.sh SOURCE_DIR OMNIGRAPH_BINARY OMNIGRAPH_SERVER_BINARY
set -euo pipefail
og=${2:?usage: shell-remote-tmux.sh SOURCE_DIR OMNIGRAPH OMNIGRAPH_SERVER}
srv=${3:?usage: shell-remote-tmux.sh SOURCE_DIR OMNIGRAPH OMNIGRAPH_SERVER}
og=$(cd "$(dirname "$og")" && pwd)/$(basename "$og")
command -v tmux >/dev/null || { echo "tmux is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
d=$(mktemp -d)
TMUX_LIB_NAME=og-rshell-test
. "$(dirname "$0")/tmux-lib.sh"
spid=
trap 'tmux_lib_cleanup; [ -n "$spid" ] && kill "$spid" 2>/dev/null; wait 2>/dev/null; rm -rf "$d"' EXIT
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}

cat > "$d/schema.pg" <<'EOF2'
node Person {
    handle: String @key
    name: String
}
node Project {
    slug: String @key
    title: String
}
edge WorksOn: Person -> Project
EOF2
{
  echo '{"type":"Person","data":{"handle":"ada","name":"Ada"}}'
  echo '{"type":"Person","data":{"handle":"grace","name":"Grace"}}'
  echo '{"type":"Project","data":{"slug":"engine","title":"Analytical engine"}}'
  echo '{"edge":"WorksOn","from":"ada","to":"engine"}'
} > "$d/seed.jsonl"
"$og" init --quiet --schema "$d/schema.pg" "$d/g"
"$og" load --quiet --data "$d/seed.jsonl" --mode overwrite "$d/g"
"$og" branch create --quiet --store "$d/g" --from main dev
cat > "$d/policy.yaml" <<'EOF2'
version: 1
groups:
  team: [alice]
protected_branches: [main]
rules:
  - id: team-read
    allow: { actors: { group: team }, actions: [read] }
  - id: team-write-unprotected
    allow: { actors: { group: team }, actions: [change], branch_scope: unprotected }
EOF2
mkdir "$d/home"
OMNIGRAPH_SERVER_BEARER_TOKENS_JSON='{"alice":"alice-secret"}' \
  "$srv" --graph "g=$d/g" --policy "$d/policy.yaml" --bind 127.0.0.1:0 >"$d/server.out" 2>"$d/server.log" &
spid=$!
addr=
for _ in $(seq 1 100); do
  addr=$(sed -n 's/^OMNIGRAPH_LISTEN_ADDR=//p' "$d/server.out" 2>/dev/null || true) # the server may not have opened it yet
  [ -n "$addr" ] && break
  sleep 0.1
done
[ -n "$addr" ] || { cat "$d/server.log" >&2; echo "FAIL: the server did not start" >&2; exit 1; }
url="http://$addr"

# a wrong token: refused when the shell starts, with the server's message
set +e
msg=$(OMNIGRAPH_HOME="$d/home" OMNIGRAPH_BEARER_TOKEN=wrong "$og" shell --server "$url" --graph g </dev/null 2>&1)
rc=$?
set -e
[ "$rc" = 1 ] && grep -q '^omnigraph shell: auth: invalid bearer token$' <<<"$msg" ||
  { echo "FAIL: a wrong token (status $rc): $msg" >&2; exit 1; }

start() {
  tmux_start "cd '$d' && OMNIGRAPH_HOME='$d/home' OMNIGRAPH_BEARER_TOKEN=alice-secret '$og' shell --server '$url' --graph g" '^main> ?$'
}

start

# 1. a query runs on the server, its rows as the local shell prints them
mark
type_line 'query people() { match { $p: Person } return { $p.name } order { $p.name } }'
expect '^\(2 rows\)$' "a served query"
has -x 'Ada' && has -x 'Grace' || fail "the rows of people()"

# 2. Tab completes a type and a property from the served schema
mark
tm send-keys -t s -l 'query c() { match { $p: Pers'
tm send-keys -t s Tab
expect 'match \{ \$p: Person ?$' "Tab completing Pers"
tm send-keys -t s -l '} return { $p.han'
tm send-keys -t s Tab
expect 'return \{ \$p\.handle$' "Tab completing \$p.han"
tm send-keys -t s -l ' } order { $p.handle } }'
tm send-keys -t s Enter
expect '^grace$' "the completed query's rows"

# 3. the server's type error, with a caret under the column it names
mark
type_line 'query e() { match { $p: Person } return { $p.nme } }'
expect 'has no property `nme`' "the type error"
expect_caret '^ +1 \| query e\(\)' '$p.nme'

# 4. a write on protected main: the policy's refusal, as the server words it
mark
type_line 'query add() { insert Person { handle: "linus", name: "Linus" } }'
expect "auth: policy denied action 'change' on branch 'main' for actor 'alice'" "the denied write"

# 5. on dev the write is one commit; its receipt
mark
type_line '.branch dev'
expect '^dev> ?$' "the prompt of branch dev"
type_line 'query add() { insert Person { handle: "margaret", name: "Margaret" } }'
expect '^affected 1 nodes, 0 edges in commit [0-9A-Z]{26} on dev$' "the receipt on dev"
head=$(out | sed -n 's/^affected 1 nodes, 0 edges in commit \([0-9A-Z]*\) on dev$/\1/p')

# 6. .branches: each branch with its head
mark
type_line '.branches'
expect "^\\* dev +$head\$" "dev's head is the new commit"
has -E '^  main +[0-9A-Z]{26}$' || fail "main and its head"

# 7. .at dev~1 reads the commit before the write; .at returns to the head
mark
type_line '.at dev~1'
expect '^dev@[0-9A-Z]{10}> ?$' "the prompt while reading dev~1"
type_line 'query people() { match { $p: Person } return { $p.name } order { $p.name } }'
expect '^\(2 rows\)$' "people before Margaret"
has -x 'Margaret' && fail "dev~1 still shows Margaret"
mark
type_line '.at'
type_line 'query people() { match { $p: Person } return { $p.name } order { $p.name } }'
expect '^\(3 rows\)$' "people at dev's head"

# 8. .explain: the served plan, as the local shell prints it
mark
type_line '.explain'
type_line 'query people() { match { $p: Person } return { $p.name } }'
expect 'scan \$p: Person' ".explain on a served graph"

# 9. .quit
mark
type_line '.quit'
expect '^shell exited with status 0$' ".quit"
echo "omnigraph shell --server: $step steps typed in tmux, all as expected"
