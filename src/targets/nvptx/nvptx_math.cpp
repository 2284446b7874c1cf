// src/targets/nvptx/nvptx_math.cpp — layer: targets (nvptx). The float math NVPTX computes
// itself (TargetHooks::math_fn, float_rem, approx_fn, batch_fn; see nvptx_target.hpp):
//   - exp, log, sin, cos, erf on f32, from PTX's approximate instructions with their errors put
//     back (LANGUAGE.md gives each one's bound);
//   - tl::fast_div / fast_sqrt / fast_exp: the approximate instructions as Triton uses them;
//   - exp and IEEE division over a thread's registers at once: a fast path for the whole batch
//     behind one range check, bit for bit the per-element result, with that form as fallback
//     (one element at a time in a loop, Lowering::each_in_loop: the code ptxas compiles for it
//     is one element's, not the batch's).
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "codegen/gpu/exact_fmod.hpp"
#include "codegen/lowering.hpp"
#include "ir/ir.hpp"
#include "targets/nvptx/nvptx_target.hpp"

namespace tile::targets::nvptx {

using ir::OpKind;

namespace {

llvm::Value* fma32(codegen::Builder& b, llvm::Value* p, llvm::Value* q, llvm::Value* r) {
  return b.CreateIntrinsic(llvm::Intrinsic::fma, {b.getFloatTy()}, {p, q, r});
}

/// exp(x) = 2^y e^c: y = x log2 e rounded, c = x - y ln 2 (Cody and Waite: ln 2 in two parts,
/// each product exact in its fma), so e^x ~ 2^y (1 + c) with |c| < 2^-17 for finite y.
std::pair<llvm::Value*, llvm::Value*> exp_parts(codegen::Builder& b, llvm::Value* x) {
  auto C = [&](double v) { return llvm::ConstantFP::get(b.getFloatTy(), v); };
  llvm::Value* y = b.CreateFMul(x, C(1.4426950216293335));
  llvm::Value* minus_y = b.CreateFNeg(y);
  llvm::Value* c = fma32(b, minus_y, C(0.6931471824645996), x);  // float(ln 2): 0x3F317218
  return {y, fma32(b, minus_y, C(-1.9046542121259336e-09), c)};  // ln 2 - float(ln 2): 0xB102E308
}

}  // namespace

llvm::Value* NvptxTarget::math_fn(codegen::Lowering& L, int kind, llvm::Value* x) const {
  auto& b = *L.b;
  if (!x->getType()->isFloatTy()) return nullptr;
  auto* f32 = b.getFloatTy();
  auto C = [&](double v) { return llvm::ConstantFP::get(f32, v); };
  auto ex2 = [&](llvm::Value* v) { return b.CreateIntrinsic(llvm::Intrinsic::nvvm_ex2_approx_f, {}, {v}); };
  auto lg2 = [&](llvm::Value* v) { return b.CreateIntrinsic(llvm::Intrinsic::nvvm_lg2_approx_f, {}, {v}); };
  auto fma = [&](llvm::Value* p, llvm::Value* q, llvm::Value* r) { return b.CreateIntrinsic(llvm::Intrinsic::fma, {f32}, {p, q, r}); };
  auto finite = [&](llvm::Value* v) {
    return b.CreateFCmpOLT(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, v), C(std::numeric_limits<float>::infinity()));
  };
  // sin/cos.approx are accurate on [-pi, pi]: reduce by 2*pi in two parts
  auto reduce_2pi = [&](llvm::Value* v) {
    llvm::Value* k = b.CreateUnaryIntrinsic(llvm::Intrinsic::rint, b.CreateFMul(v, C(0.15915494309189535)));
    llvm::Value* r = fma(b.CreateFNeg(k), C(6.28318548202514648), v);
    return fma(b.CreateFNeg(k), C(-1.7484556000744883e-07), r);
  };
  switch (static_cast<OpKind>(kind)) {
    // ex2.approx.ftz: results below 2^-126 are 0 (Triton's exp2 on f32 too). Without .ftz, ptxas
    // wraps MUFU.EX2 in a compare and two predicated scalings for them: four instructions an
    // element where one does, in attention's inner loop 32 an iteration.
    case OpKind::exp2: return b.CreateIntrinsic(llvm::Intrinsic::nvvm_ex2_approx_ftz_f, {}, {x});
    case OpKind::exp: {
      // 2^y with y = x log2 e rounded, and the rounding put back: e^x = 2^y e^c with c = x - y ln 2
      // (Cody and Waite: ln 2 in two parts, each product exact in its fma), so e^x ~ 2^y (1 + c);
      // |c| < 2^-17 here, so c's own error and the dropped c^2/2 are far below an ulp. Where
      // that fma is NaN, 2^y as it is: x = ±inf or NaN (c is NaN; 2^y is inf, 0 or NaN), and 2^y
      // = inf times a negative c (x past ln FLT_MAX: inf is the answer). 2^y's denormals (y <
      // -126) are refined like the rest; y <= -150 gives 0.
      const auto [y, c] = exp_parts(b, x);
      llvm::Value* r = ex2(y);
      llvm::Value* refined = fma(r, c, r);
      return b.CreateSelect(b.CreateFCmpUNO(refined, refined), r, refined);
    }
    case OpKind::log2:
    case OpKind::log: {
      // lg2.approx has an absolute error of about 2^-22, too much near 1 where log is small:
      // there (|x - 1| < 1/16) a series in t = x - 1 (exact by Sterbenz's lemma) is used
      const bool nat = static_cast<OpKind>(kind) == OpKind::log;
      llvm::Value* t = b.CreateFSub(x, C(1.0));
      llvm::Value* p = C(1.0 / 9);
      for (double c : {-1.0 / 8, 1.0 / 7, -1.0 / 6, 1.0 / 5, -1.0 / 4, 1.0 / 3, -1.0 / 2, 1.0}) p = fma(p, t, C(c));
      llvm::Value* near = b.CreateFMul(p, t);  // ln(1 + t)
      if (!nat) near = b.CreateFMul(near, C(1.4426950408889634));
      llvm::Value* far = nat ? b.CreateFMul(lg2(x), C(0.6931471805599453)) : lg2(x);
      llvm::Value* close = b.CreateFCmpOLT(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, t), C(0.0625));
      return b.CreateSelect(close, near, far);
    }
    case OpKind::sin:
    case OpKind::cos: {
      // |x| >= 8192 (finite): Payne–Hanek, exact to about 2^-37 for every float. x = M·2^E (M the
      // 24-bit significand), so frac(x / 2π) = frac(M · frac(2^E / 2π)); frac(2^E / 2π) to 64
      // bits is a window of 1/(2π)'s binary expansion (T below, 202 bits after the point) and
      // the low 64 bits of M · window are frac(x / 2π) · 2^64 (as a signed number: [-1/2, 1/2)).
      auto reduce_large = [&]() -> llvm::Value* {
        auto* i32 = b.getInt32Ty();
        auto* i64 = b.getInt64Ty();
        auto* i256 = b.getIntNTy(256);
        llvm::Value* u = b.CreateBitCast(x, i32);
        llvm::Value* e = b.CreateSub(b.CreateAnd(b.CreateLShr(u, 23), 0xff), b.getInt32(150));
        llvm::Value* m = b.CreateOr(b.CreateAnd(u, 0x7fffff), 0x800000);
        const llvm::APInt t(256, "a2f9836e4e441529fc2757d1f534ddc0db6295993c439041fe", 16);  // floor(2^202 / 2π)
        llvm::Value* shift = b.CreateZExt(b.CreateSub(b.getInt32(138), e), i256);  // 138 - E in [34, 148]
        llvm::Value* w = b.CreateTrunc(b.CreateLShr(llvm::ConstantInt::get(i256, t), shift), i64);
        llvm::Value* f = b.CreateMul(b.CreateZExt(m, i64), w);
        llvm::Value* r = b.CreateFPTrunc(
            b.CreateFMul(b.CreateSIToFP(f, b.getDoubleTy()), llvm::ConstantFP::get(b.getDoubleTy(), 6.283185307179586 / 18446744073709551616.0)),
            f32);
        return b.CreateSelect(b.CreateICmpSLT(u, b.getInt32(0)), b.CreateFNeg(r), r);
      };
      llvm::Value* large = b.CreateAnd(finite(x), b.CreateFCmpOGE(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x), C(8192.0)));
      llvm::Value* a = L.if_else(large, reduce_large, [&] { return reduce_2pi(x); }, "trig");
      return b.CreateIntrinsic(static_cast<OpKind>(kind) == OpKind::sin ? llvm::Intrinsic::nvvm_sin_approx_f
                                                                        : llvm::Intrinsic::nvvm_cos_approx_f,
                               {}, {a});
    }
    case OpKind::erf: {
      // |x| < 0.5: Maclaurin series; else Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7)
      llvm::Value* ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
      llvm::Value* x2 = b.CreateFMul(x, x);
      llvm::Value* s = C(-1.0 / 1320);
      for (double c : {1.0 / 216, -1.0 / 42, 1.0 / 10, -1.0 / 3, 1.0}) s = fma(s, x2, C(c));
      llvm::Value* small = b.CreateFMul(b.CreateFMul(x, C(1.1283791670955126)), s);
      llvm::Value* t = b.CreateFDiv(C(1.0), fma(C(0.3275911), ax, C(1.0)));
      llvm::Value* p = C(1.061405429);
      for (double c : {-1.453152027, 1.421413741, -0.284496736, 0.254829592}) p = fma(p, t, C(c));
      p = b.CreateFMul(p, t);
      llvm::Value* e = ex2(b.CreateFMul(b.CreateFNeg(x2), C(1.4426950408889634)));
      llvm::Value* big = b.CreateFSub(C(1.0), b.CreateFMul(p, e));
      big = b.CreateIntrinsic(llvm::Intrinsic::copysign, {f32}, {big, x});
      llvm::Value* r = b.CreateSelect(b.CreateFCmpOLT(ax, C(0.5)), small, big);
      return b.CreateSelect(b.CreateFCmpUNO(x, x), x, r);
    }
    default: return nullptr;
  }
}

llvm::Value* NvptxTarget::float_rem(codegen::Lowering& L, llvm::Value* x, llvm::Value* y) const {
  return codegen::gpu::exact_fmod(L, x, y);
}

llvm::Value* NvptxTarget::approx_fn(codegen::Lowering& L, int kind, llvm::Value* x, llvm::Value* y) const {
  auto& b = *L.b;
  if (!x->getType()->isFloatTy()) return nullptr;
  switch (static_cast<OpKind>(kind)) {
    case OpKind::div: {  // no intrinsic has div.full: at most 2 ulp for divisors in [2^-126, 2^126]
      auto* f32 = b.getFloatTy();
      auto* asm_fn = llvm::InlineAsm::get(llvm::FunctionType::get(f32, {f32, f32}, false), "div.full.f32 $0, $1, $2;",
                                          "=f,f,f", /*hasSideEffects=*/false);
      return b.CreateCall(asm_fn, {x, y});
    }
    case OpKind::sqrt: return b.CreateIntrinsic(llvm::Intrinsic::nvvm_sqrt_approx_f, {}, {x});
    case OpKind::exp:  // Triton's: ex2.approx.f32 of the rounded product, nothing put back
      return b.CreateIntrinsic(llvm::Intrinsic::nvvm_ex2_approx_f, {},
                               {b.CreateFMul(x, llvm::ConstantFP::get(b.getFloatTy(), 1.4426950216293335))});
    default: return nullptr;
  }
}

namespace {
/// `part` of each run of at most n of x's elements, in order, the results joined.
template <class Part>
std::vector<llvm::Value*> in_runs(std::span<llvm::Value* const> x, std::size_t n, Part&& part) {
  std::vector<llvm::Value*> out;
  for (std::size_t i = 0; i < x.size(); i += n) {
    const std::vector<llvm::Value*> r = part(x.subspan(i, std::min(n, x.size() - i)));
    out.insert(out.end(), r.begin(), r.end());
  }
  return out;
}
}  // namespace

std::vector<llvm::Value*> NvptxTarget::batch_fn(codegen::Lowering& L, int kind, std::span<llvm::Value* const> x,
                                                std::span<llvm::Value* const> y) const {
  if (x.empty() || !x[0]->getType()->isFloatTy()) return {};
  switch (static_cast<OpKind>(kind)) {
    case OpKind::exp: {
      // 16 at a time by default: ptxas interleaves a whole batch's temporaries, and at 32 a
      // thread (softmax of 16384 columns on 16 warps) that took 65 registers where the
      // per-element form took 64, one CTA an SM where there were two; in 16s it takes 62 (64
      // with the bounds that spare the division its check). lowering_options::lean()'s 2s take
      // softmax of 8192 columns on 16 warps from 47 registers to 40 (3 CTAs an SM, not 2).
      return in_runs(x, static_cast<std::size_t>(std::max(options_.exp_batch, 1)), [&](std::span<llvm::Value* const> run) {
        widest_exp_batch_ = std::max(widest_exp_batch_, static_cast<int>(run.size()));
        return batch_exp(L, run);
      });
    }
    case OpKind::div: return batch_div(L, x, y);
    default: return {};
  }
}

std::vector<llvm::Value*> NvptxTarget::batch_exp(codegen::Lowering& L, std::span<llvm::Value* const> x) const {
  // math_fn's exp without its two guards, where |x| < 87.3 for the whole batch: then |y| < 126,
  // so 2^y is a normal float (ex2.approx.ftz is ex2.approx, without the scaling ptxas puts
  // around it for denormal results) and 2^y (1 + c) cannot be NaN (no select). A NaN x passes
  // (maxnum skips it) and gives NaN, as it should. 6 instructions an element with the check,
  // where math_fn's form takes 10. Where |x| < 69 for the batch, its results lie in [2^-99.6,
  // 2^99.6] (L.bounds): a division of them by a shared divisor needs no check of its own.
  auto& b = *L.b;
  llvm::Value* largest = nullptr;  // max |x|
  for (llvm::Value* v : x) {
    llvm::Value* ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, v);
    largest = largest ? b.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, largest, ax) : ax;
  }
  llvm::Value* ok = b.CreateFCmpOLT(largest, llvm::ConstantFP::get(b.getFloatTy(), 87.3));
  llvm::Value* moderate = b.CreateFCmpOLT(largest, llvm::ConstantFP::get(b.getFloatTy(), 69.0));
  std::vector<llvm::Value*> out = L.fast_or_slow(ok, [&] {
    std::vector<llvm::Value*> fast;
    for (llvm::Value* v : x) {
      const auto [y, c] = exp_parts(b, v);
      llvm::Value* r = b.CreateIntrinsic(llvm::Intrinsic::nvvm_ex2_approx_ftz_f, {}, {y});
      fast.push_back(fma32(b, r, c, r));
    }
    return fast;
  }, [&] { return L.each_in_loop(x, [&](llvm::Value* v) { return math_fn(L, static_cast<int>(OpKind::exp), v); }, "exp"); }, "exp");
  for (llvm::Value* v : out) L.bounds[v] = {moderate, 0x1p-100, 0x1p100};
  return out;
}

std::vector<llvm::Value*> NvptxTarget::batch_div(codegen::Lowering& L, std::span<llvm::Value* const> x,
                                                 std::span<llvm::Value* const> y) const {
  // Elements that share a divisor d (a row's sum broadcast over the row, a scalar argument):
  // one correctly rounded reciprocal r = rcp.rn(d), then per element q0 = a·r and one
  // correction, q = q0 + (a - d·q0)·r with both steps in an fma. That is a/d correctly rounded
  // (Markstein's correction with r = RN(1/d): Brisebarre, Muller and Raina, "Accelerating
  // correctly rounded floating-point division when the divisor is known in advance", IEEE TC
  // 2004; tools/check-shared-divisor compares it with the CPU's division for every significand
  // of a and found no mismatch with 133 048 divisors) provided nothing leaves the normal range:
  // |a| >= 2^-100 (so a - d·q0 is exact) and |a/d| in [2^-124, 2^124]. With |d| in [2^-24,
  // 2^24] (a row's sum of up to 2^24 numbers in [0, 1] is) that holds for every |a| in [2^-100,
  // 2^100]: the batch checks d, and its smallest and largest |a| first (a NaN a passes: it gives
  // NaN) unless an earlier batch's check proved that range (L.bounds: softmax's exps); 0, ±inf,
  // NaN, denormals and the rest take div.rn. 5 SASS instructions an element with
  // the check, where div.rn takes 10 (a reciprocal of its own, FCHK and a branch each).
  auto& b = *L.b;
  auto C = [&](double v) { return llvm::ConstantFP::get(b.getFloatTy(), v); };
  auto fabs = [&](llvm::Value* v) { return b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, v); };
  auto minmax = [&](llvm::Intrinsic::ID id, llvm::Value* acc, llvm::Value* v) {
    return acc ? b.CreateBinaryIntrinsic(id, acc, v) : v;
  };
  std::vector<std::pair<llvm::Value*, std::vector<std::size_t>>> groups;  // divisor, its elements
  for (std::size_t i = 0; i < x.size(); ++i) {
    auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& e) { return e.first == y[i]; });
    if (g == groups.end()) groups.push_back({y[i], {i}});
    else g->second.push_back(i);
  }
  if (std::none_of(groups.begin(), groups.end(), [](const auto& g) { return g.second.size() > 1; })) return {};
  std::vector<llvm::Value*> out(x.size());
  for (const auto& [d, elems] : groups) {
    if (elems.size() == 1) {
      out[elems[0]] = b.CreateFDiv(x[elems[0]], d);
      continue;
    }
    llvm::Value* ad = fabs(d);
    llvm::Value* ok = b.CreateAnd(b.CreateFCmpOGE(ad, C(0x1p-24)), b.CreateFCmpOLE(ad, C(0x1p24)));
    // the numerators' range: what an earlier batch proved (softmax: exp's check), else checked here
    std::vector<llvm::Value*> proofs;
    for (std::size_t i : elems) {
      auto f = L.bounds.find(x[i]);
      if (f == L.bounds.end() || f->second.lo < 0x1p-100 || f->second.hi > 0x1p100) {
        proofs.clear();
        break;
      }
      if (std::find(proofs.begin(), proofs.end(), f->second.ok) == proofs.end()) proofs.push_back(f->second.ok);
    }
    if (!proofs.empty()) {
      for (llvm::Value* p : proofs) ok = b.CreateAnd(ok, p);
    } else {
      llvm::Value *smallest = nullptr, *largest = nullptr;  // min and max |a|
      for (std::size_t i : elems) {
        smallest = minmax(llvm::Intrinsic::minnum, smallest, fabs(x[i]));
        largest = minmax(llvm::Intrinsic::maxnum, largest, fabs(x[i]));
      }
      ok = b.CreateAnd(ok, b.CreateAnd(b.CreateFCmpOGE(smallest, C(0x1p-100)), b.CreateFCmpOLE(largest, C(0x1p100))));
    }
    std::vector<llvm::Value*> q = L.fast_or_slow(ok, [&] {
      llvm::Value* r = b.CreateIntrinsic(llvm::Intrinsic::nvvm_rcp_rn_f, {}, {d});
      llvm::Value* minus_d = b.CreateFNeg(d);
      std::vector<llvm::Value*> fast;
      for (std::size_t i : elems) {
        llvm::Value* q0 = b.CreateFMul(x[i], r);
        fast.push_back(fma32(b, fma32(b, minus_d, q0, x[i]), r, q0));
      }
      return fast;
    }, [&] {
      std::vector<llvm::Value*> num;
      for (std::size_t i : elems) num.push_back(x[i]);
      return L.each_in_loop(num, [&](llvm::Value* a) { return b.CreateFDiv(a, d); }, "div");
    }, "div");
    for (std::size_t k = 0; k < elems.size(); ++k) out[elems[k]] = q[k];
  }
  return out;
}

}  // namespace tile::targets::nvptx
