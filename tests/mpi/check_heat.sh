#!/bin/sh
# check_heat.sh HEAT WORK_DIR: runs the distributed heat solver of examples/mpi
# (HEAT: its binary, empty when it was not built) on 1, 2, 3 and 4 MPI ranks on
# the CPU, with both halo paths, and checks that every run is bit-identical to the serial C
# reference (--verify) and that the final grids (--out) and the result lines
# (steps, residual in hexadecimal, grid hash) are the same bytes for every
# rank count. The grid does not split evenly (67 rows), the residual is
# checked every 7 steps and stops the run at a tolerance, so the ranks must
# also agree on when to stop. Exits 77 (CTest: skipped) when MPI is absent.
set -eu
heat=$1 work=$2
if [ -z "$heat" ] || [ ! -x "$heat" ]; then
  echo "SKIP: examples/mpi/heat was not built: no MPI library found (Debian: openmpi-bin libopenmpi-dev)"
  exit 77
fi
if ! command -v mpirun >/dev/null 2>&1; then
  echo "SKIP: mpirun is not installed (Debian: openmpi-bin)"
  exit 77
fi
# Open MPI refuses to start as root unless told that it is meant.
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
rm -rf "$work"
mkdir -p "$work"

# Each run: ranks and halo path (direct: MPI on the arrays' memory; staged:
# through separate host rows, the path of GPUs without a CUDA-aware MPI).
runs="1:direct 2:direct 4:direct 2:staged 3:staged"
for run in $runs; do
  np=${run%:*} halo=${run#*:}
  log="$work/run-$np-$halo.log"
  if ! mpirun --oversubscribe -np "$np" "$heat" --device cpu --halo "$halo" --rows 67 --cols 45 \
      --steps 100000 --tol 2e-3 --check-every 7 --verify --out "$work/grid-$np-$halo.bin" \
      >"$log" 2>&1; then
    echo "FAIL: $np ranks, halo $halo:"
    cat "$log"
    exit 1
  fi
  cat "$log"
  grep '^result:' "$log" >"$work/result-$np-$halo.txt" || {
    echo "FAIL: $np ranks, halo $halo: no result line"
    exit 1
  }
done

status=0
for run in $runs; do
  np=${run%:*} halo=${run#*:}
  if ! cmp "$work/grid-1-direct.bin" "$work/grid-$np-$halo.bin"; then
    echo "FAIL: the grid of $np ranks (halo $halo) differs from the grid of 1 rank"
    status=1
  fi
  if ! cmp -s "$work/result-1-direct.txt" "$work/result-$np-$halo.txt"; then
    echo "FAIL: $np ranks, halo $halo: $(cat "$work/result-$np-$halo.txt")"
    echo "      1 rank:  $(cat "$work/result-1-direct.txt")"
    status=1
  fi
done
[ $status -eq 0 ] && echo "mpi_heat: $runs (ranks:halo) bit-identical ($(wc -c <"$work/grid-1-direct.bin") bytes of grid)"
exit $status
