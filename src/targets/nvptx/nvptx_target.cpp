// src/targets/nvptx/nvptx_target.cpp — layer: targets (nvptx). See nvptx_target.hpp.
#include "targets/nvptx/nvptx_target.hpp"

#include <cstdio>
#include <mutex>

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include "codegen/lowering.hpp"
#include "targets/nvptx/nvptx_asm.hpp"
#include "ir/ir.hpp"

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace tile::targets::nvptx {

using ir::OpKind;

namespace {
constexpr const char* kTriple = "nvptx64-nvidia-cuda";
constexpr const char* kSmem = "tile_smem";

llvm::Type* param_type(llvm::LLVMContext& ctx, const ir::Type& t) {
  if (t.ptr) return llvm::PointerType::get(ctx, 0);
  switch (t.elem) {
    case dtype::i1: return llvm::Type::getInt8Ty(ctx);
    case dtype::f16: return llvm::Type::getHalfTy(ctx);
    case dtype::bf16: return llvm::Type::getInt16Ty(ctx);
    case dtype::f32: return llvm::Type::getFloatTy(ctx);
    case dtype::f64: return llvm::Type::getDoubleTy(ctx);
    default: return llvm::Type::getIntNTy(ctx, static_cast<unsigned>(size_of(t.elem) * 8));
  }
}

/// A constant string in global memory, as a generic pointer.
llvm::Value* cstring(codegen::Lowering& L, const std::string& s, const char* name) {
  auto* init = llvm::ConstantDataArray::getString(L.ctx, s, true);
  auto* g = new llvm::GlobalVariable(*L.mod, init->getType(), true, llvm::GlobalValue::PrivateLinkage, init, name, nullptr,
                                     llvm::GlobalValue::NotThreadLocal, 1);
  g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  return llvm::ConstantExpr::getAddrSpaceCast(g, llvm::PointerType::get(L.ctx, 0));
}

llvm::Value* sreg(codegen::Lowering& L, llvm::Intrinsic::ID id) {
  return L.b->CreateIntrinsic(id, {}, {});
}
}  // namespace

std::unique_ptr<llvm::TargetMachine> make_target_machine(const arch& a) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
  std::string err;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(kTriple, err);
  if (!t) throw tile::error("the NVPTX target is not in this LLVM: " + err);
  llvm::TargetOptions opt;
  auto* tm = t->createTargetMachine(kTriple, a.name(), "+ptx" + std::to_string(a.ptx_version()), opt, std::nullopt, std::nullopt,
                                    llvm::CodeGenOptLevel::Aggressive);
  if (!tm) throw tile::error("cannot create the NVPTX target machine for " + a.name());
  return std::unique_ptr<llvm::TargetMachine>(tm);
}

void NvptxTarget::configure_module(llvm::Module& m) const {
  m.setTargetTriple(kTriple);
  m.setDataLayout(make_target_machine(arch_)->createDataLayout());
}

llvm::Function* NvptxTarget::declare_kernel(llvm::Module& m, const ir::Function& f, const std::string& symbol) const {
  auto& ctx = m.getContext();
  std::vector<llvm::Type*> params;
  for (const auto& a : f.body.args) params.push_back(param_type(ctx, a->type));
  for (unsigned k = 0; k < tensor_maps_; ++k) params.push_back(llvm::PointerType::get(ctx, 0));
  auto* fty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), params, false);
  auto* fn = llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage, symbol, m);
  // tensor maps: `.param .align 64 .b8 [128]`, read in place (__grid_constant__: their address
  // is taken with cvta.param, no local copy)
  std::vector<llvm::Metadata*> grid_constant;
  auto* i32t = llvm::Type::getInt32Ty(ctx);
  for (unsigned k = 0; k < tensor_maps_; ++k) {
    const unsigned i = static_cast<unsigned>(f.body.args.size()) + k;
    fn->addParamAttr(i, llvm::Attribute::getWithByValType(ctx, llvm::ArrayType::get(llvm::Type::getInt8Ty(ctx), 128)));
    fn->addParamAttr(i, llvm::Attribute::getWithAlignment(ctx, llvm::Align(64)));
    grid_constant.push_back(llvm::ValueAsMetadata::get(llvm::ConstantInt::get(i32t, i + 1)));  // 1-based
  }
  fn->setCallingConv(llvm::CallingConv::PTX_Kernel);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  auto* md = m.getOrInsertNamedMetadata("nvvm.annotations");
  auto* i32 = llvm::Type::getInt32Ty(ctx);
  md->addOperand(llvm::MDNode::get(ctx, {llvm::ValueAsMetadata::get(fn), llvm::MDString::get(ctx, "kernel"),
                                         llvm::ValueAsMetadata::get(llvm::ConstantInt::get(i32, 1))}));
  if (options_.max_registers > 0)  // .maxnreg: the occupancy retry's register cap
    md->addOperand(llvm::MDNode::get(ctx, {llvm::ValueAsMetadata::get(fn), llvm::MDString::get(ctx, "maxnreg"),
                                           llvm::ValueAsMetadata::get(llvm::ConstantInt::get(i32, options_.max_registers))}));
  // .reqntid (the block is always exactly 32 · num_warps threads): ptxas and LLVM may rely on
  // the exact size (tid.x's range), as Triton's kernels declare it
  for (const char* dim : {"reqntidx", "reqntidy", "reqntidz"})
    md->addOperand(llvm::MDNode::get(ctx, {llvm::ValueAsMetadata::get(fn), llvm::MDString::get(ctx, dim),
                                           llvm::ValueAsMetadata::get(llvm::ConstantInt::get(
                                               i32, std::string_view(dim) == "reqntidx" ? 32 * num_warps_ : 1))}));
  if (!grid_constant.empty())
    md->addOperand(llvm::MDNode::get(ctx, {llvm::ValueAsMetadata::get(fn), llvm::MDString::get(ctx, "grid_constant"),
                                           llvm::MDNode::get(ctx, grid_constant)}));
  return fn;
}

llvm::Value* NvptxTarget::kernel_arg(codegen::Lowering& L, unsigned i, llvm::Type* ty) const {
  llvm::Value* a = L.fn->getArg(i);
  if (ty->isIntegerTy(1)) return L.b->CreateICmpNE(a, llvm::ConstantInt::get(a->getType(), 0));
  if (a->getType() != ty) return L.b->CreateBitCast(a, ty);
  return a;
}

llvm::Value* NvptxTarget::program_id(codegen::Lowering& L, int axis) const {
  static const llvm::Intrinsic::ID ids[3] = {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                                             llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z};
  return sreg(L, ids[axis]);
}

llvm::Value* NvptxTarget::num_programs(codegen::Lowering& L, int axis) const {
  static const llvm::Intrinsic::ID ids[3] = {llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x,
                                             llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y,
                                             llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_z};
  return sreg(L, ids[axis]);
}

llvm::Value* NvptxTarget::thread_id(codegen::Lowering& L) const { return sreg(L, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x); }

void NvptxTarget::barrier(codegen::Lowering& L, int id, int threads) const {
  if (id == 0 && threads == 0) {  // the CTA's: bar.sync 0
    L.b->CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
    return;
  }
  if (id < 0 || id > 15 || threads < 0 || threads % 32 != 0 || threads > 32 * num_warps_)
    throw tile::error("nvptx: a barrier " + std::to_string(id) + " of " + std::to_string(threads) + " threads (ids 0..15; whole warps of the CTA's " +
                      std::to_string(32 * num_warps_) + " threads)");
  void_asm(L, "bar.sync " + std::to_string(id) + (threads ? ", " + std::to_string(threads) : std::string()) + ";");
}

void NvptxTarget::named_barrier(codegen::Lowering& L, llvm::Value* id, int threads, bool arrive) const {
  if (threads < 32 || threads % 32 != 0 || threads > 32 * num_warps_)
    throw tile::error("nvptx: a named barrier of " + std::to_string(threads) + " threads (whole warps of the CTA's " +
                      std::to_string(32 * num_warps_) + " threads)");
  auto& b = *L.b;
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), {b.getInt32Ty()}, false);
  const std::string text = std::string(arrive ? "bar.arrive" : "bar.sync") + " $0, " + std::to_string(threads) + ";";
  // (convergent: every thread of a warp executes this one instruction, never a copy of it LLVM
  // made on another path)
  b.CreateCall(fty, llvm::InlineAsm::get(fty, text, "r,~{memory}", true), {id})->setConvergent();
}

void NvptxTarget::set_registers(codegen::Lowering& L, int regs, bool increase) const {
  if (!arch_.accel || arch_.sm < 90) throw tile::error("nvptx: setmaxnreg needs sm_90a, not " + arch_.name());
  void_asm(L, std::string("setmaxnreg.") + (increase ? "inc" : "dec") + ".sync.aligned.u32 " + std::to_string(regs) + ";");
}

llvm::Value* NvptxTarget::shuffle_xor_i32(codegen::Lowering& L, llvm::Value* v, int mask) const {
  auto& b = *L.b;
  return b.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_bfly_i32, {},
                           {b.getInt32(0xffffffffu), v, b.getInt32(static_cast<std::uint32_t>(mask)), b.getInt32(0x1f)});
}

llvm::Value* NvptxTarget::shuffle_shift_i32(codegen::Lowering& L, llvm::Value* v, int delta, bool up) const {
  auto& b = *L.b;
  // shfl.sync.up clamps at lane 0 (c = 0), shfl.sync.down at lane 31 (c = 0x1f)
  return b.CreateIntrinsic(up ? llvm::Intrinsic::nvvm_shfl_sync_up_i32 : llvm::Intrinsic::nvvm_shfl_sync_down_i32, {},
                           {b.getInt32(0xffffffffu), v, b.getInt32(static_cast<std::uint32_t>(delta)),
                            b.getInt32(up ? 0u : 0x1fu)});
}

llvm::Value* NvptxTarget::shared_base(codegen::Lowering& L) const {
  llvm::GlobalVariable* g = L.mod->getGlobalVariable(kSmem);
  if (!g) {
    auto* ty = llvm::ArrayType::get(llvm::Type::getInt8Ty(L.ctx), 0);
    g = new llvm::GlobalVariable(*L.mod, ty, false, llvm::GlobalValue::ExternalLinkage, nullptr, kSmem, nullptr,
                                 llvm::GlobalValue::NotThreadLocal, 3);
    g->setAlignment(llvm::Align(1024));  // wgmma's 128-byte swizzle wants 1024-byte aligned tiles
  }
  return g;
}

void NvptxTarget::emit_return(codegen::Lowering& L) const { L.b->CreateRetVoid(); }

void NvptxTarget::emit_print(codegen::Lowering&, const ir::Op& op, const std::vector<llvm::Value*>&) const {
  throw tile::error("nvptx: internal error: device_print goes through the GPU lowering", op.loc);
}

void NvptxTarget::printf(codegen::Lowering& L, const std::string& fmt, const std::vector<llvm::Value*>& args) const {
  auto& b = *L.b;
  auto* ptr = llvm::PointerType::get(L.ctx, 0);
  auto callee = L.mod->getOrInsertFunction("vprintf", llvm::FunctionType::get(b.getInt32Ty(), {ptr, ptr}, false));
  llvm::Value* buf = llvm::ConstantPointerNull::get(ptr);
  if (!args.empty()) {
    std::vector<llvm::Type*> tys;
    for (llvm::Value* a : args) tys.push_back(a->getType());
    auto* st = llvm::StructType::get(L.ctx, tys);
    llvm::IRBuilder<> eb(L.entry, L.entry->begin());
    llvm::Value* slot = eb.CreateAlloca(st, nullptr, "printf.args");
    for (std::size_t i = 0; i < args.size(); ++i) b.CreateStore(args[i], b.CreateStructGEP(st, slot, static_cast<unsigned>(i)));
    buf = slot;
  }
  b.CreateCall(callee, {cstring(L, fmt, "printf.fmt"), buf});
}

void NvptxTarget::emit_fail(codegen::Lowering& L, const ir::Op& op, failure kind, llvm::Value* value) const {
  auto& b = *L.b;
  auto* ptr = llvm::PointerType::get(L.ctx, 0);
  const std::string kernel = L.ir_fn ? L.ir_fn->name : "kernel";
  if (kind == failure::assert_fail) {
    std::vector<llvm::Value*> args;
    for (int a = 0; a < 3; ++a) args.push_back(program_id(L, a));
    args.push_back(value);
    printf(L, "device_assert failed: " + op.attrs.str + " (kernel '" + kernel + "', program (%d, %d, %d), element [%lld])\n", args);
    auto callee = L.mod->getOrInsertFunction(
        "__assertfail", llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, b.getInt32Ty(), ptr, b.getInt64Ty()}, false));
    const std::string file = op.loc.known() ? op.loc.file : "<unknown>";
    b.CreateCall(callee, {cstring(L, "device_assert failed: " + op.attrs.str, "assert.msg"), cstring(L, file, "assert.file"),
                          b.getInt32(static_cast<std::uint32_t>(op.loc.line)), cstring(L, kernel, "assert.func"), b.getInt64(1)});
  } else {
    const std::string where = op.loc.known() ? std::string(op.loc.file) + ":" + std::to_string(op.loc.line) : "";
    printf(L, "for_range step must be positive, got %lld (kernel '" + kernel + "', " + where + ")\n", {value});
  }
  b.CreateIntrinsic(llvm::Intrinsic::trap, {}, {});
  b.CreateUnreachable();
}

void NvptxTarget::finish_kernel(codegen::Lowering& L, std::uint64_t) const {
  // calls the driver cannot resolve: a function the GPU has no code for
  for (const llvm::Function& f : *L.mod)
    if (f.isDeclaration() && !f.isIntrinsic() && f.getName() != "vprintf" && f.getName() != "__assertfail")
      throw tile::error("the " + name() + " backend has no '" + f.getName().str() + "' (f64 transcendental functions need " +
                        "libdevice, which tile does not link yet) in kernel '" + (L.ir_fn ? L.ir_fn->name : std::string()) + "'",
                        L.ir_fn ? L.ir_fn->loc : src_loc{});
}

llvm::Value* NvptxTarget::bitcast_fn(codegen::Lowering& L, llvm::Value* v, llvm::Type* to) const {
  // 16 bits into a half: through a move LLVM cannot see into (bf16 values live in i16 registers
  // but may come from a bfloat, and bitcast bfloat -> half has no instruction pattern)
  if (!to->isHalfTy() || !v->getType()->isIntegerTy(16)) return nullptr;
  return L.b->CreateBitCast(opaque(L, v), to);
}

llvm::Value* NvptxTarget::opaque(codegen::Lowering& L, llvm::Value* v) const {
  const unsigned bits = v->getType()->getIntegerBitWidth();  // 16, 32 or 64
  const char* text = bits == 64 ? "mov.b64 $0, $1;" : bits == 16 ? "mov.b16 $0, $1;" : "mov.b32 $0, $1;";
  const char* cons = bits == 64 ? "=l,l" : bits == 16 ? "=h,h" : "=r,r";
  auto* fty = llvm::FunctionType::get(v->getType(), {v->getType()}, false);
  // pure (no side effects): LLVM may still hoist or share it, ptxas removes the move
  return L.b->CreateCall(fty, llvm::InlineAsm::get(fty, text, cons, false), {v});
}
// ---- global accesses the generic lowering asks for ------------------------------------------------

llvm::Value* NvptxTarget::pack_narrow_pair(codegen::Lowering& L, llvm::Value* hi, llvm::Value* lo, bool bf16) const {
  // one cvt.rn.{f16,bf16}x2.f32: each half rounded as cvt.rn.{f16,bf16}.f32 would (LLVM 19
  // emits two conversions and a mov)
  auto& B = *L.b;
  auto* fty = llvm::FunctionType::get(B.getInt32Ty(), {B.getFloatTy(), B.getFloatTy()}, false);
  const char* code = bf16 ? "cvt.rn.bf16x2.f32 $0, $1, $2;" : "cvt.rn.f16x2.f32 $0, $1, $2;";
  return B.CreateCall(fty, llvm::InlineAsm::get(fty, code, "=r,f,f", false), {hi, lo});
}

llvm::Value* NvptxTarget::load_words_if(codegen::Lowering& L, llvm::Value* pred, llvm::Value* addr, int words,
                                        const std::vector<std::uint32_t>& fill) const {
  // mov.b32 each word's fill; @p ld.global.v<n>.b32 {…}, [addr]
  auto& B = *L.b;
  std::string code, cons;
  for (int i = 0; i < words; ++i) {
    char bits[16];
    std::snprintf(bits, sizeof bits, "0x%08X", fill.at(static_cast<std::size_t>(i)));
    code += "mov.b32 $" + std::to_string(i) + ", " + bits + ";\n\t";
    cons += "=r,";
  }
  code += "@$" + std::to_string(words) + " ld.global" + (words > 1 ? ".v" + std::to_string(words) : std::string()) + ".b32 ";
  code += words > 1 ? "{" : "";
  for (int i = 0; i < words; ++i) code += (i ? ", $" : "$") + std::to_string(i);
  code += words > 1 ? "}" : "";
  code += ", [$" + std::to_string(words + 1) + "];";
  cons += "b,l";
  std::vector<llvm::Type*> rts(static_cast<std::size_t>(words), B.getInt32Ty());
  llvm::Type* ret = words == 1 ? static_cast<llvm::Type*>(B.getInt32Ty()) : llvm::StructType::get(L.ctx, rts);
  auto* fty = llvm::FunctionType::get(ret, {B.getInt1Ty(), B.getInt64Ty()}, false);
  llvm::Value* res = B.CreateCall(fty, llvm::InlineAsm::get(fty, code, cons, true), {pred, addr});
  llvm::Value* vec = llvm::PoisonValue::get(llvm::FixedVectorType::get(B.getInt32Ty(), static_cast<unsigned>(words)));
  for (int i = 0; i < words; ++i)
    vec = B.CreateInsertElement(vec, words == 1 ? res : B.CreateExtractValue(res, static_cast<unsigned>(i)), static_cast<std::uint64_t>(i));
  return vec;
}

bool NvptxTarget::store_words_if(codegen::Lowering& L, llvm::Value* pred, llvm::Value* addr, llvm::Value* vec) const {
  // @p st.global.v<n>.b32 [addr], {…}
  auto& B = *L.b;
  const int words = static_cast<int>(llvm::cast<llvm::FixedVectorType>(vec->getType())->getNumElements());
  std::string code = "@$0 st.global" + (words > 1 ? ".v" + std::to_string(words) : std::string()) + ".b32 [$1], ";
  code += words > 1 ? "{" : "";
  for (int i = 0; i < words; ++i) code += (i ? ", $" : "$") + std::to_string(i + 2);
  code += words > 1 ? "};" : ";";
  std::string cons = "b,l";
  std::vector<llvm::Type*> ats{B.getInt1Ty(), B.getInt64Ty()};
  std::vector<llvm::Value*> args{pred, addr};
  for (int i = 0; i < words; ++i) {
    cons += ",r";
    ats.push_back(B.getInt32Ty());
    args.push_back(B.CreateExtractElement(vec, static_cast<std::uint64_t>(i)));
  }
  cons += ",~{memory}";
  auto* fty = llvm::FunctionType::get(B.getVoidTy(), ats, false);
  B.CreateCall(fty, llvm::InlineAsm::get(fty, code, cons, true), args);
  return true;
}

}  // namespace tile::targets::nvptx
