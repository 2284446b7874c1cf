// src/schedule/take_turns.cpp — layer: schedule. The pass take_turns: a warp-specialized kernel
// whose consumers are G = num_warps / 4 warpgroups (2 to 4) runs their loops' warpgroup dots in
// turns.
//
// A loop qualifies where pipeline_loops split it between the producer and the consumers (its body
// waits on the producer's copy barriers; its bounds are scalars the producer computes too, the same
// for every warpgroup), and its body issues all its warpgroup dots back to back, every one left in
// flight (defer_dots' form of attention's loop: Q K^T, then the previous block's P V), with only
// pure ops between them and no wait, barrier or copy, and then waits for a product in the same
// iteration to compute with it: that run of issues is the turn. (A matmul's K loop, whose chained
// dot nothing waits for inside the loop, keeps the tensor cores busy without turns.) Then
//
//   consumers {
//     turn_pass {group = G - 1}              the last warpgroup gives warpgroup 0 the first turn
//     … for … {
//       …; turn_wait; dot{in flight}; …; dot{in flight}; turn_pass; …   (the rest: waits, softmax)
//     } …                                    (every such loop of the region: the turns go on)
//     turn_wait {group = 0}                  warpgroup 0 takes the turn the last one passed at
//   }                                        the end, so every barrier is balanced at the exit
//
// Warpgroup g waits on its own barrier until warpgroup g - 1 has issued its dots of the same
// iteration (g = 0: warpgroup G - 1 those of the previous one, or of the previous loop), and
// passes the turn as soon as its own are issued, not waiting for them: the tensor cores run them
// in that order while each warpgroup computes with the products it waits for after its turn. The
// first turn and the last are the region's, not each loop's: the turns go on from one loop to the
// next. (Balanced around each loop instead, with the consumers' barrier between the loops, the
// causal D = 64 attention forward at 128 / 128 / 8 computed wrong values on an H200, for a reason
// not found: bench/results/h200.md.) Every warpgroup runs the same iterations, so every wait is
// met. A turn holds no other barrier: the copies it might wait for come from the producer, whose
// ring has two buffers or more (a warpgroup waiting for its turn has released every buffer the
// others wait to be refilled).
#include <list>
#include <memory>
#include <optional>
#include <utility>

#include "layout/mma_engine.hpp"
#include "schedule/take_turns.hpp"
#include "schedule/warp_specialize.hpp"

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
  bool waits = false;   // (for a product, after the turn)
  bool filled = false;  // (the producer fills its ring: a loop pipeline_loops split, bounds the producer computes too)
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
    filled |= o.kind == OpKind::copy_barrier_wait;
  }
  if (dots == 0 || issued != dots || !waits || !filled) return std::nullopt;  // (a dot in a nested region; nothing to overlap)
  return std::pair{first, last};
}

void turn(ir::Block& b, OpIter before, OpKind kind, int groups, int group, const src_loc& loc) {
  ir::Builder ib(&b, before);
  ib.create(kind, {}, {}, ir::Attrs{{groups, group}, 0.0, {}}, loc);
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
    const ir::Op* ws = warp_specialize_op(f);
    if (!ws) return false;
    ir::Block& consumers = *const_cast<ir::Op*>(ws)->region(1);
    if (!run_block(consumers, groups)) return false;
    // the first turn, and the one the last turn of the last loop passes: once for the region
    turn(consumers, consumers.ops.begin(), OpKind::turn_pass, groups, groups - 1, ws->loc);
    turn(consumers, std::prev(consumers.ops.end()), OpKind::turn_wait, groups, 0, ws->loc);
    return true;
  }
};

}  // namespace

std::unique_ptr<transforms::Pass> make_take_turns() { return std::make_unique<TakeTurns>(); }

}  // namespace tile::schedule
