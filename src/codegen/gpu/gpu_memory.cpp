// src/codegen/gpu/gpu_memory.cpp — layer: codegen (gpu). load, store, atomic_rmw, atomic_cas.
//
// A tile access walks the thread's registers in runs of `w` consecutive elements along the
// layout's fastest axis, where w (a power of two, at most 16 bytes) is what the layout, the
// pointer's contiguity and alignment and the mask's constancy (analysis/axis_info.hpp) allow:
// one global access per run. Unmasked runs are plain LLVM vector loads/stores in the global
// address space (one 128-bit access for 4 x 32 bits); masked runs of 32 bits or more are
// predicated vector accesses in inline assembly, smaller ones a branch. Threads that hold
// replicated copies of elements do not store them, and atomics run once per element (the old
// values reach the copies through shared memory).

#include <cstdio>

#include "codegen/gpu/gpu_lowering.hpp"

namespace tile::codegen::gpu {

using ir::OpKind;

llvm::Value* GpuLowering::storage_run(const DV& val, std::size_t r0, int w, const ir::Type& st) {
  auto& B = b();
  llvm::Value* v = llvm::PoisonValue::get(llvm::FixedVectorType::get(S.storage_type(st), static_cast<unsigned>(w)));
  for (int i = 0; i < w; ++i)
    v = B.CreateInsertElement(v, S.to_storage(val.regs[r0 + static_cast<std::size_t>(i)], st), static_cast<std::uint64_t>(i));
  if ((st.elem != dtype::f16 && st.elem != dtype::bf16) || w % 2) return v;
  // words of two f32 -> 16-bit conversions: one cvt each
  v = B.CreateBitCast(v, llvm::FixedVectorType::get(B.getInt32Ty(), static_cast<unsigned>(w / 2)));
  for (int i = 0; i < w / 2; ++i)
    if (llvm::Value* word = pack_16x2(val.regs[r0 + 2 * static_cast<std::size_t>(i)], val.regs[r0 + 2 * static_cast<std::size_t>(i) + 1]))
      v = B.CreateInsertElement(v, word, static_cast<std::uint64_t>(i));
  return v;
}

llvm::Value* GpuLowering::pack_16x2(llvm::Value* lo, llvm::Value* hi) {
  // f16: fptrunc float -> half; bf16 (stored as i16): bitcast of fptrunc float -> bfloat
  auto source = [](llvm::Value* v, llvm::Type*& to) -> llvm::Value* {
    if (auto* c = llvm::dyn_cast<llvm::BitCastInst>(v)) v = c->getOperand(0);
    auto* t = llvm::dyn_cast<llvm::FPTruncInst>(v);
    if (!t || !t->getSrcTy()->isFloatTy() || !(t->getDestTy()->isHalfTy() || t->getDestTy()->isBFloatTy())) return nullptr;
    to = t->getDestTy();
    return t->getOperand(0);
  };
  llvm::Type *ta = nullptr, *tb = nullptr;
  llvm::Value* a = source(lo, ta);
  llvm::Value* c = source(hi, tb);
  if (!a || !c || ta != tb) return nullptr;
  // d = {hi's conversion in the upper half, lo's in the lower}: the same rounding (and NaN) as
  // each conversion alone, in one instruction where the target has one
  return target.pack_narrow_pair(S, c, a, ta->isBFloatTy());
}

void GpuLowering::lower_memory(const ir::Op& op) {
  auto& B = b();
  const ir::Type& pt = op.operand(0)->type;
  const ir::Type vt{pt.elem, false, {}};
  llvm::Type* st = S.storage_type(vt);
  llvm::Type* rty = S.reg_type(vt);
  const std::int64_t es = static_cast<std::int64_t>(S.mod->getDataLayout().getTypeAllocSize(st));
  auto* gptr = llvm::PointerType::get(S.ctx, 1);
  auto global = [&](llvm::Value* p) { return B.CreateAddrSpaceCast(p, gptr); };
  auto zero = [&]() { return llvm::Constant::getNullValue(rty); };
  const bool rank0 = pt.shape.empty();
  // an element read from global memory: any nonzero byte is a true i1 (the interpreter's rule)
  auto from_mem = [&](llvm::Value* m) -> llvm::Value* {
    if (vt.elem == dtype::i1) return B.CreateICmpNE(m, llvm::ConstantInt::get(m->getType(), 0));
    return S.from_storage(m, vt);
  };

  // the run width of this access
  auto run_width = [&](const layout::LinearLayout& l, const ir::Value* mask) -> std::pair<int, int> {
    if (rank0) return {1, 0};
    auto [w, ax] = register_run(l);
    const auto& pi = axis.at(op.operand(0));
    const auto ua = static_cast<std::size_t>(ax);
    std::int64_t limit = std::min<std::int64_t>({w, pi.contiguity[ua], std::max<std::int64_t>(1, pi.divisibility[ua] / es),
                                                 std::max<std::int64_t>(1, 16 / es)});
    if (mask) limit = std::min(limit, axis.at(mask).constancy[ua]);
    int v = 1;
    while (v * 2 <= limit) v *= 2;
    return {v, ax};
  };
  // words of a run: n x i32 when the run is 32 bits or more
  auto words = [&](int w) -> int { return static_cast<int>(w * es * 8 >= 32 ? w * es / 4 : 0); };

  switch (op.kind) {
    case OpKind::load: {
      const bool has_mask = op.attrs.ints.at(0) != 0, has_other = op.attrs.ints.at(1) != 0;
      const bool vol = op.attrs.ints.size() > 4 && op.attrs.ints[4] != 0;
      DV ptr = operand(op, 0);
      std::optional<DV> mask, other;
      if (has_mask) mask = operand(op, 1);
      if (has_other) other = operand(op, 2);
      const layout::LinearLayout l = rank0 ? scalar_ : layout_of(op.result());
      DV out{l, std::vector<llvm::Value*>(ptr.regs.size(), nullptr), op.result()->type};
      auto [w, ax] = run_width(ptr.layout, has_mask ? op.operand(1) : nullptr);
      (void)ax;
      if (vol) w = 1;
      const int nw = words(w);
      for (std::size_t r0 = 0; r0 < ptr.regs.size(); r0 += static_cast<std::size_t>(w)) {
        llvm::Value* addr = ptr.regs[r0];
        // a run's mask is constant over it (run_width): its first element's predicate is the run's
        llvm::Value* m = mask ? mask->regs[r0] : nullptr;
        // the run's `other` as the words a masked-off load leaves: known when it is one constant
        // (the usual 0, -inf, …), so no select follows the load
        std::vector<std::uint32_t> fill_words(static_cast<std::size_t>(nw), 0u);
        bool folded_other = !other;
        if (other && w > 1 && nw > 0) {
          llvm::Value* c0 = other->regs[r0];
          bool same = llvm::isa<llvm::Constant>(c0);
          for (int i = 1; i < w && same; ++i) same = other->regs[r0 + static_cast<std::size_t>(i)] == c0;
          if (same) {
            llvm::Value* sv = S.to_storage(c0, vt);
            llvm::Value* ev = llvm::PoisonValue::get(llvm::FixedVectorType::get(st, static_cast<unsigned>(w)));
            for (int i = 0; i < w; ++i) ev = B.CreateInsertElement(ev, sv, static_cast<std::uint64_t>(i));
            llvm::Value* wv = B.CreateBitCast(ev, llvm::FixedVectorType::get(B.getInt32Ty(), static_cast<unsigned>(nw)));
            folded_other = true;
            for (int i = 0; i < nw && folded_other; ++i) {
              auto* ci = llvm::dyn_cast<llvm::ConstantInt>(B.CreateExtractElement(wv, static_cast<std::uint64_t>(i)));
              if (ci)
                fill_words[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>(ci->getZExtValue());
              else
                folded_other = false;
            }
            if (!folded_other) fill_words.assign(static_cast<std::size_t>(nw), 0u);  // (masked-off words: 0)
          }
        }
        std::vector<llvm::Value*> elems;
        if (w > 1 && nw > 0) {
          auto* vty = llvm::FixedVectorType::get(B.getInt32Ty(), static_cast<unsigned>(nw));
          llvm::Value* vec;
          if (!m) {
            auto* ld = B.CreateAlignedLoad(nw == 1 ? static_cast<llvm::Type*>(B.getInt32Ty()) : vty, global(addr), llvm::Align(static_cast<std::uint64_t>(w * es)));
            vec = ld;
            if (nw == 1) vec = B.CreateInsertElement(llvm::PoisonValue::get(vty), ld, std::uint64_t{0});
          } else {
            // one predicated access; masked-off words keep `other`'s bits (or 0)
            vec = target.load_words_if(S, m, B.CreatePtrToInt(addr, B.getInt64Ty()), nw, fill_words);
            if (!vec) {  // (a target without predicated accesses: a branch)
              llvm::Value* fv = llvm::PoisonValue::get(vty);
              for (int i = 0; i < nw; ++i) fv = B.CreateInsertElement(fv, B.getInt32(fill_words[static_cast<std::size_t>(i)]), static_cast<std::uint64_t>(i));
              vec = S.if_else(m, [&]() -> llvm::Value* { return B.CreateAlignedLoad(vty, global(addr), llvm::Align(static_cast<std::uint64_t>(w * es))); },
                              [&]() -> llvm::Value* { return fv; }, "ld");
            }
          }
          llvm::Value* ev = B.CreateBitCast(vec, llvm::FixedVectorType::get(st, static_cast<unsigned>(w)));
          for (int i = 0; i < w; ++i) elems.push_back(from_mem(B.CreateExtractElement(ev, static_cast<std::uint64_t>(i))));
        } else {
          for (int i = 0; i < w; ++i) {
            llvm::Value* a = ptr.regs[r0 + static_cast<std::size_t>(i)];
            llvm::Value* mi = mask ? mask->regs[r0 + static_cast<std::size_t>(i)] : nullptr;
            auto ld = [&]() -> llvm::Value* {
              auto* li = B.CreateAlignedLoad(st, global(a), llvm::Align(static_cast<std::uint64_t>(es)), vol);
              return from_mem(li);
            };
            elems.push_back(mi ? S.if_else(mi, ld, zero, "ld") : ld());
          }
        }
        for (int i = 0; i < w; ++i) {
          const std::size_t r = r0 + static_cast<std::size_t>(i);
          llvm::Value* v = elems[static_cast<std::size_t>(i)];
          if (mask && w > 1 && nw > 0) {  // one predicated access for the run
            if (!folded_other) v = B.CreateSelect(m, v, other->regs[r]);
          } else if (mask && (other || w > 1)) {
            v = B.CreateSelect(w > 1 ? m : mask->regs[r], v, other ? other->regs[r] : zero());
          }
          out.regs[r] = v;
        }
      }
      set(op.result(), std::move(out));
      return;
    }
    case OpKind::store: {
      const bool has_mask = op.attrs.ints.at(0) != 0;
      DV ptr = operand(op, 0);
      DV val = operand(op, 1);
      std::optional<DV> mask;
      if (has_mask) mask = operand(op, 2);
      llvm::Value* writer = is_writer(ptr.layout);
      const bool all_write = llvm::isa<llvm::ConstantInt>(writer);
      auto [w, ax] = run_width(ptr.layout, has_mask ? op.operand(2) : nullptr);
      (void)ax;
      const int nw = words(w);
      for (std::size_t r0 = 0; r0 < ptr.regs.size(); r0 += static_cast<std::size_t>(w)) {
        llvm::Value* addr = ptr.regs[r0];
        llvm::Value* m = mask ? mask->regs[r0] : nullptr;
        if (!all_write) m = m ? B.CreateAnd(m, writer) : writer;
        if (w > 1 && nw > 0) {
          auto* vty = llvm::FixedVectorType::get(B.getInt32Ty(), static_cast<unsigned>(nw));
          llvm::Value* vec = B.CreateBitCast(storage_run(val, r0, w, vt), vty);
          if (!m) {
            llvm::Value* data = nw == 1 ? B.CreateExtractElement(vec, std::uint64_t{0}) : vec;
            B.CreateAlignedStore(data, global(addr), llvm::Align(static_cast<std::uint64_t>(w * es)));
          } else {
            if (!target.store_words_if(S, m, B.CreatePtrToInt(addr, B.getInt64Ty()), vec))  // (else a branch)
              S.if_else(m, [&]() -> llvm::Value* {
                B.CreateAlignedStore(vec, global(addr), llvm::Align(static_cast<std::uint64_t>(w * es)));
                return nullptr;
              }, nullptr, "st");
          }
        } else {
          for (int i = 0; i < w; ++i) {
            const std::size_t r = r0 + static_cast<std::size_t>(i);
            llvm::Value* mi = mask ? mask->regs[r] : nullptr;
            if (!all_write) mi = mi ? B.CreateAnd(mi, writer) : writer;
            if (rank0) mi = mi ? B.CreateAnd(mi, writer) : writer;
            auto st1 = [&]() -> llvm::Value* {
              B.CreateAlignedStore(S.to_storage(val.regs[r], vt), global(ptr.regs[r]), llvm::Align(static_cast<std::uint64_t>(es)));
              return nullptr;
            };
            if (mi && !(llvm::isa<llvm::ConstantInt>(mi) && llvm::cast<llvm::ConstantInt>(mi)->isOne()))
              S.if_else(mi, st1, nullptr, "st");
            else
              st1();
          }
        }
      }
      return;
    }
    case OpKind::atomic_rmw:
    case OpKind::atomic_cas: {
      const bool is_cas = op.kind == OpKind::atomic_cas;
      const bool has_mask = !is_cas && op.attrs.ints.size() > 1 && op.attrs.ints[1] != 0;
      DV ptr = operand(op, 0);
      DV val = operand(op, is_cas ? 2 : 1);
      std::optional<DV> cmpv, mask;
      if (is_cas) cmpv = operand(op, 1);
      if (has_mask) mask = operand(op, 2);
      const layout::LinearLayout l = rank0 ? scalar_ : layout_of(op.result());
      llvm::Value* writer = is_writer(ptr.layout);
      const auto kind = is_cas ? detail::atomic_kind::xchg : static_cast<detail::atomic_kind>(op.attrs.ints.at(0));
      const dtype e = vt.elem;
      const bool native_int = !is_cas && is_int(e) && e != dtype::i1 && size_of(e) >= 4 &&
                              kind != detail::atomic_kind::xchg;
      const bool native_float = !is_cas && (e == dtype::f32 || e == dtype::f64) && kind == detail::atomic_kind::add;
      DV out{l, {}, op.result()->type};
      for (std::size_t r = 0; r < ptr.regs.size(); ++r) {
        llvm::Value* m = writer;
        if (mask) m = B.CreateAnd(m, mask->regs[r]);
        llvm::Value* p = ptr.regs[r];
        llvm::Value* v = val.regs[r];
        auto doit = [&]() -> llvm::Value* {
          if (native_int || native_float) {
            llvm::AtomicRMWInst::BinOp bop = llvm::AtomicRMWInst::Add;
            const bool s = is_signed(e);
            switch (kind) {
              case detail::atomic_kind::add: bop = native_float ? llvm::AtomicRMWInst::FAdd : llvm::AtomicRMWInst::Add; break;
              case detail::atomic_kind::max: bop = s ? llvm::AtomicRMWInst::Max : llvm::AtomicRMWInst::UMax; break;
              case detail::atomic_kind::min: bop = s ? llvm::AtomicRMWInst::Min : llvm::AtomicRMWInst::UMin; break;
              case detail::atomic_kind::bit_and: bop = llvm::AtomicRMWInst::And; break;
              case detail::atomic_kind::bit_or: bop = llvm::AtomicRMWInst::Or; break;
              case detail::atomic_kind::bit_xor: bop = llvm::AtomicRMWInst::Xor; break;
              default: break;
            }
            return B.CreateAtomicRMW(bop, global(p), v, llvm::MaybeAlign(static_cast<std::uint64_t>(es)),
                                     llvm::AtomicOrdering::AcquireRelease);
          }
          return S.atomic_element(op, p, v, cmpv ? cmpv->regs[r] : nullptr);
        };
        out.regs.push_back(S.if_else(m, doit, zero, "atomic"));
      }
      // copies of the elements (replicated threads) get the old values from their writers
      if (ptr.layout.lane_dup_mask() || ptr.layout.warp_dup_mask()) {
        const std::int64_t n = rank0 ? 1 : op.result()->type.numel();
        reserve(static_cast<std::uint64_t>(n * es));
        scratch_phase();
        auto off = [&](int r) {
          llvm::Value* flat = B.getInt32(0);
          for (std::size_t d = 0; d < pt.shape.size(); ++d)
            flat = B.CreateAdd(B.CreateMul(flat, B.getInt32(static_cast<std::uint32_t>(pt.shape[d]))), coord(l, r, static_cast<int>(d)));
          return B.CreateMul(B.CreateZExt(flat, B.getInt64Ty()), B.getInt64(static_cast<std::uint64_t>(es)));
        };
        for (int r = 0; r < l.num_regs(); ++r) {
          llvm::Value* at = smem_at(off(r));
          llvm::Value* ov = out.regs[static_cast<std::size_t>(r)];
          S.if_else(writer, [&]() -> llvm::Value* { B.CreateStore(S.to_storage(ov, vt), at); return nullptr; }, nullptr, "share");
        }
        barrier();
        for (int r = 0; r < l.num_regs(); ++r) out.regs[static_cast<std::size_t>(r)] = S.from_storage(B.CreateLoad(st, smem_at(off(r))), vt);
      }
      set(op.result(), std::move(out));
      return;
    }
    default: unsupported(op, "not a memory op");
  }
}

}  // namespace tile::codegen::gpu
