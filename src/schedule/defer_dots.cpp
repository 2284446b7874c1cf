// src/schedule/defer_dots.cpp — layer: schedule. The pass defer_dots: a warpgroup dot left in
// flight at the end of a pipelined loop's iteration, whose product the next iteration waits for
// before reading it, is issued in the next iteration instead, right after that iteration's first
// warpgroup dot.
//
// Attention's loop computes qk = dot(q, k), the softmax of qk, acc = dot(p, v, acc * alpha).
// pipeline_loops leaves the last dot in flight and waits for it where the next iteration first
// reads acc (acc * alpha). But the engine completes its groups in order: the next iteration's
// wait for qk waits for that dot too, and the softmax then runs with the engine idle. Issued
// after the next qk instead, the dot runs while the threads compute the softmax (the overlap
// within a warpgroup of FlashAttention-3):
//
//   before  for iv in lo..hi (…, acc):  X(iv) ⊃ {q = dot(…); w = mma_wait{0}(acc); c = f(w)};
//                                      d = dot(a, buffer_index(ring, s), c){in flight}; yield (…, d)
//   after   for iv in lo..hi (…, c' = acc0, a' = 0, s' = s(lo)):  X(iv) where q is left in flight
//             and followed by d' = dot(a', buffer_index(ring, s'), c', iv != lo){in flight = 2};
//             mma_wait{1}(q) before q's first use; w = mma_wait{0}(d'); yield (…, c, a, s)
//           d = dot(a, buffer_index(ring, s), c){in flight}; the loop's mma_wait{0} on it
//
// d' takes a guard (a warpgroup dot's fourth operand): the first iteration, with no previous
// product to add, issues nothing and leaves the initial accumulator as it is; its carried operands
// start as zeros and the slot that iteration reads. The loop's code grows by one dot, not by a
// peeled first iteration (which doubled the driver's compile of the attention forward), and no
// iteration computes a dot it does not need. The dot's operands made in the body are carried to
// the next iteration (a ring's buffer by its slot); the ring's buffer is read a shorter time than
// before (from d' to w in one iteration, instead of from the end of the previous one), so whatever
// refills or releases it after w still may.
//
// A candidate: a for op whose body (top level) has a warpgroup dot d left in flight, its product
// only yielded (one slot k), the carried value k read by one mma_wait w of the body's top level
// only; a warpgroup dot q not in flight before w; d's A a register tile the body makes; d's B made
// before the loop, a register tile, or a buffer_index of a ring made before the loop at a slot the
// loop carries (or made before it); after the loop, the loop's result k read by one mma_wait of
// the loop's block only.
#include <algorithm>
#include <array>
#include <optional>
#include <vector>

#include "layout/mma_engine.hpp"
#include "schedule/defer_dots.hpp"
#include "schedule/dot_waits.hpp"

namespace tile::schedule {

namespace {

using ir::Op;
using ir::OpKind;
using OpIter = std::list<std::unique_ptr<Op>>::iterator;
using layout::is_warpgroup_dot;
using layout::left_in_flight;

/// Every op of `b` (at any depth) reading `v`.
std::vector<Op*> users(ir::Block& b, const ir::Value* v) {
  std::vector<Op*> out;
  ir::walk(b, [&](Op& o) {
    if (std::find(o.operands.begin(), o.operands.end(), v) != o.operands.end()) out.push_back(&o);
  });
  return out;
}

OpIter find(ir::Block& b, const Op* op) {
  return std::find_if(b.ops.begin(), b.ops.end(), [&](const auto& o) { return o.get() == op; });
}

/// What the rotation of one loop needs, found before anything changes.
struct Candidate {
  Op* loop = nullptr;
  Op* d = nullptr;      // the dot left in flight
  Op* q = nullptr;      // the body's first warpgroup dot
  Op* w = nullptr;      // the body's wait on the carried product
  Op* after = nullptr;  // the wait on the loop's result
  unsigned slot = 0;    // the carried value d makes
  // per operand of d (A, B): the value carried to the next iteration (null: made before the
  // loop, read as it is); for a ring's buffer, its slot, and the buffer_index that reads it
  std::array<ir::Value*, 2> carried{nullptr, nullptr};
  std::array<const Op*, 2> buffer{nullptr, nullptr};
};

std::optional<Candidate> candidate(Op& loop) {
  ir::Block& body = *loop.region(0);
  Op* yield = body.terminator();
  if (!yield || yield->kind != OpKind::yield) return std::nullopt;
  for (auto& o : body.ops) {
    Op& d = *o;
    if (!is_warpgroup_dot(d) || !left_in_flight(d)) continue;
    Candidate c;
    c.loop = &loop;
    c.d = &d;
    auto du = users(body, d.result());
    if (du.size() != 1 || du[0] != yield) continue;
    int slot = -1;
    for (std::size_t k = 0; k < yield->operands.size(); ++k)
      if (yield->operand(static_cast<unsigned>(k)) == d.result()) slot = slot < 0 ? static_cast<int>(k) : -2;
    if (slot < 0) continue;
    c.slot = static_cast<unsigned>(slot);
    if (d.operand(2)->type != d.result()->type) continue;
    auto au = users(body, body.arg(c.slot + 1));
    if (au.size() != 1 || au[0]->kind != OpKind::mma_wait || au[0]->parent != &body) continue;
    c.w = au[0];
    // q: the first warpgroup dot of the body, before w
    for (auto& x : body.ops) {
      if (x.get() == c.w) break;
      if (is_warpgroup_dot(*x)) {
        c.q = x.get();
        break;
      }
    }
    if (!c.q || left_in_flight(*c.q)) continue;
    // d after w (its accumulator reads it)
    bool d_after_w = false;
    for (auto it = find(body, c.w); it != body.ops.end(); ++it) d_after_w |= it->get() == &d;
    if (!d_after_w) continue;
    // A: registers the body makes (zero in the first iteration)
    bool ok = !d.operand(0)->type.is_buffer() && ir::made_inside(*d.operand(0), loop);
    for (unsigned k = 0; k < 2 && ok; ++k) {
      ir::Value* v = d.operand(k);
      if (!ir::made_inside(*v, loop)) continue;
      if (!v->type.is_buffer()) {
        c.carried[k] = v;
        continue;
      }
      const Op* bi = v->def;
      ok = bi && bi->kind == OpKind::buffer_index && !ir::made_inside(*bi->operand(0), loop);
      if (!ok) break;
      ir::Value* at = bi->operand(1);  // (the slot: carried by the loop, or made before it)
      ok = !ir::made_inside(*at, loop) || (at->owner == &body && at->index > 0);
      if (ok) c.carried[k] = at, c.buffer[k] = bi;
    }
    if (!ok) continue;
    // after the loop: one mma_wait on its result `slot`, in the loop's block
    auto ru = users(*loop.parent, loop.result(c.slot));
    if (ru.size() != 1 || ru[0]->kind != OpKind::mma_wait || ru[0]->parent != loop.parent) continue;
    c.after = ru[0];
    return c;
  }
  return std::nullopt;
}

/// d's operands for the carried values `a`, `b` (null: d's own operand, made before the loop) and
/// the accumulator `acc`, with its buffer_index made again at `bld`; the dot d's attributes.
Op* reissue(const Candidate& c, ir::Builder& bld, const std::array<ir::Value*, 2>& now, ir::Value* acc) {
  std::vector<ir::Value*> ops(3);
  for (unsigned k = 0; k < 2; ++k) {
    ir::Value* v = c.d->operand(k);
    if (c.buffer[k])
      v = bld.create(OpKind::buffer_index, {c.buffer[k]->operand(0), now[k]}, {v->type}, c.buffer[k]->attrs, c.buffer[k]->loc)->result();
    else if (c.carried[k])
      v = now[k];
    ops[k] = v;
  }
  ops[2] = acc;
  return bld.create(OpKind::dot, ops, {c.d->result()->type}, c.d->attrs, c.d->loc);
}

void rotate(const Candidate& c) {
  Op& loop = *c.loop;
  ir::Block& body = *loop.region(0);
  ir::Block& outer = *loop.parent;
  Op* yield = body.terminator();
  ir::Builder pb(&outer, find(outer, &loop));

  // the carried operands: an argument, an initial value (registers: zero; a slot: its value in
  // the first iteration), a yielded value and a result each
  std::array<ir::Value*, 2> arg{nullptr, nullptr}, result{nullptr, nullptr};
  for (unsigned k = 0; k < 2; ++k) {
    ir::Value* v = c.carried[k];
    if (!v) continue;
    ir::Value* init = nullptr;
    if (c.buffer[k])
      init = v->owner == &body ? loop.operand(3 + v->index - 1) : v;
    else if (is_float(v->type.elem))
      init = pb.constant_float(v->type, 0.0, c.d->loc);
    else
      init = pb.constant_int(v->type, 0, c.d->loc);
    loop.operands.push_back(init);
    arg[k] = body.add_arg(v->type);
    yield->operands.push_back(v);
    auto r = std::make_unique<ir::Value>();
    r->type = v->type;
    r->def = &loop;
    r->index = static_cast<unsigned>(loop.results.size());
    result[k] = r.get();
    loop.results.push_back(std::move(r));
  }
  yield->operands[c.slot] = c.d->operand(2);

  // d', after q; q left in flight, waited for before its first use
  ir::Builder qb(&body, std::next(find(body, c.q)));
  // (issued from the second iteration on: the first has no previous product to add)
  ir::Value* later = qb.create(OpKind::cmp, {body.arg(0), loop.operand(0)}, {ir::Type{dtype::i1}},
                               ir::Attrs{{static_cast<std::int64_t>(ir::CmpPred::ne)}, 0.0, {}}, c.d->loc)->result();
  Op* dn = reissue(c, qb, arg, body.arg(c.slot + 1));
  dn->operands.push_back(later);
  leave_in_flight(*dn, 2);  // (its issue does not wait for q: whatever comes between them and q's wait runs with both in flight)
  c.w->operands[0] = dn->result();
  leave_in_flight(*c.q);
  wait_at_first_use(body, *c.q);  // (pending 1: d' was issued after it)

  // the last iteration's d, after the loop, waited for by the loop's wait
  ir::Builder ab(&outer, std::next(find(outer, &loop)));
  Op* last = reissue(c, ab, result, loop.result(c.slot));
  c.after->operands[0] = last->result();
  ir::erase(c.d);
}

bool run_block(ir::Block& b) {
  bool changed = false;
  for (auto& op : b.ops)
    for (auto& r : op->regions) changed |= run_block(*r);
  std::vector<Op*> loops;
  for (auto& op : b.ops)
    if (op->kind == OpKind::for_) loops.push_back(op.get());
  for (Op* l : loops)
    if (auto c = candidate(*l)) {
      rotate(*c);
      changed = true;
    }
  return changed;
}

class DeferDots final : public transforms::Pass {
 public:
  std::string_view name() const override { return "defer_dots"; }
  bool run(ir::Function& f) override { return run_block(f.body); }
};

}  // namespace

std::unique_ptr<transforms::Pass> make_defer_dots() { return std::make_unique<DeferDots>(); }

}  // namespace tile::schedule
