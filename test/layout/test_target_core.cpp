// test/layout/test_target_core.cpp — the GPU target's core interface (codegen/gpu/gpu_target.hpp)
// on NVPTX, without a GPU: a kernel built straight from the hooks (jit::hooks_ptx), its PTX read
// back. Barriers take an id and a thread count (the CTA-wide barrier 0, named barriers for
// groups of warps), and the target hands out its engines (tensor cores, asynchronous copies).
// (LLVM's headers reach this test through the target's; it calls no LLVM function, and the
// static library exports none: the headers' link-time ABI check is off)
#define LLVM_DISABLE_ABI_BREAKING_CHECKS_ENFORCING 1
#include <doctest/doctest.h>

#include "jit/compile_nvptx.hpp"
#include "targets/nvptx/nvptx_target.hpp"

using namespace tile;
using targets::nvptx::NvptxTarget;

TEST_CASE("GPU target core: barrier(id, threads) — the CTA's bar.sync 0 and named barriers of whole warps") {
  const auto a = targets::nvptx::parse_arch("sm_90a");
  const std::string ptx = jit::hooks_ptx(a, 4, [](codegen::Lowering& L, const NvptxTarget& t) {
    t.barrier(L, 0, 0);
    t.barrier(L, 1, 64);
    t.barrier(L, 15, 128);
  });
  INFO(ptx);
  CHECK(ptx.find("bar.sync \t0;") != std::string::npos);
  CHECK(ptx.find("bar.sync 1, 64;") != std::string::npos);
  CHECK(ptx.find("bar.sync 15, 128;") != std::string::npos);
  // ids 0..15, whole warps of the CTA's 128 threads
  for (auto [id, threads] : {std::pair{16, 32}, std::pair{1, 48}, std::pair{2, 256}, std::pair{-1, 32}})
    CHECK_THROWS_WITH_AS(jit::hooks_ptx(a, 4, [&](codegen::Lowering& L, const NvptxTarget& t) { t.barrier(L, id, threads); }),
                         doctest::Contains("nvptx: a barrier"), tile::error);
}

TEST_CASE("GPU target core: named_barrier(id, threads, arrive) — an id the threads compute, waiting or only arriving") {
  const auto a = targets::nvptx::parse_arch("sm_90a");
  const std::string ptx = jit::hooks_ptx(a, 8, [](codegen::Lowering& L, const NvptxTarget& t) {
    llvm::Value* id = t.thread_id(L);  // (any i32 the threads compute: PTX takes the register)
    t.named_barrier(L, id, 256, false);
    t.named_barrier(L, id, 256, true);
  });
  INFO(ptx);
  CHECK(ptx.find("bar.sync %r") != std::string::npos);
  CHECK(ptx.find("bar.arrive %r") != std::string::npos);
  CHECK(ptx.find(", 256;") != std::string::npos);
  for (int threads : {0, 48, 512})
    CHECK_THROWS_WITH_AS(jit::hooks_ptx(a, 8, [&](codegen::Lowering& L, const NvptxTarget& t) { t.named_barrier(L, t.thread_id(L), threads, true); }),
                         doctest::Contains("nvptx: a named barrier"), tile::error);
}

TEST_CASE("GPU target core: NVPTX hands out its tensor-core and asynchronous-copy engines") {
  const NvptxTarget target(targets::nvptx::parse_arch("sm_80"), 4);
  const codegen::gpu::GpuTargetHooks& hooks = target;
  CHECK(hooks.mma() != nullptr);
  CHECK(hooks.async_copy() != nullptr);
}

TEST_CASE("GPU level to PTX: a named barrier of the IR is the target's bar.sync id, threads; the lowering adds none of its own") {
  // the store writes what each thread loaded itself (one pointer tile, one layout): insert_barriers
  // needs no CTA barrier, so the only one is the IR's, of warps 0 and 1 on barrier 1
  const std::string text =
      "#L0 = linear<[128] reg = [], lane = [[1], [2], [4], [8], [16]], warp = [[32], [64]]>\n"
      "kernel @named(%arg0: ptr<f32> {div=16}) attributes {gpu, num_warps = 4, num_stages = 3} {\n"
      "  %0 = arange {start = 0, end = 128} : i32[128] #L0\n"
      "  %1 = splat %arg0 : ptr<f32> -> ptr<f32>[128] #L0\n"
      "  %2 = addptr %1, %0 : ptr<f32>[128] #L0\n"
      "  %3 = load %2 : f32[128] #L0\n"
      "  barrier {id = 1, threads = 64}\n"
      "  store %2, %3 : ptr<f32>[128] #L0, f32[128] #L0\n"
      "  return\n"
      "}\n";
  const std::string ptx = jit::gpu_ir_ptx(*ir::parse(text, "named.tir"), targets::nvptx::parse_arch("sm_90a"));
  INFO(ptx);
  CHECK(ptx.find("bar.sync 1, 64;") != std::string::npos);
  CHECK(ptx.find("bar.sync \t0;") == std::string::npos);
  // a CTA barrier of the IR: bar.sync 0
  std::string cta = text;
  cta.replace(cta.find("barrier {id = 1, threads = 64}"), 30, "barrier {id = 0}");
  CHECK(jit::gpu_ir_ptx(*ir::parse(cta, "cta.tir"), targets::nvptx::parse_arch("sm_90a")).find("bar.sync \t0;") != std::string::npos);
}
