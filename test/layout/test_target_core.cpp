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

TEST_CASE("GPU target core: NVPTX hands out its tensor-core and asynchronous-copy engines") {
  const NvptxTarget target(targets::nvptx::parse_arch("sm_80"), 4);
  const codegen::gpu::GpuTargetHooks& hooks = target;
  CHECK(hooks.mma() != nullptr);
  CHECK(hooks.async_copy() != nullptr);
}
