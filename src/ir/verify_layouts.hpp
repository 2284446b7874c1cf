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

}  // namespace tile::ir
