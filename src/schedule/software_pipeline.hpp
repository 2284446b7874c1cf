// src/schedule/software_pipeline.hpp — layer: schedule. Which K loops of a GPU kernel run
// software-pipelined (num_stages), as Triton's pipeliner does for tl.dot loops: the loads that
// feed a tensor-core dot are issued `stages - 1` iterations ahead, straight from global into a
// ring of shared-memory buffers (per-thread asynchronous copies, zero-filled where masked), and the dot of iteration i
// reads buffer i % stages while the copies of the iterations after it are in flight.
//
// A loop qualifies when, in its body (top level):
//   - a dot select_mma put on tensor cores (layout/mma_engine.hpp) takes an operand (or both),
//     16-bit (f16 or bf16), straight from a load of the body that nothing else uses (through the
//     local_alloc that stages it, swizzled or swizzled_transposed, which the ring replaces): no
//     `other` but zero, not volatile, the stored rows (the tile's rows; transposed: its
//     columns) contiguous in memory in runs of at least 4 bytes (the copy size) with the mask
//     constant over each run. The other operand is read where it is: a tile staged before the
//     loop (attention's Q) or one the body computes (its P);
//   - the loads' pointers, masks and the loop-carried values they depend on (`a_ptrs += …`) are
//     computed by pure, non-failing ops of the body (the "ahead" slice); the carried values it
//     advances are used by nothing else and not after the loop (they run ahead of the loop);
//   - nothing in the body writes global memory (a copy issued early must not pass a store);
//   - the rings fit the target's shared memory beside the kernel's other staging buffers (fewer
//     stages are tried down to 2).
// On sm_90a, a loop whose warpgroup dots read descriptor loads (tl::tensor_descriptor, `desc_load`)
// fills the ring with the Tensor Memory Accelerator instead: one thread issues one
// tensor copy per 128-byte-wide box of each tile, completing on the buffer's copy barrier
// (expect_tx), and the loop waits on that barrier's phase. The compile pipeline keeps only the
// descriptor loads tensor_copy_candidate accepts (the others become masked loads, as everywhere else)
// and compiles again without tensor copies should a loop that kept them not be pipelined.
// Everything else in the body (the dot itself, epilogue math) runs in iteration order.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "analysis/axis_info.hpp"
#include "ir/ir.hpp"
#include "layout/mma_engine.hpp"
#include "layout/mma_target.hpp"
#include "schedule/copy_target.hpp"

namespace tile::schedule {

/// One load copied ahead: its tile [rows][cols] lands in a ring of swizzled buffers, the
/// arrangement its dot's staging buffer had (GpuLowering::swizzled_offset: what a warp's matrix loads read
/// without bank conflicts and a warpgroup engine's descriptors describe); `run` elements (along cols) per
/// per-thread copy.
struct PipelinedLoad {
  const ir::Op* load = nullptr;  // (erased by pipeline_loops: what the plan reads later is below)
  dtype elem = dtype::f16;
  std::int64_t rows = 0, cols = 0, elem_bytes = 0;
  int run = 0;
  /// The ring's arrangement: its staging buffer's (swizzled, or swizzled_transposed for a B
  /// the engine reads K-major: copies then run along the tile's rows).
  ir::smem arrangement = ir::smem::swizzled;
  /// A descriptor load copied by tensor copies: the kernel's hidden tensor map `tensor_map_param`, boxes of
  /// rows x box_cols elements (box_cols · elem_bytes = the swizzle span, at most 128 bytes),
  /// cols / box_cols of them side by side (each a column block of the swizzled tile).
  bool tensor_copy = false;
  int tensor_map_param = -1;
  std::int64_t box_cols = 0;
  /// The local_alloc that stages the load's tile for the dot (layout/stage_mma_operands.cpp):
  /// the ring's buffer takes its place (pipeline_loops erases both).
  const ir::Op* staged = nullptr;
  /// A load several dots read (the backward's Qᵀ: once as it is, once through tl::trans): the
  /// other dots' staging local_allocs and the transposes (permute [1, 0]) between the load and
  /// a staging, erased with it. Every staging holds the same bytes as the ring's buffer: the tile
  /// in the ring's arrangement, or its transpose in the other one (a transposed view).
  std::vector<const ir::Op*> also_staged;
  std::vector<const ir::Op*> transposes;
};

struct PipelinedLoop {
  int stages = 0;                 // copies run stages - 1 iterations ahead
  int buffers = 0;                // each ring's: stages, one more when warpgroup dots run asynchronously
  /// Warpgroup dots whose only use is a loop-carried value: iteration i's is left running while
  /// iteration i + 1 starts (the engine waits for all but one group), so the rings have one more
  /// buffer for the tiles it still reads. Where the next iteration reads that value other than
  /// as the same dot's accumulator (attention's `acc * alpha`), an mma_wait comes before its
  /// first use (`wait_at_use`); the dots in between (the next QKᵀ) run behind it on the engine.
  std::unordered_set<const ir::Op*> in_flight;
  std::unordered_set<const ir::Op*> wait_at_use;
  bool async_mma = false;  // (some dot is left in flight)
  /// The rings are filled by tensor copies (every load is a descriptor load): one copy barrier per
  /// buffer.
  bool tensor_copy = false;
  /// How many iterations ahead of the dots the copies run: stages - 1 for per-thread copies; for tensor copies,
  /// whose loop frees a buffer after the dots, every buffer but the one a dot left in flight
  /// may still read (buffers - 1), or all of them.
  int distance() const { return tensor_copy ? buffers - (async_mma ? 1 : 0) : stages - 1; }
  std::vector<PipelinedLoad> loads;
  /// The dots fed from the rings: their (A, B) loads' indices into `loads`, -1 for an operand
  /// read where it is (a tile staged before the loop, or one the body computes and stages).
  std::unordered_map<const ir::Op*, std::array<int, 2>> dots;
  /// Ops of the body computed for iteration i + stages - 1 (the loads' addresses and masks, the
  /// carried values they advance): pipeline_loops clones them for each iteration it copies.
  std::unordered_set<const ir::Op*> ahead;
  /// Per carried value (region arg k + 1): advanced ahead of the loop.
  std::vector<bool> ahead_arg;
  /// Per carried value advanced ahead: whether the body (or the code after the loop) also reads
  /// it in iteration order (the backward's curr_m: the copies' addresses and the row mask). Such
  /// a value keeps its slot, in order, and its ahead copy gets a slot of its own after the
  /// pipeline's (pipeline_loops); the others are replaced by their ahead copies.
  std::vector<bool> dup_arg;
  /// Per dot operand a ring feeds: whether the dot reads the ring's buffer as its transpose (a
  /// transposed view: shape swapped, swizzled <-> swizzled_transposed, the same bytes).
  std::unordered_map<const ir::Op*, std::array<bool, 2>> views;
  /// A load the rings copy, or a local_alloc or transpose between it and its dots.
  bool is_pipelined_load(const ir::Op* op) const {
    for (const auto& l : loads) {
      if (l.load == op || l.staged == op) return true;
      for (const ir::Op* x : l.also_staged)
        if (x == op) return true;
      for (const ir::Op* x : l.transposes)
        if (x == op) return true;
    }
    return false;
  }
  /// The ring of `l`: `buffers` swizzled buffers of its tile (a local_alloc's type).
  ir::Type ring_type(const PipelinedLoad& l) const;
  /// The shared memory the rings and copy barriers take (allocate_shared's sizes).
  std::uint64_t ring_bytes() const;
};

/// Producer warps, and the registers a thread of each partition runs with (0, 0: as launched).
struct WarpSpecialization {
  int producer_warps = 4;
  int consumer_regs = 0, producer_regs = 0;
  /// Loops of one ring_signature take turns on one set of rings (each loop's own would not fit).
  bool share_rings = false;
};

struct PipelinePlan {
  std::unordered_map<const ir::Op*, PipelinedLoop> loops;  // by for op
  /// The kernel runs warp-specialized (schedule/warp_specialize.hpp): a producer warp issues the
  /// loops' tensor copies.
  std::optional<WarpSpecialization> warp_specialized;
  /// The descriptor loads tensor copies fill the rings from, in the order of the kernel's hidden tensor-map
  /// parameters (PipelinedLoad::tensor_map_param).
  std::vector<const ir::Op*> tensor_maps;
};

/// An integer the launch knows before the kernel runs: the product of kernel arguments (`args`,
/// none for a constant) and `factor`, computed in `bits`-bit two's complement as the kernel does.
struct LaunchValue {
  std::vector<unsigned> args;
  std::int64_t factor = 1;
  int bits = 64;
};
/// `v` as a LaunchValue: a kernel argument, an integer constant, or a product of such values (a
/// descriptor over Z * H * N_CTX rows); nullopt otherwise.
std::optional<LaunchValue> launch_value(const ir::Function& f, const ir::Value* v);

/// Whether the pipeline may keep `desc_load` for a tensor copy of the target `copies` (NVIDIA:
/// tensor copies on sm_90a): rank 2, f16/bf16, in a `for` body, read only by a dot the target `mma`
/// runs on its warpgroup engine (as it is or through a transpose, tl::trans), whose other operand is
/// such a load too or no load of that body; the base a kernel argument, extents and strides
/// launch values (the launch encodes the tensor map from them), the
/// last stride 1, the base and the row stride aligned as the copies need (the launch's
/// specialization: ir::ArgInfo), the extents positive, 32-bit offsets, the box one the copies
/// take. A launch with an extent of 0 is another specialization, one with masked loads.
bool tensor_copy_candidate(const ir::Function& f, const ir::Op& desc_load, int num_warps, const layout::MmaTarget& mma,
                           const CopyTarget& copies);

/// Ops that may run for an iteration that does not exist (past the loop's end), or earlier than
/// written: pure and never failing (no integer division, no loads), computed in registers
/// (convert_layout among them: it moves elements between threads, through shared memory where
/// it must).
bool safe_ahead(ir::OpKind k);

/// The loops of `f` (the GPU level: layouts and dot engines in the IR) to pipeline with up to
/// `num_stages` stages (none below 2) on a target with `smem_limit` bytes of shared memory per CTA
/// and the asynchronous copies `copies` describes.
PipelinePlan plan_pipelines(const ir::Function& f, const analysis::AxisAnalysis& axis, int num_stages,
                            std::uint64_t smem_limit, const CopyTarget& copies);

/// "pipelined for (3 stages, 2 loads, 18432 bytes a stage)" lines for TILE_DUMP_IR.
std::string print_pipelines(const ir::Function& f, const PipelinePlan& p);

}  // namespace tile::schedule
