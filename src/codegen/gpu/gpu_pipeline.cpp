// src/codegen/gpu/gpu_pipeline.cpp — layer: codegen (gpu). A software-pipelined `for`
// (schedule/software_pipeline.hpp): the loads that feed its tensor-core dots become cp.async
// copies into a ring of `stages` shared-memory buffers, issued stages - 1 iterations ahead.
//
//   prologue   for s in 0 .. stages-2: the ahead slice (addresses, masks, the carried pointers
//              they advance) for iteration s, its copies into buffer s (zero-filled where masked
//              or past the loop's end), one commit group each
//   iteration i
//              wait until group i has landed (cp.async.wait_group stages-2), barrier: buffer i %
//              buffers is complete for every thread, and the buffer about to be filled is read by
//              none (mma.sync: iteration i - 1's; wgmma left in flight: i - 2's, one more buffer)
//              the ahead slice for iteration i + stages - 1, its copies into that buffer (after
//              the dots when wgmma runs asynchronously: its issue first, then the copies)
//              the rest of the body in order; each pipelined dot runs mma.sync or wgmma on
//              buffer i % buffers (wgmma: waiting for iteration i - 1's only)
//   exit       wait for every group (copies past the end still write zeros), barrier
// Other shared-memory uses inside the body stay above the ring (smem_floor_).
//
// With the TMA (pl.tensor_copy, sm_90a, descriptor loads), thread 0 issues each iteration's copies —
// mbarrier.arrive.expect_tx on the buffer's barrier, then one cp.async.bulk.tensor per box — and
// iteration i waits on barrier i % buffers for phase parity (i / buffers) % 2 instead of
// cp.async.wait_group. The CTA barrier moves after the dots: there every warp is done with
// iteration i - 1's buffer (wgmma left in flight, each warp waited for it) or iteration i's, so
// the copies refill that one and run buffers - 1 (or buffers) iterations ahead instead of
// stages - 1, from the same shared memory. The barriers are initialized before the prologue and
// retired after the loop; iterations past the end issue nothing.
#include <functional>

#include <llvm/IR/Intrinsics.h>

#include "codegen/gpu/gpu_lowering.hpp"

namespace tile::codegen::gpu {

void GpuLowering::lower_pipelined_for(const ir::Op& op, const schedule::PipelinedLoop& pl) {
  auto& B = b();
  auto& ctx = S.ctx;
  const ir::Block& body = *op.region(0);
  const ir::Op* yield = body.terminator();
  const ir::Type& it = op.operand(0)->type;
  const bool sg = is_signed(it.elem);
  llvm::Value* lo = get(op.operand(0)).regs[0];
  llvm::Value* hi = get(op.operand(1)).regs[0];
  llvm::Value* step = get(op.operand(2)).regs[0];
  auto* i64 = B.getInt64Ty();
  const std::size_t nc = op.results.size();
  auto lay = [&](std::size_t k) {
    const ir::Value* r = op.result(static_cast<unsigned>(k));
    return r->type.shape.empty() ? scalar_ : layout_of(r);
  };
  auto fit = [&](DV v, std::size_t k) { return v.scalar() ? v : convert(v, lay(k)); };
  std::vector<DV> init;
  for (unsigned i = 3; i < op.operands.size(); ++i) init.push_back(fit(operand(op, i), i - 3));

  check_for_step(op, step, sg);
  // iteration i + ahead's induction value and whether it runs, computed in 64 bits (an iteration
  // whose iv would overflow does not run either)
  auto ahead_iter = [&](llvm::Value* iv, int ahead) -> std::pair<llvm::Value*, llvm::Value*> {
    auto mul = sg ? llvm::Intrinsic::smul_with_overflow : llvm::Intrinsic::umul_with_overflow;
    auto add = sg ? llvm::Intrinsic::sadd_with_overflow : llvm::Intrinsic::uadd_with_overflow;
    llvm::Value* m = B.CreateBinaryIntrinsic(mul, B.CreateIntCast(step, i64, sg), B.getInt64(static_cast<std::uint64_t>(ahead)));
    llvm::Value* a = B.CreateBinaryIntrinsic(add, B.CreateIntCast(iv, i64, sg), B.CreateExtractValue(m, 0));
    llvm::Value* w = B.CreateExtractValue(a, 0);
    llvm::Value* h = B.CreateIntCast(hi, i64, sg);
    llvm::Value* valid = sg ? B.CreateICmpSLT(w, h) : B.CreateICmpULT(w, h);
    valid = B.CreateAnd(valid, B.CreateNot(B.CreateOr(B.CreateExtractValue(m, 1), B.CreateExtractValue(a, 1))));
    return {B.CreateIntCast(w, iv->getType(), sg), valid};
  };

  // the ring where allocate_shared put it (above the buffers live around the loop: an enclosing
  // loop's ring, …); the TMA's mbarriers (one a buffer: its copies landed) after it
  const std::uint64_t ring_base = shared_ ? shared_->offset(op) : smem_floor_;
  const auto nbuf = static_cast<std::uint64_t>(pl.buffers);
  const std::uint64_t bars_at = ring_base + nbuf * pl.stage_bytes;
  // (1024-aligned, as every ring: a ring inside this loop's body keeps its swizzle)
  const std::uint64_t ring_bytes = pl.ring_bytes();
  // how many iterations ahead the copies run: cp.async stages - 1 (the barrier that frees a buffer
  // comes before the dots); the TMA every buffer but the one the dots may still read (its barrier
  // comes after the dots)
  const int ahead = pl.distance();
  smem_bytes_ = std::max(smem_bytes_, ring_base + ring_bytes);
  barrier_before_write();  // earlier users of these bytes are done
  for (const auto& l : pl.loads) {
    barrier_before_global_read(l.load->operand(0), l.tensor_copy);
    note_global_read(l.load->operand(0), nullptr);  // copied ahead: any element, any time
  }
  auto bar = [&](llvm::Value* slot) {
    return smem_abs(B.CreateAdd(B.getInt64(bars_at), B.CreateMul(B.CreateZExt(slot, i64), B.getInt64(8))));
  };
  // code that runs where `cond` holds (one thread issuing the TMA's copies)
  auto only_if = [&](llvm::Value* cond, const std::function<void()>& body_fn) {
    auto* then = llvm::BasicBlock::Create(ctx, "copy.issue", S.fn);
    auto* done = llvm::BasicBlock::Create(ctx, "copy.done", S.fn);
    B.CreateCondBr(cond, then, done);
    B.SetInsertPoint(then);
    body_fn();
    B.CreateBr(done);
    B.SetInsertPoint(done);
  };
  llvm::Value* thread0 = pl.tensor_copy ? B.CreateICmpEQ(target.thread_id(S), B.getInt32(0)) : nullptr;
  if (pl.tensor_copy) {
    only_if(thread0, [&] {
      for (int k = 0; k < pl.buffers; ++k) copies().barrier_init(S, bar(B.getInt32(static_cast<std::uint32_t>(k))), 1);
      copies().barrier_init_fence(S);
    });
    barrier();
  }

  // the ahead slice for iteration (ivv, valid) with `carried`'s ahead values; its copies into
  // buffer `slot`, committed as one group; `carried`'s ahead values advanced one iteration
  auto issue = [&](llvm::Value* ivv, llvm::Value* valid, std::vector<DV>& carried, llvm::Value* slot) {
    // layout conversions of the slice use shared memory above the ring (copies are in flight)
    const std::uint64_t floor = smem_floor_;
    smem_floor_ = ring_base + ring_bytes;
    set(body.arg(0), scalar_dv(ivv, it));
    for (std::size_t k = 0; k < nc; ++k)
      if (pl.ahead_arg[k]) set(body.arg(static_cast<unsigned>(k + 1)), carried[k]);
    for (const auto& o : body.ops)
      if (pl.ahead.count(o.get())) lower_op(*o);
    llvm::Value* stage_off = B.CreateAdd(B.getInt64(ring_base), B.CreateMul(B.CreateZExt(slot, i64), B.getInt64(pl.stage_bytes)));
    if (pl.tensor_copy) {
      // one thread: expect the stage's bytes on its barrier, then one copy per box (an
      // iteration past the end copies nothing: nobody waits for it)
      std::uint32_t bytes = 0;
      for (const auto& l : pl.loads) bytes += static_cast<std::uint32_t>(l.rows * l.cols * l.elem_bytes);
      std::vector<std::pair<llvm::Value*, llvm::Value*>> at;  // (inner, outer) coordinates per load
      for (const auto& l : pl.loads) {
        const unsigned r = static_cast<unsigned>(l.load->attrs.ints.size());
        at.emplace_back(operand(*l.load, 1 + 2 * r + 1).regs[0], operand(*l.load, 1 + 2 * r).regs[0]);
      }
      only_if(B.CreateAnd(valid, thread0), [&] {
        llvm::Value* b_slot = bar(slot);
        copies().barrier_expect(S, b_slot, bytes);
        for (std::size_t n = 0; n < pl.loads.size(); ++n) {
          const auto& l = pl.loads[n];
          const std::int64_t span = l.box_cols * l.elem_bytes;  // a box's row: one column block of the tile
          for (std::int64_t c = 0; c < l.cols / l.box_cols; ++c) {
            llvm::Value* dst = smem_abs(B.CreateAdd(stage_off, B.getInt64(l.offset + static_cast<std::uint64_t>(c * l.rows * span))));
            llvm::Value* x = B.CreateAdd(at[n].first, B.getInt32(static_cast<std::uint32_t>(c * l.box_cols)));
            copies().copy_tensor_2d(S, dst, copies().tensor_map(S, static_cast<unsigned>(l.tensor_map_param)), x, at[n].second, b_slot);
          }
        }
      });
    }
    for (const auto& l : pl.loads) {
      if (l.tensor_copy) continue;
      const DV ptr = operand(*l.load, 0);
      std::optional<DV> mask;
      if (l.load->attrs.ints.at(0) != 0) mask = operand(*l.load, 1);
      llvm::Value* writer = is_writer(ptr.layout);
      for (std::size_t r0 = 0; r0 < ptr.regs.size(); r0 += static_cast<std::size_t>(l.run)) {
        const int r = static_cast<int>(r0);
        llvm::Value* i = coord(ptr.layout, r, 0);
        llvm::Value* j = coord(ptr.layout, r, 1);
        llvm::Value* in_tile;
        if (l.swizzled) {
          in_tile = swizzled_offset(l.rows, l.cols, l.elem_bytes, i, j);
        } else {
          llvm::Value* flat = B.CreateAdd(B.CreateMul(i, B.getInt32(static_cast<std::uint32_t>(l.ld))), j);
          in_tile = B.CreateMul(B.CreateZExt(flat, i64), B.getInt64(static_cast<std::uint64_t>(l.elem_bytes)));
        }
        llvm::Value* off = B.CreateAdd(B.CreateAdd(stage_off, B.getInt64(l.offset)), in_tile);
        llvm::Value* src_ok = mask ? B.CreateAnd(valid, mask->regs[r0]) : valid;
        copies().copy(S, smem_abs(off), ptr.regs[r0], static_cast<int>(l.run * l.elem_bytes), src_ok, writer);
      }
    }
    if (!pl.tensor_copy) copies().commit(S);
    for (std::size_t k = 0; k < nc; ++k)
      if (pl.ahead_arg[k]) carried[k] = fit(get(yield->operand(static_cast<unsigned>(k))), k);
    smem_floor_ = floor;
  };

  // prologue: iterations 0 .. ahead - 1
  std::vector<DV> cur = init;
  for (int s = 0; s < ahead; ++s) {
    auto [ivv, valid] = ahead_iter(lo, s);
    issue(ivv, valid, cur, B.getInt32(static_cast<std::uint32_t>(s)));
  }

  llvm::BasicBlock* pre = B.GetInsertBlock();
  auto* loop = llvm::BasicBlock::Create(ctx, "for.pipelined", S.fn);
  auto* exit = llvm::BasicBlock::Create(ctx, "for.exit", S.fn);
  B.CreateCondBr(sg ? B.CreateICmpSLT(lo, hi) : B.CreateICmpULT(lo, hi), loop, exit);
  B.SetInsertPoint(loop);
  llvm::PHINode* iv = B.CreatePHI(lo->getType(), 2, "iv");
  iv->addIncoming(lo, pre);
  llvm::PHINode* slot = B.CreatePHI(B.getInt32Ty(), 2, "ring.slot");
  slot->addIncoming(B.getInt32(0), pre);
  // the parity of the phase of slot's barrier that iteration i waits for: (i / buffers) % 2
  llvm::PHINode* phase = B.CreatePHI(B.getInt32Ty(), 2, "ring.phase");
  phase->addIncoming(B.getInt32(0), pre);
  std::vector<std::vector<llvm::PHINode*>> phis(nc);
  std::vector<DV> now(nc);
  for (std::size_t k = 0; k < nc; ++k) {
    now[k] = DV{cur[k].layout, {}, cur[k].type};
    for (llvm::Value* r : cur[k].regs) {
      llvm::PHINode* p = B.CreatePHI(r->getType(), 2);
      p->addIncoming(r, pre);
      phis[k].push_back(p);
      now[k].regs.push_back(p);
    }
  }
  if (pl.tensor_copy) {
    // the TMA's copies land in the async proxy wgmma reads; the CTA barrier that frees a buffer
    // comes after the dots
    copies().barrier_wait(S, bar(slot), phase);
    smem_dirty_ = true;  // other shared-memory users of the body: the previous iteration's threads
  } else {
    copies().wait(S, pl.stages - 2);
    // the copies visible to the dots' reads (wgmma reads through the async proxy: one fence)
    const ir::Op* wg = nullptr;
    for (const auto& [d, idx] : pl.dots)
      if (layout::engine_of(*d) == layout::mma_engine::warpgroup) wg = d;
    if (wg) mma().make_visible(*this, *wg);
    barrier();
  }
  // the buffer of iteration i + stages - 1: with wgmma left in flight, iteration i - 1's buffer
  // is still being read (the ring has one more)
  const auto R = static_cast<std::uint32_t>(pl.buffers);
  llvm::Value* ws = B.CreateAdd(slot, B.getInt32(static_cast<std::uint32_t>(ahead)));
  ws = B.CreateSelect(B.CreateICmpUGE(ws, B.getInt32(R)), B.CreateSub(ws, B.getInt32(R)), ws, "ring.write");
  // the copies for iteration i + stages - 1: before the body's dots (mma.sync: they fly while
  // the dots compute), or after them when wgmma runs asynchronously (its issue comes first; the
  // copies then overlap it)
  std::vector<DV> ahead_vals = now;
  auto issue_ahead = [&] {
    auto [ivv, valid] = ahead_iter(iv, ahead);
    issue(ivv, valid, ahead_vals, ws);
  };
  if (!pl.async_mma && !pl.tensor_copy) issue_ahead();

  // the body in order
  set(body.arg(0), scalar_dv(iv, it));
  for (std::size_t k = 0; k < nc; ++k) set(body.arg(static_cast<unsigned>(k + 1)), now[k]);
  smem_floor_ = ring_base + ring_bytes;
  llvm::Value* read_off = B.CreateAdd(B.getInt64(ring_base), B.CreateMul(B.CreateZExt(slot, i64), B.getInt64(pl.stage_bytes)));
  for (const auto& o : body.ops) {
    if (o.get() == yield || pl.ahead_only.count(o.get()) || pl.is_pipelined_load(o.get())) continue;
    if (auto d = pl.dots.find(o.get()); d != pl.dots.end()) {
      const auto& la = pl.loads[static_cast<std::size_t>(d->second[0])];
      const auto& lb = pl.loads[static_cast<std::size_t>(d->second[1])];
      const DV acc = operand(*o, 2);
      llvm::Value* a_at = B.CreateAdd(read_off, B.getInt64(la.offset));
      llvm::Value* b_at = B.CreateAdd(read_off, B.getInt64(lb.offset));
      set(o->result(), mma().dot(*this, *o, a_at, b_at, la.ld, lb.ld, acc, pl.async_mma ? 1 : 0));
      continue;
    }
    lower_op(*o);
  }
  std::vector<DV> y(nc);
  for (std::size_t k = 0; k < nc; ++k)
    if (!pl.ahead_arg[k]) y[k] = fit(get(yield->operand(static_cast<unsigned>(k))), k);
  smem_floor_ = ring_base;
  if (pl.tensor_copy) {
    // every warp is done with the buffer the copies refill: iteration i - 1's with wgmma left in
    // flight (each waited for it above), else this iteration's
    barrier();
    issue_ahead();
  } else if (pl.async_mma) {
    issue_ahead();
  }
  for (std::size_t k = 0; k < nc; ++k)
    if (pl.ahead_arg[k]) y[k] = ahead_vals[k];

  auto [next, more] = for_next(iv, step, hi, sg);
  llvm::Value* slot1 = B.CreateAdd(slot, B.getInt32(1));
  llvm::Value* wrap = B.CreateICmpEQ(slot1, B.getInt32(R));
  slot1 = B.CreateSelect(wrap, B.getInt32(0), slot1);
  llvm::Value* phase1 = B.CreateXor(phase, B.CreateZExt(wrap, B.getInt32Ty()));
  llvm::BasicBlock* latch = B.GetInsertBlock();
  iv->addIncoming(next, latch);
  slot->addIncoming(slot1, latch);
  phase->addIncoming(phase1, latch);
  for (std::size_t k = 0; k < nc; ++k)
    for (std::size_t r = 0; r < phis[k].size(); ++r) phis[k][r]->addIncoming(y[k].regs.at(r), latch);
  B.CreateCondBr(more, loop, exit);

  B.SetInsertPoint(exit);
  for (std::size_t k = 0; k < nc; ++k) {
    DV res{cur[k].layout, {}, op.result(static_cast<unsigned>(k))->type};
    for (std::size_t r = 0; r < cur[k].regs.size(); ++r) {
      llvm::PHINode* p = B.CreatePHI(cur[k].regs[r]->getType(), 2);
      p->addIncoming(cur[k].regs[r], pre);
      p->addIncoming(y[k].regs.at(r), latch);
      res.regs.push_back(p);
    }
    set(op.result(static_cast<unsigned>(k)), std::move(res));
  }
  if (pl.async_mma)  // the last iteration's wgmma is still running: wait before any use
    for (std::size_t k = 0; k < nc; ++k)
      for (const auto& [d, idx] : pl.dots) {
        (void)idx;
        if (yield->operand(static_cast<unsigned>(k)) != d->result()) continue;
        DV res = get(op.result(static_cast<unsigned>(k)));
        for (std::size_t r0 = 0; r0 < res.regs.size(); r0 += 128) {
          const std::size_t n = std::min<std::size_t>(128, res.regs.size() - r0);
          std::vector<llvm::Value*> part(res.regs.begin() + static_cast<std::ptrdiff_t>(r0), res.regs.begin() + static_cast<std::ptrdiff_t>(r0 + n));
          part = mma().wait(*this, 0, part);
          std::copy(part.begin(), part.end(), res.regs.begin() + static_cast<std::ptrdiff_t>(r0));
        }
        set(op.result(static_cast<unsigned>(k)), std::move(res));
      }
  // copies past the loop's end are still in flight (zero-fills): drain them before the bytes
  // are anyone else's. The TMA issued none past the end, and every other was waited for: the
  // barriers are retired before their bytes are reused.
  if (pl.tensor_copy) {
    barrier();
    only_if(thread0, [&] {
      for (int k = 0; k < pl.buffers; ++k) copies().barrier_inval(S, bar(B.getInt32(static_cast<std::uint32_t>(k))));
    });
  } else {
    copies().wait(S, 0);
  }
  barrier();
}

}  // namespace tile::codegen::gpu
