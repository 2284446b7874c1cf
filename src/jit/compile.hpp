// src/jit/compile.hpp — layer: jit. The compile pipeline of compiled backends:
//   tile IR (canonicalized) -> LLVM IR (codegen + the target's hooks) -> O3 -> machine code
//   -> loaded module,
// with the compile caches (in memory per process, on disk: jit/disk_cache.hpp) in front of it
// and the debugging switches (TILE_DUMP_DIR, TILE_TIME_PASSES, TILE_CACHE, TILE_CACHE_DIR).
#pragma once

#include <memory>
#include <string>

#include "drivers/driver.hpp"
#include "ir/ir.hpp"

namespace tile::jit {

/// Compile `fn` for the host CPU and load it (drivers::cpu_module).
std::unique_ptr<drivers::module> compile_cpu(std::shared_ptr<const ir::Function> fn);

/// Counters for tests and benchmarks (process-wide).
struct compile_stats {
  std::uint64_t compiled = 0;     // full compiles (codegen + LLVM)
  std::uint64_t memory_hits = 0;  // served from the in-memory cache
  std::uint64_t disk_hits = 0;    // served from the disk cache
};
compile_stats stats();
/// Counts into stats() (the other compiled backends' pipelines: compile_nvptx.cpp).
enum class stat : std::uint8_t { compiled, memory_hit, disk_hit };
void count(stat s);

}  // namespace tile::jit
