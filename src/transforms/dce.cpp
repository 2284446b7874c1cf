// src/transforms/dce.cpp — layer: transforms. Dead-code elimination (see passes.hpp for the
// contract).
//
// Use counts are computed once for the whole function. Each sweep visits every block from its
// last op to its first, regions before the op that owns them, and erases an op whose results
// all have no use and that may be removed; erasing releases the uses its operands (and those of
// the ops nested in its regions) had. Visiting backwards frees whole chains in one sweep; sweeps
// repeat until nothing changes.
#include <unordered_map>

#include "transforms/passes.hpp"

namespace tile::transforms {

namespace {

using ir::Op;
using ir::OpKind;
using ir::Value;

bool has_side_effects(const ir::Block& b) {
  for (auto& op : b.ops) {
    if (ir::op_flags(op->kind) & ir::opflag::M) return true;
    for (auto& r : op->regions)
      if (has_side_effects(*r)) return true;
  }
  return false;
}

/// Whether `op` may be erased once its results are unused.
bool removable(const Op& op) {
  if (ir::is_terminator(op.kind) || (ir::op_flags(op.kind) & ir::opflag::M)) return false;
  if (op.regions.empty()) return ir::is_pure(op.kind);
  switch (op.kind) {
    case OpKind::for_:
    case OpKind::while_:
    case OpKind::if_:
    case OpKind::reduce:
    case OpKind::scan:
      for (auto& r : op.regions)
        if (has_side_effects(*r)) return false;
      return true;
    default:
      return false;
  }
}

class Dce {
 public:
  bool run(ir::Function& f) {
    ir::walk(f.body, [&](Op& op) {
      for (Value* o : op.operands) ++uses_[o];
    });
    bool changed = false;
    while (sweep(f.body)) changed = true;
    return changed;
  }

 private:
  std::unordered_map<const Value*, std::size_t> uses_;

  bool unused(const Op& op) const {
    for (auto& r : op.results)
      if (auto it = uses_.find(r.get()); it != uses_.end() && it->second > 0) return false;
    return true;
  }

  void release(Op& op) {
    for (Value* o : op.operands) --uses_[o];
    for (auto& r : op.regions) ir::walk(*r, [&](Op& inner) {
      for (Value* o : inner.operands) --uses_[o];
    });
  }

  bool sweep(ir::Block& b) {
    bool changed = false;
    for (auto it = b.ops.end(); it != b.ops.begin();) {
      --it;
      Op& op = **it;
      for (auto& r : op.regions) changed |= sweep(*r);
      if (removable(op) && unused(op)) {
        release(op);
        it = b.ops.erase(it);
        changed = true;
      }
    }
    return changed;
  }
};

class DcePass final : public Pass {
 public:
  std::string_view name() const override { return "dce"; }
  bool run(ir::Function& f) override { return Dce().run(f); }
};

}  // namespace

std::unique_ptr<Pass> make_dce() { return std::make_unique<DcePass>(); }

}  // namespace tile::transforms
