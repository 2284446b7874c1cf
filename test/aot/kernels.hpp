// test/aot/kernels.hpp — the kernels the ahead-of-time tests build (kernels_gen.cpp) and launch
// (test_aot.cpp): one header, as a program and its build step share one.
#pragma once

#include "tile/tile.hpp"

namespace aot_test {

inline auto add = tile::kernel("aot_add", [](tl::ptr<float> x, tl::ptr<float> y, tl::ptr<float> out, tl::i32 n,
                                             tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs < n;
  tl::store(out + offs, tl::load(x + offs, mask) + tl::load(y + offs, mask), mask);
});

// a row reduction with large tiles (scratch memory on the CPU) and a device-side check
inline auto row_sum = tile::kernel("aot_row_sum", [](tl::ptr<float> in, tl::ptr<float> out, tl::i32 cols,
                                                     tl::constexpr_<"BLOCK"> BLOCK) {
  auto row = tl::program_id(0);
  auto offs = tl::arange(0, BLOCK);
  auto v = tl::load(in + row * cols + offs, offs < cols, 0.0f);
  tl::device_assert(cols > 0, "cols must be positive");
  tl::store(out + row, tl::sum(v, 0));
});

// tensor descriptors: the CPU runs them as masked loads, lowered before compiling
inline auto desc_copy = tile::kernel("aot_desc_copy", [](tl::ptr<float> in, tl::ptr<float> out, tl::i32 rows,
                                                         tl::i32 cols, tl::constexpr_<"BR"> BR, tl::constexpr_<"BC"> BC) {
  auto src = tl::make_tensor_descriptor(in, {rows, cols}, {cols, 1}, {BR, BC});
  auto dst = tl::make_tensor_descriptor(out, {rows, cols}, {cols, 1}, {BR, BC});
  auto r = tl::program_id(0) * BR, c = tl::program_id(1) * BC;
  dst.store({r, c}, src.load({r, c}) * 2.0f);
});

// autotuned: the build step tunes it on the CPU and ships the choice
inline auto scale_kernel = tile::kernel("aot_scale", [](tl::ptr<float> x, tl::ptr<float> out, tl::i32 n,
                                                        tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  tl::store(out + offs, 3.0f * tl::load(x + offs, offs < n), offs < n);
});
inline auto scale = tile::autotune(scale_kernel, {.configs = {tile::config({{"BLOCK", 128}}, 4, 1),
                                                              tile::config({{"BLOCK", 512}}, 4, 1)},
                                                  .key = {"n"},
                                                  .arg_names = {"x", "out", "n"},
                                                  .warmup_ms = 1,
                                                  .rep_ms = 5});
inline tile::grid3 scale_grid(const tile::meta& m, int n) { return {tile::cdiv(n, static_cast<int>(m["BLOCK"]))}; }

}  // namespace aot_test
