#!/usr/bin/env bash
# Installs the Python package (python/) into a fresh venv of Debian's python3 — offline, as a
# user would: `pip install ./python` — and runs its pytest suite against the build in $1
# (default build/release): an embedded graph through that build's `omnigraph`, a served one
# through its `omnigraph-server`.  Debian's python3-pytest and python3-pandas are seen through
# --system-site-packages.  docs/python.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "${1:-$here/../build/release}" && pwd)
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
if [ ! -x "$bin/omnigraph" ]; then
  echo "python: $bin/omnigraph is missing (make build first)" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$py" -m venv --system-site-packages "$work/venv"
"$work/venv/bin/pip" install --no-index --quiet "$here"
# the tests import the installed package, not the source tree beside them
cp -r "$here/tests" "$work/tests"
cd "$work"
OMNIGRAPH_BIN="$bin/omnigraph" "$work/venv/bin/python" -m pytest -q -p no:cacheprovider "$work/tests"
