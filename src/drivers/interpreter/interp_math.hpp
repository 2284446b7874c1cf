// src/drivers/interpreter/interp_math.hpp — layer: drivers (interpreter). Elementwise ops
// (arithmetic, comparisons, math functions, casts, select, fma) on interpreter values.
#pragma once

#include "drivers/interpreter/interp_values.hpp"

namespace tile::interp {

/// Applies the elementwise op `op` to `in` (operands in op order). Operands holding one element
/// broadcast against longer ones (the combine regions of reductions run on whole slices).
/// Throws tile::error for kinds that are not elementwise.
Val elementwise(const ir::Op& op, const std::vector<const Val*>& in);

}  // namespace tile::interp
