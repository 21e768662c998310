#!/usr/bin/env bash
# The `make run` job: the graph quickstart on an embedded local graph, using only files in
# this repository (examples/library: schema, seed, queries, mutations).
#   1. create a graph under ./build/demo/graph from examples/library/schema.pg,
#   2. load the seed (one NDJSON file, one commit),
#   3. run a few of the example queries and print them as tables,
#   4. change the graph on a branch, merge it, and read before and after (time travel).
# Usage: scripts/quickstart.sh [BUILD_DIR]   (the Makefile passes build/release)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin="${1:-$here/build/release}"
case "$bin" in /*) ;; *) bin="$here/$bin" ;; esac
og="$bin/omnigraph"
ex="$here/examples/library"
[ -x "$og" ] || { echo "quickstart: $og is missing (run make build)" >&2; exit 1; }
[ -f "$ex/schema.pg" ] || { echo "quickstart: $ex is missing" >&2; exit 1; }

demo="$here/build/demo"
graph="$demo/graph"
rm -rf "$graph"
mkdir -p "$demo"
q="$ex/queries.gq"
m="$ex/mutations.gq"

step() { printf '\n== %s\n$ %s\n' "$1" "$2"; }
# the commands are shown as you would type them from the repository root
g=build/demo/graph
printf 'Each step shows its command; `omnigraph` is %s (make install puts it on your PATH).\n' "$og"

step "create a graph from a .pg schema" "omnigraph init --schema examples/library/schema.pg $g"
"$og" init --schema "$ex/schema.pg" "$graph"

step "load the seed: one NDJSON file becomes one commit" \
     "omnigraph load --data examples/library/seed.jsonl --mode overwrite $g"
"$og" load --data "$ex/seed.jsonl" --mode overwrite "$graph"
first=$("$og" snapshot "$graph" | sed -n 's/.*"commit": "\([0-9A-Z]*\)".*/\1/p')

step "a lookup with parameters" \
     "omnigraph query $g --query examples/library/queries.gq books_by --params '{\"author\":\"jane-austen\"}' --format table"
"$og" query --quiet --store "$graph" --query "$q" books_by --params '{"author":"jane-austen"}' --format table

step "a traversal with aggregation" "omnigraph query $g --query examples/library/queries.gq loans_per_member --format table"
"$og" query --quiet --store "$graph" --query "$q" loans_per_member --format table

step "negation: books nobody has borrowed" \
     "omnigraph query $g --format table -e 'query idle() { match { \$b: Book  not { \$m borrowed \$b } } return { \$b.name, \$b.year } order { \$b.year } }'"
"$og" query --quiet --store "$graph" --format table -e '
query idle() {
    match { $b: Book  not { $m borrowed $b } }
    return { $b.name, $b.year }
    order { $b.year }
}'

step "a change on a branch, merged into main" \
     "omnigraph branch create --from main returns $g
  omnigraph mutate $g --branch returns --query examples/library/mutations.gq return_all --params '{\"card\":\"C-001\"}'
  omnigraph branch merge returns --into main $g"
"$og" branch create --store "$graph" --from main returns
"$og" mutate --store "$graph" --branch returns --query "$m" return_all --params '{"card":"C-001"}'
"$og" branch merge --store "$graph" returns --into main

step "time travel: the same query at the load's commit and at the head" \
     "omnigraph query $g --at $first --query examples/library/queries.gq loans_per_member --format table   (then without --at)"
"$og" query --quiet --store "$graph" --at "$first" --query "$q" loans_per_member --format table
"$og" query --quiet --store "$graph" --query "$q" loans_per_member --format table

printf '\nThe graph is in %s; try:\n  %s query --store %s --query %s genre_stats --format table\n' \
       "$graph" "$og" "$graph" "$q"
