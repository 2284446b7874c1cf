// src/schedule/warp_specialize.hpp — layer: schedule. Warp specialization of a kernel whose
// pipelined loops are all filled by tensor copies (a target's tensor-copy engine), as FlashAttention-3 and
// Triton's Hopper pipeliner do: a producer warpgroup, launched after the kernel's num_warps
// warps, whose first warp runs only the copies — for each pipelined loop, in program order, one iteration per block:
// wait until the consumers released the ring buffer, then arm its copy barrier and issue the
// block's tensor copies — while the kernel's own warps (the consumers) run everything else,
// waiting on a buffer's copy barrier before its dots and releasing it (an arrival on its
// release barrier) once the dots that read it are done. No CTA barrier orders the consumer
// warpgroups inside the loops any more: each runs at its own pace, the tensor cores taking one
// warpgroup's dots while the other computes its softmax.
//
// The IR (pipeline_loops.cpp writes it): the rings and both barrier arrays are made, set up and
// shown to every thread before one `warp_specialize` op that holds the rest of the kernel:
// region 0 the producer's loops (with the scalars their bounds and coordinates need, computed
// again), region 1 the consumers' code (the original kernel, its loops waiting and releasing).
// The producer warpgroup gives registers back (the target's set_registers) and the consumers take them: at 8
// consumer warps, 24 and 240 registers a thread from the 168 a thread of 384 is launched with.
//
// Whether it is used is the launch's warp_specialize (or, not given, the compiler's choice:
// jit::warp_specialized_variant). A kernel qualifies when every pipelined loop is a tensor-copy
// loop of the kernel's body (not nested),
// what the producer computes again is scalars of the kernel's body (pure ops, arguments,
// constants), no store or atomic may reach a tensor the copies read (the producer runs ahead
// of every consumer op: noalias arguments of other origins only), the consumers are whole
// warpgroups, and every ring fits in shared memory at once beside the kernel's other buffers
// (the producer may fill a later loop's ring while the consumers are still in an earlier loop;
// loops of one ring_signature share theirs).
#pragma once

#include <cstdint>
#include <string>

#include "ir/ir.hpp"
#include "schedule/software_pipeline.hpp"

namespace tile::schedule {

/// Whether `p` (plan_pipelines for `f`) may run warp-specialized (see above) with `smem_limit`
/// bytes of shared memory; the partitions' warps and registers where it may.
std::optional<WarpSpecialization> plan_warp_specialization(const ir::Function& f, const PipelinePlan& p, std::uint64_t smem_limit);

/// What decides whether two warp-specialized loops may share their rings (and barriers): their
/// buffers, and each load's tile and arrangement, in order. Loops run one after the other, so
/// where each loop's own rings would not fit (WarpSpecialization::share_rings), loops of one
/// signature take turns on one set (the causal attention's diagonal blocks, then the blocks
/// before them), the slots and phases going on from one to the next.
std::string ring_signature(const PipelinedLoop& pl);

/// `v`, a scalar of the kernel's body or an argument, as the producer computes it: pure ops of
/// the body cloned at `b` (memoized in `map`); null where `v` is something else (a tile, a
/// load's result, a value of a region).
ir::Value* producer_scalar(const ir::Function& f, const ir::Value* v, ir::Builder& b, std::unordered_map<const ir::Value*, ir::Value*>& map);

/// The warps a launch of `f` runs: its num_warps, plus the producer's where a warp_specialize op
/// holds its body.
int launch_warps(const ir::Function& f);
/// The registers a thread of `f` is launched with where its warp_specialize op redistributes
/// them (the kernel's register cap, what the partitions take from and give back to); 0 otherwise.
int launch_registers(const ir::Function& f);
/// The warp_specialize op of `f` (null: none).
const ir::Op* warp_specialize_op(const ir::Function& f);

}  // namespace tile::schedule
