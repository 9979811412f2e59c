#!/bin/sh
# gpu_before_after.sh BUILD [OLD]: bench_gpu of this build against an older
# kern, in one table, on the GPU machine.
#
# Requires: BUILD/bench_gpu (make build); an NVIDIA GPU; nvcc for the
# hand-written baseline (else bench_gpu uses NVRTC). OLD is a build directory
# that has bench_gpu, or a git revision (default: 817bde4, the code before the
# CUDA _one entries) that is built here into $TMPDIR with cmake (needs
# the repository's .git). Produces on stdout a Markdown table per workload:
# the CUDA baseline, kern before and after (ms; speed vs CUDA; of copy
# bandwidth), kern after with KERN_CUDA_BLOCK2D=16x16 (the hand-written
# kernels' block) and kern after with fast math; the runs alternate
# old/new/16x16 twice and the best of the two medians is kept. Breaks: nothing
# (writes only under a temporary directory).
set -eu

[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: bench/gpu_before_after.sh BUILD [OLD]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
new=$(cd "$1" && pwd)
old=${2:-817bde4}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kern-ba-XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

if [ ! -x "$old/bench_gpu" ]; then
  echo "== building bench_gpu at $old" >&2
  mkdir -p "$tmp/src"
  git -C "$here/.." archive "$old" | tar -x -C "$tmp/src"
  cmake -S "$tmp/src" -B "$tmp/old" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKERN_WERROR=OFF \
    -DKERN_BUILD_TESTS=OFF > "$tmp/old.log" 2>&1 &&
    cmake --build "$tmp/old" -j "$(nproc)" --target bench_gpu >> "$tmp/old.log" 2>&1 ||
    { tail -n 30 "$tmp/old.log" >&2; echo "gpu_before_after.sh: building $old failed" >&2; exit 1; }
  old=$tmp/old
fi

cubin=
if command -v nvcc >/dev/null 2>&1; then
  nvcc -cubin -O3 --fmad=false -arch=native -o "$tmp/baseline.cubin" "$here/baseline.cu" &&
    cubin=$tmp/baseline.cubin
fi

# Each build with its own cache: the old and new code differ anyway, and a
# cold compile is not what is measured (bench_gpu warms up first).
run() { # NAME BUILD [ENV=VALUE]
  name=$1 build=$2
  shift 2
  echo "== $name" >&2
  env KERN_CACHE_DIR="$tmp/cache-$name" "$@" "$build/bench_gpu" --csv "$tmp/$name.csv" $cubin > "$tmp/$name.md" ||
    { cat "$tmp/$name.md" >&2; echo "gpu_before_after.sh: $name failed" >&2; exit 1; }
}
for round in 1 2; do
  run "old$round" "$old"
  run "new$round" "$new"
  run "b16_$round" "$new" KERN_CUDA_BLOCK2D=16x16
done
head -n 1 "$tmp/new1.md"
echo

awk -F, '
  function best(a, b) { return a == "" ? b : b == "" ? a : (a + 0 < b + 0 ? a : b) }
  FNR == 1 { split(FILENAME, p, "/"); f = p[length(p)]; sub(/\.csv$/, "", f); sub(/[0-9]$/, "", f); sub(/_$/, "", f); next }
  {
    w = $1; if (!(w in seen)) { seen[w] = 1; order[++n] = w }
    per = $8 > 1 ? 1000.0 / $8 : 1   # tiny: us per launch
    k[f, w] = best(k[f, w], $3 * per); c[f, w] = best(c[f, w], $4 * per)
    if ($6 > 0 && $7 > 0) { gbs[f, w] = $6; copy[f, w] = $7 }
    if (NF >= 9 && $9 != "") fm[f, w] = best(fm[f, w], $9 * per)
  }
  function r(x, y) { return y > 0 && x > 0 ? sprintf("%.2f", y / x) : "" }
  function ofc(f, w) { return copy[f, w] > 0 ? sprintf("%.2f", gbs[f, w] / copy[f, w]) : "" }
  END {
    print "| workload | CUDA (ms) | kern before (ms) | kern after (ms) | after / before speed | before vs CUDA | after vs CUDA | after, 16x16 blocks, vs CUDA | of copy before | of copy after | after with fast math (ms) |"
    print "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    for (i = 1; i <= n; i++) {
      w = order[i]; cu = c["new", w]
      printf "| %s | %.3f | %.3f | %.3f | %s | %s | %s | %s | %s | %s | %s |\n", w, cu, k["old", w], k["new", w],
        r(k["new", w], k["old", w]), r(k["old", w], c["old", w]), r(k["new", w], cu), r(k["b16", w], c["b16", w]),
        ofc("old", w), ofc("new", w), fm["new", w] != "" ? sprintf("%.3f", fm["new", w]) : ""
    }
    print ""
    print "tiny: microseconds per launch. Speed vs CUDA: CUDA time / kern time, each against the CUDA run of the same process (higher is better); of copy: the bytes moved / time against a device-to-device copy."
  }' "$tmp/old1.csv" "$tmp/old2.csv" "$tmp/new1.csv" "$tmp/new2.csv" "$tmp/b16_1.csv" "$tmp/b16_2.csv"
echo
echo "The full bench_gpu tables (after, round 1):"
echo
cat "$tmp/new1.md"
