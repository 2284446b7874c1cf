// src/codegen/lower_memory.cpp — layer: codegen. load, store, atomic_rmw, atomic_cas: one
// access per active element, masked-off elements untouched (loads give `other`, or 0). A load
// through an affine pointer tile is a contiguous loop LLVM vectorizes with masked vector loads.
// Atomics are compare-and-swap loops on the element's bits, so every kind and dtype (f16 add,
// NaN-ignoring float max/min) has the interpreter's exact semantics.
#include "codegen/lowering.hpp"

#include <optional>

namespace tile::codegen {

using ir::OpKind;

namespace {
llvm::Value* zero_of(llvm::Type* t) { return llvm::Constant::getNullValue(t); }
}  // namespace

std::optional<std::pair<llvm::Value*, llvm::Value*>> Lowering::byte_range(const TV& p) {
  // [lo, hi) as i64 addresses of the elements an affine or uniform pointer tile may touch
  if (p.k != TV::K::affine && p.k != TV::K::uniform && p.k != TV::K::scalar) return std::nullopt;
  const std::int64_t es = size_of(p.type.elem);
  std::int64_t lo = 0, hi = 0;
  if (p.k == TV::K::affine)
    for (std::size_t d = 0; d < p.coef.size(); ++d) {
      const std::int64_t span = p.coef[d] * (p.type.shape.at(d) - 1);
      (span < 0 ? lo : hi) += span;
    }
  llvm::Value* base = b->CreatePtrToInt(p.v, b->getInt64Ty());
  return std::make_pair(b->CreateAdd(base, i64(lo * es)), b->CreateAdd(base, i64(hi * es + es)));
}

llvm::Value* Lowering::fused_store_is_safe(const TV& dst, const std::vector<TV>& reads, const ir::Type&) {
  auto d = byte_range(dst);
  if (!d) return nullptr;
  llvm::Value* ok = b->getTrue();
  for (const TV& r : reads) {
    auto s = byte_range(r);
    if (!s) return nullptr;
    // disjoint, or the same element mapping (each element read just before it is written)
    llvm::Value* disjoint = b->CreateOr(b->CreateICmpULE(d->second, s->first), b->CreateICmpULE(s->second, d->first));
    llvm::Value* same = b->getFalse();
    if (r.k == dst.k && r.coef == dst.coef && size_of(r.type.elem) == size_of(dst.type.elem))
      same = b->CreateICmpEQ(b->CreatePtrToInt(r.v, b->getInt64Ty()), b->CreatePtrToInt(dst.v, b->getInt64Ty()));
    ok = b->CreateAnd(ok, b->CreateOr(disjoint, same));
  }
  return ok;
}

llvm::Value* Lowering::atomic_element(const ir::Op& op, llvm::Value* p, llvm::Value* v, llvm::Value* cmp) {
  const bool is_cas = op.kind == OpKind::atomic_cas;
  const auto kind = is_cas ? atomic_kind::xchg : static_cast<atomic_kind>(op.attrs.ints.at(0));
  const ir::Type vt{op.operand(0)->type.elem, false, {}};
  llvm::Type* st = storage_type(vt);
  llvm::Type* bits = b->getIntNTy(static_cast<unsigned>(st->getPrimitiveSizeInBits()));
  const dtype e = vt.elem;
  auto to_bits = [&](llvm::Value* r) { return b->CreateBitCast(to_storage(r, vt), bits); };
  auto from_bits = [&](llvm::Value* i) { return from_storage(b->CreateBitCast(i, st), vt); };
  auto combine = [&](llvm::Value* old, llvm::Value* x) -> llvm::Value* {
    if (kind == atomic_kind::xchg) return x;
    if (is_float(e)) {
      llvm::Value* a = to_compute(old, e);
      llvm::Value* y = to_compute(x, e);
      llvm::Value* r = kind == atomic_kind::add ? b->CreateFAdd(a, y)
                       : kind == atomic_kind::max ? min_max_num(a, y, false)
                       : kind == atomic_kind::min ? min_max_num(a, y, true)
                                                  : nullptr;
      if (!r) unsupported(op, "bitwise atomic on a float");
      return from_compute(r, e);
    }
    const bool s = is_signed(e);
    switch (kind) {
      case atomic_kind::add: return b->CreateAdd(old, x);
      case atomic_kind::max: return b->CreateSelect(s ? b->CreateICmpSGT(x, old) : b->CreateICmpUGT(x, old), x, old);
      case atomic_kind::min: return b->CreateSelect(s ? b->CreateICmpSLT(x, old) : b->CreateICmpULT(x, old), x, old);
      case atomic_kind::bit_and: return b->CreateAnd(old, x);
      case atomic_kind::bit_or: return b->CreateOr(old, x);
      case atomic_kind::bit_xor: return b->CreateXor(old, x);
      default: return x;
    }
  };
  if (is_cas) {
    auto* x = b->CreateAtomicCmpXchg(p, to_bits(cmp), to_bits(v), llvm::MaybeAlign(), llvm::AtomicOrdering::SequentiallyConsistent,
                                     llvm::AtomicOrdering::SequentiallyConsistent);
    return from_bits(b->CreateExtractValue(x, 0));
  }
  llvm::LoadInst* first = b->CreateLoad(bits, p);
  first->setAtomic(llvm::AtomicOrdering::Monotonic);
  llvm::BasicBlock* pre = b->GetInsertBlock();
  auto* loop = llvm::BasicBlock::Create(ctx, "cas", fn);
  auto* done = llvm::BasicBlock::Create(ctx, "cas.done", fn);
  b->CreateBr(loop);
  b->SetInsertPoint(loop);
  llvm::PHINode* cur = b->CreatePHI(bits, 2);
  cur->addIncoming(first, pre);
  llvm::Value* nv = to_bits(combine(from_bits(cur), v));
  auto* x = b->CreateAtomicCmpXchg(p, cur, nv, llvm::MaybeAlign(), llvm::AtomicOrdering::SequentiallyConsistent,
                                   llvm::AtomicOrdering::SequentiallyConsistent);
  llvm::Value* seen = b->CreateExtractValue(x, 0);
  cur->addIncoming(seen, b->GetInsertBlock());
  b->CreateCondBr(b->CreateExtractValue(x, 1), done, loop);
  b->SetInsertPoint(done);
  return from_bits(cur);
}

void Lowering::lower_memory(const ir::Op& op) {
  const ir::Type& pt = op.operand(0)->type;
  const TV& ptr = get(op.operand(0));
  const ir::Type vt{pt.elem, false, {}};  // the pointee as a scalar type
  llvm::Type* st = storage_type(vt);
  llvm::Type* rty = reg_type(vt);
  // the element at ix of an optional operand (null: absent)
  auto at = [&](const TV* t, const Index& ix) -> llvm::Value* { return t ? elem(*t, ix) : nullptr; };
  auto load_one = [&](llvm::Value* addr, bool vol) -> llvm::Value* {
    llvm::LoadInst* l = b->CreateLoad(st, addr, vol);
    if (vt.elem == dtype::i1) return b->CreateICmpNE(l, llvm::ConstantInt::get(st, 0));
    return l;
  };

  switch (op.kind) {
    case OpKind::load: {
      const bool has_mask = op.attrs.ints.at(0) != 0, has_other = op.attrs.ints.at(1) != 0;
      const bool vol = op.attrs.ints.size() > 4 && op.attrs.ints[4] != 0;
      const TV* mask = has_mask ? &get(op.operand(1)) : nullptr;
      const TV* other = has_other ? &get(op.operand(2)) : nullptr;
      const ir::Type& rt = op.result()->type;
      auto one = [&](const Index& ix) -> llvm::Value* {
        llvm::Value* p = elem(ptr, ix);
        if (!mask) return load_one(p, vol);
        llvm::Value* m = elem(*mask, ix);
        return if_else(m, [&] { return load_one(p, vol); },
                       [&] { return other ? at(other, ix) : zero_of(rty); }, "ld");
      };
      if (rt.is_scalar()) {
        set(op.result(), scalar(one(Index{{}, i64(0)}), rt));
        return;
      }
      if (fusible(op.result()) && !vol) {  // fused into its consumer (see lowering.hpp)
        TV r{TV::K::lazy, nullptr, {}, rt};
        r.reads.push_back(ptr);
        if (mask && mask->k == TV::K::lazy) r.reads.insert(r.reads.end(), mask->reads.begin(), mask->reads.end());
        if (other && other->k == TV::K::lazy) r.reads.insert(r.reads.end(), other->reads.begin(), other->reads.end());
        const TV p = ptr;
        const std::optional<TV> m = mask ? std::optional<TV>(*mask) : std::nullopt;
        const std::optional<TV> o = other ? std::optional<TV>(*other) : std::nullopt;
        r.fn = std::make_shared<const std::function<llvm::Value*(const Index&)>>(
            [this, p, m, o, st, rty, is_i1 = vt.elem == dtype::i1](const Index& ix) -> llvm::Value* {
              auto ld = [&]() -> llvm::Value* {
                llvm::Value* v = b->CreateLoad(st, elem(p, ix));
                return is_i1 ? b->CreateICmpNE(v, llvm::ConstantInt::get(st, 0)) : v;
              };
              if (!m) return ld();
              return if_else(elem(*m, ix), ld, [&] { return o ? elem(*o, ix) : zero_of(rty); }, "ld");
            });
        set(op.result(), std::move(r));
        note_reads(op.result());
        return;
      }
      set(op.result(), compute(rt, one));
      return;
    }
    case OpKind::store: {
      const bool has_mask = op.attrs.ints.at(0) != 0;
      const TV& val = get(op.operand(1));
      const TV* mask = has_mask ? &get(op.operand(2)) : nullptr;
      // one store loop: element ix of v through element ix of p where m (if any) is set
      auto store_loop = [&](const TV& p, const TV& v, const TV* m) {
        auto one = [&](const Index& ix) {
          llvm::Value* addr = elem(p, ix);
          auto st1 = [&]() -> llvm::Value* {
            b->CreateStore(to_storage(elem(v, ix), vt), addr);
            return nullptr;
          };
          if (!m)
            st1();
          else
            if_else(elem(*m, ix), st1, nullptr, "st");
        };
        if (pt.is_scalar())
          one(Index{{}, i64(0)});
        else
          loop_nest(pt.shape, one);
      };
      // the unfused form: every fused load done first, then the stores
      auto store_unfused = [&]() -> llvm::Value* {
        const TV v2 = materialize(val);
        const std::optional<TV> m2 = mask ? std::optional<TV>(materialize(*mask)) : std::nullopt;
        const TV p2 = ptr.k == TV::K::lazy ? materialize(ptr) : ptr;
        store_loop(p2, v2, m2 ? &*m2 : nullptr);
        return nullptr;
      };
      std::vector<TV> reads;
      for (const TV* t : {&val, mask, &ptr})
        if (t && t->k == TV::K::lazy) reads.insert(reads.end(), t->reads.begin(), t->reads.end());
      if (reads.empty() || pt.is_scalar()) {
        store_loop(ptr, val, mask);
        return;
      }
      llvm::Value* safe = fused_store_is_safe(ptr, reads, vt);
      if (!safe) {  // no proof possible
        store_unfused();
        return;
      }
      // fused when the store cannot overwrite an element still to be read, else unfused
      if_else(safe, [&]() -> llvm::Value* { store_loop(ptr, val, mask); return nullptr; }, store_unfused, "fuse");
      return;
    }
    case OpKind::atomic_rmw:
    case OpKind::atomic_cas: {
      const bool is_cas = op.kind == OpKind::atomic_cas;
      const bool has_mask = !is_cas && op.attrs.ints.size() > 1 && op.attrs.ints[1] != 0;
      const TV& val = get(op.operand(is_cas ? 2 : 1));
      const TV* cmpv = is_cas ? &get(op.operand(1)) : nullptr;
      const TV* mask = has_mask ? &get(op.operand(2)) : nullptr;
      auto one = [&](const Index& ix) -> llvm::Value* {
        llvm::Value* p = elem(ptr, ix);
        llvm::Value* v = elem(val, ix);
        auto doit = [&]() -> llvm::Value* { return atomic_element(op, p, v, cmpv ? elem(*cmpv, ix) : nullptr); };
        if (!mask) return doit();
        return if_else(elem(*mask, ix), doit, [&] { return zero_of(rty); }, "at");
      };
      const ir::Type& rt = op.result()->type;
      if (rt.is_scalar()) {
        set(op.result(), scalar(one(Index{{}, i64(0)}), rt));
        return;
      }
      set(op.result(), compute(rt, one));
      return;
    }
    default: unsupported(op, "not a memory op");
  }
}

}  // namespace tile::codegen
