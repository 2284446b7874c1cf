// src/targets/nvptx/nvptx_mma_layouts.hpp — layer: targets (nvptx). The register layouts of
// NVIDIA's warp tensor-core instructions, as linear layouts (support/linear_layout.hpp): the
// accumulator and the A and B operands of mma.sync, which the warpgroup form's accumulator
// shares (nvptx_mma_forms.hpp gives them to the GPU passes).
#pragma once

#include <array>
#include <cstdint>

#include "support/linear_layout.hpp"

namespace tile::targets::nvptx {

/// Tensor cores, mma.sync m16n8kK (sm_80+; Triton's NvidiaMmaEncoding version 2 and its
/// DotOperandEncodings). A warp computes 16 x 8 tiles of the M x N accumulator; `warps` = {wm,
/// wn} warps tile the accumulator along M and N (wm * wn <= the CTA's warps: any further warp
/// bit holds a copy), the tile repeats over registers. Within a 16 x 8 fragment, lane l holds
/// rows l/4 and l/4 + 8, columns 2(l%4) and 2(l%4) + 1 (PTX ISA, "Matrix Fragments for
/// mma.m16n8k16"); the operands' layouts put each thread's A (16 x 16) and B (16 x 8) fragment
/// elements in its registers, two consecutive k in consecutive registers (one 32-bit operand
/// register of f16/bf16 pairs).
std::array<int, 2> mma_warps(std::int64_t M, std::int64_t N, int num_warps);
layout::LinearLayout mma_v2(std::int64_t M, std::int64_t N, std::array<int, 2> warps, int num_warps);
/// op_idx 0: A, an M x K tile; 1: B, a K x N tile. `warps` as the accumulator's. `kwidth`: the
/// operand elements one 32-bit register holds, consecutive along k — 2 for f16/bf16 (m16n8k16),
/// 1 for tf32 (m16n8k8), 4 for 8-bit integers (m16n8k32); a fragment spans 8 * kwidth of k.
layout::LinearLayout mma_v2_operand(int op_idx, std::int64_t rows, std::int64_t cols, std::array<int, 2> warps,
                                          int num_warps, int kwidth = 2);

}  // namespace tile::targets::nvptx
