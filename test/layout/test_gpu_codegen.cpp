// test/layout/test_gpu_codegen.cpp — the NVIDIA path without a GPU: kernels compiled for sm_90a
// by the null backend (TILE_BACKEND=null), their PTX read back from TILE_DUMP_DIR. Golden
// properties, not golden text: 128-bit global accesses where axis info allows them (and only
// there), shuffles for reductions, no local-memory traffic, the layout plan's conversions.
#include <doctest/doctest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "tile/tile.hpp"
#include "../../bench/kernels.hpp"
#include "../../samples/attention_kernels.hpp"
#include "ir/ir.hpp"
#include "jit/compile_nvptx.hpp"
#include "jit/ptxas.hpp"
#include "../requires.hpp"

using namespace tile::literals;
namespace fs = std::filesystem;

namespace {

/// A fresh dump directory for one test; TILE_DUMP_DIR points at it while it lives.
struct dump_dir {
  fs::path dir;
  dump_dir() {
    char tmpl[] = "/tmp/tile-gpu-codegen-XXXXXX";
    dir = mkdtemp(tmpl);
    setenv("TILE_DUMP_DIR", dir.c_str(), 1);
  }
  ~dump_dir() {
    unsetenv("TILE_DUMP_DIR");
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  /// The text of the one artifact with extension `ext` of `kernel`.
  std::string read(const std::string& kernel, const std::string& ext) const {
    for (auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == "." + ext && e.path().filename().string().rfind(kernel + "-", 0) == 0) {
        std::ifstream in(e.path());
        std::stringstream s;
        s << in.rdbuf();
        return s.str();
      }
    FAIL("no ." << ext << " artifact for kernel " << kernel << " in " << dir);
    return {};
  }
};

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

auto vadd = tile::kernel("vadd", [](tl::ptr<float> x, tl::ptr<float> y, tl::ptr<float> out, tl::i32 n,
                                    tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs < n;
  tl::store(out + offs, tl::load(x + offs, mask) + tl::load(y + offs, mask), mask);
});

auto softmax = tile::kernel("softmax", [](tl::ptr<float> out, tl::ptr<float> in, tl::i32 n, tl::constexpr_<"BLOCK"> BLOCK) {
  auto row = tl::program_id(0);
  auto cols = tl::arange(0, BLOCK);
  auto mask = cols < n;
  auto x = tl::load(in + row * n + cols, mask, -tl::inf<float>());
  auto z = x - tl::max(x, 0);
  auto num = tl::exp(z);
  tl::store(out + row * n + cols, num / tl::sum(num, 0), mask);
});

auto rows = tile::kernel("rows", [](tl::ptr<float> out, tl::ptr<float> in, tl::constexpr_<"M"> M, tl::constexpr_<"N"> N) {
  using tl::_;
  using tl::newaxis;
  auto i = tl::arange(0, M);
  auto j = tl::arange(0, N);
  auto x = tl::load(in + i(_, newaxis) * N + j(newaxis, _));
  auto m = tl::sum(x, 1);  // one value per row
  tl::store(out + i(_, newaxis) * N + j(newaxis, _), x - m(_, newaxis));
});

/// A row loop as in layer norm: the offsets advance by BLOCK each iteration.
auto row_sum = tile::kernel("row_sum", [](tl::ptr<tile::half> x, tl::ptr<float> out, tl::i32 n, tl::constexpr_<"BLOCK"> BLOCK) {
  auto row = tl::program_id(0);
  auto acc = tl::zeros<float>({BLOCK});
  tl::for_range(0, n, BLOCK, [&](tl::tensor off) {
    auto cols = off + tl::arange(0, BLOCK);
    acc += tl::cast<float>(tl::load(x + row * n + cols, cols < n, 0.0f));
  });
  tl::store(out + row, tl::sum(acc, 0));
});

auto huge = tile::kernel("huge", [](tl::ptr<float> x, tl::ptr<float> out) {
  auto i = tl::arange(0, 1 << 18);
  tl::store(out + i, tl::load(x + i) * 2.0f);
});

auto scans = tile::kernel("scans", [](tl::ptr<float> x, tl::ptr<float> o) {
  using tl::_;
  using tl::newaxis;
  auto i = tl::arange(0, 256);
  auto j = tl::arange(0, 8);
  auto c = tl::arange(0, 32);
  tl::store(o + i, tl::cumsum(tl::load(x + i), 0));
  auto p = x + j(_, newaxis) * 32 + c(newaxis, _);
  tl::store(o + j(_, newaxis) * 32 + c(newaxis, _), tl::cumsum(tl::load(p), 0) + tl::cumsum(tl::load(p), 1));
});

auto copy_le = tile::kernel("copy_le", [](tl::ptr<float> x, tl::ptr<float> out, tl::i32 n, tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs <= n;  // [k*16, k*16 + 16) <= 16*m is not constant over the run
  tl::store(out + offs, tl::load(x + offs, mask), mask);
});

auto strided = tile::kernel("strided", [](tl::ptr<float> x, tl::ptr<float> out, tl::i32 stride) {
  using tl::_;
  using tl::newaxis;
  auto r = tl::arange(0, 16);
  auto c = tl::arange(0, 32);
  auto v = tl::load(x + r(_, newaxis) * stride + c(newaxis, _));
  tl::store(out + r(_, newaxis) * 32 + c(newaxis, _), v);
});

}  // namespace

TEST_CASE("axis info claims nothing it cannot prove: `offs <= n` masks and unaligned row strides stay scalar") {
  dump_dir d;
  auto dev = tile::device::get("null");
  auto x = dev.alloc<float>(4096 + 1024), o = dev.alloc<float>(4096 + 1024);
  copy_le[{5}](x, o, 4096, "BLOCK"_c = 1024);
  CHECK(count(d.read("copy_le", "ptx"), ".v4.") == 0);
  strided[{1}](x, o, 33);  // rows 33 floats apart: row 1 starts at byte 132, not 16-aligned
  const std::string ptx = d.read("strided", "ptx");
  CHECK(count(ptx, "ld.global.v4") == 0);
  CHECK(count(ptx, "st.global.v4") >= 1);  // the output rows are 32 floats apart
}

namespace {
// the matmul tutorial's wrap: offsets taken modulo n, so no mask is needed
auto wrap = tile::kernel("wrap", [](tl::ptr<float> x, tl::ptr<float> out, tl::i32 n, tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = (tl::program_id(0) * BLOCK + tl::arange(0, BLOCK)) % n;
  tl::store(out + tl::program_id(0) * BLOCK + tl::arange(0, BLOCK), tl::load(x + offs));
});
}  // namespace

TEST_CASE("axis info: `(pid * BLOCK + arange) % n` keeps its runs of 16 when n is a multiple of 16, not otherwise") {
  auto dev = tile::device::get("null");
  auto x = dev.alloc<float>(4096), o = dev.alloc<float>(8192);
  {
    dump_dir d;
    wrap[{8}](x, o, 4096, "BLOCK"_c = 1024);
    const std::string ptx = d.read("wrap", "ptx");
    INFO(d.read("wrap", "layouts"));
    CHECK(count(ptx, "ld.global.v4") >= 1);
    CHECK(d.read("wrap", "layouts").find("%arg2: i32 {div=16} {positive}") != std::string::npos);
  }
  {
    dump_dir d;
    wrap[{8}](x, o, 4095, "BLOCK"_c = 1024);  // rows wrap at 4095: runs break anywhere
    CHECK(count(d.read("wrap", "ptx"), "ld.global.v4") == 0);
  }
}

TEST_CASE("scans: each thread holds whole rows along the scanned axis (1-D and both axes of 2-D)") {
  dump_dir d;
  auto dev = tile::device::get("null");
  auto x = dev.alloc<float>(256), o = dev.alloc<float>(256);
  CHECK_NOTHROW(scans[{1}](x, o));  // the lowering checks the row layout (internal error otherwise)
  CHECK(count(d.read("scans", "ptx"), "ld.local") == 0);
}

TEST_CASE("axis info through a loop: offsets advancing by BLOCK keep 128-bit loads of f16") {
  dump_dir d;
  auto dev = tile::device::get("null");
  auto x = dev.alloc<tile::half>(4 * 4096);
  auto o = dev.alloc<float>(4);
  row_sum[{4}](x, o, 4096, "BLOCK"_c = 1024, "num_warps"_c = 4);
  const std::string ptx = d.read("row_sum", "ptx");
  INFO(d.read("row_sum", "layouts"));
  CHECK(count(ptx, "ld.global.v4.b32") >= 1);  // 8 halves per thread in one access
  CHECK(count(ptx, "ld.global.u16") + count(ptx, "ld.global.b16") == 0);
}

TEST_CASE("a tile too large for the threads' registers is an error naming the op, not a minutes-long compile") {
  auto dev = tile::device::get("null");
  auto x = dev.alloc<float>(1 << 18), o = dev.alloc<float>(1 << 18);
  try {
    huge[{1}](x, o);
    FAIL("no error");
  } catch (const tile::error& e) {
    const std::string m = e.what();
    CHECK(m.find("registers per thread") != std::string::npos);
    CHECK(m.find("huge") != std::string::npos);
    CHECK(m.find("test_gpu_codegen.cpp") != std::string::npos);
  }
}

TEST_CASE("vector add: 128-bit loads and stores when n is a multiple of 16, predicated on the mask") {
  dump_dir d;
  auto dev = tile::device::get("null");
  auto x = dev.alloc<float>(4096), y = dev.alloc<float>(4096), o = dev.alloc<float>(4096);
  vadd[{4}](x, y, o, 4096, "BLOCK"_c = 1024);
  const std::string ptx = d.read("vadd", "ptx");
  CHECK(count(ptx, "ld.global.v4.b32") == 4);  // 2 loads x 1024 / (128 threads x 4) runs
  CHECK(count(ptx, "st.global.v4.b32") == 2);
  CHECK(count(ptx, "ld.local") == 0);
  CHECK(d.read("vadd", "layouts").find("// layout conversions: 0") != std::string::npos);
}

TEST_CASE("vector add: an n of unknown alignment keeps the mask per element (no vector access)") {
  dump_dir d;
  auto dev = tile::device::get("null");
  auto x = dev.alloc<float>(4096), y = dev.alloc<float>(4096), o = dev.alloc<float>(4096);
  vadd[{4}](x, y, o, 4001, "BLOCK"_c = 1024);  // 4001 % 16 != 0: the mask may change inside a run
  const std::string ptx = d.read("vadd", "ptx");
  CHECK(count(ptx, ".v4.") == 0);
  CHECK(count(ptx, "ld.global") >= 16);
}

namespace {
auto transpose2 = tile::kernel("transpose2", [](tl::ptr<float> in, tl::ptr<float> a, tl::ptr<float> b) {
  using tl::_;
  using tl::newaxis;
  auto r = tl::arange(0, 64), c = tl::arange(0, 64);
  auto x = tl::load(in + r(_, newaxis) * 64 + c(newaxis, _));
  // two stores, each coalesced along axis 0: both want x in the same other layout
  tl::store(a + c(newaxis, _) * 64 + r(_, newaxis), x);
  tl::store(b + c(newaxis, _) * 64 + r(_, newaxis), x * 2.0f);
});
auto long_cumsum = tile::kernel("long_cumsum", [](tl::ptr<float> x, tl::ptr<float> o) {
  auto offs = tl::arange(0, 4096);
  tl::store(o + offs, tl::cumsum(tl::load(x + offs), 0));
});
// layer norm's shape of memory traffic: a store of per-row statistics, then a loop that loads
// other arguments and stores a third
auto stats_then_loop = tile::kernel("stats_then_loop", [](tl::ptr<float> x, tl::ptr<float> y, tl::ptr<float> stat,
                                                          tl::i32 n, tl::constexpr_<"BLOCK"> BLOCK) {
  auto row = tl::program_id(0);
  tl::store(stat + row, tl::cast<float>(row));
  tl::for_range(0, n, BLOCK, [&](tl::tensor off) {
    auto cols = off + tl::arange(0, BLOCK);
    tl::store(y + row * n + cols, tl::load(x + row * n + cols, cols < n) * 2.f, cols < n);
  });
});
}  // namespace

namespace {
// a tile loaded, then overwritten through pointers in another layout (transposed) by values
// that do not depend on it: another thread stores over what a thread has yet to load, unless
// the stores wait at a barrier (found by the random-program tester)
auto transpose_in_place = tile::kernel("transpose_in_place", [](tl::ptr<float> x, tl::ptr<float> y) {
  using tl::_;
  using tl::newaxis;
  auto r = tl::arange(0, 32), c = tl::arange(0, 32);
  auto v = tl::load(x + r(_, newaxis) * 32 + c(newaxis, _));
  tl::store(x + c(newaxis, _) * 32 + r(_, newaxis), tl::zeros<float>({32, 32}));
  tl::store(y + r(_, newaxis) * 32 + c(newaxis, _), v);
});
// a store whose value is converted to the pointers' layout (through shared memory, at a barrier),
// then a load of what it wrote: the load still waits for the store (the conversion's barrier
// came before the store's instructions, not after)
auto store_converted_then_load = tile::kernel("store_converted_then_load", [](tl::ptr<std::int32_t> a, tl::ptr<std::int32_t> x,
                                                                              tl::ptr<std::int32_t> out) {
  using tl::_;
  using tl::newaxis;
  auto r = tl::arange(0, 16), c = tl::arange(0, 16);
  auto v = tl::load(a + r(_, newaxis) + c(newaxis, _) * 16);  // a column-major read
  tl::store(x + r(_, newaxis) * 16 + c(newaxis, _), v);       // stored row-major: converted
  tl::store(out + r(_, newaxis) * 16 + c(newaxis, _), tl::load(x + r(_, newaxis) * 16 + c(newaxis, _)) + 1);
});
auto scale_in_place = tile::kernel("scale_in_place", [](tl::ptr<float> x) {
  auto p = x + tl::arange(0, 1024);
  tl::store(p, tl::load(p) * 2.0f);  // each thread stores what it loaded
});
}  // namespace

TEST_CASE("global memory order: a store waits for other threads' loads of the bytes it overwrites") {
  dump_dir d;
  auto dev = tile::device::get("null");
  auto x = dev.alloc<float>(1024), y = dev.alloc<float>(1024);
  SUBCASE("a tile overwritten through transposed pointers: one barrier between the loads and the stores") {
    transpose_in_place[{1}](x, y);
    const std::string ptx = d.read("transpose_in_place", "ptx");
    INFO(ptx);
    CHECK(count(ptx, "bar.sync") == 1);
    const auto ld = ptx.rfind("ld.global"), bar = ptx.find("bar.sync"), st = ptx.find("st.global");
    CHECK(ld < bar);
    CHECK(bar < st);
  }
  SUBCASE("a load after a store whose value was converted: a barrier between them") {
    auto ia = dev.alloc<std::int32_t>(256), ix = dev.alloc<std::int32_t>(256), io = dev.alloc<std::int32_t>(256);
    store_converted_then_load[{1}](ia, ix, io, "num_warps"_c = 8);
    const std::string ptx = d.read("store_converted_then_load", "ptx");
    INFO(ptx);
    const auto st = ptx.find("st.global"), ld = ptx.find("ld.global", st);
    REQUIRE(st != std::string::npos);
    REQUIRE(ld != std::string::npos);
    CHECK(ptx.substr(st, ld - st).find("bar.sync") != std::string::npos);
  }
  SUBCASE("the same pointer tile loaded and stored in one layout: no barrier") {
    scale_in_place[{1}](x);
    const std::string ptx = d.read("scale_in_place", "ptx");
    INFO(ptx);
    CHECK(count(ptx, "bar.sync") == 0);
  }
}

TEST_CASE("global memory order: no barrier between accesses of arguments the launch found disjoint") {
  dump_dir d;
  auto dev = tile::device::get("null");
  auto x = dev.alloc<float>(4 * 1024), y = dev.alloc<float>(4 * 1024), stat = dev.alloc<float>(4);
  SUBCASE("disjoint buffers: the loads need not wait for the stores") {
    stats_then_loop[{4}](x, y, stat, 1024, "BLOCK"_c = 1024);
    const std::string ptx = d.read("stats_then_loop", "ptx");
    INFO(ptx);
    CHECK(count(ptx, "bar.sync") == 0);
    CHECK(count(ptx, "ld.global.v4") >= 1);
  }
  SUBCASE("x and y one buffer (in place): each iteration's load waits for the last one's stores") {
    // and each store for the other threads' loads of the iteration: y may be x shifted by some
    // elements, where a lane's store reaches another lane's load (the interpreter loads the
    // whole tile first)
    stats_then_loop[{4}](x, x, stat, 1024, "BLOCK"_c = 1024);
    const std::string ptx = d.read("stats_then_loop", "ptx");
    INFO(ptx);
    CHECK(count(ptx, "bar.sync") == 2);
  }
  SUBCASE("stat a view inside x: the first load waits for the statistics' store") {
    stats_then_loop[{1}](x.view(0, 1024), y, x.view(1000, 4), 1024, "BLOCK"_c = 1024);
    const std::string ptx = d.read("stats_then_loop", "ptx");
    INFO(ptx);
    CHECK(count(ptx, "bar.sync") == 1);
  }
  SUBCASE("the IR says which arguments are disjoint") {
    const std::string ir = stats_then_loop.ir(x, x, stat, 1024, "BLOCK"_c = 1024);
    INFO(ir);
    CHECK(count(ir, "{noalias}") == 1);  // stat only: x and y are one buffer
  }
}

namespace {
// the tutorial layer norm's first half: a loop that never touches shared memory, then a sum
// across warps (through shared memory), then another loop and another sum
auto loop_then_sums = tile::kernel("loop_then_sums", [](tl::ptr<float> x, tl::ptr<float> out, tl::i32 n,
                                                        tl::constexpr_<"BLOCK"> BLOCK) {
  auto acc = tl::zeros<float>({BLOCK});
  tl::for_range(0, n, BLOCK, [&](tl::tensor off) { acc += tl::load(x + off + tl::arange(0, BLOCK), off + tl::arange(0, BLOCK) < n, 0.0f); });
  auto mean = tl::sum(acc, 0);
  auto sq = tl::zeros<float>({BLOCK});
  tl::for_range(0, n, BLOCK, [&](tl::tensor off) {
    auto d = tl::load(x + off + tl::arange(0, BLOCK), off + tl::arange(0, BLOCK) < n, 0.0f) - mean;
    sq += d * d;
  });
  tl::store(out, tl::sum(sq, 0));
});
}  // namespace

TEST_CASE("shared memory barriers: a loop or branch that uses no shared memory leaves it as it was") {
  dump_dir d;
  auto dev = tile::device::get("null");
  auto x = dev.alloc<float>(2048), out = dev.alloc<float>(1);
  loop_then_sums[{1}](x, out, 2048, "BLOCK"_c = 1024, "num_warps"_c = 4);
  const std::string ptx = d.read("loop_then_sums", "ptx");
  INFO(ptx);
  // first sum: its partials written, a barrier, read (nothing before it to wait for); second sum:
  // a barrier before its writes (the first sum's reads), then the same. The loops read x twice,
  // so they and the first sum have a version for n <= BLOCK beside them
  // (transforms/version_single_trip_loops.cpp): the first sum is there twice, one in each branch,
  // and the second, after the branches, once
  CHECK(count(ptx, "bar.sync") == 2 * 1 + 2);
  CHECK(count(ptx, "st.shared") == 2 * 1 + 1);
  // the kernel is right on every backend (the interpreter, checking each access)
  auto idev = tile::device::get("interpreter");
  std::vector<float> hx(2048);
  for (std::size_t i = 0; i < hx.size(); ++i) hx[i] = static_cast<float>(i % 7) - 3.0f;
  auto ix = idev.upload(hx);
  auto iout = idev.alloc<float>(1);
  loop_then_sums[{1}](ix, iout, 2048, "BLOCK"_c = 1024, "num_warps"_c = 4);
  double mean = 0, sq = 0;
  for (float v : hx) mean += v;
  for (float v : hx) sq += (v - mean) * (v - mean);
  CHECK(iout.to_host()[0] == doctest::Approx(sq).epsilon(1e-5));
}

TEST_CASE("a * b + c fuses into fma.rn.f32 unless the launch says enable_fp_fusion = false (Triton's option)") {
  auto k = tile::kernel("mul_add", [](tl::ptr<float> x, tl::ptr<float> y) {
    auto o = tl::arange(0, 128);
    auto v = tl::load(x + o);
    tl::store(y + o, v * v + 1.0f);
  });
  auto dev = tile::device::get("null");
  auto x = dev.alloc<float>(128), y = dev.alloc<float>(128);
  {
    dump_dir d;
    k[{1}](x, y);
    const std::string ptx = d.read("mul_add", "ptx");
    INFO(ptx);
    CHECK(count(ptx, "fma.rn.f32") >= 1);
    CHECK(count(ptx, "mul.rn.f32") == 0);
  }
  {
    dump_dir d;
    k[{1}](x, y, "enable_fp_fusion"_c = false);
    const std::string ptx = d.read("mul_add", "ptx");
    INFO(ptx);
    CHECK(count(ptx, "fma.rn.f32") == 0);
    CHECK(count(ptx, "mul.rn.f32") >= 1);
    CHECK(count(ptx, "add.rn.f32") >= 1);
  }
}

TEST_CASE("fast_div and fast_sqrt are Triton's div.full.f32 and sqrt.approx.f32; `/` and sqrt stay IEEE") {
  dump_dir d;
  auto k = tile::kernel("fast_math", [](tl::ptr<float> x, tl::ptr<float> y) {
    auto o = tl::arange(0, 128);
    auto v = tl::load(x + o);
    tl::store(y + o, tl::fast_div(1.0f, tl::fast_sqrt(v)) + v / 3.0f + tl::sqrt(v));
  });
  auto dev = tile::device::get("null");
  auto x = dev.alloc<float>(128), y = dev.alloc<float>(128);
  k[{1}](x, y);
  const std::string ptx = d.read("fast_math", "ptx");
  INFO(ptx);
  CHECK(count(ptx, "div.full.f32") >= 1);
  CHECK(count(ptx, "sqrt.approx.f32") >= 1);
  CHECK(count(ptx, "div.rn.f32") >= 1);
  CHECK(count(ptx, "sqrt.rn.f32") >= 1);
}

TEST_CASE("fast_exp is Triton's ex2.approx.f32 of x·log2 e; exp puts the product's rounding back") {
  dump_dir d;
  auto k = tile::kernel("exps", [](tl::ptr<float> x, tl::ptr<float> y, tl::ptr<float> z) {
    auto o = tl::arange(0, 128);
    auto v = tl::load(x + o);
    tl::store(y + o, tl::fast_exp(v));
    tl::store(z + o, tl::exp(-v));  // (of v, LLVM would share fast_exp's product and ex2)
  });
  auto dev = tile::device::get("null");
  auto x = dev.alloc<float>(128), y = dev.alloc<float>(128), z = dev.alloc<float>(128);
  k[{1}](x, y, z);
  const std::string ptx = d.read("exps", "ptx");
  INFO(ptx);
  CHECK(count(ptx, "ex2.approx") == 2);  // one an element for each (one element a thread here)
  CHECK(count(ptx, "fma.rn.f32") == 3);  // exp's: the product's error, scaled, put back
  CHECK(count(ptx, "selp.f32") == 1);    // exp's one range check
}

TEST_CASE("a value converted once serves every later use that wants the same layout") {
  dump_dir d;
  auto dev = tile::device::get("null");
  auto in = dev.alloc<float>(64 * 64), a = dev.alloc<float>(64 * 64), b = dev.alloc<float>(64 * 64);
  transpose2[{1}](in, a, b);
  const std::string ptx = d.read("transpose2", "ptx");
  INFO(ptx);
  // one trip through shared memory: a barrier between its writes and its reads (a second
  // conversion would need a barrier before rewriting the buffer and another after)
  CHECK(count(ptx, "bar.sync") == 1);
  CHECK(count(ptx, "st.global") >= 2);
}

TEST_CASE("a scan of a long row runs in parallel: shfl.sync.up across lanes, warp totals through shared memory") {
  dump_dir d;
  auto dev = tile::device::get("null");
  auto x = dev.alloc<float>(4096), o = dev.alloc<float>(4096);
  long_cumsum[{1}](x, o, "num_warps"_c = 4);
  const std::string ptx = d.read("long_cumsum", "ptx");
  INFO(ptx);
  CHECK(count(ptx, "shfl.sync.up.b32") >= 5 + 1);  // 5 lane steps and the exclusive shift
  CHECK(count(ptx, "bar.sync") >= 1);
  CHECK(count(ptx, "ld.local") == 0);
}

namespace {
/// The PTX of `softmax` above for 4 rows of n columns (BLOCK = n) on `warps` warps.
std::string softmax_ptx(int n, int warps) {
  dump_dir d;
  auto dev = tile::device::get("null");
  auto in = dev.alloc<float>(static_cast<std::size_t>(4 * n)), out = dev.alloc<float>(static_cast<std::size_t>(4 * n));
  softmax[{4}](out, in, n, "BLOCK"_c = n, "num_warps"_c = warps);
  return d.read("softmax", "ptx");
}
}  // namespace

TEST_CASE("softmax: row reductions with butterfly shuffles, across warps through shared memory") {
  const std::string ptx = softmax_ptx(1024, 4);
  // per reduction (max, sum): 5 lane bits, then the 4 warps' partials read one a lane from shared
  // memory and folded by 2 more shuffles (not 4 loads and 3 combines in every thread)
  CHECK(count(ptx, "shfl.sync.bfly.b32") == 14);
  CHECK(count(ptx, "ld.shared.f32") == 2);
  CHECK(count(ptx, "ld.shared.v4") == 0);
  CHECK(count(ptx, "bar.sync") >= 2);
  CHECK(count(ptx, "ld.local") == 0);
  CHECK(count(ptx, "ex2.approx") >= 1);
  // exp and the division by the row's sum as batches (nvptx_math.cpp): 8 elements a thread, so
  // one fast path of exp (ex2.approx.ftz) behind one check, and one reciprocal of the sum shared
  // by the 8 quotients; the per-element forms (ex2.approx with its scaling, div.rn) only on the
  // fallback branches, each one element's code in a loop over the 8 (Lowering::each_in_loop)
  CHECK(count(ptx, "ex2.approx.ftz.f32") == 8);
  CHECK(count(ptx, "rcp.rn.f32") == 1);
  CHECK(count(ptx, "div.rn.f32") == 1);
  CHECK(count(ptx, "ex2.approx.f32") == 1);
  CHECK(count(ptx, ".pragma \"nounroll\"") == 2);
}

TEST_CASE("2-D: a row reduction broadcast back needs no layout conversion") {
  dump_dir d;
  auto dev = tile::device::get("null");
  auto in = dev.alloc<float>(32 * 64), out = dev.alloc<float>(32 * 64);
  rows[{1}](out, in, "M"_c = 32, "N"_c = 64);
  const std::string lay = d.read("rows", "layouts");
  INFO(lay);
  CHECK(lay.find("// layout conversions: 0") != std::string::npos);
  const std::string ptx = d.read("rows", "ptx");
  INFO(ptx);
  CHECK(count(ptx, "ld.global.v4") >= 1);
  CHECK(count(ptx, "shfl.sync.bfly") >= 1);
}

namespace {
/// A K loop of dots on one block; `Out` float stores the accumulator, f16 or bf16 the epilogue of
/// the tutorial's fused matmul: leaky ReLU, then the accumulator rounded to Out.
template <class Out>
auto mm_block = tile::kernel("mm_tile", [](tl::ptr<tile::half> a, tl::ptr<tile::half> b, tl::ptr<Out> c,
                                           tl::i32 k_tiles, tl::constexpr_<"BM"> BM, tl::constexpr_<"BN"> BN,
                                           tl::constexpr_<"BK"> BK) {
  using tl::_;
  using tl::newaxis;
  auto m = tl::arange(0, BM), n = tl::arange(0, BN), k = tl::arange(0, BK);
  auto a_ptrs = a + m(_, newaxis) * BK + k(newaxis, _);
  auto b_ptrs = b + k(_, newaxis) * BN + n(newaxis, _);
  auto acc = tl::zeros<float>({BM, BN});
  tl::for_range(0, k_tiles, [&](tl::tensor) {
    acc = tl::dot(tl::load(a_ptrs), tl::load(b_ptrs), acc);
    a_ptrs += BM * BK;
    b_ptrs += BK * BN;
  });
  if constexpr (std::is_same_v<Out, float>)
    tl::store(c + m(_, newaxis) * BN + n(newaxis, _), acc);
  else
    tl::store(c + m(_, newaxis) * BN + n(newaxis, _), tl::cast<Out>(tl::where(acc >= 0, acc, 0.01f * acc)));
});
auto& mm_tile = mm_block<float>;
/// A dot's 16-bit result reduced along its rows: the cast and the reduce run in the
/// accumulator's layout (forward from the dot), and only the 64 row sums move to the store's.
auto mm_rowsum = tile::kernel("mm_rowsum", [](tl::ptr<tile::half> a, tl::ptr<tile::half> b, tl::ptr<tile::half> c) {
  using tl::_;
  using tl::newaxis;
  auto m = tl::arange(0, 64), n = tl::arange(0, 128), k = tl::arange(0, 32);
  auto acc = tl::dot(tl::load(a + m(_, newaxis) * 32 + k(newaxis, _)), tl::load(b + k(_, newaxis) * 128 + n(newaxis, _)));
  tl::store(c + m, tl::sum(tl::cast<tile::half>(acc), 1));
});
auto mm_f32 = tile::kernel("mm_f32", [](tl::ptr<float> a, tl::ptr<float> b, tl::ptr<float> c) {
  using tl::_;
  using tl::newaxis;
  auto i = tl::arange(0, 32);
  auto o = i(_, newaxis) * 32 + i(newaxis, _);
  tl::store(c + o, tl::dot(tl::load(a + o), tl::load(b + o), tl::precision::ieee));
});
}  // namespace

TEST_CASE("chained dots on sm_80: every warp along M, and the first product, cast, is mma.sync's A from registers") {
  // s = q @ kᵀ, p = exp2(s - rowmax(s)), o = p.to(f16) @ v on 4 warps (layout/dot_chains.hpp,
  // register_operands.hpp): each warp 16 rows, 8 n-fragments, 4 k-steps a dot
  auto chain = tile::kernel("chain80", [](tl::ptr<tile::half> q, tl::ptr<tile::half> k, tl::ptr<tile::half> v,
                                          tl::ptr<float> out) {
    using tl::_;
    using tl::newaxis;
    auto i = tl::arange(0, 64);
    auto at = i(_, newaxis) * 64 + i(newaxis, _);
    auto s = tl::dot(tl::load(q + at), tl::load(k + i(newaxis, _) * 64 + i(_, newaxis)));  // q @ kᵀ
    auto p = tl::exp2(s - tl::max(s, 1)(_, newaxis));
    tl::store(out + at, tl::dot(tl::cast<tile::half>(p), tl::load(v + at)));
  });
  setenv("TILE_TARGET", "sm_80", 1);
  dump_dir d;
  auto dev = tile::device::get("null");
  auto q = dev.alloc<tile::half>(4096), k = dev.alloc<tile::half>(4096), v = dev.alloc<tile::half>(4096);
  auto out = dev.alloc<float>(4096);
  chain[{1}](q, k, v, out, "num_warps"_c = 4);
  unsetenv("TILE_TARGET");
  const std::string ptx = d.read("chain80", "ptx");
  INFO(ptx.substr(0, 4000));
  CHECK(count(ptx, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") == 2 * 8 * 4);
  // A from shared memory (ldmatrix .x4) for q alone: p is packed from the product's registers
  // (one cvt.rn.f16x2.f32 a pair: 16 rows x 64 columns a warp, 32 values a thread)
  CHECK(count(ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16") == 4);
  // B: kᵀ, loaded along k, is stored [N][K] as it runs (swizzled_transposed) and read by ldmatrix
  // without .trans; v, loaded along n, is stored [K][N] and read with .trans
  CHECK(count(ptx, "ldmatrix.sync.aligned.m8n8.x2.shared.b16") == 8 * 4);
  CHECK(count(ptx, "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16") == 8 * 4);
  CHECK(count(ptx, "cvt.rn.f16x2.f32") == 16);
  // exp2 is ex2.approx.ftz alone, one an element (32 a thread), with no range check or fallback
  CHECK(count(ptx, "ex2.approx.ftz.f32") == 32);
  CHECK(count(ptx, "ex2.approx.f32") == 0);
  const std::string gtir = d.read("chain80", "gtir");
  CHECK(count(gtir, "mma = warp, warps = [4, 1]") == 2);
}

TEST_CASE("overlap_dots: two independent warpgroup dots of a loop body issue back to back, each waited for at its first use") {
  auto two = tile::kernel("two_dots", [](tl::ptr<tile::half> a, tl::ptr<tile::half> b, tl::ptr<tile::half> c,
                                         tl::ptr<tile::half> d, tl::ptr<float> out) {
    using tl::_;
    using tl::newaxis;
    auto r = tl::arange(0, 64);
    auto at = r(_, newaxis) * 64 + r(newaxis, _);
    auto av = tl::load(a + at), cv = tl::load(c + at);
    auto acc = tl::zeros<float>({64, 64});
    tl::for_range(0, 4, [&](tl::tensor j) {
      auto s1 = tl::dot(av, tl::load(b + j * 4096 + at));
      auto e = tl::exp2(s1 * 0.125f);
      auto s2 = tl::dot(cv, tl::load(d + j * 4096 + at));
      acc = acc + e * s2;
    });
    tl::store(out + at, acc);
  });
  setenv("TILE_TARGET", "sm_90a", 1);
  dump_dir dd;
  auto dev = tile::device::get("null");
  auto a = dev.alloc<tile::half>(4096), b = dev.alloc<tile::half>(4 * 4096), c = dev.alloc<tile::half>(4096);
  auto d = dev.alloc<tile::half>(4 * 4096);
  auto out = dev.alloc<float>(4096);
  two[{1}](a, b, c, d, out, "num_warps"_c = 4);
  unsetenv("TILE_TARGET");
  const std::string gtir = dd.read("two_dots", "gtir");
  INFO(gtir);
  // both dots in flight, the second right after the first (and the view of its ring buffer it
  // reads); the first waited for with the second
  // still running (pending 1), the second before the product's use (pending 0)
  CHECK(count(gtir, "mma = warpgroup, warps = [4, 1], in_flight}") == 2);
  const auto first = gtir.find("in_flight}");
  const auto second = gtir.find("in_flight}", first + 1);
  REQUIRE(second != std::string::npos);
  const std::string between = gtir.substr(first, second - first);  // (the second's buffer view moved with it)
  CHECK(count(between, "\n") == 2);
  CHECK(count(between, "buffer_index") == 1);
  CHECK(count(gtir, "mma_wait") == 2);
  CHECK(count(gtir, "{pending = 1} : f32[64,64]") == 1);
  CHECK(count(gtir, "{pending = 0} : f32[64,64]") == 1);
  const std::string ptx = dd.read("two_dots", "ptx");
  CHECK(count(ptx, "wgmma.wait_group.sync.aligned 1") >= 2);
}

namespace {
constexpr tiletest::needs needs_ptxas{"needs ptxas", []() -> std::string {
  return tile::jit::find_ptxas().empty() ? "no ptxas found (PATH, /usr/local/cuda/bin)" : "";
}};
}  // namespace

TEST_CASE("dot: f16/bf16 into f32 runs on tensor cores (mma.sync m16n8k16 on sm_80, wgmma on sm_90a); the accumulator stays in its layout through the K loop") {
  for (const char* target : {"sm_80", "sm_90a"}) {
    CAPTURE(target);
    setenv("TILE_TARGET", target, 1);
    dump_dir d;
    auto dev = tile::device::get("null");
    auto a = dev.alloc<tile::half>(64 * 32 * 4), b = dev.alloc<tile::half>(32 * 128 * 4);
    auto c = dev.alloc<float>(64 * 128);
    mm_tile[{1}](a, b, c, 4, "BM"_c = 64, "BN"_c = 128, "BK"_c = 32, "num_warps"_c = 4);
    const std::string ptx = d.read("mm_tile", "ptx");
    INFO(ptx.substr(0, 4000));
    if (std::string(target) == "sm_80") {
      // 4 warps as 2 x 2: each warp 32 x 64 of the tile = 2 x 8 fragments, 2 k-steps of 16
      CHECK(count(ptx, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") == 2 * 8 * 2);
    } else {
      // one warpgroup: wgmma m64n128k16, 2 k-steps, operands through shared-memory descriptors
      CHECK(count(ptx, "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16") == 2);
      CHECK(count(ptx, "mma.sync") == 0);
      CHECK(count(ptx, "wgmma.fence.sync.aligned") >= 1);
      CHECK(count(ptx, "wgmma.commit_group.sync.aligned") >= 1);
      CHECK(count(ptx, "wgmma.wait_group.sync.aligned 0") >= 1);
      // the K loop is pipelined: the copies' writes need no proxy fence (Triton's and CUTLASS's
      // copy-pipelined warpgroup loops have none)
      CHECK(count(ptx, "fence.proxy.async.shared::cta") == 0);
    }
    const std::string plan = d.read("mm_tile", "layouts");
    // the loop-carried accumulator: the dot's (mma) layout for the loop, converted once after it
    const auto for_line = plan.substr(plan.find(" = for "), plan.find('\n', plan.find(" = for ")) - plan.find(" = for "));
    CHECK(for_line.find("reg=[(0,1) (8,0)") != std::string::npos);
  }
  unsetenv("TILE_TARGET");
  {
    dump_dir d;
    auto dev = tile::device::get("null");
    auto a = dev.alloc<float>(1024), b = dev.alloc<float>(1024), c = dev.alloc<float>(1024);
    mm_f32[{1}](a, b, c);  // f32 at IEEE precision: not for f16 tensor cores
    CHECK(count(d.read("mm_f32", "ptx"), "mma.sync") == 0);
  }
}

TEST_CASE("dot epilogue: the activation runs in the accumulator's layout and the 16-bit result moves, packed and vectorized") {
  setenv("TILE_TARGET", "sm_90a", 1);
  auto dev = tile::device::get("null");
  auto a = dev.alloc<tile::half>(64 * 32 * 2), b = dev.alloc<tile::half>(32 * 128 * 2);
  auto check = [&](auto& kernel, auto c, const char* cvt) {
    CAPTURE(cvt);
    dump_dir d;
    kernel[{1}](a, b, c, 2, "BM"_c = 64, "BN"_c = 128, "BK"_c = 32, "num_warps"_c = 4);
    const std::string plan = d.read("mm_tile", "layouts");
    INFO(plan);
    // the cast to 16 bits keeps the accumulator's (mma) layout: the conversion moves 2 bytes an
    // element, not 4
    const auto cast_at = plan.find(" = cast ");
    REQUIRE(cast_at != std::string::npos);
    CHECK(plan.substr(cast_at, plan.find('\n', cast_at) - cast_at).find("reg=[(0,1) (8,0)") != std::string::npos);
    const std::string ptx = d.read("mm_tile", "ptx");
    INFO(ptx.substr(0, 4000));
    // 64 x 128 over 128 threads: 64 elements a thread, converted in pairs, through shared memory
    // as 32 words out and 8 16-byte vectors back, then 8 16-byte stores
    CHECK(count(ptx, cvt) == 32);
    CHECK(count(ptx, "st.shared.u32") + count(ptx, "st.shared.b32") == 32);
    CHECK(count(ptx, "ld.shared.v4") == 8);
    CHECK(count(ptx, "st.shared.f32") == 0);
    CHECK(count(ptx, "st.global.v4") == 8);
  };
  check(mm_block<tile::half>, dev.alloc<tile::half>(64 * 128), "cvt.rn.f16x2.f32");
  check(mm_block<tile::bfloat16>, dev.alloc<tile::bfloat16>(64 * 128), "cvt.rn.bf16x2.f32");
  {
    dump_dir d;
    mm_rowsum[{1}](a, b, dev.alloc<tile::half>(64), "num_warps"_c = 4);
    const std::string plan = d.read("mm_rowsum", "layouts");
    INFO(plan);
    const auto dot_at = plan.find(" = dot "), cast_at = plan.find(" = cast ");
    REQUIRE(dot_at != std::string::npos);
    REQUIRE(cast_at != std::string::npos);
    auto layout_of = [&](std::size_t at) {
      const std::string line = plan.substr(at, plan.find('\n', at) - at);
      return line.substr(line.find("#linear"));
    };
    CHECK(layout_of(cast_at) == layout_of(dot_at));
    int tile_conversions = 0;  // of the product itself (the row sums' is expected)
    std::istringstream lines(plan);
    for (std::string line; std::getline(lines, line);)
      tile_conversions += line.find(" = convert_layout ") != std::string::npos && line.find("[64,128]") != std::string::npos;
    CHECK(tile_conversions == 0);
  }
  unsetenv("TILE_TARGET");
}

TEST_CASE("dot K loop: software-pipelined (num_stages) — operands copied ahead with cp.async into a ring of shared buffers") {
  for (const char* target : {"sm_80", "sm_90a"}) {
    CAPTURE(target);
    setenv("TILE_TARGET", target, 1);
    for (int stages : {1, 2, 3, 4}) {
      CAPTURE(stages);
      dump_dir d;
      auto dev = tile::device::get("null");
      auto a = dev.alloc<tile::half>(64 * 32 * 4), b = dev.alloc<tile::half>(32 * 64 * 4);
      auto c = dev.alloc<float>(64 * 64);
      mm_tile[{1}](a, b, c, 4, "BM"_c = 64, "BN"_c = 64, "BK"_c = 32, "num_warps"_c = 4, "num_stages"_c = stages);
      const std::string ptx = d.read("mm_tile", "ptx");
      const std::string plan = d.read("mm_tile", "layouts");
      INFO(plan);
      if (stages < 2) {
        CHECK(count(ptx, "cp.async") == 0);
        CHECK(plan.find("pipelined") == std::string::npos);
        continue;
      }
      CHECK(plan.find("pipelined, " + std::to_string(stages) + " stages (") != std::string::npos);
      CHECK(plan.find("), 2 loads copied " + std::to_string(stages - 1) + " iterations ahead (copies in runs of 8 8 elements)") != std::string::npos);
      // sm_90a: the wgmma of iteration i still runs while i + 1 starts, in one more buffer
      const bool wg = std::string(target) == "sm_90a";
      CHECK(plan.find(std::to_string(stages + (wg ? 1 : 0)) + " buffers" + (wg ? ", the dots left in flight)" : ")")) != std::string::npos);
      // A 64 x 32 and B 32 x 64 halves in 16-byte copies over 128 threads: 2 + 2 per thread and
      // iteration, in the loop and in each of the stages - 1 prologue iterations
      CHECK(count(ptx, "cp.async.cg.shared.global") == 4 * stages);
      CHECK(count(ptx, "cp.async.commit_group") == stages);
      // in the loop: until the group of this iteration has landed; after it: the drain
      if (stages > 2) CHECK(count(ptx, "cp.async.wait_group " + std::to_string(stages - 2) + ";") == 1);
      CHECK(count(ptx, "cp.async.wait_group 0;") == (stages == 2 ? 2 : 1));
      if (std::string(target) == "sm_80") {
        // 4 warps as 2 x 2: each 32 x 32 = 2 x 4 fragments, 2 k-steps of 16
        CHECK(count(ptx, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") == 2 * 4 * 2);
        CHECK(count(ptx, "ldmatrix") > 0);
      } else {
        // wgmma m64n64k16 straight from the ring (swizzled tiles), 2 k-steps; the copies read
        // after the wait and the barrier, with no proxy fence in the loop
        CHECK(count(ptx, "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16") == 2);
        CHECK(count(ptx, "ldmatrix") == 0);
        CHECK(count(ptx, "fence.proxy.async.shared::cta") == 0);
      }
    }
  }
  unsetenv("TILE_TARGET");
}

namespace {
// A [M, K] @ B [K, N] through tensor descriptors, one program, K steps of BK
auto mm_desc = tile::kernel("mm_desc", [](tl::ptr<tile::half> a, tl::ptr<tile::half> b, tl::ptr<float> c, tl::i32 M,
                                          tl::i32 N, tl::i32 K, tl::constexpr_<"BM"> BM, tl::constexpr_<"BN"> BN,
                                          tl::constexpr_<"BK"> BK) {
  auto ad = tl::make_tensor_descriptor(a, {M, K}, {K, 1}, {BM, BK});
  auto bd = tl::make_tensor_descriptor(b, {K, N}, {N, 1}, {BK, BN});
  auto acc = tl::zeros<float>({BM, BN});
  tl::for_range(0, tl::cdiv(K, BK), [&](tl::tensor k) { acc = tl::dot(ad.load({0, k * BK}), bd.load({k * BK, 0}), acc); });
  tl::make_tensor_descriptor(c, {M, N}, {N, 1}, {BM, BN}).store({0, 0}, acc);
});
}  // namespace

TEST_CASE("tensor descriptors in a dot K loop: TMA copies completing on mbarriers on sm_90a, cp.async on sm_80") {
  {
    setenv("TILE_TARGET", "sm_90a", 1);
    setenv("TILE_WARP_SPECIALIZE", "0", 1);  // (the one-partition form only)
    dump_dir d;
    auto dev = tile::device::get("null");  // (a null device compiles for the TILE_TARGET it was opened under)
    auto a = dev.alloc<tile::half>(128 * 256), b = dev.alloc<tile::half>(256 * 256);
    auto c = dev.alloc<float>(128 * 256);
    // B 64 x 256: four boxes of 64 x 64 (128-byte rows, 128-byte swizzle) a stage; A one 128 x 64
    mm_desc[{1}](a, b, c, 128, 256, 256, "BM"_c = 128, "BN"_c = 256, "BK"_c = 64, "num_warps"_c = 8, "num_stages"_c = 3);
    const std::string ptx = d.read("mm_desc", "ptx");
    const std::string plan = d.read("mm_desc", "layouts");
    INFO(plan);
    CHECK(plan.find("pipelined, 3 stages (4 buffers, the dots left in flight), 2 loads copied 3 iterations ahead (tensor copies: boxes of 128x64 "
                    "(tensor map 0) 64x64 (tensor map 1))") != std::string::npos);
    // two hidden 128-byte parameters, read in place
    CHECK(count(ptx, ".param .align 64 .b8 tile_mm_desc_param_6[128]") == 1);
    CHECK(count(ptx, ".param .align 64 .b8 tile_mm_desc_param_7[128]") == 1);
    CHECK(count(ptx, "cvta.param.u64") == 2);
    // one barrier a buffer, initialized and retired once; (1 + 4) boxes for each of the 3
    // prologue iterations (the copies run 3 iterations ahead: every buffer but the one the
    // wgmma left in flight reads) and the loop's, one expect_tx each; one wait in the loop, and
    // one CTA barrier, after the dots
    CHECK(count(ptx, "mbarrier.init.shared::cta.b64") == 4);
    CHECK(count(ptx, "mbarrier.inval.shared::cta.b64") == 4);
    CHECK(count(ptx, "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes") == 5 * 4);
    CHECK(count(ptx, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r") == 4);
    CHECK(count(ptx, "], 49152;") == 4);  // 128 x 64 + 64 x 256 halves
    CHECK(count(ptx, "mbarrier.try_wait.parity.shared::cta.b64") == 1);
    CHECK(count(ptx, "cp.async.cg") == 0);
    CHECK(count(ptx, "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16") == 4);
    CHECK(count(ptx, "ld.local") + count(ptx, "st.local") == 0);
  }
  {
    setenv("TILE_TARGET", "sm_80", 1);
    dump_dir d;
    auto dev = tile::device::get("null");
    auto a = dev.alloc<tile::half>(128 * 256), b = dev.alloc<tile::half>(256 * 256);
    auto c = dev.alloc<float>(128 * 256);
    mm_desc[{1}](a, b, c, 128, 256, 256, "BM"_c = 128, "BN"_c = 128, "BK"_c = 32, "num_warps"_c = 4, "num_stages"_c = 3);
    const std::string ptx = d.read("mm_desc", "ptx");
    CHECK(count(ptx, "cp.async.bulk") == 0);
    CHECK(count(ptx, "mbarrier") == 0);
    CHECK(count(ptx, "cp.async.cg.shared.global") > 0);  // the masked loads, pipelined as always
  }
  unsetenv("TILE_TARGET");
  unsetenv("TILE_WARP_SPECIALIZE");
}

namespace {
// a descriptor matmul whose loop also stores: not pipelined (a copy issued early must not pass a
// store), so its descriptor loads, kept for the TMA at first, are compiled again as masked loads
auto mm_desc_store = tile::kernel("mm_desc_store", [](tl::ptr<tile::half> a, tl::ptr<tile::half> b, tl::ptr<float> c,
                                                      tl::ptr<std::int32_t> log, tl::i32 K) {
  auto ad = tl::make_tensor_descriptor(a, {64, K}, {K, 1}, {64, 64});
  auto bd = tl::make_tensor_descriptor(b, {K, 64}, {64, 1}, {64, 64});
  auto acc = tl::zeros<float>({64, 64});
  tl::for_range(0, tl::cdiv(K, 64), [&](tl::tensor k) {
    acc = tl::dot(ad.load({0, k * 64}), bd.load({k * 64, 0}), acc);
    tl::store(log + k, k);
  });
  tl::make_tensor_descriptor(c, {64, 64}, {64, 1}, {64, 64}).store({0, 0}, acc);
});
}  // namespace

namespace {
// writes A, then reads it through the TMA: the writes must reach the async proxy first
auto mm_desc_after_store = tile::kernel("mm_desc_after_store", [](tl::ptr<tile::half> a, tl::ptr<tile::half> b,
                                                                  tl::ptr<float> c, tl::i32 K) {
  tl::store(a + tl::arange(0, 64), tl::zeros<tile::half>({64}));
  auto ad = tl::make_tensor_descriptor(a, {64, K}, {K, 1}, {64, 64});
  auto bd = tl::make_tensor_descriptor(b, {K, 64}, {64, 1}, {64, 64});
  auto acc = tl::zeros<float>({64, 64});
  tl::for_range(0, tl::cdiv(K, 64), [&](tl::tensor k) { acc = tl::dot(ad.load({0, k * 64}), bd.load({k * 64, 0}), acc); });
  tl::make_tensor_descriptor(c, {64, 64}, {64, 1}, {64, 64}).store({0, 0}, acc);
});
}  // namespace

TEST_CASE("a TMA ring reading what the kernel wrote before it: fence.proxy.async.global, then the barrier") {
  setenv("TILE_TARGET", "sm_90a", 1);
  dump_dir d;
  auto dev = tile::device::get("null");
  auto a = dev.alloc<tile::half>(64 * 256), b = dev.alloc<tile::half>(256 * 64);
  auto c = dev.alloc<float>(64 * 64);
  mm_desc_after_store[{1}](a, b, c, 256, "num_warps"_c = 4, "num_stages"_c = 3);
  const std::string ptx = d.read("mm_desc_after_store", "ptx");
  CHECK(count(ptx, "cp.async.bulk.tensor") > 0);
  const auto fence = ptx.find("fence.proxy.async.global;");
  REQUIRE(fence != std::string::npos);
  CHECK(fence < ptx.find("cp.async.bulk.tensor"));
  CHECK(ptx.find("bar.sync", fence) < ptx.find("cp.async.bulk.tensor"));
  unsetenv("TILE_TARGET");
}

namespace {
// a descriptor matmul that also stores the A block it multiplies
auto mm_desc_copy = tile::kernel("mm_desc_copy", [](tl::ptr<tile::half> a, tl::ptr<tile::half> b, tl::ptr<float> c,
                                                    tl::ptr<tile::half> a_copy, tl::i32 K) {
  using tl::_;
  using tl::newaxis;
  auto ad = tl::make_tensor_descriptor(a, {64, K}, {K, 1}, {64, 64});
  auto bd = tl::make_tensor_descriptor(b, {K, 64}, {64, 1}, {64, 64});
  auto r = tl::arange(0, 64);
  auto acc = tl::zeros<float>({64, 64});
  tl::for_range(0, tl::cdiv(K, 64), [&](tl::tensor k) {
    auto at = ad.load({0, k * 64});
    acc = tl::dot(at, bd.load({k * 64, 0}), acc);
    tl::store(a_copy + k * 4096 + r(_, newaxis) * 64 + r(newaxis, _), at);
  });
  tl::store(c + r(_, newaxis) * 64 + r(newaxis, _), acc);
});
}  // namespace

TEST_CASE("tensor descriptors in a loop that cannot be pipelined: masked loads, no TMA, no mbarrier") {
  setenv("TILE_TARGET", "sm_90a", 1);
  dump_dir d;
  auto dev = tile::device::get("null");
  auto a = dev.alloc<tile::half>(64 * 256), b = dev.alloc<tile::half>(256 * 64);
  auto c = dev.alloc<float>(64 * 64);
  auto log = dev.alloc<std::int32_t>(4);
  mm_desc_store[{1}](a, b, c, log, 256, "num_warps"_c = 4, "num_stages"_c = 3);
  const std::string ptx = d.read("mm_desc_store", "ptx");
  CHECK(count(ptx, "cp.async.bulk") == 0);
  CHECK(count(ptx, "mbarrier") == 0);
  CHECK(count(ptx, "wgmma.mma_async") > 0);
  CHECK(count(ptx, ".b8 tile_mm_desc_store_param_5[128]") == 0);  // no hidden tensor-map parameter
  // a block the loop both multiplies and stores: not a tensor copy's (one of its readers is no dot)
  auto a_copy = dev.alloc<tile::half>(64 * 256);
  mm_desc_copy[{1}](a, b, c, a_copy, 256, "num_warps"_c = 4, "num_stages"_c = 3);
  const std::string copy_ptx = d.read("mm_desc_copy", "ptx");
  CHECK(count(copy_ptx, "cp.async.bulk") == 0);
  CHECK(count(copy_ptx, "wgmma.mma_async") > 0);
  unsetenv("TILE_TARGET");
}

namespace {
template <class In, class Out>
auto mm_typed = tile::kernel("mm_typed", [](tl::ptr<In> a, tl::ptr<In> b, tl::ptr<Out> c, tl::constexpr_<"PREC"> PREC) {
  using tl::_;
  using tl::newaxis;
  auto i = tl::arange(0, 64);
  auto o = i(_, newaxis) * 64 + i(newaxis, _);
  tl::store(c + o, tl::dot(tl::load(a + o), tl::load(b + o), static_cast<tl::precision>(PREC.value)));
});
template <class In, class Out>
std::string typed_ptx(tl::precision p) {
  dump_dir d;
  auto dev = tile::device::get("null");
  auto a = dev.alloc<In>(4096), b = dev.alloc<In>(4096);
  auto c = dev.alloc<Out>(4096);
  mm_typed<In, Out>[{1}](a, b, c, "PREC"_c = static_cast<int>(p));
  return d.read("mm_typed", "ptx");
}
}  // namespace

TEST_CASE("dot: tf32 (f32 at the default precision) and 8-bit integers run on tensor cores too; tf32x3 and ieee do not") {
  // 64 x 64 x 64 with 4 warps (2 x 2): each warp 32 x 32 = 2 x 4 fragments
  CHECK(count(typed_ptx<float, float>(tl::precision::tf32), "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32") == 8 * 8);
  CHECK(count(typed_ptx<std::int8_t, std::int32_t>(tl::precision::tf32), "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32") == 8 * 2);
  CHECK(count(typed_ptx<std::uint8_t, std::int32_t>(tl::precision::tf32), "m16n8k32.row.col.s32.u8.u8.s32") == 8 * 2);
  // bf16 (the default target, sm_90a): wgmma m64n64k16, one warpgroup, 4 k steps
  CHECK(count(typed_ptx<tile::bfloat16, float>(tl::precision::tf32), "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16") == 4);
  CHECK(count(typed_ptx<float, float>(tl::precision::ieee), "mma.sync") == 0);
  CHECK(count(typed_ptx<float, float>(tl::precision::tf32x3), "mma.sync") == 0);
}

TEST_CASE("a K loop whose A no copy can read in runs (column-major) still copies its B ahead into a ring") {
  // a [64 x 32] block of a column-major A runs along M, so no copy fills its swizzled [M][K]
  // buffer in runs: A is loaded and staged in each iteration, while B ([32 x 64], row-major) gets
  // a ring of its own (it used to cancel the loop's pipelining)
  auto mixed = tile::kernel("mixed_loads", [](tl::ptr<tile::half> a, tl::ptr<tile::half> b, tl::ptr<float> c, tl::i32 steps) {
    using tl::_;
    using tl::newaxis;
    auto r = tl::arange(0, 64), kk = tl::arange(0, 32);
    auto acc = tl::zeros<float>({64, 64});
    tl::for_range(0, steps, [&](tl::tensor j) {
      auto at = tl::load(a + (j * 32 + kk(newaxis, _)) * 64 + r(_, newaxis));
      auto bt = tl::load(b + (j * 32 + kk(_, newaxis)) * 64 + r(newaxis, _));
      acc = tl::dot(at, bt, acc);
    });
    tl::store(c + r(_, newaxis) * 64 + r(newaxis, _), acc);
  });
  for (const char* target : {"sm_80", "sm_90a"}) {
    CAPTURE(target);
    setenv("TILE_TARGET", target, 1);
    dump_dir d;
    auto dev = tile::device::get("null");
    auto a = dev.alloc<tile::half>(64 * 128), b = dev.alloc<tile::half>(128 * 64);
    auto c = dev.alloc<float>(64 * 64);
    mixed[{1}](a, b, c, 4, "num_warps"_c = 4);
    unsetenv("TILE_TARGET");
    const std::string gtir = d.read("mixed_loads", "gtir");
    INFO(gtir);
    const auto loop = gtir.find(" = for ");
    REQUIRE(loop != std::string::npos);
    // one ring, B's (f16[buffers, 32, 64] swizzled), filled by copies; A's load in the loop
    CHECK(count(gtir, "local_alloc {offset") == 1);
    CHECK(count(gtir, "x32x64") + count(gtir, ",32,64] #smem<swizzled>") == 1);
    CHECK(count(gtir, "async_copy") >= 2);
    CHECK(gtir.find(" = load ", loop) != std::string::npos);
  }
}

TEST_CASE("attention through tensor descriptors on sm_90a: K (read through tl::trans) and V copied by the TMA over Z * H * N_CTX rows") {
  // Triton 3.6's tutorial form (samples/attention_kernels.hpp): K and V named over all heads, the
  // extent Z * H * N_CTX computed in the kernel (the launch multiplies the arguments), K read
  // transposed: both fill rings of [64][128] boxes by tensor copies, the first dot reads K's as a
  // K-major B (the buffer's transposed view), the second takes P from registers
  auto fwd = make_attn_fwd_desc<tile::half>("attn_fwd_desc_test");
  setenv("TILE_TARGET", "sm_90a", 1);
  setenv("TILE_WARP_SPECIALIZE", "0", 1);  // (the one-partition form: no second, warp-specialized build)
  dump_dir d;
  auto dev = tile::device::get("null");
  const int Z = 1, H = 2, N = 512, D = 128;
  auto q = dev.alloc<tile::half>(Z * H * N * D), k = dev.alloc<tile::half>(Z * H * N * D), v = dev.alloc<tile::half>(Z * H * N * D);
  auto o = dev.alloc<tile::half>(Z * H * N * D);
  auto m = dev.alloc<float>(Z * H * N);
  fwd[{N / 128, Z * H}](0.125f, m, Z, H, q, k, v, o, N, "HEAD_DIM"_c = D, "BLOCK_M"_c = 128, "BLOCK_N"_c = 64, "STAGE"_c = 1,
                        "num_warps"_c = 8);
  unsetenv("TILE_WARP_SPECIALIZE");
  unsetenv("TILE_TARGET");
  const std::string ptx = d.read("attn_fwd_desc_test", "ptx");
  const std::string plan = d.read("attn_fwd_desc_test", "layouts");
  INFO(plan);
  CHECK(plan.find("2 loads copied 3 iterations ahead (tensor copies: boxes of 64x64 (tensor map 0) 64x64 (tensor map 1))") !=
        std::string::npos);
  CHECK(count(ptx, ".param .align 64 .b8 tile_attn_fwd_desc_test_param_9[128]") == 1);
  CHECK(count(ptx, ".param .align 64 .b8 tile_attn_fwd_desc_test_param_10[128]") == 1);
  // two boxes a block of each (128-element rows), 3 prologue iterations and the loop's
  CHECK(count(ptx, "cp.async.bulk.tensor.2d") == 4 * 4);
  CHECK(count(ptx, "cp.async.cg") + count(ptx, "cp.async.ca") == 0);
  // Q K^T: B K-major (no transpose bits); P V: A from registers, V's B transposed
  CHECK(count(ptx, "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16") == 8);
  CHECK(count(ptx, ", p, 1, 1, 0, 0;") == 8);
  CHECK(count(ptx, "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16") == 4);
  CHECK(count(ptx, "}, {%r") == 4);           // (A's registers)
  CHECK(count(ptx, ", p, 1, 1, 1;") == 4);    // (scale-d, imm-scale-a/b, tnspB)
  CHECK(count(ptx, "ld.local") + count(ptx, "st.local") == 0);
}

namespace {
/// make_attn_fwd_desc's kernel `name` compiled for sm_90a (null device, N = 512), launched with
/// warp_specialize = `ws` (-1: not given; TILE_WARP_SPECIALIZE=`env` then, where not null): its
/// dump's plan ("layouts"), GPU-level IR and PTX.
struct fwd_dump {
  std::string plan, gtir, ptx;
  int builds = 0;  // (the PTX files written: one a lowering)
};
fwd_dump fwd_desc_sm90a(const char* name, int D, int BM, int BN, int warps, bool causal, int ws, const char* env = nullptr) {
  auto fwd = make_attn_fwd_desc<tile::half>(name);
  setenv("TILE_TARGET", "sm_90a", 1);
  if (env) setenv("TILE_WARP_SPECIALIZE", env, 1);
  dump_dir d;
  auto dev = tile::device::get("null");
  const int Z = 1, H = 2, N = 512;
  auto t = [&] { return dev.alloc<tile::half>(Z * H * N * D); };
  auto q = t(), k = t(), v = t(), o = t();
  auto m = dev.alloc<float>(Z * H * N);
  const tile::grid3 grid{N / BM, Z * H};
  if (ws < 0)
    fwd[grid](0.125f, m, Z, H, q, k, v, o, N, "HEAD_DIM"_c = D, "BLOCK_M"_c = BM, "BLOCK_N"_c = BN, "STAGE"_c = causal ? 3 : 1,
              "num_warps"_c = warps);
  else
    fwd[grid](0.125f, m, Z, H, q, k, v, o, N, "HEAD_DIM"_c = D, "BLOCK_M"_c = BM, "BLOCK_N"_c = BN, "STAGE"_c = causal ? 3 : 1,
              "num_warps"_c = warps, "warp_specialize"_c = ws == 1);
  unsetenv("TILE_WARP_SPECIALIZE");
  unsetenv("TILE_TARGET");
  int builds = 0;
  for (const auto& e : fs::directory_iterator(d.dir)) builds += e.path().extension() == ".ptx";
  return {d.read(name, "layouts"), d.read(name, "gtir"), d.read(name, "ptx"), builds};
}
}  // namespace

namespace {
/// What the verifier says of the GPU-level IR `gtir` parsed back (empty: nothing wrong).
std::string verify_error(const std::string& gtir) {
  try {
    tile::ir::verify(*tile::ir::parse(gtir, "edited.gtir"), "parse");
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}
}  // namespace

TEST_CASE("warp specialization (warp_specialize = true): a producer warpgroup issues the attention's tensor copies, the consumers wait and release") {
  // FlashAttention-3's split of the descriptor forward at Triton's D = 128 config (128 / 128, 8
  // warps): 12 warps launched, the producer's first thread the only one to issue copies (two
  // boxes each of K and V a block, in its loop only: no prologue), the consumers' loop waiting on
  // the copy barrier and releasing the buffer the previous iteration's P V read (one arrival a
  // thread); no CTA barrier in the consumers' code (theirs is named barrier 1 of 256 threads);
  // registers moved from the producer (24) to the consumers (240) from 168 a thread
  const fwd_dump w = fwd_desc_sm90a("attn_fwd_ws_test", 128, 128, 128, 8, false, 1);
  INFO(w.plan);
  CHECK(count(w.plan, "warp-specialized: 4 producer warps after the kernel's 8 issue the tensor copies; registers a thread: consumers 240, producer 24") == 1);
  CHECK(count(w.gtir, "warp_specialize {producer_warps = 4, consumer_regs = 240, producer_regs = 24}") == 1);
  CHECK(count(w.gtir, "barrier_arrive ") == 1);
  CHECK(count(w.ptx, ".reqntid 384, 1, 1") == 1);
  CHECK(count(w.ptx, ".maxnreg 168") == 1);
  CHECK(count(w.ptx, "setmaxnreg.inc.sync.aligned.u32 240;") == 1);
  CHECK(count(w.ptx, "setmaxnreg.dec.sync.aligned.u32 24;") == 1);
  CHECK(count(w.ptx, "cp.async.bulk.tensor.2d") == 4);
  CHECK(count(w.ptx, "mbarrier.arrive.expect_tx") == 1);
  CHECK(count(w.ptx, "mbarrier.arrive.shared::cta.b64 _") == 1);
  CHECK(count(w.ptx, "bar.sync \t0;") == 1);  // (after the barriers' set-up, before the partitions)
  CHECK(count(w.ptx, "bar.sync 1, 256;") >= 3);
  CHECK(count(w.ptx, "ld.local") + count(w.ptx, "st.local") == 0);
  // TILE_WARP_SPECIALIZE=1 where the launch says nothing: the same code
  const fwd_dump env = fwd_desc_sm90a("attn_fwd_ws_env_test", 128, 128, 128, 8, false, -1, "1");
  CHECK(count(env.ptx, ".reqntid 384, 1, 1") == 1);
  CHECK(count(env.ptx, "setmaxnreg.inc.sync.aligned.u32 240;") == 1);
  // warp_specialize = false (over TILE_WARP_SPECIALIZE=1): the one-partition form (prologue
  // copies, a CTA barrier before each refill)
  const fwd_dump plain = fwd_desc_sm90a("attn_fwd_plain_test", 128, 128, 128, 8, false, 0, "1");
  CHECK(count(plain.plan, "warp-specialized") == 0);
  CHECK(count(plain.ptx, ".reqntid 256, 1, 1") == 1);
  CHECK(count(plain.ptx, "setmaxnreg") + count(plain.ptx, "bar.sync 1,") == 0);
  CHECK(count(plain.ptx, "cp.async.bulk.tensor.2d") == 4 * 3);
}

TEST_CASE("defer_dots: attention's P V issued in the next iteration, after its Q K^T, so that it runs during the softmax") {
  // the forward's loop: qk = dot(q, k) then the softmax, then acc = dot(p, v, acc * alpha), left
  // in flight. Deferred, each iteration issues its own Q K^T (left in flight) and the previous
  // iteration's P V (p carried as an f16 tile in registers, V's buffer by its slot), waits for
  // Q K^T with one group still running (pending 1), and for P V before acc * alpha; the first
  // iteration issues no P V (the dot's guard: iv != lo), the last P V is issued after the loop
  auto gtir_lines = [](const std::string& s) {
    std::vector<std::string> out;
    std::istringstream in(s);
    for (std::string l; std::getline(in, l);)
      if (l.find(" dot ") != std::string::npos || l.find("mma_wait") != std::string::npos || l.find(" for ") != std::string::npos ||
          l.find("yield") != std::string::npos)
        out.push_back(l);
    return out;
  };
  setenv("TILE_DEFER_DOTS", "1", 1);
  const fwd_dump w = fwd_desc_sm90a("attn_fwd_defer_test", 128, 128, 128, 8, false, 1);
  unsetenv("TILE_DEFER_DOTS");
  INFO(w.gtir);
  CHECK(count(w.gtir, "in_flight}") == 2);  // (the loop's Q K^T, and the last P V after it)
  CHECK(count(w.gtir, "in_flight = 2}") == 1);  // (the loop's P V: its issue does not wait for Q K^T)
  CHECK(count(w.gtir, "mma_wait") == 3);
  CHECK(count(w.gtir, "{pending = 1}") == 1);
  CHECK(count(w.ptx, "wgmma.mma_async") == 3 * 8);  // (Q K^T, P V in the loop and after it; 8 k-steps each)
  CHECK(count(w.ptx, "@g wgmma.mma_async") == 8);   // (the loop's P V, guarded)
  CHECK(count(w.ptx, "ld.local") + count(w.ptx, "st.local") == 0);
  // in the consumers' loop: Q K^T, P V (register A: the carried f16 tile), the wait for Q K^T
  const auto lines = gtir_lines(w.gtir);
  std::size_t loop = 0;
  while (loop < lines.size() && lines[loop].find(" for ") == std::string::npos) ++loop;
  for (std::size_t i = loop + 1; i < lines.size(); ++i)  // (the producer's loop first: no dot)
    if (lines[i].find(" for ") != std::string::npos) {
      loop = i;
      break;
    }
  REQUIRE(loop + 3 < lines.size());
  CHECK(lines[loop].find("f16[128,128]") != std::string::npos);  // (p carried)
  CHECK(lines[loop + 1].find("in_flight}") != std::string::npos);
  CHECK(lines[loop + 2].find("in_flight = 2}") != std::string::npos);
  CHECK(lines[loop + 3].find("{pending = 1}") != std::string::npos);
  // the guard, the deferred dot's fourth operand, prints and parses back; one that is not an i1
  // is an error naming the rule
  const std::regex guarded(R"(dot (%\d+), (%\d+), (%\d+), (%\d+) \{)");
  std::smatch m;
  REQUIRE(std::regex_search(w.gtir, m, guarded));
  CHECK(verify_error(w.gtir).empty());
  std::string bad = w.gtir;
  bad.replace(static_cast<std::size_t>(m.position(4)), static_cast<std::size_t>(m.length(4)), m.str(3));
  CHECK(verify_error(bad).find("a dot's guard must be an i1 scalar") != std::string::npos);
  // by default (TILE_DEFER_DOTS=0): P V issued where the source has it, waited for in the next
  // iteration
  const fwd_dump off = fwd_desc_sm90a("attn_fwd_nodefer_test", 128, 128, 128, 8, false, 1);
  CHECK(count(off.gtir, "in_flight}") == 1);
  CHECK(count(off.gtir, "{pending = 1}") == 0);
  CHECK(count(off.ptx, "wgmma.mma_async") == 2 * 8);
  CHECK(count(off.gtir, "barrier_arrive ") == 1);
}

TEST_CASE("take_turns (TILE_PINGPONG=1): the consumer warpgroups issue the attention loop's dots in turns") {
  // FlashAttention-3's ping-pong: with P V deferred, each iteration's dots are issued back to back
  // (Q K^T, the previous P V); warpgroup g waits on named barrier 2 + g for its turn before them
  // and passes it to the other one's after them, before it waits for Q K^T: one warpgroup's
  // softmax runs while the other's dots do. At the start of the consumers' region the last
  // warpgroup gives warpgroup 0 the first turn; at its end warpgroup 0 takes the one passed last
  // (every barrier balanced; loops in sequence go on taking turns)
  setenv("TILE_PINGPONG", "1", 1);
  const fwd_dump w = fwd_desc_sm90a("attn_fwd_pingpong_test", 128, 128, 128, 8, false, 1);
  const fwd_dump c = fwd_desc_sm90a("attn_fwd_pingpong_causal_test", 128, 128, 64, 8, true, 1);
  unsetenv("TILE_PINGPONG");
  INFO(w.gtir);
  CHECK(count(w.gtir, "turn_wait {groups = 2}") == 1);
  CHECK(count(w.gtir, "turn_pass {groups = 2}") == 1);
  CHECK(count(w.gtir, "turn_pass {groups = 2, group = 1}") == 1);
  CHECK(count(w.gtir, "turn_wait {groups = 2, group = 0}") == 1);
  CHECK(count(w.gtir, "{pending = 1}") == 1);  // (defer_dots' form)
  // in the loop: turn_wait, Q K^T, (the guard, V's buffer), P V, turn_pass, the wait for Q K^T
  std::vector<std::string> lines;
  {
    std::istringstream in(w.gtir);
    for (std::string l; std::getline(in, l);)
      if (l.find("turn_") != std::string::npos || l.find(" dot ") != std::string::npos || l.find("mma_wait") != std::string::npos ||
          l.find(" for ") != std::string::npos)
        lines.push_back(l);
  }
  auto at = [&](std::size_t i, const char* what) { return i < lines.size() && lines[i].find(what) != std::string::npos; };
  std::size_t first = 0;
  while (first < lines.size() && !at(first, "turn_pass {groups = 2, group = 1}")) ++first;
  CHECK(at(first + 1, " for "));
  CHECK(at(first + 2, "turn_wait {groups = 2}"));
  CHECK(at(first + 3, "in_flight}"));
  CHECK(at(first + 4, "in_flight = 2}"));
  CHECK(at(first + 5, "turn_pass {groups = 2}"));
  CHECK(at(first + 6, "{pending = 1}"));
  // the PTX: the barrier ids in registers, two warpgroups' 256 threads each
  CHECK(count(w.ptx, "bar.sync %r") == 2);
  CHECK(count(w.ptx, "bar.arrive %r") == 2);
  // (P V's issue leaves Q K^T running: the turn passes before the threads wait for Q K^T)
  CHECK(count(w.ptx, "wgmma.commit_group.sync.aligned;\n\twgmma.wait_group.sync.aligned 2;") == 1);
  const std::size_t pass = w.ptx.find("bar.arrive", w.ptx.find("wgmma.wait_group.sync.aligned 2;"));
  CHECK(w.ptx.substr(w.ptx.find("wgmma.wait_group.sync.aligned 2;"), pass - w.ptx.find("wgmma.wait_group.sync.aligned 2;")).find("wait_group.sync.aligned 1") == std::string::npos);
  const std::regex turn_bar(R"(bar\.(sync|arrive) %r\d+, 256;)");
  CHECK(std::distance(std::sregex_iterator(w.ptx.begin(), w.ptx.end(), turn_bar), std::sregex_iterator()) == 4);
  CHECK(count(w.ptx, "ld.local") + count(w.ptx, "st.local") == 0);
  // the IR parses back; turns outside the consumers' region are an error naming the rule
  CHECK(verify_error(w.gtir).empty());
  std::string bad = w.gtir;
  const std::size_t ws = bad.find("  warp_specialize {");
  REQUIRE(ws != std::string::npos);
  bad.insert(ws, "  turn_wait {groups = 2}\n");
  CHECK(verify_error(bad).find("turns are taken by a warp-specialized kernel's consumers") != std::string::npos);
  // turns among as many warpgroups as the consumers have (8 warps: 2)
  std::string three = w.gtir;
  const std::size_t in_loop = three.find("turn_wait {groups = 2}");
  REQUIRE(in_loop != std::string::npos);
  three.replace(in_loop, std::string("turn_wait {groups = 2}").size(), "turn_wait {groups = 3}");
  CHECK(verify_error(three).find("turns are taken by the consumers' warpgroups: num_warps / 4 of them") != std::string::npos);
  // the causal forward's two loops: turns in both, the first and the last once for the region
  INFO(c.gtir);
  CHECK(count(c.gtir, "turn_wait {groups = 2}") == 2);
  CHECK(count(c.gtir, "turn_pass {groups = 2}") == 2);
  CHECK(count(c.gtir, "turn_pass {groups = 2, group = 1}") == 1);
  CHECK(count(c.gtir, "turn_wait {groups = 2, group = 0}") == 1);
  CHECK(c.gtir.find("turn_pass {groups = 2, group = 1}") < c.gtir.find("turn_wait {groups = 2}"));
  CHECK(c.gtir.rfind("turn_wait {groups = 2, group = 0}") > c.gtir.rfind("turn_pass {groups = 2}"));
  // 4 warps (one warpgroup), or not warp-specialized: no turns
  setenv("TILE_PINGPONG", "1", 1);
  const fwd_dump one = fwd_desc_sm90a("attn_fwd_pingpong_one_test", 64, 64, 64, 4, false, 1);
  const fwd_dump plain = fwd_desc_sm90a("attn_fwd_pingpong_plain_test", 128, 128, 128, 8, false, 0);
  unsetenv("TILE_PINGPONG");
  CHECK(count(one.gtir, "{pending = 1}") == 1);
  CHECK(count(one.gtir, "turn_") + count(plain.gtir, "turn_") == 0);
}

TEST_CASE("take_turns: ptxas assembles the forwards whose consumer warpgroups take turns" * needs_ptxas) {
  setenv("TILE_PINGPONG", "1", 1);
  setenv("TILE_PTXAS_CHECK", "sm_90a", 1);
  for (const auto& [D, BN, causal] : {std::tuple{128, 128, false}, std::tuple{128, 64, true}, std::tuple{64, 128, false}}) {
    INFO("D = " << D << ", BLOCK_N = " << BN << (causal ? ", causal" : ""));
    CHECK_NOTHROW(fwd_desc_sm90a("attn_fwd_pingpong_ptxas_test", D, 128, BN, 8, causal, 1));
  }
  unsetenv("TILE_PTXAS_CHECK");
  unsetenv("TILE_PINGPONG");
}

TEST_CASE("warp specialization by default: the variant tried where the plain build holds one block an SM") {
  // the descriptor forward's plain builds on an H100 / H200 (ptxas's registers, 256 threads): D =
  // 128, 128 / 64 (189 registers, 160 KB) holds one block, so its warp-specialized build is tried;
  // D = 64, 128 / 64 (124 registers, 82 KB) holds two, which hide the copies' latency as well
  const tile::jit::sm_limits sm = tile::jit::sm_limits_of(90);
  tile::jit::ptx_kernel k;
  k.warp_specializable = true;
  tile::ir::Function fn;
  const tile::jit::block_use one{.threads = 256, .registers = 189, .shared_bytes = 163872};
  const tile::jit::block_use two{.threads = 256, .registers = 124, .shared_bytes = 82944};
  const auto v = tile::jit::warp_specialized_variant(sm, fn, k, one);
  REQUIRE(v);
  CHECK(v->warp_specialize);
  CHECK_FALSE(tile::jit::warp_specialized_variant(sm, fn, k, two));
  fn.warp_specialize = 0;  // the launch's warp_specialize = false
  CHECK_FALSE(tile::jit::warp_specialized_variant(sm, fn, k, one));
  fn.warp_specialize = 1;  // = true: the first build already is
  CHECK(tile::jit::first_options(fn).warp_specialize);
  CHECK_FALSE(tile::jit::first_options(fn).warp_specialize_by_shared);
  fn.warp_specialize = -1;
  CHECK_FALSE(tile::jit::first_options(fn).warp_specialize);
  CHECK(tile::jit::first_options(fn).warp_specialize_by_shared);  // (the compiler's choice: by the plain plan's rings)
  k.warp_specializable = false;  // a kernel that does not qualify
  CHECK_FALSE(tile::jit::warp_specialized_variant(sm, fn, k, one));
  // a first build the compiler made warp-specialized: the plain one tried only where it spills
  k.options.warp_specialize = true;
  CHECK_FALSE(tile::jit::plain_variant(fn, k, 0));
  REQUIRE(tile::jit::plain_variant(fn, k, 16));
  CHECK_FALSE(tile::jit::plain_variant(fn, k, 16)->warp_specialize);
  CHECK_FALSE(tile::jit::plain_variant(fn, k, 16)->warp_specialize_by_shared);
  fn.warp_specialize = 1;  // (the launch asked for it)
  CHECK_FALSE(tile::jit::plain_variant(fn, k, 16));
}

TEST_CASE("warp specialization by default: decided from the plain plan's rings, one build where they hold one block an SM") {
  // D = 128, 128 / 128: K's and V's rings alone keep a second block off the SM, so the first build
  // is the warp-specialized one and no plain build is made; D = 64, 128 / 64 (64 KB of rings):
  // the plain build (two blocks an SM)
  const fwd_dump wide = fwd_desc_sm90a("attn_fwd_ws_by_shared_test", 128, 128, 128, 8, false, -1);
  CHECK(wide.builds == 1);
  CHECK(count(wide.ptx, ".reqntid 384, 1, 1") == 1);
  const fwd_dump narrow = fwd_desc_sm90a("attn_fwd_plain_by_shared_test", 64, 128, 64, 8, false, -1);
  CHECK(narrow.builds == 1);
  CHECK(count(narrow.ptx, ".reqntid 256, 1, 1") == 1);
}

TEST_CASE("warp specialization of loops in sequence: the causal forward's two loops take turns on one set of rings where two do not fit") {
  // its two loops (the diagonal blocks, then the blocks before them) each fill 4 buffers of K and V
  // blocks (32 KB a buffer at D = 128, 128 / 64): two rings each would not fit beside Q, and the
  // producer may fill the second loop's buffers while the consumers are still in the first, so
  // both loops run on one ring (one pair of barrier arrays), the slot and phase going on from the
  // first loop to the second on both sides; the first loop's last buffer is released after it
  const fwd_dump w = fwd_desc_sm90a("attn_fwd_ws_causal_test", 128, 128, 64, 8, true, 1);
  INFO(w.plan);
  CHECK(count(w.plan, "131104 bytes of rings") == 2);
  CHECK(count(w.plan, "warp-specialized: 4 producer warps") == 1);
  CHECK(count(w.plan, "loops of one ring shape take turns on one set of rings") == 1);
  CHECK(count(w.gtir, "local_alloc {offset") == 2 + 2);  // (K's and V's rings, both barrier arrays; Q's staging has an operand)
  CHECK(count(w.gtir, "barrier_arrive ") == 3);          // (each loop's, and after the first)
  CHECK(count(w.gtir, "copy_barrier_inval ") == 2);          // (after the second loop only)
  CHECK(count(w.ptx, "cp.async.bulk.tensor.2d") == 2 * 4);   // (two producer loops, two boxes of K and of V)
  CHECK(count(w.ptx, "ld.local") + count(w.ptx, "st.local") == 0);
  // at D = 64 each loop's own rings fit (2 x 64 KB): the producer fills the second loop's while
  // the consumers are still in the first
  const fwd_dump s = fwd_desc_sm90a("attn_fwd_ws_causal64_test", 64, 128, 64, 8, true, 1);
  INFO(s.plan);
  CHECK(count(s.plan, "warp-specialized") == 1);
  CHECK(count(s.plan, "take turns") == 0);
  CHECK(count(s.gtir, "local_alloc {offset") == 2 * (2 + 2));
  CHECK(count(s.gtir, "barrier_arrive ") == 2);
  CHECK(count(s.ptx, "ld.local") + count(s.ptx, "st.local") == 0);
}

namespace {
/// make_attn_bwd_desc's kernel `name` at HEAD_DIM `D` compiled for sm_90a (null device; sample 09's
/// blocks 32/64/64/32, N = 512): its dump's plan ("layouts") and PTX.
std::pair<std::string, std::string> bwd_desc_sm90a(const char* name, int D, bool causal) {
  auto bwd = make_attn_bwd_desc<tile::half>(name);
  setenv("TILE_TARGET", "sm_90a", 1);
  dump_dir d;
  auto dev = tile::device::get("null");
  const int Z = 1, H = 2, N = 512;
  auto t = [&] { return dev.alloc<tile::half>(Z * H * N * D); };
  auto q = t(), k = t(), v = t(), d_o = t(), dq = t(), dk = t(), dv = t();
  auto m = dev.alloc<float>(Z * H * N), delta = dev.alloc<float>(Z * H * N);
  bwd[{N / 64, 1, Z * H}](q, k, v, 0.125f, d_o, dq, dk, dv, m, delta, Z, H, N, "BLOCK_M1"_c = 32, "BLOCK_N1"_c = 64,
                          "BLOCK_M2"_c = 64, "BLOCK_N2"_c = 32, "BLK_SLICE_FACTOR"_c = 2, "HEAD_DIM"_c = D, "CAUSAL"_c = causal);
  unsetenv("TILE_TARGET");
  return {d.read(name, "layouts"), d.read(name, "ptx")};
}
}  // namespace

TEST_CASE("attention backward through tensor descriptors on sm_90a: a block two dots read, one transposed, is one TMA ring") {
  // dK/dV's loop reads each block of Q twice (K Qᵀ, and dSᵀ Q) and of dO twice (P̃ᵀ dO, V dOᵀ); dQ's
  // reads K and V blocks (Q Kᵀ, dO Vᵀ, dS K): each block one ring, filled by tensor copies
  const auto [plan, ptx] = bwd_desc_sm90a("attn_bwd_desc_test", 64, false);
  INFO(plan);
  CHECK(count(plan, "2 loads copied 3 iterations ahead (tensor copies: boxes of 32x64") == 2);
  CHECK(count(ptx, "cp.async.bulk.tensor.2d") == 2 * 2 * 4);  // two loops: two blocks, 3 prologue iterations and the loop's
  CHECK(count(ptx, "cp.async.cg") + count(ptx, "cp.async.ca") == 0);
  CHECK(count(ptx, "ld.local") + count(ptx, "st.local") == 0);
}

TEST_CASE("four TMA loops in sequence: the rings' shared memory counts no staging buffer of another loop") {
  // the causal backward at D = 128 has four loops (the diagonal's slices, then the rest, for dK/dV
  // and for dQ), each staging its blocks inside its body: counted all at once they left no room
  // for a ring, so no loop kept its descriptor loads for the TMA
  const auto [plan, ptx] = bwd_desc_sm90a("attn_bwd_desc_causal_test", 128, true);
  INFO(plan);
  CHECK(count(plan, "(tensor copies: boxes of 16x64") == 2);  // (the diagonal's slices of 16 rows)
  CHECK(count(plan, "(tensor copies: boxes of 32x64") == 2);
  CHECK(count(ptx, "cp.async.cg") == 0);
}

TEST_CASE("the matmul bench's K loops on sm_90a: ptxas serializes none of their asynchronous dots" * needs_ptxas) {
  // (a path that skips a loop whose dots are left in flight must not meet the loop's exit before
  // their wait: TILE_PTXAS_CHECK fails on ptxas's C7515)
  setenv("TILE_TARGET", "sm_90a", 1);
  setenv("TILE_PTXAS_CHECK", "sm_90a", 1);
  auto dev = tile::device::get("null");
  const std::int32_t n = 512;
  auto a = dev.alloc<tile::half>(std::size_t(n) * n), b = dev.alloc<tile::half>(std::size_t(n) * n);
  auto c = dev.alloc<tile::half>(std::size_t(n) * n);
  auto plain = bench::make_matmul();
  auto desc = bench::make_matmul_desc_t<tile::half>();
  for (const auto& [bm, bn, bk, w, st] : std::vector<std::array<int, 5>>{{128, 256, 64, 8, 3}, {64, 128, 32, 4, 4}}) {
    CAPTURE(bm);
    const std::uint32_t grid = std::uint32_t(tile::cdiv(n, bm) * tile::cdiv(n, bn));
    CHECK_NOTHROW(plain[{grid}](a, b, c, n, n, n, n, 1, n, 1, n, 1, "BLOCK_M"_c = bm, "BLOCK_N"_c = bn, "BLOCK_K"_c = bk,
                                "GROUP_M"_c = 8, "num_warps"_c = w, "num_stages"_c = st));
    CHECK_NOTHROW(desc[{grid}](a, b, c, n, n, n, n, 1, n, 1, n, 1, "BLOCK_M"_c = bm, "BLOCK_N"_c = bn, "BLOCK_K"_c = bk,
                               "GROUP_M"_c = 8, "num_warps"_c = w, "num_stages"_c = st, "ACTIVATION"_c = false));
  }
  unsetenv("TILE_PTXAS_CHECK");
  unsetenv("TILE_TARGET");
}
