// src/transforms/guard_bounded_selects.cpp — layer: transforms. A select inside a loop whose
// condition compares an index span with a uniform bound, given a branch for when the whole span
// is on the kept side (see passes.hpp for the contract).
//
// Attention over N keys walks them in blocks of BLOCK_N and masks the keys past N in every block:
//
//     cols = start_n + arange(0, BLOCK_N)
//     qk   = where(cols[None, :] < N, qk, -1e6)
//
// On the GPU that is a select an element (32 a thread at 128 x 64 on 8 warps) and a compare a
// column, in every iteration, though only the last block can hold keys past N. Every element of
// `cols` is start_n + c with c in [0, BLOCK_N - 1], so the whole tile is kept exactly when
// start_n + BLOCK_N - 1 < N: one scalar compare. The select becomes
//
//     if (start_n + (BLOCK_N - 1) < N) { yield qk } else { yield where(cols[None, :] < N, qk, -1e6) }
//
// The condition is uniform over the program, so the branch does not diverge, and the compares
// that only fed the select move into the second branch. Recognized spans: aranges, integer
// constants, scalars (a splat of one) and the sums of one scalar and constant spans, through
// splat, broadcast, expand_dims, reshape and convert_layout; the bound a scalar or a splat of
// one. The scalar compare is made in i64 from 32-bit (or narrower) signed indices, so a sum that
// would wrap in 32 bits takes the second branch, as it must (where the span reaches past the
// compared edge, the far end is checked not to wrap as well).
#include <cstdlib>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "transforms/passes.hpp"

namespace tile::transforms {

namespace {

using ir::Op;
using ir::OpKind;
using ir::Value;

/// Every element of a tile is `base + c` with c in [lo, hi] (base a scalar value, or null: 0).
struct Span {
  Value* base = nullptr;
  std::int64_t lo = 0, hi = 0;
};

bool shape_op(OpKind k) {
  return k == OpKind::splat || k == OpKind::broadcast || k == OpKind::expand_dims || k == OpKind::reshape ||
         k == OpKind::convert_layout;
}

bool signed_index(dtype t) { return is_int(t) && !is_unsigned(t) && bits(t) >= 8 && bits(t) <= 32; }

std::optional<Span> add_span(const Op* d, int depth);

std::optional<Span> span_of(Value* v, int depth = 0) {
  if (depth > 16 || v->type.ptr || !signed_index(v->type.elem)) return std::nullopt;
  if (auto c = ir::int_constant(v)) return Span{nullptr, *c, *c};
  const Op* d = v->def;
  if (v->type.shape.empty() && (!d || d->kind != OpKind::add)) return Span{v, 0, 0};  // a scalar
  if (!d) return std::nullopt;
  if (v->type.shape.empty()) {  // a scalar sum: its constant part apart where it has one
    const auto sum = add_span(d, depth);
    return sum ? sum : Span{v, 0, 0};
  }
  if (d->kind == OpKind::arange) {
    if (d->attrs.ints.size() < 2 || d->attrs.ints[1] <= d->attrs.ints[0]) return std::nullopt;
    return Span{nullptr, d->attrs.ints[0], d->attrs.ints[1] - 1};
  }
  if (shape_op(d->kind)) return span_of(d->operand(0), depth + 1);
  if (d->kind == OpKind::add) return add_span(d, depth);
  return std::nullopt;
}

/// The span of an add: a scalar plus constant spans, or constant spans.
std::optional<Span> add_span(const Op* d, int depth) {
  const auto a = span_of(d->operand(0), depth + 1), b = span_of(d->operand(1), depth + 1);
  if (!a || !b || (a->base && b->base)) return std::nullopt;
  constexpr std::int64_t kLimit = std::int64_t{1} << 40;  // constants stay far from overflow
  if (std::abs(a->lo) > kLimit || std::abs(a->hi) > kLimit || std::abs(b->lo) > kLimit || std::abs(b->hi) > kLimit)
    return std::nullopt;
  return Span{a->base ? a->base : b->base, a->lo + b->lo, a->hi + b->hi};
}

/// The scalar every element of `v` equals (a scalar, or a splat of one through shape ops).
Value* uniform_of(Value* v, int depth = 0) {
  if (depth > 16) return nullptr;
  if (v->type.shape.empty()) return v;
  const Op* d = v->def;
  if (d && shape_op(d->kind)) return uniform_of(d->operand(0), depth + 1);
  return nullptr;
}

class Guard {
 public:
  explicit Guard(ir::Function& f) : f_(f) {}

  bool block(ir::Block& b, bool in_loop) {
    for (auto& op : b.ops)
      for (auto& r : op->regions) block(*r, in_loop || op->kind == OpKind::for_ || op->kind == OpKind::while_);
    if (!in_loop) return changed_;
    std::vector<Op*> selects;
    for (auto& op : b.ops)
      if (op->kind == OpKind::select && worth_it(*op) && !guarded(b, *op)) selects.push_back(op.get());
    for (Op* sel : selects) {
      auto it = b.ops.begin();
      while (it->get() != sel) ++it;
      guard(b, it);
    }
    return changed_;
  }

 private:
  /// A tile of at least 4 elements a thread (a select is one instruction an element; the branch
  /// costs about two).
  bool worth_it(const Op& sel) const {
    const ir::Type& t = sel.result()->type;
    std::int64_t n = 1;
    for (auto e : t.shape) n *= e;
    return !t.shape.empty() && n >= 4 * 32 * f_.num_warps;
  }

  /// Whether `sel` is the select of a branch this pass made (the second branch of an `if` that
  /// yields it, whose first branch yields its kept operand): running the pass again guards
  /// nothing twice.
  static bool guarded(const ir::Block& b, const Op& sel) {
    const Op* branch = b.parent;
    if (!branch || branch->kind != OpKind::if_ || branch->regions.size() != 2 || branch->region(1) != &b) return false;
    const Op* yield_some = b.terminator();
    const Op* yield_all = branch->region(0)->terminator();
    return yield_some && yield_all && yield_some->operands.size() == 1 && yield_some->operand(0) == sel.result() &&
           yield_all->operands.size() == 1 && yield_all->operand(0) == sel.operand(1);
  }

  /// The scalar condition "every element of the select's condition holds", built before `at`,
  /// or null where the condition is not such a compare.
  Value* all_hold(ir::Block& b, std::list<std::unique_ptr<Op>>::iterator at, Value* cond) {
    const Op* d = cond->def;
    while (d && (d->kind == OpKind::broadcast || d->kind == OpKind::expand_dims || d->kind == OpKind::reshape ||
                 d->kind == OpKind::convert_layout))
      d = d->operand(0)->def;
    if (!d || d->kind != OpKind::cmp || d->attrs.ints.empty()) return nullptr;
    auto pred = static_cast<ir::CmpPred>(d->attrs.ints[0]);
    std::optional<Span> s = span_of(d->operand(0));
    Value* bound = uniform_of(d->operand(1));
    if (!s || !bound || s->base == bound) {  // the span on the right: mirror the compare
      s = span_of(d->operand(1));
      bound = uniform_of(d->operand(0));
      if (!s || !bound) return nullptr;
      switch (pred) {
        case ir::CmpPred::lt: pred = ir::CmpPred::gt; break;
        case ir::CmpPred::le: pred = ir::CmpPred::ge; break;
        case ir::CmpPred::gt: pred = ir::CmpPred::lt; break;
        case ir::CmpPred::ge: pred = ir::CmpPred::le; break;
        default: return nullptr;
      }
    }
    if (!signed_index(bound->type.elem) || (s->base && s->base->type.elem != bound->type.elem)) return nullptr;
    if (pred != ir::CmpPred::lt && pred != ir::CmpPred::le && pred != ir::CmpPred::gt && pred != ir::CmpPred::ge)
      return nullptr;
    // lt/le: the span's largest element against the bound; gt/ge: its smallest
    const bool below = pred == ir::CmpPred::lt || pred == ir::CmpPred::le;
    const std::int64_t edge = below ? s->hi : s->lo;
    ir::Builder bld(&b, at);
    const src_loc loc = (*at)->loc;
    const ir::Type i64{dtype::i64, false, {}}, i1{dtype::i1, false, {}};
    auto wide = [&](Value* v) { return bld.create(OpKind::cast, {v}, {i64}, {}, loc)->result(); };
    auto cmp = [&](ir::CmpPred p, Value* x, Value* y) {
      ir::Attrs a;
      a.ints = {static_cast<std::int64_t>(p)};
      return bld.create(OpKind::cmp, {x, y}, {i1}, a, loc)->result();
    };
    Value* base = s->base ? wide(s->base) : nullptr;
    auto plus = [&](std::int64_t c) {
      Value* k = bld.constant_int(i64, c, loc);
      return base ? bld.create(OpKind::add, {base, k}, {i64}, {}, loc)->result() : k;
    };
    Value* all = cmp(pred, plus(edge), wide(bound));
    // the elements are sums in the index type, which wrap: where the span reaches past the edge
    // the compare does not bound (below the smallest for lt/le, above the largest for gt/ge),
    // its far end must not wrap either
    const int w = bits(bound->type.elem);
    const std::int64_t lowest = -(std::int64_t{1} << (w - 1)), highest = (std::int64_t{1} << (w - 1)) - 1;
    if (base && below && s->lo < 0)
      all = bld.create(OpKind::bit_and, {all, cmp(ir::CmpPred::ge, plus(s->lo), bld.constant_int(i64, lowest, loc))}, {i1}, {}, loc)->result();
    if (base && !below && s->hi > 0)
      all = bld.create(OpKind::bit_and, {all, cmp(ir::CmpPred::le, plus(s->hi), bld.constant_int(i64, highest, loc))}, {i1}, {}, loc)->result();
    return all;
  }

  void guard(ir::Block& b, std::list<std::unique_ptr<Op>>::iterator it) {
    Op& sel = **it;
    Value* all = all_hold(b, it, sel.operand(0));
    if (!all) return;
    changed_ = true;
    ir::Builder bld(&b, it);
    Op* branch = bld.create(OpKind::if_, {all}, {sel.result()->type}, {}, sel.loc, 2);
    // uses of the select (after it, in this block and nested regions) take the branch's result
    Value* old = sel.result();
    Value* res = branch->result();
    for (auto after = std::next(it); after != b.ops.end(); ++after) {
      auto redirect = [&](Op& o) {
        for (auto& v : o.operands)
          if (v == old) v = res;
      };
      redirect(**after);
      for (auto& r : (*after)->regions) ir::walk(*r, redirect);
    }
    ir::Builder(branch->region(0)).create(OpKind::yield, {sel.operand(1)}, {}, {}, sel.loc);
    // the second branch: the ops that only fed the select's condition, then the select itself
    ir::Block& slow = *branch->region(1);
    uses_.clear();
    ir::walk(f_.body, [&](Op& o) {
      for (Value* v : o.operands) ++uses_[v];
    });
    std::unordered_set<const Op*> moving{&sel};
    for (bool grew = true; grew;) {
      grew = false;
      for (auto& o : b.ops) {
        if (moving.count(o.get()) || !o->regions.empty() || !ir::is_pure(o->kind)) continue;
        bool feeds_only_moving = !o->results.empty();
        for (auto& r : o->results) {
          std::size_t inside = 0;
          for (const Op* m : moving)
            for (const Value* v : m->operands) inside += v == r.get();
          feeds_only_moving = feeds_only_moving && uses_[r.get()] > 0 && inside == uses_[r.get()];
        }
        if (feeds_only_moving) moving.insert(o.get()), grew = true;
      }
    }
    for (auto o = b.ops.begin(); o != b.ops.end();) {
      auto next = std::next(o);
      if (moving.count(o->get())) {
        (*o)->parent = &slow;
        slow.ops.splice(slow.ops.end(), b.ops, o);
      }
      o = next;
    }
    ir::Builder(&slow).create(OpKind::yield, {old}, {}, {}, sel.loc);
  }

  ir::Function& f_;
  std::unordered_map<const Value*, std::size_t> uses_;
  bool changed_ = false;
};

class GuardBoundedSelects final : public Pass {
 public:
  std::string_view name() const override { return "guard_bounded_selects"; }
  bool run(ir::Function& f) override { return Guard(f).block(f.body, false); }
};

}  // namespace

std::unique_ptr<Pass> make_guard_bounded_selects() { return std::make_unique<GuardBoundedSelects>(); }

}  // namespace tile::transforms
