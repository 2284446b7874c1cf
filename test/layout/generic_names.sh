#!/bin/sh
# test/layout/generic_names.sh SRC_DIR — the generic GPU layers name no NVIDIA instruction, in
# code or comments: IR, analyses, passes, the GPU passes (layout), scheduling and the GPU lowering
# (codegen/gpu) reach tensor cores, asynchronous copies and barriers through the target's
# interface (codegen/gpu/gpu_target.hpp: its core and its engines), and the layout algebra
# (support/linear_layout) knows no instruction's layout. Such names (the instructions, their
# assembler, NVIDIA's target and driver) belong in targets/nvptx alone. The same search over
# targets/nvptx must find the names (else the pattern is broken and the test proves nothing).
set -eu
src=$1
pattern='ld\.global|st\.global|ld\.shared|st\.shared|cvt\.rn|mma\.sync|wgmma|ldmatrix|cp\.async|cp_async|mbarrier|(^|[^a-z_])tma([^a-z_]|$)|tma_|bar\.sync|shfl|__assertfail|nvvm|(^|[^a-z_])ptx|nvptx|cuda'
lines() {  # every line of the C++ files under $1, comments included, as file:line: text
  find "$1" -name '*.cpp' -o -name '*.hpp' -o -name '*.def' | sort | while read -r f; do
    grep -n . "$f" | sed "s#^#$f:#"
  done
}
generic="ir analysis transforms layout schedule codegen/gpu support/linear_layout.hpp support/linear_layout.cpp"
hits=$(for d in $generic; do lines "$src/$d"; done | grep -iE "$pattern" || true)
if [ -n "$hits" ]; then
  echo "NVIDIA instructions named in the generic GPU layers (code or comments):"
  echo "$hits"
  exit 1
fi
found=$(lines "$src/targets/nvptx" | grep -ciE "$pattern" || true)
if [ "$found" -lt 20 ]; then
  echo "the pattern finds only $found lines in targets/nvptx: broken"
  exit 1
fi
echo "no NVIDIA instruction in the code or comments of src/{ir,analysis,transforms,layout,schedule,codegen/gpu} and the layout algebra; $found lines of targets/nvptx name them"
