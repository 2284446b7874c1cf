// src/schedule/defer_dots.cpp — layer: schedule. The pass defer_dots: in a pipelined loop, the
// second dot of a chain issued one iteration later, beside the next iteration's first dot.
//
// Attention's loop computes S = Q·Kⱼ, then P = exp2(S - m) with its row sums and the scale α,
// then acc = acc·α + P·Vⱼ, which pipeline_loops leaves in flight into the next iteration. But the
// next iteration's S = Q·Kⱼ₊₁ waits for every dot issued before it, P·Vⱼ included, and the
// exponentials then run with the engine idle: each iteration is dot, wait, threads' work, dot.
// FlashAttention-3 rotates the loop instead (arXiv 2407.08608, §3.2): iteration j issues Q·Kⱼ and
// then P_{j-1}·V_{j-1}, waits for the first only, computes Pⱼ while the second runs, and waits for
// it before scaling the accumulator by αⱼ. This pass makes that rotation on the GPU IR:
//
//   before                                  after
//   for j (acc, …):                         for j (c, …, p_prev, slot_prev):
//     s = dot(x, ring_k[slot])                s = dot(x, ring_k[slot])
//     …                                       acc = dot(p_prev, ring_v[slot_prev], c)
//     c = f(acc, …)                           …
//     p = g(s, …)                             c = f(acc, …)
//     acc' = dot(p, ring_v[slot], c)          p = g(s, …)
//     yield acc', …                           yield c, …, p, slot
//                                           acc = dot(p_last, ring_v[slot_last], c_last)
//
// The carried value now holds what the dot adds to (c), the dot's register operand and its
// buffer's slot ride along, and one dot after the loop completes the last iteration. The first
// iteration's dot must give its accumulator back unchanged: p_prev starts as zeros and slot_prev
// as the ring's last buffer, which a copy with nothing valid (zero-filled) added to the
// prologue's first group clears, so the product is exactly 0·0 and no stale bits (a NaN in shared
// memory) reach it. The body's copies ahead move before D1 (copies_first says why), and
// overlap_dots (run next) then issues the two dots back to back and waits for each at its first
// use.
//
// A candidate: a warpgroup dot D2 of the loop's body left in flight (pipeline_loops' carried
// accumulator), whose product only the yield takes (once), whose A operand is a register tile
// the body makes and depends on an earlier warpgroup dot D1 of the body that is not in flight,
// whose B operand is a buffer of a ring the loop fills with asynchronous copies (the prologue's
// copy into its buffer 0 found before the loop), with at least two buffers more than the copies
// run ahead (the buffer read one iteration late is then refilled no sooner than now), and whose
// carried value no op before D1 reads. The body has no other warpgroup dot: overlap_dots keeps
// two dots in flight, and where a third is issued while they run, with inputs the threads define
// meanwhile, the assembler serializes every asynchronous dot of the kernel (the backward's loops,
// with four dots each, measured so).
#include "schedule/defer_dots.hpp"

#include <algorithm>
#include <unordered_set>

#include "layout/mma_engine.hpp"

namespace tile::schedule {

namespace {

using ir::Op;
using ir::OpKind;
using ir::Value;

bool warpgroup_dot(const Op& o) { return o.kind == OpKind::dot && layout::engine_of(o) == layout::mma_engine::warpgroup; }
bool in_flight(const Op& o) { return o.attrs.ints.size() > 4 && o.attrs.ints[4] != 0; }

/// Whether `o`, or an op in its regions, reads one of `vals`.
bool reads_any(const Op& o, const std::unordered_set<const Value*>& vals) {
  bool r = std::any_of(o.operands.begin(), o.operands.end(), [&](const Value* v) { return vals.count(v) > 0; });
  for (const auto& reg : o.regions)
    ir::walk(*reg, [&](const Op& x) {
      for (const Value* v : x.operands) r = r || vals.count(v) > 0;
    });
  return r;
}

/// The number of reads of `v` in `b` (nested regions included).
std::size_t uses(ir::Block& b, const Value* v) {
  std::size_t n = 0;
  ir::walk(b, [&](const Op& o) { n += static_cast<std::size_t>(std::count(o.operands.begin(), o.operands.end(), v)); });
  return n;
}

/// Whether `target` depends on `from`'s product through the ops of `b` after it.
bool depends(const ir::Block& b, const Op& from, const Value* target) {
  std::unordered_set<const Value*> seen{from.result()};
  bool after = false;
  for (const auto& o : b.ops) {
    if (o.get() == &from) {
      after = true;
      continue;
    }
    if (!after || !reads_any(*o, seen)) continue;
    for (const auto& r : o->results) seen.insert(r.get());
    if (seen.count(target)) return true;
  }
  return false;
}

std::list<std::unique_ptr<Op>>::iterator position(ir::Block& b, const Op* op) {
  return std::find_if(b.ops.begin(), b.ops.end(), [&](const auto& o) { return o.get() == op; });
}

/// What one deferral needs, found by `find`.
struct Chain {
  Op* d1 = nullptr;      // the first dot, which the deferred one then follows
  Op* d2 = nullptr;      // the dot deferred
  unsigned k = 0;        // its carried value's position
  Op* view = nullptr;    // buffer_index(ring, slot): D2's B
  std::int64_t buffers = 0;
  Op* fill = nullptr;    // the prologue's copy into the ring's buffer 0
  Op* commit = nullptr;  // the group it belongs to
};

class Defer {
 public:
  bool loop(Op& f) {
    bool changed = false;
    while (auto c = find(f)) {
      rewrite(f, *c);
      changed = true;
    }
    return changed;
  }

 private:
  static bool top_level(const Value* v, const ir::Block& b) { return v->def ? v->def->parent == &b : v->owner == &b; }

  static std::optional<Chain> find(Op& f) {
    ir::Block& b = *f.region(0);
    const Op* yield = b.terminator();
    std::int64_t ahead = -1;  // how far the body's copies run ahead
    for (const auto& o : b.ops)
      if (o->kind == OpKind::iter_ahead) ahead = std::max(ahead, o->attrs.ints.at(0));
    std::size_t dots = 0;
    ir::walk(b, [&](const Op& o) { dots += warpgroup_dot(o); });
    if (ahead < 0 || dots != 2) return std::nullopt;
    for (auto& o : b.ops) {
      Op& d2 = *o;
      if (!warpgroup_dot(d2) || !in_flight(d2) || uses(b, d2.result()) != 1) continue;
      Chain c;
      c.d2 = &d2;
      const auto at = std::find(yield->operands.begin(), yield->operands.end(), d2.result());
      if (at == yield->operands.end()) continue;
      c.k = static_cast<unsigned>(at - yield->operands.begin());
      const Value* a = d2.operand(0);
      if (a->type.is_buffer() || !a->def || a->def->parent != &b) continue;
      c.view = d2.operand(1)->def;
      if (!c.view || c.view->kind != OpKind::buffer_index || c.view->parent != &b) continue;
      const Value* ring = c.view->operand(0);
      if (ir::made_inside(*ring, f) || !top_level(c.view->operand(1), b) || ring->type.shape.empty()) continue;
      c.buffers = ring->type.shape[0];
      if (c.buffers < ahead + 2) continue;
      for (auto& x : b.ops) {
        if (x.get() == &d2) break;
        if (warpgroup_dot(*x) && !in_flight(*x) && depends(b, *x, a)) {
          c.d1 = x.get();
          break;
        }
      }
      if (!c.d1) continue;
      // the carried value: no read before D1 (the deferred dot that gives it comes after D1)
      const std::unordered_set<const Value*> carried{b.arg(c.k + 1)};
      bool early = false;
      for (auto& x : b.ops) {
        if (x.get() == c.d1) break;
        early = early || reads_any(*x, carried);
      }
      if (early || !find_fill(f, ring, c)) continue;
      return c;
    }
    return std::nullopt;
  }

  /// The prologue's async_copy into buffer 0 of `ring` and the async_commit of its group, in a
  /// block that holds the loop (at any depth).
  static bool find_fill(const Op& f, const Value* ring, Chain& c) {
    for (ir::Block* blk = f.parent; blk; blk = blk->parent ? blk->parent->parent : nullptr) {
      for (auto& o : blk->ops) {
        if (o->kind != OpKind::async_copy) continue;
        const Op* v = o->operand(0)->def;
        if (!v || v->kind != OpKind::buffer_index || v->operand(0) != ring || ir::int_constant(v->operand(1)) != 0) continue;
        c.fill = o.get();
        for (auto& x : blk->ops)
          if (x->kind == OpKind::async_commit && std::count(x->operands.begin(), x->operands.end(), o->result())) c.commit = x.get();
        return c.commit != nullptr;
      }
    }
    return false;
  }

  static void rewrite(Op& f, const Chain& c) {
    ir::Block& b = *f.region(0);
    Op& d2 = *c.d2;
    const src_loc loc = d2.loc;
    Value* a = d2.operand(0);
    Value* ring = c.view->operand(0);
    Value* slot = c.view->operand(1);
    const ir::Type view_t = c.view->result()->type;
    const ir::Attrs view_attrs = c.view->attrs;
    const ir::Attrs dot_attrs = d2.attrs;
    const ir::Type acc_t = d2.result()->type;
    // the ring's last buffer cleared with the prologue's first group: a copy with nothing valid
    {
      ir::Builder pb(c.commit->parent);
      pb.set_insertion_before(c.commit);
      Value* last = pb.constant_int(slot->type, c.buffers - 1, loc);
      Value* buf = pb.create(OpKind::buffer_index, {ring, last}, {c.fill->operand(0)->type}, {}, loc)->result();
      Value* none = pb.constant_int(ir::Type(dtype::i1), 0, loc);
      ir::Attrs ca;
      ca.ints = {c.fill->attrs.ints.at(0), 0};
      c.commit->operands.push_back(pb.create(OpKind::async_copy, {buf, c.fill->operand(1), none}, {ir::Type::async_token()}, ca, loc)->result());
    }
    // carried: D2's register operand (zeros at first) and its buffer's slot (the cleared one)
    ir::Builder fb(f.parent);
    fb.set_insertion_before(&f);
    f.operands.push_back(fb.constant_float(a->type, 0.0, loc));
    f.operands.push_back(fb.constant_int(slot->type, c.buffers - 1, loc));
    Value* a_prev = b.add_arg(a->type);
    Value* slot_prev = b.add_arg(slot->type);
    const auto n = static_cast<unsigned>(f.results.size());
    for (const ir::Type& t : {a->type, slot->type}) {
      auto v = std::make_unique<Value>();
      v->type = t;
      v->def = &f;
      v->index = static_cast<unsigned>(f.results.size());
      f.results.push_back(std::move(v));
    }
    // the previous iteration's dot, issued after D1; the body reads it where it read the carried value
    Value* acc = b.arg(c.k + 1);
    ir::Builder bb(&b, std::next(position(b, c.d1)));
    Value* view = bb.create(OpKind::buffer_index, {ring, slot_prev}, {view_t}, view_attrs, loc)->result();
    ir::Attrs da = dot_attrs;
    da.ints[4] = 0;
    Op* early = bb.create(OpKind::dot, {a_prev, view, acc}, {acc_t}, da, loc);
    ir::replace_all_uses(b, acc, early->result());
    early->operands[2] = acc;
    for (auto it = b.ops.begin(); it != b.ops.end();) {  // (waits for the dot that was in flight)
      Op& w = **it++;
      if (w.kind != OpKind::mma_wait || w.operand(0) != early->result()) continue;
      ir::replace_all_uses(b, w.result(), early->result());
      ir::erase(&w);
    }
    Op* yield = b.terminator();
    yield->operands[c.k] = d2.operand(2);
    yield->operands.push_back(a);
    yield->operands.push_back(slot);
    Op* old_view = c.view;
    ir::erase(&d2);
    if (uses(b, old_view->result()) == 0) ir::erase(old_view);
    // the last iteration's dot after the loop, in flight where only waits read the loop's result
    ir::Block& outer = *f.parent;
    Value* out = f.result(c.k);
    bool waited = true;
    ir::walk(outer, [&](const Op& o) {
      if (std::count(o.operands.begin(), o.operands.end(), out)) waited = waited && o.kind == OpKind::mma_wait;
    });
    ir::Builder ab(&outer, std::next(position(outer, &f)));
    Value* last = ab.create(OpKind::buffer_index, {ring, f.result(n + 1)}, {view_t}, view_attrs, loc)->result();
    ir::Attrs ea = dot_attrs;
    ea.ints[4] = waited ? 1 : 0;
    Op* tail = ab.create(OpKind::dot, {f.result(n), last, out}, {out->type}, ea, loc);
    ir::replace_all_uses(outer, out, tail->result());
    tail->operands[2] = out;
    copies_first(b, *c.d1);
  }

  /// The body's copies ahead (async_copy, async_commit) after D1, with the pure ops they read
  /// from after it, moved to just before D1: they then run before the two dots' window opens,
  /// rather than inside it where the assembler, hoisting their address arithmetic, takes
  /// registers the dots still read and waits for the dots there. (The buffers they refill were
  /// last read by dots waited for in the previous iteration, before the head's barrier.)
  static void copies_first(ir::Block& b, Op& d1) {
    auto at = position(b, &d1);
    std::unordered_set<const Op*> after;
    for (auto it = at; it != b.ops.end(); ++it) after.insert(it->get());
    std::unordered_set<const Op*> take;
    std::vector<const Op*> work;
    for (auto it = at; it != b.ops.end(); ++it)
      if ((*it)->kind == OpKind::async_copy || (*it)->kind == OpKind::async_commit) take.insert(it->get()), work.push_back(it->get());
    if (take.empty()) return;
    while (!work.empty()) {
      const Op* x = work.back();
      work.pop_back();
      for (const Value* v : x->operands) {
        const Op* d = v->def;
        if (!d || !after.count(d) || take.count(d)) continue;
        if (d == &d1 || !ir::is_pure(d->kind) || !d->regions.empty() || warpgroup_dot(*d)) return;  // (one that cannot move)
        take.insert(d);
        work.push_back(d);
      }
    }
    std::list<std::unique_ptr<Op>> moved;
    for (auto it = at; it != b.ops.end();) {
      auto next = std::next(it);
      if (take.count(it->get())) moved.splice(moved.end(), b.ops, it);
      it = next;
    }
    b.ops.splice(position(b, &d1), moved);
  }
};

class DeferDots final : public transforms::Pass {
 public:
  std::string_view name() const override { return "defer_dots"; }
  bool run(ir::Function& f) override {
    if (!f.gpu) return false;
    std::vector<Op*> loops;
    ir::walk(f.body, [&](Op& o) {
      if (o.kind == OpKind::for_) loops.push_back(&o);
    });
    bool changed = false;
    for (Op* l : loops) changed = Defer().loop(*l) || changed;
    return changed;
  }
};

}  // namespace

std::unique_ptr<transforms::Pass> make_defer_dots() { return std::make_unique<DeferDots>(); }

}  // namespace tile::schedule
