#!/bin/sh
# check_make.sh SOURCE_DIR: the Makefile's user targets as a newcomer meets
# them. `make demo` and `make install` need no test-only package (Criterion is
# hidden from pkg-config here), build no test suite, compile without -Werror,
# and demo prints a short result instead of the build's lines; the
# development configuration (make build, make test) keeps -Werror and the
# suites. Builds in a temporary directory; exits non-zero on any failure.
set -eu
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "make targets: $*"; exit 1; }
cd "$src"
# A user's shell, not a sub-make of `make test` (which would print directories).
unset MAKELEVEL MAKEFLAGS MFLAGS || true
export PKG_CONFIG_LIBDIR="$tmp/no-pkgconfig" # no Criterion, no pkg-config packages at all
export KERN_CACHE_DIR="$tmp/cache"

# setup.sh: what demo and install need, and what only the tests need.
sh scripts/setup.sh build --check >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "setup.sh build wants more"; }
if sh scripts/setup.sh test --check >"$tmp/out" 2>&1; then fail "setup.sh test --check misses Criterion"; fi
grep -q libcriterion-dev "$tmp/out" || { cat "$tmp/out"; fail "setup.sh test does not name Criterion"; }

no_werror() { # no_werror BUILD_DIR
  grep -q "KERN_WERROR:BOOL=OFF" "$1/CMakeCache.txt" || fail "$1: KERN_WERROR is not OFF"
  if grep -rq -- "-Werror" "$1/CMakeFiles/kern_obj.dir/flags.make"; then fail "$1: -Werror in flags"; fi
}

# make demo: quiet and short, then the result and what to read next.
make demo BUILD="$tmp/b" JOBS=2 >"$tmp/demo" 2>&1 || { cat "$tmp/demo"; fail "make demo failed"; }
n=$(wc -l <"$tmp/demo")
[ "$n" -le 30 ] || { cat "$tmp/demo"; fail "make demo printed $n lines"; }
grep -q "saxpy on cpu: .*, 0 wrong" "$tmp/demo" || { cat "$tmp/demo"; fail "no saxpy result"; }
grep -q "^Next:" "$tmp/demo" || { cat "$tmp/demo"; fail "no next steps"; }
if grep -E -q "Building C|Linking|make\[|cmake -S" "$tmp/demo"; then cat "$tmp/demo"; fail "build lines shown"; fi
grep -q "KERN_BUILD_TESTS:BOOL=OFF" "$tmp/b/CMakeCache.txt" || fail "demo configured the test suites"
if ls "$tmp/b/tests" 2>/dev/null | grep -q "^test_"; then fail "demo built test suites"; fi
no_werror "$tmp/b"

# make install: from the same directory, to a non-default prefix; says where kern.pc is.
make install BUILD="$tmp/b" PREFIX="$tmp/prefix" JOBS=2 >"$tmp/install" 2>&1 ||
  { cat "$tmp/install"; fail "make install failed"; }
[ -e "$tmp/prefix/bin/kernc" ] && [ -e "$tmp/prefix/include/kern.h" ] || fail "nothing installed"
grep -q "PKG_CONFIG_PATH=$tmp/prefix/lib" "$tmp/install" || { cat "$tmp/install"; fail "no PKG_CONFIG_PATH hint"; }
no_werror "$tmp/b"

# The development configuration turns -Werror and the suites on (run as
# `make build` would; Criterion must be visible for it).
unset PKG_CONFIG_LIBDIR
line=$(make -n configure BUILD="$tmp/dev" | grep '^cmake -S')
echo "$line" | grep -q -- "-DKERN_WERROR=ON -DKERN_BUILD_TESTS=ON" || fail "dev configure: $line"
eval "$line" >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "dev configure failed"; }
grep -q -- "-Werror" "$tmp/dev/CMakeFiles/kern_obj.dir/flags.make" || fail "no -Werror in the dev build"
# A plain CMake configuration (a packager's) has none.
cmake -S . -B "$tmp/plain" -DKERN_BUILD_TESTS=OFF >/dev/null 2>&1 || fail "plain configure failed"
no_werror "$tmp/plain"
echo "make targets: ok"
