// src/codegen/lower_elementwise.cpp — layer: codegen. Elementwise ops on tiles: folded into the
// uniform or affine form where the algebra allows (so index and pointer arithmetic costs
// nothing per element), otherwise a loop nest computing each element with scalar_op.
#include "codegen/lowering.hpp"

namespace tile::codegen {

using ir::OpKind;

namespace {
bool is_const_int(const TV& t, std::int64_t& out) {
  if (t.k != TV::K::uniform && t.k != TV::K::scalar) return false;
  if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(t.v)) {
    out = c->getSExtValue();
    return true;
  }
  return false;
}
}  // namespace

void Lowering::lower_elementwise(const ir::Op& op) {
  const ir::Type& rt = op.result()->type;
  std::vector<const TV*> in;
  bool all_scalar = true, all_uniform = true;
  for (const ir::Value* v : op.operands) {
    in.push_back(&get(v));
    all_scalar &= in.back()->k == TV::K::scalar;
    all_uniform &= in.back()->k == TV::K::scalar || in.back()->k == TV::K::uniform;
  }
  if (all_uniform) {
    std::vector<llvm::Value*> vals;
    for (const TV* t : in) vals.push_back(t->v);
    llvm::Value* r = scalar_op(op, vals);
    set(op.result(), all_scalar || rt.is_scalar() ? scalar(r, rt) : uniform(r, rt));
    return;
  }

  // affine algebra: integers (not i1) and pointers; coefficients must stay compile-time constants
  auto aff = [&](const TV& t, std::size_t rank) -> std::vector<std::int64_t> {
    return t.k == TV::K::affine ? t.coef : std::vector<std::int64_t>(rank, 0);
  };
  const bool int_tile = !rt.ptr && is_int(rt.elem) && rt.elem != dtype::i1;
  const std::size_t rank = rt.shape.size();
  if (in.size() == 2 && !rt.is_scalar()) {
    const TV& x = *in[0];
    const TV& y = *in[1];
    const bool xa = x.k == TV::K::affine || x.k == TV::K::uniform;
    const bool ya = y.k == TV::K::affine || y.k == TV::K::uniform;
    if (xa && ya) {
      auto cx = aff(x, rank), cy = aff(y, rank);
      if (int_tile && (op.kind == OpKind::add || op.kind == OpKind::sub)) {
        std::vector<std::int64_t> c(rank);
        for (std::size_t d = 0; d < rank; ++d) c[d] = op.kind == OpKind::add ? cx[d] + cy[d] : cx[d] - cy[d];
        llvm::Value* base = op.kind == OpKind::add ? b->CreateAdd(x.v, y.v) : b->CreateSub(x.v, y.v);
        set(op.result(), TV{TV::K::affine, base, c, rt});
        return;
      }
      std::int64_t k = 0;
      if (int_tile && op.kind == OpKind::mul && (is_const_int(y, k) || is_const_int(x, k))) {
        const bool yk = is_const_int(y, k);
        const TV& a = yk ? x : y;
        auto ca = aff(a, rank);
        for (auto& c : ca) c *= k;
        set(op.result(), TV{TV::K::affine, b->CreateMul(a.v, yk ? y.v : x.v), ca, rt});
        return;
      }
      if (op.kind == OpKind::addptr) {
        const ir::Type& ot = op.operand(1)->type;
        llvm::Value* off = is_signed(ot.elem) ? b->CreateSExtOrTrunc(y.v, b->getInt64Ty()) : b->CreateZExtOrTrunc(y.v, b->getInt64Ty());
        std::vector<std::int64_t> c(rank);
        for (std::size_t d = 0; d < rank; ++d) c[d] = cx[d] + cy[d];
        set(op.result(), TV{TV::K::affine, b->CreateGEP(storage_type(rt.elem, false), x.v, off), c, rt});
        return;
      }
    }
  }

  // Fuse into the consumer when used once in this block, or — used any number of times — when
  // every operand is an index expression (affine/uniform) and the op is cheap: a mask like
  // `offs < n` then costs one compare per use instead of a pass over memory.
  bool cheap_index_math = op.kind == OpKind::cmp || op.kind == OpKind::bit_and || op.kind == OpKind::bit_or ||
                          op.kind == OpKind::bit_xor || op.kind == OpKind::bit_not || op.kind == OpKind::select;
  for (const TV* t : in) cheap_index_math &= t->k == TV::K::affine || t->k == TV::K::uniform || t->k == TV::K::scalar;
  if (fusible(op.result()) || cheap_index_math) {
    std::vector<TV> args;
    TV r{TV::K::lazy, nullptr, {}, rt};
    for (const TV* t : in) {
      args.push_back(*t);
      if (t->k == TV::K::lazy) r.reads.insert(r.reads.end(), t->reads.begin(), t->reads.end());
    }
    r.fn = std::make_shared<const std::function<llvm::Value*(const Index&)>>(
        [this, &op, args = std::move(args)](const Index& ix) {
          std::vector<llvm::Value*> vals;
          for (const TV& t : args) vals.push_back(elem(t, ix));
          return scalar_op(op, vals);
        });
    const bool reads = !r.reads.empty();
    set(op.result(), std::move(r));
    if (reads) note_reads(op.result());
    return;
  }
  set(op.result(), compute(rt, [&](const Index& ix) {
    std::vector<llvm::Value*> vals;
    for (const TV* t : in) vals.push_back(elem(*t, ix));
    return scalar_op(op, vals);
  }));
}

}  // namespace tile::codegen
