#!/usr/bin/env bash
# test-served.sh — `omnigraph test --server URL [--graph ID --yes]` (docs/testing.md "Against
# a server"): logic cases of tests/logic run against omnigraph-server give the same verdicts
# as embedded — every case that passes embedded passes served, none fails — each case on a
# fresh graph the runner creates through POST /graphs (the server runs with --graph-dir) and
# deletes after it; a planted wrong expectation fails served as it does embedded.  With
# --graph ID the scratch graph is reset per case (branches, schema, data) instead.  A server
# that does not create graphs is reported with the fix; the flags' misuse is refused with
# exit 2 and nothing sent.
# Usage: test-served.sh SOURCE_DIR OMNIGRAPH OMNIGRAPH_SERVER
set -uo pipefail
src=${1:?usage: test-served.sh SOURCE_DIR OMNIGRAPH OMNIGRAPH_SERVER}
og=${2:?usage}
srv=${3:?usage}
d=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }; rm -rf "$d"; }
trap cleanup EXIT
export HOME=$d/home OMNIGRAPH_HOME=$d/home/.omnigraph TMPDIR=$d
unset OMNIGRAPH_STORE OMNIGRAPH_PROFILE OMNIGRAPH_BEARER_TOKEN
mkdir -p "$HOME"
fail=0
bad() { echo "FAIL: $*" >&2; fail=1; }

printf 'node Boot {\n  id: String @key\n}\n' > "$d/boot.pg"
"$og" init --schema "$d/boot.pg" --quiet "$d/scratch" > /dev/null || { echo "FAIL: init" >&2; exit 1; }
mkdir -p "$d/made"
"$srv" --graph scratch="$d/scratch" --graph-dir "$d/made" --unauthenticated --bind 127.0.0.1:0 > "$d/srv.out" 2> "$d/srv.err" &
pid=$!
for _ in $(seq 100); do grep -q OMNIGRAPH_LISTEN_ADDR "$d/srv.out" && break; sleep 0.1; done
url="http://$(sed -n 's/^OMNIGRAPH_LISTEN_ADDR=//p' "$d/srv.out")"
[ "$url" != "http://" ] || { cat "$d/srv.err" >&2; echo "FAIL: the server did not start" >&2; exit 1; }

# 1. the same verdicts: cases with queries, mutations, branches, merges, loads, errors
# (a sample, to keep the machine time small: the whole corpus runs served the same way)
dirs=(format errors edges refusals mutation_where subpattern distinct branch:merge mutation:insert_edge)
for entry in "${dirs[@]}"; do
  sub=${entry%%:*}
  k=(); [ "$entry" = "$sub" ] || k=(-k "${entry#*:}")
  "$og" test -q "${k[@]}" "$src/tests/logic/$sub" > "$d/emb.txt" 2>&1
  "$og" test -q "${k[@]}" --server "$url" "$src/tests/logic/$sub" > "$d/srv.txt" 2>&1
  src_rc=$?
  grep -E '^[0-9]+ case' "$d/emb.txt" > /dev/null || bad "$sub: no embedded summary"
  # a FAIL served that passed embedded is a difference; SKIP lines (a restart) are allowed
  grep '^FAIL' "$d/emb.txt" | awk '{print $2}' | sort > "$d/emb.fail"
  grep '^FAIL' "$d/srv.txt" | awk '{print $2}' | sort > "$d/srv.fail"
  if ! diff -u "$d/emb.fail" "$d/srv.fail" > /dev/null; then
    bad "$sub: served verdicts differ from embedded"
    cat "$d/srv.txt" >&2
  fi
  passed=$(sed -nE 's/^[0-9]+ case\(s\): ([0-9]+) passed.*/\1/p' "$d/srv.txt")
  [ "${passed:-0}" -gt 0 ] || bad "$sub: no case passed served ($(tail -1 "$d/srv.txt"))"
  [ -s "$d/emb.fail" ] || [ "$src_rc" = 0 ] || bad "$sub: served exit $src_rc with no failure"
done

# 2. a wrong expectation fails served, with the diff
mkdir -p "$d/wrong"
cat > "$d/wrong/wrong.gqt" <<'EOF2'
--- runner
timeout_ms: 10000
environments:
  - target: omnigraph-engine
    storage: local-filesystem

--- schema
node P {
    name: String @key
}

--- seed
{"type":"P","data":{"name":"a"}}

--- query
query q() { match { $p: P } return { $p.name } }

--- expect shape
p.name: String

--- expect unordered
{"p.name": "b"}

--- mutate
query m() { insert Q { name: "x" } }

--- expect error: unknown node/edge type
EOF2
"$og" test --server "$url" --graph scratch --yes "$d/wrong" > "$d/w.txt" 2>&1
[ $? = 1 ] || bad "a wrong expectation did not fail served"
grep -q '^FAIL' "$d/w.txt" && grep -q -- '- {"p.name": "b"}' "$d/w.txt" && grep -q -- '+ {"p.name": "a"}' "$d/w.txt" ||
  { bad "the served failure has no row diff"; cat "$d/w.txt" >&2; }

# 2b. a case whose only environment is the server target: skipped embedded, run served
mkdir -p "$d/srvonly"
sed -e 's/target: omnigraph-engine/target: omnigraph-server/' -e 's/{"p.name": "b"}/{"p.name": "a"}/' \
  "$d/wrong/wrong.gqt" > "$d/srvonly/server_only.gqt"
"$og" test "$d/srvonly" > "$d/so1.txt" 2>&1
grep -q '^SKIP.*omnigraph test --server' "$d/so1.txt" || { bad "a server-only case was not skipped embedded"; cat "$d/so1.txt" >&2; }
"$og" test --server "$url" --graph scratch --yes "$d/srvonly" > "$d/so2.txt" 2>&1 ||
  { bad "a server-only case did not pass served"; cat "$d/so2.txt" >&2; }
grep -q '^ok ' "$d/so2.txt" || bad "a server-only case did not run served"

# 3. no leftovers between cases: the graph holds the last case's schema and its seed only
"$og" test -q -k merge --server "$url" --graph scratch --yes "$src/tests/logic/branch" > /dev/null 2>&1
"$og" branch list --server "$url" --graph scratch > "$d/br.txt" 2>&1
"$og" test -q --server "$url" --graph scratch --yes "$d/wrong" > /dev/null 2>&1
"$og" branch list --server "$url" --graph scratch > "$d/br2.txt" 2>&1
[ "$(grep -c . "$d/br2.txt")" -le 2 ] || { bad "branches of an earlier case survived the reset"; cat "$d/br2.txt" >&2; }
"$og" query --server "$url" --graph scratch -e 'query q() { match { $p: P } return { $p.name } }' --format csv \
  > "$d/rows.csv" 2>&1
[ "$(tr -d '\r' < "$d/rows.csv")" = "$(printf 'p.name\na')" ] ||
  { bad "the reset graph does not hold exactly the case's seed"; cat "$d/rows.csv" >&2; }

# 4. misuse: refused (exit 2) before any request
"$og" test --server "$url" --graph scratch "$d/wrong" > /dev/null 2> "$d/e1"; [ $? = 2 ] || bad "no --yes: not refused"
grep -q 'without --yes' "$d/e1" || bad "no --yes: the refusal does not say why"
"$og" test --graph scratch --yes "$d/wrong" > /dev/null 2> "$d/e3"; [ $? = 2 ] || bad "--graph alone: not refused"
"$og" test --server "$url" --graph scratch --yes --bless "$d/wrong" > /dev/null 2> "$d/e4"; [ $? = 2 ] || bad "--bless served: not refused"

# 5. fresh graphs: the wrong case fails the same way on a graph of its own; no created graph
# is left behind (listed or on disk), except the one --keep keeps and names
"$og" test --server "$url" "$d/wrong" > "$d/f.txt" 2>&1
[ $? = 1 ] && grep -q -- '- {"p.name": "b"}' "$d/f.txt" || { bad "a wrong expectation on a fresh graph"; cat "$d/f.txt" >&2; }
[ -z "$(ls -A "$d/made")" ] || bad "created graphs left on disk: $(ls "$d/made")"
"$og" graphs list --server "$url" > "$d/gl.txt" 2>&1
[ "$(awk '{print $1}' "$d/gl.txt" | tr '\n' ' ')" = "scratch " ] || bad "created graphs still served: $(cat "$d/gl.txt")"
"$og" test --keep --server "$url" "$d/wrong" > "$d/k.txt" 2>&1
kept=$(sed -nE 's/.*kept the served graph (gqt-[0-9]+-[0-9]+).*/\1/p' "$d/k.txt")
[ -n "$kept" ] && [ -d "$d/made/$kept" ] || { bad "--keep did not keep the served graph"; cat "$d/k.txt" >&2; }
"$og" query --server "$url" --graph "$kept" -e 'query q() { match { $p: P } return { $p.name } }' --format csv > "$d/kq.csv" 2>&1
[ "$(tr -d '\r' < "$d/kq.csv")" = "$(printf 'p.name\na')" ] || bad "the kept graph does not hold the case's seed: $(cat "$d/kq.csv")"
# a server without --graph-dir: each case's setup says how to proceed
"$srv" --graph scratch="$d/scratch" --unauthenticated --bind 127.0.0.1:0 > "$d/srv2.out" 2> "$d/srv2.err" &
pid2=$!
for _ in $(seq 100); do grep -q OMNIGRAPH_LISTEN_ADDR "$d/srv2.out" && break; sleep 0.1; done
url2="http://$(sed -n 's/^OMNIGRAPH_LISTEN_ADDR=//p' "$d/srv2.out")"
"$og" test --server "$url2" "$d/wrong" > "$d/nd.txt" 2>&1; rc=$?
kill "$pid2"; wait "$pid2" 2>/dev/null
[ $rc = 1 ] && grep -q 'unsupported: this server does not create or delete graphs.*--graph-dir' "$d/nd.txt" ||
  { bad "a server without --graph-dir: exit $rc"; cat "$d/nd.txt" >&2; }

[ $fail = 0 ] && echo "test-served: ok"
exit $fail
