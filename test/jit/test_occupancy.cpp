// test/jit/test_occupancy.cpp — blocks an SM holds (src/jit/occupancy.hpp), against what
// NVIDIA's occupancy calculator and the H100 give for the bandwidth benches' kernels.
#include <initializer_list>

#include "doctest/doctest.h"
#include "jit/occupancy.hpp"

namespace {
using tile::jit::block_use;
using tile::jit::blocks_per_sm;
using tile::jit::registers_for;
using tile::jit::sm_limits;

const sm_limits h100{};  // 2048 threads, 65536 registers, 32 blocks, 228 KiB shared, 1 KiB reserved

TEST_CASE("occupancy: registers decide it for softmax's 512-thread blocks") {
  // softmax of 8192 columns on 16 warps: 47 registers (48 allocated) leave 10 warps a scheduler,
  // 2 blocks; 40 registers, 12 warps a scheduler, 3 blocks; 32 registers, 4 (the thread limit)
  CHECK(blocks_per_sm(h100, {.threads = 512, .registers = 47}) == 2);
  CHECK(blocks_per_sm(h100, {.threads = 512, .registers = 41}) == 2);
  CHECK(blocks_per_sm(h100, {.threads = 512, .registers = 40}) == 3);
  CHECK(blocks_per_sm(h100, {.threads = 512, .registers = 32}) == 4);
  CHECK(blocks_per_sm(h100, {.threads = 512, .registers = 64}) == 2);
  CHECK(blocks_per_sm(h100, {.threads = 512, .registers = 65}) == 1);
  CHECK(blocks_per_sm(h100, {.threads = 512, .registers = 128}) == 1);
  CHECK(blocks_per_sm(h100, {.threads = 1024, .registers = 65}) == 0);  // a launch would fail
  CHECK(blocks_per_sm(h100, {.threads = 512, .registers = 256}) == 0);  // more than a thread may have
}

TEST_CASE("occupancy: threads, the block limit and shared memory") {
  CHECK(blocks_per_sm(h100, {.threads = 128, .registers = 32}) == 16);  // 2048 threads
  CHECK(blocks_per_sm(h100, {.threads = 32, .registers = 16}) == 32);   // the block limit
  CHECK(blocks_per_sm(h100, {.threads = 96, .registers = 0}) == 21);    // 3 warps a block
  // 100 KiB + the reserved 1 KiB a block: 2 in 228 KiB
  CHECK(blocks_per_sm(h100, {.threads = 128, .registers = 32, .shared_bytes = 100 * 1024}) == 2);
  CHECK(blocks_per_sm(h100, {.threads = 128, .registers = 32, .shared_bytes = 227 * 1024}) == 1);
  CHECK(blocks_per_sm(h100, {.threads = 128, .registers = 32, .shared_bytes = 228 * 1024}) == 0);
  CHECK(blocks_per_sm(h100, {.threads = 0, .registers = 32}) == 0);
  const sm_limits a10 = tile::jit::sm_limits_of(86);  // 1536 threads, 16 blocks, 100 KiB
  CHECK(a10.max_threads == 1536);
  CHECK(blocks_per_sm(a10, {.threads = 512, .registers = 32}) == 3);
  CHECK(blocks_per_sm(a10, {.threads = 64, .registers = 32}) == 16);
  CHECK(blocks_per_sm(tile::jit::sm_limits_of(89), {.threads = 64, .registers = 32}) == 24);
  // the limits by arch: what a block may opt into is the SM's less the 1 KiB reserved
  CHECK(tile::jit::sm_limits_of(90).shared_bytes - h100.reserved_shared_per_block == 227 * 1024);
  CHECK(tile::jit::sm_limits_of(80).shared_bytes == 164 * 1024);
  CHECK(tile::jit::sm_limits_of(87).max_threads == 2048);
  CHECK(tile::jit::sm_limits_of(89).shared_bytes == 100 * 1024);
}

TEST_CASE("occupancy: the registers a thread may have for one more block") {
  CHECK(registers_for(h100, 512, 2) == 64);
  CHECK(registers_for(h100, 512, 3) == 40);
  CHECK(registers_for(h100, 512, 4) == 32);
  CHECK(registers_for(h100, 128, 1) == 255 / 8 * 8);  // capped at what a thread may have
  CHECK(registers_for(h100, 0, 1) == 0);
  CHECK(registers_for(h100, 1024, 0) == 0);
  // the two agree: registers_for's count gives that many blocks, one more register fewer
  for (int threads : {64, 96, 128, 256, 384, 512, 1024})
    for (int blocks = 1; blocks <= 2048 / threads; ++blocks) {
      const int r = registers_for(h100, threads, blocks);
      CAPTURE(threads);
      CAPTURE(blocks);
      CHECK(blocks_per_sm(h100, {.threads = threads, .registers = r}) >= blocks);
      if (r < 248) CHECK(blocks_per_sm(h100, {.threads = threads, .registers = r + 8}) < blocks);
    }
}

}  // namespace

namespace {
TEST_CASE("occupancy: when registers alone keep a block off, and which of two builds holds more") {
  CHECK(tile::jit::registers_limit(h100, {.threads = 512, .registers = 47}));    // 2 blocks, 4 by threads
  CHECK(!tile::jit::registers_limit(h100, {.threads = 512, .registers = 32}));   // 4: the thread limit
  CHECK(!tile::jit::registers_limit(h100, {.threads = 512, .registers = 29}));
  CHECK(tile::jit::registers_limit(h100, {.threads = 512, .registers = 64}));    // 2; 3 would need 40
  CHECK(tile::jit::registers_limit(h100, {.threads = 1024, .registers = 64}));   // 1; 2 by threads
  CHECK(!tile::jit::registers_limit(h100, {.threads = 1024, .registers = 32}));  // 2 by threads already
  // shared memory the limit: 100 KiB a block, 2 an SM whatever the registers
  CHECK(!tile::jit::registers_limit(h100, {.threads = 512, .registers = 64, .shared_bytes = 100 * 1024}));
  CHECK(tile::jit::registers_limit(h100, {.threads = 128, .registers = 255}));  // 4 blocks; 16 by threads
  const block_use first{.threads = 512, .registers = 47}, lean{.threads = 512, .registers = 40};
  CHECK(tile::jit::holds_more(h100, first, 0, lean, 0));
  CHECK(!tile::jit::holds_more(h100, first, 0, lean, 8));  // spills: not worth a block
  CHECK(!tile::jit::holds_more(h100, first, 0, {.threads = 512, .registers = 44}, 0));  // still 2
  CHECK(!tile::jit::holds_more(h100, lean, 0, first, 0));
}
}  // namespace
