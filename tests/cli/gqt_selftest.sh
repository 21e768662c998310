#!/usr/bin/env bash
# gqt_selftest.sh — the `omnigraph test` runner tested against cases that must pass, fail, be
# refused or be skipped (tests/cli/gqt/*.gqt, each with `# selftest: ok|FAIL|invalid|SKIP` and
# an optional `# grep: TEXT` the output must contain), then the --bless round trip.
# usage: gqt_selftest.sh OMNIGRAPH_BIN CASE_DIR
set -u
bin=$1
dir=$2
fails=0
n=0
for f in "$dir"/*.gqt; do
    n=$((n + 1))
    want=$(sed -n 's/^# selftest: //p' "$f")
    grep_for=$(sed -n 's/^# grep: //p' "$f")
    out=$("$bin" test "$f" 2>&1)
    rc=$?
    first=$(printf '%s\n' "$out" | head -1)
    ok=1
    case "$want" in
        ok) [ $rc -eq 0 ] && [[ "$first" == "ok "* ]] || ok=0 ;;
        FAIL) [ $rc -eq 1 ] && [[ "$first" == "FAIL $f "* ]] || ok=0 ;;
        invalid) [ $rc -eq 1 ] && [[ "$first" == "FAIL $f: invalid case"* ]] || ok=0 ;;
        SKIP) [ $rc -eq 0 ] && [[ "$first" == "SKIP "* ]] || ok=0 ;;
        *) ok=0 ;;
    esac
    if [ -n "$grep_for" ] && ! printf '%s\n' "$out" | grep -qF -- "$grep_for"; then ok=0; fi
    if [ $ok -eq 0 ]; then
        echo "SELFTEST FAIL: $f (want $want${grep_for:+, output containing '$grep_for'}; exit $rc):"
        printf '%s\n' "$out" | sed 's/^/    /'
        fails=$((fails + 1))
    fi
done

# --bless: an empty shape and wrong rows converge in two blessing runs, then the case passes.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/bless.gqt" <<'CASE'
# notes: bless target
--- runner
timeout_ms: 10000
environments:
  - target: omnigraph-engine
    storage: local-filesystem

--- schema
node Person {
    name: String @key
    age: I32?
}

--- seed
{"type":"Person","data":{"name":"ann","age":30}}
{"type":"Person","data":{"name":"bo"}}

--- query
query q() {
    match { $p: Person }
    return { $p.name, $p.age }
}

--- expect unordered
{"p.name": "nobody"}

--- expect shape

--- mutate
query m() {
    insert Person { name: "cy" }
}

--- expect affected: nodes=1 edges=0
CASE
n=$((n + 1))
"$bin" test --bless "$tmp/bless.gqt" > "$tmp/o1" 2>&1; r1=$?
"$bin" test --bless "$tmp/bless.gqt" > "$tmp/o2" 2>&1; r2=$?
"$bin" test "$tmp/bless.gqt" > "$tmp/o3" 2>&1; r3=$?
if [ $r1 -ne 1 ] || [ $r2 -ne 1 ] || [ $r3 -ne 0 ] || ! grep -q '^p.age: I32?$' "$tmp/bless.gqt" ||
   ! grep -qF '{"p.age": 30, "p.name": "ann"}' "$tmp/bless.gqt" || ! grep -qF 'nodes=1 edges=0' "$tmp/bless.gqt"; then
    echo "SELFTEST FAIL: --bless round trip (exits $r1 $r2 $r3):"
    cat "$tmp/o1" "$tmp/o2" "$tmp/o3" "$tmp/bless.gqt" | sed 's/^/    /'
    fails=$((fails + 1))
fi

# no case at all is a failure, not a green run
n=$((n + 1))
mkdir "$tmp/empty"
if "$bin" test "$tmp/empty" > /dev/null 2>&1; then
    echo "SELFTEST FAIL: an empty directory passed"
    fails=$((fails + 1))
fi

echo "gqt selftest: $((n - fails))/$n as expected"
[ $fails -eq 0 ]
