// src/schedule/take_turns.cpp — layer: schedule. The pass take_turns: a warp-specialized kernel
// whose consumers are G = num_warps / 4 warpgroups (2 to 4) runs their loops' warpgroup dots in
// turns.
//
// A loop qualifies where its body issues all its warpgroup dots back to back, every one left in
// flight (defer_dots' form of attention's loop: Q K^T, then the previous block's P V), with only
// pure ops between them and no wait, barrier or copy, and then waits for a product in the same
// iteration to compute with it: that run of issues is the turn. (A matmul's K loop, whose chained
// dot nothing waits for inside the loop, keeps the tensor cores busy without turns.) Then
//
//   turn_pass {group = G - 1}                the last warpgroup gives warpgroup 0 the first turn
//   for … {
//     …; turn_wait; dot{in flight}; …; dot{in flight}; turn_pass; …   (the rest: waits, softmax)
//   }
//   turn_wait {group = 0}                    warpgroup 0 takes the turn the last one passed at
//                                            the end, so every barrier is balanced after the loop
//
// Warpgroup g waits on its own barrier until warpgroup g - 1 has issued its dots of the same
// iteration (g = 0: warpgroup G - 1 those of the previous one), and passes the turn as soon as its
// own are issued, not waiting for them: the tensor cores run them in that order while each
// warpgroup computes with the products it waits for after its turn. The loop's bounds are the
// program's scalars, so every warpgroup runs the same iterations and every wait is met. A turn
// holds no other barrier: the copies it might wait for come from the producer, whose ring has two
// buffers or more (a warpgroup waiting for its turn has released every buffer the others wait
// to be refilled).
#include <optional>
#include <vector>

#include "layout/mma_engine.hpp"
#include "schedule/take_turns.hpp"

namespace tile::schedule {

namespace {

using ir::Op;
using ir::OpKind;
using layout::is_warpgroup_dot;
using layout::left_in_flight;
using OpIter = std::list<std::unique_ptr<Op>>::iterator;

/// Whether `o` may sit between two dots of a turn: nothing that waits or reaches memory.
bool pure(const Op& o) { return (ir::op_flags(o.kind) & ir::opflag::P) && o.regions.empty() && o.kind != OpKind::dot; }

/// The turn of `loop`'s body: [first, last] warpgroup dots, or nothing where it does not qualify.
std::optional<std::pair<OpIter, OpIter>> turn_of(Op& loop) {
  ir::Block& body = *loop.region(0);
  int dots = 0;
  ir::walk(body, [&](Op& o) { dots += is_warpgroup_dot(o); });
  OpIter first = body.ops.end(), last = body.ops.end();
  int issued = 0;
  bool waits = false;  // (for a product, after the turn)
  for (auto it = body.ops.begin(); it != body.ops.end(); ++it) {
    Op& o = **it;
    if (is_warpgroup_dot(o)) {
      if (!left_in_flight(o)) return std::nullopt;
      if (first == body.ops.end()) first = it;
      last = it;
      ++issued;
    } else if (first != body.ops.end() && issued < dots && !pure(o)) {
      return std::nullopt;  // (a wait, barrier or copy between two of the dots)
    } else if (issued == dots && dots > 0 && o.kind == OpKind::mma_wait) {
      waits = true;
    }
    if (o.kind == OpKind::buffer_index && o.operand(0)->type.shape.at(0) < 2) return std::nullopt;  // (a ring of one buffer)
  }
  if (dots == 0 || issued != dots || !waits) return std::nullopt;  // (a dot in a nested region; nothing to overlap)
  return std::pair{first, last};
}

Op* turn(ir::Block& b, OpIter before, OpKind kind, int groups, int group, const src_loc& loc) {
  ir::Builder ib(&b, before);
  return ib.create(kind, {}, {}, ir::Attrs{{groups, group}, 0.0, {}}, loc);
}

bool run_block(ir::Block& b, int groups) {
  bool changed = false;
  for (auto it = b.ops.begin(); it != b.ops.end(); ++it) {
    Op& o = **it;
    for (auto& r : o.regions) changed |= run_block(*r, groups);
    if (o.kind != OpKind::for_) continue;
    const auto t = turn_of(o);
    if (!t) continue;
    ir::Block& body = *o.region(0);
    turn(body, t->first, OpKind::turn_wait, groups, -1, (*t->first)->loc);
    turn(body, std::next(t->second), OpKind::turn_pass, groups, -1, (*t->second)->loc);
    turn(b, it, OpKind::turn_pass, groups, groups - 1, o.loc);
    turn(b, std::next(it), OpKind::turn_wait, groups, 0, o.loc);
    ++it;  // (past the turn_wait after the loop)
    changed = true;
  }
  return changed;
}

class TakeTurns final : public transforms::Pass {
 public:
  std::string_view name() const override { return "take_turns"; }
  bool run(ir::Function& f) override {
    const int groups = f.num_warps / 4;
    if (f.num_warps % 4 != 0 || groups < 2 || groups > 4) return false;
    for (auto& o : f.body.ops)
      if (o->kind == OpKind::warp_specialize) return run_block(*o->region(1), groups);
    return false;
  }
};

}  // namespace

std::unique_ptr<transforms::Pass> make_take_turns() { return std::make_unique<TakeTurns>(); }

}  // namespace tile::schedule
