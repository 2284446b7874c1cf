// src/jit/carveout.hpp — layer: jit. How an NVIDIA kernel splits an SM's unified L1 / shared
// memory (TILE_SMEM_CARVEOUT).
#pragma once

#include "ir/ir.hpp"

namespace tile::jit {

/// The shared-memory carveout (percent shared) `fn` prefers, -1 for the driver's choice.
/// TILE_SMEM_CARVEOUT=driver (the default) sets none: the driver then configures an SM with the
/// shared memory its resident blocks need and leaves the rest to L1. A global load's data lands
/// in L1 on its way to the registers, so L1's size caps the bytes an SM can have in flight, and a
/// streaming kernel needs about bandwidth x latency / SMs of them: some 25 KB on an H200 (4.8
/// TB/s), 18 KB on an H100. With all shared memory (100 %) an SM keeps about 22 KB of L1: an H100
/// hardly notices, an H200 loses 5-8 % (softmax at 4096-16384 columns against Triton's kernel in
/// the same process, vector add at 2^22-2^28 against the device copy: bench/results/h200.md).
/// 0 … 100: that percentage for every kernel.
int smem_carveout(const ir::Function& fn);

}  // namespace tile::jit
