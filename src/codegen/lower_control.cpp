// src/codegen/lower_control.cpp — layer: codegen. for, while and if. Loop-carried values and
// an if's results live in slots: stack memory per value (a scalar slot LLVM promotes to a
// register, or a tile buffer) written by the init values and by each yield. Yields that read a
// slot of the same op (a carried tile passed through, swapped or viewed) go through temporaries
// first, so every yield sees the values of the previous iteration.
// for: iv = lo; while iv < hi: body; stop when iv + step, computed exactly, reaches hi. A step
// <= 0 is a run-time failure ("for_range step must be positive"), as on the interpreter.
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>

#include "codegen/lowering.hpp"

namespace tile::codegen {

using ir::OpKind;

namespace {

struct Slots {
  std::vector<llvm::Value*> at;
  std::vector<ir::Type> type;
};

}  // namespace

void Lowering::lower_control(const ir::Op& op) {
  // slots for the op's results
  Slots s;
  for (const auto& r : op.results) {
    s.type.push_back(r->type);
    s.at.push_back(r->type.is_scalar() ? alloc_slot(r->type, "carried") : alloc_buffer(r->type, "carried"));
  }
  auto write = [&](const std::vector<TV>& vals) {
    bool alias = false;
    for (const TV& v : vals)
      if (v.k == TV::K::buffer) {
        const llvm::Value* base = v.v->stripInBoundsOffsets();
        for (llvm::Value* slot : s.at) alias |= base == slot;
      }
    std::vector<TV> src = vals;
    for (TV& v : src)  // a fused value may read a slot it is about to overwrite
      if (v.k == TV::K::lazy) v = materialize(v);
    if (alias)
      for (std::size_t i = 0; i < src.size(); ++i)
        if (!s.type[i].is_scalar()) {
          TV t = src[i];
          llvm::Value* tmp = alloc_buffer(s.type[i], "yield");
          copy_into(tmp, t);
          src[i] = TV{TV::K::buffer, tmp, {}, s.type[i]};
        }
    for (std::size_t i = 0; i < src.size() && i < s.at.size(); ++i) {
      if (s.type[i].is_scalar())
        store_slot(s.at[i], s.type[i], src[i].v);
      else
        copy_into(s.at[i], src[i]);
    }
  };
  auto read = [&]() {
    std::vector<TV> v;
    for (std::size_t i = 0; i < s.at.size(); ++i)
      v.push_back(s.type[i].is_scalar() ? scalar(load_slot(s.at[i], s.type[i]), s.type[i])
                                        : TV{TV::K::buffer, s.at[i], {}, s.type[i]});
    return v;
  };
  auto finish = [&]() {
    auto v = read();
    for (std::size_t i = 0; i < v.size(); ++i) set(op.result(static_cast<unsigned>(i)), v[i]);
  };

  switch (op.kind) {
    case OpKind::for_: {
      const ir::Type& it = op.operand(0)->type;
      llvm::Value* lo = get(op.operand(0)).v;
      llvm::Value* hi = get(op.operand(1)).v;
      llvm::Value* step = get(op.operand(2)).v;
      const bool sg = is_signed(it.elem);
      std::vector<TV> init;
      for (std::size_t i = 3; i < op.operands.size(); ++i) init.push_back(get(op.operand(static_cast<unsigned>(i))));
      write(init);
      // step <= 0: a run-time failure
      llvm::Value* bad = sg ? b->CreateICmpSLE(step, llvm::ConstantInt::get(step->getType(), 0))
                            : b->CreateICmpEQ(step, llvm::ConstantInt::get(step->getType(), 0));
      auto* fail = llvm::BasicBlock::Create(ctx, "for.badstep", fn);
      auto* ok = llvm::BasicBlock::Create(ctx, "for.pre", fn);
      b->CreateCondBr(bad, fail, ok, llvm::MDBuilder(ctx).createBranchWeights(1, 1 << 20));
      b->SetInsertPoint(fail);
      target.emit_fail(*this, op, TargetHooks::failure::bad_step,
                       sg ? b->CreateSExt(step, b->getInt64Ty()) : b->CreateZExt(step, b->getInt64Ty()));
      b->SetInsertPoint(ok);
      llvm::Value* iv_slot = alloc_slot(it, "iv");
      store_slot(iv_slot, it, lo);
      auto* body = llvm::BasicBlock::Create(ctx, "for.body", fn);
      auto* exit = llvm::BasicBlock::Create(ctx, "for.exit", fn);
      b->CreateCondBr(sg ? b->CreateICmpSLT(lo, hi) : b->CreateICmpULT(lo, hi), body, exit);
      b->SetInsertPoint(body);
      llvm::Value* iv = load_slot(iv_slot, it);
      std::vector<TV> args{scalar(iv, it)};
      for (TV& v : read()) args.push_back(v);
      write(lower_region(*op.region(0), args));
      auto id = sg ? llvm::Intrinsic::sadd_with_overflow : llvm::Intrinsic::uadd_with_overflow;
      llvm::Value* sum = b->CreateBinaryIntrinsic(id, iv, step);
      llvm::Value* next = b->CreateExtractValue(sum, 0);
      llvm::Value* over = b->CreateExtractValue(sum, 1);
      llvm::Value* more = b->CreateAnd(b->CreateNot(over), sg ? b->CreateICmpSLT(next, hi) : b->CreateICmpULT(next, hi));
      store_slot(iv_slot, it, next);
      b->CreateCondBr(more, body, exit);
      b->SetInsertPoint(exit);
      finish();
      return;
    }
    case OpKind::while_: {
      std::vector<TV> init;
      for (const ir::Value* v : op.operands) init.push_back(get(v));
      write(init);
      auto* cond = llvm::BasicBlock::Create(ctx, "while.cond", fn);
      auto* body = llvm::BasicBlock::Create(ctx, "while.body", fn);
      auto* exit = llvm::BasicBlock::Create(ctx, "while.exit", fn);
      b->CreateBr(cond);
      b->SetInsertPoint(cond);
      std::vector<TV> c = lower_region(*op.region(0), read());
      b->CreateCondBr(c.at(0).v, body, exit);
      b->SetInsertPoint(body);
      write(lower_region(*op.region(1), read()));
      b->CreateBr(cond);
      b->SetInsertPoint(exit);
      finish();
      return;
    }
    case OpKind::if_: {
      llvm::Value* c = get(op.operand(0)).v;
      if_else(c, [&]() -> llvm::Value* { write(lower_region(*op.region(0), {})); return nullptr; },
              [&]() -> llvm::Value* {
                if (op.regions.size() > 1) write(lower_region(*op.region(1), {}));
                return nullptr;
              },
              "if");
      finish();
      return;
    }
    default: unsupported(op, "not a control-flow op");
  }
}

}  // namespace tile::codegen
