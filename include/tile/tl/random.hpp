// tile/tl/random.hpp — layer: language (public). Counter-based random numbers (Philox 4x32-10),
// seeded like Triton's tl.rand/tl.randn/tl.randint: the same (seed, offset) gives the same
// number on every backend. Written in the tile language itself, as Triton writes its own.
#pragma once

#include <array>

#include "tile/tl/creation.hpp"
#include "tile/tl/math.hpp"

namespace tl {

namespace detail {
inline std::array<tensor, 4> philox(const operand& seed, tensor c0, tensor c1, tensor c2, tensor c3,
                                    int rounds) {
  const tile::src_loc l = seed.loc;
  using u32_t = std::uint32_t;
  tensor s = cast(seed, tile::dtype::u64);
  tensor k0 = cast(operand::of(s & operand::of(std::uint64_t{0xffffffffu}, l), l), tile::dtype::u32);
  tensor k1 = cast(operand::of(operand::of(s >> operand::of(32, l), l) & operand::of(std::uint64_t{0xffffffffu}, l), l),
                   tile::dtype::u32);
  const operand ra = operand::of(u32_t{0xD2511F53u}, l), rb = operand::of(u32_t{0xCD9E8D57u}, l);
  const operand ka = operand::of(u32_t{0x9E3779B9u}, l), kb = operand::of(u32_t{0xBB67AE85u}, l);
  for (int i = 0; i < rounds; ++i) {
    tensor p0 = c0, p2 = c2;
    c0 = umulhi(rb, operand::of(p2, l)) ^ c1 ^ k0;
    c2 = umulhi(ra, operand::of(p0, l)) ^ c3 ^ k1;
    c1 = rb * operand::of(p2, l);
    c3 = ra * operand::of(p0, l);
    k0 = operand::of(k0, l) + ka;
    k1 = operand::of(k1, l) + kb;
  }
  return {c0, c1, c2, c3};
}
inline tensor uint_to_uniform_float(const operand& x) {
  const tile::src_loc l = x.loc;
  tensor i = bitcast<std::int32_t>(x);
  i = where(operand::of(i < operand::of(0, l), l), operand::of(-i - operand::of(1, l), l), i);
  return operand::of(i, l) * operand::of(4.6566127342e-10f, l);
}
}  // namespace detail

/// Four blocks of 32 random bits (u32 tiles shaped like `offset`) for (seed, offset).
inline std::array<tensor, 4> randint4x(const operand& seed, const operand& offset, int rounds = 10) {
  tensor c0 = cast(offset, tile::dtype::u32);
  tensor z = zeros_like(c0, std::source_location{});
  return detail::philox(seed, c0, z, z, z, rounds);
}
/// 32 random bits (u32) for each offset.
inline tensor randint(const operand& seed, const operand& offset, int rounds = 10) {
  return randint4x(seed, offset, rounds)[0];
}
/// Uniform f32 in [0, 1) for each offset.
inline tensor rand(const operand& seed, const operand& offset, int rounds = 10) {
  return detail::uint_to_uniform_float(operand::of(randint(seed, offset, rounds), seed.loc));
}
/// Standard normal f32 for each offset (Box–Muller on two uniforms).
inline tensor randn(const operand& seed, const operand& offset, int rounds = 10) {
  const tile::src_loc l = seed.loc;
  auto r = randint4x(seed, offset, rounds);
  tensor u1 = detail::uint_to_uniform_float(operand::of(r[0], l));
  tensor u2 = detail::uint_to_uniform_float(operand::of(r[1], l));
  u1 = maximum(operand::of(1.0e-7f, l), operand::of(u1, l));
  tensor th = operand::of(6.283185307179586f, l) * operand::of(u2, l);
  tensor rad = sqrt(operand::of(operand::of(-2.0f, l) * operand::of(log(operand::of(u1, l)), l), l));
  return operand::of(rad, l) * operand::of(cos(operand::of(th, l)), l);
}

}  // namespace tl
