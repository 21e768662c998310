#!/usr/bin/env bash
# shared-library.sh — libomnigraph.so is the public C API and nothing more: its dynamic symbol
# table holds exactly the functions include/omnigraph.h declares (no internal og_err,
# og_vector_*, ... a program could come to depend on), it carries a versioned SONAME, and
# examples/c_api_quickstart.c linked against it (not the static library) runs.
# Usage: shared-library.sh SOURCE_DIR LIBOMNIGRAPH_SO SYMBOLS_FILE C_COMPILER [EXTRA_FLAGS]
set -euo pipefail
src=$1 so=$2 symbols=$3 cc=$4 extra=${5:-}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT

# 1. exports: defined dynamic symbols == the header's functions
nm -D --defined-only "$so" | awk '{print $NF}' | sed 's/@.*//' | sort -u >"$d/exported"
sort -u "$symbols" >"$d/declared"
if ! diff -u "$d/declared" "$d/exported" >"$d/diff"; then
  echo "libomnigraph.so exports differ from include/omnigraph.h (- declared only, + exported only):" >&2
  cat "$d/diff" >&2
  exit 1
fi
grep -qx og_db_open "$d/exported"
! grep -qx og_err "$d/exported"   # an internal function the layers share
n=$(wc -l <"$d/exported")

# 2. the SONAME names major.minor before 1.0 (libomnigraph.so.0.1), and the build made the
# links a loader and a linker look for
soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
version=$(sed -n 's/^#define OG_VERSION_STRING "\(.*\)"/\1/p' "$src/include/omnigraph.h")
case "$version" in
  0.*) want="libomnigraph.so.$(echo "$version" | cut -d. -f1,2)" ;;
  *) want="libomnigraph.so.$(echo "$version" | cut -d. -f1)" ;;
esac
[ "$soname" = "$want" ] || { echo "SONAME is '$soname', expected $want" >&2; exit 1; }
dir=$(dirname "$so")
[ -e "$dir/$soname" ] && [ -e "$dir/libomnigraph.so" ] || { echo "missing $soname / libomnigraph.so links" >&2; exit 1; }

# 3. the quickstart, dynamically linked, runs; the program holds no og_ code of its own
# shellcheck disable=SC2086
"$cc" -std=c11 -I"$src/include" -o "$d/quickstart" "$src/examples/c_api_quickstart.c" "$dir/libomnigraph.so" $extra
readelf -d "$d/quickstart" | grep -q "NEEDED.*\[$soname\]" || { echo "quickstart does not load $soname" >&2; exit 1; }
if nm "$d/quickstart" | grep -q ' T og_'; then echo "quickstart has og_ code linked in" >&2; exit 1; fi
mkdir "$d/graph"
LD_LIBRARY_PATH="$dir" "$d/quickstart" "$d/graph" >"$d/out.txt"
[ -s "$d/out.txt" ]
echo "libomnigraph.so ($soname) exports the $n functions of include/omnigraph.h; the quickstart runs over it"
