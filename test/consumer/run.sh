#!/usr/bin/env bash
# test/consumer/run.sh BUILD_DIR — install tile from BUILD_DIR into a scratch tree and build a
# tiny consumer against it with CMake (find_package(tile), shared and static) and with
# pkg-config; run all three.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dest=$work/dest
meson install -C "$build" --destdir "$dest" --quiet >/dev/null
prefix=$(meson introspect "$build" --buildoptions | python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"][0])')
libdir=$(meson introspect "$build" --buildoptions | python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="libdir"][0])')
inst=$dest$prefix

echo "consumer: CMake find_package(tile)"
cmake -S "$root/test/consumer" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$inst" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/cmake" -j2 >/dev/null
LD_LIBRARY_PATH="$inst/$libdir" "$work/cmake/consumer"
"$work/cmake/consumer_static"

echo "consumer: pkg-config tile"
export PKG_CONFIG_PATH="$inst/$libdir/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$dest"
# shellcheck disable=SC2046
c++ -std=c++20 "$root/test/consumer/main.cpp" $(pkg-config --cflags --libs tile) -o "$work/pkgconfig_consumer"
LD_LIBRARY_PATH="$inst/$libdir" "$work/pkgconfig_consumer"
