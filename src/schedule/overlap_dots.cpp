// src/schedule/overlap_dots.cpp — layer: schedule. The pass overlap_dots: two warpgroup dots of
// one block, the second independent of the first, issued back to back, each waited for where
// its product is first used, so that the engine runs the second while the threads compute with
// the first.
//
// The backward's dQ loop computes qk = dot(q, kT), p = exp2(qk - m), dp = dot(dO, vT), then
// p * (dp - Delta); its dK/dV loop qkT = dot(k, qT), pT = exp2(qkT - m), dv += dot(pT, dO),
// dpT = dot(v, dOᵀ). Lowered in program order, each fresh warpgroup dot waits for the engine
// right after its issue, so the exponentials run with the engine idle and the second dot starts
// only after them. Here the second dot (dp, dpT) moves to just after the first, with the index
// arithmetic and buffer views it reads (ops of the block between them; nothing else moves), and
// both are left in flight (ints[4] = 1): the first's lowering waits for what came before it, the
// second's for the first (at most one group is ever left running), and an mma_wait before each
// one's first use ties its registers (pending 1 where a dot was issued after it by then, else
// 0).
//
// A pair: D1 a warpgroup dot not left in flight; D2 the next warpgroup dot of the block after it,
// not left in flight, none of whose operands depends on D1 through the ops between them, with
// every op between that it needs movable (constants, index arithmetic, buffer_index), and no
// barrier, wait, copy, staging buffer, fence or op with regions between them. Each dot is in one
// pair at most.
#include <algorithm>
#include <unordered_set>
#include <vector>

#include "layout/mma_engine.hpp"
#include "schedule/dot_waits.hpp"
#include "schedule/overlap_dots.hpp"

namespace tile::schedule {

namespace {

using ir::Op;
using ir::OpKind;
using OpIter = std::list<std::unique_ptr<Op>>::iterator;
using layout::is_warpgroup_dot;
using layout::left_in_flight;


/// What may move ahead of other ops with the dot that reads it.
bool movable(OpKind k) {
  switch (k) {
    case OpKind::constant:
    case OpKind::arange:
    case OpKind::splat:
    case OpKind::broadcast:
    case OpKind::expand_dims:
    case OpKind::reshape:
    case OpKind::add:
    case OpKind::sub:
    case OpKind::mul:
    case OpKind::cmp:
    case OpKind::select:
    case OpKind::cast:
    case OpKind::buffer_index: return true;
    default: return false;
  }
}

/// What the dots may not be moved across.
bool fence(const Op& o) {
  switch (o.kind) {
    case OpKind::barrier:
    case OpKind::barrier_arrive:
    case OpKind::turn_wait:
    case OpKind::turn_pass:
    case OpKind::async_wait:
    case OpKind::async_copy:
    case OpKind::async_commit:
    case OpKind::tensor_copy:
    case OpKind::copy_barrier_init:
    case OpKind::copy_barrier_expect:
    case OpKind::copy_barrier_wait:
    case OpKind::copy_barrier_inval:
    case OpKind::local_alloc:
    case OpKind::shared_fence:
    case OpKind::copy_fence:
    case OpKind::mma_wait:
    case OpKind::convert_layout:
    case OpKind::store:
    case OpKind::atomic_rmw:
    case OpKind::atomic_cas: return true;
    default: return !o.regions.empty();
  }
}

class Overlap {
 public:
  bool block(ir::Block& b) {
    for (auto& op : b.ops)
      for (auto& r : op->regions) block(*r);
    std::unordered_set<const Op*> paired;
    for (auto it = b.ops.begin(); it != b.ops.end(); ++it) {
      Op& d1 = **it;
      if (!is_warpgroup_dot(d1) || left_in_flight(d1) || paired.count(&d1)) continue;
      if (pair(b, it, paired)) changed_ = true;
    }
    return changed_;
  }

 private:
  bool changed_ = false;

  /// D1 at `first`: finds its D2, moves it and what it needs behind D1, marks both and adds the
  /// waits. False where there is no such D2.
  bool pair(ir::Block& b, OpIter first, std::unordered_set<const Op*>& paired) {
    Op& d1 = **first;
    std::unordered_set<const ir::Value*> from_d1{d1.result()};  // values that depend on D1
    for (auto it = std::next(first); it != b.ops.end(); ++it) {
      Op& o = **it;
      if (fence(o)) return false;
      const bool reads_d1 = std::any_of(o.operands.begin(), o.operands.end(), [&](const ir::Value* v) { return from_d1.count(v) > 0; });
      if (is_warpgroup_dot(o) && !left_in_flight(o) && !reads_d1 && !paired.count(&o)) {
        // its operands' ops between D1 and it: movable, none reading D1
        std::unordered_set<const Op*> need;
        if (!needs(o, first, it, need, from_d1)) return false;
        move(b, first, it, need);
        leave_in_flight(d1), leave_in_flight(o);
        paired.insert(&d1), paired.insert(&o);
        wait_at_first_use(b, d1);
        wait_at_first_use(b, o);
        return true;
      }
      if (reads_d1)
        for (auto& r : o.results) from_d1.insert(r.get());
    }
    return false;
  }

  /// The ops strictly between `first` and `at` that `o` reads (transitively), into `need`;
  /// false where one is not movable or depends on D1.
  static bool needs(const Op& o, OpIter first, OpIter at, std::unordered_set<const Op*>& need,
                    const std::unordered_set<const ir::Value*>& from_d1) {
    std::unordered_set<const Op*> span;
    for (auto it = std::next(first); it != at; ++it) span.insert(it->get());
    std::vector<const Op*> work{&o};
    while (!work.empty()) {
      const Op* x = work.back();
      work.pop_back();
      for (const ir::Value* v : x->operands) {
        if (from_d1.count(v)) return false;
        const Op* d = v->def;
        if (!d || !span.count(d) || need.count(d)) continue;
        if (!movable(d->kind)) return false;
        need.insert(d);
        work.push_back(d);
      }
    }
    return true;
  }

  /// `need` (in their order) and then the op at `at`, moved to just after `first`.
  static void move(ir::Block& b, OpIter first, OpIter at, const std::unordered_set<const Op*>& need) {
    std::list<std::unique_ptr<Op>> moved;
    for (auto it = std::next(first); it != at;) {
      auto next = std::next(it);
      if (need.count(it->get())) moved.splice(moved.end(), b.ops, it);
      it = next;
    }
    moved.splice(moved.end(), b.ops, at);
    b.ops.splice(std::next(first), moved);
  }
};

class OverlapDots final : public transforms::Pass {
 public:
  std::string_view name() const override { return "overlap_dots"; }
  bool run(ir::Function& f) override { return Overlap().block(f.body); }
};

}  // namespace

std::unique_ptr<transforms::Pass> make_overlap_dots() { return std::make_unique<OverlapDots>(); }

}  // namespace tile::schedule
