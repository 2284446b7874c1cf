// src/schedule/hoist_loads.cpp — layer: schedule. The pass hoist_loads: in a loop body that
// writes no memory, a small global load moves, with the pure ops its address, mask and `other`
// are computed from, to the top of the body, so that its latency runs under the body's
// tensor-core dots instead of after them.
//
// Attention's backward reads the row statistics M and Delta of each query block inside its dK/dV
// loop: `m = load(M + rows)` after `qkT = dot(k, qT)`. A warpgroup dot is one inline-asm
// statement that waits for the engine and that neither LLVM nor the assembler moves a load across, so
// in program order the load issues only after the dot has completed, and the exponential waits
// for it: a global round trip (hundreds of cycles) in every iteration, twice. Issued at the top
// of the body, the loads are in flight while the dot runs.
//
// Moved: loads (not volatile) of at most kMaxElements elements in the body of a `for` that holds
// no store or atomic at any depth (nothing in the loop can write what a load reads between its
// old place and its new one), with every op of the body their operands depend on index
// arithmetic (moved with them, in their order; a load whose address comes from a dot, another
// load or a conversion stays). They go before the body's first op, in
// program order; what they depend on from outside the body is already there.
#include <algorithm>
#include <unordered_set>
#include <vector>

#include "schedule/hoist_loads.hpp"
#include "schedule/software_pipeline.hpp"

namespace tile::schedule {

namespace {

using ir::Op;
using ir::OpKind;

constexpr std::int64_t kMaxElements = 256;

bool writes_memory(const ir::Block& b) {
  bool w = false;
  ir::walk(const_cast<ir::Block&>(b), [&](const Op& o) {
    w = w || o.kind == OpKind::store || o.kind == OpKind::atomic_rmw || o.kind == OpKind::atomic_cas;
  });
  return w;
}

std::int64_t elements(const ir::Type& t) {
  std::int64_t n = 1;
  for (auto e : t.shape) n *= e;
  return n;
}

/// Index arithmetic: what an address, mask or `other` is computed with, in registers, reading no
/// memory (the pipeliner's ahead ops, less conversions: one through shared memory keeps its place).
bool index_op(OpKind k) { return safe_ahead(k) && k != OpKind::convert_layout; }

/// The ops of `body` that `op` depends on through its operands, added to `deps`; false where one
/// is not index arithmetic (then nothing moves).
bool depends(const Op& op, const ir::Block& body, std::unordered_set<const Op*>& deps) {
  for (const ir::Value* v : op.operands) {
    const Op* d = v->def;
    if (!d || d->parent != &body || deps.count(d)) continue;
    if (!index_op(d->kind) || !d->regions.empty()) return false;
    deps.insert(d);
    if (!depends(*d, body, deps)) return false;
  }
  return true;
}

class HoistLoads final : public transforms::Pass {
 public:
  std::string_view name() const override { return "hoist_loads"; }
  bool run(ir::Function& f) override {
    bool changed = false;
    ir::walk(f.body, [&](Op& o) {
      if (o.kind == OpKind::for_ && !writes_memory(*o.region(0))) changed |= body(*o.region(0));
    });
    return changed;
  }

 private:
  static bool body(ir::Block& b) {
    std::unordered_set<const Op*> moving;
    for (auto& o : b.ops) {
      if (o->kind != OpKind::load || o->attrs.ints.size() < 5 || o->attrs.ints[4] != 0) continue;
      if (elements(o->result()->type) > kMaxElements) continue;
      std::unordered_set<const Op*> deps;
      if (!depends(*o, b, deps)) continue;
      moving.insert(o.get());
      moving.insert(deps.begin(), deps.end());
    }
    if (moving.empty()) return false;
    // already at the top (nothing but the moving ops before the last of them): nothing to do
    bool needed = false, seen_other = false;
    for (auto& o : b.ops) {
      if (!moving.count(o.get())) seen_other = true;
      else if (seen_other) needed = true;
    }
    if (!needed) return false;
    std::list<std::unique_ptr<Op>> front;
    for (auto it = b.ops.begin(); it != b.ops.end();) {
      auto next = std::next(it);
      if (moving.count(it->get())) front.splice(front.end(), b.ops, it);
      it = next;
    }
    b.ops.splice(b.ops.begin(), front);
    return true;
  }
};

}  // namespace

std::unique_ptr<transforms::Pass> make_hoist_loads() { return std::make_unique<HoistLoads>(); }

}  // namespace tile::schedule
