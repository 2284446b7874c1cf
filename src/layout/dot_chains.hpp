// src/layout/dot_chains.hpp — layer: layout. Dots chained through their operands: attention's
// QKᵀ, whose product (scaled, exponentiated, cast) is the A operand of P·V. A warp's tensor-core
// MMA puts every warp of such a chain along M (Triton's rule for its version 2 MMA): each warp
// then holds whole rows of the first product, so the row reductions between the dots stay in
// the warp and the product is the next dot's A fragment as it is (register_operands.hpp).
#pragma once

#include "ir/ir.hpp"

namespace tile::layout {

/// Whether another dot of `dot`'s block is among the ops its A and B are computed from, or `dot`
/// is among the ops another dot's A and B are computed from (in the same block: a loop body's
/// dots, not the dots of the loops around it; an accumulator passed on is no chain).
bool chained_dot(const ir::Op& dot);

}  // namespace tile::layout
