// src/codegen/gpu/gpu_control.cpp — layer: codegen (gpu). for, while and if with one phi per
// register of each carried value (every thread of the CTA takes the same path: conditions are
// scalars). Carried values keep one layout (assign_layouts); a yield in another layout is
// converted first. for's semantics are the interpreter's: iv = lo; while iv < hi; the step is
// added exactly (overflow ends the loop); a step <= 0 fails at run time.
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>

#include "codegen/gpu/gpu_lowering.hpp"

namespace tile::codegen::gpu {

using ir::OpKind;

namespace {

struct Carried {
  std::vector<std::vector<llvm::PHINode*>> phis;  // per value, per register
};

}  // namespace

void GpuLowering::check_for_step(const ir::Op& op, llvm::Value* step, bool sg) {
  auto& B = b();
  llvm::Value* bad = sg ? B.CreateICmpSLE(step, llvm::ConstantInt::get(step->getType(), 0))
                        : B.CreateICmpEQ(step, llvm::ConstantInt::get(step->getType(), 0));
  if (llvm::isa<llvm::ConstantInt>(bad) && !llvm::cast<llvm::ConstantInt>(bad)->isOne()) return;
  auto* fail = llvm::BasicBlock::Create(S.ctx, "for.badstep", S.fn);
  auto* ok = llvm::BasicBlock::Create(S.ctx, "for.pre", S.fn);
  B.CreateCondBr(bad, fail, ok, llvm::MDBuilder(S.ctx).createBranchWeights(1, 1 << 20));
  B.SetInsertPoint(fail);
  target.emit_fail(S, op, TargetHooks::failure::bad_step, B.CreateIntCast(step, B.getInt64Ty(), sg));
  B.SetInsertPoint(ok);
}

std::pair<llvm::Value*, llvm::Value*> GpuLowering::for_next(llvm::Value* iv, llvm::Value* step, llvm::Value* hi, bool sg) {
  auto& B = b();
  auto id = sg ? llvm::Intrinsic::sadd_with_overflow : llvm::Intrinsic::uadd_with_overflow;
  llvm::Value* s = B.CreateBinaryIntrinsic(id, iv, step);
  llvm::Value* next = B.CreateExtractValue(s, 0);
  llvm::Value* over = B.CreateExtractValue(s, 1);
  return {next, B.CreateAnd(B.CreateNot(over), sg ? B.CreateICmpSLT(next, hi) : B.CreateICmpULT(next, hi))};
}

void GpuLowering::lower_control(const ir::Op& op) {
  auto& B = b();
  auto& ctx = S.ctx;
  // the layout of result k (scalars: the scalar layout)
  auto lay = [&](std::size_t k) {
    const ir::Value* r = op.result(static_cast<unsigned>(k));
    return r->type.shape.empty() ? scalar_ : layout_of(r);
  };
  auto fit = [&](std::vector<DV> v) {
    for (std::size_t k = 0; k < v.size() && k < op.results.size(); ++k)
      if (!v[k].scalar()) v[k] = convert(v[k], lay(k));
    return v;
  };
  auto make_phis = [&](const std::vector<DV>& like, std::vector<DV>& as_values) {
    Carried c;
    as_values.clear();
    for (std::size_t k = 0; k < like.size(); ++k) {
      DV d{like[k].layout, {}, like[k].type};
      c.phis.emplace_back();
      for (llvm::Value* r : like[k].regs) {
        llvm::PHINode* p = B.CreatePHI(r->getType(), 2);
        c.phis.back().push_back(p);
        d.regs.push_back(p);
      }
      as_values.push_back(std::move(d));
    }
    return c;
  };
  auto add_incoming = [&](Carried& c, const std::vector<DV>& v, llvm::BasicBlock* from) {
    for (std::size_t k = 0; k < c.phis.size(); ++k)
      for (std::size_t r = 0; r < c.phis[k].size(); ++r) c.phis[k][r]->addIncoming(v[k].regs.at(r), from);
  };

  switch (op.kind) {
    case OpKind::for_: {
      const ir::Type& it = op.operand(0)->type;
      llvm::Value* lo = get(op.operand(0)).regs[0];
      llvm::Value* hi = get(op.operand(1)).regs[0];
      llvm::Value* step = get(op.operand(2)).regs[0];
      const bool sg = is_signed(it.elem);
      std::vector<DV> init;
      for (unsigned i = 3; i < op.operands.size(); ++i) init.push_back(operand(op, i));
      init = fit(init);
      check_for_step(op, step, sg);
      llvm::BasicBlock* pre = B.GetInsertBlock();
      auto* body = llvm::BasicBlock::Create(ctx, "for.body", S.fn);
      auto* exit = llvm::BasicBlock::Create(ctx, "for.exit", S.fn);
      B.CreateCondBr(sg ? B.CreateICmpSLT(lo, hi) : B.CreateICmpULT(lo, hi), body, exit);
      B.SetInsertPoint(body);
      llvm::PHINode* iv = B.CreatePHI(lo->getType(), 2, "iv");
      iv->addIncoming(lo, pre);
      std::vector<DV> cur;
      Carried c = make_phis(init, cur);
      add_incoming(c, init, pre);
      // the body sees the induction variable through target.opaque (gpu_target.hpp: no 64-bit
      // pointer recurrences); the loop's own step and test use it directly
      llvm::Value* body_iv = iv->getType()->isIntegerTy(32) || iv->getType()->isIntegerTy(64) ? target.opaque(S, iv) : iv;
      loop_iv_[op.region(0)->arg(0)] = iv;  // (iter_ahead: the loop's own arithmetic)
      std::vector<DV> args{scalar_dv(body_iv, it)};
      args.insert(args.end(), cur.begin(), cur.end());
      std::vector<DV> y = fit(lower_region(*op.region(0), args));
      auto [next, more] = for_next(iv, step, hi, sg);
      llvm::BasicBlock* latch = B.GetInsertBlock();
      iv->addIncoming(next, latch);
      add_incoming(c, y, latch);
      B.CreateCondBr(more, body, exit);
      B.SetInsertPoint(exit);
      std::vector<DV> res;
      Carried r = make_phis(init, res);
      add_incoming(r, init, pre);
      add_incoming(r, y, latch);
      for (std::size_t k = 0; k < res.size(); ++k) {
        res[k].type = op.result(static_cast<unsigned>(k))->type;
        set(op.result(static_cast<unsigned>(k)), res[k]);
      }
      return;
    }
    case OpKind::while_: {
      std::vector<DV> init;
      for (unsigned i = 0; i < op.operands.size(); ++i) init.push_back(operand(op, i));
      init = fit(init);
      llvm::BasicBlock* pre = B.GetInsertBlock();
      auto* cond = llvm::BasicBlock::Create(ctx, "while.cond", S.fn);
      auto* body = llvm::BasicBlock::Create(ctx, "while.body", S.fn);
      auto* exit = llvm::BasicBlock::Create(ctx, "while.exit", S.fn);
      B.CreateBr(cond);
      B.SetInsertPoint(cond);
      std::vector<DV> cur;
      Carried c = make_phis(init, cur);
      add_incoming(c, init, pre);
      std::vector<DV> cv = lower_region(*op.region(0), cur);
      B.CreateCondBr(cv.at(0).regs.at(0), body, exit);
      B.SetInsertPoint(body);
      std::vector<DV> y = fit(lower_region(*op.region(1), cur));
      add_incoming(c, y, B.GetInsertBlock());
      B.CreateBr(cond);
      B.SetInsertPoint(exit);
      for (std::size_t k = 0; k < cur.size(); ++k) {
        cur[k].type = op.result(static_cast<unsigned>(k))->type;
        set(op.result(static_cast<unsigned>(k)), cur[k]);
      }
      return;
    }
    case OpKind::if_: {
      llvm::Value* cnd = get(op.operand(0)).regs.at(0);
      auto* then_bb = llvm::BasicBlock::Create(ctx, "if.then", S.fn);
      auto* else_bb = llvm::BasicBlock::Create(ctx, "if.else", S.fn);
      auto* merge = llvm::BasicBlock::Create(ctx, "if.end", S.fn);
      B.CreateCondBr(cnd, then_bb, else_bb);
      B.SetInsertPoint(then_bb);
      std::vector<DV> tv = fit(lower_region(*op.region(0), {}));
      llvm::BasicBlock* tend = B.GetInsertBlock();
      B.CreateBr(merge);
      B.SetInsertPoint(else_bb);
      std::vector<DV> ev;
      if (op.regions.size() > 1) ev = fit(lower_region(*op.region(1), {}));
      llvm::BasicBlock* eend = B.GetInsertBlock();
      B.CreateBr(merge);
      B.SetInsertPoint(merge);
      for (std::size_t k = 0; k < op.results.size(); ++k) {
        DV d{lay(k), {}, op.result(static_cast<unsigned>(k))->type};
        for (std::size_t r = 0; r < tv.at(k).regs.size(); ++r) {
          llvm::PHINode* p = B.CreatePHI(tv[k].regs[r]->getType(), 2);
          p->addIncoming(tv[k].regs[r], tend);
          p->addIncoming(ev.at(k).regs.at(r), eend);
          d.regs.push_back(p);
        }
        set(op.result(static_cast<unsigned>(k)), std::move(d));
      }
      return;
    }
    default: unsupported(op, "not a control-flow op");
  }
}

}  // namespace tile::codegen::gpu
