// src/codegen/gpu/gpu_lowering.hpp — layer: codegen (gpu). Tile IR -> LLVM IR for GPU targets:
// one program instance is one CTA of lanes * num_warps threads, and every tile is spread over
// them by the layout its type carries (the GPU level of the IR: layout/gpu_passes.hpp): each
// thread holds its elements in registers (a DV: one LLVM value per register of the layout).
//
//   elementwise ops   per register, with the shared lowering's scalar semantics (scalar.cpp);
//   shape ops         a renumbering of registers (the layouts were chosen for it);
//   convert_layout    in registers when the threads keep their elements, else through shared
//                     memory (padded rows), between barriers (gpu_convert.cpp); the IR's passes
//                     (layout/gpu_passes.hpp) put one wherever an op wants another layout, so
//                     every other op finds its operands in the layouts it needs;
//   loads/stores      per run of registers: 128-bit vector accesses where axis info shows
//                     contiguity, alignment and a mask constant over the run, predicated
//                     otherwise; replicated threads do not write (gpu_memory.cpp);
//   reduce            in the thread, across lanes with butterfly shuffles, across warps through
//                     shared memory (gpu_reduce.cpp); scan: along the axis in one thread after a
//                     layout change;
//   dot               on tensor cores where select_mma chose them (the target's MmaEngine, on
//                     the buffers the dot's local_allocs wrote: gpu_dot.cpp, gpu_shared.cpp),
//                     else one fused multiply-add chain per accumulator element;
//   for/while/if      phis per register (gpu_control.cpp); print/assert (gpu_debug.cpp);
//   pipelined loops   their ops one by one (gpu_async.cpp: ring slots, copies and their groups,
//                     copy barriers, barriers, fences, waits on dots left in flight).
// Shared memory is one dynamic buffer: the buffers the IR names (local_allocs, the rings of
// pipelined loops) at the offsets allocate_shared gave them, and what an op uses for itself
// (a conversion, a cross-warp step) above the buffers live at that op (smem_floor_); its size is
// the largest top (shared_bytes()). Barriers and fences are the IR's (schedule/insert_barriers):
// the lowering adds only those inside the ops that move elements through shared memory
// (schedule/shared_scratch.hpp), and checks that each such op moves them as often as that
// contract says.
#pragma once

#include <functional>
#include <map>
#include <optional>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/axis_info.hpp"
#include "codegen/gpu/gpu_target.hpp"
#include "codegen/lowering.hpp"
#include "layout/assign_layouts.hpp"
#include "layout/mma_engine.hpp"
#include "schedule/allocate_shared.hpp"
#include "schedule/shared_scratch.hpp"

namespace tile::codegen::gpu {

/// How many leading registers of `l` are consecutive elements along one axis; that axis.
using layout::register_run;

/// A distributed value: register r of the calling thread holds element layout.coords(r, lane, warp).
struct DV {
  layout::LinearLayout layout;
  std::vector<llvm::Value*> regs;  // register values (Lowering::reg_type of the element)
  ir::Type type;
  bool scalar() const { return type.shape.empty(); }
};

class GpuLowering {
 public:
  /// The most elements of one tile a thread may hold (see lower_op).
  static constexpr int kMaxRegsPerThread = 1024;
  /// `lanes`: threads a warp (the target's); `axis`: the facts of the kernel run() lowers.
  GpuLowering(llvm::LLVMContext& ctx, const GpuTargetHooks& target, int lanes, const analysis::AxisAnalysis& axis);
  /// `f` must be at the GPU level of the IR (layout/gpu_passes.hpp): every tile's layout is in
  /// its type and every layout change is a convert_layout op.
  std::unique_ptr<llvm::Module> run(const ir::Function& f, const std::string& symbol);
  /// Dynamic shared memory the kernel needs per CTA (bytes).
  std::uint32_t shared_bytes() const { return static_cast<std::uint32_t>(smem_bytes_); }

  // ---- state ----
  Lowering S;  // scalar semantics, types, builder (S.b), module (S.mod), function (S.fn)
  const GpuTargetHooks& target;
  const analysis::AxisAnalysis& axis;
  int lanes = 32;     // threads a warp
  int num_warps = 4;  // the kernel's
  /// The layout of `v` (its type's; every thread holds a scalar).
  const layout::LinearLayout& layout_of(const ir::Value* v) const;
  llvm::IRBuilder<>& b() { return *S.b; }
  llvm::Value* tid = nullptr;   // i32, the thread's index in its block
  llvm::Value* lane = nullptr;  // i32: tid % 32
  llvm::Value* warp = nullptr;  // i32: tid / 32
  /// thread_coord's values (by their bases along the axis), all made after thread_ip_: the
  /// last instruction of the kernel's straight-line start, after warp
  std::map<std::vector<std::int64_t>, llvm::Value*> thread_coords_;
  llvm::Value* thread_ip_ = nullptr;

  // ---- values ----
  const DV& get(const ir::Value* v) const;
  void set(const ir::Value* v, DV d) { values_[v] = std::move(d); }
  /// The target's tensor-core engine (an internal error where it has none: select_mma chose it).
  const MmaEngine& mma() const;
  /// The target's asynchronous-copy engine (an internal error where it has none).
  const AsyncCopyEngine& copies() const;
  /// `v` in layout `l`, converted when it has another: the few ops that work in a layout of their
  /// own (join's and split's halves).
  DV get_as(const ir::Value* v, const layout::LinearLayout& l);
  /// Operand k of op: in the layout the op wants, which the IR's verifier guarantees.
  DV operand(const ir::Op& op, unsigned k) { return get(op.operand(k)); }
  DV scalar_dv(llvm::Value* v, const ir::Type& t) const;
  DV splat(llvm::Value* v, const ir::Type& t, const layout::LinearLayout& l) const;

  // ---- layouts (gpu_convert.cpp) ----
  /// Coordinate of axis d of register r's element in this thread (i32).
  llvm::Value* coord(const layout::LinearLayout& l, int r, int d);
  /// The thread's part of axis d's coordinate (i32): XOR of its lane and warp bases.
  llvm::Value* thread_coord(const layout::LinearLayout& l, int d);
  /// i1: this thread is the one that writes for its elements (its replicated bits are 0).
  llvm::Value* is_writer(const layout::LinearLayout& l);
  DV convert(const DV& x, const layout::LinearLayout& to);
  /// convert's vectorized path (runs along the last axis, swizzled rows); nullopt where it does
  /// not apply.
  std::optional<DV> convert_swizzled(const DV& x, const layout::LinearLayout& to);
  /// broadcast's, expand_dims's and reshape's map from a result element to its operand element.
  std::function<layout::Coords(const layout::Coords&)> shape_map(const ir::Op& op, const layout::LinearLayout& result);
  /// Registers of `result` taken from `src` through a coordinate map (shape ops).
  DV remap(const DV& src, const layout::LinearLayout& result, const ir::Type& t,
           const std::function<layout::Coords(const layout::Coords&)>& to_src);

  // ---- shared memory ----
  /// Pointer (addrspace 3) `bytes` into the dynamic shared buffer; reserve() grows it.
  /// Offsets are above smem_floor_: the top of the buffers live at the op being lowered
  /// (allocate_shared's floor for it).
  llvm::Value* smem_at(llvm::Value* byte_offset);
  void reserve(std::uint64_t bytes) { smem_bytes_ = std::max(smem_bytes_, bytes + smem_floor_); }
  /// Pointer `bytes` into the dynamic shared buffer, the floor not added (the ring's own accesses).
  llvm::Value* smem_abs(llvm::Value* byte_offset);
  /// The start of one of the current op's phases through shared memory (shared_scratch.hpp): a
  /// barrier first unless it is the op's first (insert_barriers placed that one's), then its
  /// stores, barrier(), its loads.
  void scratch_phase();
  /// A CTA barrier (in a warp-specialized kernel's consumer partition, the consumers' named one).
  void barrier();
  /// The 32-bit word of 16-bit float registers `lo` (low half) and `hi` that are both conversions
  /// from f32 to f16 (or both to bf16, whose registers are the i16 of their bits): the target's
  /// paired conversion of their sources (pack_narrow_pair); nullptr otherwise.
  llvm::Value* pack_16x2(llvm::Value* lo, llvm::Value* hi);
  /// Registers r0 .. r0 + w - 1 of `val` as one vector of scalar type `st`'s storage, for a vector
  /// store; f16 and bf16 (w even) as 32-bit words, each pair converted from f32 by one pack_16x2.
  llvm::Value* storage_run(const DV& val, std::size_t r0, int w, const ir::Type& st);
  /// Registers of `l` that axis info proves hold equal values of `v` come in aligned runs of
  /// this many (constancy along the registers' leading axis); 1 when nothing is proven.
  /// Elementwise ops compute one value per run.
  std::size_t equal_registers(const layout::LinearLayout& l, const ir::Value* v) const;

  // ---- ops ----
  void lower_block(const ir::Block& blk);
  /// One op (lower_op_body), then the check that each tile result has its type's layout.
  void lower_op(const ir::Op& op);
  void lower_op_body(const ir::Op& op);
  void lower_shape(const ir::Op& op);
  void lower_memory(const ir::Op& op);
  void lower_reduce(const ir::Op& op);
  void lower_scan(const ir::Op& op);
  void lower_scan_parallel(const ir::Op& op, const layout::LinearLayout& P);
  /// A scan's operands converted to `l`, each thread's runs along the axis (registers sharing
  /// every other coordinate, in scan order) scanned sequentially: the results, the element
  /// types, each run's registers in scan order and its inclusive total.
  struct ThreadScan {
    std::vector<DV> out;
    std::vector<ir::Type> types;
    std::vector<std::vector<int>> runs;
    std::vector<std::vector<llvm::Value*>> totals;
  };
  ThreadScan scan_in_thread(const ir::Op& op, const layout::LinearLayout& l);
  void lower_dot(const ir::Op& op);
  /// dot on tensor cores (mma = warp or warpgroup): the target's engine (mma()) over the A and B
  /// buffers its local_allocs staged.
  void lower_dot_mma(const ir::Op& op);
  /// The swizzled arrangement (ir::smem::swizzled; gpu_shared.cpp): the operands in shared memory as
  /// swizzled tiles — a [rows][cols] tile of `es`-byte elements in column blocks of S = min(128,
  /// cols * es) bytes a row, each block [rows][S] with 16-byte chunk c of row r at c ^ (r's
  /// address bits 7 ..): the 128/64/32-byte swizzle the descriptors name. Byte offset (i64) of
  /// element (i, j) from the tile's (1024-byte aligned) start.
  llvm::Value* swizzled_offset(std::int64_t rows, std::int64_t cols, std::int64_t es, llvm::Value* i, llvm::Value* j);

  // ---- shared-memory buffers (gpu_shared.cpp) ----
  /// A local_alloc: its tile stored at its offset, in its buffer's arrangement.
  void lower_local_alloc(const ir::Op& op);
  /// x (a 16-bit [rows][cols] tile) stored from its registers as a swizzled tile at absolute
  /// byte offset at_byte (16-byte vector stores; replicated threads do not write); transposed:
  /// as the swizzled [cols][rows] tile of its transpose.
  void stage_swizzled(const DV& x, std::int64_t rows, std::int64_t cols, std::uint64_t at_byte, bool transposed, const char* name);
  /// x (2-D) stored row-major with rows of row_len elements plus 16 bytes at at_byte: rows along
  /// axis `row_axis` of x (1: the transpose); f32 rounded to tf32 first with `tf32`.
  void stage_padded(const DV& x, int row_axis, std::int64_t row_len, std::uint64_t at_byte, bool tf32, const char* name);
  /// The byte offset (i64) of a buffer: a local_alloc's (allocate_shared's), or a ring's buffer
  /// (buffer_index).
  llvm::Value* buffer_at(const ir::Value* buffer) const { return get(buffer).regs.at(0); }

  /// Where the shared-memory buffers live (schedule/allocate_shared.hpp); set before run(): each
  /// op's own shared memory goes above the buffers live at it.
  void set_shared(const schedule::SharedPlan* p) { shared_ = p; }
  /// The ops of a pipelined loop (schedule/pipeline_loops.cpp): buffer_index, iter_ahead, the
  /// copies, their groups and barriers, barrier, shared_fence, mma_wait (gpu_async.cpp).
  void lower_async(const ir::Op& op);
  /// warp_specialize: the producer and consumer partitions (gpu_partitions.cpp).
  void lower_partitions(const ir::Op& op);
  /// The thread that issues a CTA's tensor copies and arms their barriers: the CTA's first, or in
  /// a warp-specialized kernel's producer partition the producer's first.
  int issuer_thread_ = 0;
  /// Inside a warp-specialized kernel's consumer partition: its threads (a CTA barrier there is
  /// theirs alone, a named barrier); 0 elsewhere.
  int consumer_threads_ = 0;
  static constexpr int kConsumerBarrier = 1;  // (the named barrier id of the consumers' CTA barrier)
  static constexpr int kTurnBarrier = 2;      // (turn_wait / turn_pass: warpgroup g's turn is barrier kTurnBarrier + g)
  void lower_control(const ir::Op& op);
  /// A `for`'s run-time check that its step is positive (> 0; unsigned: != 0): the failure
  /// naming the kernel and the loop's line, unless the step is a constant that passes.
  void check_for_step(const ir::Op& op, llvm::Value* step, bool is_signed);
  /// The next induction value (iv + step) and whether the loop goes on (no overflow, < hi).
  std::pair<llvm::Value*, llvm::Value*> for_next(llvm::Value* iv, llvm::Value* step, llvm::Value* hi, bool is_signed);
  void lower_debug(const ir::Op& op);
  /// Lower a region with its arguments bound to `args`; the terminator's operands.
  std::vector<DV> lower_region(const ir::Block& region, const std::vector<DV>& args);
  /// Apply a reduce/scan combine region to scalar register values.
  std::vector<llvm::Value*> combine(const ir::Block& region, const std::vector<llvm::Value*>& a,
                                    const std::vector<llvm::Value*>& b, const std::vector<ir::Type>& types);
  [[noreturn]] void unsupported(const ir::Op& op, const std::string& why) const { S.unsupported(op, why); }

  /// Shuffle a register value (any scalar type up to 64 bits) across lanes: lane ^ mask.
  llvm::Value* shuffle_xor(llvm::Value* v, int mask);
  /// v of lane (lane - delta) (`up`) or (lane + delta), any scalar type; out of the warp: v itself.
  llvm::Value* shuffle_shift(llvm::Value* v, int delta, bool up);
  llvm::Value* shuffle_any(llvm::Value* v, const std::function<llvm::Value*(llvm::Value*)>& shuffle32);

 private:
  std::unordered_map<const ir::Value*, DV> values_;
  /// Each lowered `for`'s induction variable as the loop computes it (its body sees it through
  /// target.opaque): what iter_ahead, step arithmetic of the loop itself, starts from.
  std::unordered_map<const ir::Value*, llvm::Value*> loop_iv_;
  layout::LinearLayout scalar_;  // the layout of scalars for the kernel's warps
  std::uint64_t smem_bytes_ = 0;
  std::uint64_t smem_floor_ = 0;  // bytes at the start of the buffer other uses stay above
  const schedule::SharedPlan* shared_ = nullptr;
  int scratch_phases_ = 0;  // the phases through shared memory the op being lowered ran so far
};

}  // namespace tile::codegen::gpu
