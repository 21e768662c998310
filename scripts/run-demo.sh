#!/usr/bin/env bash
# The `make run` demo: writes a Lance table with every supported column type under
# ./build/demo (three versions: append, delete, add column), reads each version back and
# prints it.  Usage: scripts/run-demo.sh BUILD_DIR   (the Makefile passes build/release)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin="${1:-$here/build/release}"
case "$bin" in /*) ;; *) bin="$here/$bin" ;; esac
if [ ! -x "$bin/table_demo" ]; then
  echo "run-demo: $bin/table_demo is missing (build first: make build)" >&2
  exit 1
fi
mkdir -p "$here/build/demo"
"$bin/table_demo" "$here/build/demo"
