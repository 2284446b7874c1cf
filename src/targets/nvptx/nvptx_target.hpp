// src/targets/nvptx/nvptx_target.hpp — layer: targets (nvptx). NVIDIA GPUs through LLVM's NVPTX
// backend: the kernel's signature (one .param per runtime argument: pointers as 64-bit
// addresses, scalars at their width, i1 as a byte), special registers (ctaid, nctaid, tid),
// bar.sync, shfl.sync.bfly, dynamic shared memory, vprintf and __assertfail (resolved by the
// driver's JIT or ptxas), and the fast transcendental instructions (ex2/lg2/sin/cos.approx, with
// the argument reduction tile needs) — accuracy: docs/LANGUAGE.md "Backends and what agrees".
#pragma once

#include <memory>

#include "codegen/gpu/gpu_target.hpp"
#include "targets/nvptx/nvptx_arch.hpp"
#include "targets/nvptx/nvptx_async_copy.hpp"
#include "targets/nvptx/nvptx_mma.hpp"

namespace llvm {
class TargetMachine;
}

namespace tile::targets::nvptx {

/// The NVPTX target machine for `a` (PTX as its assembly output).
std::unique_ptr<llvm::TargetMachine> make_target_machine(const arch& a);

class NvptxTarget final : public codegen::gpu::GpuTargetHooks {
 public:
  /// `tensor_maps`: hidden CUtensorMap parameters (128 bytes, __grid_constant__) after the
  /// runtime arguments, for the kernel's TMA copies.
  NvptxTarget(const arch& a, int num_warps, unsigned tensor_maps = 0, lowering_options options = {})
      : arch_(a), num_warps_(num_warps), tensor_maps_(tensor_maps), options_(options), mma_(a), copies_(a, tensor_maps) {}
  /// mma.sync (sm_80+) and wgmma (sm_90a): nvptx_mma.hpp.
  const codegen::gpu::MmaEngine* mma() const override { return &mma_; }
  /// cp.async (sm_80+) and the TMA on mbarriers (sm_90a): nvptx_async_copy.hpp.
  const codegen::gpu::AsyncCopyEngine* async_copy() const override { return &copies_; }
  /// The largest exp batch the lowering emitted (0: none): what lowering_options::lean() would
  /// change.
  int widest_exp_batch() const { return widest_exp_batch_; }
  std::string name() const override { return "nvptx (" + arch_.name() + ")"; }
  void configure_module(llvm::Module& m) const override;
  llvm::Function* declare_kernel(llvm::Module& m, const ir::Function& f, const std::string& symbol) const override;
  llvm::Value* kernel_arg(codegen::Lowering& L, unsigned i, llvm::Type* ty) const override;
  llvm::Value* program_id(codegen::Lowering& L, int axis) const override;
  llvm::Value* num_programs(codegen::Lowering& L, int axis) const override;
  void emit_return(codegen::Lowering& L) const override;
  void emit_print(codegen::Lowering& L, const ir::Op& op, const std::vector<llvm::Value*>& data) const override;
  void emit_fail(codegen::Lowering& L, const ir::Op& op, failure kind, llvm::Value* value) const override;
  void finish_kernel(codegen::Lowering& L, std::uint64_t scratch_bytes) const override;
  llvm::Value* math_fn(codegen::Lowering& L, int kind, llvm::Value* x) const override;
  llvm::Value* float_rem(codegen::Lowering& L, llvm::Value* x, llvm::Value* y) const override;
  /// f32 only: div.full.f32 (Triton's `/`), sqrt.approx.f32 (Triton's tl.sqrt).
  llvm::Value* approx_fn(codegen::Lowering& L, int kind, llvm::Value* x, llvm::Value* y) const override;
  llvm::Value* bitcast_fn(codegen::Lowering& L, llvm::Value* v, llvm::Type* to) const override;
  /// exp and IEEE division (by a shared divisor) of f32 batches: nvptx_math.cpp.
  std::vector<llvm::Value*> batch_fn(codegen::Lowering& L, int kind, std::span<llvm::Value* const> x,
                                     std::span<llvm::Value* const> y) const override;

  llvm::Value* opaque(codegen::Lowering& L, llvm::Value* v) const override;
  llvm::Value* thread_id(codegen::Lowering& L) const override;
  /// bar.sync id[, threads]; the CTA-wide one as LLVM's barrier0.
  void barrier(codegen::Lowering& L, int id, int threads) const override;
  /// bar.sync / bar.arrive id, threads with the id in a register.
  void named_barrier(codegen::Lowering& L, llvm::Value* id, int threads, bool arrive) const override;
  /// setmaxnreg.{inc,dec}.sync.aligned.u32 (sm_90a).
  void set_registers(codegen::Lowering& L, int regs, bool increase) const override;
  llvm::Value* shuffle_xor_i32(codegen::Lowering& L, llvm::Value* v, int mask) const override;
  llvm::Value* shuffle_shift_i32(codegen::Lowering& L, llvm::Value* v, int delta, bool up) const override;
  llvm::Value* shared_base(codegen::Lowering& L) const override;
  void printf(codegen::Lowering& L, const std::string& fmt, const std::vector<llvm::Value*>& args) const override;
  llvm::Value* pack_narrow_pair(codegen::Lowering& L, llvm::Value* hi, llvm::Value* lo, bool bf16) const override;
  llvm::Value* load_words_if(codegen::Lowering& L, llvm::Value* pred, llvm::Value* addr, int words,
                             const std::vector<std::uint32_t>& fill) const override;
  bool store_words_if(codegen::Lowering& L, llvm::Value* pred, llvm::Value* addr, llvm::Value* vec) const override;

 private:
  std::vector<llvm::Value*> batch_exp(codegen::Lowering& L, std::span<llvm::Value* const> x) const;
  std::vector<llvm::Value*> batch_div(codegen::Lowering& L, std::span<llvm::Value* const> x,
                                      std::span<llvm::Value* const> y) const;
  arch arch_;
  int num_warps_;
  unsigned tensor_maps_ = 0;
  lowering_options options_;
  NvptxMma mma_;
  NvptxAsyncCopy copies_;
  mutable int widest_exp_batch_ = 0;  // recorded by batch_fn, which the lowering calls as const
};

}  // namespace tile::targets::nvptx
