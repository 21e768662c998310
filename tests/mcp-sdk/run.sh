#!/usr/bin/env bash
# Runs the MCP end-to-end test (node:test): the official @modelcontextprotocol/sdk client,
# pinned by package-lock.json here, drives `omnigraph mcp` over stdio.  OG_BIN_DIR points at
# the build whose `omnigraph` it runs; default build/release.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
export OG_BIN_DIR="${OG_BIN_DIR:-$here/../../build/release}"
if [ ! -x "$OG_BIN_DIR/omnigraph" ]; then
  echo "mcp-sdk: $OG_BIN_DIR/omnigraph is missing (build it first)" >&2
  exit 1
fi
if [ ! -d node_modules/@modelcontextprotocol/sdk ]; then
  npm ci --no-audit --no-fund
fi
node --test --test-concurrency=1 ./*.test.mjs
