#!/bin/sh
# sass_compare.sh BUILD [OLD_BUILD]: kern's GPU code against nvcc's, statically.
#
# Requires: BUILD/kernc (make build), the CUDA toolkit's nvcc and ptxas, and
# cuobjdump (the toolkit's, or pip's nvidia-cuda-cuobjdump: its bin/ is
# searched under python3's site-packages); no GPU. Produces, on stdout, one
# Markdown table per kern build: for each kernel of bench/workloads.kern, the
# SASS for sm_90 of kern's dense entry (kernc emit --target=ptx, then ptxas
# -O3, as NVRTC does; its _one entry, which the runtime launches on these
# workloads' grids, where it has one) beside the hand-written kernel of
# bench/baseline.cu (nvcc -O3 --fmad=false): registers, instructions, integer divisions (one I2F.U32.RP
# each), calls (slow paths: 64-bit division, float division), 64-bit address
# multiplies (IMAD.WIDE), loads (and how many are 128-bit or read-only .nc)
# and stores, and the innermost loops as instructions/loads. OLD_BUILD: the
# same for another build's kernc (e.g. one of the previous commit), first.
# SASS_KEEP=DIR keeps the CUBINs and SASS there. Breaks: nothing.
set -eu

[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: bench/sass_compare.sh BUILD [OLD_BUILD]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
tmp=${SASS_KEEP:-$(mktemp -d "${TMPDIR:-/tmp}/kern-sass-XXXXXX")}
mkdir -p "$tmp"
[ -n "${SASS_KEEP:-}" ] || trap 'rm -rf "$tmp"' EXIT INT TERM

find_tool() {
  command -v "$1" 2>/dev/null && return
  for d in "${CUDA_HOME:-/usr/local/cuda}/bin" /usr/local/cuda/bin; do
    [ -x "$d/$1" ] && { echo "$d/$1"; return; }
  done
  py=$(command -v python3 || true)
  if [ -n "$py" ]; then
    for d in $("$py" -c 'import site; print(" ".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null); do
      for f in "$d"/nvidia/cu*/bin/"$1" "$d"/nvidia/cuda_*/bin/"$1"; do
        [ -x "$f" ] && { echo "$f"; return; }
      done
    done
  fi
  echo "sass_compare.sh: no $1 (the CUDA toolkit's; pip install nvidia-cuda-cuobjdump for cuobjdump)" >&2
  exit 1
}
nvcc=$(find_tool nvcc)
ptxas=$(find_tool ptxas)
cuobjdump=$(find_tool cuobjdump)

"$nvcc" -cubin -O3 --fmad=false -arch=sm_90 -o "$tmp/baseline.cubin" "$here/baseline.cu"
"$cuobjdump" -sass "$tmp/baseline.cubin" > "$tmp/baseline.sass"
"$cuobjdump" -res-usage "$tmp/baseline.cubin" > "$tmp/baseline.res" 2>&1

# regs FILE.res FUNCTION: the registers a thread of FUNCTION takes.
regs() {
  awk -v want="Function $2:" '$0 ~ want && index($0, want) { getline; sub(/.*REG:/, ""); sub(/ .*/, ""); print; exit }' "$1"
}

# stats FILE.sass FUNCTION: one line of numbers (see the table's header).
stats() {
  awk -v want="$2" '
    function hex(h,   i, v) {
      v = 0; h = tolower(h); sub(/^0x/, "", h)
      for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
      return v
    }
    /Function : / { on = ($3 == want); next }
    !on || $0 !~ /^[ \t]+\/\*[0-9a-f][0-9a-f][0-9a-f][0-9a-f]+\*\// { next }
    {
      line = $0; sub(/ *\/\* 0x[0-9a-f]+ \*\//, "", line); sub(/[ \t]*;[ \t]*$/, "", line)
      match(line, /\/\*[0-9a-f]+\*\//); addr = hex(substr(line, RSTART + 2, RLENGTH - 4))
      if (line ~ / NOP/) next
      n++; a[n] = addr; ins[n] = line
      if (line ~ /I2F\.U32\.RP|I2F\.RP/) div++
      if (line ~ /CALL\.REL/) calls++
      if (line ~ /IMAD\.WIDE/) wide++
      if (line ~ /LDG/) { ldg++; if (line ~ /\.128/) v128++; if (line ~ /CONSTANT/) nc++ }
      if (line ~ /STG|RED|ATOM/) stg++
    }
    END {
      # innermost loops: backward branches whose span holds no other backward branch
      nl = 0
      for (i = 1; i <= n; i++) if (ins[i] ~ / BRA / && match(ins[i], /0x[0-9a-f]+$/)) {
        t = hex(substr(ins[i], RSTART, RLENGTH))
        if (t < a[i]) { nl++; lo[nl] = t; hi[nl] = a[i] }
      }
      loops = ""; other = ""
      for (l = 1; l <= nl; l++) {
        inner = 1
        for (m = 1; m <= nl; m++) if (m != l && lo[m] >= lo[l] && hi[m] < hi[l]) inner = 0
        if (!inner) continue
        c = 0; ld = 0
        for (i = 1; i <= n; i++) if (a[i] >= lo[l] && a[i] <= hi[l]) { c++; if (ins[i] ~ /LDG/) ld++ }
        if (ld) loops = loops (loops == "" ? "" : ",") c "/" ld
        else other = other (other == "" ? "" : ",") c "/0"
      }
      if (loops == "") loops = other
      printf "%d %d %d %d %d %d %d %d %s\n", n, div, calls, wide, ldg, v128, nc, stg, loops == "" ? "-" : loops
    }' "$1"
}

table() {
  kernc=$1/kernc
  [ -x "$kernc" ] || { echo "sass_compare.sh: no $kernc (make build)" >&2; exit 1; }
  sub=$(basename "$1")
  "$kernc" emit --target=ptx --arch=sm_90 "$here/workloads.kern" > "$tmp/$sub.ptx"
  "$ptxas" -arch=sm_90 -O3 -o "$tmp/$sub.cubin" "$tmp/$sub.ptx"
  "$cuobjdump" -sass "$tmp/$sub.cubin" > "$tmp/$sub.sass"
  "$cuobjdump" -res-usage "$tmp/$sub.cubin" > "$tmp/$sub.res" 2>&1
  echo "### $1 ($(git -C "$1/.." rev-parse --short HEAD 2>/dev/null || echo '?')): kern's dense entry vs nvcc"
  echo
  echo "| kernel | code | registers | instructions | int divisions | calls | IMAD.WIDE | loads (128-bit, .nc) | stores/atomics | innermost loops (instructions/loads) |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"
  for k in saxpy stencil histogram matmul nbody mandelbrot reduce_sum tiny; do
    for side in nvcc kern; do
      if [ $side = nvcc ]; then
        f=$k s=$(stats "$tmp/baseline.sass" "$f") r=$(regs "$tmp/baseline.res" "$f")
      else
        f=kk_${k}_cuda_dense_one
        grep -q "Function : $f\$" "$tmp/$sub.sass" || f=kk_${k}_cuda_dense
        s=$(stats "$tmp/$sub.sass" "$f") r=$(regs "$tmp/$sub.res" "$f")
        side="kern ${f#kk_${k}_cuda_}"
      fi
      set -- $s
      echo "| $k | $side | $r | $1 | $2 | $3 | $4 | $5 ($6, $7) | $8 | $9 |"
    done
  done
  echo
}

echo "SASS for sm_90 (ptxas $("$ptxas" --version | awk '/release/ { print $5 $6 }'), nvcc --fmad=false)"
echo
[ $# -eq 2 ] && table "$2"
table "$1"
