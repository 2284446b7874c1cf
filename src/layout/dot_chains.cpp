// src/layout/dot_chains.cpp — layer: layout. See dot_chains.hpp.
#include "layout/dot_chains.hpp"

#include <unordered_set>
#include <vector>

namespace tile::layout {

namespace {

/// The ops of `block` that `dot`'s A and B are computed from, transitively (ops of other blocks,
/// and block arguments, end the walk). Not its accumulator: a dot adding to another's product
/// (split K) is no chain.
std::unordered_set<const ir::Op*> operand_slice(const ir::Op& dot, const ir::Block* block) {
  std::unordered_set<const ir::Op*> seen;
  std::vector<const ir::Op*> work;
  auto visit = [&](const ir::Value* v) {
    if (v->def && v->def->parent == block && seen.insert(v->def).second) work.push_back(v->def);
  };
  visit(dot.operand(0));
  visit(dot.operand(1));
  while (!work.empty()) {
    const ir::Op* o = work.back();
    work.pop_back();
    for (const ir::Value* v : o->operands) visit(v);
  }
  return seen;
}

}  // namespace

bool chained_dot(const ir::Op& dot) {
  const ir::Block* block = dot.parent;
  if (!block || dot.kind != ir::OpKind::dot) return false;
  for (const ir::Op* o : operand_slice(dot, block))
    if (o->kind == ir::OpKind::dot) return true;
  for (const auto& o : block->ops)
    if (o->kind == ir::OpKind::dot && o.get() != &dot && operand_slice(*o, block).count(&dot)) return true;
  return false;
}

}  // namespace tile::layout
