#!/usr/bin/env bash
# `make install` for embedders: install this build into a temporary DESTDIR, then compile and
# link examples/c_api_quickstart.c against the installed header and library using only
# pkg-config — against the shared library (what -lomnigraph finds first) and the static one
# (-l:libomnigraph.a) — run both, and run the installed `omnigraph --version`.
# Usage: install-and-embed.sh SOURCE_DIR BUILD_DIR C_COMPILER [EXTRA_LINK_FLAGS]
set -euo pipefail
src=$1 build=$2 cc=$3 extra=${4:-}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
prefix=/opt/omnigraph-test
DESTDIR="$d/root" cmake --install "$build" --prefix "$prefix" >"$d/install.log"
root="$d/root$prefix"
# the shared library, where the build makes one (not in a sanitizer build)
shared=""
if [ -e "$build/libomnigraph.so" ]; then
  soname=$(readelf -d "$build/libomnigraph.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
  shared="lib/libomnigraph.so lib/$soname"
fi
# shellcheck disable=SC2086
for f in bin/omnigraph include/omnigraph.h lib/libomnigraph.a $shared lib/pkgconfig/omnigraph.pc \
    share/man/man1/omnigraph.1 share/bash-completion/completions/omnigraph share/zsh/site-functions/_omnigraph \
    share/fish/vendor_completions.d/omnigraph.fish; do
    [ -e "$root/$f" ] || { echo "not installed: $f" >&2; cat "$d/install.log"; exit 1; }
done
export PKG_CONFIG_PATH="$root/lib/pkgconfig"
pkg-config --exists omnigraph
[ "$(pkg-config --modversion omnigraph)" = "$("$root/bin/omnigraph" version --json | sed 's/.*"version":"\([^"]*\)".*/\1/')" ]
# shellcheck disable=SC2046,SC2086
"$cc" -std=c11 -o "$d/quickstart" "$src/examples/c_api_quickstart.c" $(pkg-config --cflags --libs omnigraph) $extra
if [ -n "$shared" ]; then
  readelf -d "$d/quickstart" | grep -q "NEEDED.*\[$soname\]" || { echo "not linked to $soname" >&2; exit 1; }
fi
mkdir "$d/graph"
LD_LIBRARY_PATH="$root/lib" "$d/quickstart" "$d/graph" >"$d/out.txt"
[ -s "$d/out.txt" ]
# shellcheck disable=SC2046,SC2086
"$cc" -std=c11 -o "$d/quickstart-static" "$src/examples/c_api_quickstart.c" \
  $(pkg-config --cflags --libs omnigraph | sed 's/-lomnigraph /-l:libomnigraph.a /') $extra
! readelf -d "$d/quickstart-static" | grep -q "NEEDED.*libomnigraph" || { echo "static link loads libomnigraph" >&2; exit 1; }
mkdir "$d/graph2"
"$d/quickstart-static" "$d/graph2" >"$d/out2.txt"
[ -s "$d/out2.txt" ]
"$root/bin/omnigraph" --version | grep -q '^storage format: omnigraph storage version [0-9]'
echo "installed and embedded: $(pkg-config --cflags --libs omnigraph)"
