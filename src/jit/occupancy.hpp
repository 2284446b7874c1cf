// src/jit/occupancy.hpp — layer: jit. How many blocks of a compiled kernel one SM holds at once,
// from the SM's limits (threads, registers, shared memory, blocks) and what the kernel uses:
// the estimate compile_cuda (and compile_null, with ptxas's counts) uses to decide whether a
// register-lean variant of a kernel is worth keeping (compile_nvptx.cpp, ptxas.cpp). No LLVM, no
// driver: plain arithmetic, tested on its own.
#pragma once

#include <cstdint>

namespace tile::jit {

/// One SM's limits (cuDeviceGetAttribute; cuda_device_info holds them).
struct sm_limits {
  int max_threads = 2048;
  int max_registers = 65536;           // the register file, split evenly over 4 schedulers
  int max_blocks = 32;
  std::int64_t shared_bytes = 233472;  // shared memory an SM may give its blocks (228 KiB, sm_90)
  std::int64_t reserved_shared_per_block = 1024;
};

/// An SM's limits by compute capability (sm: 80, 86, 87, 89, 90), from NVIDIA's tables; a
/// device's own come from the driver (cuda_device_info).
sm_limits sm_limits_of(int sm);

/// What one block of a kernel uses.
struct block_use {
  int threads = 128;
  int registers = 32;                  // per thread, as the assembler reports them
  std::int64_t shared_bytes = 0;       // static + dynamic, per block
};

/// Blocks of `b` one SM holds at once (0: not even one fits). Registers are allocated per warp
/// in units of 256 (a thread's count rounded up to 8), and each of the SM's 4 schedulers has a
/// quarter of the register file for the warps it holds: the rule of NVIDIA's occupancy
/// calculator for sm_70 to sm_90.
int blocks_per_sm(const sm_limits& sm, const block_use& b);

/// The most registers a thread of a `threads`-thread block may use for `blocks` such blocks to
/// fit on one SM as far as registers go (a multiple of 8; 0 when no count allows it).
int registers_for(const sm_limits& sm, int threads, int blocks);

/// Whether registers, and nothing else, keep another block of `b` off the SM: with fewer
/// registers a thread (and as many as a thread may have), one more block would fit.
bool registers_limit(const sm_limits& sm, const block_use& b);

/// Whether a second build of a kernel, `other` (spilling `other_local` bytes a thread), is
/// better than the first, `first`: more blocks an SM, and no more spills.
bool holds_more(const sm_limits& sm, const block_use& first, int first_local, const block_use& other, int other_local);

}  // namespace tile::jit
