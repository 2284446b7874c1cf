// src/codegen/scalar.cpp — layer: codegen. One element of every elementwise op, on register
// values, with the interpreter's exact semantics (see src/drivers/interpreter/interpreter.cpp's
// file comment): f16/bf16 compute in f32 and round once; integer division by zero gives 0 and
// INT_MIN / -1 wraps; shifts by the type's width or more give 0 (or the sign); float min/max
// ignore NaN and order -0 below +0; float -> int conversions truncate and saturate (NaN -> 0);
// conversions to f16/bf16 round once to nearest even (through round-to-odd from f64).
#include "codegen/lowering.hpp"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>

namespace tile::codegen {

using ir::OpKind;

llvm::Type* Lowering::compute_type(dtype t) const {
  return t == dtype::f64 ? llvm::Type::getDoubleTy(ctx) : llvm::Type::getFloatTy(ctx);
}

llvm::Value* Lowering::to_compute(llvm::Value* v, dtype t) {
  switch (t) {
    case dtype::f16: return b->CreateFPExt(v, b->getFloatTy());
    case dtype::bf16:
      return b->CreateBitCast(b->CreateShl(b->CreateZExt(v, b->getInt32Ty()), 16), b->getFloatTy());
    default: return v;
  }
}

llvm::Value* Lowering::from_compute(llvm::Value* v, dtype t) {
  if (t == dtype::f16 || t == dtype::bf16) {
    if (v->getType()->isDoubleTy()) {
      // round to odd in f32, so the rounding to 16 bits below is the correctly rounded result
      llvm::Value* f = b->CreateFPTrunc(v, b->getFloatTy());
      llvm::Value* exact = b->CreateOr(b->CreateFCmpOEQ(b->CreateFPExt(f, b->getDoubleTy()), v), b->CreateFCmpUNO(v, v));
      llvm::Value* u = b->CreateBitCast(f, b->getInt32Ty());
      llvm::Value* sign = b->CreateAnd(u, b->getInt32(0x80000000u));
      llvm::Value* isinf = b->CreateICmpEQ(b->CreateAnd(u, b->getInt32(0x7fffffffu)), b->getInt32(0x7f800000u));
      llvm::Value* fabs_f = b->CreateUnaryIntrinsic(llvm::Intrinsic::fabs, b->CreateFPExt(f, b->getDoubleTy()));
      llvm::Value* fabs_d = b->CreateUnaryIntrinsic(llvm::Intrinsic::fabs, v);
      llvm::Value* dec = b->CreateSub(u, b->getInt32(1));
      llvm::Value* adj = b->CreateSelect(b->CreateFCmpOGT(fabs_f, fabs_d), dec, u);
      adj = b->CreateSelect(isinf, b->CreateOr(sign, b->getInt32(0x7f7fffffu)), adj);
      adj = b->CreateOr(adj, b->getInt32(1));
      v = b->CreateSelect(exact, f, b->CreateBitCast(adj, b->getFloatTy()));
    }
    if (t == dtype::bf16 && native_bf16) return b->CreateBitCast(b->CreateFPTrunc(v, b->getBFloatTy()), b->getInt16Ty());
    llvm::Value* u = b->CreateBitCast(v, b->getInt32Ty());
    llvm::Value* isnan = b->CreateICmpUGT(b->CreateAnd(u, b->getInt32(0x7fffffffu)), b->getInt32(0x7f800000u));
    if (t == dtype::bf16) {
      llvm::Value* nan = b->CreateOr(b->CreateLShr(u, 16), b->getInt32(0x40));
      llvm::Value* r = b->CreateAdd(u, b->CreateAdd(b->getInt32(0x7fff), b->CreateAnd(b->CreateLShr(u, 16), b->getInt32(1))));
      r = b->CreateLShr(r, 16);
      return b->CreateTrunc(b->CreateSelect(isnan, nan, r), b->getInt16Ty());
    }
    if (native_f16_nan) return b->CreateFPTrunc(v, b->getHalfTy());
    llvm::Value* h = b->CreateBitCast(b->CreateFPTrunc(v, b->getHalfTy()), b->getInt16Ty());
    llvm::Value* nan = b->CreateOr(b->CreateTrunc(b->CreateLShr(u, 16), b->getInt16Ty()), b->getInt16(0x7e00));
    nan = b->CreateAnd(nan, b->getInt16(0xfe00));
    return b->CreateBitCast(b->CreateSelect(isnan, nan, h), b->getHalfTy());
  }
  if (t == dtype::f32 && v->getType()->isDoubleTy()) return b->CreateFPTrunc(v, b->getFloatTy());
  if (t == dtype::f64 && v->getType()->isFloatTy()) return b->CreateFPExt(v, b->getDoubleTy());
  return v;
}

llvm::Value* Lowering::convert(llvm::Value* v, const ir::Type& from, const ir::Type& to) {
  llvm::Type* rt = reg_type(to.scalar());
  if (from.ptr || to.ptr) {
    if (from.ptr && to.ptr) return v;
    if (from.ptr) return b->CreatePtrToInt(v, rt);
    return b->CreateIntToPtr(b->CreateZExtOrTrunc(v, b->getInt64Ty()), rt);
  }
  const dtype f = from.elem, t = to.elem;
  if (f == t) return v;
  if (is_float(f) && is_float(t)) {
    llvm::Value* c = to_compute(v, f);
    if (t == dtype::f64) return b->CreateFPExt(c, b->getDoubleTy());
    if (t == dtype::f32) return c->getType()->isDoubleTy() ? b->CreateFPTrunc(c, b->getFloatTy()) : c;
    return from_compute(c, t);
  }
  if (is_float(f)) {
    llvm::Value* c = to_compute(v, f);
    if (t == dtype::i1) return b->CreateFCmpUNE(c, llvm::ConstantFP::get(c->getType(), 0.0));
    const auto id = is_signed(t) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    return b->CreateIntrinsic(id, {rt, c->getType()}, {c});
  }
  if (is_float(t)) {
    const bool s = is_signed(f);
    if (t == dtype::f32 || t == dtype::f64) return s ? b->CreateSIToFP(v, rt) : b->CreateUIToFP(v, rt);
    if (v->getType()->getIntegerBitWidth() < 64) {  // exact in a double
      llvm::Value* d = s ? b->CreateSIToFP(v, b->getDoubleTy()) : b->CreateUIToFP(v, b->getDoubleTy());
      return from_compute(d, t);
    }
    // 64 bits: the magnitude rounded to odd at 53 significant bits is exact in a double, and
    // rounding to odd composes, so from_compute's f64 -> f32 (to odd) -> 16 bits (to nearest
    // even) rounds the integer once.
    llvm::Value* neg = s ? b->CreateICmpSLT(v, b->getInt64(0)) : b->getFalse();
    llvm::Value* m = b->CreateSelect(neg, b->CreateSub(b->getInt64(0), v), v);  // |v| as unsigned
    llvm::Value* lz = b->CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, m, b->getFalse());
    llvm::Value* sh = b->CreateSelect(b->CreateICmpULT(lz, b->getInt64(11)), b->CreateSub(b->getInt64(11), lz), b->getInt64(0));
    llvm::Value* low = b->CreateAnd(m, b->CreateSub(b->CreateShl(b->getInt64(1), sh), b->getInt64(1)));
    llvm::Value* kept = b->CreateLShr(m, sh);
    kept = b->CreateSelect(b->CreateICmpNE(low, b->getInt64(0)), b->CreateOr(kept, b->getInt64(1)), kept);
    llvm::Value* d = b->CreateUIToFP(b->CreateShl(kept, sh), b->getDoubleTy());
    return from_compute(b->CreateSelect(neg, b->CreateFNeg(d), d), t);
  }
  if (t == dtype::i1) return b->CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  return is_signed(f) ? b->CreateSExtOrTrunc(v, rt) : b->CreateZExtOrTrunc(v, rt);
}

namespace {

llvm::Value* min_max_num_impl(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y, bool is_min) {
  // IEEE minNum / maxNum with -0 below +0, by comparing the bit patterns as integers in the
  // floats' total order (a negative float's magnitude bits flipped: -0 is -1, +0 is 0). Not
  // float comparisons and a select on the sign: with a constant zero operand LLVM folded those
  // into `x < 0 ? x : 0`, which gives +0 for min(+0, -0) on f16
  const unsigned w = x->getType()->getPrimitiveSizeInBits();
  llvm::Type* it = b.getIntNTy(w);
  auto key = [&](llvm::Value* v) {
    llvm::Value* i = b.CreateBitCast(v, it);
    return b.CreateXor(i, b.CreateLShr(b.CreateAShr(i, w - 1), 1));
  };
  llvm::Value* kx = key(x);
  llvm::Value* ky = key(y);
  llvm::Value* take_x = is_min ? b.CreateICmpSLT(kx, ky) : b.CreateICmpSGT(kx, ky);
  llvm::Value* r = b.CreateSelect(take_x, x, y);
  r = b.CreateSelect(b.CreateFCmpUNO(y, y), x, r);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), y, r);
}

}  // namespace

llvm::Value* Lowering::min_max_num(llvm::Value* x, llvm::Value* y, bool is_min) {
  if (!native_min_max) return min_max_num_impl(*b, x, y, is_min);
  // GPUs: PTX's min/max (.f16, .f32, .f64) are exactly these semantics, NaN-ignoring with -0
  // ordered below +0 (test_binary's signed-zero case checks it on the device)
  return b->CreateBinaryIntrinsic(is_min ? llvm::Intrinsic::minnum : llvm::Intrinsic::maxnum, x, y);
}

std::vector<llvm::Value*> Lowering::branch(llvm::Value* cond, const std::function<std::vector<llvm::Value*>()>& then_fn,
                                          const std::function<std::vector<llvm::Value*>()>& else_fn, const char* name,
                                          const char* then_name, const char* else_name, const char* end_name, bool likely) {
  auto* tb = llvm::BasicBlock::Create(ctx, std::string(name) + then_name, fn);
  auto* eb = llvm::BasicBlock::Create(ctx, std::string(name) + else_name, fn);
  auto* mb = llvm::BasicBlock::Create(ctx, std::string(name) + end_name, fn);
  b->CreateCondBr(cond, tb, eb, likely ? llvm::MDBuilder(ctx).createLikelyBranchWeights() : nullptr);
  auto emit = [&](llvm::BasicBlock* at, const std::function<std::vector<llvm::Value*>()>& f) {
    b->SetInsertPoint(at);
    std::vector<llvm::Value*> v = f ? f() : std::vector<llvm::Value*>{};
    llvm::BasicBlock* end = b->GetInsertBlock();
    b->CreateBr(mb);
    return std::pair{std::move(v), end};
  };
  const auto [tv, tend] = emit(tb, then_fn);
  const auto [ev, eend] = emit(eb, else_fn);
  b->SetInsertPoint(mb);
  std::vector<llvm::Value*> out;
  for (std::size_t i = 0; i < tv.size() && i < ev.size(); ++i) {
    llvm::PHINode* phi = b->CreatePHI(tv[i]->getType(), 2);
    phi->addIncoming(tv[i], tend);
    phi->addIncoming(ev[i], eend);
    out.push_back(phi);
  }
  return out;
}

std::vector<llvm::Value*> Lowering::each_in_loop(std::span<llvm::Value* const> x,
                                                const std::function<llvm::Value*(llvm::Value*)>& f, const char* name) {
  const std::size_t n = x.size();
  const bool one_type = std::all_of(x.begin(), x.end(), [&](llvm::Value* v) { return v->getType() == x[0]->getType(); });
  if (n < 4 || !one_type) {
    std::vector<llvm::Value*> out;
    for (llvm::Value* v : x) out.push_back(f(v));
    return out;
  }
  llvm::BasicBlock* pre = b->GetInsertBlock();
  auto* body = llvm::BasicBlock::Create(ctx, std::string(name) + ".each", fn);
  auto* done = llvm::BasicBlock::Create(ctx, std::string(name) + ".each.done", fn);
  b->CreateBr(body);
  b->SetInsertPoint(body);
  llvm::PHINode* trip = b->CreatePHI(b->getInt32Ty(), 2);
  trip->addIncoming(b->getInt32(0), pre);
  std::vector<llvm::PHINode*> v(n);
  for (std::size_t j = 0; j < n; ++j) {
    v[j] = b->CreatePHI(x[j]->getType(), 2);
    v[j]->addIncoming(x[j], pre);
  }
  llvm::Value* r = f(v[0]);
  llvm::BasicBlock* latch = b->GetInsertBlock();
  std::vector<llvm::Value*> out(n);
  for (std::size_t j = 0; j + 1 < n; ++j) out[j] = v[j + 1];
  out[n - 1] = r;
  for (std::size_t j = 0; j < n; ++j) v[j]->addIncoming(out[j], latch);
  llvm::Value* next = b->CreateAdd(trip, b->getInt32(1));
  trip->addIncoming(next, latch);
  llvm::BranchInst* br = b->CreateCondBr(b->CreateICmpULT(next, b->getInt32(static_cast<std::uint32_t>(n))), body, done);
  // not unrolled (NVPTX prints .pragma "nounroll" for it): the point is one element's code
  llvm::MDNode* no_unroll = llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.unroll.disable")});
  llvm::MDNode* loop_id = llvm::MDNode::getDistinct(ctx, {nullptr, no_unroll});
  loop_id->replaceOperandWith(0, loop_id);
  br->setMetadata(llvm::LLVMContext::MD_loop, loop_id);
  b->SetInsertPoint(done);
  return out;
}

llvm::Value* Lowering::if_else(llvm::Value* cond, const std::function<llvm::Value*()>& then_fn,
                               const std::function<llvm::Value*()>& else_fn, const char* name) {
  auto one = [](const std::function<llvm::Value*()>& f) -> std::function<std::vector<llvm::Value*>()> {
    if (!f) return nullptr;
    return [&f] {
      llvm::Value* v = f();
      return v ? std::vector<llvm::Value*>{v} : std::vector<llvm::Value*>{};
    };
  };
  const std::vector<llvm::Value*> v = branch(cond, one(then_fn), one(else_fn), name, ".then", ".else", ".end", false);
  return v.empty() ? nullptr : v[0];
}

std::vector<llvm::Value*> Lowering::fast_or_slow(llvm::Value* ok, const std::function<std::vector<llvm::Value*>()>& fast,
                                                const std::function<std::vector<llvm::Value*>()>& slow, const char* name) {
  return branch(ok, fast, slow, name, ".fast", ".slow", ".done", true);
}

bool Lowering::has_batch_form(const ir::Op& op) {
  const ir::Type& at = op.operand(0)->type;
  const bool approx = !op.attrs.ints.empty() && op.attrs.ints[0] == 1;  // tl::fast_exp, tl::fast_div
  return (op.kind == OpKind::exp || op.kind == OpKind::exp2 || op.kind == OpKind::div) && !at.ptr && is_float(at.elem) && !approx;
}

std::vector<llvm::Value*> Lowering::batch_op(const ir::Op& op, const std::vector<std::vector<llvm::Value*>>& in) {
  const dtype e = op.operand(0)->type.elem;
  if (!has_batch_form(op) || in.at(0).size() < 2) return {};
  // compute-type operands; a value shared by elements stays one value (batch_fn groups by it)
  std::vector<std::pair<llvm::Value*, llvm::Value*>> seen;
  auto compute = [&](llvm::Value* v) {
    for (const auto& [from, to] : seen)
      if (from == v) return to;
    seen.emplace_back(v, to_compute(v, e));
    return seen.back().second;
  };
  std::vector<std::vector<llvm::Value*>> c(in.size());
  for (std::size_t k = 0; k < in.size(); ++k)
    for (llvm::Value* v : in[k]) c[k].push_back(compute(v));
  std::vector<llvm::Value*> r = target.batch_fn(*this, static_cast<int>(op.kind), c[0],
                                                c.size() > 1 ? std::span<llvm::Value* const>(c[1]) : std::span<llvm::Value* const>());
  for (llvm::Value*& v : r) v = from_compute(v, e);
  return r;
}

llvm::Value* Lowering::scalar_op(const ir::Op& op, std::span<llvm::Value* const> in) {
  const ir::Type& at = op.operand(0)->type;
  const ir::Type& rt = op.result()->type;
  const dtype e = at.elem;
  const bool fl = !at.ptr && is_float(e);
  auto& B = *b;
  switch (op.kind) {
    case OpKind::cast: return convert(in[0], at, rt);
    case OpKind::bitcast: {
      llvm::Type* to = reg_type(rt.scalar());
      llvm::Value* v = in[0];
      if (at.ptr) v = B.CreatePtrToInt(v, B.getInt64Ty());
      if (rt.ptr) return B.CreateIntToPtr(B.CreateBitCast(v, B.getInt64Ty()), to);
      if (llvm::Value* t = target.bitcast_fn(*this, v, to)) return t;
      return B.CreateBitCast(v, to);
    }
    case OpKind::select: return B.CreateSelect(in[0], in[1], in[2]);
    case OpKind::addptr: {
      const ir::Type& ot = op.operand(1)->type;
      llvm::Value* off = is_signed(ot.elem) ? B.CreateSExtOrTrunc(in[1], B.getInt64Ty()) : B.CreateZExtOrTrunc(in[1], B.getInt64Ty());
      return B.CreateGEP(storage_type(e, false), in[0], off);
    }
    case OpKind::cmp: {
      const auto p = static_cast<ir::CmpPred>(op.attrs.ints.at(0));
      if (fl) {
        llvm::Value* x = to_compute(in[0], e);
        llvm::Value* y = to_compute(in[1], e);
        switch (p) {
          case ir::CmpPred::eq: return B.CreateFCmpOEQ(x, y);
          case ir::CmpPred::ne: return B.CreateFCmpUNE(x, y);
          case ir::CmpPred::lt: return B.CreateFCmpOLT(x, y);
          case ir::CmpPred::le: return B.CreateFCmpOLE(x, y);
          case ir::CmpPred::gt: return B.CreateFCmpOGT(x, y);
          case ir::CmpPred::ge: return B.CreateFCmpOGE(x, y);
        }
      }
      const bool s = !at.ptr && is_signed(e);
      switch (p) {
        case ir::CmpPred::eq: return B.CreateICmpEQ(in[0], in[1]);
        case ir::CmpPred::ne: return B.CreateICmpNE(in[0], in[1]);
        case ir::CmpPred::lt: return s ? B.CreateICmpSLT(in[0], in[1]) : B.CreateICmpULT(in[0], in[1]);
        case ir::CmpPred::le: return s ? B.CreateICmpSLE(in[0], in[1]) : B.CreateICmpULE(in[0], in[1]);
        case ir::CmpPred::gt: return s ? B.CreateICmpSGT(in[0], in[1]) : B.CreateICmpUGT(in[0], in[1]);
        case ir::CmpPred::ge: return s ? B.CreateICmpSGE(in[0], in[1]) : B.CreateICmpUGE(in[0], in[1]);
      }
      break;
    }
    default: break;
  }

  if (fl) {
    if (op.kind == OpKind::neg) {
      if (e == dtype::bf16) return B.CreateXor(in[0], B.getInt16(0x8000));
      return B.CreateFNeg(in[0]);
    }
    if (op.kind == OpKind::abs) {
      if (e == dtype::bf16) return B.CreateAnd(in[0], B.getInt16(0x7fff));
      return B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, in[0]);
    }
    std::vector<llvm::Value*> c;
    for (llvm::Value* v : in) c.push_back(to_compute(v, e));
    llvm::Type* ct = c[0]->getType();
    const bool dbl = ct->isDoubleTy();
    auto libm = [&](const char* f32name, const char* f64name) -> llvm::Value* {
      if (llvm::Value* t = target.math_fn(*this, static_cast<int>(op.kind), c[0])) return t;
      auto callee = mod->getOrInsertFunction(dbl ? f64name : f32name, llvm::FunctionType::get(ct, {ct}, false));
      if (auto* fnp = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
        fnp->setDoesNotThrow();
        fnp->setOnlyAccessesInaccessibleMemory();
        fnp->setWillReturn();
      }
      return B.CreateCall(callee, {c[0]});
    };
    llvm::Value* r = nullptr;
    auto contractable = [&](llvm::Value* v) {
      if (auto* i = llvm::dyn_cast<llvm::Instruction>(v); i && fp_contract) i->setHasAllowContract(true);
      return v;
    };
    // tl::fast_div / tl::fast_sqrt / tl::fast_exp: the target's approximate instruction where it has one
    const bool approx = (op.kind == OpKind::div || op.kind == OpKind::sqrt || op.kind == OpKind::exp) && !op.attrs.ints.empty() &&
                        op.attrs.ints[0] == 1;
    switch (op.kind) {
      case OpKind::add: r = contractable(B.CreateFAdd(c[0], c[1])); break;
      case OpKind::sub: r = contractable(B.CreateFSub(c[0], c[1])); break;
      case OpKind::mul: r = contractable(B.CreateFMul(c[0], c[1])); break;
      case OpKind::div:
        if (approx) r = target.approx_fn(*this, static_cast<int>(op.kind), c[0], c[1]);
        if (!r) r = B.CreateFDiv(c[0], c[1]);
        break;
      case OpKind::rem:
        r = target.float_rem(*this, c[0], c[1]);
        if (!r) r = B.CreateFRem(c[0], c[1]);
        break;
      case OpKind::minimum: r = min_max_num(c[0], c[1], true); break;
      case OpKind::maximum: r = min_max_num(c[0], c[1], false); break;
      case OpKind::fma: r = B.CreateIntrinsic(llvm::Intrinsic::fma, {ct}, {c[0], c[1], c[2]}); break;
      case OpKind::sqrt:
        if (approx) r = target.approx_fn(*this, static_cast<int>(op.kind), c[0], nullptr);
        if (!r) r = B.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, c[0]);
        break;
      case OpKind::rsqrt:
        r = B.CreateFDiv(llvm::ConstantFP::get(ct, 1.0), B.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, c[0]));
        break;
      case OpKind::floor: r = B.CreateUnaryIntrinsic(llvm::Intrinsic::floor, c[0]); break;
      case OpKind::ceil: r = B.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, c[0]); break;
      // transcendental functions: the C library's, as the interpreter's std:: calls are
      case OpKind::exp:
        if (approx) r = target.approx_fn(*this, static_cast<int>(op.kind), c[0], nullptr);
        if (!r) r = libm("expf", "exp");
        break;
      case OpKind::exp2: r = libm("exp2f", "exp2"); break;
      case OpKind::log: r = libm("logf", "log"); break;
      case OpKind::log2: r = libm("log2f", "log2"); break;
      case OpKind::sin: r = libm("sinf", "sin"); break;
      case OpKind::cos: r = libm("cosf", "cos"); break;
      case OpKind::erf: r = libm("erff", "erf"); break;
      default: unsupported(op, "not defined on " + std::string(name(e)));
    }
    return from_compute(r, e);
  }

  // integers (and i1)
  llvm::Value* x = in[0];
  llvm::Value* y = in.size() > 1 ? in[1] : nullptr;
  llvm::Type* ty = x->getType();
  const bool s = is_signed(e);
  const unsigned w = ty->getIntegerBitWidth();
  auto C = [&](std::int64_t k) { return llvm::ConstantInt::get(ty, static_cast<std::uint64_t>(k), true); };
  switch (op.kind) {
    case OpKind::add: return B.CreateAdd(x, y);
    case OpKind::sub: return B.CreateSub(x, y);
    case OpKind::mul: return B.CreateMul(x, y);
    case OpKind::div:
    case OpKind::rem: {
      llvm::Value* zero = B.CreateICmpEQ(y, C(0));
      llvm::Value* m1 = s ? B.CreateICmpEQ(y, C(-1)) : B.getFalse();
      llvm::Value* safe = B.CreateSelect(B.CreateOr(zero, m1), C(1), y);
      llvm::Value* q;
      if (op.kind == OpKind::div) {
        q = s ? B.CreateSDiv(x, safe) : B.CreateUDiv(x, safe);
        q = B.CreateSelect(m1, B.CreateSub(C(0), x), q);
      } else {
        q = s ? B.CreateSRem(x, safe) : B.CreateURem(x, safe);
        q = B.CreateSelect(m1, C(0), q);
      }
      return B.CreateSelect(zero, C(0), q);
    }
    case OpKind::bit_and: return B.CreateAnd(x, y);
    case OpKind::bit_or: return B.CreateOr(x, y);
    case OpKind::bit_xor: return B.CreateXor(x, y);
    case OpKind::shl: {
      llvm::Value* big = B.CreateICmpUGE(y, C(w));
      return B.CreateSelect(big, C(0), B.CreateShl(x, B.CreateAnd(y, C(w - 1))));
    }
    case OpKind::shr: {
      llvm::Value* big = B.CreateICmpUGE(y, C(w));
      llvm::Value* amt = B.CreateAnd(y, C(w - 1));
      if (s) return B.CreateSelect(big, B.CreateAShr(x, C(w - 1)), B.CreateAShr(x, amt));
      return B.CreateSelect(big, C(0), B.CreateLShr(x, amt));
    }
    case OpKind::minimum: return B.CreateSelect(s ? B.CreateICmpSLT(y, x) : B.CreateICmpULT(y, x), y, x);
    case OpKind::maximum: return B.CreateSelect(s ? B.CreateICmpSGT(y, x) : B.CreateICmpUGT(y, x), y, x);
    case OpKind::umulhi: {
      llvm::Type* wide = B.getIntNTy(2 * w);
      llvm::Value* p = B.CreateMul(B.CreateZExt(x, wide), B.CreateZExt(y, wide));
      return B.CreateTrunc(B.CreateLShr(p, static_cast<std::uint64_t>(w)), ty);
    }
    case OpKind::neg: return B.CreateSub(C(0), x);
    case OpKind::bit_not: return B.CreateNot(x);
    case OpKind::abs:
      if (!s) return x;
      return B.CreateSelect(B.CreateICmpSLT(x, C(0)), B.CreateSub(C(0), x), x);
    default: break;
  }
  unsupported(op, "not defined on " + std::string(at.ptr ? "pointers" : name(e)));
}

}  // namespace tile::codegen
