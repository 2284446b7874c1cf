// src/targets/nvptx/nvptx_int_abs.cpp — layer: targets (nvptx). See nvptx_int_abs.hpp.
#include "targets/nvptx/nvptx_int_abs.hpp"

#include <string>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>

namespace tile::targets::nvptx {
namespace {

/// -x through a move LLVM cannot see into, at 16, 32 or 64 bits
llvm::Value* hidden_negation(llvm::IRBuilder<>& b, llvm::Value* x) {
  const unsigned bits = x->getType()->getIntegerBitWidth();
  const char* text = bits == 64 ? "neg.s64 $0, $1;" : bits == 16 ? "neg.s16 $0, $1;" : "neg.s32 $0, $1;";
  const char* cons = bits == 64 ? "=l,l" : bits == 16 ? "=h,h" : "=r,r";
  auto* fty = llvm::FunctionType::get(x->getType(), {x->getType()}, false);
  return b.CreateCall(fty, llvm::InlineAsm::get(fty, text, cons, false), {x});
}

/// |x| with abs(MIN) = MIN, for one integer lane
llvm::Value* scalar_abs(llvm::IRBuilder<>& b, llvm::Value* x) {
  const unsigned bits = x->getType()->getIntegerBitWidth();
  if (bits == 16 || bits == 32 || bits == 64) return b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, x, hidden_negation(b, x));
  // i8 (and odd widths): at 32 bits, then truncated (abs(-128) = 128 truncates back to -128)
  llvm::Value* wide = b.CreateSExt(x, b.getInt32Ty());
  return b.CreateTrunc(scalar_abs(b, wide), x->getType());
}

}  // namespace

void expand_integer_abs(llvm::Module& m) {
  std::vector<llvm::IntrinsicInst*> calls;
  for (llvm::Function& f : m)
    for (llvm::BasicBlock& bb : f)
      for (llvm::Instruction& i : bb)
        if (auto* c = llvm::dyn_cast<llvm::IntrinsicInst>(&i); c && c->getIntrinsicID() == llvm::Intrinsic::abs) calls.push_back(c);
  for (llvm::IntrinsicInst* c : calls) {
    llvm::IRBuilder<> b(c);
    llvm::Value* x = c->getArgOperand(0);
    llvm::Value* r = nullptr;
    if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(x->getType())) {
      r = llvm::PoisonValue::get(vt);
      for (unsigned l = 0; l < vt->getNumElements(); ++l)
        r = b.CreateInsertElement(r, scalar_abs(b, b.CreateExtractElement(x, l)), l);
    } else {
      r = scalar_abs(b, x);
    }
    c->replaceAllUsesWith(r);
    c->eraseFromParent();
  }
}

}  // namespace tile::targets::nvptx
