// test/drivers/row_softmax.hpp — the bandwidth bench's softmax (bench/kernels.hpp's, tile's
// default numerics), one program a row, under a name of the test's: the kernel whose registers
// the register-lean retry (TILE_OCCUPANCY_RETRY) exists for. At 8192 columns on 16 warps, 16
// exps a thread: 47 registers with exp in batches of 16 (2 blocks of 512 threads an SM on sm_90),
// 40 in 2s (3 blocks), with CUDA 13's ptxas and on an H100 (driver 580). The same kernel with the
// row's offset computed as program_id * n takes 42 in 2s: still 2 blocks, so the default stays.
#pragma once

#include <tile/tile.hpp>

inline auto make_row_softmax(const char* name) {
  return tile::kernel(name, [](tl::ptr<float> out, tl::ptr<float> in, tl::i32 stride, tl::i32 n,
                               tl::constexpr_<"BLOCK"> BLOCK) {
    auto row = tl::program_id(0);
    auto cols = tl::arange(0, BLOCK);
    auto x = tl::load(in + row * stride + cols, cols < n, -tl::inf<float>());
    auto e = tl::exp(x - tl::max(x, 0));
    tl::store(out + row * stride + cols, e / tl::sum(e, 0), cols < n);
  });
}
