#!/usr/bin/env bash
# cluster-graph-verbs.sh — `--cluster DIR --graph ID` on the graph verbs (docs/cli.md "Graph
# verbs"): the README's cluster walk-through runs as printed (on a copy of examples/cluster),
# its load puts the seed where `queries run` reads it, and what the walk-through writes is
# ignored by git (examples/cluster/.gitignore); the same graph answers --cluster and --store
# alike; misuse is refused with its reason.
# Usage: cluster-graph-verbs.sh SOURCE_DIR OMNIGRAPH
set -uo pipefail
src=${1:?usage: cluster-graph-verbs.sh SOURCE_DIR OMNIGRAPH}
og=${2:?usage: cluster-graph-verbs.sh SOURCE_DIR OMNIGRAPH}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
export HOME=$d/home OMNIGRAPH_HOME=$d/home/.omnigraph
unset OMNIGRAPH_STORE OMNIGRAPH_PROFILE
mkdir -p "$HOME" "$d/bin"
ln -s "$(cd "$(dirname "$og")" && pwd)/$(basename "$og")" "$d/bin/omnigraph"
fail=0
bad() { echo "FAIL: $*" >&2; fail=1; }

# 1. the README's walk-through, its omnigraph lines as printed, on a copy of the example
cp -r "$src/examples/cluster" "$d/ex"
sed -n '/^    omnigraph cluster import --config examples\/cluster/,/^    omnigraph queries run/p' "$src/README.md" |
  sed -e 's/^    //' -e "s#examples/cluster#$d/ex#g" > "$d/walk.sh"
grep -q '^omnigraph load --cluster' "$d/walk.sh" || bad "the README walk-through does not load the seed"
(cd "$d" && PATH="$d/bin:$PATH" bash -e "$d/walk.sh") > "$d/walk.out" 2> "$d/walk.err" || { bad "the walk-through failed"; cat "$d/walk.err" >&2; }
grep -q '"p.name": "Grace"' "$d/walk.out" || { bad "queries run adults does not see the seed"; tail -20 "$d/walk.out" >&2; }
for f in $(cd "$d/ex" && ls -A); do
  [ -e "$src/examples/cluster/$f" ] && continue
  grep -qx "$f/\?" "$src/examples/cluster/.gitignore" || bad "the walk-through writes $f, which git does not ignore"
done

# 2. --cluster DIR --graph ID is the graph's root: the same answers as --store
root=$(ls -d "$d/ex/graphs/"*)
Q='query q() { match { $p: Person } return { $p.name } order { $p.name asc } }'
"$og" query -e "$Q" --format csv --cluster "$d/ex" --graph people > "$d/c.csv" || bad "query --cluster failed"
"$og" query -e "$Q" --format csv --store "$root" > "$d/s.csv" || bad "query --store failed"
cmp -s "$d/c.csv" "$d/s.csv" && [ -s "$d/c.csv" ] || bad "--cluster and --store answer differently"
"$og" query -e "$Q" --format csv --cluster "$d/ex" > "$d/c1.csv" || bad "--cluster with one graph needs no --graph"
"$og" branch create b1 --cluster "$d/ex" --graph people --quiet || bad "branch create --cluster failed"
"$og" branch list --cluster "$d/ex" --graph people | grep -q b1 || bad "branch list --cluster misses b1"
"$og" snapshot --json --cluster "$d/ex" --graph people > /dev/null || bad "snapshot --cluster failed"

# a cluster named in config.yaml, through --cluster NAME and through a profile
mkdir -p "$OMNIGRAPH_HOME"
cat > "$OMNIGRAPH_HOME/config.yaml" <<EOF2
clusters:
  demo:
    root: $d/ex
profiles:
  ppl: {cluster: demo, default_graph: people}
EOF2
"$og" query -e "$Q" --format csv --cluster demo --graph people > "$d/n.csv" 2> "$d/n.err" || { bad "--cluster NAME failed"; cat "$d/n.err" >&2; }
cmp -s "$d/n.csv" "$d/s.csv" || bad "--cluster NAME answers differently"
"$og" query -e "$Q" --format csv --profile ppl > "$d/p.csv" 2> "$d/p.err" || { bad "a cluster profile failed"; cat "$d/p.err" >&2; }
cmp -s "$d/p.csv" "$d/s.csv" || bad "a cluster profile answers differently"
rm "$OMNIGRAPH_HOME/config.yaml"

# 3. misuse
"$og" query -e "$Q" --cluster "$d/ex" --graph nope > /dev/null 2> "$d/e1"; rc=$?
[ $rc = 1 ] && grep -q "not_found: graph 'nope'.*applied graphs: people" "$d/e1" || { bad "unknown graph: exit $rc"; cat "$d/e1" >&2; }
"$og" query -e "$Q" --cluster "$d/ex" --store "$root" > /dev/null 2> "$d/e2"; rc=$?
[ $rc = 2 ] && grep -q 'excludes --store' "$d/e2" || bad "--cluster with --store: exit $rc"
"$og" query -e "$Q" --cluster "$d/ex" --server http://127.0.0.1:9 > /dev/null 2> "$d/e3"; rc=$?
[ $rc = 2 ] && grep -q 'excludes --server' "$d/e3" || bad "--cluster with --server: exit $rc"
"$og" query -e "$Q" --cluster "$d/nowhere" > /dev/null 2> "$d/e4"; rc=$?
[ $rc = 1 ] && grep -q 'cluster' "$d/e4" || { bad "a missing cluster: exit $rc"; cat "$d/e4" >&2; }

[ $fail = 0 ] && echo "cluster-graph-verbs: ok"
exit $fail
