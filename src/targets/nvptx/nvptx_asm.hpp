// src/targets/nvptx/nvptx_asm.hpp — layer: targets (nvptx). Inline PTX as LLVM inline asm: the
// statement forms the NVPTX target and its engines (nvptx_mma.cpp) emit.
#pragma once

#include <string>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>

#include "codegen/lowering.hpp"

namespace tile::targets::nvptx {

/// `text`, with no operands, a memory clobber (ordered with the memory accesses around it).
inline void void_asm(codegen::Lowering& L, const std::string& text) {
  auto& b = *L.b;
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), {}, false);
  b.CreateCall(fty, llvm::InlineAsm::get(fty, text, "~{memory}", true), {});
}
/// `text` with the f32 registers `acc` as outputs $0.. tied to inputs, plus `extra` inputs
/// ($n.. with `extra_cons`); the outputs.
inline std::vector<llvm::Value*> acc_asm(codegen::Lowering& L, const std::string& text, const std::vector<llvm::Value*>& acc,
                                         const std::vector<llvm::Value*>& extra, const std::string& extra_cons) {
  auto& b = *L.b;
  const std::size_t n = acc.size();
  std::string cons;
  std::vector<llvm::Type*> outs(n, b.getFloatTy()), ins;
  std::vector<llvm::Value*> args;
  for (std::size_t i = 0; i < n; ++i) cons += (i ? "," : "") + std::string("=f");
  if (!extra_cons.empty()) cons += "," + extra_cons;
  for (llvm::Value* e : extra) {
    ins.push_back(e->getType());
    args.push_back(e);
  }
  for (std::size_t i = 0; i < n; ++i) {
    cons += "," + std::to_string(i);
    ins.push_back(b.getFloatTy());
    args.push_back(acc[i]);
  }
  cons += ",~{memory}";
  auto* ret = llvm::StructType::get(L.ctx, outs);
  auto* fty = llvm::FunctionType::get(ret, ins, false);
  llvm::Value* r = b.CreateCall(fty, llvm::InlineAsm::get(fty, text, cons, true), args);
  std::vector<llvm::Value*> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(b.CreateExtractValue(r, static_cast<unsigned>(i)));
  return out;
}
/// A 32-bit shared-window address of `p` (a shared-memory pointer), for the "r" operands of the
/// bulk-copy and mbarrier instructions.
inline llvm::Value* shared32(codegen::Lowering& L, llvm::Value* p) {
  auto& b = *L.b;
  return b.CreateTrunc(b.CreatePtrToInt(p, b.getInt64Ty()), b.getInt32Ty());
}
inline void asm_call(codegen::Lowering& L, const std::string& text, const std::string& cons, std::vector<llvm::Value*> args) {
  auto& b = *L.b;
  std::vector<llvm::Type*> tys;
  for (auto* a : args) tys.push_back(a->getType());
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), tys, false);
  b.CreateCall(fty, llvm::InlineAsm::get(fty, text, cons + (cons.empty() ? "" : ",") + "~{memory}", true), args);
}

}  // namespace tile::targets::nvptx
