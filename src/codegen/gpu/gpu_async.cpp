// src/codegen/gpu/gpu_async.cpp — layer: codegen (gpu). The ops a pipelined loop is made of
// (schedule/pipeline_loops.cpp), each on its own, through the target's asynchronous-copy and
// tensor-core engines:
//   buffer_index         the ring's offset + slot · slot_bytes (a buffer's one register: its offset)
//   iter_ahead           iv + k·step and whether it is < hi, in 64 bits (an overflow: no iteration)
//   async_copy           per run of `run` registers of the pointer tile: one copy of the run's
//                        bytes into the swizzled buffer (a transposed one: runs along the tile's
//                        rows), zero-filled where !valid or masked off;
//                        replicated threads do not copy
//   async_commit / wait  the engine's groups (tokens order them in the IR; they have no registers)
//   tensor_copy          where valid, the CTA's first thread: one box copy per box-wide column
//                        block of the buffer, completing on the slot's copy barrier
//   copy_barrier_*       init (after the program's writes to the copies' tensors are visible to
//                        the copy engine; + the fence that shows the barriers to it) and inval by
//                        the first thread; expect (arrive with the bytes) by it where valid; wait by all
//   barrier              the target's barrier: the CTA's, or a named one of some warps (in a
//                        warp-specialized kernel's consumer partition, the CTA's is the
//                        consumers' named barrier kConsumerBarrier)
//   barrier_arrive       where valid, every thread arrives on the slot's barrier
//   turn_wait / pass     the consumers' warpgroup g (thread / 128) waits on named barrier
//                        kTurnBarrier + g, or arrives on the next one's, both of 2 warpgroups
//                        (schedule/take_turns.hpp)
//   shared_fence         the engine's make_visible (a warpgroup engine reads through another path)
//   copy_fence           the program's global writes visible to the copy engine
//   mma_wait             the engine's wait on the accumulator's registers, 128 at a time
// Global memory: a copy reads memory ordinary stores of the program may have written; the IR
// orders it after them as a load (schedule/insert_barriers.cpp: copy_fence and barrier).
#include <llvm/IR/Intrinsics.h>

#include "codegen/gpu/gpu_lowering.hpp"

namespace tile::codegen::gpu {

using ir::OpKind;

void GpuLowering::lower_async(const ir::Op& op) {
  auto& B = b();
  auto* i64 = B.getInt64Ty();
  auto first_thread = [&] { return B.CreateICmpEQ(target.thread_id(S), B.getInt32(static_cast<std::uint32_t>(issuer_thread_))); };
  // copy barrier `slot` of the barriers operand k
  auto bar = [&](unsigned k, llvm::Value* slot) {
    return smem_abs(B.CreateAdd(buffer_at(op.operand(k)), B.CreateMul(B.CreateZExt(slot, i64), B.getInt64(8))));
  };
  switch (op.kind) {
    case OpKind::buffer_index: {
      llvm::Value* slot = get(op.operand(1)).regs[0];
      llvm::Value* at = B.CreateAdd(buffer_at(op.operand(0)), B.CreateMul(B.CreateZExt(slot, i64), B.getInt64(schedule::slot_bytes(op.operand(0)->type))));
      set(op.result(), DV{scalar_, {at}, op.result()->type});
      return;
    }
    case OpKind::iter_ahead: {
      const ir::Type& it = op.operand(0)->type;
      const bool sg = is_signed(it.elem);
      auto own = loop_iv_.find(op.operand(0));
      llvm::Value* iv = own != loop_iv_.end() ? own->second : get(op.operand(0)).regs[0];
      llvm::Value* step = get(op.operand(1)).regs[0];
      llvm::Value* hi = get(op.operand(2)).regs[0];
      auto mul = sg ? llvm::Intrinsic::smul_with_overflow : llvm::Intrinsic::umul_with_overflow;
      auto add = sg ? llvm::Intrinsic::sadd_with_overflow : llvm::Intrinsic::uadd_with_overflow;
      llvm::Value* m = B.CreateBinaryIntrinsic(mul, B.CreateIntCast(step, i64, sg), B.getInt64(static_cast<std::uint64_t>(op.attrs.ints[0])));
      llvm::Value* a = B.CreateBinaryIntrinsic(add, B.CreateIntCast(iv, i64, sg), B.CreateExtractValue(m, 0));
      llvm::Value* w = B.CreateExtractValue(a, 0);
      llvm::Value* h = B.CreateIntCast(hi, i64, sg);
      llvm::Value* valid = sg ? B.CreateICmpSLT(w, h) : B.CreateICmpULT(w, h);
      valid = B.CreateAnd(valid, B.CreateNot(B.CreateOr(B.CreateExtractValue(m, 1), B.CreateExtractValue(a, 1))));
      set(op.result(0), scalar_dv(B.CreateIntCast(w, iv->getType(), sg), it));
      set(op.result(1), scalar_dv(valid, op.result(1)->type));
      return;
    }
    case OpKind::async_copy: {
      const ir::Type& t = op.operand(1)->type;
      const std::int64_t rows = t.shape[0], cols = t.shape[1];
      const auto es = static_cast<std::int64_t>(size_of(t.elem));
      const int run = static_cast<int>(op.attrs.ints[0]);
      const DV ptr = operand(op, 1);
      llvm::Value* valid = get(op.operand(2)).regs[0];
      std::optional<DV> mask;
      if (op.attrs.ints[1] != 0) mask = operand(op, 3);
      llvm::Value* base = buffer_at(op.operand(0));
      llvm::Value* writer = is_writer(ptr.layout);
      // a run along the stored rows: the tile's (transposed: the transpose's, [cols][rows])
      const bool transposed = op.operand(0)->type.mem == ir::smem::swizzled_transposed;
      for (std::size_t r0 = 0; r0 < ptr.regs.size(); r0 += static_cast<std::size_t>(run)) {
        const int r = static_cast<int>(r0);
        llvm::Value* i = coord(ptr.layout, r, 0), *j = coord(ptr.layout, r, 1);
        llvm::Value* off = B.CreateAdd(base, transposed ? swizzled_offset(cols, rows, es, j, i) : swizzled_offset(rows, cols, es, i, j));
        llvm::Value* ok = mask ? B.CreateAnd(valid, mask->regs[r0]) : valid;
        copies().copy(S, smem_abs(off), ptr.regs[r0], static_cast<int>(run * es), ok, writer);
      }
      set(op.result(), DV{scalar_, {}, op.result()->type});  // (a token: no registers)
      return;
    }
    case OpKind::async_commit:
      copies().commit(S);
      set(op.result(), DV{scalar_, {}, op.result()->type});
      return;
    case OpKind::async_wait: copies().wait(S, static_cast<int>(op.attrs.ints[0])); return;
    case OpKind::tensor_copy: {
      const ir::Type& t = op.operand(1)->type;
      const std::int64_t rows = t.shape[0], cols = t.shape[1], box_cols = op.attrs.ints[1];
      const auto es = static_cast<std::int64_t>(size_of(t.elem));
      llvm::Value* at = buffer_at(op.operand(1));
      llvm::Value* b_slot = bar(2, get(op.operand(3)).regs[0]);
      llvm::Value* x = get(op.operand(4)).regs[0];
      llvm::Value* y = get(op.operand(5)).regs[0];
      llvm::Value* map = copies().tensor_map(S, static_cast<unsigned>(op.attrs.ints[0]));
      S.if_else(B.CreateAnd(get(op.operand(6)).regs[0], first_thread()), [&]() -> llvm::Value* {
        for (std::int64_t c = 0; c < cols / box_cols; ++c) {  // a box: one column block of the swizzled tile
          llvm::Value* dst = smem_abs(B.CreateAdd(at, B.getInt64(static_cast<std::uint64_t>(c * rows * box_cols * es))));
          copies().copy_tensor_2d(S, dst, map, B.CreateAdd(x, B.getInt32(static_cast<std::uint32_t>(c * box_cols))), y, b_slot);
        }
        return nullptr;
      }, nullptr, "copy");
      return;
    }
    case OpKind::copy_barrier_init:
    case OpKind::copy_barrier_inval: {
      const std::int64_t n = op.operand(0)->type.shape[0];
      S.if_else(first_thread(), [&]() -> llvm::Value* {
        for (std::int64_t k = 0; k < n; ++k) {
          llvm::Value* at = bar(0, B.getInt32(static_cast<std::uint32_t>(k)));
          if (op.kind == OpKind::copy_barrier_init) copies().barrier_init(S, at, static_cast<int>(op.attrs.ints[0]));
          else copies().barrier_inval(S, at);
        }
        if (op.kind == OpKind::copy_barrier_init) copies().barrier_init_fence(S);
        return nullptr;
      }, nullptr, op.kind == OpKind::copy_barrier_init ? "barrier.init" : "barrier.inval");
      return;
    }
    case OpKind::copy_barrier_expect: {
      llvm::Value* at = bar(0, get(op.operand(1)).regs[0]);
      S.if_else(B.CreateAnd(get(op.operand(2)).regs[0], first_thread()), [&]() -> llvm::Value* {
        copies().barrier_expect(S, at, static_cast<std::uint32_t>(op.attrs.ints[0]));
        return nullptr;
      }, nullptr, "copy.expect");
      return;
    }
    case OpKind::copy_barrier_wait:
      copies().barrier_wait(S, bar(0, get(op.operand(1)).regs[0]), get(op.operand(2)).regs[0]);
      return;
    case OpKind::barrier_arrive: {
      llvm::Value* at = bar(0, get(op.operand(1)).regs[0]);
      S.if_else(get(op.operand(2)).regs[0], [&]() -> llvm::Value* {
        copies().barrier_arrive(S, at);
        return nullptr;
      }, nullptr, "release");
      return;
    }
    case OpKind::barrier:
      if (op.attrs.ints[0] == 0 && op.attrs.ints[1] == -1) return barrier();  // (the CTA's, or the consumers' own)
      target.barrier(S, static_cast<int>(op.attrs.ints[0]), op.attrs.ints[1] == -1 ? 0 : static_cast<int>(op.attrs.ints[1]));
      return;
    case OpKind::turn_wait:
    case OpKind::turn_pass: {
      if (!consumer_threads_) unsupported(op, "internal error: turns outside a warp-specialized kernel's consumers");
      const int groups = static_cast<int>(op.attrs.ints[0]), only = static_cast<int>(op.attrs.ints[1]);
      const std::uint32_t group = 4 * static_cast<std::uint32_t>(lanes);
      if (consumer_threads_ != static_cast<int>(group) * groups) unsupported(op, "internal error: turns of warpgroups the consumers do not have");
      const bool pass = op.kind == OpKind::turn_pass;
      llvm::Value* g = B.CreateUDiv(tid, B.getInt32(group));
      llvm::Value* id = pass ? B.CreateURem(B.CreateAdd(g, B.getInt32(1)), B.getInt32(static_cast<std::uint32_t>(groups))) : g;
      id = B.CreateAdd(id, B.getInt32(kTurnBarrier));
      auto turn = [&]() -> llvm::Value* {
        target.named_barrier(S, id, 2 * static_cast<int>(group), pass);
        return nullptr;
      };
      if (only < 0) turn();
      else S.if_else(B.CreateICmpEQ(g, B.getInt32(static_cast<std::uint32_t>(only))), turn, nullptr, pass ? "turn.first" : "turn.last");
      return;
    }
    case OpKind::shared_fence:
      mma().make_visible(*this, static_cast<layout::mma_engine>(op.attrs.ints[0]));
      return;
    case OpKind::copy_fence: copies().global_writes_visible(S); return;
    case OpKind::mma_wait: {
      DV res = get(op.operand(0));
      res.type = op.result()->type;
      for (std::size_t r0 = 0; r0 < res.regs.size(); r0 += 128) {
        const std::size_t n = std::min<std::size_t>(128, res.regs.size() - r0);
        std::vector<llvm::Value*> part(res.regs.begin() + static_cast<std::ptrdiff_t>(r0), res.regs.begin() + static_cast<std::ptrdiff_t>(r0 + n));
        part = mma().wait(*this, static_cast<int>(op.attrs.ints[0]), part);
        std::copy(part.begin(), part.end(), res.regs.begin() + static_cast<std::ptrdiff_t>(r0));
      }
      set(op.result(), std::move(res));
      return;
    }
    default: unsupported(op, "internal error: not an op of a pipelined loop");
  }
}

}  // namespace tile::codegen::gpu
