#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned by
# package-lock.json here) against an MCP endpoint URL, checking the result against
# expected-failures.yaml.  Usage: run.sh URL.  Exit 77 when node or the suite is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v node >/dev/null 2>&1 || [ ! -x "$here/node_modules/.bin/conformance" ]; then
  echo "SKIP: the MCP conformance suite is not installed (scripts/install-deps.sh runs npm ci in tests/mcp-conformance)"
  exit 77
fi
cd "$here"
exec node node_modules/.bin/conformance server --url "$1" --expected-failures "$here/expected-failures.yaml"
