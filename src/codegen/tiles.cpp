// src/codegen/tiles.cpp — layer: codegen. Tiles as values: storage types, element access for
// each representation (scalar, uniform, affine, buffer views), loop nests, materialization, and
// the shape ops, which are free wherever a view can express them (splat, broadcast,
// expand_dims, permute, split, reshape of a contiguous buffer).
#include "codegen/lowering.hpp"

namespace tile::codegen {

using ir::OpKind;

llvm::Type* Lowering::storage_type(dtype t, bool ptr) const {
  if (ptr) return llvm::PointerType::get(ctx, 0);
  switch (t) {
    case dtype::i1:
    case dtype::i8:
    case dtype::u8: return llvm::Type::getInt8Ty(ctx);
    case dtype::i16:
    case dtype::u16:
    case dtype::bf16: return llvm::Type::getInt16Ty(ctx);
    case dtype::i32:
    case dtype::u32: return llvm::Type::getInt32Ty(ctx);
    case dtype::i64:
    case dtype::u64: return llvm::Type::getInt64Ty(ctx);
    case dtype::f16: return llvm::Type::getHalfTy(ctx);
    case dtype::f32: return llvm::Type::getFloatTy(ctx);
    case dtype::f64: return llvm::Type::getDoubleTy(ctx);
  }
  return nullptr;
}

llvm::Type* Lowering::reg_type(dtype t, bool ptr) const {
  if (!ptr && t == dtype::i1) return llvm::Type::getInt1Ty(ctx);
  return storage_type(t, ptr);
}

llvm::Value* Lowering::to_storage(llvm::Value* reg, const ir::Type& t) {
  if (!t.ptr && t.elem == dtype::i1) return b->CreateZExt(reg, b->getInt8Ty());
  return reg;
}
llvm::Value* Lowering::from_storage(llvm::Value* mem, const ir::Type& t) {
  if (!t.ptr && t.elem == dtype::i1) return b->CreateTrunc(mem, b->getInt1Ty());
  return mem;
}

std::vector<std::int64_t> Lowering::row_major(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> s(shape.size());
  std::int64_t k = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    s[d] = k;
    k *= shape[d];
  }
  return s;
}

llvm::Value* Lowering::alloc_buffer(const ir::Type& t, const char* name) {
  auto* ty = llvm::ArrayType::get(storage_type(t), static_cast<std::uint64_t>(std::max<std::int64_t>(1, t.numel())));
  const std::uint64_t bytes = mod->getDataLayout().getTypeAllocSize(ty);
  if (bytes > kStackTile) {
    llvm::IRBuilder<> eb(entry);  // after the allocas: the scratch base is computed once, in the entry block
    if (!scratch_base_) scratch_base_ = target.scratch_base(*this, eb);
    llvm::Value* p = eb.CreateConstInBoundsGEP1_64(eb.getInt8Ty(), scratch_base_, scratch_bytes_, name);
    scratch_bytes_ += (bytes + 63) / 64 * 64;
    return p;
  }
  llvm::IRBuilder<> eb(entry, entry->begin());
  auto* a = eb.CreateAlloca(ty, nullptr, name);
  a->setAlignment(llvm::Align(64));
  return a;
}

void Lowering::counted_loop(llvm::Value* lo, llvm::Value* hi, const std::function<void(llvm::Value*)>& body,
                            const char* name) {
  llvm::BasicBlock* pre = b->GetInsertBlock();
  auto* head = llvm::BasicBlock::Create(ctx, std::string(name) + ".head", fn);
  auto* bodyb = llvm::BasicBlock::Create(ctx, std::string(name) + ".body", fn);
  auto* exit = llvm::BasicBlock::Create(ctx, std::string(name) + ".exit", fn);
  b->CreateBr(head);
  b->SetInsertPoint(head);
  llvm::PHINode* iv = b->CreatePHI(lo->getType(), 2, name);
  iv->addIncoming(lo, pre);
  b->CreateCondBr(b->CreateICmpSLT(iv, hi), bodyb, exit);
  b->SetInsertPoint(bodyb);
  body(iv);
  llvm::Value* next = b->CreateAdd(iv, llvm::ConstantInt::get(iv->getType(), 1), "", true, true);
  iv->addIncoming(next, b->GetInsertBlock());
  b->CreateBr(head);
  b->SetInsertPoint(exit);
}

void Lowering::loop_nest(const std::vector<std::int64_t>& shape, const std::function<void(const Index&)>& body) {
  const auto strides = row_major(shape);
  Index ix;
  ix.axis.resize(shape.size());
  std::function<void(std::size_t, llvm::Value*)> rec = [&](std::size_t d, llvm::Value* flat) {
    if (d == shape.size()) {
      ix.flat = flat;
      body(ix);
      return;
    }
    counted_loop(i64(0), i64(shape[d]), [&](llvm::Value* iv) {
      ix.axis[d] = iv;
      llvm::Value* f = strides[d] == 1 ? iv : b->CreateMul(iv, i64(strides[d]), "", true, true);
      rec(d + 1, b->CreateAdd(flat, f, "", true, true));
    }, d + 1 == shape.size() ? "j" : "i");
  };
  rec(0, i64(0));
}

namespace {
llvm::Value* weighted_sum(llvm::IRBuilder<>& b, const std::vector<std::int64_t>& w, const Index& ix) {
  llvm::Value* s = nullptr;
  for (std::size_t d = 0; d < w.size(); ++d) {
    if (w[d] == 0) continue;
    llvm::Value* t = w[d] == 1 ? ix.axis[d] : b.CreateMul(ix.axis[d], b.getInt64(static_cast<std::uint64_t>(w[d])), "", false, true);
    s = s ? b.CreateAdd(s, t, "", false, true) : t;
  }
  return s ? s : b.getInt64(0);
}
}  // namespace

Index Lowering::index_of(std::vector<llvm::Value*> axes, const std::vector<std::int64_t>& shape) {
  Index ix;
  ix.axis = std::move(axes);
  ix.flat = weighted_sum(*b, row_major(shape), ix);
  return ix;
}

llvm::Value* Lowering::alloc_slot(const ir::Type& t, const char* name) {
  llvm::IRBuilder<> eb(entry, entry->begin());
  return eb.CreateAlloca(storage_type(t.scalar()), nullptr, name);
}
llvm::Value* Lowering::load_slot(llvm::Value* slot, const ir::Type& t) {
  return from_storage(b->CreateLoad(storage_type(t.scalar()), slot), t);
}
void Lowering::store_slot(llvm::Value* slot, const ir::Type& t, llvm::Value* v) {
  b->CreateStore(to_storage(v, t), slot);
}

llvm::Value* Lowering::elem_addr(const TV& buf, llvm::Value* flat) {
  return b->CreateInBoundsGEP(storage_type(buf.type), buf.v, flat);
}

llvm::Value* Lowering::elem(const TV& tv, const Index& ix) {
  switch (tv.k) {
    case TV::K::scalar:
    case TV::K::uniform: return tv.v;
    case TV::K::affine: {
      llvm::Value* off = weighted_sum(*b, tv.coef, ix);
      if (tv.type.ptr) return b->CreateInBoundsGEP(storage_type(tv.type.elem, false), tv.v, off);
      llvm::Type* ty = tv.v->getType();
      if (ty != off->getType()) off = b->CreateTrunc(off, ty);
      return b->CreateAdd(tv.v, off);
    }
    case TV::K::lazy: return (*tv.fn)(ix);
    case TV::K::buffer: {
      llvm::Value* at = tv.coef.empty() ? ix.flat : weighted_sum(*b, tv.coef, ix);
      return from_storage(b->CreateLoad(storage_type(tv.type), elem_addr(tv, at)), tv.type);
    }
  }
  return nullptr;
}

void Lowering::store_elem(llvm::Value* buf, const ir::Type& t, llvm::Value* flat, llvm::Value* r) {
  b->CreateStore(to_storage(r, t), b->CreateInBoundsGEP(storage_type(t), buf, flat));
}

TV Lowering::compute(const ir::Type& t, const std::function<llvm::Value*(const Index&)>& f) {
  llvm::Value* buf = alloc_buffer(t);
  loop_nest(t.shape, [&](const Index& ix) { store_elem(buf, t, ix.flat, f(ix)); });
  return TV{TV::K::buffer, buf, {}, t};
}

TV Lowering::materialize(const TV& tv) {
  if (tv.contiguous()) return tv;
  return compute(tv.type, [&](const Index& ix) { return elem(tv, ix); });
}

void Lowering::copy_into(llvm::Value* dst, const TV& src) {
  if (src.type.is_scalar()) {
    b->CreateStore(to_storage(src.v, src.type), dst);
    return;
  }
  loop_nest(src.type.shape, [&](const Index& ix) { store_elem(dst, src.type, ix.flat, elem(src, ix)); });
}

// ---- shape ops ----------------------------------------------------------------------------------

namespace {
std::vector<std::int64_t> strides_of(const TV& tv) {
  return tv.coef.empty() ? Lowering::row_major(tv.type.shape) : tv.coef;
}
}  // namespace

void Lowering::lower_shape(const ir::Op& op) {
  const ir::Type& rt = op.result()->type;
  const TV& x0 = get(op.operand(0));
  const TV x = x0.k == TV::K::lazy ? materialize(x0) : x0;  // views need memory
  auto view = [&](llvm::Value* base, std::vector<std::int64_t> strides, const ir::Type& t) {
    return TV{TV::K::buffer, base, std::move(strides), t};
  };
  if (x.k == TV::K::scalar || x.k == TV::K::uniform) {
    if (op.kind == OpKind::split) {
      set(op.result(0), uniform(x.v, op.result(0)->type));
      set(op.result(1), uniform(x.v, op.result(1)->type));
      return;
    }
    if (op.kind != OpKind::join) {
      set(op.result(), rt.is_scalar() ? scalar(x.v, rt) : uniform(x.v, rt));
      return;
    }
  }
  switch (op.kind) {
    case OpKind::splat: set(op.result(), uniform(x.v, rt)); return;
    case OpKind::broadcast: {
      const auto& in = x.type.shape;
      std::vector<std::int64_t> w = x.k == TV::K::affine ? x.coef : strides_of(x);
      for (std::size_t d = 0; d < in.size(); ++d)
        if (in[d] == 1) w[d] = 0;
      if (x.k == TV::K::affine)
        set(op.result(), TV{TV::K::affine, x.v, w, rt});
      else
        set(op.result(), view(x.v, w, rt));
      return;
    }
    case OpKind::expand_dims: {
      const auto axis = static_cast<std::size_t>(op.attrs.ints.at(0));
      std::vector<std::int64_t> w = x.k == TV::K::affine ? x.coef : strides_of(x);
      w.insert(w.begin() + static_cast<std::ptrdiff_t>(axis), 0);
      if (x.k == TV::K::affine)
        set(op.result(), TV{TV::K::affine, x.v, w, rt});
      else
        set(op.result(), view(x.v, w, rt));
      return;
    }
    case OpKind::permute: {
      const std::vector<std::int64_t> w = x.k == TV::K::affine ? x.coef : strides_of(x);
      std::vector<std::int64_t> p(w.size());
      for (std::size_t i = 0; i < p.size(); ++i) p[i] = w[static_cast<std::size_t>(op.attrs.ints.at(i))];
      if (x.k == TV::K::affine)
        set(op.result(), TV{TV::K::affine, x.v, p, rt});
      else
        set(op.result(), view(x.v, p, rt));
      return;
    }
    case OpKind::reshape: {
      TV m = materialize(x);
      set(op.result(), TV{TV::K::buffer, m.v, {}, rt});
      return;
    }
    case OpKind::split: {
      const ir::Type& t0 = op.result(0)->type;
      const ir::Type& t1 = op.result(1)->type;
      // the halves of a [2] tile are scalars: their elements as registers, as every rank-0 value
      auto half = [&](unsigned i, TV tv) {
        if (!tv.type.is_scalar()) return set(op.result(i), std::move(tv));
        Index ix;
        ix.flat = i64(0);
        llvm::Value* v = elem(tv, ix);
        set(op.result(i), scalar(v, tv.type));
      };
      if (x.k == TV::K::affine) {
        std::vector<std::int64_t> w(x.coef.begin(), x.coef.end() - 1);
        const std::int64_t last = x.coef.back();
        half(0, TV{TV::K::affine, x.v, w, t0});
        llvm::Value* hi = x.type.ptr ? b->CreateInBoundsGEP(storage_type(x.type.elem, false), x.v, i64(last))
                                     : b->CreateAdd(x.v, llvm::ConstantInt::get(x.v->getType(), static_cast<std::uint64_t>(last)));
        half(1, TV{TV::K::affine, hi, w, t1});
        return;
      }
      const auto s = strides_of(x);
      std::vector<std::int64_t> w(s.begin(), s.end() - 1);
      half(0, view(x.v, w, t0));
      half(1, view(elem_addr(x, i64(s.back())), w, t1));
      return;
    }
    case OpKind::join: {
      const TV& y = get(op.operand(1));
      const std::size_t r = x.type.shape.size();
      set(op.result(), compute(rt, [&](const Index& ix) {
        Index sub;
        sub.axis.assign(ix.axis.begin(), ix.axis.begin() + static_cast<std::ptrdiff_t>(r));
        const auto rm = row_major(x.type.shape);
        std::vector<std::int64_t> w(rm);
        sub.flat = weighted_sum(*b, w, sub);
        llvm::Value* a0 = elem(x, sub);
        llvm::Value* a1 = elem(y, sub);
        return b->CreateSelect(b->CreateICmpEQ(ix.axis[r], i64(0)), a0, a1);
      }));
      return;
    }
    default: unsupported(op, "not a shape op");
  }
}

}  // namespace tile::codegen
