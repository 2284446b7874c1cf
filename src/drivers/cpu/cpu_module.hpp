// src/drivers/cpu/cpu_module.hpp — layer: drivers (cpu). A kernel compiled for the host: the
// entry point's ABI, the run-time services compiled code calls back into (device_print,
// failures), and the module the CPU driver launches.
//
// ABI of a compiled CPU kernel (what src/targets/cpu emits):
//   int32_t kernel(const uint64_t* args, cpu_program* program)
// args[i] holds runtime argument i: a pointer's address, an integer sign- or zero-extended by
// its type, a float's bits (f32/f16/bf16 in the low bits). It returns 0, or 1 after a failure
// was reported through tile_cpu_fail (the launch then stops and throws it). Tiles too large for
// the stack live in `program->scratch`, 64-byte aligned memory of the size the object's global
// `tile_scratch_bytes` (an i64) gives, one block per thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <memory>
#include <string>
#include <vector>

#include "drivers/driver.hpp"
#include "ir/ir.hpp"

namespace tile::drivers {

struct cpu_program {
  std::int32_t pid[3];
  std::int32_t nprog[3];
  void* launch;   // the launch's state, for the run-time services
  void* scratch;  // this thread's memory for the kernel's large tiles (cpu_module::scratch_bytes)
};
/// The state of one launch, reachable from compiled code through cpu_program::launch.
struct cpu_module;
struct cpu_launch {
  const cpu_module* mod = nullptr;
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::exception_ptr error;
};
using cpu_kernel_fn = std::int32_t (*)(const std::uint64_t* args, cpu_program* program);

/// What compiled code refers to by number when it calls a run-time service: a device_print
/// (prefix, hex, the operands' types), a device_assert (message) or a for loop (its step check).
struct cpu_site {
  enum class kind : std::uint8_t { print, assert_fail, bad_step };
  kind k = kind::print;
  std::string text;
  bool hex = false;
  std::vector<ir::Type> operands;
  src_loc loc;
};

/// The sites of `f` in the order the CPU lowering numbers them (pre-order: print, assert, for).
std::vector<cpu_site> collect_cpu_sites(const ir::Function& f);

struct cpu_module final : module {
  cpu_module() : module(backend::cpu) {}
  cpu_kernel_fn fn = nullptr;
  std::string kernel;
  std::vector<cpu_site> sites;
  std::uint64_t scratch_bytes = 0;  // per-thread memory for large tiles
  std::shared_ptr<void> code;  // keeps the JIT-ed code alive
};

std::unique_ptr<driver> make_cpu_driver();

}  // namespace tile::drivers

// The run-time services compiled code calls (resolved by the JIT to these addresses).
extern "C" {
void tile_cpu_print(void* launch, std::int32_t site, const tile::drivers::cpu_program* program, void* const* data);
void tile_cpu_fail(void* launch, std::int32_t site, const tile::drivers::cpu_program* program, std::int64_t value);
}
