// src/codegen/gpu/thread_bits.cpp — layer: codegen (gpu). See thread_bits.hpp.
#include "codegen/gpu/thread_bits.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>

namespace tile::codegen::gpu {

std::vector<BitRun> bit_runs(std::vector<std::pair<int, int>> moves, int id_bits) {
  std::sort(moves.begin(), moves.end());
  std::vector<BitRun> runs;
  for (std::size_t i = 0; i < moves.size();) {
    std::size_t j = i + 1;
    while (j < moves.size() && moves[j].first == moves[j - 1].first + 1 && moves[j].second == moves[j - 1].second + 1) ++j;
    BitRun r{moves[i].first, moves[i].second, static_cast<int>(j - i), false};
    const bool above = r.from + r.len < id_bits;  // the id has bits above the run
    // shifted right, the id's lowest from - to bits drop out and the rest below the run stay
    // unless `to` is 0; shifted left (or not at all), every bit below the run stays
    r.masked = above || (r.to < r.from ? r.to > 0 : r.from > 0);
    runs.push_back(r);
    i = j;
  }
  return runs;
}

std::optional<std::vector<std::pair<int, int>>> single_bit_moves(const layout::LinearLayout& l, int d) {
  if (l.lane.size() != 5) return std::nullopt;  // tid's bits are lane's, then warp's
  const auto ud = static_cast<std::size_t>(d);
  std::vector<std::pair<int, int>> moves;
  std::int64_t seen = 0;
  int i = 0;
  for (const auto* v : {&l.lane, &l.warp})
    for (const auto& bb : *v) {
      const std::int64_t b = bb.empty() ? 0 : bb[ud];
      if (b != 0) {
        if (!std::has_single_bit(static_cast<std::uint64_t>(b)) || (seen & b) || b > (std::int64_t(1) << 30)) return std::nullopt;
        seen |= b;
        moves.emplace_back(i, std::countr_zero(static_cast<std::uint64_t>(b)));
      }
      ++i;
    }
  return moves;
}

}  // namespace tile::codegen::gpu
