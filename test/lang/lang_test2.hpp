// test/lang/lang_test2.hpp — small helpers for the reduce/dot/random/control/debug tests.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <tile/tile.hpp>
#include <vector>

using namespace tile::literals;

namespace lt2 {
inline tile::device dev() { return tile::device::get("interpreter"); }

template <class T>
std::vector<T> random_vec(std::size_t n, unsigned seed, double lo = -4, double hi = 4) {
  std::mt19937 g(seed);
  std::vector<T> v(n);
  if constexpr (std::is_integral_v<T>) {
    std::uniform_int_distribution<long long> d(static_cast<long long>(lo), static_cast<long long>(hi));
    for (auto& x : v) x = static_cast<T>(d(g));
  } else {
    std::uniform_real_distribution<double> d(lo, hi);
    for (auto& x : v) x = static_cast<T>(static_cast<float>(d(g)));
  }
  return v;
}

/// Round an f32 to tf32 (10 mantissa bits, nearest even), as the interpreter does for dot.
inline float tf32(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7f800000u) == 0x7f800000u) return f;
  u += 0xfffu + ((u >> 13) & 1u);
  u &= 0xffffe000u;
  std::memcpy(&f, &u, 4);
  return f;
}
}  // namespace lt2
