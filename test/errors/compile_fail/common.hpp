// test/errors/compile_fail/common.hpp — kernels the compile-fail cases launch wrongly. Each case
// is one small translation unit whose first line names the text its compile error must contain.
#pragma once
#include <cstdint>
#include <tile/tile.hpp>
using namespace tile::literals;

inline auto copy = tile::kernel("copy", [](tl::ptr<float> src, tl::ptr<float> dst, tl::i32 n,
                                           tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  tl::store(dst + offs, tl::load(src + offs, offs < n), offs < n);
});

inline auto count = tile::kernel("count", [](tl::ptr<std::int32_t> counts, tl::i32 n) {
  auto offs = tl::arange(0, 16);
  tl::atomic_add(counts + offs, 1, offs < n);
});
