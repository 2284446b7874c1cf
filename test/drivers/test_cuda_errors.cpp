// test/drivers/test_cuda_errors.cpp — the public API on the cuda backend with memory and streams
// from outside tile, and bad input: each error names the kernel (where
// there is one) and this file's line, and the device stays usable afterwards.
//
//  - device::adopt: device memory allocated outside tile (here: the driver's cuMemAlloc through
//    another buffer) works like a buffer; a host pointer, a null pointer and a range past the end
//    of its allocation are refused at the adopt call's line
//  - device::set_native_stream: a CUstream made outside tile receives the launches and copies
//  - TILE_OCCUPANCY_RETRY: softmax of 8192 columns on 16 warps compiled again register-lean,
//    kept only with more blocks an SM, and computing the same bits
//  - TILE_SMEM_CARVEOUT: the carveout tile's kernels prefer, as the driver reports it back (by
//    default none, whatever the kernel loads; a percentage where one is asked for); a bad value
//    names the switch and the kernel
//  - bad launches: a grid over the device's limits, a kernel that needs more shared memory than
//    the device has (a 256×256 f32 transpose: 263168 bytes through shared memory), buffers of
//    two devices in one launch; after each, other kernels still launch and compute
// A kernel that faults (illegal address) poisons the CUDA context for the rest of the process:
// that case runs in its own process (test_cuda_fault.cpp). Where there is no CUDA device every
// cuda case is reported as skipped, saying why (test/requires.hpp).
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tile/tile.hpp>
#include <vector>

#include <cstdlib>

#include "drivers/cuda/cuda_driver.hpp"
#include "runtime/device_impl.hpp"
#include "row_softmax.hpp"
#include "runtime/kernel_access.hpp"
#include "../requires.hpp"

using namespace tile::literals;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

/// The CUDA device (the test cases asking for it need it: tiletest::needs_cuda).
std::optional<tile::device> cuda() { return tile::device::get("cuda"); }

auto scale = tile::kernel("scale", [](tl::ptr<float> x, tl::ptr<float> y, tl::i32 n, tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  tl::store(y + offs, tl::load(x + offs, offs < n) * 2.0f, offs < n);
});

auto transpose = tile::kernel("transpose", [](tl::ptr<float> in, tl::ptr<float> out, tl::constexpr_<"B"> B) {
  using tl::_;
  using tl::newaxis;
  auto r = tl::arange(0, B), c = tl::arange(0, B);
  auto x = tl::load(in + r(_, newaxis) * B + c(newaxis, _));
  tl::store(out + c(newaxis, _) * B + r(_, newaxis), x);  // coalesced the other way: through shared memory
});

bool info_is_h100(const tile::device& dev) { return contains(dev.name(), "H100"); }

/// scale on `dev` still computes (the device is usable after an error).
void check_still_works(const tile::device& dev) {
  std::vector<float> h(1000);
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = static_cast<float>(i);
  auto x = dev.upload(h);
  auto y = dev.alloc<float>(h.size());
  scale[{4}](x, y, 1000, "BLOCK"_c = 256);
  auto r = y.to_host();
  CHECK(r[999] == 1998.0f);
  CHECK(r[0] == 0.0f);
}

}  // namespace

TEST_CASE("cuda: device::adopt takes device memory allocated outside tile, refuses what is not" * tiletest::needs_cuda) {
  auto dev = cuda();
  // memory tile did not allocate: the driver's own cuMemAlloc, kept alive by `owner`
  auto owner = dev->alloc<float>(4096);
  std::vector<float> h(4096, 1.5f);
  owner.copy_from(h);
  auto in = dev->adopt<float>(owner.address(), 2048);                    // the first half
  auto out = dev->adopt<float>(owner.address() + 2048 * sizeof(float), 2048);  // the second
  scale[{8}](in, out, 2048, "BLOCK"_c = 256);
  auto r = owner.to_host();
  CHECK(r[0] == 1.5f);
  CHECK(r[2048] == 3.0f);
  CHECK(r[4095] == 3.0f);
  CHECK(out.to_host()[7] == 3.0f);  // copies through an adopted buffer too
  { auto dropped = dev->adopt<float>(owner.address(), 16); }  // never frees the memory it adopted
  CHECK(owner.to_host()[0] == 1.5f);

  // a host pointer: not memory the CUDA driver knows
  std::vector<float> host(64);
  int line = 0;
  try {
    line = __LINE__ + 1;
    (void)dev->adopt<float>(reinterpret_cast<std::uintptr_t>(host.data()), host.size());
    FAIL("adopting a host pointer must fail");
  } catch (const tile::error& e) {
    CHECK(contains(e.message(), "host pointer"));
    CHECK(contains(e.what(), "test_cuda_errors.cpp:" + std::to_string(line)));
  }
  // past the end of its allocation (4096 floats)
  try {
    (void)dev->adopt<float>(owner.address() + 4000 * sizeof(float), 200);
    FAIL("adopting past the end must fail");
  } catch (const tile::error& e) {
    CHECK(contains(e.message(), "runs past the end of its allocation"));
  }
  CHECK_THROWS_AS((void)dev->adopt<float>(0, 4), tile::error);
  check_still_works(*dev);
}

TEST_CASE("cuda: launches and copies go to a native stream set from outside" * tiletest::needs_cuda) {
  auto dev = cuda();
  auto& drv = dynamic_cast<tile::drivers::cuda_driver&>(dev->impl()->driver());
  void* st = drv.create_stream(true);  // as an engine (or PyTorch) would make its own
  dev->set_native_stream(st);
  CHECK(dev->native_stream() == st);
  std::vector<float> h(5000, 4.0f);
  auto x = dev->upload(h);
  auto y = dev->alloc<float>(h.size());
  scale[{20}](x, y, 5000, "BLOCK"_c = 256);
  CHECK(y.to_host()[4999] == 8.0f);
  dev->set_native_stream(nullptr);
  CHECK(dev->native_stream() == nullptr);
  drv.destroy_stream(st);
  check_still_works(*dev);
  // a backend without streams takes only null
  auto interp = tile::device::get("interpreter");
  int dummy = 0;
  CHECK_THROWS_AS(interp.set_native_stream(&dummy), tile::error);
  interp.set_native_stream(nullptr);
}

TEST_CASE("cuda: a grid over the device's limits names the kernel and the launch's line" * tiletest::needs_cuda) {
  auto dev = cuda();
  auto x = dev->alloc<float>(64), y = dev->alloc<float>(64);
  int line = 0;
  try {
    line = __LINE__ + 1;
    scale[{1, 70000}](x, y, 64, "BLOCK"_c = 64);
    FAIL("a grid over the limits must fail");
  } catch (const tile::error& e) {
    CHECK(e.kernel() == "scale");
    CHECK(contains(e.message(), "grid"));
    CHECK(contains(e.what(), "test_cuda_errors.cpp:" + std::to_string(line)));
  }
  check_still_works(*dev);
}

TEST_CASE("cuda: a kernel needing more shared memory than the device has is a clear error" * tiletest::needs_cuda) {
  auto dev = cuda();
  auto a = dev->alloc<float>(65536), b = dev->alloc<float>(65536);
  int line = 0;
  try {
    line = __LINE__ + 1;
    transpose[{1}](a, b, "B"_c = 256, "num_warps"_c = 32);
    FAIL("263168 bytes of shared memory must not fit");
  } catch (const tile::error& e) {
    CHECK(e.kernel() == "transpose");
    CHECK(contains(e.message(), "bytes of shared memory per block"));
    CHECK(contains(e.what(), "test_cuda_errors.cpp:" + std::to_string(line)));
  }
  // the same kernel at a size that fits runs and transposes
  std::vector<float> h(64 * 64);
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = static_cast<float>(i);
  auto x = dev->upload(h);
  auto y = dev->alloc<float>(h.size());
  transpose[{1}](x, y, "B"_c = 64);
  auto r = y.to_host();
  CHECK(r[1] == 64.0f);   // out[0][1] = in[1][0]
  CHECK(r[64] == 1.0f);   // out[1][0] = in[0][1]
  check_still_works(*dev);
}

TEST_CASE("cuda: buffers of two devices in one launch name both devices" * tiletest::needs_cuda) {
  auto dev = cuda();
  auto other = tile::device::get("interpreter");
  auto x = dev->alloc<float>(64);
  auto y = other.alloc<float>(64);
  try {
    scale[{1}](x, y, 64, "BLOCK"_c = 64);
    FAIL("mixed devices must fail");
  } catch (const tile::error& e) {
    CHECK(e.kernel() == "scale");
    CHECK(contains(e.message(), "is on device"));
    CHECK(contains(e.what(), "test_cuda_errors.cpp:"));
  }
  check_still_works(*dev);
}

TEST_CASE("adopt on a backend without foreign memory: the interpreter refuses") {
  auto interp = tile::device::get("interpreter");
  std::vector<float> host(16, 1.0f);
  CHECK_THROWS_AS((void)interp.adopt<float>(reinterpret_cast<std::uintptr_t>(host.data()), host.size()), tile::error);
}

TEST_CASE("adopt on the cpu backend takes host memory" * tiletest::needs_cpu) {
  auto cpu = tile::device::get("cpu");
  std::vector<float> host(16, 1.0f);
  auto in = cpu.adopt<float>(reinterpret_cast<std::uintptr_t>(host.data()), 16);
  std::vector<float> dst(16, 0.0f);
  auto out = cpu.adopt<float>(reinterpret_cast<std::uintptr_t>(dst.data()), 16);
  scale[{1}](in, out, 16, "BLOCK"_c = 16);
  CHECK(dst[15] == 2.0f);
}

TEST_CASE("cuda: kernels prefer the carveout TILE_SMEM_CARVEOUT says (by default none: the driver's choice, which "
          "keeps L1 large); a bad value is a clear error" * tiletest::needs_cuda) {
  auto dev = cuda();
  auto x = dev->alloc<float>(64), y = dev->alloc<float>(64);
  auto carveout_of = [&](const auto& k) {
    auto m = tile::detail::compiled_module(k, {x, y, 64}, {tile::named("BLOCK", 64)});
    const auto* cm = dynamic_cast<const tile::drivers::cuda_module*>(m.get());
    REQUIRE(cm != nullptr);
    return cm->smem_carveout;
  };
  auto make = [](const char* name) {
    return tile::kernel(name, [](tl::ptr<float> a, tl::ptr<float> b, tl::i32 n, tl::constexpr_<"BLOCK"> BLOCK) {
      auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
      tl::store(b + offs, tl::load(a + offs, offs < n) + 1.0f, offs < n);
    });
  };
  struct unset_at_exit {  // a failed check does not leave the switch set for later tests
    ~unset_at_exit() { ::unsetenv("TILE_SMEM_CARVEOUT"); }
  } restore;
  // a streaming kernel too: the smallest L1 caps the bytes an SM has in flight (an H200 lost 5-8 %)
  CHECK(carveout_of(make("carveout_default")) == -1);
  auto looping = tile::kernel("carveout_loop", [](tl::ptr<float> a, tl::ptr<float> b, tl::i32 n,
                                                  tl::constexpr_<"BLOCK"> BLOCK) {
    auto acc = tl::zeros<float>({BLOCK});
    tl::for_range(0, 2, 1, [&](tl::tensor) { acc += tl::load(a + tl::arange(0, BLOCK), tl::arange(0, BLOCK) < n); });
    tl::store(b + tl::arange(0, BLOCK), acc, tl::arange(0, BLOCK) < n);
  });
  CHECK(carveout_of(looping) == -1);
  ::setenv("TILE_SMEM_CARVEOUT", "100", 1);
  CHECK(carveout_of(make("carveout_100")) == 100);
  ::setenv("TILE_SMEM_CARVEOUT", "driver", 1);
  CHECK(carveout_of(make("carveout_driver")) == -1);  // none set
  ::setenv("TILE_SMEM_CARVEOUT", "25", 1);
  CHECK(carveout_of(make("carveout_25")) == 25);
  for (const char* v : {"lots", "auto", "101"}) {
    ::setenv("TILE_SMEM_CARVEOUT", v, 1);
    auto bad = make(("carveout_bad_" + std::string(v)).c_str());
    try {
      bad[{1}](x, y, 64, "BLOCK"_c = 64);
      FAIL("TILE_SMEM_CARVEOUT=" << v << " must be refused");
    } catch (const tile::error& e) {
      CHECK(e.kernel() == "carveout_bad_" + std::string(v));
      CHECK(contains(e.message(), "TILE_SMEM_CARVEOUT=" + std::string(v)));
      CHECK(contains(e.message(), "'driver' or a percentage"));
      CHECK(contains(e.what(), "test_cuda_errors.cpp:"));  // the kernel's definition
    }
  }
  ::unsetenv("TILE_SMEM_CARVEOUT");
  check_still_works(*dev);
}

TEST_CASE("cuda: a kernel whose registers limit its blocks an SM is compiled again lean, kept where more blocks fit "
          "(TILE_OCCUPANCY_RETRY)" * tiletest::needs_cuda) {
  auto dev = cuda();
  // row_softmax.hpp: 8192 columns on 16 warps, 47 registers by default, 40 lean (H100)
  const int rows = 4, width = 8192;
  std::vector<float> host(std::size_t(rows) * width);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = float(int(i * 7919 % 1000) - 500) / 50.0f;
  auto in = dev->upload(host);
  struct unset_at_exit {
    ~unset_at_exit() { ::unsetenv("TILE_OCCUPANCY_RETRY"); }
  } restore;
  struct compiled {
    std::string variant;
    int regs = 0, local = 0, blocks = 0;
    std::vector<float> out;
  };
  auto run = [&](const char* name) {
    auto k = make_row_softmax(name);
    auto out = dev->alloc<float>(host.size());
    k[{rows}](out, in, width, width, "BLOCK"_c = width, "num_warps"_c = 16);
    auto m = tile::detail::compiled_module(k, {out, in, width, width},
                                           {tile::named("BLOCK", width), tile::named("num_warps", 16)});
    const auto* cm = dynamic_cast<const tile::drivers::cuda_module*>(m.get());
    REQUIRE(cm != nullptr);
    const auto& info = dynamic_cast<tile::drivers::cuda_driver&>(tile::detail::driver_of(*dev)).info();
    const int per_warp = (cm->num_regs + 7) / 8 * 8 * 32;  // as src/jit/occupancy.cpp counts
    const int blocks = std::min(info.max_threads_per_sm / 512, 4 * (info.max_registers_per_sm / 4 / per_warp) / 16);
    return compiled{cm->variant, cm->num_regs, cm->local_bytes, blocks, out.to_host()};
  };
  ::setenv("TILE_OCCUPANCY_RETRY", "0", 1);
  const compiled plain = run("softmax_no_retry");
  ::unsetenv("TILE_OCCUPANCY_RETRY");
  const compiled chosen = run("softmax_retry");
  MESSAGE("softmax 8192 on 16 warps: default " << plain.regs << " registers (" << plain.blocks
                                               << " blocks an SM), kept '" << chosen.variant << "' with " << chosen.regs
                                               << " registers (" << chosen.blocks << " blocks)");
  CHECK(plain.variant.empty());
  CHECK(chosen.blocks >= plain.blocks);
  CHECK(chosen.local <= plain.local);
  if (chosen.variant == "lean") CHECK(chosen.blocks > plain.blocks);
  else CHECK(chosen.regs == plain.regs);
  // on an H100 with driver 580: 47 registers, and 40 in batches of 2 (the driver's JIT; ptxas
  // 13.0 gives the same), the reason this exists
  if (info_is_h100(*dev) && plain.regs == 47) CHECK(chosen.variant == "lean");
  // both compute the same softmax, bit for bit (the lean form is the same arithmetic, batched)
  CHECK(chosen.out == plain.out);
  check_still_works(*dev);
}
