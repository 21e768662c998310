#!/usr/bin/env bash
# What a newcomer tripped over (issue 31), each pinned: `--query -` reads stdin, an empty query
# says so, `branch create ./g` explains the order of its words, did-you-mean for verbs and flags,
# the reference's aliases (`ingest` with its deprecation warning, `check`, `query lint`), a
# branch statement as a mutation's whole source, and `--format table` saying when it cuts.
# Usage: newcomer.sh OMNIGRAPH_BIN
set -uo pipefail
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cd "$d"
fails=0
check() { # check NAME EXPECTED_EXIT GREP_TEXT -- CMD...
    local name=$1 want=$2 text=$3
    shift 4
    local out rc
    out=$("$@" 2>&1)
    rc=$?
    if [ "$rc" -ne "$want" ] || ! grep -qF -- "$text" <<<"$out"; then
        echo "FAIL $name: exit $rc (want $want), output lacks '$text':"
        printf '%s\n' "$out" | sed 's/^/    /'
        fails=$((fails + 1))
    else
        echo "ok   $name"
    fi
}
printf 'node Person {\n    name: String @key\n    bio: String? @index\n    doc: Blob?\n}\n' > s.pg
"$bin" init ./g --schema s.pg > /dev/null 2>&1 || { echo "init failed"; exit 1; }
long=$(printf 'x%.0s' $(seq 1 80))
printf '{"type":"Person","data":{"name":"ann","bio":"%s"}}\n' "$long" > d.jsonl
"$bin" load --data d.jsonl --mode append ./g > /dev/null 2>&1 || { echo "load failed"; exit 1; }
q='query q() { match { $p: Person } return { $p.name } }'

out=$(printf '%s\n' "$q" | "$bin" query --query - --format jsonl ./g 2>&1)
if grep -qF '{"p.name":"ann"}' <<<"$out"; then echo "ok   query --query - reads stdin"
else echo "FAIL query --query -: $out"; fails=$((fails + 1)); fi
check "empty query" 2 "the query source is empty" -- "$bin" query -e '  ' ./g
check "empty query file" 2 "is empty" -- "$bin" query --query /dev/null ./g
check "branch create ./g" 2 "'./g' looks like the graph, but the branch name comes first" -- "$bin" branch create ./g
check "unknown verb" 2 "did you mean 'query'?" -- "$bin" qurey
check "unknown flag" 2 "did you mean --branch?" -- "$bin" query --brnach main -e "$q" ./g
check "far-off verb: no guess" 2 "unknown command 'zzzzzz'" -- "$bin" zzzzzz
check "ingest is load, deprecated" 0 "warning: \`ingest\` is deprecated; use \`omnigraph load\`" -- \
    "$bin" ingest --data d.jsonl --mode merge ./g
check "check = lint" 0 "usage: omnigraph lint" -- "$bin" check --help
check "query lint = lint, deprecated" 0 "\`query lint\` is deprecated" -- "$bin" query lint --help
check "mutate branch statement" 0 "created branch b0" -- "$bin" mutate -e 'branch create b0' ./g
check "the statement's branch exists" 0 "b0" -- "$bin" branch list ./g
check "mutate bad branch statement" 2 "a branch statement is" -- "$bin" mutate -e 'branch frobnicate b0' ./g
check "table says it cut" 0 "1 cell cut at 60 columns" -- \
    "$bin" query -e 'query q() { match { $p: Person } return { $p.name, $p.bio } }' --format table ./g
check "table --wide" 0 "$long" -- \
    "$bin" query -e 'query q() { match { $p: Person } return { $p.name, $p.bio } }' --format table --wide ./g
check "--wide needs table" 2 "--wide goes with --format table" -- "$bin" query --wide -e "$q" ./g
check "query --format kv" 0 "p.name: ann" -- "$bin" query -e "$q" --format kv ./g
check "mutate --format kv refused" 2 "--format kv is for reads" -- "$bin" mutate --format kv -e "$q" ./g
# every verb's help ends with a worked example, under `help VERB` and `VERB --help` alike
for v in $("$bin" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }'); do
    check "help $v shows an example" 0 "Example:" -- "$bin" help "$v"
    check "$v --help shows an example" 0 "Example:" -- "$bin" "$v" --help
done
check "blob with a wrong id says what an id is" 1 "no node of type 'Person' has id 'nobody' (a node's id is its @key value" -- \
    "$bin" blob stat node Person nobody doc ./g
# index: --kind is the index kind, --type a node or edge type; the old `--type fts` warns
check "index --kind" 0 "Person.bio" -- "$bin" index status --kind fts ./g
check "index --type is a node type" 0 "Person.bio" -- "$bin" index status --type Person ./g
check "index --type fts still works, warns" 0 "use \`--kind fts\`" -- "$bin" index status --type fts ./g
check "index build --type needs --property" 2 "needs --property P too" -- "$bin" index build --type Person ./g
# commits carry an optional message: -m on a write, shown by commit list / show, and the
# server's write routes take it as the body's "message"
check "mutate -m" 0 "" -- "$bin" mutate -m "cy joins" -e 'query a() { insert Person { name: "cy" } }' --quiet ./g
check "commit list shows it" 0 "cy joins" -- "$bin" commit list ./g
check "commit list --json carries it" 0 '"message": "cy joins"' -- "$bin" commit list --json ./g
head=$("$bin" commit list --json ./g | sed -n 's/.*"head": "\([0-9A-Z]*\)".*/\1/p' | head -1)
check "commit show shows it" 0 "cy joins" -- "$bin" commit show "$head" ./g
printf '{"type":"Person","data":{"name":"dee"}}\n' > d2.jsonl
check "load --message" 0 "" -- "$bin" load --data d2.jsonl --mode append --message "dee loaded" --quiet ./g
check "load's message" 0 "dee loaded" -- "$bin" commit list ./g
check "a read takes no message" 2 "makes neither" -- "$bin" query -m x -e "$q" ./g
check "a control character is refused" 1 "no control characters" -- \
    "$bin" mutate -m "$(printf 'a\001b')" -e 'query a() { insert Person { name: "eve" } }' ./g
if [ -x "$(dirname "$bin")/omnigraph-server" ]; then
    check "omnigraph-server --version" 0 "omnigraph-server $("$bin" version | head -1 | awk '{ print $2 }')" -- \
        "$(dirname "$bin")/omnigraph-server" --version
    "$(dirname "$bin")/omnigraph-server" --graph g=./g --bind 127.0.0.1:0 --unauthenticated > srv.log 2>&1 &
    spid=$!
    for _ in $(seq 1 50); do grep -qs OMNIGRAPH_LISTEN_ADDR srv.log && break; sleep 0.1; done
    addr=$(sed -n 's/.*OMNIGRAPH_LISTEN_ADDR=\([^ ]*\).*/\1/p' srv.log | head -1)
    if command -v curl > /dev/null && [ -n "$addr" ]; then
        check "server write with a message" 0 '"affected_nodes":1' -- curl -s -X POST "http://$addr/graphs/g/mutate" \
            -H 'content-type: application/json' \
            -d '{"query":"query a() { insert Person { name: \"fay\" } }","message":"over the wire"}'
        check "server commit's message" 0 "over the wire" -- "$bin" commit list ./g
        check "server refuses a non-string message" 0 '"message\" (the commit message) must be a string' -- \
            curl -s -X POST "http://$addr/graphs/g/mutate" -H 'content-type: application/json' \
            -d '{"query":"query a() { insert Person { name: \"gus\" } }","message":5}'
    fi
    kill "$spid" 2> /dev/null
    wait "$spid" 2> /dev/null
fi
[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
