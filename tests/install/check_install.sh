#!/bin/sh
# check_install.sh BUILD_DIR SOURCE_DIR: installs kern into a temporary prefix
# and builds a program against it twice: with CMake's find_package(kern) and
# with pkg-config. Exits non-zero on any failure.
set -eu
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
for f in include/kern.h lib/libkern.a lib/libkern.so bin/kernc lib/pkgconfig/kern.pc lib/cmake/kern/kernConfig.cmake; do
  [ -e "$tmp/prefix/$f" ] || { echo "missing after install: $f"; exit 1; }
done
cmake -S "$src/tests/install" -B "$tmp/cmake-build" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/cmake-build" >/dev/null
KERN_CACHE_DIR="$tmp/cache" "$tmp/cmake-build/consumer"
PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" cc -o "$tmp/pc-consumer" "$src/tests/install/consumer.c" \
  $(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --cflags --libs --static kern)
LD_LIBRARY_PATH="$tmp/prefix/lib" KERN_CACHE_DIR="$tmp/cache" "$tmp/pc-consumer"
"$tmp/prefix/bin/kernc" --version
echo "install: ok"
