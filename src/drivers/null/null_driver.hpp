// src/drivers/null/null_driver.hpp — layer: drivers (null). The compile-only backend
// (TILE_BACKEND=null, TILE_TARGET=sm_90a): every kernel goes through the NVIDIA compile path
// (jit/ptxas.hpp's compile_null: PTX, then ptxas where present) and every launch is checked
// against the target's limits, but nothing runs: no GPU is needed, and results are not computed
// (tile::device::computes() is false). Memory is host memory (host_memory.hpp), so uploads and
// to_host() work; buffers keep whatever was written into them from the host.
//
// A launch is checked, in this order, and a violation is a tile::error naming the kernel and the
// launch's line:
//   grid       x <= 2^31 - 1, y and z <= 65535 (every NVIDIA GPU since sm_30)
//   block      32 * num_warps <= 1024 threads
//   shared     the module's dynamic shared memory <= the arch's opt-in maximum per block
//              (max_dynamic_shared_bytes: 227 KiB on sm_90, 163 KiB on sm_80)
//   arguments  no pointer argument is null
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "drivers/host_memory.hpp"

namespace tile::drivers {

/// What a launch on a null device is checked against.
struct null_limits {
  std::string arch = "sm_90a";  // for messages
  std::uint32_t max_grid[3] = {2147483647u, 65535u, 65535u};
  int max_threads_per_block = 1024;
  std::uint32_t max_dynamic_shared = 227 * 1024;  // bytes per block, opted in
};

/// The most dynamic shared memory one block may opt into on compute capability `sm` (80 for
/// sm_80): 227 KiB on sm_90 and sm_100, 163 KiB on sm_80 and sm_87, 99 KiB on sm_86, sm_89 and
/// sm_120 (the CUDA programming guide's table of compute capabilities).
std::uint32_t max_dynamic_shared_bytes(int sm);
/// The limits of compute capability `sm`, `arch` naming it in messages ("sm_90a").
null_limits null_limits_for(int sm, std::string arch);

/// A kernel compiled for a null device: what its launches are checked with.
struct null_module final : module {
  null_module() : module(backend::null) {}
  std::string kernel;                 // the user's kernel name
  std::string entry;                  // the PTX .entry symbol
  std::string arch;                   // "sm_90a"
  int num_warps = 4;                  // 32 * num_warps threads per block
  std::uint32_t shared_bytes = 0;     // dynamic shared memory per block
  bool assembled = false;             // ptxas accepted the PTX (false: no ptxas was found)
  int registers = -1;                 // a thread's, as ptxas reported them (-1: not assembled)
  std::string variant;                // the lowering kept: "" the default, "lean" (jit::compile_null)
};

/// The null driver for `limits`' target.
std::unique_ptr<driver> make_null_driver(null_limits limits);

}  // namespace tile::drivers
