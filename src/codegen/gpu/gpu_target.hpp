// src/codegen/gpu/gpu_target.hpp — layer: codegen (gpu). What the distributed GPU lowering
// (gpu_lowering.hpp) asks of a GPU target beyond codegen/target.hpp: thread ids, barriers, lane
// shuffles and the dynamic shared-memory buffer; and the engines a target owns (an MmaEngine for
// tensor-core dots, an AsyncCopyEngine for the rings of pipelined loops). NVIDIA's target implements it; an AMD target would too.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/target.hpp"
#include "layout/mma_engine.hpp"
#include "tile/core/dtype.hpp"

namespace tile::codegen::gpu {

class GpuLowering;
struct DV;

/// A target's tensor-core engine: it owns the matrix instructions, how their operand fragments
/// are read from the shared-memory buffers a dot's local_allocs staged (layout/
/// stage_mma_operands.cpp: the arrangements it reads) and the accumulator layout its results
/// have. NVIDIA's target: a warp's and a warpgroup's forms; AMD's MFMA would be another.
class MmaEngine {
 public:
  virtual ~MmaEngine() = default;
  /// The dot `op` (engine warp or warpgroup; layout/mma_engine.hpp) on A at a_at and B at b_at
  /// (byte offsets, i64, into shared memory; lda / ldb: the padded buffers' row lengths), from
  /// `acc` in the accumulator layout; its result in that layout. `pending`: the engine's groups
  /// left in flight after it (a pipelined loop's carried accumulator; 0: complete). `a_regs`:
  /// A in registers instead (a_at null), in the layout MmaTarget::register_operand gave.
  virtual DV dot(GpuLowering& G, const ir::Op& op, llvm::Value* a_at, llvm::Value* b_at, std::int64_t lda, std::int64_t ldb,
                 const DV& acc, int pending, const DV* a_regs = nullptr) const = 0;
  /// Before a dot of engine `e` reads buffers that ordinary stores or copies wrote (and a CTA
  /// barrier after them): what makes those writes visible to its reads.
  virtual void make_visible(GpuLowering& G, layout::mma_engine e) const = 0;
  /// The registers `acc` of a dot left in flight, once at most `pending` groups are.
  virtual std::vector<llvm::Value*> wait(GpuLowering& G, int pending, const std::vector<llvm::Value*>& acc) const = 0;
};

/// A target's asynchronous-copy engine: copies from global to shared memory that complete in
/// the background while the threads go on (a pipelined loop's rings, gpu_async.cpp). Two kinds:
/// per-thread copies completing in groups (NVIDIA's: 4 to 16 bytes a thread), and tensor copies — one thread a
/// box of a tensor the launch describes — completing on a transaction barrier in shared memory
/// (NVIDIA's target: boxes of a tensor map, completing on copy barriers).
class AsyncCopyEngine {
 public:
  virtual ~AsyncCopyEngine() = default;
  /// A copy of `bytes` (4, 8 or 16) from global `src` to shared `dst`: when `src_valid` is false
  /// nothing is read and the bytes are zero-filled. Issued only where `issue` (null: always) is
  /// true. Completes in its group (commit).
  virtual void copy(Lowering& L, llvm::Value* dst, llvm::Value* src, int bytes, llvm::Value* src_valid,
                    llvm::Value* issue) const = 0;
  /// Closes the calling thread's copies issued since the last commit into one group.
  virtual void commit(Lowering& L) const = 0;
  /// Waits until at most `pending` of the calling thread's groups are still in flight.
  virtual void wait(Lowering& L, int pending) const = 0;
  /// The calling thread's ordinary writes to global memory become visible to tensor copies' reads.
  virtual void global_writes_visible(Lowering& L) const = 0;
  /// The kernel's hidden tensor-description parameter `k` (after the runtime arguments; the
  /// launch encodes it): a generic pointer to it.
  virtual llvm::Value* tensor_map(Lowering& L, unsigned k) const = 0;
  /// A 2-D tensor copy of the box at element coordinates (x inner, y outer; i32, zero-filled
  /// outside the tensor) of tensor `map` into shared `dst`, completing its bytes on `bar`.
  virtual void copy_tensor_2d(Lowering& L, llvm::Value* dst, llvm::Value* map, llvm::Value* x, llvm::Value* y,
                              llvm::Value* bar) const = 0;
  /// The transaction barrier at `bar` (shared memory, 8 bytes) set up for `count` arrivals (one
  /// thread); then barrier_init_fence (every barrier the thread set up visible to the other
  /// threads and to the copies; a CTA barrier must follow); inval once every wait is done.
  virtual void barrier_init(Lowering& L, llvm::Value* bar, int count) const = 0;
  virtual void barrier_init_fence(Lowering& L) const = 0;
  virtual void barrier_inval(Lowering& L, llvm::Value* bar) const = 0;
  /// The calling thread arrives on `bar` expecting `bytes` more transaction bytes (the copies it
  /// issues next).
  virtual void barrier_expect(Lowering& L, llvm::Value* bar, std::uint32_t bytes) const = 0;
  /// Waits (every calling thread) until the phase of `bar` with parity `parity` (i32 0/1) is done.
  virtual void barrier_wait(Lowering& L, llvm::Value* bar, llvm::Value* parity) const = 0;
  /// The calling thread arrives on `bar` (no transaction bytes): a consumer releasing a buffer.
  virtual void barrier_arrive(Lowering& L, llvm::Value* bar) const = 0;
};

class GpuTargetHooks : public TargetHooks {
 public:
  /// The target's tensor-core engine; null where it has none (select_mma then chooses none).
  virtual const MmaEngine* mma() const { return nullptr; }
  /// The target's asynchronous-copy engine; null where it has none (nothing is pipelined).
  virtual const AsyncCopyEngine* async_copy() const { return nullptr; }
  /// The thread's index in its CTA (i32, 0 .. 32 * num_warps - 1).
  virtual llvm::Value* thread_id(Lowering& L) const = 0;
  /// A barrier among `threads` threads (0: the whole CTA; else a multiple of the warp size, whole
  /// warps) on barrier `id` (0 .. 15; the CTA-wide one is 0): shared memory written before it by
  /// those threads is visible to them after it. Named barriers let groups of warps (a
  /// warp-specialized producer and its consumers) wait for each other alone.
  virtual void barrier(Lowering& L, int id, int threads) const = 0;
  /// Named barrier `id` (i32, known at run time only; 1 .. 15) among `threads` threads (whole
  /// warps): the calling threads wait until all have come (`arrive` false), or count as come and
  /// go on (`arrive` true). Warpgroups taking turns (schedule/take_turns.hpp): each waits on its
  /// own barrier, the one before it arrives there.
  virtual void named_barrier(Lowering& L, llvm::Value* id, int threads, bool arrive) const = 0;
  /// A warpgroup's threads run on with `regs` registers each from here (`increase`: more than
  /// before, taken from what other warpgroups gave back; else fewer, given back): a
  /// warp-specialized kernel's partitions (schedule/warp_specialize.hpp). Every thread of the
  /// warpgroup takes part.
  virtual void set_registers(Lowering& L, int regs, bool increase) const = 0;
  /// The value (i32) of lane (lane ^ mask) of the calling warp; every lane takes part.
  virtual llvm::Value* shuffle_xor_i32(Lowering& L, llvm::Value* v, int mask) const = 0;
  /// The value (i32) of lane (lane - delta) (`up`) or (lane + delta); a lane whose source is
  /// outside the warp gets its own value. Every lane takes part.
  virtual llvm::Value* shuffle_shift_i32(Lowering& L, llvm::Value* v, int delta, bool up) const = 0;
  /// The start of the CTA's dynamic shared memory (a pointer in the target's shared address space).
  virtual llvm::Value* shared_base(Lowering& L) const = 0;
  /// `v` (an integer) through a copy LLVM cannot see into: a loop's induction variable as its
  /// body sees it, so that loop strength reduction keeps the body's addresses base + offset
  /// (one multiply-add each) instead of carrying a 64-bit pointer per access across iterations
  /// (two registers and two adds each: layer norm's last loop went from 32 to 38 registers).
  virtual llvm::Value* opaque(Lowering& L, llvm::Value* v) const = 0;
  /// printf(fmt, args…) on the device (C varargs: i32, i64, double, pointers).
  virtual void printf(Lowering& L, const std::string& fmt, const std::vector<llvm::Value*>& args) const = 0;
  /// One 32-bit word holding `hi` and `lo` (f32) converted to f16 (`bf16`: bfloat16), hi in the
  /// upper half, rounded as two conversions would be, in one instruction where the target has
  /// one; null where it has none (two conversions then).
  virtual llvm::Value* pack_narrow_pair(Lowering&, llvm::Value* /*hi*/, llvm::Value* /*lo*/, bool /*bf16*/) const { return nullptr; }
  /// `words` (1, 2 or 4) 32-bit words read from global address `addr` (i64) as one access where
  /// `pred` (i1) holds, else `fill` (one per word): the words as a <words x i32> vector; null
  /// where the target has no predicated access (a branch then).
  virtual llvm::Value* load_words_if(Lowering&, llvm::Value* /*pred*/, llvm::Value* /*addr*/, int /*words*/,
                                     const std::vector<std::uint32_t>& /*fill*/) const {
    return nullptr;
  }
  /// The words of `vec` (<words x i32>) written to global address `addr` (i64) as one access
  /// where `pred` holds; false where the target has no predicated access (a branch then).
  virtual bool store_words_if(Lowering&, llvm::Value* /*pred*/, llvm::Value* /*addr*/, llvm::Value* /*vec*/) const { return false; }
  /// Lowering's scratch memory is per thread on a GPU: local memory (an alloca).
  llvm::Value* scratch_base(Lowering&, Builder&) const override { return nullptr; }
};

}  // namespace tile::codegen::gpu
