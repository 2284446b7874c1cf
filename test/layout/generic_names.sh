#!/bin/sh
# test/layout/generic_names.sh SRC_DIR — the generic GPU layers name no NVIDIA instruction in
# their code: IR, analyses, passes, the GPU passes (layout), scheduling and the GPU lowering
# (codegen/gpu) reach tensor cores, asynchronous copies and barriers through the target's
# interface (codegen/gpu/gpu_target.hpp: its core and its engines); NVIDIA's forms live in
# targets/nvptx. Comments (// …) are not code: they may cite an NVIDIA instruction as the
# example of what an interface does. The same search over targets/nvptx must find the names
# (else the pattern is broken and the test proves nothing).
set -eu
src=$1
pattern='mma\.sync|wgmma|ldmatrix|cp\.async|cp_async|mbarrier|(^|[^a-z_])tma([^a-z_]|$)|tma_|bar\.sync|shfl|nvvm|(^|[^a-z_])ptx|nvptx|cuda'
code() {  # every line of the C++ files under $1 without its // comment, as file:line: text
  find "$1" -name '*.cpp' -o -name '*.hpp' -o -name '*.def' | sort | while read -r f; do
    sed 's#//.*##' "$f" | grep -n . | sed "s#^#$f:#"
  done
}
hits=$(for d in ir analysis transforms layout schedule codegen/gpu; do code "$src/$d"; done | grep -iE "$pattern" || true)
if [ -n "$hits" ]; then
  echo "NVIDIA instructions named in the generic GPU layers' code:"
  echo "$hits"
  exit 1
fi
found=$(code "$src/targets/nvptx" | grep -ciE "$pattern" || true)
if [ "$found" -lt 20 ]; then
  echo "the pattern finds only $found lines in targets/nvptx: broken"
  exit 1
fi
echo "no NVIDIA instruction in the code of src/{ir,analysis,transforms,layout,schedule,codegen/gpu}; $found lines of targets/nvptx name them"
