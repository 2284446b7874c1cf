// src/schedule/allocate_shared.hpp — layer: schedule. Where each shared-memory buffer of a
// GPU-level kernel lives (Triton's Allocation analysis): offsets from the buffers' liveness, so
// that buffers live at the same time never overlap and buffers that are not reuse the bytes.
//
// The buffers are the `local_alloc` ops: a tile stored for a tensor-core dot to read, and each
// pipelined loop's rings and copy barriers (schedule/pipeline_loops.cpp). A buffer
// lives from its op to its last use; a use inside a loop that does not contain the buffer's op
// keeps it alive to the end of that loop (every iteration reads it). In order of their first
// op, each takes the lowest offset, aligned (1024 bytes for swizzled tiles and rings, 16
// otherwise), that overlaps no buffer live at the same time (first fit).
//
// What ops use for themselves — a layout conversion or a reduction's cross-warp step through
// shared memory, within the op — goes above every buffer live at that op: `floor`.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "ir/ir.hpp"
#include "transforms/pass_manager.hpp"

namespace tile::schedule {

struct SharedBuffer {
  const ir::Op* op = nullptr;  // the local_alloc
  std::uint64_t bytes = 0, align = 16, offset = 0;
  std::size_t first = 0, last = 0;  // the ops it is live over (pre-order positions)
};

struct SharedPlan {
  std::vector<SharedBuffer> buffers;
  /// Per op: the top of the buffers live at it (its own scratch goes above).
  std::unordered_map<const ir::Op*, std::uint64_t> floors;
  std::uint64_t top = 0;  // the largest top: the buffers' share of the kernel's shared memory
  std::uint64_t floor(const ir::Op& op) const {
    auto it = floors.find(&op);
    return it == floors.end() ? 0 : it->second;
  }
  /// The offset of `op`'s buffer (a local_alloc).
  std::uint64_t offset(const ir::Op& op) const;
};

/// The bytes a `local_alloc` result of type `t` takes (its shared encoding, ir::smem): a ring
/// [buffers, rows, cols] is `buffers` buffers of slot_bytes; copy barriers 8 bytes each.
std::uint64_t shared_bytes(const ir::Type& t);
/// The stride between a ring's buffers: one buffer's bytes rounded up to 1024 (where a swizzle
/// pattern repeats, and what a tensor-core descriptor's base needs).
std::uint64_t slot_bytes(const ir::Type& ring);

/// The plan for `f` (the GPU level).
SharedPlan plan_shared(const ir::Function& f);

/// The pass allocate_shared: writes plan_shared's offsets into the local_allocs (attrs.ints[0]),
/// where TILE_DUMP_IR shows them.
std::unique_ptr<transforms::Pass> make_allocate_shared();

}  // namespace tile::schedule
