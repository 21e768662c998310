#!/usr/bin/env bash
# examples-run.sh — examples/library works as shipped: the schema inits, the seed loads, every
# query of queries.gq returns rows and every mutation of mutations.gq publishes a commit, with
# the parameters below.  A query or mutation added to the files without a line here fails the
# test, so the examples cannot rot.
# Usage: examples-run.sh SOURCE_DIR OMNIGRAPH_BINARY
set -euo pipefail
src=${1:?usage: examples-run.sh SOURCE_DIR OMNIGRAPH} og=${2:?usage: examples-run.sh SOURCE_DIR OMNIGRAPH}
ex="$src/examples/library"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
g="$d/g"
"$og" init --quiet --schema "$ex/schema.pg" "$g" > /dev/null
"$og" load --quiet --data "$ex/seed.jsonl" --mode overwrite "$g"

# NAME PARAMS (JSON), in file order; every read must return at least one row
reads='book {"isbn":"9780000000011"}
books_by_genre {"genre":"fiction"}
books_by {"author":"jane-austen"}
authors_read_by {"card":"C-001"}
cited_by {"isbn":"9780000000080"}
never_borrowed {}
loans_per_member {}
genre_stats {}
due_before {"day":"2024-04-05"}
tagged {"tag":"classic"}
authors_starting {"prefix":"J"}
recent {}
recommendations {}
out_of_print_or_unrated {"genres":["essay","poetry"]}
book_card {"isbn":"9780000000011"}
related {"isbn":"9780000000097"}
blurb_search {"q":"scientist creature"}
blurb_fuzzy {"q":"scientst builds"}
similar {"v":[0.9,0.1,0.2]}
hybrid {"v":[0.9,0.1,0.2],"q":"marriage"}'
# NAME PARAMS, run in this order; each must affect something and publish one commit
writes='add_member {"card":"C-900","name":"Noor Haddad","email":"noor@example.org","joined":"2024-05-01"}
add_book {"isbn":"9780000000998","name":"Kindred","year":1979,"genre":"science-fiction","added":"2024-05-02T10:00:00Z"}
borrow {"card":"C-900","isbn":"9780000000998","since":"2024-05-03","due":"2024-05-31"}
recommend {"card":"C-900","isbn":"9780000000998","stars":5}
set_rating {"isbn":"9780000000998","rating":4.7}
out_of_print {"isbn":"9780000000998"}
return_all {"card":"C-900"}
remove_member {"card":"C-900"}'

bad=0
names() { grep -oE '^query [A-Za-z_][A-Za-z0-9_]*' "$1" | awk '{ print $2 }'; }
[ "$(names "$ex/queries.gq")" = "$(awk '{ print $1 }' <<<"$reads")" ] ||
  { echo "examples/library/queries.gq and this test's list differ:" >&2; diff <(names "$ex/queries.gq") <(awk '{ print $1 }' <<<"$reads") >&2; bad=1; }
[ "$(names "$ex/mutations.gq")" = "$(awk '{ print $1 }' <<<"$writes")" ] ||
  { echo "examples/library/mutations.gq and this test's list differ:" >&2; diff <(names "$ex/mutations.gq") <(awk '{ print $1 }' <<<"$writes") >&2; bad=1; }
while read -r name params; do
  out=$("$og" query --quiet "$g" --query "$ex/queries.gq" "$name" --params "$params" --format jsonl 2>&1) ||
    { echo "query $name failed: $out" >&2; bad=1; continue; }
  [ "$(wc -l <<<"$out")" -ge 2 ] || { echo "query $name returned no rows" >&2; bad=1; }
done <<<"$reads"
# a whole node (`return { $b }`) spells its reals as every other column does: F32 4.1, not 4.0999999999999996
card=$("$og" query --quiet "$g" --query "$ex/queries.gq" book_card --params '{"isbn":"9780000000011"}' --format csv)
grep -q '""rating"":4.1,' <<<"$card" && ! grep -q '4\.0999' <<<"$card" ||
  { echo "book_card spells the F32 rating 4.1 otherwise: $card" >&2; bad=1; }
while read -r name params; do
  before=$("$og" commit list --limit 1 --format csv "$g" | tail -1)
  out=$("$og" mutate --quiet "$g" --query "$ex/mutations.gq" "$name" --params "$params" --json 2>&1) ||
    { echo "mutation $name failed: $out" >&2; bad=1; continue; }
  after=$("$og" commit list --limit 1 --format csv "$g" | tail -1)
  [ "$before" != "$after" ] || { echo "mutation $name published nothing: $out" >&2; bad=1; }
  if [ "$name" = set_rating ]; then # the change feed spells reals as the rows do
    for f in "changes --from main~1 --to main --format jsonl" "commit changes main --json" "changes --from main~1 --to main --format csv"; do
      ch=$("$og" $f "$g")
      grep -q '"rating": *4.7\b\|""rating"":4.7\b' <<<"$ch" && ! grep -qE '[0-9]\.[0-9]*0000000' <<<"$ch" ||
        { echo "omnigraph $f spells the F32 4.7 otherwise: $ch" >&2; bad=1; }
    done
  fi
done <<<"$writes"
[ "$bad" = 0 ] && echo "examples/library: $(wc -l <<<"$reads") queries and $(wc -l <<<"$writes") mutations run as shipped"
exit "$bad"
