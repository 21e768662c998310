#!/usr/bin/env bash
# The `make run` job: the graph quickstart on an embedded local graph.
#   1. create a graph under ./build/demo/graph from the cookbook schema (shared/data),
#   2. load the cookbook seed (one NDJSON file, one commit),
#   3. run a few of the cookbook's own queries and print them as tables,
#   4. run a mutation, and read the graph before and after it (time travel).
# Usage: scripts/quickstart.sh BUILD_DIR   (the Makefile passes build/release)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin="${1:-$here/build/release}"
case "$bin" in /*) ;; *) bin="$here/$bin" ;; esac
og="$bin/omnigraph"
data="$here/../shared/data/cookbook-industry-intel"
[ -x "$og" ] || { echo "quickstart: $og is missing (run make build)" >&2; exit 1; }
[ -d "$data" ] || { echo "quickstart: $data is missing" >&2; exit 1; }

demo="$here/build/demo"
graph="$demo/graph"
rm -rf "$graph"
mkdir -p "$demo"

step() { printf '\n== %s\n$ %s\n' "$1" "$2"; }

step "create a graph from a .pg schema" "omnigraph init --schema schema.pg $graph"
"$og" init --quiet --schema "$data/schema.pg" "$graph"

step "load the seed: one NDJSON file becomes one commit" "omnigraph load --data seed.jsonl --mode overwrite $graph"
"$og" load --quiet --data "$data/seed.jsonl" --mode overwrite "$graph"
snap=$("$og" snapshot "$graph")
first=$(printf '%s\n' "$snap" | sed -n 's/.*"commit": "\([0-9A-Z]*\)".*/\1/p')

step "a lookup with parameters" "omnigraph query --query elements.gq elements_by_kind --params '{\"kind\":\"technology\"}'"
"$og" query --store "$graph" --query "$data/queries/elements.gq" elements_by_kind --params '{"kind":"technology"}' --format table

step "a traversal with aggregation" "omnigraph query -e '...'"
"$og" query --store "$graph" --format table -e '
query signals_per_pattern() {
    match { $s: Signal  $s formsPattern $p }
    return { $p.name, count($s) as signals }
    order { signals desc, $p.name }
}'

step "negation: elements nothing depends on" "omnigraph query -e '...'"
"$og" query --store "$graph" --format table -e '
query unused() {
    match { $e: Element  not { $x usesElement $e } }
    return { $e.slug, $e.name }
    order { $e.slug }
    limit 5
}'

step "a mutation publishes one more commit" "omnigraph mutate -e 'update Element ...'"
"$og" mutate --store "$graph" -e '
query rename($slug: String, $name: String) { update Element set { name: $name } where slug = $slug }' \
  --params '{"slug":"el-mcp","name":"Model Context Protocol"}'

step "time travel: the same query at the load's commit and at the head" "omnigraph query --at $first ..."
q='query one($s: String) { match { $e: Element { slug: $s } } return { $e.slug, $e.name } }'
"$og" query --store "$graph" --at "$first" -e "$q" --params '{"s":"el-mcp"}' --format table
"$og" query --store "$graph" -e "$q" --params '{"s":"el-mcp"}' --format table

printf '\nThe graph is in %s; try: %s query --store %s -e "..."\n' "$graph" "$og" "$graph"
