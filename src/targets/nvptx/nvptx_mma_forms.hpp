// src/targets/nvptx/nvptx_mma_forms.hpp — layer: targets (nvptx). NVIDIA's tensor-core forms as
// the GPU passes see them (layout/mma_target.hpp); the instructions are nvptx_mma.hpp's.
//   warp        mma.sync m16n8kK (sm_80 and later): f16/bf16 into f32 (k16), f32 at tf32
//               precision into f32 (k8), i8/u8 into i32 (k32); 16 x 8 fragments a warp, the warps
//               along M and N by mma_warps (nvptx_mma_layouts.hpp); A and B read by ldmatrix from swizzled 16-bit
//               tiles, or (tf32, 8-bit) from A row-major and B transposed, rows padded by 16 bytes
//   warpgroup   wgmma.mma_async m64nNk16 (sm_90a): f16/bf16 into f32 with 4 or 8 warps, every
//               warp along M (M a multiple of 16 · warps), 16 <= N <= 256, K a multiple of 16; A
//               and B read by the engine itself from swizzled tiles (shared-memory descriptors),
//               or A from registers in the accumulator layout over [M, K]
// The accumulator is mma_v2's (nvptx_mma_layouts.hpp) for the dot's warps in both (a warpgroup's m64 rows are
// four warps' m16 fragments).
#pragma once

#include "layout/mma_target.hpp"

namespace tile::targets::nvptx {

class NvptxMmaForms final : public layout::MmaTarget {
 public:
  NvptxMmaForms(std::string name, bool warpgroup) : name_(std::move(name)), warpgroup_(warpgroup) {}
  std::string_view name() const override { return name_; }
  Choice choose(const ir::Op& dot, int num_warps, int lanes) const override;
  std::string check(const ir::Op& dot, int num_warps) const override;
  layout::LinearLayout accumulator(const ir::Op& dot, int num_warps) const override;
  ir::smem operand_arrangement(const ir::Op& dot, unsigned k) const override;
  /// A warpgroup dot's A (16-bit): wgmma's register form, whose fragment is the accumulator
  /// layout over [M, K] (each k16 step four registers of f16/bf16 pairs).
  std::optional<layout::LinearLayout> register_operand(const ir::Op& dot, unsigned k, int num_warps) const override;

  /// The operand elements one 32-bit register of mma.sync holds for `dot`'s types
  /// (mma_v2_operand's kwidth, nvptx_mma_layouts.hpp): 2 for f16/bf16 into f32, 1 for f32 at tf32 precision into
  /// f32, 4 for i8/u8 into i32; 0 when no form takes them.
  static int operand_elements(const ir::Op& dot);
  /// Whether `dot` fits mma.sync: a kwidth, both operands of one type, M >= 16, N >= 8,
  /// K >= 8 · kwidth, no batch axis.
  static bool warp_form(const ir::Op& dot);
  /// Whether `dot` fits wgmma m64nNk16 with `num_warps` warps (a warp form too).
  static bool warpgroup_form(const ir::Op& dot, int num_warps);

 private:
  std::string name_;
  bool warpgroup_;
};

/// The forms of an architecture with compute capability `sm` (`accel`: the sm_90a features):
/// null below sm_80 (no tensor-core form the backend uses). Static: a kernel's IR may point at it.
const NvptxMmaForms* mma_forms(int sm, bool accel);

}  // namespace tile::targets::nvptx
