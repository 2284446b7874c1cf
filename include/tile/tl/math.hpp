// tile/tl/math.hpp — layer: language (public). Elementwise functions. Operands broadcast
// against each other and promote like Triton's (see docs/LANGUAGE.md).
#pragma once

#include "tile/tl/types.hpp"

namespace tl {

#define TILE_TL_UNARY(fn, op)                                          \
  inline tensor fn(const operand& x) {                                 \
    return tensor(tile::detail::unary(tile::detail::unop::op, x.d, x.loc)); \
  }
TILE_TL_UNARY(exp, exp)
TILE_TL_UNARY(exp2, exp2)
TILE_TL_UNARY(log, log)
TILE_TL_UNARY(log2, log2)
TILE_TL_UNARY(sqrt, sqrt)
TILE_TL_UNARY(rsqrt, rsqrt)
TILE_TL_UNARY(sin, sin)
TILE_TL_UNARY(cos, cos)
TILE_TL_UNARY(abs, abs)
TILE_TL_UNARY(floor, floor)
TILE_TL_UNARY(ceil, ceil)
TILE_TL_UNARY(erf, erf)
#undef TILE_TL_UNARY

/// Elementwise minimum/maximum; for floats a NaN operand yields the other one (IEEE minNum).
inline tensor minimum(const operand& a, const operand& b) {
  return tensor(tile::detail::binary(tile::detail::binop::minimum, a.d, b.d, a.loc));
}
inline tensor maximum(const operand& a, const operand& b) {
  return tensor(tile::detail::binary(tile::detail::binop::maximum, a.d, b.d, a.loc));
}
/// min(max(x, lo), hi).
inline tensor clamp(const operand& x, const operand& lo, const operand& hi) {
  return minimum(operand::of(maximum(x, lo), x.loc), hi);
}
/// c ? a : b, elementwise, with broadcasting.
inline tensor where(const operand& c, const operand& a, const operand& b) {
  return tensor(tile::detail::select(c.d, a.d, b.d, c.loc));
}
/// a / b as Triton's `/` computes it on f32 (PTX div.full.f32: at most 2 ulp from the IEEE
/// quotient for divisors of magnitude 2^-126 … 2^126) on the NVIDIA backend, f16/bf16 too (they
/// compute in f32); the IEEE quotient on the other backends and for f64. Floats only. For
/// kernels that want Triton's numerics (and speed) where `/` is exact.
inline tensor fast_div(const operand& a, const operand& b) {
  return tensor(tile::detail::binary(tile::detail::binop::div_approx, a.d, b.d, a.loc));
}
/// sqrt(x) as Triton's tl.sqrt computes it on f32 (PTX sqrt.approx.f32, relative error at most
/// 2^-23) on the NVIDIA backend, f16/bf16 too; the IEEE square root on the other backends and
/// for f64.
inline tensor fast_sqrt(const operand& x) {
  return tensor(tile::detail::unary(tile::detail::unop::sqrt_approx, x.d, x.loc));
}
/// e^x as Triton's tl.exp computes it on f32 (PTX ex2.approx.f32 of x·log2 e: about 2 ulp plus
/// the product's rounding, |x|·2^-24 relative, where tile's exp puts that rounding back) on the
/// NVIDIA backend, f16/bf16 too; exp itself on the other backends and for f64.
inline tensor fast_exp(const operand& x) {
  return tensor(tile::detail::unary(tile::detail::unop::exp_approx, x.d, x.loc));
}
/// a * b + c with one rounding.
inline tensor fma(const operand& a, const operand& b, const operand& c) {
  return tensor(tile::detail::fma(a.d, b.d, c.d, a.loc));
}
/// 1 / (1 + exp(-x)).
inline tensor sigmoid(const operand& x) {
  tensor e = exp(operand::of(-x, x.loc));
  return operand::of(1.0, x.loc) / operand::of(operand::of(1.0, x.loc) + operand::of(e, x.loc), x.loc);
}
/// The high 32 (or 64) bits of the full product of two integers.
inline tensor umulhi(const operand& a, const operand& b) {
  return tensor(tile::detail::binary(tile::detail::binop::umulhi, a.d, b.d, a.loc));
}
/// Integer ceiling division (a + b - 1) / b, for tensors or trace-time integers.
inline tensor cdiv(const operand& a, const operand& b) {
  tensor s = operand::of(a + b, a.loc) - operand::of(1, a.loc);
  return operand::of(s, a.loc) / b;
}
template <class A, class B>
  requires std::is_integral_v<A> && std::is_integral_v<B>
constexpr auto cdiv(A a, B b) {
  return (a + b - 1) / b;
}

}  // namespace tl
