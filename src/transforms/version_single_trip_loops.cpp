// src/transforms/version_single_trip_loops.cpp — layer: transforms. Loops over the same range
// that read the same memory, given a version for when that range is one step (see passes.hpp for
// the contract).
//
// Triton's layer norm walks each row three times, `for off in range(0, N, BLOCK)` each time, and
// loads the row in every walk. Where the row fits one BLOCK (the common case, and the tutorial's
// choice of BLOCK), each loop runs once and the three loads read the same bytes. This pass finds,
// in one block, two or more `for` ops with the same bounds (constant lower bound and positive
// constant step, the same upper bound value) where a load in a later loop's body equals one in an
// earlier loop's body once both induction variables are the lower bound, and no write in between
// may reach it. The ops from the first such loop to the last become
//
//     if (lo < hi && hi <= lo + step) { the same ops, each loop's body inlined once } else { as they were }
//
// and load_cse (which runs after) merges the repeated loads of the first branch, so the data is
// read once and kept in registers. The second branch keeps the loops as written for every other
// range. The condition is uniform over a program, so on the GPU the branch does not diverge.
// Where the upper bound is a constant, only loops that run exactly once are taken, and the first
// branch's ops replace them (no condition). The recognition of an `if` made here (its second
// branch keeps its loops) and the comparison of bounds by their constants' values let the pass
// run again (the NVIDIA pipeline canonicalizes twice for descriptor loads) without versioning
// anything twice; a budget (three times the kernel's ops) bounds what nested spans copy.
#include <cstdint>
#include <unordered_set>

#include "transforms/memory_effects.hpp"
#include "transforms/passes.hpp"

namespace tile::transforms {

namespace {

using ir::Op;
using ir::OpKind;
using ir::Value;
using OpIter = std::list<std::unique_ptr<Op>>::iterator;

/// lo + step where it is representable in `t` (the loop's bound type) and in an int64, else nullopt.
std::optional<std::int64_t> one_step_bound(dtype t, std::int64_t lo, std::int64_t step) {
  const int w = bits(t);
  if (w < 8 || w > 64 || step <= 0) return std::nullopt;
  const std::int64_t max = is_unsigned(t) ? (w == 64 ? INT64_MAX : static_cast<std::int64_t>((std::uint64_t{1} << w) - 1))
                                          : (w == 64 ? INT64_MAX : (std::int64_t{1} << (w - 1)) - 1);
  if ((is_unsigned(t) && lo < 0) || lo > max - step) return std::nullopt;
  return lo + step;
}

/// Whether lo < hi <= bound, compared as the bounds' type compares them.
bool runs_once(dtype t, std::int64_t lo, std::int64_t hi, std::int64_t bound) {
  if (!is_unsigned(t)) return lo < hi && hi <= bound;
  const auto ulo = static_cast<std::uint64_t>(lo), uhi = static_cast<std::uint64_t>(hi);
  return ulo < uhi && uhi <= static_cast<std::uint64_t>(bound);
}

/// A loop this pass can version: constant lower bound, positive constant step (lo + step
/// representable), and an upper bound that is a constant only where the loop runs exactly once
/// (those loops need no condition: their version replaces them).
bool versionable(const Op& op) {
  if (op.kind != OpKind::for_) return false;
  const dtype t = op.operand(0)->type.elem;
  const auto lo = ir::int_constant(op.operand(0)), step = ir::int_constant(op.operand(2));
  const auto bound = lo && step ? one_step_bound(t, *lo, *step) : std::nullopt;
  if (!bound) return false;
  const auto hi = ir::int_constant(op.operand(1));
  return !hi || runs_once(t, *lo, *hi, *bound);
}

/// Whether `b` is the second branch of an `if` this pass made for `loop`'s bounds (its condition
/// `lo < hi && hi <= lo + step`): those loops keep their form, so running the pass again (the
/// NVIDIA pipeline canonicalizes twice) versions nothing twice.
bool kept_by_earlier_version(const ir::Block& b, const Op& loop) {
  const Op* branch = b.parent;
  if (!branch || branch->kind != OpKind::if_ || branch->regions.size() < 2 || branch->region(1) != &b) return false;
  const Op* both = branch->operand(0)->def;
  if (!both || both->kind != OpKind::bit_and) return false;
  const Op *runs = both->operand(0)->def, *once = both->operand(1)->def;
  auto is_cmp = [](const Op* c, ir::CmpPred p) {
    return c && c->kind == OpKind::cmp && !c->attrs.ints.empty() && c->attrs.ints[0] == static_cast<std::int64_t>(p);
  };
  if (!is_cmp(runs, ir::CmpPred::lt) || !is_cmp(once, ir::CmpPred::le)) return false;
  const Value *lo = loop.operand(0), *hi = loop.operand(1);
  const auto bound = one_step_bound(lo->type.elem, *ir::int_constant(lo), *ir::int_constant(loop.operand(2)));
  return ir::int_constant(runs->operand(0)) == ir::int_constant(lo) && runs->operand(1) == hi && once->operand(0) == hi &&
         ir::int_constant(once->operand(1)) == bound;
}

/// One upper-bound value, and lower bounds and steps of equal constants (literal bounds are
/// traced where each loop is written: the loops inlined from two bodies hold copies of them).
bool same_bounds(const Op& a, const Op& b) {
  return a.operand(1) == b.operand(1) && a.operand(0)->type == b.operand(0)->type &&
         ir::int_constant(a.operand(0)) == ir::int_constant(b.operand(0)) && ir::int_constant(a.operand(2)) == ir::int_constant(b.operand(2));
}

/// Whether `x` (computed in loop `fa`) and `y` (in loop `fb`) hold the same values when both
/// induction variables equal the lower bound: one value from outside both loops, both induction
/// variables, or the same pure op of such operands.
bool same_at_first_step(const Value* x, const Value* y, const Op& fa, const Op& fb, int depth = 0) {
  if (x == y) return true;  // one value: from outside both loops (a loop's own value is not in the other)
  if (x == fa.region(0)->arg(0) && y == fb.region(0)->arg(0)) return true;
  if (depth > 64 || !x->def || !y->def || x->type != y->type || x->index != y->index) return false;
  const Op &p = *x->def, &q = *y->def;
  if (p.kind != q.kind || !ir::is_pure(p.kind) || !p.regions.empty() || !q.regions.empty() || p.attrs != q.attrs ||
      p.operands.size() != q.operands.size())
    return false;
  for (std::size_t i = 0; i < p.operands.size(); ++i)
    if (!same_at_first_step(p.operand(i), q.operand(i), fa, fb, depth + 1)) return false;
  return true;
}

/// Whether some op from `first` to `last` (regions included) may write what `load` reads.
bool written_between(OpIter first, OpIter last, const Op& load, const analysis::PointerOrigins& origins) {
  for (auto it = first;; ++it) {
    if (may_write(**it, load.operand(0), origins)) return true;
    if (it == last) return false;
  }
}

/// Whether a load in `later`'s body repeats one in `earlier`'s body at the first step, with no
/// write from `earlier` to `later` that may reach it.
bool reads_again(OpIter earlier, OpIter later, const analysis::PointerOrigins& origins) {
  const Op &fa = **earlier, &fb = **later;
  for (auto& lb : fb.region(0)->ops) {
    if (!reusable_load(*lb)) continue;
    for (auto& la : fa.region(0)->ops) {
      if (!reusable_load(*la) || la->attrs != lb->attrs || la->result()->type != lb->result()->type ||
          la->operands.size() != lb->operands.size())
        continue;
      bool same = true;
      for (std::size_t i = 0; same && i < la->operands.size(); ++i)
        same = same_at_first_step(la->operand(i), lb->operand(i), fa, fb);
      if (same && !written_between(earlier, later, *la, origins)) return true;
    }
  }
  return false;
}

class Versioner {
 public:
  /// The versions may add at most three times the kernel's ops (spans nested in spans of other
  /// bounds are copied once per level).
  explicit Versioner(const ir::Function& f) : origins_(f), budget_(3 * ops_in(f.body)) {}

  bool block(ir::Block& b) {
    for (auto& op : b.ops)  // inner blocks first
      for (auto& r : op->regions) block(*r);
    auto candidate = [&](const Op& op) { return versionable(op) && !kept_by_earlier_version(b, op); };
    for (auto it = b.ops.begin(); it != b.ops.end();) {
      if (!candidate(**it)) {
        ++it;
        continue;
      }
      // the last loop with these bounds that reads again what one from `it` on read
      OpIter last = b.ops.end();
      for (auto a = it; a != b.ops.end(); ++a) {
        if (!candidate(**a) || !same_bounds(**a, **it)) continue;
        for (auto c = std::next(a); c != b.ops.end(); ++c)
          if (candidate(**c) && same_bounds(**c, **it) && reads_again(a, c, origins_)) last = c;
      }
      std::size_t size = 0;
      for (auto op = it; last != b.ops.end() && op != std::next(last); ++op) size += 1 + ops_in(**op);
      if (last == b.ops.end() || size > budget_) {
        ++it;
        continue;
      }
      budget_ -= size;
      changed_ = true;
      if (Op* branch = version(b, it, last)) {
        // loops of other bounds inside the span: versioned now in both branches (so a second
        // run of the pass finds nothing; the branch made here keeps its own loops as they are)
        for (auto& r : branch->regions) block(*r);
      }
      it = b.ops.begin();  // what follows the span, or what was inlined in its place, from the top
    }
    return changed_;
  }

 private:
  static std::size_t ops_in(const ir::Block& blk) {
    std::size_t n = 0;
    ir::walk(const_cast<ir::Block&>(blk), [&](const Op&) { ++n; });
    return n;
  }
  static std::size_t ops_in(const Op& op) {
    std::size_t n = 0;
    for (auto& r : op.regions) n += ops_in(*r);
    return n;
  }

  /// Replaces the ops from `first` to `last` by the `if` described at the top of the file and
  /// returns it; where the upper bound is a constant (the loops run once), by the first branch's
  /// ops in place, and returns null.
  Op* version(ir::Block& b, OpIter first, OpIter last) {
    Op& loop = **first;
    Value *lo = loop.operand(0), *hi = loop.operand(1), *step = loop.operand(2);
    const OpIter after = std::next(last);
    // the values of the span that ops after it use: the if's results
    std::unordered_set<const Value*> defined;
    for (auto it = first; it != after; ++it)
      for (auto& r : (*it)->results) defined.insert(r.get());
    std::vector<Value*> escaping;
    std::unordered_set<const Value*> seen;
    for (auto it = after; it != b.ops.end(); ++it) {
      auto note = [&](const Op& o) {
        for (Value* v : o.operands)
          if (defined.count(v) && seen.insert(v).second) escaping.push_back(v);
      };
      note(**it);
      for (auto& r : (*it)->regions) ir::walk(*r, note);
    }
    // the condition: exactly one step
    ir::Builder bld(&b, first);
    const ir::Type i1{dtype::i1, false, {}};
    const std::int64_t bound = *one_step_bound(lo->type.elem, *ir::int_constant(lo), *ir::int_constant(step));
    ir::Attrs lt, le;
    lt.ints = {static_cast<std::int64_t>(ir::CmpPred::lt)};
    le.ints = {static_cast<std::int64_t>(ir::CmpPred::le)};
    Value* runs = bld.create(OpKind::cmp, {lo, hi}, {i1}, lt, loop.loc)->result();
    Value* once = bld.create(OpKind::cmp, {hi, bld.constant_int(lo->type, bound, loop.loc)}, {i1}, le, loop.loc)->result();
    Value* cond = bld.create(OpKind::bit_and, {runs, once}, {i1}, {}, loop.loc)->result();
    std::vector<ir::Type> types;
    for (const Value* v : escaping) types.push_back(v->type);
    Op* branch = bld.create(OpKind::if_, {cond}, types, {}, loop.loc, 2);
    // else: the ops as they were
    ir::Block& orig = *branch->region(1);
    orig.ops.splice(orig.ops.end(), b.ops, first, after);
    for (auto& op : orig.ops) op->parent = &orig;
    ir::Builder(&orig).create(OpKind::yield, escaping, {}, {}, loop.loc);
    // then: the same ops, each loop with these bounds inlined for its one step at lo
    ir::Block& once_blk = *branch->region(0);
    ir::Builder ob(&once_blk);
    std::unordered_map<const Value*, Value*> map;
    auto mapped = [&](Value* v) {
      auto m = map.find(v);
      return m == map.end() ? v : m->second;
    };
    for (auto& op : orig.ops) {
      if (op->kind == OpKind::yield) break;
      if (!versionable(*op) || !same_bounds(*op, loop)) {
        ir::clone_op(*op, ob, map);
        continue;
      }
      ir::Block& body = *op->region(0);
      map[body.arg(0)] = lo;  // the induction variable; the carried values: their initial values
      for (unsigned k = 1; k < body.args.size(); ++k) map[body.arg(k)] = mapped(op->operand(k + 2));
      for (auto& inner : body.ops) {
        if (inner->kind == OpKind::yield) {  // the loop's results: what its one step yields
          for (unsigned k = 0; k < op->results.size(); ++k) map[op->result(k)] = mapped(inner->operand(k));
          break;
        }
        ir::clone_op(*inner, ob, map);
      }
    }
    std::vector<Value*> yielded;
    for (Value* v : escaping) yielded.push_back(mapped(v));
    ob.create(OpKind::yield, std::move(yielded), {}, {}, loop.loc);
    // later uses take the if's results
    OpIter at = b.ops.begin();
    while (at->get() != branch) ++at;
    auto redirect_after = [&](const std::vector<Value*>& to) {
      for (auto it = std::next(at); it != b.ops.end(); ++it) {
        auto redirect = [&](Op& o) {
          for (auto& v : o.operands)
            for (std::size_t k = 0; k < escaping.size(); ++k)
              if (v == escaping[k]) v = to[k];
        };
        redirect(**it);
        for (auto& r : (*it)->regions) ir::walk(*r, redirect);
      }
    };
    if (!ir::int_constant(hi)) {
      std::vector<Value*> results;
      for (std::size_t k = 0; k < escaping.size(); ++k) results.push_back(branch->result(static_cast<unsigned>(k)));
      redirect_after(results);
      return branch;
    }
    // a constant upper bound (versionable: the loops run once): the first branch in place
    redirect_after(once_blk.terminator()->operands);
    once_blk.ops.pop_back();  // its yield
    for (auto& op : once_blk.ops) op->parent = &b;
    b.ops.splice(at, once_blk.ops);
    b.ops.erase(at);
    return nullptr;
  }

  analysis::PointerOrigins origins_;
  std::size_t budget_;
  bool changed_ = false;
};

class VersionSingleTripLoops final : public Pass {
 public:
  std::string_view name() const override { return "version_single_trip_loops"; }
  bool run(ir::Function& f) override { return Versioner(f).block(f.body); }
};

}  // namespace

std::unique_ptr<Pass> make_version_single_trip_loops() { return std::make_unique<VersionSingleTripLoops>(); }

}  // namespace tile::transforms
