// src/schedule/dot_waits.cpp — layer: schedule. dot_waits.hpp's helpers.
#include "schedule/dot_waits.hpp"

#include "layout/mma_engine.hpp"

namespace tile::schedule {

void leave_in_flight(ir::Op& dot, int groups) {
  dot.attrs.ints.resize(5, 0);
  dot.attrs.ints[4] = groups;
}

void wait_at_first_use(ir::Block& b, ir::Op& dot) {
  ir::Value* v = dot.result();
  bool after = false, later_dot = false;
  for (auto it = b.ops.begin(); it != b.ops.end(); ++it) {
    ir::Op& o = **it;
    if (&o == &dot) {
      after = true;
      continue;
    }
    if (!after) continue;
    bool uses = false;
    for (const ir::Value* x : o.operands) uses |= x == v;
    for (auto& r : o.regions)
      ir::walk(*r, [&](const ir::Op& y) {
        for (const ir::Value* x : y.operands) uses |= x == v;
      });
    if (!uses) {
      later_dot |= layout::is_warpgroup_dot(o);
      continue;
    }
    ir::Builder bld(&b, it);
    ir::Value* done = bld.create(ir::OpKind::mma_wait, {v}, {v->type}, ir::Attrs{{later_dot ? 1 : 0}, 0.0, {}}, dot.loc)->result();
    ir::replace_all_uses(b, v, done);
    done->def->operands[0] = v;
    return;
  }
}

}  // namespace tile::schedule
