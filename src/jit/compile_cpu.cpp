// src/jit/compile_cpu.cpp — layer: jit. The CPU backend's compile pipeline (see compile.hpp):
// key -> the compile cache (jit/compile_cache.hpp: memory, then disk, the object as an artifact)
// -> [lower (codegen) -> O3 -> object] -> ORC load.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <mutex>
#include <unordered_map>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include "codegen/lowering.hpp"
#include "drivers/cpu/cpu_module.hpp"
#include "jit/artifact.hpp"
#include "jit/compile.hpp"
#include "jit/compile_cache.hpp"
#include "jit/dump.hpp"
#include "jit/llvm_passes.hpp"
#include "jit/orc.hpp"
#include "jit/stage_timer.hpp"
#include "support/build_id.hpp"
#include "support/env.hpp"
#include "targets/cpu/cpu_target.hpp"

namespace tile::jit {
namespace {

constexpr const char* kSymbol = "tile_kernel";
constexpr const char* kOptions = "O3;abi=2";  // abi: cpu_module.hpp's kernel ABI version

std::string compile_object(const ir::Function& fn, const std::string& digest, bool dumping, stage_timer& timer) {
  llvm::LLVMContext ctx;
  targets::cpu::CpuTarget target(fn);
  codegen::Lowering lowering(ctx, target);
  std::unique_ptr<llvm::Module> m = lowering.run(fn, kSymbol);
  timer.lap("lower to LLVM");
  auto tm = targets::cpu::make_target_machine();
  optimize(*m, *tm);
  timer.lap("LLVM O3");
  std::string obj = emit(*m, *tm, emit_kind::object);
  timer.lap("machine code");
  if (dumping) {
    dump_artifact(fn.name, digest, "tir", ir::print(fn, true));
    dump_artifact(fn.name, digest, "ll", to_text(*m));
    dump_artifact(fn.name, digest, "s", emit(*m, *tm, emit_kind::assembly));
  }
  return obj;
}

}  // namespace

std::unique_ptr<drivers::module> compile_cpu(std::shared_ptr<const ir::Function> fn) {
  const bool time = env::enabled("TILE_TIME_PASSES");
  const bool dumping = !dump_dir().empty();
  stage_timer timer;

  cache_key key;
  key.ir_hash = ir::structural_hash(*fn);
  key.target = targets::cpu::host().key();
  key.options = kOptions;
  key.version = support::build_id();
  key.kernel = fn->name;
  const std::string digest = key.digest();
  const std::string& arch = key.target;  // the host CPU's key
  std::vector<std::string> params;
  for (const auto& arg : fn->body.args) params.push_back(arg->type.str());

  // the object file, as an artifact (jit/artifact.hpp: kind "o", entry kSymbol)
  auto art = cached<artifact>(
      key, "o", cache_policy::from_env(),
      [&] {
        auto a = std::make_shared<artifact>();
        a->kind = "o";
        a->kernel = fn->name;
        a->entry = kSymbol;
        a->arch = arch;
        a->params = params;
        a->key = digest;
        a->code = compile_object(*fn, digest, dumping, timer);
        return std::shared_ptr<const artifact>(std::move(a));
      },
      [](const artifact& a) { return serialize(a); },
      [&](std::string_view bytes) -> std::shared_ptr<const artifact> {
        auto a = parse_artifact(bytes);
        if (!a || a->kind != "o" || a->kernel != fn->name || a->entry != kSymbol || a->arch != arch) return nullptr;
        return std::make_shared<const artifact>(std::move(*a));
      });
  timer.lap("cache store");
  auto mod = std::make_unique<drivers::cpu_module>();
  mod->kernel = fn->name;
  mod->sites = drivers::collect_cpu_sites(*fn);
  loaded_code code = load_object(art->code, kSymbol, fn->name, targets::cpu::kScratchSymbol);
  mod->fn = reinterpret_cast<drivers::cpu_kernel_fn>(code.entry);
  std::memcpy(&mod->scratch_bytes, code.data, sizeof mod->scratch_bytes);
  mod->code = std::move(code.keep);
  timer.lap("load (ORC)");
  if (time) timer.print(fn->name, "cpu");
  return mod;
}

}  // namespace tile::jit
