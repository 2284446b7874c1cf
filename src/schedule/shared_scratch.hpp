// src/schedule/shared_scratch.hpp — layer: schedule. Which ops of the GPU level move elements
// between threads through shared memory within themselves, as the GPU lowering implements them
// (codegen/gpu): the contract between that lowering and the passes that place barriers
// (insert_barriers.hpp) and shared memory (allocate_shared.hpp: an op's scratch goes above the
// buffers live at it).
//
// Such an op runs one or more phases, each: the threads that own elements store them, a CTA
// barrier, every thread loads what it needs. The lowering emits the barrier inside each phase
// and one before each phase after the first; the barrier before the first phase, where earlier
// reads of shared memory may not be done, is insert_barriers' (a `barrier` op before the op).
//
//   convert_layout     unless the two layouts keep every element in its thread (register_map)
//   reduce             where warps split the reduced axis (each warp's partial)
//   scan               its moves into the scan's own layout (scan_layout) and back, and, for a
//                      parallel scan of several warps, the warps' totals
//   join, split        their moves into the layouts whose registers hold both halves
//   dot (no engine)    its operands, staged for the threads' multiply-add chains
//   atomics            where copies of an element live in several threads (the old values)
#pragma once

#include <cstdint>
#include <vector>

#include "ir/ir.hpp"
#include "support/linear_layout.hpp"

namespace tile::schedule {

/// Where a scan along `axis` holds its elements: sequential (each row in one thread's registers,
/// scanned in order) or parallel (the axis over registers, lanes, then warps).
struct ScanLayout {
  layout::LinearLayout layout;
  bool parallel = false;
};
/// The registers a thread may hold of a sequential scan's row before the scan runs in parallel.
inline constexpr int kScanSequentialRegs = 256;
/// The GPU lowering's layout for a scan of `shape` along `axis` with `lanes` threads a warp and
/// `num_warps` warps: rows that fit a thread in at most kScanSequentialRegs registers, or rows
/// shorter than the CTA, run sequentially.
ScanLayout scan_layout(const std::vector<std::int64_t>& shape, int axis, int lanes, int num_warps);

/// Whether converting a tile from layout `from` to `to` moves elements between threads.
bool moves_between_threads(const layout::LinearLayout& from, const layout::LinearLayout& to);

/// The number of phases through shared memory `op` (GPU level, a CTA of `num_warps` warps) runs
/// within itself; 0 for most ops.
int scratch_phases(const ir::Op& op, int num_warps);

/// Whether `op` itself (not its regions) reads or writes shared memory: a scratch phase, a
/// buffer's stores (local_alloc of a tile), a tensor-core dot's reads, the copies into rings and
/// their copy barriers.
bool touches_shared(const ir::Op& op, int num_warps);

}  // namespace tile::schedule
