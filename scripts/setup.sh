#!/bin/sh
# setup.sh [build|test] [--check]: makes sure the Debian packages kern needs
# are installed.
#   build   what `make demo` and `make install` need: cmake, re2c, a C compiler
#   test    what `make test` and `make build` need too: clang and gcc (both
#           compilers are tested), pkg-config, Criterion (the test suites), DLPack's
#           header, Open MPI (the test of examples/mpi), OpenBLAS (bench_cpu's
#           sgemm column)
# Installs the missing packages when run as root; otherwise prints the one
# apt-get command to run and fails. With --check it only says what is missing
# (exit 1 if anything is), and never installs.
set -u
mode=test check=""
for a in "$@"; do
  case $a in
    build | test) mode=$a ;;
    --check) check=1 ;;
    *) echo "usage: sh scripts/setup.sh [build|test] [--check]" >&2; exit 2 ;;
  esac
done
missing=""
need() { # need PACKAGE TEST...
  pkg=$1; shift
  "$@" >/dev/null 2>&1 || missing="$missing $pkg"
}
have_cc() { command -v cc || command -v clang || command -v gcc; }
need cmake cmake --version
need re2c  command -v re2c
need make  command -v make
if [ "$mode" = test ]; then
  need clang            command -v clang
  need gcc              command -v gcc # KERN_CC=gcc: the suites test both compilers
  need pkg-config       command -v pkg-config
  need python3          command -v python3 # tests/layers.py
  need libcriterion-dev pkg-config --exists criterion
  need libdlpack-dev    test -f /usr/include/dlpack/dlpack.h
  need "openmpi-bin libopenmpi-dev" sh -c 'command -v mpirun && pkg-config --exists mpi-c' # examples/mpi's test
  need libopenblas0     sh -c '/sbin/ldconfig -p | grep -q libopenblas.so.0' # bench_cpu's sgemm column
else
  need clang have_cc
fi
[ -z "$missing" ] && exit 0

cmd="apt-get install -y --no-install-recommends$missing"
if [ -n "$check" ] || [ "$(id -u)" -ne 0 ]; then
  echo "kern needs these Debian packages:$missing"
  [ -n "$check" ] || echo "run:  sudo apt-get update && sudo $cmd"
  exit 1
fi
echo "installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq && $cmd
