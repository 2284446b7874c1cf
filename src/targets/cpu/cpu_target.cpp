// src/targets/cpu/cpu_target.cpp — layer: targets (cpu). See cpu_target.hpp.
#include "targets/cpu/cpu_target.hpp"

#include <cstddef>
#include <cstdio>
#include <mutex>

#include <llvm/ADT/StringMap.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/SubtargetFeature.h>

#include "codegen/lowering.hpp"
#include "drivers/cpu/cpu_module.hpp"

namespace tile::targets::cpu {

const Host& host() {
  static const Host h = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
    Host r;
    r.triple = llvm::sys::getProcessTriple();
    r.cpu = llvm::sys::getHostCPUName().str();
    llvm::SubtargetFeatures f;
    for (const auto& kv : llvm::sys::getHostCPUFeatures()) f.AddFeature(kv.getKey(), kv.getValue());
    r.features = f.getString();
    return r;
  }();
  return h;
}

std::string Host::key() const {
  std::uint64_t h = 1469598103934665603ull;
  for (char c : features) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return "cpu-" + triple + "-" + cpu + "-" + buf;
}

Host level(const std::string& cpu_name) {
  Host r = host();  // the triple (and the targets' initialization)
  r.cpu = cpu_name;
  r.features.clear();
  return r;
}

std::unique_ptr<llvm::TargetMachine> make_target_machine(const Host& h) {
  std::string err;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(h.triple, err);
  if (!t) throw tile::error("cpu target: no LLVM target for " + h.triple + ": " + err);
  llvm::TargetOptions opt;
  opt.AllowFPOpFusion = llvm::FPOpFusion::Strict;  // no contraction: results match the interpreter bit for bit
  auto* tm = t->createTargetMachine(h.triple, h.cpu, h.features, opt, llvm::Reloc::PIC_, llvm::CodeModel::Small,
                                    llvm::CodeGenOptLevel::Aggressive);
  if (!tm) throw tile::error("cpu target: cannot create a target machine for " + h.triple);
  return std::unique_ptr<llvm::TargetMachine>(tm);
}

CpuTarget::CpuTarget(const ir::Function& f, Host machine, std::string scratch_symbol)
    : machine_(std::move(machine)), scratch_symbol_(std::move(scratch_symbol)) {
  int n = 0;
  ir::walk(const_cast<ir::Block&>(f.body), [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::print || op.kind == ir::OpKind::assert_ || op.kind == ir::OpKind::for_) site_[&op] = n++;
  });
}

int CpuTarget::site_of(const ir::Op& op) const {
  auto it = site_.find(&op);
  if (it == site_.end()) throw tile::error("cpu target: internal error: op without a site", op.loc);
  return it->second;
}

void CpuTarget::configure_module(llvm::Module& m) const {
  m.setTargetTriple(machine_.triple);
  auto tm = make_target_machine(machine_);
  m.setDataLayout(tm->createDataLayout());
}

llvm::Function* CpuTarget::declare_kernel(llvm::Module& m, const ir::Function&, const std::string& symbol) const {
  auto& c = m.getContext();
  auto* ptr = llvm::PointerType::get(c, 0);
  auto* ft = llvm::FunctionType::get(llvm::Type::getInt32Ty(c), {ptr, ptr}, false);
  auto* f = llvm::Function::Create(ft, llvm::Function::ExternalLinkage, symbol, m);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  f->addFnAttr("target-cpu", machine_.cpu);
  if (!machine_.features.empty()) f->addFnAttr("target-features", machine_.features);
  f->addParamAttr(0, llvm::Attribute::NoAlias);
  f->addParamAttr(0, llvm::Attribute::ReadOnly);
  f->addParamAttr(1, llvm::Attribute::NoAlias);
  f->getArg(0)->setName("args");
  f->getArg(1)->setName("program");
  return f;
}

llvm::Value* CpuTarget::kernel_arg(codegen::Lowering& L, unsigned i, llvm::Type* ty) const {
  auto& b = *L.b;
  llvm::Value* slot = b.CreateConstInBoundsGEP1_64(b.getInt64Ty(), L.fn->getArg(0), i);
  llvm::Value* raw = b.CreateLoad(b.getInt64Ty(), slot, "arg" + std::to_string(i));
  if (ty->isPointerTy()) return b.CreateIntToPtr(raw, ty);
  if (ty->isIntegerTy()) return b.CreateTrunc(raw, ty);
  const unsigned w = static_cast<unsigned>(ty->getPrimitiveSizeInBits());
  return b.CreateBitCast(b.CreateTrunc(raw, b.getIntNTy(w)), ty);
}

llvm::Value* CpuTarget::program_id(codegen::Lowering& L, int axis) const {
  auto& b = *L.b;
  return b.CreateLoad(b.getInt32Ty(), b.CreateConstInBoundsGEP1_64(b.getInt32Ty(), L.fn->getArg(1), static_cast<unsigned>(axis)));
}

llvm::Value* CpuTarget::num_programs(codegen::Lowering& L, int axis) const {
  auto& b = *L.b;
  return b.CreateLoad(b.getInt32Ty(),
                      b.CreateConstInBoundsGEP1_64(b.getInt32Ty(), L.fn->getArg(1), 3 + static_cast<unsigned>(axis)));
}

void CpuTarget::emit_return(codegen::Lowering& L) const { L.b->CreateRet(L.b->getInt32(0)); }

namespace {
llvm::Value* launch_of(codegen::Lowering& L) {
  auto& b = *L.b;
  llvm::Value* at = b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), L.fn->getArg(1), offsetof(drivers::cpu_program, launch));
  return b.CreateLoad(b.getPtrTy(), at);
}
}  // namespace

void CpuTarget::emit_print(codegen::Lowering& L, const ir::Op& op, const std::vector<llvm::Value*>& data) const {
  auto& b = *L.b;
  auto* ptr = b.getPtrTy();
  llvm::IRBuilder<> eb(L.entry, L.entry->begin());
  llvm::Value* arr = eb.CreateAlloca(llvm::ArrayType::get(ptr, std::max<std::size_t>(1, data.size())), nullptr, "print.data");
  for (std::size_t i = 0; i < data.size(); ++i)
    b.CreateStore(data[i], b.CreateConstInBoundsGEP1_64(ptr, arr, static_cast<unsigned>(i)));
  auto callee = L.mod->getOrInsertFunction("tile_cpu_print", llvm::FunctionType::get(b.getVoidTy(), {ptr, b.getInt32Ty(), ptr, ptr}, false));
  b.CreateCall(callee, {launch_of(L), b.getInt32(static_cast<std::uint32_t>(site_of(op))), L.fn->getArg(1), arr});
}

void CpuTarget::emit_fail(codegen::Lowering& L, const ir::Op& op, failure, llvm::Value* value) const {
  auto& b = *L.b;
  auto* ptr = b.getPtrTy();
  auto callee = L.mod->getOrInsertFunction("tile_cpu_fail", llvm::FunctionType::get(b.getVoidTy(), {ptr, b.getInt32Ty(), ptr, b.getInt64Ty()}, false));
  if (auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) f->addFnAttr(llvm::Attribute::Cold);
  b.CreateCall(callee, {launch_of(L), b.getInt32(static_cast<std::uint32_t>(site_of(op))), L.fn->getArg(1), value});
  b.CreateRet(b.getInt32(1));
}

llvm::Value* CpuTarget::scratch_base(codegen::Lowering& L, codegen::Builder& at) const {
  llvm::Value* field = at.CreateConstInBoundsGEP1_64(at.getInt8Ty(), L.fn->getArg(1), offsetof(drivers::cpu_program, scratch));
  return at.CreateAlignedLoad(at.getPtrTy(), field, llvm::Align(8), "scratch");
}

void CpuTarget::finish_kernel(codegen::Lowering& L, std::uint64_t scratch_bytes) const {
  auto* ty = llvm::Type::getInt64Ty(L.ctx);
  new llvm::GlobalVariable(*L.mod, ty, true, llvm::GlobalValue::ExternalLinkage, llvm::ConstantInt::get(ty, scratch_bytes),
                           scratch_symbol_);
}

}  // namespace tile::targets::cpu
