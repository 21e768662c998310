#!/usr/bin/env bash
# The fleet benchmark (issue 30): N agents (AGENTS, default "16 64 256") at once through one
# omnigraph-server, each on its own branch — branch create, four one-row inserts, an update
# by key, a merge into main (bench/fleet/agents.py) — on a local disk and on the counting
# "remote" store (a local directory read and written as S3 is, every request delayed
# LATENCY_MS, default 2 ms: src/store/store_count.h).  Reports ops/s, p50/p99 write latency
# and object-store requests per logical operation, for this build and for the previous
# release (BASE, default bd7fa44) built in the same run, and their ratios.
#
# The baseline is BASE's source with this tree's counting adapter (src/store/store_count.*)
# copied in, so that both count requests the same way; it is built once into
# ${BASE_DIR:-/tmp/og-fleet-base-BASE} (release, only omnigraph and omnigraph-server) and
# reused by later runs.  Every run starts from a fresh graph.
# BASE=none measures this build alone (the baseline columns then repeat it).
# REPLICAS (default "1 2 4"): that many omnigraph-server processes over the one graph, the
# agents spread over them round-robin (each agent keeps its replica).  STORES (default
# "local remote") picks the stores.
# Usage: [AGENTS="16 64 256"] [REPLICAS="1 2 4"] [STORES="local remote"] [LATENCY_MS=2] [BASE=bd7fa44]
#        [OUT=DIR] bench/fleet/run.sh [BUILD_DIR]
# Results: docs/benchmarks.md ("Fleet").
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin="${1:-$here/build/release}"
case "$bin" in /*) ;; *) bin="$here/$bin" ;; esac
agents="${AGENTS:-16 64 256}"
replicas="${REPLICAS:-1 2 4}"
stores="${STORES:-local remote}"
lat="${LATENCY_MS:-2}"
base="${BASE:-bd7fa44}"
base_dir="${BASE_DIR:-/tmp/og-fleet-base-$base}"
for t in omnigraph omnigraph-server; do
  [ -x "$bin/$t" ] || { echo "bench/fleet: $bin/$t is missing (make build)" >&2; exit 1; }
done
command -v python3 >/dev/null || { echo "bench/fleet: python3 is missing" >&2; exit 1; }

# ---- the baseline build (BASE=none: this build only, no ratios) -------------------------
if [ "$base" != none ] && [ ! -x "$base_dir/build/omnigraph-server" ]; then
  echo "bench/fleet: building the baseline $base into $base_dir (once; an interrupted build resumes)" >&2
  if [ ! -f "$base_dir/src/CMakeLists.txt" ]; then
    rm -rf "$base_dir"; mkdir -p "$base_dir/src"
    git -C "$here" archive "$base" | tar -x -C "$base_dir/src"
    cp "$here/src/store/store_count.c" "$here/src/store/store_count.h" "$base_dir/src/src/store/"
    # an older release has no OG_ERR_UNAVAILABLE (the injected outage's status): plain IO there
    grep -q OG_ERR_UNAVAILABLE "$base_dir/src/include/omnigraph.h" ||
      sed -i 's/OG_ERR_UNAVAILABLE/OG_ERR_IO/g' "$base_dir/src/src/store/store_count.c"
  fi
  launcher=$(command -v ccache >/dev/null 2>&1 && echo -DCMAKE_C_COMPILER_LAUNCHER=ccache || true)
  cmake -S "$base_dir/src" -B "$base_dir/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo $launcher >/dev/null
  cmake --build "$base_dir/build" -j2 --target omnigraph omnigraph-server >/dev/null
fi
base_bin="$base_dir/build"

work=$(mktemp -d "${TMPDIR:-/tmp}/og-fleet-XXXXXX")
srv_pids=""
cleanup() { for p in $srv_pids; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
printf 'node Person { name: String @key  age: I32? }\n' > "$work/schema.pg"
printf '{"type":"Person","data":{"name":"seed-%d","age":1}}\n' 1 2 3 > "$work/seed.jsonl"

# run BIN STORE N R: one fresh graph, R server replicas over it, N agents spread over them;
# prints "ops/s p50 p99 req/op failures"
run() {
  local b=$1 store=$2 n=$3 reps=$4 g="$work/g-$RANDOM$RANDOM" counts="$work/counts.$RANDOM$RANDOM" env=() addrs=""
  "$b/omnigraph" init --quiet --schema "$work/schema.pg" "$g" >/dev/null
  "$b/omnigraph" load --quiet --data "$work/seed.jsonl" --mode overwrite "$g" >/dev/null
  if [ "$store" = remote ]; then env=(OG_STORE_COUNT="$lat,remote"); else env=(OG_STORE_COUNT=0); fi
  for r in $(seq "$reps"); do
    : > "$work/listen.$r"
    env "${env[@]}" OG_STORE_COUNT_OUT="$counts" "$b/omnigraph-server" --graph "fleet=$g" --bind 127.0.0.1:0 \
      --unauthenticated > "$work/listen.$r" 2>>"$work/server.log" &
    srv_pids="$srv_pids $!"
    local addr=""
    for _ in $(seq 100); do
      addr=$(sed -n 's/^OMNIGRAPH_LISTEN_ADDR=//p' "$work/listen.$r"); [ -n "$addr" ] && break; sleep 0.1
    done
    [ -n "$addr" ] || { echo "bench/fleet: the server did not start" >&2; cat "$work/server.log" >&2; exit 1; }
    addrs="$addrs${addrs:+,}$addr"
  done
  local res; res=$(python3 "$here/bench/fleet/agents.py" "$addrs" fleet "$n")
  for p in $srv_pids; do kill "$p"; wait "$p" 2>/dev/null || true; done; srv_pids=""
  local total; total=$(sed -n 's/.* total=\([0-9]*\).*/\1/p' "$counts" | awk '{s+=$1} END{print s+0}')
  python3 - "$res" "$total" <<'PY'
import json, sys
r = json.loads(sys.argv[1]); total = int(sys.argv[2])
print("%.1f %.0f %.0f %.1f %d" % (r["ops_per_s"], r["write_p50_ms"], r["write_p99_ms"],
                                  total / max(r["ops"], 1), r["failures"]))
if r["errors"]:
    print("errors: %s" % r["errors"], file=sys.stderr)
PY
  # The graph stays until the end (cleanup): deleting its thousands of files here would make
  # the next run's file creations slow — ext4 without a journal skips, and reads, every inode
  # freed in the last 5-35 s when it allocates one (docs/benchmarks.md "Fleet").
  rm -f "$counts"
}

out="${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/og-fleet-out-XXXXXX")}"
mkdir -p "$out"
load0=$(cut -d' ' -f1-3 /proc/loadavg); t0=$(date +%s)
echo "fleet bench: agents $agents, replicas $replicas; each: branch, 4 one-row inserts, an update, a merge into main (7 operations)"
echo "  $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $load0 at the start; remote = $lat ms a request"
printf '  %-7s %6s %4s | %-29s | %-29s | %s\n' store agents reps "baseline $base: ops/s p50 p99 req/op" \
  "this build: ops/s p50 p99 req/op" "ratios: ops/s, p99, req/op"
: > "$out/fleet.dat"
for store in $stores; do
  for n in $agents; do
    for reps in $replicas; do
      # the two builds alternate, so that a drift of the machine's load hits both
      if [ "$base" != none ]; then
        read -r b_ops b_p50 b_p99 b_req b_fail < <(run "$base_bin" "$store" "$n" "$reps")
      fi
      read -r c_ops c_p50 c_p99 c_req c_fail < <(run "$bin" "$store" "$n" "$reps")
      if [ "$base" = none ]; then b_ops=$c_ops b_p50=- b_p99=$c_p99 b_req=$c_req b_fail=0; fi
      r_ops=$(awk "BEGIN{printf \"%.2f\", $c_ops/$b_ops}"); r_p99=$(awk "BEGIN{printf \"%.2f\", $c_p99/$b_p99}")
      r_req=$(awk "BEGIN{printf \"%.2f\", $c_req/$b_req}")
      printf '  %-7s %6d %4d | %7.1f %6sms %6sms %5.1f | %7.1f %6sms %6sms %5.1f | x%s  x%s  x%s%s\n' "$store" "$n" \
        "$reps" "$b_ops" "$b_p50" "$b_p99" "$b_req" "$c_ops" "$c_p50" "$c_p99" "$c_req" "$r_ops" "$r_p99" "$r_req" \
        "$([ "$b_fail$c_fail" = 00 ] || echo "  (failures: baseline $b_fail, this build $c_fail)")"
      echo "$store $n $reps $b_ops $c_ops $b_p99 $c_p99 $b_req $c_req" >> "$out/fleet.dat"
    done
  done
done
echo "  $(( $(date +%s) - t0 )) s, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end; data in $out/fleet.dat"
if command -v gnuplot >/dev/null; then
  gnuplot -e "dat='$out/fleet.dat'; out='$out/fleet.svg'" "$here/bench/fleet/chart.gp" && echo "  chart: $out/fleet.svg"
fi
