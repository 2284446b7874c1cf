// src/transforms/load_cse.cpp — layer: transforms. A load that repeats an earlier load of the
// same block (see passes.hpp for the contract).
//
// A walk of each block keeps the loads it has passed that later ops may still reuse. A load
// equal to one of them (same pointers, mask, other, modifiers and type) takes its values and is
// erased. A write forgets every kept load it may reach: a store through a pointer that may alias
// the load's (analysis/pointer_origin.hpp: different arguments, one of them noalias, cannot),
// any atomic, volatile or `.cv` load (each may order other programs' writes before what
// follows), and an op with regions counts the writes anywhere inside them. Loads are reused within their own block only: a load
// in a loop body sees nothing from outside it, so no iteration can miss another's write.
#include "transforms/memory_effects.hpp"
#include "transforms/passes.hpp"

namespace tile::transforms {

namespace {

using ir::Op;
using ir::OpKind;

bool equal(const Op& a, const Op& b) {
  return a.operands == b.operands && a.attrs == b.attrs && a.result()->type == b.result()->type;
}

class LoadCse {
 public:
  explicit LoadCse(const ir::Function& f) : origins_(f) {}

  bool block(ir::Block& b) {
    std::vector<Op*> kept;
    for (auto it = b.ops.begin(); it != b.ops.end();) {
      Op& op = **it;
      if (reusable_load(op)) {
        if (Op* prev = find(kept, op)) {
          ir::replace_all_uses(b, op.result(), prev->result());
          it = b.ops.erase(it);
          changed_ = true;
          continue;
        }
        kept.push_back(&op);
      } else {
        for (auto& r : op.regions) block(*r);
        forget_written(kept, op);
      }
      ++it;
    }
    return changed_;
  }

 private:
  static Op* find(const std::vector<Op*>& kept, const Op& op) {
    for (Op* k : kept)
      if (equal(*k, op)) return k;
    return nullptr;
  }

  /// Drops from `kept` every load that `op` (or an op inside its regions) may write to.
  void forget_written(std::vector<Op*>& kept, const Op& op) const {
    std::erase_if(kept, [&](const Op* l) { return may_write(op, l->operand(0), origins_); });
  }

  analysis::PointerOrigins origins_;
  bool changed_ = false;
};

class LoadCsePass final : public Pass {
 public:
  std::string_view name() const override { return "load_cse"; }
  bool run(ir::Function& f) override { return LoadCse(f).block(f.body); }
};

}  // namespace

std::unique_ptr<Pass> make_load_cse() { return std::make_unique<LoadCsePass>(); }

}  // namespace tile::transforms
