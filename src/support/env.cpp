// src/support/env.cpp — layer: support. The declarations of every environment switch.
#include "support/env.hpp"

#include <cstdlib>
#include <stdexcept>

namespace tile::env {

const std::vector<Switch>& all() {
  static const std::vector<Switch> switches = {
      {"TILE_BACKEND", "", cache_effect::part_of_key,
       "backend for tile::device::best(): cpu, interpreter, or null (compile only: nothing runs)"},
      {"TILE_DUMP_IR", "0", cache_effect::forces_recompile,
       "print the tile IR after tracing and after every pass (to stderr)"},
      {"TILE_VERIFY", "1", cache_effect::none, "run the IR verifier after every pass"},
      {"TILE_TIME_PASSES", "0", cache_effect::forces_recompile, "print a per-pass timing table"},
      {"TILE_INTERPRETER_THREADS", "0", cache_effect::none,
       "threads the interpreter runs program instances on (0: all cores)"},
      {"TILE_DUMP_DIR", "", cache_effect::forces_recompile,
       "write each compiled kernel's IR and code under this directory"},
      {"TILE_CACHE_DIR", "", cache_effect::none, "on-disk compile cache directory"},
      {"TILE_CACHE", "1", cache_effect::none, "0 disables the compile caches"},
      {"TILE_WARP_SPECIALIZE", "", cache_effect::part_of_key,
       "sm_90a kernels whose pipelined loops are all filled by tensor copies, with a producer warp issuing them: by "
       "default where the plain plan's rings hold one block an SM (compiled once), or where the plain build's registers "
       "do (compiled both ways); 1: wherever a kernel qualifies; 0: never"},
      {"TILE_DEFER_DOTS", "0", cache_effect::part_of_key,
       "1: on sm_90a a warpgroup dot left in flight at the end of a loop's iteration (attention's P·V) is issued in "
       "the next iteration after its first dot (QKᵀ), so that it runs during the softmax (off by default: -4 to +6 % "
       "on the attention forward's configurations, bench/results/h200.md)"},
      {"TILE_PINGPONG", "0", cache_effect::part_of_key,
       "1: as TILE_DEFER_DOTS=1, and a warp-specialized kernel's consumer warpgroups issue such a loop's dots in "
       "turns (FlashAttention-3's ping-pong schedule: one warpgroup's softmax while the other's dots run; off by "
       "default: -2 to +2.4 % on the attention forward's configurations, bench/results/h200.md)"},
      {"TILE_TARGET", "", cache_effect::part_of_key,
       "NVIDIA arch the null backend compiles for (sm_80, sm_86, sm_89, sm_90, sm_90a; default sm_90a)"},
      {"TILE_PTXAS_CHECK", "", cache_effect::none,
       "also compile every kernel for this NVIDIA arch (sm_90a) and assemble it with ptxas; a failure is an error"},
      {"TILE_PTXAS", "", cache_effect::none,
       "the ptxas to run (default: PATH, then /usr/local/cuda/bin/ptxas; 0: never run ptxas)"},
      {"TILE_SMEM_CARVEOUT", "driver", cache_effect::none,
       "the shared-memory carveout tile's CUDA kernels prefer, in percent of L1 + shared memory (driver: "
       "none set, the driver's choice, which leaves L1 all the shared memory the blocks do not need; "
       "0 … 100: that for every kernel)"},
      {"TILE_VERSION_LOOPS", "1", cache_effect::none,
       "loops over one range that read the same memory (layer norm's passes over a row) get a version for "
       "when the range is one step, where the row is read once (the IR differs, so does the cache key); "
       "0: never"},
      {"TILE_OCCUPANCY_RETRY", "1", cache_effect::part_of_key,
       "on a CUDA device (and on the null backend with ptxas), compile a kernel whose registers limit its "
       "blocks an SM again with fewer registers (exp in smaller batches), and keep that where more blocks "
       "fit without more spills; 0: never"},
      {"TILE_PROFILE", "", cache_effect::none,
       "profile the whole program: write <path>.hatchet and <path>.chrome_trace at exit"},
      {"TILE_AUTOTUNE_VERBOSE", "0", cache_effect::none, "print each autotuned config and its time as it is timed"},
      {"TILE_CUPTI", "", cache_effect::none, "the libcupti the profiler opens (default: searched)"},
      {"TILE_CPU_THREADS", "0", cache_effect::none,
       "threads the CPU backend runs a grid on (0: one per core; read when the backend starts)"},
      {"TILE_AOT_RECORD", "", cache_effect::none,
       "record every specialization the program traces and, at exit, compile them ahead of time into this "
       "file (an object if it ends in .o, else an archive file; libtile only: docs/AOT.md)"},
      {"TILE_AOT_TARGETS", "cpu", cache_effect::none,
       "the targets TILE_AOT_RECORD compiles for: sm_80, sm_86, sm_89, sm_90, sm_90a, cpu, cpu-x86-64[-v2|-v3|-v4]"},
      {"TILE_BENCH_DIR", "bench-results", cache_effect::none,
       "where tile::testing benchmark sweeps write their CSV and SVG files"},
  };
  return switches;
}

static const Switch& find(std::string_view name) {
  for (auto& s : all())
    if (s.name == name) return s;
  throw std::logic_error("undeclared environment switch " + std::string(name));
}

std::string get(std::string_view name) {
  const Switch& s = find(name);
  const char* v = std::getenv(std::string(name).c_str());
  return v ? std::string(v) : std::string(s.default_value);
}

bool enabled(std::string_view name) {
  std::string v = get(name);
  return !(v.empty() || v == "0" || v == "false" || v == "off" || v == "no");
}

std::string describe() {
  std::string out;
  for (auto& s : all()) {
    out += std::string(s.name) + " (default '" + std::string(s.default_value) + "'";
    out += s.effect == cache_effect::part_of_key        ? ", part of the cache key"
           : s.effect == cache_effect::forces_recompile ? ", forces a fresh compile"
                                                        : "";
    out += "): " + std::string(s.doc) + "\n";
  }
  return out;
}

}  // namespace tile::env
