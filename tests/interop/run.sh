#!/usr/bin/env bash
# Runs the Node interop tests (node:test) against LanceDB, pinned by package-lock.json here.
# OG_BIN_DIR points at the build whose programs the tests drive.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
shopt -s nullglob
tests=(*.test.mjs)
if [ "${#tests[@]}" -eq 0 ]; then
  echo "interop: no tests" >&2
  exit 1
fi
if [ ! -d node_modules/@lancedb/lancedb ]; then
  npm ci --no-audit --no-fund
fi
node --test --test-concurrency=1 "${tests[@]}"
