#!/usr/bin/env bash
# remote-parity.sh — the CLI against a served graph (docs/cli.md "Remote mode and operator
# config"): one command sequence runs embedded (--store) and served (--server URL --graph ID)
# on two copies of one graph, and stdout, exit status and the stderr error class must match
# (commit ids and times normalised: the two graphs mint their own; so is how the actor was
# established, "local" embedded and the server's "token" / "unauthenticated" served).  Then the operator side:
# credentials (login/logout, 0600, env tokens, never echoed), config.yaml servers, profiles,
# defaults, aliases, graphs list, the scope refusals and --yes.
# Usage: remote-parity.sh SOURCE_DIR OMNIGRAPH OMNIGRAPH_SERVER
set -uo pipefail
src=${1:?usage: remote-parity.sh SOURCE_DIR OMNIGRAPH OMNIGRAPH_SERVER}
og=${2:?usage: remote-parity.sh SOURCE_DIR OMNIGRAPH OMNIGRAPH_SERVER}
srv=${3:?usage: remote-parity.sh SOURCE_DIR OMNIGRAPH OMNIGRAPH_SERVER}
d=$(mktemp -d)
pids=()
# start_server runs in $(...), a subshell: it notes its server's pid in $d/pids for this to stop
cleanup() {
  for p in "${pids[@]}" $(cat "$d/pids" 2>/dev/null); do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  rm -rf "$d"
}
trap cleanup EXIT
export HOME=$d/home OMNIGRAPH_HOME=$d/home/.omnigraph
unset OMNIGRAPH_STORE OMNIGRAPH_PROFILE OMNIGRAPH_BEARER_TOKEN
mkdir -p "$HOME"
fail=0
bad() { echo "FAIL: $*" >&2; fail=1; }

cat > "$d/s.pg" <<'EOF'
node Person {
  name: String @key
  age: I32?
  note: String?
  body: Blob?
}
edge Knows: Person -> Person
EOF
cat > "$d/seed.jsonl" <<'EOF'
{"type":"Person","data":{"name":"Alice","age":30,"note":"likes, commas","body":"base64:SGVsbG8gd29ybGQ="}}
{"type":"Person","data":{"name":"Bob","age":25,"note":""}}
{"type":"Person","data":{"name":"Chloé","age":null}}
{"edge":"Knows","from":"Alice","to":"Bob","data":{}}
EOF
for g in emb srv other; do "$og" init --schema "$d/s.pg" --quiet "$d/$g" >/dev/null || bad "init $g"; done

# start_server OUTFILE ARGS... : prints the URL
start_server() {
  local out=$1; shift
  "$srv" "$@" --bind 127.0.0.1:0 > "$out" 2> "$out.err" &
  pids+=($!)
  echo $! >> "$d/pids"
  for _ in $(seq 100); do grep -q OMNIGRAPH_LISTEN_ADDR "$out" && break; sleep 0.1; done
  echo "http://$(sed -n 's/^OMNIGRAPH_LISTEN_ADDR=//p' "$out")"
}
url=$(start_server "$d/open.out" --graph kg="$d/srv" --graph other="$d/other" --unauthenticated)
[ "$url" != "http://" ] || { cat "$d/open.out.err" >&2; echo "FAIL: server did not start" >&2; exit 1; }

# served receipts carry no "attempts" (the server does not report its publish retries)
norm() { perl -0pe 's/,\n\s*"attempts": \d+//g' | sed -E -e 's/[0-9A-HJKMNP-TV-Z]{26}/<ID>/g' -e 's/[0-9]{16}/<US>/g' -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z/<TIME>/g' \
  -e 's/"actor_via": "(local|token|unauthenticated)"/"actor_via": <VIA>/g'; }
# the error class of stderr: "omnigraph VERB: CLASS: ..." lines (the write echo differs by design)
errclass() { grep -oE '^omnigraph [a-z ]+: [a-z_]+:' || true; }
n=0
# both ARGS...: runs the command embedded and served and compares
both() {
  n=$((n + 1))
  "$og" "$@" --store "$d/emb" > "$d/e.out" 2> "$d/e.err"; local er=$?
  "$og" "$@" --server "$url" --graph kg --yes > "$d/s.out" 2> "$d/s.err"; local sr=$?
  [ "$er" = "$sr" ] || bad "exit $er embedded vs $sr served: $*"
  diff <(norm < "$d/e.out") <(norm < "$d/s.out") > "$d/diff" || { bad "stdout differs: $*"; cat "$d/diff" >&2; }
  [ "$(errclass < "$d/e.err")" = "$(errclass < "$d/s.err")" ] ||
    bad "stderr class differs: $*: '$(errclass < "$d/e.err")' vs '$(errclass < "$d/s.err")'"
  grep -q "→ graph kg on $url (served)" "$d/s.err" || [ "$sr" != 0 ] || ! is_write "$@" || bad "no served target echo: $*"
}
is_write() { case "$1 ${2:-}" in mutate*|load*|"branch create"|"branch delete"|"branch merge"|"schema apply") return 0 ;; esac; return 1; }

Q='query q() { match { $p: Person } return { $p.name, $p.age, $p.note } order { $p.name asc } }'
both load --data "$d/seed.jsonl" --mode append --json
for f in json csv table jsonl; do both query -e "$Q" --format "$f"; done
both query -e 'query q($n: String) { match { $p: Person { name: $n } } return { $p.age } }' --params '{"n":"Alice"}'
both query -e "$Q" --at main --format csv
both mutate -e 'query m() { update Person set { age: 31 } where name = "Alice" }'
both mutate -e 'query m() { update Person set { age: 32 } where name = "Alice" }' --json
both mutate -e 'query m() { update Person set { age: 1 } where name = "Nobody" }'
both mutate -e 'query m() { insert Person { name: "Dan", age: 40 } }' --format csv
both branch create b1
both branch list
both branch list --format csv
both branch list --json
both mutate -e 'query m() { update Person set { age: 26 } where name = "Bob" }' --branch b1
both query -e "$Q" --branch b1 --format table
both branch merge b1
both branch delete b1
both branch create -m "why: b2" b2
both branch list --json
both branch list --format csv
both branch create -m "$(printf 'a\001b')" b3
both branch delete b2
both schema show
both export
both export --type Knows
both snapshot --format csv
both blob get node Person Alice body
both blob get node Person Alice body --offset 6 --length 5
both blob stat node Person Alice body
both blob stat node Person Alice body --json
both blob get node Person Nobody body
both blob get node Person Bob body
both changes baseline --out "$d/base.jsonl" --type Person
# the baseline files themselves: the same entities
"$og" changes baseline --out "$d/base.e" --store "$d/emb" > /dev/null 2>&1 || bad "embedded baseline"
"$og" changes baseline --out "$d/base.s" --server "$url" --graph kg > /dev/null 2>&1 || bad "served baseline"
[ -s "$d/base.s" ] && diff <(norm < "$d/base.e") <(norm < "$d/base.s") > /dev/null || bad "baseline files differ: $(diff "$d/base.e" "$d/base.s" | head -5)"
ls "$d"/base.s.tmp.* > /dev/null 2>&1 && bad "a served baseline left its temporary file"
# errors: the same class and exit status
both query -e 'query q() { match { $p: Persn } return { $p.name } }'
both query -e 'query q() { match { $p: Person return { $p.name } }'
both query -e 'query q($n: String) { match { $p: Person { name: $n } } return { $p.age } }'
both branch create main
both branch delete nope
both query -e "$Q" --as someone
# session settings beside the text (issue 32): served, --set travels in the request's `settings`
# member; an unknown name or value is the same usage error; a `set` line of the text still works
both query -e "$Q" --set engine=v2 --format csv
both mutate -e 'query m() { update Person set { age: 32 } where name = "Alice" }' --set engine=v2
both query -e "$Q" --set engine=v1
both query -e "$Q" --set turbo=fast
both query -e "set engine = v2; $Q" --format jsonl
# the server checks the member itself (another client than the CLI): 400 with the reference's wording
if command -v curl > /dev/null; then
  printf '%s' '{"query": "query q() { match { $p: Person } return { $p.name } }", "settings": {"turbo": "v2"}}' > "$d/set.json"
  st=$(curl -s -o "$d/set.body" -w '%{http_code}' -H 'Content-Type: application/json' -d @"$d/set.json" "$url/graphs/kg/query")
  [ "$st" = 400 ] && grep -q 'unknown setting `turbo`; expected one of engine' "$d/set.body" || bad "settings member refused: $st $(cat "$d/set.body")"
  st=$(curl -s -o "$d/set.body" -w '%{http_code}' -H 'Content-Type: application/json' \
    -d '{"query": "query q() { match { $p: Person } return { $p.name } }", "settings": {"engine": "v2"}}' "$url/graphs/kg/query")
  [ "$st" = 200 ] || bad "settings member accepted: $st $(cat "$d/set.body")"
  st=$(curl -s -o "$d/set.body" -w '%{http_code}' -H 'Content-Type: application/json' \
    -d '{"query": "query q() { match { $p: Person } return { $p.name } }", "settings": ["engine"]}' "$url/graphs/kg/query")
  [ "$st" = 400 ] || bad "settings not an object: $st $(cat "$d/set.body")"
fi
both mutate -e 'query m() { insert Person { name: "Alice" } }'
# a lost --if-commit: exit 4, precondition_failed, each side with its own stale head
for side in emb srv; do
  if [ $side = emb ]; then scope=(--store "$d/emb"); else scope=(--server "$url" --graph kg); fi
  old=$("$og" query -e "$Q" --format jsonl "${scope[@]}" | head -1 | sed -E 's/.*"graph_commit_id":"([^"]+)".*/\1/')
  "$og" mutate -e 'query m() { update Person set { age: 50 } where name = "Dan" }' --quiet "${scope[@]}" > /dev/null
  "$og" mutate -e 'query m() { update Person set { age: 51 } where name = "Dan" }' --if-commit "$old" "${scope[@]}" \
    > "$d/$side.pre" 2> "$d/$side.pre.err"
  echo $? > "$d/$side.prc"
done
[ "$(cat "$d/emb.prc")" = 4 ] && [ "$(cat "$d/srv.prc")" = 4 ] || bad "lost --if-commit: exit $(cat "$d/emb.prc") / $(cat "$d/srv.prc"), want 4"
[ "$(errclass < "$d/emb.pre.err")" = "$(errclass < "$d/srv.pre.err")" ] || bad "lost --if-commit: error classes differ"
"$og" mutate -e 'query m() { update Person set { age: 51 } where name = "Dan" }' --if-commit 01M90000000000000000000000 \
  --server "$url" --graph kg --json > "$d/pre.json" 2>/dev/null
grep -q '"precondition_failure"' "$d/pre.json" || bad "served --if-commit --json does not print precondition_failure"

# ---- the routes OmniGraph-C adds for the CLI (docs/server.md): explain, load CAS, merge
# strategies, --at on snapshot and export, range diffs — each the same embedded and served
# a table cell past 60 columns: cut with the same note, or whole with --wide
both mutate -e 'query m() { insert Person { name: "Lena", note: "a note long enough to pass the sixty columns a table cell shows" } }'
both query -e "$Q" --format table
grep -q '1 cell cut at 60 columns' "$d/s.out" || bad "served table: no cut note: $(cat "$d/s.out")"
both query -e "$Q" --format table --wide
grep -q 'sixty columns a table cell shows' "$d/s.out" || bad "served table --wide cut a cell"
both query -e "$Q" --wide
both query -e "$Q" --explain
both query -e "$Q" --explain --analyze
both query -e "$Q" --explain --at main~1
both query -e 'query q() { match { $p: Persn } return { $p.name } }' --explain
both query -e "$Q" --analyze
both snapshot --at main~1 --format csv
both snapshot --at main~2 --format csv
both snapshot --at nosuchcommit
both export --at main~3
both export --at main~3 --type Person
both changes --from main~3 --to main
both changes --from main~3 --to main --format csv
both changes --from main~3 --to main --type Person --op update --json
both changes --from main~1 --to nosuchcommit
# load --if-commit: a held head loads; a lost race exits 4 and, under --json, prints the same
# structured precondition_failure body (ids normalised) on both sides
printf '%s\n' '{"type":"Person","data":{"name":"Fay","age":33}}' > "$d/fay.jsonl"
for side in emb srv; do
  if [ $side = emb ]; then scope=(--store "$d/emb"); else scope=(--server "$url" --graph kg); fi
  head=$("$og" query -e "$Q" --format jsonl "${scope[@]}" | head -1 | sed -E 's/.*"graph_commit_id":"([^"]+)".*/\1/')
  "$og" load --data "$d/fay.jsonl" --mode append --if-commit "$head" --json --quiet "${scope[@]}" > "$d/$side.lok" 2> "$d/$side.lok.err"
  echo $? > "$d/$side.lokrc"
  "$og" load --data "$d/fay.jsonl" --mode append --if-commit "$head" --json --quiet "${scope[@]}" > "$d/$side.lpre" 2> "$d/$side.lpre.err"
  echo $? > "$d/$side.lprc"
  "$og" mutate -e 'query m() { update Person set { age: 34 } where name = "Fay" }' --if-commit "$head" --json --quiet \
    "${scope[@]}" > "$d/$side.mpre" 2> "$d/$side.mpre.err"
  echo $? > "$d/$side.mprc"
done
[ "$(cat "$d/emb.lokrc") $(cat "$d/srv.lokrc")" = "0 0" ] || bad "load --if-commit on the held head: exit $(cat "$d/emb.lokrc") / $(cat "$d/srv.lokrc"): $(cat "$d/srv.lok.err")"
diff <(norm < "$d/emb.lok") <(norm < "$d/srv.lok") > /dev/null || bad "load --if-commit receipts differ: $(diff <(norm < "$d/emb.lok") <(norm < "$d/srv.lok") | head -5)"
for w in lprc mprc; do
  [ "$(cat "$d/emb.$w") $(cat "$d/srv.$w")" = "4 4" ] || bad "lost --if-commit ($w): exit $(cat "$d/emb.$w") / $(cat "$d/srv.$w"), want 4"
done
for w in lpre mpre; do
  grep -q '"precondition_failure"' "$d/emb.$w" && grep -q '"expected"' "$d/emb.$w" || bad "embedded lost --if-commit --json ($w) prints no body: $(cat "$d/emb.$w")"
  diff <(norm < "$d/emb.$w") <(norm < "$d/srv.$w") > "$d/diff" || { bad "lost --if-commit --json ($w) bodies differ"; cat "$d/diff" >&2; }
  [ "$(errclass < "$d/emb.$w.err")" = "$(errclass < "$d/srv.$w.err")" ] || bad "lost --if-commit ($w): error classes differ"
done
# the body names the real head: the one the held load published
grep -q "\"actual\": \"$("$og" query -e "$Q" --format jsonl --store "$d/emb" | head -1 | sed -E 's/.*"graph_commit_id":"([^"]+)".*/\1/')\"" "$d/emb.lpre" ||
  bad "the embedded body's actual is not the head: $(cat "$d/emb.lpre")"
# merge --strategy: a row changed on both sides is a conflict (nothing published), then
# settled by theirs, each side listing the settled conflict
both branch create c1
both mutate -e 'query m() { update Person set { age: 70 } where name = "Bob" }' --branch c1
both mutate -e 'query m() { update Person set { age: 71 } where name = "Bob" }'
both branch merge c1
both branch merge c1 --json
both branch merge c1 --strategy bogus
both branch merge c1 --strategy divergent_update=theirs
grep -q 'settled divergent_update (theirs)' "$d/s.out" || bad "served merge --strategy lists no settled conflict: $(cat "$d/s.out")"
both query -e 'query q() { match { $p: Person { name: "Bob" } } return { $p.age } }' --format csv
[ "$("$og" query -e 'query q() { match { $p: Person { name: "Bob" } } return { $p.age } }' --format csv --server "$url" --graph kg | tail -1 | tr -d '\r')" = 70 ] ||
  bad "served merge --strategy theirs did not take the branch's row"
both branch create c2
both mutate -e 'query m() { update Person set { age: 80 } where name = "Alice" }' --branch c2
both mutate -e 'query m() { update Person set { age: 81 } where name = "Alice" }'
both branch merge c2 --strategy ours
both query -e 'query q() { match { $p: Person { name: "Alice" } } return { $p.age } }' --format csv
# merge --json: the merge's whole document (base, heads, commit, counts, resolved, stats) as
# the embedded verb prints it, a published merge and an up-to-date one
both branch create c3
both mutate -e 'query m() { insert Person { name: "Eve", age: 50 } }' --branch c3
both branch merge c3 --json
both branch merge c3 --json

# ---- scope rules: each misuse refused (exit 2) with its fix ----------------------------------
refused() { # PATTERN ARGS...
  local pat=$1; shift
  "$og" "$@" > "$d/r.out" 2> "$d/r.err"; local rc=$?
  [ $rc = 2 ] && grep -q -- "$pat" "$d/r.err" || { bad "not refused ($rc) with '$pat': $*"; cat "$d/r.err" >&2; }
}
refused 'opens storage directly' optimize --server "$url" --graph kg
refused 'opens storage directly' cleanup --server "$url" --graph kg
refused 'is a server address, not a graph root' query -e "$Q" "$url"
refused '`--as` is not allowed on a served write' mutate -e 'query m() { insert Person { name: "Eve" } }' --as act-x --server "$url" --graph kg
refused 'mutually exclusive' query -e "$Q" --server "$url" --store "$d/emb"
refused 'a --store already is one graph' query -e "$Q" --store "$d/emb" --graph kg
refused 'add --server' query -e "$Q" --graph kg
refused 'no graph selected' query -e "$Q" --server "$url"
refused 'unknown server' query -e "$Q" --server nosuch --graph kg
refused 'is not offered served' query -e "$Q" --exact --server "$url" --graph kg
# destructive writes on a served target need --yes (no terminal here: refused, nothing done)
before=$("$og" query -e "$Q" --format csv --server "$url" --graph kg)
refused 'without --yes' load --data "$d/seed.jsonl" --mode overwrite --server "$url" --graph kg < /dev/null
refused 'without --yes' branch delete main --server "$url" --graph kg < /dev/null
refused 'without --yes' cleanup --confirm --store s3://bucket/nothing < /dev/null
[ "$before" = "$("$og" query -e "$Q" --format csv --server "$url" --graph kg)" ] || bad "a refused write changed the graph"
# at a terminal, the destructive write asks: "n" keeps the branch, "y" deletes it
if command -v script > /dev/null; then
  "$og" branch create doomed --quiet --server "$url" --graph kg > /dev/null 2>&1
  (sleep 0.3; echo n) | script -qec "'$og' branch delete doomed --server '$url' --graph kg" /dev/null > "$d/tty.out" 2>&1
  "$og" branch list --server "$url" --graph kg | grep -q '^doomed ' || bad "answering n deleted the branch: $(cat "$d/tty.out")"
  grep -q 'delete branch doomed on graph kg' "$d/tty.out" || bad "the prompt does not name the branch: $(cat "$d/tty.out")"
  (sleep 0.3; echo y) | script -qec "'$og' branch delete doomed --server '$url' --graph kg" /dev/null > "$d/tty.out" 2>&1
  ! "$og" branch list --server "$url" --graph kg | grep -q '^doomed ' || bad "answering y kept the branch: $(cat "$d/tty.out")"
fi
# --quiet silences the target echo of a served write
"$og" mutate -e 'query m() { update Person set { age: 52 } where name = "Dan" }' --quiet --server "$url" --graph kg 2> "$d/q.err" >/dev/null
[ ! -s "$d/q.err" ] || bad "--quiet still echoed: $(cat "$d/q.err")"

# ---- credentials, config.yaml, profiles, aliases -----------------------------------------------
tok=s3cr3t-token-value
policy=$d/server.policy.yaml
printf 'version: 1\ngroups:\n  admins: [act-alice]\nrules:\n  - id: admins-list\n    allow: { actors: { group: admins }, actions: [graph_list] }\n' > "$policy"
gpolicy=$d/graph.policy.yaml
printf 'version: 1\ngroups:\n  team: [act-alice]\nrules:\n  - id: team-all\n    allow: { actors: { group: team }, actions: [read, export, change, invoke_query] }\n' > "$gpolicy"
surl=$(OMNIGRAPH_SERVER_BEARER_TOKENS_JSON="{\"act-alice\":\"$tok\"}" start_server "$d/auth.out" --graph kg="$d/srv" --graph other="$d/other" --policy "$gpolicy" --server-policy "$policy")
mkdir -p "$OMNIGRAPH_HOME"
cat > "$OMNIGRAPH_HOME/config.yaml" <<EOF
operator:
  actor: act-alice
servers:
  prod:
    url: $surl
profiles:
  prod-kg:
    server: prod
    default_graph: kg
  local-dev:
    store: file://$d/emb
aliases:
  age-of:
    server: prod
    graph: kg
    query: q
    args: [n]
    format: csv
EOF
# no token: 401, class auth, exit 1
"$og" query -e "$Q" --server prod --graph kg > /dev/null 2> "$d/a.err"; rc=$?
[ $rc = 1 ] && grep -q '^omnigraph query: auth:' "$d/a.err" || bad "tokenless query: exit $rc $(cat "$d/a.err")"
echo "$tok" | "$og" login prod 2> "$d/login.err" || bad "login prod failed: $(cat "$d/login.err")"
[ "$(stat -c %a "$OMNIGRAPH_HOME/credentials")" = 600 ] || bad "credentials mode $(stat -c %a "$OMNIGRAPH_HOME/credentials")"
"$og" query -e "$Q" --format csv --server prod --graph kg > "$d/p.csv" 2> "$d/p.err" || bad "query with a stored token: $(cat "$d/p.err")"
[ "$(cat "$d/p.csv")" = "$("$og" query -e "$Q" --format csv --server "$url" --graph kg)" ] || bad "served query through the named server printed something else"
"$og" query -e "$Q" --format csv --profile prod-kg > "$d/p2.csv" 2>&1 || bad "--profile prod-kg: $(cat "$d/p2.csv")"
OMNIGRAPH_PROFILE=prod-kg "$og" query -e "$Q" --format csv > "$d/p3.csv" 2>&1 || bad "OMNIGRAPH_PROFILE: $(cat "$d/p3.csv")"
cmp -s "$d/p.csv" "$d/p2.csv" && cmp -s "$d/p.csv" "$d/p3.csv" || bad "profile queries differ"
# a profile binding a store: the local graph (the emb copy has its own Dan age; compare to --store)
"$og" query -e "$Q" --format csv --profile local-dev > "$d/l.csv" 2>&1 || bad "--profile local-dev: $(cat "$d/l.csv")"
"$og" query -e "$Q" --format csv --store "$d/emb" | cmp -s - "$d/l.csv" || bad "--profile local-dev is not the store"
# explicit flags win over the profile
"$og" query -e "$Q" --format csv --profile prod-kg --store "$d/emb" | cmp -s - "$d/l.csv" || bad "--store did not override the profile"
# operator.actor is the actor of a direct write given no --as
"$og" mutate -e 'query m() { update Person set { age: 60 } where name = "Dan" }' --json --quiet --profile local-dev > "$d/oa.out" 2>&1
grep -q '"actor_id": "act-alice"' "$d/oa.out" || bad "operator.actor not used for a direct write: $(cat "$d/oa.out")"
"$og" profile list > "$d/pl.out" && grep -q 'prod-kg' "$d/pl.out" && grep -q 'local-dev' "$d/pl.out" || bad "profile list: $(cat "$d/pl.out")"
"$og" profile show prod-kg --json > "$d/ps.out" && grep -q "\"server_url\": \"$surl\"" "$d/ps.out" || bad "profile show: $(cat "$d/ps.out")"
"$og" alias age-of Alice > "$d/al.out" 2> "$d/al.err"; rc=$?
# the alias names stored query `q`, which a --graph server does not have: the server's 404
[ $rc = 1 ] && grep -q '^omnigraph query: not_found:' "$d/al.err" || bad "alias on a missing stored query: $rc $(cat "$d/al.err")"
"$og" graphs list --server prod > "$d/gl.out" 2>&1 && grep -q '^kg ' "$d/gl.out" && grep -q '^other ' "$d/gl.out" || bad "graphs list: $(cat "$d/gl.out")"
"$og" query -e "$Q" --server prod > /dev/null 2> "$d/ng.err"; rc=$?
[ $rc = 2 ] && grep -q 'pass --graph ID, one of: kg other' "$d/ng.err" || bad "multi-graph without --graph: $rc $(cat "$d/ng.err")"
# env tokens: OMNIGRAPH_TOKEN_<NAME> wins over the file; OMNIGRAPH_BEARER_TOKEN is the last resort
OMNIGRAPH_TOKEN_PROD=wrong "$og" query -e "$Q" --server prod --graph kg > /dev/null 2>&1 && bad "OMNIGRAPH_TOKEN_PROD was not used"
"$og" logout prod 2> "$d/lo.err" || bad "logout"
"$og" logout prod 2> "$d/lo2.err" || bad "a second logout failed (must be idempotent)"
OMNIGRAPH_BEARER_TOKEN=$tok "$og" query -e "$Q" --format csv --server "$surl" --graph kg > /dev/null 2>&1 || bad "OMNIGRAPH_BEARER_TOKEN"
OMNIGRAPH_TOKEN_PROD=$tok "$og" query -e "$Q" --format csv --server prod --graph kg > /dev/null 2>&1 || bad "OMNIGRAPH_TOKEN_PROD"
# a credentials file others can read is refused, never used
"$og" login prod --token "$tok" 2>/dev/null
chmod 644 "$OMNIGRAPH_HOME/credentials"
"$og" query -e "$Q" --server prod --graph kg > /dev/null 2> "$d/perm.err" && bad "a 0644 credentials file was used"
grep -q 'chmod 600' "$d/perm.err" || bad "0644 credentials: $(cat "$d/perm.err")"
chmod 600 "$OMNIGRAPH_HOME/credentials"
# the token never appears in what the CLI printed
! grep -rl -- "$tok" "$d"/*.err "$d"/*.out > /dev/null 2>&1 || bad "the token was printed: $(grep -rl -- "$tok" "$d"/*.err "$d"/*.out)"
# property: logins and logouts of many names keep exactly the sections of the names logged in,
# each with its own token (the file stays 0600 through every rewrite)
rm -f "$OMNIGRAPH_HOME/credentials"
declare -A want=()
for i in $(seq 24); do
  nm="srv-$((RANDOM % 9))"; t="t$RANDOM$RANDOM"
  if [ $((RANDOM % 3)) = 0 ]; then "$og" logout "$nm" 2>/dev/null || bad "logout $nm"; unset "want[$nm]"
  else "$og" login "$nm" --token "$t" 2>/dev/null || bad "login $nm"; want[$nm]=$t; fi
done
for nm in "${!want[@]}"; do
  [ "$(awk -v s="[$nm]" '$0 == s { getline; print $3 }' "$OMNIGRAPH_HOME/credentials")" = "${want[$nm]}" ] || bad "credentials lost $nm"
done
[ "$(grep -c '^\[' "$OMNIGRAPH_HOME/credentials" || true)" = "${#want[@]}" ] || bad "credentials hold $(grep -c '^\[' "$OMNIGRAPH_HOME/credentials") sections, want ${#want[@]}"
[ "$(stat -c %a "$OMNIGRAPH_HOME/credentials")" = 600 ] || bad "credentials mode after rewrites"
# a malformed config.yaml is reported with its line, exit 2, nothing run
cp "$OMNIGRAPH_HOME/config.yaml" "$d/config.keep"
printf 'profiles:\n  p: [unclosed\n' > "$OMNIGRAPH_HOME/config.yaml"
"$og" query -e "$Q" --profile p > /dev/null 2> "$d/bady.err"; rc=$?
[ $rc = 2 ] && grep -q 'config.yaml:[0-9]*:[0-9]*:' "$d/bady.err" || bad "malformed config.yaml: $rc $(cat "$d/bady.err")"
cp "$d/config.keep" "$OMNIGRAPH_HOME/config.yaml"
"$og" login prod --token "$tok" 2>/dev/null
# an alias runs a stored query of a served cluster, as `query NAME --params` would
cp -r "$src/examples/cluster" "$d/cl"
"$og" cluster import --config "$d/cl" > /dev/null 2>&1 && "$og" cluster apply --config "$d/cl" --as you > /dev/null 2>&1 ||
  bad "cannot apply the example cluster"
curl_=$(OMNIGRAPH_SERVER_BEARER_TOKENS_JSON='{"alice":"alice-tok"}' start_server "$d/cl.out" --cluster "$d/cl")
cp "$OMNIGRAPH_HOME/config.yaml" "$d/config.keep"
printf 'servers:\n  team:\n    url: %s\naliases:\n  adults: {server: team, graph: people, query: adults, args: [min], format: csv}\n' \
  "$curl_" > "$OMNIGRAPH_HOME/config.yaml"
OMNIGRAPH_TOKEN_TEAM=alice-tok "$og" alias adults 0 > "$d/al2.out" 2> "$d/al2.err" || bad "alias adults 0: $(cat "$d/al2.err")"
OMNIGRAPH_TOKEN_TEAM=alice-tok "$og" query adults --params '{"min":0}' --format csv --server team --graph people \
  > "$d/al3.out" 2>&1 || bad "stored query adults: $(cat "$d/al3.out")"
head -1 "$d/al2.out" | grep -q '^p.name,p.age' && cmp -s "$d/al2.out" "$d/al3.out" ||
  bad "alias output: $(cat "$d/al2.out" "$d/al2.err")"
OMNIGRAPH_TOKEN_TEAM=alice-tok "$og" alias adults > /dev/null 2> "$d/al4.err"; rc=$?
[ $rc = 2 ] && grep -q "needs its argument 'min'" "$d/al4.err" || bad "alias without its argument: $rc $(cat "$d/al4.err")"
cp "$d/config.keep" "$OMNIGRAPH_HOME/config.yaml"
# defaults.server fills a command with no scope
printf 'defaults:\n  output: csv\n  server: prod\n  default_graph: kg\nservers:\n  prod:\n    url: %s\n' "$surl" > "$OMNIGRAPH_HOME/config.yaml"
"$og" query -e "$Q" 2>/dev/null | cmp -s - "$d/p.csv" || bad "defaults.server + default_graph + output"
# ... but never a direct-only verb, which still opens its ROOT
"$og" optimize > /dev/null 2> "$d/opt.err"
grep -q 'no graph given' "$d/opt.err" || bad "defaults.server claimed optimize: $(cat "$d/opt.err")"

[ "$fail" = 0 ] && echo "remote parity: $n command(s) identical embedded and served; scope rules, credentials, profiles, aliases hold"
exit "$fail"
