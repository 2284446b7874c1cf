// test/consumer/aot_kernels.hpp — the kernel the ahead-of-time consumers share: aot_gen.cpp
// lists its launch, aot_main.cpp makes it.
#pragma once

#include <tile/tile.hpp>

inline auto consumer_axpy = tile::kernel("consumer_axpy", [](tl::ptr<float> x, tl::ptr<float> y, tl::f32 a, tl::i32 n,
                                                             tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs < n;
  tl::store(y + offs, a * tl::load(x + offs, mask) + tl::load(y + offs, mask), mask);
});
