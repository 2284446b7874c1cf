// src/targets/nvptx/nvptx_mma_layouts.cpp — layer: targets (nvptx). See nvptx_mma_layouts.hpp.
#include "targets/nvptx/nvptx_mma_layouts.hpp"

#include <bit>

namespace tile::targets::nvptx {

using layout::Coords;
using layout::LinearLayout;

namespace {
int log2i(std::int64_t x) { return std::countr_zero(static_cast<std::uint64_t>(x)); }
/// The warp bases: log2(wm) bits along M (steps of m_step), log2(wn) along N (steps of n_step),
/// the rest zero (copies). An axis a warp does not split (m_axis / n_axis < 0) gets zero bases.
std::vector<Coords> mma_warp_bases(std::array<int, 2> warps, int num_warps, int m_axis, std::int64_t m_step,
                                   int n_axis, std::int64_t n_step) {
  std::vector<Coords> w;
  for (int i = 0; i < log2i(warps[0]); ++i) {
    Coords c{0, 0};
    if (m_axis >= 0) c[static_cast<std::size_t>(m_axis)] = m_step << i;
    w.push_back(c);
  }
  for (int i = 0; i < log2i(warps[1]); ++i) {
    Coords c{0, 0};
    if (n_axis >= 0) c[static_cast<std::size_t>(n_axis)] = n_step << i;
    w.push_back(c);
  }
  while (static_cast<int>(w.size()) < log2i(num_warps)) w.push_back({0, 0});
  return w;
}
}  // namespace

std::array<int, 2> mma_warps(std::int64_t M, std::int64_t N, int num_warps) {
  // Triton's warpsPerTile for version 2: split the larger side (in fragments) first, never
  // more warps along an axis than it has fragments
  std::array<int, 2> w{1, 1};
  while (w[0] * w[1] < num_warps) {
    const std::int64_t fm = M / 16 / w[0], fn = N / 8 / w[1];
    if (fm >= fn && fm > 1)
      w[0] *= 2;
    else if (fn > 1)
      w[1] *= 2;
    else if (fm > 1)
      w[0] *= 2;
    else
      break;  // the tile has fewer fragments than warps: the rest hold copies
  }
  return w;
}

LinearLayout mma_v2(std::int64_t M, std::int64_t N, std::array<int, 2> warps, int num_warps) {
  LinearLayout l;
  l.shape = {M, N};
  l.reg = {{0, 1}, {8, 0}};
  for (std::int64_t s = 8 * warps[1]; s < N; s *= 2) l.reg.push_back({0, s});
  for (std::int64_t s = 16 * warps[0]; s < M; s *= 2) l.reg.push_back({s, 0});
  l.lane = {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}};
  l.warp = mma_warp_bases(warps, num_warps, 0, 16, 1, 8);
  return l;
}

LinearLayout mma_v2_operand(int op_idx, std::int64_t rows, std::int64_t cols, std::array<int, 2> warps,
                            int num_warps, int kwidth) {
  // within a fragment: kwidth consecutive k in a register's low bits, lanes t = lane % 4 step k
  // by kwidth, lanes g = lane / 4 step the row (A) or column (B); the second half of the
  // fragment's k (+4 kwidth) and, for A, its rows + 8 in further register bits
  const std::int64_t kw = kwidth, kfrag = 8 * kw;
  LinearLayout l;
  l.shape = {rows, cols};
  if (op_idx == 0) {  // A: M x K
    for (std::int64_t s = 1; s < kw; s *= 2) l.reg.push_back({0, s});
    l.reg.push_back({8, 0});
    l.reg.push_back({0, 4 * kw});
    for (std::int64_t s = kfrag; s < cols; s *= 2) l.reg.push_back({0, s});
    for (std::int64_t s = 16 * warps[0]; s < rows; s *= 2) l.reg.push_back({s, 0});
    l.lane = {{0, kw}, {0, 2 * kw}, {1, 0}, {2, 0}, {4, 0}};
    l.warp = mma_warp_bases(warps, num_warps, 0, 16, -1, 0);
  } else {  // B: K x N
    for (std::int64_t s = 1; s < kw; s *= 2) l.reg.push_back({s, 0});
    l.reg.push_back({4 * kw, 0});
    for (std::int64_t s = kfrag; s < rows; s *= 2) l.reg.push_back({s, 0});
    for (std::int64_t s = 8 * warps[1]; s < cols; s *= 2) l.reg.push_back({0, s});
    l.lane = {{kw, 0}, {2 * kw, 0}, {0, 1}, {0, 2}, {0, 4}};
    l.warp = mma_warp_bases(warps, num_warps, -1, 0, 1, 8);
  }
  return l;
}

}  // namespace tile::targets::nvptx
