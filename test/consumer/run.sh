#!/usr/bin/env bash
# test/consumer/run.sh [BUILD_DIR] — the install check (scripts/test runs it; it is not a meson
# test because it needs an installed tree). Installs tile from BUILD_DIR (default build/) into a
# scratch tree with `meson install --destdir`, then builds test/consumer/main.cpp against it
#   1. with CMake: find_package(tile REQUIRED), tile::tile (shared) and tile::tile_static; and
#      aot_main.cpp with tile::tile_rt, its kernel compiled by tile_aot_kernels (aot_gen.cpp);
#   2. with pkg-config: c++ main.cpp $(pkg-config --cflags --libs tile);
#   3. with Meson, tile as a subproject (subprojects/tile.wrap, wrap-git of this repository):
#      main.cpp with dependency('tile'), aot_main.cpp with dependency('tile_rt') and the object
#      aot_gen (dependency('tile')) writes;
# runs the programs and checks that each prints "consumer OK". Also checks that the
# installed package files carry no warning flags or -Werror. Set KEEP=1 to keep the scratch tree.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/tile-consumer.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then echo "consumer: scratch tree kept in $work"; else trap 'rm -rf "$work"' EXIT; fi
dest=$work/dest

fail() { echo "consumer: FAILED: $*" >&2; exit 1; }
option() {  # the value of one of BUILD_DIR's meson options
  meson introspect "$build" --buildoptions |
    python3 -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == sys.argv[1]))' "$1"
}
expect_ok() {  # label, program…: run it, require "consumer OK"
  local label=$1 out
  shift
  if ! out=$("$@" 2>&1); then
    printf '%s\n' "$out"
    fail "$label exited with an error"
  fi
  printf '%s\n' "$out"
  grep -qx 'consumer OK' <<<"$out" || fail "$label did not print 'consumer OK'"
  echo "consumer: $label OK"
}

# Build only what gets installed (the libraries), so a test that fails to compile elsewhere in
# BUILD_DIR does not stop this check; then install without the full rebuild.
mapfile -t installed < <(meson introspect "$build" --targets | python3 -c '
import json, os, sys
for t in json.load(sys.stdin):
    if t["installed"]:
        print(*(os.path.relpath(f, sys.argv[1]) for f in t["filename"]), sep="\n")
' "$build")
((${#installed[@]})) || fail "BUILD_DIR installs no targets"
ninja -C "$build" "${installed[@]}" >/dev/null || fail "building ${installed[*]}"
echo "consumer: meson install -C $build --destdir $dest"
meson install -C "$build" --no-rebuild --destdir "$dest" --quiet >/dev/null || fail "meson install"
prefix=$(option prefix)
libdir=$(option libdir)
case $libdir in /*) ;; *) libdir=$prefix/$libdir ;; esac
inst=$dest$prefix
lib=$dest$libdir

[ -f "$inst/include/tile/tile.hpp" ] || fail "no include/tile/tile.hpp installed"
[ -f "$lib/pkgconfig/tile.pc" ] || fail "no tile.pc installed"
[ -f "$lib/cmake/tile/tileConfig.cmake" ] || fail "no tileConfig.cmake installed"
[ -f "$lib/cmake/tile/tileConfigVersion.cmake" ] || fail "no tileConfigVersion.cmake installed"
if grep -nE -- '-W[a-z]|/W[0-9]|COMPILE_OPTIONS|COMPILE_DEFINITIONS' \
    "$lib/pkgconfig/tile.pc" "$lib/cmake/tile/"*.cmake; then
  fail "the installed package files would pass compiler flags on to embedders"
fi

echo "consumer: CMake find_package(tile)"
if ! cmake -S "$here" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$inst" -DCMAKE_BUILD_TYPE=Release \
    >"$work/cmake.log" 2>&1 || ! cmake --build "$work/cmake" -j 2 >>"$work/cmake.log" 2>&1; then
  cat "$work/cmake.log"
  fail "CMake build"
fi
expect_ok "CMake tile::tile" env LD_LIBRARY_PATH="$lib" "$work/cmake/consumer"
expect_ok "CMake tile::tile_static" "$work/cmake/consumer_static"
# The shared one loads the installed library (not one from the build tree); the static one none.
# (ldd's output is captured first: `ldd | grep -q` can fail with SIGPIPE under pipefail.)
deps=$(ldd "$work/cmake/consumer_static")
if grep -q 'libtile\.so' <<<"$deps"; then fail "consumer_static needs libtile.so"; fi
deps=$(LD_LIBRARY_PATH="$lib" ldd "$work/cmake/consumer")
grep -qF "$lib/libtile.so" <<<"$deps" || fail "consumer does not load the installed libtile.so: $deps"
# tile::tile_rt and tile_aot_kernels: the kernel compiled at build time, the program without LLVM
expect_ok "CMake tile::tile_rt + tile_aot_kernels" env LD_LIBRARY_PATH="$lib" "$work/cmake/consumer_rt"
deps=$(LD_LIBRARY_PATH="$lib" ldd "$work/cmake/consumer_rt")
grep -qF "$lib/libtile_rt.so" <<<"$deps" || fail "consumer_rt does not load the installed libtile_rt.so: $deps"
if grep -qE 'libtile\.so|libLLVM' <<<"$deps"; then fail "consumer_rt loads libtile.so or LLVM: $deps"; fi

echo "consumer: pkg-config tile"
export PKG_CONFIG_PATH="$lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$dest"
flags=$(pkg-config --cflags --libs tile) || fail "pkg-config --cflags --libs tile"
echo "consumer: pkg-config --cflags --libs tile: $flags"
# shellcheck disable=SC2086  # word splitting of the flags is intended
c++ "$here/main.cpp" $flags -o "$work/pkgconfig_consumer" || fail "pkg-config build"
expect_ok "pkg-config" env LD_LIBRARY_PATH="$lib" "$work/pkgconfig_consumer"
echo "consumer: Meson subproject('tile') through a wrap file"
# A clean checkout is cloned by the wrap (wrap-git, this repository, its HEAD); a working tree
# with changes is linked in instead, so what is tested is what is here.
mp=$work/meson-project
mkdir -p "$mp/subprojects"
cp "$here/meson/meson.build" "$here/main.cpp" "$here/aot_kernels.hpp" "$here/aot_gen.cpp" "$here/aot_main.cpp" "$mp/"
if [ -z "$(git -C "$root" status --porcelain 2>/dev/null)" ] && git -C "$root" rev-parse HEAD >/dev/null 2>&1; then
  printf '[wrap-git]\nurl = %s\nrevision = %s\ndepth = 1\n' "file://$root" "$(git -C "$root" rev-parse HEAD)" \
    >"$mp/subprojects/tile.wrap"
  echo "consumer: subprojects/tile.wrap: $(tr '\n' ' ' <"$mp/subprojects/tile.wrap")"
else
  ln -s "$root" "$mp/subprojects/tile"
  echo "consumer: the working tree has changes: subprojects/tile links to it (no wrap)"
fi
# debug: the subproject's libraries compile fastest unoptimized; the native file names LLVM 19
if ! meson setup "$work/meson-build" "$mp" --native-file "$root/scripts/native-llvm19.ini" -Dbuildtype=debug \
    >"$work/meson.log" 2>&1 || ! ninja -C "$work/meson-build" >>"$work/meson.log" 2>&1; then
  tail -50 "$work/meson.log"
  fail "Meson subproject build"
fi
expect_ok "Meson dependency('tile')" "$work/meson-build/consumer"
expect_ok "Meson dependency('tile_rt') + kernels built ahead of time" "$work/meson-build/consumer_rt"
deps=$(ldd "$work/meson-build/consumer_rt")
if grep -qE 'libtile\.so|libLLVM' <<<"$deps"; then fail "the Meson consumer_rt loads libtile.so or LLVM: $deps"; fi
echo "consumer: all OK"
