// src/jit/occupancy.cpp — layer: jit. See occupancy.hpp.
#include "jit/occupancy.hpp"

#include <algorithm>

namespace tile::jit {
namespace {
constexpr int kSchedulers = 4;       // warp schedulers an SM (sm_70 … sm_90), each a quarter of the registers
constexpr int kRegisterUnit = 8;     // a thread's registers are allocated in 8s (256 a warp)
constexpr int kMaxRegisters = 255;   // the most a thread may use

int warps_of(int threads) { return (threads + 31) / 32; }

/// Warps one SM holds as far as registers go, at `regs` registers a thread.
int warps_by_registers(const sm_limits& sm, int regs) {
  if (regs <= 0) return sm.max_threads / 32;
  const int per_warp = (regs + kRegisterUnit - 1) / kRegisterUnit * kRegisterUnit * 32;
  return kSchedulers * (sm.max_registers / kSchedulers / per_warp);
}
}  // namespace

sm_limits sm_limits_of(int sm) {
  sm_limits l;  // sm_90: 2048 threads, 32 blocks, 228 KiB
  if (sm >= 90) return l;
  if (sm == 80 || sm == 87) {
    l.shared_bytes = 164 * 1024;
    return l;
  }
  l.max_threads = 1536;  // sm_86, sm_89 (and what else is older: the smaller figures)
  l.max_blocks = sm == 89 ? 24 : 16;
  l.shared_bytes = 100 * 1024;
  return l;
}

int blocks_per_sm(const sm_limits& sm, const block_use& b) {
  if (b.threads <= 0 || b.registers > kMaxRegisters) return 0;
  const int warps = warps_of(b.threads);
  int blocks = std::min(sm.max_blocks, sm.max_threads / (warps * 32));
  blocks = std::min(blocks, warps_by_registers(sm, b.registers) / warps);
  if (b.shared_bytes > 0) {
    const std::int64_t per_block = b.shared_bytes + sm.reserved_shared_per_block;
    blocks = std::min<std::int64_t>(blocks, sm.shared_bytes / per_block);
  }
  return std::max(blocks, 0);
}

int registers_for(const sm_limits& sm, int threads, int blocks) {
  if (threads <= 0 || blocks <= 0) return 0;
  const int warps = warps_of(threads) * blocks;
  // each scheduler must hold its share of the warps (rounded up)
  const int per_scheduler = (warps + kSchedulers - 1) / kSchedulers;
  const int regs = sm.max_registers / kSchedulers / per_scheduler / 32 / kRegisterUnit * kRegisterUnit;
  return std::min(regs, kMaxRegisters / kRegisterUnit * kRegisterUnit);
}

bool registers_limit(const sm_limits& sm, const block_use& b) {
  block_use any = b;
  any.registers = 0;
  const int now = blocks_per_sm(sm, b);
  return blocks_per_sm(sm, any) > now && registers_for(sm, b.threads, now + 1) > 0;
}

bool holds_more(const sm_limits& sm, const block_use& first, int first_local, const block_use& other, int other_local) {
  return blocks_per_sm(sm, other) > blocks_per_sm(sm, first) && other_local <= first_local;
}

}  // namespace tile::jit
