// src/targets/cpu/cpu_target.hpp — layer: targets (cpu). The host as a code-generation target:
// its LLVM target machine (the host's CPU and features: AVX2/AVX-512 where present) and the
// target hooks of the shared lowering for the CPU kernel ABI (drivers/cpu/cpu_module.hpp).
#pragma once

#include <memory>
#include <string>
#include <unordered_map>

#include "codegen/target.hpp"

namespace llvm {
class TargetMachine;
}

namespace tile::targets::cpu {

/// The host: triple, CPU name and features, as detected once per process.
struct Host {
  std::string triple, cpu, features;
  /// "cpu-<triple>-<cpu>-<hash of features>": the target part of cache keys.
  std::string key() const;
};
const Host& host();

/// A machine named by its x86-64 level ("x86-64-v3"): what ahead-of-time CPU code is built for
/// (the level's own features, none of the build host's others).
Host level(const std::string& cpu_name);

/// A new target machine at -O3 for `m` (the host by default; one per compile: not shared
/// across threads).
std::unique_ptr<llvm::TargetMachine> make_target_machine(const Host& m = host());

/// The object's global holding the kernel's scratch size (an i64).
inline constexpr const char* kScratchSymbol = "tile_scratch_bytes";

class CpuTarget final : public codegen::TargetHooks {
 public:
  /// `f`: the kernel about to be lowered (its print/assert/for ops are numbered as
  /// drivers::collect_cpu_sites numbers them).
  /// `machine`: what the code runs on; `scratch_symbol`: the global holding its scratch size.
  explicit CpuTarget(const ir::Function& f, Host machine = host(), std::string scratch_symbol = kScratchSymbol);
  std::string name() const override { return "cpu"; }
  void configure_module(llvm::Module& m) const override;
  llvm::Function* declare_kernel(llvm::Module& m, const ir::Function& f, const std::string& symbol) const override;
  llvm::Value* kernel_arg(codegen::Lowering& L, unsigned i, llvm::Type* ty) const override;
  llvm::Value* program_id(codegen::Lowering& L, int axis) const override;
  llvm::Value* num_programs(codegen::Lowering& L, int axis) const override;
  void emit_return(codegen::Lowering& L) const override;
  void emit_print(codegen::Lowering& L, const ir::Op& op, const std::vector<llvm::Value*>& data) const override;
  void emit_fail(codegen::Lowering& L, const ir::Op& op, failure kind, llvm::Value* value) const override;
  llvm::Value* scratch_base(codegen::Lowering& L, codegen::Builder& at) const override;
  void finish_kernel(codegen::Lowering& L, std::uint64_t scratch_bytes) const override;

 private:
  std::unordered_map<const ir::Op*, int> site_;
  Host machine_;
  std::string scratch_symbol_;
  int site_of(const ir::Op& op) const;
};

}  // namespace tile::targets::cpu
