// src/codegen/lower_dot.cpp — layer: codegen. dot(a, b, acc) on the CPU path: operands converted
// once to the compute type (tf32-rounded for f32 inputs at tf32 precision), then
// out[i][j] = out[i][j] + a[i][k] * b[k][j] with k in order (i, k, j loops: the inner loop runs
// along rows and vectorizes); f16/bf16 accumulators round after every step; integers wrap. The
// interpreter's order and roundings exactly.
#include "codegen/lowering.hpp"

namespace tile::codegen {

llvm::Value* Lowering::dot_input(llvm::Value* v, const ir::Type& from, dtype cd, bool tf32) {
  llvm::Value* r = convert(v, from.scalar(), ir::Type{cd, false, {}});
  if (tf32) {  // round to 10 mantissa bits, nearest even; inf and NaN unchanged
    llvm::Value* u = b->CreateBitCast(r, b->getInt32Ty());
    llvm::Value* special = b->CreateICmpEQ(b->CreateAnd(u, b->getInt32(0x7f800000u)), b->getInt32(0x7f800000u));
    llvm::Value* rr = b->CreateAdd(u, b->CreateAdd(b->getInt32(0xfff), b->CreateAnd(b->CreateLShr(u, 13), b->getInt32(1))));
    rr = b->CreateAnd(rr, b->getInt32(0xffffe000u));
    r = b->CreateBitCast(b->CreateSelect(special, u, rr), b->getFloatTy());
  }
  return r;
}

void Lowering::lower_dot(const ir::Op& op) {
  const ir::Type& at = op.operand(0)->type;
  const ir::Type& bt = op.operand(1)->type;
  const ir::Type& ct = op.operand(2)->type;
  const ir::Type& rt = op.result()->type;
  const std::int64_t M = at.shape.at(0), K = at.shape.at(1), N = bt.shape.at(1);
  const TV& A = get(op.operand(0));
  const TV& Bv = get(op.operand(1));
  const TV& Cv = get(op.operand(2));
  const dtype out = ct.elem;
  if (!is_float(out) && is_float(at.elem)) unsupported(op, "float inputs into an integer accumulator");

  // the compute type's element as an ir dtype (f32 or f64 for floats; the accumulator for ints)
  const dtype cd = is_float(out) ? (out == dtype::f64 ? dtype::f64 : dtype::f32) : out;
  const bool tf32 = at.elem == dtype::f32 && op.attrs.ints.at(0) == static_cast<std::int64_t>(precision::tf32) && cd == dtype::f32;
  auto to_cd = [&](llvm::Value* v, const ir::Type& from) { return dot_input(v, from, cd, tf32); };
  const ir::Type ca{cd, false, at.shape}, cb{cd, false, bt.shape}, cr{cd, false, rt.shape};
  TV a = compute(ca, [&](const Index& ix) { return to_cd(elem(A, ix), at); });
  TV bb = compute(cb, [&](const Index& ix) { return to_cd(elem(Bv, ix), bt); });
  TV r = compute(cr, [&](const Index& ix) { return convert(elem(Cv, ix), ct.scalar(), cr.scalar()); });
  const bool narrow = out == dtype::f16 || out == dtype::bf16;
  const bool fl = is_float(out);
  llvm::Type* cty = storage_type(cd, false);
  counted_loop(i64(0), i64(M), [&](llvm::Value* i) {
    counted_loop(i64(0), i64(K), [&](llvm::Value* k) {
      llvm::Value* x = b->CreateLoad(cty, elem_addr(a, b->CreateAdd(b->CreateMul(i, i64(K)), k)));
      counted_loop(i64(0), i64(N), [&](llvm::Value* j) {
        llvm::Value* pr = elem_addr(r, b->CreateAdd(b->CreateMul(i, i64(N)), j));
        llvm::Value* y = b->CreateLoad(cty, elem_addr(bb, b->CreateAdd(b->CreateMul(k, i64(N)), j)));
        llvm::Value* s;
        if (fl) {
          s = b->CreateFAdd(b->CreateLoad(cty, pr), b->CreateFMul(x, y));
          if (narrow) s = to_compute(from_compute(s, out), out);
        } else {
          s = b->CreateAdd(b->CreateLoad(cty, pr), b->CreateMul(x, y));
        }
        b->CreateStore(s, pr);
      }, "j");
    }, "k");
  }, "i");
  if (cd == out)
    set(op.result(), r);
  else
    set(op.result(), compute(rt, [&](const Index& ix) { return from_compute(elem(r, ix), out); }));
}

}  // namespace tile::codegen
