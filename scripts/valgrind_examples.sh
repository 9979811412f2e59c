#!/bin/sh
# valgrind_examples.sh [BUILD_DIR]: runs each example program of BUILD_DIR
# (default build) on the cpu device under valgrind's memcheck with a full leak
# check; exits 1 if an example fails or valgrind reports an error (invalid
# access, uninitialised value, a definite or possible leak).
#
# Each example first runs once without valgrind, filling a private kernel cache
# (removed at the end), so valgrind runs the cached path: the kernels are
# dlopen'd, not compiled, and the C compiler is not run under valgrind.
set -eu
build=${1:-build}
command -v valgrind >/dev/null 2>&1 || { echo "valgrind is not installed (apt-get install valgrind)"; exit 1; }
set -- "$build"/example_*
[ -x "$1" ] || { echo "no example programs in $build (build it first)"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export KERN_CACHE_DIR="$tmp/cache"
status=0
for exe in "$@"; do
  name=$(basename "$exe")
  if ! "$exe" cpu >"$tmp/warm.log" 2>&1; then
    echo "$name: FAILED (without valgrind)"
    cat "$tmp/warm.log"
    status=1
    continue
  fi
  if valgrind --error-exitcode=1 --leak-check=full "$exe" cpu >"$tmp/vg.log" 2>&1; then
    echo "$name: ok ($(grep -o 'ERROR SUMMARY: [0-9]* errors' "$tmp/vg.log"))"
  else
    echo "$name: FAILED under valgrind"
    cat "$tmp/vg.log"
    status=1
  fi
done
exit $status
