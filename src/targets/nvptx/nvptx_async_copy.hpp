// src/targets/nvptx/nvptx_async_copy.hpp — layer: targets (nvptx). NVIDIA's asynchronous-copy
// engine (codegen::gpu::AsyncCopyEngine): per-thread copies as cp.async (.cg for 16 bytes, .ca
// below; zero-filled where the source is not valid), in commit groups waited by count
// (cp.async.commit_group / wait_group, sm_80+); tensor copies as cp.async.bulk.tensor.2d boxes
// of a CUtensorMap parameter completing on an mbarrier's transaction count (sm_90a: init, the
// init fence, arrive.expect_tx, try_wait.parity in a loop, inval), and fence.proxy.async.global
// before the TMA reads what ordinary stores wrote.
#pragma once

#include "codegen/gpu/gpu_target.hpp"
#include "targets/nvptx/nvptx_arch.hpp"

namespace tile::targets::nvptx {

class NvptxAsyncCopy final : public codegen::gpu::AsyncCopyEngine {
 public:
  /// `tensor_maps`: the kernel's hidden CUtensorMap parameters, after its runtime arguments.
  NvptxAsyncCopy(const arch& a, unsigned tensor_maps) : arch_(a), tensor_maps_(tensor_maps) {}
  void copy(codegen::Lowering& L, llvm::Value* dst, llvm::Value* src, int bytes, llvm::Value* src_valid,
            llvm::Value* issue) const override;
  void commit(codegen::Lowering& L) const override;
  void wait(codegen::Lowering& L, int pending) const override;
  void global_writes_visible(codegen::Lowering& L) const override;
  llvm::Value* tensor_map(codegen::Lowering& L, unsigned k) const override;
  void copy_tensor_2d(codegen::Lowering& L, llvm::Value* dst, llvm::Value* map, llvm::Value* x, llvm::Value* y,
                      llvm::Value* bar) const override;
  void barrier_init(codegen::Lowering& L, llvm::Value* bar, int count) const override;
  void barrier_init_fence(codegen::Lowering& L) const override;
  void barrier_inval(codegen::Lowering& L, llvm::Value* bar) const override;
  void barrier_expect(codegen::Lowering& L, llvm::Value* bar, std::uint32_t bytes) const override;
  void barrier_wait(codegen::Lowering& L, llvm::Value* bar, llvm::Value* parity) const override;
  void barrier_arrive(codegen::Lowering& L, llvm::Value* bar) const override;

 private:
  arch arch_;
  unsigned tensor_maps_;
};

}  // namespace tile::targets::nvptx
