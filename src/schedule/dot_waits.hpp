// src/schedule/dot_waits.hpp — layer: schedule. Leaving a warpgroup dot in flight and waiting for
// its product where it is first read: what overlap_dots and defer_dots do to the dots they move.
#pragma once

#include "ir/ir.hpp"

namespace tile::schedule {

/// Marks `dot` (a warpgroup dot) left in flight: ints[4] = `groups`, its lowering commits it and
/// waits until at most that many groups run: 1, only for what came before it; 2, not for the one
/// warpgroup dot issued (in flight) just before it either.
void leave_in_flight(ir::Op& dot, int groups = 1);

/// An mma_wait on `dot`'s product before the first op of its block that reads it (at any depth),
/// which then reads the wait's result: pending 1 where another warpgroup dot was issued after
/// `dot` by then (the lowering of that dot already waited for this one), else 0.
void wait_at_first_use(ir::Block& b, ir::Op& dot);

}  // namespace tile::schedule
