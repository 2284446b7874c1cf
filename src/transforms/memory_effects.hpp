// src/transforms/memory_effects.hpp — layer: transforms. What the passes that merge loads
// (load_cse.cpp, version_single_trip_loops.cpp) ask about an op's effect on memory.
#pragma once

#include "analysis/pointer_origin.hpp"

namespace tile::transforms {

/// A load whose values a later equal load may take: not volatile and not `.cv` (fetch again).
inline bool reusable_load(const ir::Op& op) {
  if (op.kind != ir::OpKind::load) return false;
  const auto& a = op.attrs.ints;  // {has_mask, has_other, cache, evict, volatile}
  const auto at = [&](std::size_t i) { return i < a.size() ? a[i] : 0; };
  return at(4) == 0 && at(2) != static_cast<std::int64_t>(tile::detail::cache_mod::cv);
}

/// Whether `op`, or an op inside its regions, may write what a load through `ptr` reads: a store
/// through a pointer that may alias `ptr`; any atomic, volatile or `.cv` load (each may order
/// other programs' writes before what follows: a flag polled, then the data it guards); any other
/// op that touches memory except plain loads, print and assert.
inline bool may_write(const ir::Op& op, const ir::Value* ptr, const analysis::PointerOrigins& origins) {
  using ir::OpKind;
  bool writes = false;
  auto one = [&](const ir::Op& w) {
    if (w.kind == OpKind::store)
      writes |= origins.may_alias(w.operand(0), ptr);
    else if (w.kind == OpKind::load)
      writes |= !reusable_load(w);
    else if (w.kind != OpKind::desc_load && w.kind != OpKind::print && w.kind != OpKind::assert_ &&
             (ir::op_flags(w.kind) & ir::opflag::M))
      writes = true;
  };
  one(op);
  for (const auto& r : op.regions) ir::walk(*r, [&](const ir::Op& o) { one(o); });
  return writes;
}

}  // namespace tile::transforms
