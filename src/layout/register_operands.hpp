// src/layout/register_operands.hpp — layer: layout. Which tensor-core dots read their A operand
// straight from registers instead of a shared-memory buffer: where the target's engine takes A
// from registers (MmaTarget::register_operand: NVIDIA's warpgroup MMA, and its warp MMA with
// every warp along M — a chain of dots, layout/dot_chains.hpp —, 16-bit A) and A is a tile
// the dot's loop computes — attention's P (`p.to(f16)` then `dot(p, v)`), a prologue's scaled or
// cast operand. A loaded tile stays in shared memory (a pipelined loop's ring copies it there
// without passing through registers), and so does one made outside the loop that runs the dot
// (Q in attention: stored once, not held in registers through the loop).
// assign_layouts asks for A in the engine's layout (the accumulator layout over [M, K]: a
// preceding dot's product, cast, is already there, so P needs no conversion);
// stage_mma_operands then stages only B.
#pragma once

#include <optional>

#include "ir/ir.hpp"
#include "support/linear_layout.hpp"

namespace tile::layout {

/// The register layout `dot` reads A in (none: A is staged in shared memory), for a CTA of
/// `num_warps` warps; `f` names the target (Function::mma_target).
std::optional<LinearLayout> register_a(const ir::Function& f, const ir::Op& dot, int num_warps);

}  // namespace tile::layout
