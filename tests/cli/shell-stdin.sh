#!/usr/bin/env bash
# shell-stdin.sh — `omnigraph shell --store g < script`: a script runs statement by statement
# (one line or several, `;` or closing braces), dot commands included, with no prompt; the
# exit status is 0 when everything ran and 1 when anything failed, and a failure names the
# script line with a caret under the column (docs/shell.md "Scripts").
# Usage: shell-stdin.sh SOURCE_DIR OMNIGRAPH_BINARY
set -euo pipefail
og=${2:?usage: shell-stdin.sh SOURCE_DIR OMNIGRAPH}
og=$(cd "$(dirname "$og")" && pwd)/$(basename "$og")
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $1" >&2; exit 1; }

cat > "$d/schema.pg" <<'EOF'
node Person {
    handle: String @key
    name: String
    age: I32?
}
edge Knows: Person -> Person
EOF
cat > "$d/seed.jsonl" <<'EOF'
{"type":"Person","data":{"handle":"ada","name":"Ada","age":36}}
{"type":"Person","data":{"handle":"grace","name":"Grace","age":45}}
{"edge":"Knows","from":"ada","to":"grace"}
EOF
"$og" init --quiet --schema "$d/schema.pg" "$d/g"
"$og" load --quiet --data "$d/seed.jsonl" --mode overwrite "$d/g"
"$og" branch create --quiet --store "$d/g" --from main dev

# 1. a clean script: exit 0, exactly these lines on stdout, nothing on stderr
cat > "$d/ok.gqs" <<'EOF'
// a comment line is nothing
query people() { match { $p: Person } return { $p.name, $p.age } order { $p.name } }
.format csv
.params {"min": 40}
query older($min: I32) {
    match { $p: Person  $p.age > $min }
    return { $p.handle }
};
query ada() { match { $p: Person { handle: "ada" } } return { $p.age } }
.params {}
.format json
query add() { insert Person { handle: "linus", name: "Linus" } }
query knows() { match { $a: Person  $a knows $b } return { $a.name, $b.name } }
.branch dev
.format table
query n() { match { $p: Person } return { count($p) as people } }
EOF
"$og" shell --store "$d/g" < "$d/ok.gqs" > "$d/out" 2> "$d/err" || { cat "$d/err" >&2; fail "the clean script exited $?"; }
[ ! -s "$d/err" ] || { cat "$d/err" >&2; fail "the clean script wrote to stderr"; }
sed -i -E -e 's/commit [0-9A-Z]{26}/commit C/' -e 's/\r$//' "$d/out"
cat > "$d/want" <<'EOF'
p.name  p.age
------  -----
Ada     36
Grace   45
(2 rows)
p.handle
grace
p.age
36
affected 1 nodes, 0 edges in commit C on main
[{"a.name":"Ada","b.name":"Grace"}]
branch dev
people
------
2
(1 row)
EOF
diff "$d/want" "$d/out" || fail "the clean script's output"
[ "$("$og" query --store "$d/g" --format csv -e 'query q() { match { $p: Person { handle: "linus" } } return { $p.name } }' | tr -d '\r')" = "$(printf 'p.name\nLinus')" ] ||
  fail "the script's mutation is not in the graph"

# 2. a script with failures: each one names its line (and column, with a caret), the
#    statements after it still run, and the exit status is 1
cat > "$d/bad.gqs" <<'EOF'
query a() { match { $p: Person { handle: "ada" } } return { $p.name } }
query bad() {
    match { $p: Persn }
    return { $p.name }
}
.nosuch
query after() { match { $p: Person { handle: "grace" } } return { $p.age } }
.read missing.gqs
query open() { match {
EOF
set +e
(cd "$d" && "$og" shell --store g < bad.gqs > out 2> err)
rc=$?
set -e
[ "$rc" = 1 ] || { cat "$d/err" >&2; fail "the failing script exited $rc, not 1"; }
printf 'p.name\n------\nAda\n(1 row)\np.age\n-----\n45\n(1 row)\n' | diff - "$d/out" || fail "the statements around the failures"
cat > "$d/want" <<'EOF'
<stdin>:3:17: error: type: T1: unknown node type `Persn`; did you mean `Person`?
  3 |     match { $p: Persn }
    |                 ^
<stdin>:6: error: unknown command .nosuch (.help lists the commands)
<stdin>:8: error: io: cannot read missing.gqs: No such file or directory
<stdin>:9: error: parse: the statement is not complete at the end of <stdin> (a `}` or `;` is missing)
EOF
diff "$d/want" "$d/err" || fail "the failing script's messages"

# 3. .read runs a file as if typed; usage errors exit 2; --server is refused until built
printf 'query q() { match { $p: Person } return { count($p) as n } }\n' > "$d/count.gq"
[ "$(printf '.read %s\n' "$d/count.gq" | "$og" shell --store "$d/g" | sed -n 3p)" = 3 ] || fail ".read"
[ "$("$og" shell --store "$d/g" --format csv -c '.branch dev
query n() { match { $p: Person } return { count($p) as n } }' | tr -d '\r')" = "$(printf 'branch dev\nn\n2')" ] || fail "-c runs its lines"
set +e; "$og" shell --store "$d/g" -c 'query x() { match {' 2> "$d/err"; rc=$?; set -e
[ "$rc" = 1 ] && grep -q '^<-c>:1: error: parse: the statement is not complete' "$d/err" || fail "-c with an open statement"
printf '.explain\nquery q() { match { $p: Person } return { $p.name } }\n' | "$og" shell --store "$d/g" |
  grep 'scan $p: Person' > /dev/null || fail ".explain prints the next query's plan"
set +e
"$og" shell --store "$d/g" --format yaml < /dev/null 2> /dev/null; rc1=$?
(unset OMNIGRAPH_STORE; "$og" shell < /dev/null 2> /dev/null); rc2=$?
"$og" shell --server http://127.0.0.1:1 --graph g < /dev/null 2> "$d/err"; rc3=$?
"$og" shell --store "$d/g" --branch nosuch < /dev/null 2> /dev/null; rc4=$?
set -e
[ "$rc1" = 2 ] && [ "$rc2" = 2 ] || fail "usage errors exit 2 (got $rc1, $rc2)"
[ "$rc3" = 1 ] && grep -q '^omnigraph shell: io: .*cannot reach http://127.0.0.1:1' "$d/err" || fail "a server that does not answer is said at start (exit $rc3)"
[ "$rc4" = 1 ] || fail "an unknown --branch exits 1 (got $rc4)"
echo "omnigraph shell reads scripts from stdin: as expected"
