// src/jit/ptxas.hpp — layer: jit. NVIDIA's PTX assembler as a checker, and the compile-only paths
// built on it:
//   find_ptxas, run_ptxas  ptxas (TILE_PTXAS, else the first on PATH, else
//                          /usr/local/cuda/bin/ptxas) run on a PTX string in a scratch directory
//                          (posix_spawn, no shell): success, its output and the cubin
//   assemble               a compiled kernel through ptxas: a rejection is a tile::error naming
//                          the kernel and quoting ptxas; the cubin goes to TILE_DUMP_DIR
//   compile_null           the null backend's compile (TILE_BACKEND=null, TILE_TARGET): PTX
//                          (compile_ptx), then ptxas where present
//   ptxas_check            TILE_PTXAS_CHECK=<arch>: every kernel any backend compiles is also
//                          compiled for <arch> and assembled (called from device_impl::compile);
//                          a rejection, or asynchronous tensor-core dots ptxas serializes, is an
//                          error
// ptxas is optional for the null backend (without it, the PTX is all that is checked) and
// required by TILE_PTXAS_CHECK (asking for a check that cannot run is an error).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "drivers/driver.hpp"
#include "ir/ir.hpp"
#include "jit/compile_nvptx.hpp"
#include "targets/nvptx/nvptx_arch.hpp"

namespace tile::jit {

/// ptxas's path, or "" when there is none. TILE_PTXAS names it (TILE_PTXAS=0 or off: never use
/// ptxas); otherwise the first executable `ptxas` on PATH, then /usr/local/cuda/bin/ptxas.
/// Throws tile::error when TILE_PTXAS names something that is not an executable file.
std::string find_ptxas();

struct ptxas_result {
  bool ok = false;      // ptxas exited with status 0 and wrote the cubin
  std::string log;      // its standard output and error (or why it could not be run), -v's report included
  std::string cubin;    // the cubin's bytes, when ok
  int registers = -1;   // a thread's registers, from -v's report (-1: not reported)
  int spill_bytes = 0;  // a thread's spill stores, in bytes, from -v's report
};

/// Runs `ptxas -arch=<arch> -v -o <name>.cubin <name>.ptx` on `ptx` in a fresh temporary directory
/// (removed afterwards); `name` (sanitized) only names the files ptxas's messages mention.
/// Never throws for what ptxas reports: that is the result.
ptxas_result run_ptxas(const std::string& ptxas, std::string_view ptx, const std::string& arch,
                       std::string_view name = "kernel");

/// What ptxas reported of a kernel it assembled.
struct ptxas_usage {
  int registers = -1;  // a thread's (-1: not reported)
  int spill_bytes = 0;
  /// ptxas warned that it serializes the kernel's asynchronous tensor-core dots (wgmma, C7515:
  /// an accumulator register written by other code while a dot is in flight): correct code that
  /// runs far below the tensor cores' rate, which TILE_PTXAS_CHECK reports as an error.
  bool serialized_mma = false;
};

/// Assembles `k` for k.arch with find_ptxas()'s ptxas, at most once per process for one PTX
/// (again when TILE_DUMP_DIR changes), writing <kernel>-<digest>.cubin into TILE_DUMP_DIR, and
/// what ptxas reported into `usage` where given. Returns false when there is no ptxas; throws
/// tile::error naming the kernel and quoting ptxas's output when ptxas rejects the PTX.
/// `cubin`, where given, receives the cubin (ptxas then runs even for a PTX it assembled before).
bool assemble(const ptx_kernel& k, ptxas_usage* usage = nullptr, std::string* cubin = nullptr);

/// `fn` compiled for `a` as compile_null compiles it (the PTX; assembled where ptxas is present,
/// the occupancy retry included): what an ahead-of-time build keeps (aot/build.cpp).
struct nvptx_build {
  std::shared_ptr<const ptx_kernel> k;
  bool assembled = false;
  ptxas_usage usage;
  std::string cubin;  // when assembled and asked for
};
nvptx_build build_nvptx(const ir::Function& fn, const targets::nvptx::arch& a, bool want_cubin);

/// The null backend's compile: compile_ptx for `a` (which writes the .ptx into TILE_DUMP_DIR),
/// then assemble() where ptxas is present; there, as compile_cuda does on a device, a kernel
/// whose registers limit its blocks an SM of `a` is compiled again register-lean and that kept
/// where more blocks fit (TILE_OCCUPANCY_RETRY). The module (drivers::null_module) carries what
/// launches are checked with, and which variant was kept.
std::unique_ptr<drivers::module> compile_null(const ir::Function& fn, const targets::nvptx::arch& a);

/// TILE_PTXAS_CHECK=<arch> (e.g. sm_90a): compiles `fn` with compile_ptx for <arch> and
/// assembles it; any failure (an unparsable arch, no ptxas, an op the NVIDIA path cannot lower,
/// a ptxas rejection) is a tile::error naming the kernel. Does nothing when the switch is unset.
void ptxas_check(const ir::Function& fn);

}  // namespace tile::jit
