#!/bin/sh
# check_install.sh BUILD_DIR SOURCE_DIR: installs kern into a temporary
# (non-default) prefix and builds a program against it as a user would: with
# CMake's find_package(kern) (kern::kern, then installed; kern::kern_static)
# and with the documented `cc app.c $(pkg-config --cflags --libs kern)`, in C
# and C++. With no LD_LIBRARY_PATH, the shared programs must start and use
# the installed libkern.so (the rpath of kern.pc and of the CMake target).
# The man page and the docs must be installed. Exits non-zero on any failure.
set -eu
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset LD_LIBRARY_PATH
export KERN_CACHE_DIR="$tmp/cache"
fail() { echo "install: $*"; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
pc=$(find "$tmp/prefix" -name kern.pc)
lib=$(dirname "$(dirname "$pc")")
for f in include/kern.h bin/kernc share/man/man1/kernc.1 share/doc/kern/README.md \
         share/doc/kern/docs/language.md share/doc/kern/docs/runtime.md share/doc/kern/docs/aot.md; do
  [ -e "$tmp/prefix/$f" ] || fail "missing after install: $f"
done
for f in libkern.a libkern.so libkern.so.0 pkgconfig/kern.pc cmake/kern/kernConfig.cmake; do
  [ -e "$lib/$f" ] || fail "missing after install: $lib/$f"
done

# uses_shared EXE: it needs libkern.so.0 and the loader finds the installed one.
uses_shared() {
  readelf -d "$1" | grep -q 'NEEDED.*\[libkern\.so\.0\]' || fail "$1 does not link libkern.so"
  ldd "$1" | grep -q "libkern\.so\.0 => $lib/libkern\.so\.0 " ||
    { ldd "$1"; fail "$1 does not find $lib/libkern.so.0 by itself"; }
}
run() { out=$("$@") || fail "$* failed: $out"; [ "$out" = "consumer: 0 2 4 6" ] || fail "$*: $out"; }

# CMake: built, then installed elsewhere (CMake's own build-tree rpath is gone there).
cmake -S "$src/tests/install" -B "$tmp/cmake-build" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_INSTALL_PREFIX="$tmp/app" >/dev/null
cmake --build "$tmp/cmake-build" >"$tmp/log" 2>&1 || { cat "$tmp/log"; fail "CMake build"; }
cmake --install "$tmp/cmake-build" >/dev/null
uses_shared "$tmp/app/bin/consumer"
run "$tmp/app/bin/consumer"
if readelf -d "$tmp/app/bin/consumer_static" | grep -q 'NEEDED.*libkern'; then
  fail "kern::kern_static links libkern.so"
fi
run "$tmp/app/bin/consumer_static"

# pkg-config: the line README.md gives, after PKG_CONFIG_PATH for this prefix.
export PKG_CONFIG_PATH="$lib/pkgconfig"
# shellcheck disable=SC2046 # the flags are meant to split
cc -o "$tmp/pc-consumer" "$src/tests/install/consumer.c" $(pkg-config --cflags --libs kern)
uses_shared "$tmp/pc-consumer"
run "$tmp/pc-consumer"
if command -v c++ >/dev/null 2>&1; then
  # shellcheck disable=SC2046
  c++ -x c++ -o "$tmp/pc-consumer++" "$src/tests/install/consumer.c" $(pkg-config --cflags --libs kern)
  uses_shared "$tmp/pc-consumer++"
  run "$tmp/pc-consumer++"
fi

"$tmp/prefix/bin/kernc" --version >/dev/null
"$tmp/prefix/bin/kernc" --help | grep -q "man kernc" || fail "kernc --help does not point to its man page"
echo "install: ok"
