// src/jit/compile_cpu.cpp — layer: jit. The CPU backend's compile pipeline (see compile.hpp):
// key -> memory cache -> disk cache -> [lower (codegen) -> O3 -> object] -> ORC load.
// A dump or timing switch (TILE_DUMP_DIR, TILE_TIME_PASSES) bypasses the cache lookups — a
// cached kernel would skip its dump — and still stores the result. TILE_CACHE=0 disables both
// caches.
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
#include "jit/compile.hpp"
#include "jit/disk_cache.hpp"
#include "jit/dump.hpp"
#include "jit/llvm_passes.hpp"
#include "jit/orc.hpp"
#include "support/build_id.hpp"
#include "support/env.hpp"
#include "targets/cpu/cpu_target.hpp"

namespace tile::jit {
namespace {

constexpr const char* kSymbol = "tile_kernel";
constexpr const char* kOptions = "O3;abi=2";  // abi: cpu_module.hpp's kernel ABI version

struct caches {
  std::mutex mu;
  std::unordered_map<std::string, std::shared_ptr<const std::string>> objects;  // digest -> object
  std::unique_ptr<disk_cache> disk;
  compile_stats stats;
};

caches& the_caches() {
  static caches c;
  return c;
}

disk_cache* disk() {
  caches& c = the_caches();
  std::lock_guard l(c.mu);
  if (!c.disk) c.disk = std::make_unique<disk_cache>(env::get("TILE_CACHE_DIR"));
  return c.disk.get();
}

struct stage_timer {
  std::vector<std::pair<std::string, double>> rows;
  std::chrono::steady_clock::time_point t = std::chrono::steady_clock::now();
  void lap(const char* name) {
    const auto now = std::chrono::steady_clock::now();
    rows.emplace_back(name, std::chrono::duration<double, std::milli>(now - t).count());
    t = now;
  }
  void print(const std::string& kernel) const {
    double total = 0;
    for (auto& r : rows) total += r.second;
    std::cerr << "// ----- compile timing, cpu (kernel " << kernel << ") ----- //\n";
    char line[160];
    for (auto& r : rows) {
      std::snprintf(line, sizeof line, "  %-16s %10.3f %6.1f%%\n", r.first.c_str(), r.second,
                    total > 0 ? 100.0 * r.second / total : 0.0);
      std::cerr << line;
    }
    std::snprintf(line, sizeof line, "  %-16s %10.3f %6.1f%%\n", "total", total, 100.0);
    std::cerr << line << std::flush;
  }
};

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

compile_stats stats() {
  caches& c = the_caches();
  std::lock_guard l(c.mu);
  return c.stats;
}

void count(stat s) {
  caches& c = the_caches();
  std::lock_guard l(c.mu);
  switch (s) {
    case stat::compiled: ++c.stats.compiled; break;
    case stat::memory_hit: ++c.stats.memory_hits; break;
    case stat::disk_hit: ++c.stats.disk_hits; break;
  }
}

std::unique_ptr<drivers::module> compile_cpu(std::shared_ptr<const ir::Function> fn) {
  const bool time = env::enabled("TILE_TIME_PASSES");
  const bool dumping = !dump_dir().empty();
  const bool use_cache = env::enabled("TILE_CACHE");
  const bool lookup = use_cache && !dumping && !time;
  stage_timer timer;

  cache_key key;
  key.ir_hash = ir::structural_hash(*fn);
  key.target = targets::cpu::host().key();
  key.options = kOptions;
  key.version = support::build_id();
  key.kernel = fn->name;
  const std::string digest = key.digest();

  caches& c = the_caches();
  std::shared_ptr<const std::string> object;
  if (lookup) {
    {
      std::lock_guard l(c.mu);
      auto it = c.objects.find(digest);
      if (it != c.objects.end()) {
        object = it->second;
        ++c.stats.memory_hits;
      }
    }
    if (!object) {
      if (auto hit = disk()->load(key, "o")) {
        object = std::make_shared<const std::string>(std::move(*hit));
        std::lock_guard l(c.mu);
        ++c.stats.disk_hits;
        c.objects.emplace(digest, object);
      }
    }
    timer.lap("cache lookup");
  }
  if (!object) {
    object = std::make_shared<const std::string>(compile_object(*fn, digest, dumping, timer));
    if (use_cache) {
      disk()->store(key, *object, "o");
      std::lock_guard l(c.mu);
      c.objects[digest] = object;
    }
    std::lock_guard l(c.mu);
    ++c.stats.compiled;
  }
  auto mod = std::make_unique<drivers::cpu_module>();
  mod->kernel = fn->name;
  mod->sites = drivers::collect_cpu_sites(*fn);
  loaded_code code = load_object(*object, kSymbol, fn->name, targets::cpu::kScratchSymbol);
  mod->fn = reinterpret_cast<drivers::cpu_kernel_fn>(code.entry);
  std::memcpy(&mod->scratch_bytes, code.data, sizeof mod->scratch_bytes);
  mod->code = std::move(code.keep);
  timer.lap("load (ORC)");
  if (time) timer.print(fn->name);
  return mod;
}

}  // namespace tile::jit
