// src/layout/register_operands.cpp — layer: layout. See register_operands.hpp.
#include "layout/register_operands.hpp"
#include "layout/mma_engine.hpp"
#include "layout/mma_target.hpp"

namespace tile::layout {

using ir::OpKind;

namespace {

/// The loop (for or while) innermost around `op`, or null.
const ir::Op* innermost_loop(const ir::Op& op) {
  for (const ir::Op* p = op.parent ? op.parent->parent : nullptr; p; p = p->parent ? p->parent->parent : nullptr)
    if (p->kind == OpKind::for_ || p->kind == OpKind::while_) return p;
  return nullptr;
}

}  // namespace

std::optional<LinearLayout> register_a(const ir::Function& f, const ir::Op& dot, int num_warps) {
  if (!f.mma_target || engine_of(dot) == mma_engine::none) return std::nullopt;
  std::optional<LinearLayout> l = f.mma_target->register_operand(dot, 0, num_warps);
  if (!l) return std::nullopt;
  const ir::Value* a = dot.operand(0);
  if (a->type.is_buffer()) return std::nullopt;  // (staged already)
  const ir::Value* x = a;
  while (x->def && x->def->kind == OpKind::convert_layout) x = x->def->operand(0);
  if (x->def && (x->def->kind == OpKind::load || x->def->kind == OpKind::desc_load)) return std::nullopt;
  const ir::Op* loop = innermost_loop(dot);
  if (loop && !ir::made_inside(*x, *loop)) return std::nullopt;
  return l;
}

}  // namespace tile::layout
