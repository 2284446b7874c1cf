// src/codegen/lower_debug.cpp — layer: codegen. device_print hands the target each operand's
// elements in row-major storage; device_assert checks the condition's elements in order and
// fails at the first false one (the target reports it and leaves the kernel).
#include "codegen/lowering.hpp"

namespace tile::codegen {

using ir::OpKind;

void Lowering::lower_debug(const ir::Op& op) {
  if (op.kind == OpKind::print) {
    std::vector<llvm::Value*> data;
    for (const ir::Value* v : op.operands) {
      const TV& t = get(v);
      if (v->type.is_scalar()) {
        llvm::Value* slot = alloc_slot(v->type, "print");
        store_slot(slot, v->type, t.v);
        data.push_back(slot);
      } else {
        data.push_back(materialize(t).v);
      }
    }
    target.emit_print(*this, op, data);
    return;
  }
  // assert_
  const ir::Value* c = op.operand(0);
  const TV& cond = get(c);
  auto check = [&](const Index& ix) {
    auto* fail = llvm::BasicBlock::Create(ctx, "assert.fail", fn);
    auto* ok = llvm::BasicBlock::Create(ctx, "assert.ok", fn);
    b->CreateCondBr(elem(cond, ix), ok, fail);
    b->SetInsertPoint(fail);
    target.emit_fail(*this, op, TargetHooks::failure::assert_fail, ix.flat);
    b->SetInsertPoint(ok);
  };
  if (c->type.is_scalar())
    check(Index{{}, i64(0)});
  else
    loop_nest(c->type.shape, check);
}

}  // namespace tile::codegen
