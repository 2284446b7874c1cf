// src/layout/remove_conversions.cpp — layer: layout. The pass remove_conversions
// (gpu_passes.hpp): of the convert_layout ops assign_layouts put before uses, keeps only those
// that must move data. In program order, a conversion of a value to a layout (of the value a
// chain of conversions starts from: the elements themselves)
//   0. unless case 1, 2 or 3 applies where it is, moves out of the loops that do not define the
//      value it converts (it then runs once, before the outermost such loop);
//   1. is that value, where it is in the layout already;
//   2. reuses an earlier conversion of the same value to the same layout, in its block or an
//      enclosing one (which dominates it);
//   3. else, when the value is cheap to compute — built from constants, splats, aranges,
//      broadcast/expand_dims/reshape and elementwise ops, at most kBudget ops deep, with every
//      operand (looking through its own conversions) already in the layout it would need or
//      itself cheap — computes it again in the wanted layout (index arithmetic and masks: a few integer ops instead of a round trip
//      through shared memory);
//   4. else, when the value is a load that only this conversion reads, of at most
//      kReloadElements elements, in the conversion's block with nothing between them that
//      writes memory (or holds a region), not volatile, whose pointers, mask and `other` are
//      cheap in the wanted layout: loads it in that layout instead, where the conversion is
//      (the backward's row statistics M and Delta, read as a row vector of the product's
//      layout: each thread loads the elements it holds, from the cache, where the conversion
//      took two barriers and a shared-memory round trip in every iteration);
//   5. else stays: the lowering moves the elements between threads there.
// The originals a recomputation leaves unused are left for dce.
#include <algorithm>
#include <optional>

#include "layout/gpu_passes.hpp"

namespace tile::layout {

namespace {

using ir::OpKind;

constexpr int kBudget = 8;
constexpr std::int64_t kReloadElements = 256;

bool is_scalar(const ir::Value* v) { return v->type.shape.empty(); }

/// The value a conversion (or a chain of them) converts: recomputing starts from the elements
/// themselves, in whatever layout they were made.
ir::Value* unconverted(ir::Value* v) {
  while (v->def && v->def->kind == OpKind::convert_layout) v = v->def->operand(0);
  return v;
}

/// The layout `op`'s operand must have for `op` to give its result in layout `l` by renumbering
/// registers (the verifier's rule for shape ops).
LinearLayout source_layout(const ir::Op& op, const LinearLayout& l) {
  const auto& ss = op.operand(0)->type.shape;
  switch (op.kind) {
    case OpKind::broadcast: return broadcast_source(l, ss);
    case OpKind::expand_dims: return slice(l, static_cast<int>(op.attrs.ints.at(0)));
    default: return reshape(l, ss);
  }
}

/// The operand element that result element `c` of a broadcast, expand_dims or reshape is.
Coords source_coords(const ir::Op& op, const LinearLayout& result, const Coords& c) {
  const auto& ss = op.operand(0)->type.shape;
  Coords s = c;
  if (op.kind == OpKind::broadcast) {
    for (std::size_t d = 0; d < s.size(); ++d)
      if (ss[d] == 1) s[d] = 0;
  } else if (op.kind == OpKind::expand_dims) {
    s.erase(s.begin() + static_cast<std::ptrdiff_t>(op.attrs.ints.at(0)));
  } else {  // reshape: the same row-major position
    std::int64_t f = result.flat(c);
    s.assign(ss.size(), 0);
    for (std::size_t d = ss.size(); d-- > 0;) {
      s[d] = f % ss[d];
      f /= ss[d];
    }
  }
  return s;
}

class RemoveConversions final : public transforms::Pass {
 public:
  std::string_view name() const override { return "remove_conversions"; }

  bool run(ir::Function& f) override {
    if (!f.gpu) return false;
    changed_ = false;
    block(f.body);
    scopes_.clear();
    return changed_;
  }

 private:
  struct Made {
    const ir::Value* from;
    LinearLayout to;
    ir::Value* value;
  };
  std::vector<std::vector<Made>> scopes_;
  bool changed_ = false;

  ir::Value* made(const ir::Value* v, const LinearLayout& l) const {
    for (const auto& s : scopes_)
      for (const Made& m : s)
        if (m.from == v && m.to == l) return m.value;
    return nullptr;
  }

  void block(ir::Block& b) {
    scopes_.emplace_back();
    for (auto it = b.ops.begin(); it != b.ops.end();) {
      ir::Op* op = it->get();
      ++it;
      if (op->kind == OpKind::convert_layout) {  // (may erase the op: no region to visit)
        convert(op);
        continue;
      }
      for (auto& r : op->regions) block(*r);
    }
    scopes_.pop_back();
  }

  /// Whether `v` is made inside `op` (by an op of its regions, or as one of their arguments).
  static bool made_in(const ir::Value* v, const ir::Op& op) {
    const ir::Block* b = v->def ? v->def->parent : v->owner;
    while (b) {
      if (b->parent == &op) return true;
      b = b->parent ? b->parent->parent : nullptr;
    }
    return false;
  }

  /// Case 0: `c` moved before the outermost enclosing loop that does not make its operand.
  /// Returns how many blocks out it moved.
  static std::size_t hoist(ir::Op* c) {
    ir::Op* before = nullptr;
    std::size_t levels = 0, out = 0;
    for (ir::Block* b = c->parent; b && b->parent; b = b->parent->parent) {
      ir::Op* loop = b->parent;
      ++levels;
      if ((loop->kind != OpKind::for_ && loop->kind != OpKind::while_) || made_in(c->operand(0), *loop)) break;
      before = loop;
      out = levels;
    }
    if (!before) return 0;
    ir::Block& from = *c->parent;
    ir::Block& to = *before->parent;
    auto src = std::find_if(from.ops.begin(), from.ops.end(), [&](const auto& o) { return o.get() == c; });
    auto dst = std::find_if(to.ops.begin(), to.ops.end(), [&](const auto& o) { return o.get() == before; });
    to.ops.splice(dst, from.ops, src);
    c->parent = &to;
    return out;
  }

  void convert(ir::Op* c) {
    // (a value already in the layout, converted before, or cheap to compute again stays where
    // it is used: computed again before a loop, it would hold its registers through the loop)
    const ir::Value* v0 = unconverted(c->operand(0));
    const LinearLayout& l0 = *c->result()->type.layout;
    const bool in_place = *v0->type.layout == l0 || made(v0, l0) || cheap(v0, l0, kBudget);
    const std::size_t out = in_place ? 0 : hoist(c);
    if (out) changed_ = true;
    // (what it makes is known in the block it moved to: the scope that many levels out)
    std::vector<Made>& scope = scopes_[scopes_.size() - 1 - std::min(out, scopes_.size() - 1)];
    // a conversion of a conversion converts the original (which may already be in `l`)
    ir::Value* v = unconverted(c->operand(0));
    const LinearLayout& l = *c->result()->type.layout;
    ir::Value* with = *v->type.layout == l ? v : made(v, l);
    if (!with && cheap(v, l, kBudget)) {
      ir::Builder b(c->parent);
      b.set_insertion_before(c);
      with = recompute(v, l, kBudget, b);
    }
    ir::Op* reloaded = nullptr;  // (the load a reload replaces: erased with the conversion)
    if (!with && reloadable(v, *c, l)) {
      ir::Builder b(c->parent);
      b.set_insertion_before(c);
      reloaded = v->def;
      std::vector<ir::Value*> in;
      for (unsigned k = 0; k < reloaded->operands.size(); ++k) {
        ir::Value* x = unconverted(reloaded->operand(k));
        const LinearLayout want = l;
        in.push_back(is_scalar(x) || *x->type.layout == want ? x : recompute(x, want, kBudget, b));
      }
      with = b.create(OpKind::load, in, {v->type.with_layout(l)}, reloaded->attrs, reloaded->loc)->result();
    }
    if (!with) {
      scope.push_back({v, l, c->result()});
      return;
    }
    if (with != c->result()) scope.push_back({v, l, with});
    ir::replace_all_uses(*c->parent, c->result(), with);  // (its uses: in its block, nested included)
    ir::erase(c);
    if (reloaded) ir::erase(reloaded);
    changed_ = true;
  }

  /// Whether `v` is a load convert may repeat in layout `l` where its conversion `c` is (case 4).
  bool reloadable(const ir::Value* v, const ir::Op& c, const LinearLayout& l) const {
    const ir::Op* ld = v->def;
    if (!ld || ld->kind != OpKind::load || ld->parent != c.parent || is_scalar(v)) return false;
    const auto& a = ld->attrs.ints;
    if (a.size() > 4 && a[4] != 0) return false;  // volatile
    std::int64_t n = 1;
    for (auto e : v->type.shape) n *= e;
    if (n > kReloadElements) return false;
    // its one use this conversion, nothing between them that writes memory
    bool after = false, ok = true;
    for (const auto& o : c.parent->ops) {
      if (o.get() == &c) break;
      if (after) {
        for (const ir::Value* x : o->operands) ok = ok && x != v;
        ok = ok && o->regions.empty() && o->kind != OpKind::store && o->kind != OpKind::atomic_rmw && o->kind != OpKind::atomic_cas;
      }
      after = after || o.get() == ld;
    }
    if (!after || !ok) return false;
    std::size_t uses = 0;
    ir::walk(*c.parent, [&](const ir::Op& o) {
      for (const ir::Value* x : o.operands) uses += x == v;
    });
    if (uses != 1) return false;
    for (unsigned k = 0; k < ld->operands.size(); ++k) {
      const ir::Value* x = unconverted(ld->operand(k));
      if (!is_scalar(x) && *x->type.layout != l && !cheap(x, l, kBudget)) return false;
    }
    return true;
  }

  /// Whether `v` can be computed again in layout `l` (recompute's cases).
  bool cheap(const ir::Value* v, const LinearLayout& l, int budget) const {
    const ir::Op* op = v->def;
    if (!op || budget <= 0 || op->results.size() != 1 || is_scalar(v) || !op->regions.empty()) return false;
    auto operand_ok = [&](unsigned k, const LinearLayout& want) {
      const ir::Value* x = unconverted(op->operand(k));
      return is_scalar(x) || *x->type.layout == want || cheap(x, want, budget - 1);
    };
    switch (op->kind) {
      case OpKind::constant:
      case OpKind::splat:
      case OpKind::arange: return true;
      case OpKind::broadcast:
      case OpKind::expand_dims:
      case OpKind::reshape: {
        const LinearLayout src = source_layout(*op, l);
        if (!operand_ok(0, src)) return false;
        if (is_scalar(op->operand(0))) return true;
        for (int r = 0; r < l.num_regs(); ++r)  // each element in the thread that holds it in `l`
          if (!register_of(src, source_coords(*op, l, l.coords(r, 0, 0)))) return false;
        return true;
      }
      default: break;
    }
    if (!ir::is_elementwise(op->kind)) return false;
    for (unsigned k = 0; k < op->operands.size(); ++k)
      if (!operand_ok(k, l)) return false;
    return true;
  }

  /// `v` computed again in layout `l` at `b` (cheap said it can be).
  ir::Value* recompute(ir::Value* v, const LinearLayout& l, int budget, ir::Builder& b) {
    const ir::Op* op = v->def;
    const ir::Type t = v->type.with_layout(l);
    auto operand_in = [&](unsigned k, const LinearLayout& want) {
      ir::Value* x = unconverted(op->operand(k));
      if (is_scalar(x) || *x->type.layout == want) return x;
      return recompute(x, want, budget - 1, b);
    };
    switch (op->kind) {
      case OpKind::constant:
      case OpKind::arange: return b.create(op->kind, {}, {t}, op->attrs, op->loc)->result();
      case OpKind::splat: return b.create(OpKind::splat, {op->operand(0)}, {t}, op->attrs, op->loc)->result();
      case OpKind::broadcast:
      case OpKind::expand_dims:
      case OpKind::reshape: {
        ir::Value* x = operand_in(0, source_layout(*op, l));
        if (is_scalar(x)) return b.create(OpKind::splat, {x}, {t}, {}, op->loc)->result();
        return b.create(op->kind, {x}, {t}, op->attrs, op->loc)->result();
      }
      default: break;
    }
    std::vector<ir::Value*> in;
    for (unsigned k = 0; k < op->operands.size(); ++k) in.push_back(operand_in(k, l));
    return b.create(op->kind, in, {t}, op->attrs, op->loc)->result();
  }
};

}  // namespace

std::unique_ptr<transforms::Pass> make_remove_conversions() { return std::make_unique<RemoveConversions>(); }

}  // namespace tile::layout
