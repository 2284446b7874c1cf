// tile/tl/dot.hpp — layer: language (public). Matrix product of two 2-D tiles with an f32 (or,
// for 8-bit integers, i32) accumulator: the op tensor cores run.
#pragma once

#include "tile/tl/types.hpp"

namespace tl {

/// How f32 inputs are multiplied: tf32 (tensor-core speed, 10-bit mantissa; the default, as in
/// Triton), tf32x3 (three tf32 products, near-f32 accuracy) or ieee (exact f32 products).
using precision = tile::detail::precision;

/// acc + a @ b for a [M, K] and b [K, N] (M, N, K ≥ 16). Inputs f16, bf16, f32 (→ f32) or
/// i8/u8 (→ i32); both inputs share a dtype. Without `acc`, the product starts from zeros.
inline tensor dot(const operand& a, const operand& b, const operand& acc = {},
                  precision p = precision::tf32) {
  return tensor(tile::detail::dot(a.d, b.d, acc.d, p, a.loc));
}
inline tensor dot(const operand& a, const operand& b, precision p) {
  return tensor(tile::detail::dot(a.d, b.d, {}, p, a.loc));
}

}  // namespace tl
