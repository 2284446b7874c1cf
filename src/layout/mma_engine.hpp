// src/layout/mma_engine.hpp — layer: layout. Which engine runs a dot at the GPU level, as its
// attributes record it (ops.def: dot's ints[1..3]; select_mma.cpp decides): one fused
// multiply-add chain per accumulator element in each thread, a warp's tensor-core MMA (NVIDIA's
// NVIDIA's warp mma; AMD's MFMA is one too), or a warpgroup's (NVIDIA's sm_90a form), with the warps along M
// and N that tile the accumulator.
#pragma once

#include <array>

#include "ir/ir.hpp"

namespace tile::layout {

enum class mma_engine : int { none = 0, warp = 1, warpgroup = 2 };

inline mma_engine engine_of(const ir::Op& dot) {
  const auto& a = dot.attrs.ints;
  return dot.kind == ir::OpKind::dot && a.size() >= 4 ? static_cast<mma_engine>(a[1]) : mma_engine::none;
}
/// A dot on a warpgroup's engine; one left in flight (ints[4] = 1 or 2: an mma_wait takes its result).
inline bool is_warpgroup_dot(const ir::Op& o) { return engine_of(o) == mma_engine::warpgroup; }
inline bool left_in_flight(const ir::Op& dot) { return dot.attrs.ints.size() > 4 && dot.attrs.ints[4] != 0; }
/// Whether the engine reads its operands from shared memory itself, through another path than
/// the threads' loads (a warpgroup's MMA): the threads' stores to its buffers are fenced for it
/// (shared_fence) before a barrier. A warp's MMA reads them through the threads' own loads.
inline bool reads_shared_directly(mma_engine e) { return e == mma_engine::warpgroup; }
/// The warps along M and N of a dot on tensor cores.
inline std::array<int, 2> mma_warps_of(const ir::Op& dot) {
  const auto& a = dot.attrs.ints;
  return {static_cast<int>(a.at(2)), static_cast<int>(a.at(3))};
}
inline void set_engine(ir::Op& dot, mma_engine e, std::array<int, 2> warps) {
  auto& a = dot.attrs.ints;
  a.resize(4);
  a[1] = static_cast<int>(e);
  a[2] = e == mma_engine::none ? 0 : warps[0];
  a[3] = e == mma_engine::none ? 0 : warps[1];
}

}  // namespace tile::layout
