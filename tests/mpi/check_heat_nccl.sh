#!/bin/sh
# check_heat_nccl.sh HEAT_NCCL WORK_DIR [ARGS...]: runs the NCCL heat solver of
# examples/mpi (HEAT_NCCL: its binary, empty when it was not built) on one GPU
# and on every GPU of the machine, each checked bit for bit against the serial
# C reference (--verify), on a grid that does not split evenly; the result
# lines (steps, residual, grid hash) of the two must be equal. With ARGS, one
# more run with them (a timing run, say). Exits 77 (CTest: skipped) without
# NCCL or without a GPU.
set -eu
heat=$1 work=$2
shift 2
if [ -z "$heat" ] || [ ! -x "$heat" ]; then
  echo "SKIP: examples/mpi/heat_nccl was not built: NCCL (nccl.h, libnccl) or the CUDA headers not found"
  exit 77
fi
# A build directory taken to another machine may not find libnccl.so.2 where
# the build did: look where NCCL is usually installed (NCCL_HOME, the CUDA
# toolkit, the system, the nvidia-nccl Python wheel).
if ldd "$heat" 2>/dev/null | grep -q 'libnccl.so.2 => not found'; then
  wheel=$(python3 -c 'import nvidia.nccl as n; print(list(n.__path__)[0] + "/lib")' 2>/dev/null || true)
  for dir in ${NCCL_HOME:+$NCCL_HOME/lib} /usr/local/cuda/lib64 /usr/local/cuda/lib \
    /usr/lib/x86_64-linux-gnu $wheel; do
    if [ -e "$dir/libnccl.so.2" ]; then
      echo "libnccl.so.2 from $dir"
      export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      break
    fi
  done
fi
rm -rf "$work"
mkdir -p "$work"
for gpus in 1 0; do # 0: all of them
  status=0
  "$heat" --gpus $gpus --rows 1027 --cols 515 --steps 3000 --check-every 9 --tol 1e-4 --verify \
    >"$work/run$gpus.log" 2>&1 || status=$?
  cat "$work/run$gpus.log"
  if [ $status -eq 77 ]; then
    echo "SKIP: no GPU: the NCCL example needs one"
    exit 77
  fi
  [ $status -eq 0 ] || { echo "FAIL: heat_nccl --gpus $gpus exited with $status"; exit 1; }
  grep '^result:' "$work/run$gpus.log" >"$work/result$gpus.txt"
done
cmp -s "$work/result1.txt" "$work/result0.txt" || {
  echo "FAIL: one GPU and every GPU differ"
  exit 1
}
echo "gpu_heat_nccl: one GPU and every GPU bit-identical, and equal to the C reference"
if [ $# -gt 0 ]; then
  "$heat" "$@"
fi
