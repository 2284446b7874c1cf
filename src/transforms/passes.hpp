// src/transforms/passes.hpp — layer: transforms. The factories of the canonicalization passes,
// one pass a file. Each entry says what the pass does, what it expects and guarantees, and why
// it exists. None of them logs, verifies or times itself: the PassManager does that.
#pragma once

#include <memory>

#include "transforms/pass_manager.hpp"

namespace tile::transforms {

/// constant_fold (constant_fold.cpp): evaluates at compile time what the interpreter would
/// compute at run time, with exactly its semantics.
///  - Folds ops whose operands are all constants (a `constant` of tile type is a splat): integer
///    and i1 add/sub/mul/div/rem/and/or/xor/shl/shr/minimum/maximum/neg/not/cmp, casts and
///    bitcasts between integers, int<->f32/f64 and f32<->f64 casts, and f32/f64 add/sub/mul/div/
///    neg/cmp. Integers wrap at their width; division or remainder by zero gives 0; INT_MIN / -1
///    wraps; shifts by >= width give 0 (or -1 for an arithmetic shift of a negative value);
///    float->int casts truncate, NaN gives 0 and out-of-range values saturate.
///  - splat, broadcast, reshape, expand_dims and permute of a constant become a constant of the
///    result type.
///  - Integer identities: x+0, 0+x, x-0, x*1, 1*x, x|0, x^0, x<<0, x>>0 -> x; x*0, x&0 -> 0;
///    select with a constant condition picks a side (and select(c, x, x) -> x).
///  - Never folds f16/bf16 arithmetic or casts (rounding subtleties), float minimum/maximum/rem,
///    math functions, umulhi, shifts by a negative amount (their meaning is not pinned down) or
///    anything with side effects.
/// Before: verified IR. After: verified IR in which folded results are unused (uses point at new
/// constants inserted before the folded op, or at an existing value); the dead ops are left for
/// dce. Why: the frontend emits literals as splats and traces meta-parameters as constants;
/// folding them exposes constant offsets and masks to the analyses (axis info, coalescing).
std::unique_ptr<Pass> make_constant_fold();

/// cse (cse.cpp): common-subexpression elimination of pure ops without regions (same kind,
/// operands, attrs — floats compared bit for bit — and result types). Scoped: an op may reuse
/// an equivalent op that precedes it in its block or in an enclosing block; a value defined in a
/// region is never reused outside it. Combine regions of reduce/scan are treated as isolated
/// (they neither reuse outer values nor are reused), so they stay self-contained functions of
/// their arguments for lowering.
/// Before: verified IR. After: verified IR without the duplicates (they are erased). Why: tracing
/// repeats index arithmetic (program_id, arange, offsets) and constants; one copy of each is what
/// the axis analysis and code generation should see.
std::unique_ptr<Pass> make_cse();

/// dce (dce.cpp): removes pure ops none of whose results are used, to a fixed point; also removes
/// for/while/if/reduce/scan ops whose results are unused and whose regions contain no op that
/// touches memory, prints or asserts (no M-flag op). M ops (loads included) are never removed, nor
/// are terminators. A side-effect-free while is assumed to terminate.
/// Before: verified IR. After: verified IR with no dead pure op. Why: folding and cse leave dead
/// ops behind, and tracing creates values the kernel never uses; removing them keeps later
/// analyses and the generated code small.
std::unique_ptr<Pass> make_dce();

/// version_single_trip_loops (version_single_trip_loops.cpp): two or more `for` ops of one block
/// with the same bounds (equal constant lower bounds, equal positive constant steps, one
/// upper-bound value) where a load in a later loop's body equals a load in an earlier one's once
/// both induction variables are the lower bound, with no op between them that may write its
/// memory (memory_effects.hpp). The ops from the first such loop to the last become an `if`: when
/// the range is exactly one step (lo < hi && hi <= lo + step), the same ops with each of those
/// loops' bodies inlined once (induction variable = lo, carried values = their initial values);
/// else the ops as they were. Values of those ops used later become the `if`'s results. Where the
/// upper bound is a constant, only loops that run exactly once qualify, and the first branch's
/// ops replace them with no `if`. Spans of other bounds inside a span are versioned in both of
/// its branches; the versions add at most three times the kernel's ops in all.
/// Before: canonical IR (cse has run, so equal bounds are one value). After: verified IR; the
/// first branch's repeated loads are left for cse and load_cse to merge. Why: Triton-style kernels
/// walk a row in BLOCKs several times (layer norm: mean, variance, output) and reload it each
/// time; where the row fits one BLOCK this reads it once and keeps it in registers.
/// TILE_VERSION_LOOPS=0 leaves it out of the pipeline.
std::unique_ptr<Pass> make_version_single_trip_loops();

/// guard_bounded_selects (guard_bounded_selects.cpp): a select inside a loop, over a tile of at
/// least 4 elements a thread, whose condition is a compare (lt, le, gt, ge) of an index span
/// with a uniform bound — every element of one side `s + c` for one scalar s (or none) and
/// constants c in [lo, hi] (aranges, constants, their sums with a scalar, through splat,
/// broadcast, expand_dims, reshape, convert_layout), the other side one scalar — becomes an `if`
/// on the scalar "the whole span is on the kept side" (s + hi < bound for lt; computed in i64
/// from the signed 32-bit indices): its first branch yields the kept operand, its second the
/// select, with the ops that only fed the condition moved into it. Uses of the select take the
/// `if`'s result.
/// Before: verified IR (the GPU level: it runs last in the NVIDIA pipeline). After: verified IR.
/// Why: a mask of the keys past N in attention's inner loop is a select an element and a compare
/// a column in every iteration, though only the last block holds keys past N; the branch is one
/// uniform compare.
std::unique_ptr<Pass> make_guard_bounded_selects();

/// load_cse (load_cse.cpp): a load equal to an earlier load of its block (same pointers, mask,
/// other, modifiers and type; neither volatile nor `.cv`) takes that load's values and is erased,
/// unless an op between them may write its memory: a store whose pointer may alias it (different
/// kernel arguments of which one is noalias cannot), an atomic, a volatile or `.cv` load (each
/// may order other programs' writes), or an op whose regions hold one. Loads are not reused
/// across region boundaries.
/// Before: verified IR. After: verified IR with fewer loads. Why: a repeated read costs a memory
/// round trip (an L1 hit at best) and registers for its addresses; the values are already held.
std::unique_ptr<Pass> make_load_cse();

}  // namespace tile::transforms
