#!/bin/sh
# run.sh BUILD cpu|gpu: runs one set of benchmarks and records the results.
#
# Requires: the bench executables in BUILD (make build), POSIX sh and awk;
# python3 with matplotlib only for the optional plot. Produces, in
# bench/results/ (HOST is $BENCH_HOST, else the host name and core count):
#   cpu: cpu-HOST.md/.csv (bench_cpu, bench_access), compile-HOST.md/.csv
#        (bench_compile) and cpu-HOST.png (bench/plot.py)
#   gpu: gpu-HOST.md (bench_gpu, bench/peers.py, bench_graph, bench_access),
#        gpu-HOST.csv (bench_gpu), peers-HOST.csv (CuPy and Triton, when
#        python3 has them), graph-HOST.csv, gpu-HOST.png and
#        compile-HOST.md/.csv; the hand-written CUDA baseline is compiled by
#        nvcc (--fmad=false, as kern) when it is on PATH, else by NVRTC.
# Every table is also printed. Breaks: overwrites those files; stops at the
# first benchmark that fails (a result that differs from its baseline).
set -eu

usage() { echo "usage: bench/run.sh BUILD cpu|gpu" >&2; exit 2; }
[ $# -eq 2 ] || usage
build=$1
kind=$2
case $kind in cpu|gpu) ;; *) usage ;; esac
here=$(cd "$(dirname "$0")" && pwd)
out=$here/results
mkdir -p "$out"
host=${BENCH_HOST:-$(hostname 2>/dev/null || uname -n)-$(nproc 2>/dev/null || echo 1)c}
host=$(printf '%s' "$host" | tr -c 'A-Za-z0-9._-' '-')
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kern-bench-XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# ---- the machine, as the header of every .md ---------------------------------------

first_line() { "$@" 2>/dev/null | head -n 1 || true; }

header() {
  echo "# $1"
  echo
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- host: $(hostname 2>/dev/null || uname -n) ($(uname -sr), $(uname -m))"
  cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
  mem=$(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576; exit }' /proc/meminfo 2>/dev/null || true)
  echo "- CPU: ${cpu:-unknown}, $(nproc 2>/dev/null || echo '?') cores online, ${mem:-? GiB} memory"
  echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
  kcc=${KERN_CC:-$(command -v clang || echo cc)}
  echo "- kern kernels compiled by: $(first_line "$kcc" --version)"
  cc=$(awk -F= '/^CMAKE_C_COMPILER:/ { print $2 }' "$build/CMakeCache.txt" 2>/dev/null || true)
  [ -n "$cc" ] && echo "- C baselines compiled by: $(first_line "$cc" --version)"
  rev=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || true)
  if [ -n "$rev" ] && [ -n "$(git -C "$here" status --porcelain 2>/dev/null | head -n 1)" ]; then
    rev="$rev (with local changes)"
  fi
  [ -n "$rev" ] && echo "- kern commit: $rev"
  if [ "$kind" = gpu ] && command -v nvidia-smi >/dev/null 2>&1; then
    echo "- GPU: $(first_line nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader)"
  fi
  if command -v nvcc >/dev/null 2>&1; then
    echo "- CUDA toolkit: $(nvcc --version 2>/dev/null | awk '/release/ { print; exit }')"
  fi
  echo "- BENCH_SCALE: ${BENCH_SCALE:-1}"
  echo
}

# run NAME CMD...: CMD's stdout into $tmp/NAME (its stderr shows progress).
run() {
  name=$1
  shift
  echo "== $name" >&2
  "$@" > "$tmp/$name" || { echo "bench/run.sh: $name failed" >&2; exit 1; }
}

# The Markdown tables and the "N ns/launch" lines of a text as long-format CSV
# rows: section,row,column,value,note (so tables of any shape share one file;
# value is a cell's leading number, note the rest of the cell).
md_to_csv() {
  awk -v section="$1" '
    function q(s) { gsub(/^ +| +$/, "", s); if (s ~ /[,"]/) { gsub(/"/, "\"\"", s); s = "\"" s "\"" } return s }
    function cell(s) {
      gsub(/^ +| +$/, "", s)
      if (match(s, /^[-+]?[0-9.]+/)) return q(substr(s, 1, RLENGTH)) "," q(substr(s, RLENGTH + 1))
      return "," q(s)
    }
    /^\|/ {
      n = split($0, c, "|")
      if ($0 ~ /^\|[-:| ]+\|$/) next
      if (!intable) { for (i = 2; i < n; i++) head[i] = c[i]; intable = 1; next }
      for (i = 3; i < n; i++) print q(section) "," q(c[2]) "," q(head[i]) "," cell(c[i])
      next
    }
    { intable = 0 }
    / ns\/launch/ {
      s = $0; sub(/^ +/, "", s); name = s; sub(/ +[0-9.]+ ns\/launch.*/, "", name)
      v = s; sub(/ ns\/launch.*/, "", v); sub(/.* /, "", v)
      print q(section) "," q(name) ",ns/launch," v ","
    }
    /kern_capture_end [0-9]/ {
      s = $0; sub(/.*kern_capture_end /, "", s); split(s, a, /[ ,]/)
      print q(section) ",re-capture each iteration,kern_capture_end (us/kernel)," a[1] ","
      s = $0; sub(/.*kern_capture_end_update /, "", s)
      print q(section) ",re-capture each iteration,kern_capture_end_update (us/kernel)," s ","
    }'
}

# ---- cpu -----------------------------------------------------------------------------------

compile_results() {
  run compile "$build/bench_compile" --csv "$out/compile-$host.csv"
  { header "Compile latency: $host"
    echo "bench_compile: a module of 10 kernels (bench/bench_compile.c); medians; floor = the"
    echo "compiler alone on the same generated source, with the runtime's flags."
    echo
    cat "$tmp/compile"; } > "$out/compile-$host.md"
}

if [ "$kind" = cpu ]; then
  run cpu "$build/bench_cpu" --csv "$out/cpu-$host.csv"
  run access "$build/bench_access"
  compile_results
  { header "CPU benchmarks: $host"
    echo "bench_cpu: kern vs the same algorithm in C (-O3 -march=native), one pthread per core"
    echo "and one thread; medians of interleaved runs; ratios below 1 mean kern is faster."
    echo
    cat "$tmp/cpu"
    echo
    echo "## Access-mode cost (bench_access)"
    echo
    echo '```'
    cat "$tmp/access"
    echo '```'; } > "$out/cpu-$host.md"
  cat "$out/cpu-$host.md" "$out/compile-$host.md"
  py=$(command -v python3 || command -v python || true)
  if [ -n "$py" ] && "$py" -c 'import matplotlib' 2>/dev/null; then
    "$py" "$here/plot.py" "$out/cpu-$host.csv" "$out/compile-$host.csv" "$out/cpu-$host.png"
  else
    echo "bench/run.sh: no python3 with matplotlib: plot skipped (pip install matplotlib)" >&2
  fi
  echo "results: $out/cpu-$host.md .csv .png, $out/compile-$host.md .csv" >&2
  exit 0
fi

# ---- gpu ------------------------------------------------------------------------------------

cubin=
if command -v nvcc >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  nvcc -cubin -O3 --fmad=false -arch=native -o "$tmp/baseline.cubin" "$here/baseline.cu" && cubin=$tmp/baseline.cubin
fi
run gpu "$build/bench_gpu" --csv "$out/gpu-$host.csv" $cubin
py=$(command -v python3 || command -v python || true)
: > "$tmp/peers"
if [ -n "$py" ] && [ -s "$out/gpu-$host.csv" ] && "$py" -c 'import cupy' 2>/dev/null; then
  "$py" "$here/peers.py" "$out/gpu-$host.csv" "$tmp/peers" "$out/peers-$host.csv" >/dev/null ||
    echo "bench/peers.py failed (its message is in the log): no peer columns." > "$tmp/peers"
else
  echo "No python3 with CuPy here: the CuPy and Triton columns were not measured." > "$tmp/peers"
fi
run graph "$build/bench_graph"
run access "$build/bench_access"
compile_results
{ header "GPU benchmarks: $host"
  echo "## Eight workloads against hand-written CUDA and the copy bandwidth (bench_gpu)"
  echo
  cat "$tmp/gpu"
  echo
  echo "## The same workloads in CuPy and Triton (bench/peers.py)"
  echo
  cat "$tmp/peers"
  echo
  echo "## Many tiny launches: streams and graphs (bench_graph)"
  echo
  cat "$tmp/graph"
  echo
  echo "## Access-mode cost per CPU launch (bench_access)"
  echo
  echo '```'
  cat "$tmp/access"
  echo '```'; } > "$out/gpu-$host.md"
{ echo "section,row,column,value,note"
  md_to_csv graph < "$tmp/graph"
  md_to_csv access < "$tmp/access"; } > "$out/graph-$host.csv"
if [ ! -s "$out/gpu-$host.csv" ]; then
  echo "bench/run.sh: no GPU results: plot skipped" >&2
elif [ -n "$py" ] && "$py" -c 'import matplotlib' 2>/dev/null; then
  "$py" "$here/plot.py" --gpu "$out/gpu-$host.csv" "$out/peers-$host.csv" "$out/gpu-$host.png"
else
  echo "bench/run.sh: no python3 with matplotlib: plot skipped (pip install matplotlib)" >&2
fi
cat "$out/gpu-$host.md" "$out/compile-$host.md"
echo "results: $out/gpu-$host.md .csv .png, peers-$host.csv, graph-$host.csv, compile-$host.md .csv" >&2
