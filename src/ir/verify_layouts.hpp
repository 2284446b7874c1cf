// src/ir/verify_layouts.hpp — layer: ir. The verifier's rules for layouts (the GPU level); see
// verify_layouts.cpp. Each returns "" when the rule holds, else the rule broken (with the types).
#pragma once

#include <string>

#include "ir/ir.hpp"

namespace tile::ir {

/// A value's type in `f`: a tile at the GPU level has a layout of its extents for f.num_warps
/// warps and `lane_bits` lane bases (-1: not seen yet, set by the first tile); nothing else has
/// one.
std::string gpu_type_rule(const Function& f, const Type& t, int& lane_bits);
/// Which layouts `op`'s operands, results and regions must share (GPU level); in tile IR, that
/// `op` is not of the GPU level.
std::string gpu_op_rule(const Function& f, const Op& op);
/// The operand elements a 32-bit tensor-core register of `dot` holds (layout::mma_kwidth): 2
/// for f16/bf16 into f32, 4 for 8-bit integers into i32, 1 for f32 at tf32 precision into f32;
/// 0 when no tensor-core form takes the dot's types.
int mma_operand_elements(const Op& dot);

}  // namespace tile::ir
