#!/usr/bin/env bash
# Runs the Node interop tests (node:test) against LanceDB, pinned by package-lock.json here.
# OG_BIN_DIR points at the build whose programs the tests drive (lance_tool); default
# build/release.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
export OG_BIN_DIR="${OG_BIN_DIR:-$here/../../build/release}"
if [ ! -x "$OG_BIN_DIR/lance_tool" ]; then
  echo "interop: $OG_BIN_DIR/lance_tool is missing (build it first)" >&2
  exit 1
fi
shopt -s nullglob
tests=(*.test.mjs)
if [ "${#tests[@]}" -eq 0 ]; then
  echo "interop: no tests" >&2
  exit 1
fi
if [ ! -d node_modules/@lancedb/lancedb ] || [ ! -d node_modules/apache-arrow ]; then
  npm ci --no-audit --no-fund
fi
node --test --test-concurrency=1 "${tests[@]}"
