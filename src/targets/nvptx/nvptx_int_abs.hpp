// src/targets/nvptx/nvptx_int_abs.hpp — layer: targets (nvptx). Integer abs without PTX's abs.
#pragma once

namespace llvm {
class Module;
}

namespace tile::targets::nvptx {

/// Rewrites every llvm.abs in `m` (tl::abs of a signed integer, or a pattern LLVM folded into
/// one) as max(x, -x) with the negation hidden from LLVM, so the NVPTX backend emits neg and max
/// instead of abs.sN. ptxas (CUDA 12 and 13, sm_90) treats abs.sN's result as never negative
/// and folds what reads its sign: abs(MIN), which is MIN, compared below 0 gives false, and
/// converted to a float gives +2^(N-1). max(MIN, -MIN) is MIN, and ptxas does not reason about
/// its sign. Run after the optimization pipeline (which would fold the form back into
/// llvm.abs), before the PTX is emitted.
void expand_integer_abs(llvm::Module& m);

}  // namespace tile::targets::nvptx
