// src/codegen/gpu/thread_bits.hpp — layer: codegen (gpu). A thread's coordinate in a layout as
// bits of its index moved into place, planned without LLVM (the lowering emits the plan,
// GpuLowering::gather_bits; test/layout checks the plan against the layouts for every thread).
//
// In a blocked layout (and an mma fragment) each lane and warp bit adds one bit of the
// coordinate along an axis, no two the same bit. The coordinate is then tid's bits moved, and
// consecutive tid bits going to consecutive coordinate bits move together: one shift and at
// most one AND a run. A row of 4 floats a thread over 512 threads is 4·tid, one shift, where
// a bit at a time takes two operations a bit.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "layout/linear_layout.hpp"

namespace tile::codegen::gpu {

/// `len` consecutive bits of an id from bit `from` to bit `to`: (id >> (from - to)) or
/// (id << (to - from)), with an AND keeping the run's bits where others could remain (`masked`).
struct BitRun {
  int from = 0, to = 0, len = 0;
  bool masked = false;
};

/// `moves` (bit `from` of an id to bit `to`, each `to` distinct) as runs. `id_bits`: the id is
/// below 2^id_bits, so a run reaching its top bit needs no AND above, and one shifted right to
/// bit 0 none below.
std::vector<BitRun> bit_runs(std::vector<std::pair<int, int>> moves, int id_bits);

/// The moves that make a thread's coordinate along axis d in `l` from its index (tid bit i:
/// lane bits, then warp bits, to the bit its base sets), where every lane and warp base along d
/// is one bit and no two share it; nullopt otherwise (the lowering then XORs base by base).
std::optional<std::vector<std::pair<int, int>>> single_bit_moves(const layout::LinearLayout& l, int d);

}  // namespace tile::codegen::gpu
