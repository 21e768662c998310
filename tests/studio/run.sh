#!/usr/bin/env bash
# OmniGraph Studio in a real browser (docs/studio.md): serves a copy of the quickstart graph
# (examples/library) with tokens and a policy, then drives Debian's chromium through
# puppeteer-core (studio.test.mjs): sign in, run, table, graph view, branches, time travel, a
# denied write, lint as you type, a diff, a merge conflict, the search playground, keyboard-only
# use, no request leaving the origin; then a token that may not list graphs (the
# graph id typed) and an --unauthenticated server (no sign-in).
# Usage: run.sh BUILD_DIR   (omnigraph and omnigraph-server in it).  Screenshots go to
# $OG_STUDIO_SHOTS when set (docs/studio/ to refresh the documentation's pictures).
# Exit 77 (reported as skipped) when chromium or the npm packages are missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${1:?usage: run.sh BUILD_DIR}
chromium=${OG_CHROMIUM:-$(command -v chromium || true)}
if [ -z "$chromium" ]; then echo "SKIP: chromium is not installed (scripts/install-deps.sh)"; exit 77; fi
if [ ! -d "$here/node_modules/puppeteer-core" ]; then echo "SKIP: run npm ci in tests/studio (scripts/install-deps.sh)"; exit 77; fi

work=$(mktemp -d)
pids=()
# start_server runs in $(...), a subshell: its pids+=() never reaches this shell, so it also
# notes its server's pid in $work/pids for this to stop
cleanup() {
  local all=("${pids[@]}" $(cat "$work/pids" 2>/dev/null))
  for p in "${all[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${all[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

og="$bin/omnigraph"
ex="$root/examples/library"
"$og" init --schema "$ex/schema.pg" "$work/g" >/dev/null
"$og" load --data "$ex/seed.jsonl" --mode overwrite "$work/g" >/dev/null
"$og" branch create --store "$work/g" --from main returns >/dev/null
"$og" branch create --store "$work/g" --from main feature >/dev/null
"$og" mutate --store "$work/g" --branch returns --query "$ex/mutations.gq" return_all --params '{"card":"C-001"}' >/dev/null
# a merge conflict to show: Frankenstein's page count changed differently on edits and feature
cat > "$work/pages.gq" <<'GQ'
query set_pages($isbn: String, $pages: U32) { update Book set { pages: $pages } where isbn = $isbn }
GQ
"$og" branch create --store "$work/g" --from main edits >/dev/null
"$og" mutate --store "$work/g" --branch edits --query "$work/pages.gq" set_pages --params '{"isbn":"9780000000011","pages":300}' >/dev/null
"$og" mutate --store "$work/g" --branch feature --query "$work/pages.gq" set_pages --params '{"isbn":"9780000000011","pages":310}' >/dev/null

# alice reads everything and writes only unprotected branches (main is protected)
cat > "$work/graph.policy.yaml" <<'YAML'
version: 1
groups:
  team: [alice]
protected_branches: [main]
rules:
  - id: team-read
    allow: { actors: { group: team }, actions: [read, export] }
  - id: team-write-unprotected
    allow: { actors: { group: team }, actions: [change], branch_scope: unprotected }
  - id: team-merge-unprotected
    allow: { actors: { group: team }, actions: [branch_merge], target_branch_scope: unprotected }
YAML
cat > "$work/server.policy.yaml" <<'YAML'
version: 1
groups:
  team: [alice]
rules:
  - id: team-list-graphs
    allow: { actors: { group: team }, actions: [graph_list] }
YAML

# start_server OUTFILE ARGS...: prints the server's address
start_server() {
  local out=$1; shift
  "$bin/omnigraph-server" --bind 127.0.0.1:0 "$@" >"$out" 2>"$out.log" &
  pids+=($!)
  echo $! >> "$work/pids"
  for _ in $(seq 1 100); do
    addr=$(sed -n 's/^OMNIGRAPH_LISTEN_ADDR=//p' "$out" 2>/dev/null || true) # not yet opened: retry
    [ -n "$addr" ] && { echo "$addr"; return 0; }
    sleep 0.1
  done
  echo "studio: the server did not start" >&2; cat "$out.log" >&2; return 1
}

addr=$(OMNIGRAPH_SERVER_BEARER_TOKENS_JSON='{"alice":"alice-secret"}' start_server "$work/auth.out" \
  --graph "library=$work/g" --policy "$work/graph.policy.yaml" --server-policy "$work/server.policy.yaml")
open_addr=$(start_server "$work/open.out" --graph "library=$work/g" --unauthenticated)
# tokens without a policy: reads only, and graphs cannot be listed (docs/server.md "Runtime states")
deny_addr=$(OMNIGRAPH_SERVER_BEARER_TOKENS_JSON='{"bob":"bob-secret"}' start_server "$work/deny.out" --graph "library=$work/g")

# screenshots: a relative directory is taken from where run.sh was started
if [ -n "${OG_STUDIO_SHOTS:-}" ]; then
  case "$OG_STUDIO_SHOTS" in /*) ;; *) OG_STUDIO_SHOTS="$PWD/$OG_STUDIO_SHOTS" ;; esac
  export OG_STUDIO_SHOTS
fi
cd "$here"
OG_STUDIO_URL="http://$addr" OG_STUDIO_OPEN_URL="http://$open_addr" OG_STUDIO_TOKEN=alice-secret \
  OG_STUDIO_DENY_URL="http://$deny_addr" OG_STUDIO_DENY_TOKEN=bob-secret \
  OG_CHROMIUM="$chromium" node --test --test-concurrency=1 studio.test.mjs
