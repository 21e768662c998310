#!/usr/bin/env bash
# Installs every build, test and run dependency of OmniGraph-C on a fresh Debian 12 machine.
# Idempotent: does nothing when every package is already present. Needs root (or sudo).
set -euo pipefail

PKGS=(
  build-essential cmake pkg-config clang libclang-rt-14-dev
  libjansson-dev libcurl4-openssl-dev libssl-dev libmicrohttpd-dev
  libzstd-dev liblz4-dev libroaring-dev libstemmer-dev libutf8proc-dev
  libyaml-dev libpcre2-dev libcmocka-dev python3
  libhnswlib-dev # the vector (ANN) index: src/vec/hnsw.cpp, docs/search.md
  sqlite3 # SQLite FTS5: the independent bm25 check (tests/engine/test_search_fts5.c)
  wrk     # the server benchmark (bench/server/run.sh)
  libsqlite3-dev wordnet-base gnuplot-nox # the search benchmark (bench/search/run.sh): FTS5 peer, corpus, chart
  libedit-dev tmux # `omnigraph shell` line editing (src/shell/), its terminal test (tests/cli/shell-tmux.sh)
  chromium # OmniGraph Studio's browser test (tests/studio/, driven by puppeteer-core)
  fonts-droid-fallback # CJK glyphs for that browser (names like 夏目漱石 in the studio's screenshots, not boxes)
  libicu-dev # confusable-aware branch names and protected-branch matching (src/util/ident.c)
  python3-venv python3-pip python3-pytest python3-pandas # the Python package's tests (python/run-tests.sh)
  nftables # packet loss on the S3 test store's port, in a test-made network namespace (tests/store/lossy-store.sh)
)
# Node.js: some images ship a nodejs package that bundles npm (and conflicts with Debian's npm).
command -v node >/dev/null 2>&1 || PKGS+=(nodejs)
command -v npm >/dev/null 2>&1 || PKGS+=(npm)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}" >&2
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Node packages for the interop tests, pinned by tests/interop/package-lock.json.
here=$(cd "$(dirname "$0")/.." && pwd)
if [ -f "$here/tests/interop/package-lock.json" ] && [ ! -d "$here/tests/interop/node_modules/@lancedb" ]; then
  echo "install-deps: npm ci in tests/interop" >&2
  (cd "$here/tests/interop" && npm ci --no-audit --no-fund)
fi

# Cedar (wasm) for the policy differential test, pinned by tests/policy/package-lock.json.
if [ -f "$here/tests/policy/package-lock.json" ] && [ ! -d "$here/tests/policy/node_modules/@cedar-policy/cedar-wasm" ]; then
  echo "install-deps: npm ci in tests/policy" >&2
  (cd "$here/tests/policy" && npm ci --no-audit --no-fund)
fi
# The OpenAPI validator of the server tests, pinned by tests/server/openapi/package-lock.json.
if [ -f "$here/tests/server/openapi/package-lock.json" ] && [ ! -d "$here/tests/server/openapi/node_modules/@seriousme" ]; then
  echo "install-deps: npm ci in tests/server/openapi" >&2
  (cd "$here/tests/server/openapi" && npm ci --no-audit --no-fund)
fi
# The MCP SDK client for the `omnigraph mcp` end-to-end test, pinned by tests/mcp-sdk/package-lock.json.
if [ -f "$here/tests/mcp-sdk/package-lock.json" ] && [ ! -d "$here/tests/mcp-sdk/node_modules/@modelcontextprotocol/sdk" ]; then
  echo "install-deps: npm ci in tests/mcp-sdk" >&2
  (cd "$here/tests/mcp-sdk" && npm ci --no-audit --no-fund)
fi
# The official MCP conformance suite (server scenarios), pinned by tests/mcp-conformance/package-lock.json.
if [ -f "$here/tests/mcp-conformance/package-lock.json" ] && [ ! -d "$here/tests/mcp-conformance/node_modules/@modelcontextprotocol/conformance" ]; then
  echo "install-deps: npm ci in tests/mcp-conformance" >&2
  (cd "$here/tests/mcp-conformance" && npm ci --no-audit --no-fund)
fi
# OmniGraph Studio (web/, bundled into omnigraph-server at build time), pinned by web/package-lock.json.
if [ -f "$here/web/package-lock.json" ] && [ ! -d "$here/web/node_modules/esbuild" ]; then
  echo "install-deps: npm ci in web" >&2
  (cd "$here/web" && npm ci --no-audit --no-fund)
fi
# puppeteer-core for the studio's browser test, pinned by tests/studio/package-lock.json.
if [ -f "$here/tests/studio/package-lock.json" ] && [ ! -d "$here/tests/studio/node_modules/puppeteer-core" ]; then
  echo "install-deps: npm ci in tests/studio" >&2
  (cd "$here/tests/studio" && npm ci --no-audit --no-fund)
fi
