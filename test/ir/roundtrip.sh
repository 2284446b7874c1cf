#!/bin/sh
# test/ir/roundtrip.sh TEST_FUZZ IR_ROUNDTRIP [SEEDS] — the IR of random programs (the null backend
# for sm_90a, TILE_DUMP_DIR: the canonicalized tile IR of each, .tir, and its GPU level with
# layouts, .gtir, with locations) read back by ir::parse and printed again byte for byte
# (ir_roundtrip.cpp).
set -eu
fuzz=$1 roundtrip=$2 seeds=${3:-0:200}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
TILE_CACHE=0 TILE_TARGET=sm_90a TILE_DUMP_DIR="$dir" "$fuzz" --seeds "$seeds" --backends null >/dev/null
"$roundtrip" "$dir"/*.tir "$dir"/*.gtir
