#!/bin/sh
# run.sh BUILD SECONDS [TARGET...]: runs each libFuzzer target built in BUILD
# for SECONDS, starting from every .kern file of tests/kern and examples/.
#
# Requires: the targets built (make fuzz does that). Produces, under BUILD:
# fuzz-seeds/ (the fixtures, copied flat), fuzz-corpus/TARGET/ (what the
# fuzzer learned; kept between runs), fuzz-findings/ (crash-*, timeout-*,
# leak-* inputs and one log per target), and a summary line per target with
# its executions and executions per second. Exits 1 if any target found
# something, so `make fuzz` fails on findings.
set -u

build=${1:?usage: run.sh BUILD SECONDS [TARGET...]}
seconds=${2:-60}
if [ $# -ge 2 ]; then shift 2; else shift $#; fi
targets=${*:-"fuzz_frontend fuzz_codegen fuzz_module"}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "$build" && pwd)

seeds=$build/fuzz-seeds
findings=$build/fuzz-findings
mkdir -p "$seeds" "$findings"
find "$root/tests/kern" "$root/examples" -name '*.kern' | while read -r f; do
  rel=${f#"$root"/}
  cp "$f" "$seeds/$(printf '%s' "$rel" | tr / _)"
done
# Fixtures that import, with what they import appended as `//@file NAME`
# sections: fuzz_frontend and fuzz_codegen read imports from the input itself.
grep -rl --include='*.kern' '^ *import' "$root/tests/kern" "$root/examples" | while read -r f; do
  dir=$(dirname "$f")
  out="$seeds/multi_$(printf '%s' "${f#"$root"/}" | tr / _)"
  cp "$f" "$out"
  for g in $(sed -n 's/^ *import *"\([^"]*\)".*/\1/p' "$f") $(cd "$dir" && ls lib/*.kern 2>/dev/null); do
    [ -f "$dir/$g" ] && printf '\n//@file %s\n' "$g" >>"$out" && cat "$dir/$g" >>"$out"
  done
done

status=0
for t in $targets; do
  corpus=$build/fuzz-corpus/$t
  log=$findings/$t.log
  mkdir -p "$corpus"
  echo "fuzz: $t for ${seconds}s (log: $log)"
  # -timeout: an input that takes 10 s is a hang worth keeping.
  (cd "$build" && "./$t" "$corpus" "$seeds" -dict="$here/kern.dict" \
     -max_len=65536 -timeout=10 -max_total_time="$seconds" -print_final_stats=1 \
     -artifact_prefix="$findings/$t-" >"$log" 2>&1)
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
  echo "fuzz: $t: ${execs:-?} execs, ${rate:-?} exec/s, $cov, exit $rc"
  if [ "$rc" -ne 0 ]; then
    status=1
    grep -m 3 -E 'ERROR: |SUMMARY: |Test unit written to' "$log" | sed 's/^/fuzz:   /'
  fi
done
ls "$findings" | grep -v '\.log$' | sed "s|^|fuzz: finding: $findings/|"
exit $status
