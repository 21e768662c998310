#!/usr/bin/env bash
# bench/search/fresh_run.sh — search as a new user meets it (issue 35; docs/benchmarks.md "Search
# defaults"): one `omnigraph query` process per call, right after `omnigraph load` (which now
# indexes what it loaded), after `load --no-index` (the former behaviour) and after `optimize`,
# against a key lookup in a fresh process, and SQLite FTS5 (python3's sqlite3: the first MATCH of
# a new connection, a new process each time) for scale.  Data: bench_hybrid.c gen (DOCS
# documents: a Zipf text body, a 64-d vector clustered by topic).  Per workload the median wall
# time of RUNS fresh processes; recall@10 of nearest at the defaults against --exact over the
# same RUNS queries.  Writes $OUT/fresh.tsv and, with gnuplot, $OUT/fresh.svg.
# Usage: bench/search/fresh_run.sh [BUILD_DIR]   env: DOCS (100000), RUNS (20), OUT
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin="${1:-$here/build/release}"
case "$bin" in /*) ;; *) bin="$here/$bin" ;; esac
docs="${DOCS:-100000}"
runs="${RUNS:-20}"
og="$bin/omnigraph"
[ -x "$og" ] && [ -f "$bin/libomnigraph.a" ] || { echo "bench/search/fresh: build first (make build)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/og-fresh-bench-XXXXXX")
trap 'rm -rf "$work"' EXIT
out="${OUT:-${TMPDIR:-/tmp}/og-fresh-bench}"
mkdir -p "$out"
cc -O2 -std=c11 -o "$work/bench_hybrid" "$here/bench/search/bench_hybrid.c" -I"$here/include" \
  "$bin/libomnigraph.a" $(pkg-config --libs jansson libcurl openssl libzstd liblz4 libpcre2-8 libutf8proc yaml-0.1 icu-uc icu-i18n) \
  -lroaring -lstemmer -lstdc++ -lm -lpthread
"$work/bench_hybrid" gen "$work" "$docs" >&2
grep '"type":"Doc"' "$work/data.ndjson" >"$work/docs.ndjson"
cat >"$work/s.pg" <<'PG'
node Doc { slug: String @key  year: I32  body: String @index  emb: Vector(64) @index }
PG
cat >"$work/q.gq" <<'GQ'
query lookup($s: String) { match { $d: Doc { slug: $s } } return { $d.slug, $d.year } }
query text($q: String) { match { $d: Doc } return { $d.slug, bm25($d.body, $q) as s } order { bm25($d.body, $q) } limit 10 }
query knn($v: Vector(64)) { match { $d: Doc } return { $d.slug } order { nearest($d.emb, $v) } limit 10 }
GQ
# CPU time (user + system) of the process, in µs: on a shared machine wall time mostly measures the
# neighbours (WALL=1 for wall time instead)
ms() {
  if [ "${WALL:-0}" = 1 ]; then local t0 t1; t0=$(date +%s%N); "$@" >/dev/null; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000 )); return; fi
  local TIMEFORMAT='%3U %3S'; { time "$@" >/dev/null 2>&1; } 2>&1 | awk '{printf "%d\n", ($1 + $2) * 1e6}'
}
median() { sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]/1000}'; }
secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N); awk "BEGIN{printf \"%.1f\", $t1-$t0}"; }
head -"$runs" "$work/queries.tsv" >"$work/qs.tsv"

measure() { # graph label -> one tsv line: label lookup bm25 nearest recall
  local g=$1 label=$2 l=() b=() n=() hit=0 tot=0 tag y text vec
  while IFS=$'\t' read -r tag y text vec; do
    local i=$(( ${#l[@]} * 97 % docs ))
    l+=("$(ms "$og" query --query "$work/q.gq" lookup --params "{\"s\":\"d$i\"}" "$g")")
    b+=("$(ms "$og" query --query "$work/q.gq" text --params "{\"q\":\"$text\"}" "$g")")
    n+=("$(ms "$og" query --query "$work/q.gq" knn --params "{\"v\":[$vec]}" "$g")")
    local a e
    a=$("$og" query --format csv --query "$work/q.gq" knn --params "{\"v\":[$vec]}" "$g" | tail -n +2 | sort)
    e=$("$og" query --exact --format csv --query "$work/q.gq" knn --params "{\"v\":[$vec]}" "$g" | tail -n +2 | sort)
    hit=$(( hit + $(comm -12 <(echo "$a") <(echo "$e") | wc -l) )); tot=$(( tot + 10 ))
  done <"$work/qs.tsv"
  printf '%s\t%s\t%s\t%s\t%s\n' "$label" "$(printf '%s\n' "${l[@]}" | median)" "$(printf '%s\n' "${b[@]}" | median)" \
    "$(printf '%s\n' "${n[@]}" | median)" "$(awk "BEGIN{printf \"%.3f\", $hit/$tot}")"
}

printf 'state\tlookup_ms\tbm25_ms\tnearest_ms\trecall10\n' >"$out/fresh.tsv"
"$og" init --schema "$work/s.pg" "$work/noidx" --quiet >/dev/null
t_noidx=$(secs "$og" load --no-index --mode overwrite --data "$work/docs.ndjson" "$work/noidx" --quiet)
measure "$work/noidx" "load --no-index (before)" >>"$out/fresh.tsv"
rm -rf "$work/noidx"
"$og" init --schema "$work/s.pg" "$work/g" --quiet >/dev/null
t_load=$(secs "$og" load --mode overwrite --data "$work/docs.ndjson" "$work/g" --quiet)
measure "$work/g" "after load" >>"$out/fresh.tsv"
t_opt=$(secs "$og" optimize "$work/g" --quiet)
measure "$work/g" "after optimize" >>"$out/fresh.tsv"
# SQLite FTS5, same texts, a new process per query (python3 start + connect + first MATCH)
python3 - "$work/docs.ndjson" "$work/fts.db" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[2])
db.execute("create virtual table d using fts5(slug unindexed, body, tokenize='porter unicode61')")
with open(sys.argv[1]) as f:
    db.executemany("insert into d values (?, ?)", ((r["data"]["slug"], r["data"]["body"]) for r in map(json.loads, f)))
db.commit()
PY
f=()
while IFS=$'\t' read -r tag y text vec; do
  f+=("$(ms python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"select slug from d where d match ? order by bm25(d) limit 10\", (' OR '.join(sys.argv[2].split()),)).fetchall()" "$work/fts.db" "$text")")
done <"$work/qs.tsv"
p=()
for i in $(seq "$runs"); do p+=("$(ms python3 -c "import sqlite3")"); done
printf 'sqlite3 fts5 (python3 process)\t-\t%s\t-\t-\n' "$(printf '%s\n' "${f[@]}" | median)" >>"$out/fresh.tsv"
printf 'python3 -c "import sqlite3" alone\t-\t%s\t-\t-\n' "$(printf '%s\n' "${p[@]}" | median)" >>"$out/fresh.tsv"
echo
echo "search in fresh processes ($docs documents, median of $runs, $([ "${WALL:-0}" = 1 ] && echo wall || echo CPU) ms; load ${t_load}s with indexing, ${t_noidx}s with --no-index; optimize ${t_opt}s)"
column -t -s $'\t' "$out/fresh.tsv"
if command -v gnuplot >/dev/null; then
  gnuplot <<GP
set terminal svg size 760,360 font "sans,11"
set output "$out/fresh.svg"
set title "one process per call, $docs docs, median ms (lower is better)"
set datafile separator "\t"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel "ms"
set logscale y
set key top right
plot "$out/fresh.tsv" every ::1::3 using 2:xtic(1) title "key lookup", '' every ::1::3 using 3 title "bm25 top 10", '' every ::1::3 using 4 title "nearest top 10"
GP
  echo "chart: $out/fresh.svg"
fi
echo "results: $out"
