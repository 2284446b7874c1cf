#!/bin/sh
# test/samples/tensor_core_ptx.sh SAMPLE PTXAS [ALSO_SM90A] — a matmul sample's kernel, compiled by
# the null backend (no GPU) for sm_80 and sm_90a: its PTX must use the tensor cores of each
# (mma.sync m16n8k16 on sm_80, wgmma.mma_async on sm_90a, and no mma.sync there), contain
# ALSO_SM90A on sm_90a where given (the TMA copies of sample 07) and assemble with ptxas.
set -eu
sample=$1
ptxas=$2
also=${3:-}
fail() { echo "tensor_core_ptx: $*" >&2; exit 1; }
for spec in "sm_80 mma.sync.aligned.m16n8k16" "sm_90a wgmma.mma_async.sync.aligned"; do
  arch=${spec%% *}
  want=${spec#* }
  dir=$(mktemp -d "${TMPDIR:-/tmp}/tile-tc-ptx.XXXXXX")
  TILE_BACKEND=null TILE_TARGET=$arch TILE_DUMP_DIR=$dir TILE_CACHE=0 TILE_PTXAS=$ptxas "$sample" >/dev/null
  set -- "$dir"/*.ptx
  [ -f "$1" ] || fail "$arch: no PTX written under $dir"
  for ptx in "$@"; do
    grep -q "$want" "$ptx" || fail "$arch: $ptx has no $want"
    if [ "$arch" = sm_90a ] && grep -q "mma.sync" "$ptx"; then fail "$arch: $ptx still uses mma.sync"; fi
    if [ "$arch" = sm_90a ] && [ -n "$also" ]; then
      grep -q "$also" "$ptx" || fail "$arch: $ptx has no $also"
      echo "$arch: $(grep -c "$also" "$ptx") x $also"
    fi
    "$ptxas" -arch="$arch" "$ptx" -o "$dir/check.cubin" || fail "$arch: ptxas rejects $ptx"
    echo "$arch: $(grep -c "$want" "$ptx") x $want in $(basename "$ptx"), assembled by ptxas"
  done
  rm -rf "$dir"
done
