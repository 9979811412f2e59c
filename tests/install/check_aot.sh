#!/bin/sh
# check_aot.sh BUILD_DIR SOURCE_DIR: installs kern into a temporary prefix and
# builds examples/aot (find_package(kern) + kern_add_kernels) against it, with
# Make and, when present, Ninja. The program must run with no C compiler, no
# NVRTC and an empty read-only cache (on cuda:0 too when a GPU is present), and
# touching an imported .kern file must rebuild the kernels. Then
# tests/install/embed (kern_embed_sources) with the same .kern files: the
# program must run where no .kern file is, and touching the import must run
# kernc embed again. Exits non-zero on any failure.
set -eu
build=$1 src=$2
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
for f in lib/cmake/kern/kern_add_kernels.cmake bin/kernc; do
  [ -e "$tmp/prefix/$f" ] || { echo "missing after install: $f"; exit 1; }
done
cp -r "$src/examples/aot" "$tmp/src"
mkdir "$tmp/cache"
chmod 500 "$tmp/cache"

for gen in "Unix Makefiles" Ninja; do
  if [ "$gen" = Ninja ] && ! command -v ninja >/dev/null 2>&1; then continue; fi
  dir="$tmp/build-$(echo "$gen" | tr -dc 'A-Za-z')"
  cmake -S "$tmp/src" -B "$dir" -G "$gen" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
  cmake --build "$dir" >"$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
  grep -q "kernc build particles.kern" "$tmp/log" || { echo "$gen: kernc build did not run"; cat "$tmp/log"; exit 1; }
  KERN_CC=false KERN_NVRTC= KERN_CACHE_DIR="$tmp/cache" "$dir/particles" cpu
  if [ -e /dev/nvidia0 ]; then
    KERN_CC=false KERN_NVRTC= KERN_CACHE_DIR="$tmp/cache" "$dir/particles" cuda:0
  fi
  [ -z "$(ls -A "$tmp/cache")" ] || { echo "$gen: the program wrote its cache"; exit 1; }
  # Nothing changed: no rebuild. An imported file changed: kernc runs again.
  cmake --build "$dir" >"$tmp/log" 2>&1
  if grep -q "kernc build" "$tmp/log"; then echo "$gen: kernels rebuilt with nothing changed"; exit 1; fi
  sleep 1
  touch "$tmp/src/physics.kern"
  cmake --build "$dir" >"$tmp/log" 2>&1
  grep -q "kernc build particles.kern" "$tmp/log" || { echo "$gen: touching physics.kern did not rebuild"; cat "$tmp/log"; exit 1; }
done
# kern_embed_sources: the source built in, compiled at run time.
mkdir "$tmp/embed-src" "$tmp/embed-cache"
cp "$src/tests/install/embed/"* "$src/examples/aot/particles.kern" "$src/examples/aot/physics.kern" \
  "$tmp/embed-src/"
dir="$tmp/build-embed"
cmake -S "$tmp/embed-src" -B "$dir" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$dir" >"$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
grep -q "kernc embed particles.kern" "$tmp/log" || { echo "embed: kernc embed did not run"; cat "$tmp/log"; exit 1; }
out=$(cd / && KERN_CACHE_DIR="$tmp/embed-cache" "$dir/embedded" cpu)
[ "$out" = "embed ok on cpu: particles.kern" ] || { echo "embed: the program said: $out"; exit 1; }
cmake --build "$dir" >"$tmp/log" 2>&1
if grep -q "kernc embed" "$tmp/log"; then echo "embed: rerun with nothing changed"; exit 1; fi
sleep 1
touch "$tmp/embed-src/physics.kern"
cmake --build "$dir" >"$tmp/log" 2>&1
grep -q "kernc embed particles.kern" "$tmp/log" || { echo "embed: touching physics.kern did not rerun kernc embed"; cat "$tmp/log"; exit 1; }
echo "aot package: ok"
