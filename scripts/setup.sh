#!/bin/sh
# setup.sh: makes sure the build tools kern needs are installed.
# Installs the missing Debian packages when run as root; otherwise prints the
# one apt-get command to run and fails.
set -u
missing=""
need() { # need PACKAGE TEST...
  pkg=$1; shift
  "$@" >/dev/null 2>&1 || missing="$missing $pkg"
}
need cmake            command -v cmake
need clang            command -v clang
need re2c             command -v re2c
need pkg-config       command -v pkg-config
need libcriterion-dev pkg-config --exists criterion
need libdlpack-dev    test -f /usr/include/dlpack/dlpack.h
need "openmpi-bin libopenmpi-dev" sh -c 'command -v mpirun && pkg-config --exists mpi-c' # tests only (examples/mpi)
[ -z "$missing" ] && exit 0

cmd="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" -ne 0 ]; then
  echo "kern needs these Debian packages:$missing"
  echo "run:  sudo apt-get update && sudo $cmd"
  exit 1
fi
echo "installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq && $cmd
