// src/layout/assign_layouts.hpp — layer: layout. Gives every tile value of a kernel a layout
// (support/linear_layout.hpp) for a CTA of num_warps warps: the decision the pass
// assign_layouts (gpu_passes.hpp) writes into the IR's types.
//
//   1. anchors: loads and atomics take the coalesced layout of their pointer tile (the fastest
//      axis is the most contiguous one; 16 bytes per thread along it where axis info shows
//      contiguity), so consecutive lanes touch consecutive 16-byte chunks;
//      dots select_mma put on tensor cores take the MMA accumulator layout, and a loop-carried
//      accumulator keeps it across the loop; a dot that reads A from registers
//      (register_operands.hpp) wants A in the engine's register layout;
//   1b. a tensor-core accumulator's layout flows forward: the float and mask values computed
//      from a dot's product elementwise, its reductions (the slice) and the loop values that
//      carry them take it (attention's online softmax, a matmul's epilogue);
//   2. consumers decide the rest, walking backwards: an op asks its operands for the layout that
//      keeps it in registers (wanted_operands: elementwise ops the result's, a broadcast the
//      broadcast_source, expand_dims the slice, reduce the operand's own with the slice as
//      result, stores their pointer's coalesced layout, loop-carried values one layout for init,
//      argument and yield); the first request a value gets (its last use in program order)
//      wins; values nobody asks for get default_blocked;
//   3. a conversion that feeds an elementwise chain ending in a narrowing cast (a tensor-core
//      accumulator's epilogue: leaky ReLU, then f32 -> f16) moves past the cast: the chain runs
//      in the value's layout and the narrower result is converted instead (sink_conversions).
// Where a use wants another layout than its value has, the pass puts a convert_layout before it;
// remove_conversions then reuses or recomputes what it can.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/axis_info.hpp"
#include "ir/ir.hpp"
#include "support/linear_layout.hpp"

namespace tile::layout {

struct LayoutPlan {
  int num_warps = 4;
  int lanes = 32;  // threads a warp (target_caps::lanes): every layout has log2(lanes) lane bases
  /// The layout of a scalar: every thread holds it.
  LinearLayout scalar() const;
  std::unordered_map<const ir::Value*, LinearLayout> of;
  /// The tensor-core dots that read A from registers (register_operands.hpp), and its layout.
  std::unordered_map<const ir::Op*, LinearLayout> register_a;
  /// The layout of `v` (the scalar layout for rank-0 values).
  const LinearLayout& at(const ir::Value* v) const;
};

class MmaTarget;

/// What the target offers the GPU passes: its tensor-core engines (null: none; the target owns
/// the description, layout/mma_target.hpp) and its warp size.
struct target_caps {
  const MmaTarget* mma = nullptr;
  int lanes = 32;  // threads a warp: the target's (64 for a CDNA wavefront)
};

/// The layouts of `f`'s tile values (its dots' engines as select_mma recorded them) for a CTA
/// of `num_warps` warps of `lanes` threads.
LayoutPlan assign_layouts(const ir::Function& f, const analysis::AxisAnalysis& ai, int num_warps, int lanes = 32);

/// The coalesced layout for accesses through pointer tile `ptr`.
LinearLayout coalesced(const ir::Value* ptr, const analysis::AxisAnalysis& ai, int num_warps, int lanes = 32);
/// The layout of a value nobody constrains.
LinearLayout default_layout(const ir::Type& t, int num_warps, int lanes = 32);

/// For each operand of `op`, the layout `op` wants it in (nullopt: a scalar, or any layout),
/// given the layouts already decided for op's results in `plan`.
std::vector<std::optional<LinearLayout>> wanted_operands(const ir::Op& op, const LayoutPlan& plan,
                                                         const analysis::AxisAnalysis& ai);

/// A GPU-level kernel's IR with each result's layout spelled out after its line (with `ai`, the
/// axis info of integer and pointer tiles too), then the number of convert_layout ops
/// ("// layout conversions: N"): TILE_DUMP_DIR's .layouts artifact.
std::string print_gpu_ir(const ir::Function& f, const analysis::AxisAnalysis* ai = nullptr);

}  // namespace tile::layout
