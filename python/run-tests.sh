#!/usr/bin/env bash
# Installs the Python package (python/) into a fresh venv of Debian's python3 — offline, as a
# user would: `pip install ./python` — and runs its pytest suite against the build in $1
# (default build/release): an embedded graph in the test process over that build's
# libomnigraph.so (which the install copies into the package), a served one through its
# `omnigraph-server`.  Debian's python3-pytest and python3-pandas are seen through
# --system-site-packages.  docs/python.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "${1:-$here/../build/release}" && pwd)
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
for f in libomnigraph.so omnigraph-server; do
  if [ ! -e "$bin/$f" ]; then
    echo "python: $bin/$f is missing (make build first)" >&2
    exit 1
  fi
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$py" -m venv --system-site-packages "$work/venv"
# the build of $1 is the one bundled (the default is build/release beside python/)
OMNIGRAPH_LIBRARY="$bin/libomnigraph.so" "$work/venv/bin/pip" install --no-index --quiet "$here"
# the tests import the installed package, not the source tree beside them
cp -r "$here/tests" "$work/tests"
cd "$work"
env -u OMNIGRAPH_LIBRARY OMNIGRAPH_SERVER="$bin/omnigraph-server" \
  "$work/venv/bin/python" -m pytest -q -p no:cacheprovider "$work/tests"
