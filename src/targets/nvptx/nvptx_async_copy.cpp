// src/targets/nvptx/nvptx_async_copy.cpp — layer: targets (nvptx). See nvptx_async_copy.hpp.
#include "targets/nvptx/nvptx_async_copy.hpp"

#include <llvm/IR/Constants.h>

#include "targets/nvptx/nvptx_asm.hpp"

namespace tile::targets::nvptx {

void NvptxAsyncCopy::global_writes_visible(codegen::Lowering& L) const { void_asm(L, "fence.proxy.async.global;"); }

void NvptxAsyncCopy::copy(codegen::Lowering& L, llvm::Value* dst, llvm::Value* src, int bytes, llvm::Value* src_valid,
                           llvm::Value* issue) const {
  auto& b = *L.b;
  if (bytes != 4 && bytes != 8 && bytes != 16) throw tile::error("nvptx: cp.async of " + std::to_string(bytes) + " bytes");
  // .cg (L2 only) for whole 16-byte lines, .ca otherwise (the only sizes .cg has are 16)
  const std::string op = std::string(bytes == 16 ? "cp.async.cg" : "cp.async.ca") + ".shared.global [$1], [$2], " +
                         std::to_string(bytes) + ", $3;";
  llvm::Value* n = b.CreateSelect(src_valid, b.getInt32(static_cast<std::uint32_t>(bytes)), b.getInt32(0));
  auto* i64 = b.getInt64Ty();
  llvm::Value* d = b.CreatePtrToInt(dst, i64);
  // the global address itself (a generic pointer would cost a cvta.global per copy)
  llvm::Value* s = b.CreatePtrToInt(b.CreateAddrSpaceCast(src, llvm::PointerType::get(L.ctx, 1)), i64);
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), {b.getInt1Ty(), i64, i64, b.getInt32Ty()}, false);
  const bool always = !issue || (llvm::isa<llvm::ConstantInt>(issue) && llvm::cast<llvm::ConstantInt>(issue)->isOne());
  auto* ia = llvm::InlineAsm::get(fty, (always ? "" : "@$0 ") + op, "b,l,l,r,~{memory}", true);
  b.CreateCall(fty, ia, {always ? b.getTrue() : issue, d, s, n});
}

llvm::Value* NvptxAsyncCopy::tensor_map(codegen::Lowering& L, unsigned k) const {
  return L.fn->getArg(static_cast<unsigned>(L.fn->arg_size()) - tensor_maps_ + k);
}

void NvptxAsyncCopy::barrier_init(codegen::Lowering& L, llvm::Value* bar, int count) const {
  asm_call(L, "mbarrier.init.shared::cta.b64 [$0], " + std::to_string(count) + ";", "r", {shared32(L, bar)});
}
void NvptxAsyncCopy::barrier_init_fence(codegen::Lowering& L) const {
  void_asm(L, "fence.mbarrier_init.release.cluster;");
  void_asm(L, "fence.proxy.async.shared::cta;");
}
void NvptxAsyncCopy::barrier_inval(codegen::Lowering& L, llvm::Value* bar) const {
  asm_call(L, "mbarrier.inval.shared::cta.b64 [$0];", "r", {shared32(L, bar)});
}
void NvptxAsyncCopy::barrier_expect(codegen::Lowering& L, llvm::Value* bar, std::uint32_t bytes) const {
  asm_call(L, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], " + std::to_string(bytes) + ";", "r", {shared32(L, bar)});
}
void NvptxAsyncCopy::barrier_arrive(codegen::Lowering& L, llvm::Value* bar) const {
  asm_call(L, "mbarrier.arrive.shared::cta.b64 _, [$0];", "r", {shared32(L, bar)});
}
void NvptxAsyncCopy::barrier_wait(codegen::Lowering& L, llvm::Value* bar, llvm::Value* parity) const {
  // try_wait suspends the thread for a while inside the instruction; loop until the phase is done
  asm_call(L,
           "{\n\t.reg .pred p;\n\tTILE_WAIT_${:uid}:\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [$0], $1;\n\t"
           "@!p bra TILE_WAIT_${:uid};\n\t}",
           "r,r", {shared32(L, bar), parity});
}
void NvptxAsyncCopy::copy_tensor_2d(codegen::Lowering& L, llvm::Value* dst, llvm::Value* map, llvm::Value* x, llvm::Value* y,
                              llvm::Value* bar) const {
  if (!arch_.accel || arch_.sm < 90) throw tile::error("nvptx: the TMA needs sm_90a, not " + arch_.name());
  asm_call(L,
           "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3}], [$4];",
           "r,l,r,r,r", {shared32(L, dst), map, x, y, shared32(L, bar)});
}

void NvptxAsyncCopy::commit(codegen::Lowering& L) const { void_asm(L, "cp.async.commit_group;"); }

void NvptxAsyncCopy::wait(codegen::Lowering& L, int pending) const {
  void_asm(L, "cp.async.wait_group " + std::to_string(pending) + ";");
}

}  // namespace tile::targets::nvptx
