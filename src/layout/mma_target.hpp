// src/layout/mma_target.hpp — layer: layout. A target's tensor-core engines as the GPU passes see
// them, described by the target that owns them (NVIDIA's target: a warp's and a warpgroup's forms;
// an AMD target's MFMA forms would be another): which dots they run and with which warps
// (select_mma), the layout of a dot's accumulator (assign_layouts), how the operands sit in
// shared memory for the engine to read (stage_mma_operands) or which it takes from registers
// (register_operands.hpp), and the rules the verifier checks
// of a dot the passes put on an engine. The instructions themselves are the target's
// codegen/gpu MmaEngine's.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "ir/ir.hpp"
#include "layout/mma_engine.hpp"

namespace tile::layout {

class MmaTarget {
 public:
  struct Choice {
    mma_engine engine = mma_engine::none;
    std::array<int, 2> warps{0, 0};  // along M and N
  };
  virtual ~MmaTarget() = default;
  /// What dumps and messages call the description: the target and its architecture (e.g. NVIDIA's sm_90a).
  virtual std::string_view name() const = 0;
  /// The engine `dot` runs on in a CTA of `num_warps` warps of `lanes` threads, and its warps
  /// along M and N (engine none: no form of the target takes the dot).
  virtual Choice choose(const ir::Op& dot, int num_warps, int lanes) const = 0;
  /// "" when `dot`'s recorded engine and warps (mma_engine.hpp) are a form of this target for
  /// `num_warps` warps, else the rule it breaks.
  virtual std::string check(const ir::Op& dot, int num_warps) const = 0;
  /// The layout of the accumulator (and result) of `dot` on its recorded engine and warps.
  virtual LinearLayout accumulator(const ir::Op& dot, int num_warps) const = 0;
  /// How operand k (0: A, 1: B) of `dot` is arranged in shared memory for its recorded engine.
  virtual ir::smem operand_arrangement(const ir::Op& dot, unsigned k) const = 0;
  /// The register layout in which the recorded engine can take operand k of `dot` from the
  /// threads' registers instead of shared memory (none: it reads that operand only from shared
  /// memory). register_operands.hpp decides which dots use it.
  virtual std::optional<LinearLayout> register_operand(const ir::Op& /*dot*/, unsigned /*k*/, int /*num_warps*/) const {
    return std::nullopt;
  }
};

}  // namespace tile::layout
