// src/targets/nvptx/nvptx_mma.hpp — layer: targets (nvptx). NVIDIA's tensor-core engine
// (codegen::gpu::MmaEngine): a dot on a warp's tensor cores as mma.sync m16n8k{16,8,32} steps on
// fragments read with ldmatrix (16-bit operands, swizzled buffers) or word by word (tf32 and
// 8-bit operands, padded buffers), the next k step's fragments read before this step's mma
// (Triton's operand prefetch); a dot on a warpgroup's (sm_90a) as wgmma.mma_async m64nNk16
// steps on shared-memory descriptors of the swizzled buffers (128/64/32-byte swizzle modes; A
// also from registers, the accumulator layout over [M, K] packed in f16/bf16 pairs),
// each 64-row block's k steps chained in one asm statement, left in flight `pending` groups deep.
// The accumulator is mma_v2's layout (nvptx_mma_layouts.hpp) for both.
#pragma once

#include "codegen/gpu/gpu_lowering.hpp"
#include "targets/nvptx/nvptx_arch.hpp"

namespace tile::targets::nvptx {

class NvptxMma final : public codegen::gpu::MmaEngine {
 public:
  explicit NvptxMma(const arch& a) : arch_(a) {}
  codegen::gpu::DV dot(codegen::gpu::GpuLowering& G, const ir::Op& op, llvm::Value* a_at, llvm::Value* b_at, std::int64_t lda,
                       std::int64_t ldb, const codegen::gpu::DV& acc, int pending,
                       const codegen::gpu::DV* a_regs = nullptr) const override;
  void make_visible(codegen::gpu::GpuLowering& G, layout::mma_engine e) const override;
  std::vector<llvm::Value*> wait(codegen::gpu::GpuLowering& G, int pending, const std::vector<llvm::Value*>& acc) const override;

 private:
  /// The mma.sync steps of `op` (its result, in the accumulator layout, from `acc`) with A at
  /// a_base and B at b_base in shared memory (absolute byte offsets, i64): 16-bit operands as
  /// swizzled tiles (A [M][K], B [K][N], read with ldmatrix / ldmatrix.trans, free of bank
  /// conflicts), others row-major with rows of lda elements (A) and B transposed [N][K] with
  /// rows of ldb. A 16-bit A may be in registers instead (`a_regs`, a_base unused), in the
  /// accumulator layout over [M, K] of the dot's warps (every warp along M).
  codegen::gpu::DV mma_from_shared(codegen::gpu::GpuLowering& G, const ir::Op& op, std::array<int, 2> warps, llvm::Value* a_base,
                                   llvm::Value* b_base, std::int64_t lda, std::int64_t ldb, const codegen::gpu::DV& acc,
                                   const codegen::gpu::DV* a_regs) const;
  /// The 32-bit word of A's registers at (row, col) and (row, col + 1) of a warp's first
  /// fragment row (`a_regs` in its layout over [M, K]): a k16 fragment register of either engine.
  static llvm::Value* a_register_pair(codegen::gpu::GpuLowering& G, const ir::Op& op, const codegen::gpu::DV& a_regs,
                                      const layout::LinearLayout& la, std::int64_t row, std::int64_t col);
  /// The dot `op` (A [M][K] and B [K][N] swizzled tiles at absolute byte offsets a_base and
  /// b_base; or A in registers, `a_regs`, in the accumulator layout over [M, K]) as wgmma
  /// m64nNk16 steps of each warpgroup; its result in the accumulator layout.
  codegen::gpu::DV wgmma_from_shared(codegen::gpu::GpuLowering& G, const ir::Op& op, llvm::Value* a_base, llvm::Value* b_base,
                                     const codegen::gpu::DV& acc, int pending, const codegen::gpu::DV* a_regs) const;
  /// One 16 x 8 x K step of a warp (mma.sync, row-major A, column-major B), K by `in`: 16 for
  /// f16/bf16, 8 for f32 (as tf32), 32 for i8/u8; `a` four i32 registers, `b` two, `c` four
  /// accumulators (f32, or i32 for integers). Returns D's four.
  std::array<llvm::Value*, 4> mma_m16n8(codegen::Lowering& L, tile::dtype in, const std::array<llvm::Value*, 4>& a,
                                        const std::array<llvm::Value*, 2>& b, const std::array<llvm::Value*, 4>& c) const;
  /// `count` (1, 2 or 4) 8 x 8 matrices of 16-bit elements from shared memory (ldmatrix): lane i
  /// gives the address of row i % 8 of matrix i / 8; each lane receives one i32 per matrix.
  std::vector<llvm::Value*> ldmatrix(codegen::Lowering& L, llvm::Value* shared_row_ptr, int count, bool trans) const;
  void wgmma_fence(codegen::Lowering& L) const;
  /// One k16 step of wgmma: A's descriptor (one i64) or its four registers of 16-bit pairs, and
  /// B's descriptor.
  struct WgmmaStep {
    std::vector<llvm::Value*> a;
    llvm::Value* b = nullptr;
  };
  /// D += A B for each step of `steps` (one asm statement), m64 n `n` k16; with
  /// `commit_wait` >= 0 the statement then commits and waits until that many groups are left.
  /// `b_kmajor`: B's descriptors name a K-major tile (stored [N][K]), else an N-major one.
  std::vector<llvm::Value*> wgmma(codegen::Lowering& L, tile::dtype in, int n, const std::vector<WgmmaStep>& steps,
                                  const std::vector<llvm::Value*>& acc, int commit_wait, bool b_kmajor = false,
                                  llvm::Value* guard = nullptr) const;
  void wgmma_commit(codegen::Lowering& L) const;
  std::vector<llvm::Value*> wgmma_wait(codegen::Lowering& L, int pending, const std::vector<llvm::Value*>& acc) const;
  arch arch_;
};

}  // namespace tile::targets::nvptx
