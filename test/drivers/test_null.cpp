// test/drivers/test_null.cpp — the null backend (TILE_BACKEND=null: compile only) and the ptxas
// plumbing around it (src/drivers/null, src/jit/ptxas.cpp, TILE_PTXAS_CHECK).
//
//  - devices: device::get("null") for TILE_TARGET (default sm_90a), one device per target,
//    computes() false, never picked by best() unless TILE_BACKEND names it; TILE_TARGET errors
//  - memory: uploads, to_host, fills and views work (host memory)
//  - launches: a kernel compiles (PTX, and a cubin where ptxas is present, both written into
//    TILE_DUMP_DIR), the launch is checked and runs nothing; a grid over the limits names the
//    kernel and this file's line; the driver's own checks (grid, threads, shared memory, null
//    pointers) against sm_90a's and sm_80's limits
//  - ptxas: finding it (TILE_PTXAS), running it on good and bad PTX, a rejection naming the kernel
//    and quoting ptxas; TILE_PTXAS_CHECK on the interpreter
// The tests that run ptxas are reported as skipped where there is none (test/requires.hpp).
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <source_location>
#include <string>
#include <tuple>
#include <tile/tile.hpp>
#include <vector>

#include "drivers/null/null_driver.hpp"
#include "jit/occupancy.hpp"
#include "jit/ptxas.hpp"
#include "row_softmax.hpp"
#include "../../samples/attention_kernels.hpp"
#include "runtime/kernel_access.hpp"
#include "../requires.hpp"

using namespace tile::literals;
namespace fs = std::filesystem;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

/// Sets an environment variable for the scope (nullptr: unsets it), restoring it after.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~scoped_env() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

/// A fresh directory, removed at the end of the scope.
struct temp_dir {
  fs::path path;
  explicit temp_dir(const std::string& tag) {
    static int n = 0;
    path = fs::temp_directory_path() / ("tile-null-test-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  /// The files in the directory whose names start with `prefix` and end with `ext`.
  std::vector<std::string> files(const std::string& prefix, const std::string& ext) const {
    std::vector<std::string> out;
    for (auto& e : fs::directory_iterator(path)) {
      std::string n = e.path().filename().string();
      if (n.rfind(prefix, 0) == 0 && ends_with(n, ext)) out.push_back(n);
    }
    return out;
  }
};

/// The tile::error `f` throws (fails the test when it throws none).
tile::error error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const tile::error& e) {
    return e;
  }
  FAIL("no tile::error was thrown");
  return tile::error("");
}

tile::device null_dev() { return tile::device::get("null"); }

// Each test launches kernels of its own: a kernel compiles once per specialization and device,
// and only a compile writes artifacts or runs the checks.
auto add_null = tile::kernel("add_null", [](tl::ptr<float> x, tl::ptr<float> y, tl::ptr<float> out, tl::i32 n,
                                            tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs < n;
  tl::store(out + offs, tl::load(x + offs, mask) + tl::load(y + offs, mask), mask);
});

auto scale_grid = tile::kernel("scale_grid", [](tl::ptr<float> x, tl::i32 n, tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs < n;
  tl::store(x + offs, tl::load(x + offs, mask) * 2.0f, mask);
});

auto copy_checked = tile::kernel("copy_checked", [](tl::ptr<float> x, tl::ptr<float> out, tl::i32 n,
                                                    tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs < n;
  tl::store(out + offs, tl::load(x + offs, mask) + 1.0f, mask);
});

auto copy_bad_arch = tile::kernel("copy_bad_arch", [](tl::ptr<float> x, tl::ptr<float> out, tl::i32 n,
                                                      tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs < n;
  tl::store(out + offs, tl::load(x + offs, mask), mask);
});

auto copy_no_ptxas = tile::kernel("copy_no_ptxas", [](tl::ptr<float> x, tl::ptr<float> out, tl::i32 n,
                                                      tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs < n;
  tl::store(out + offs, tl::load(x + offs, mask) - 1.0f, mask);
});

const char* const kGoodPtx =
    ".version 7.0\n.target sm_80\n.address_size 64\n\n.visible .entry tile_noop()\n{\n\tret;\n}\n";
const char* const kBadPtx =
    ".version 7.0\n.target sm_80\n.address_size 64\n\n.visible .entry tile_noop()\n{\n\tnonsense;\n\tret;\n}\n";

/// The test cases that run ptxas need it (skipped where there is none).
constexpr tiletest::needs needs_ptxas{"needs ptxas", []() -> std::string {
  try {
    return tile::jit::find_ptxas().empty() ? "no ptxas (PATH, /usr/local/cuda/bin, TILE_PTXAS)" : "";
  } catch (const tile::error& e) {
    return e.message();
  }
}};

/// ptxas's path (in a test case that needs_ptxas: there is one).
std::string ptxas_path() {
  std::string p = tile::jit::find_ptxas();
  REQUIRE_MESSAGE(!p.empty(), "no ptxas");
  return p;
}

}  // namespace

// ---- devices ----------------------------------------------------------------------------------

TEST_CASE("null: a backend get() opens, compile only, for TILE_TARGET (default sm_90a)") {
  scoped_env t("TILE_TARGET", nullptr);
  auto d = null_dev();
  CHECK(d.backend() == "null");
  CHECK(d.name() == "null (sm_90a)");
  CHECK_FALSE(d.computes());
  CHECK(d == null_dev());  // one device per target
  CHECK(tile::device::get("interpreter").computes());
  d.synchronize();
  d.default_stream().synchronize();

  auto list = tile::device::backends();
  auto it = std::find_if(list.begin(), list.end(), [](const auto& b) { return b.name == "null"; });
  REQUIRE(it != list.end());
  CHECK(it->available);
  CHECK(list.back().name == "null");  // last in preference

  scoped_env t80("TILE_TARGET", "sm_80");
  auto d80 = null_dev();
  CHECK(d80.name() == "null (sm_80)");
  CHECK_FALSE(d80 == d);
}

TEST_CASE("null: best() picks it only when TILE_BACKEND says so") {
  {
    scoped_env b("TILE_BACKEND", nullptr);
    CHECK(tile::device::best().backend() != "null");
    CHECK(tile::device::best().computes());
  }
  scoped_env b("TILE_BACKEND", "null");
  scoped_env t("TILE_TARGET", "sm_90");
  CHECK(tile::device::best().backend() == "null");
  CHECK(tile::device::best().name() == "null (sm_90)");
}

TEST_CASE("null: a TILE_TARGET that is not an NVIDIA arch is a clear error") {
  for (const char* bad : {"sm_42", "gfx90a", "banana"}) {
    CAPTURE(bad);
    scoped_env t("TILE_TARGET", bad);
    auto e = error_of([] { (void)null_dev(); });
    const std::string m = e.message();
    CHECK(contains(m, "backend 'null' is not available"));
    CHECK(contains(m, std::string("TILE_TARGET=") + bad));
    CHECK(contains(m, "sm_90a"));  // the supported list
    auto list = tile::device::backends();
    auto it = std::find_if(list.begin(), list.end(), [](const auto& b) { return b.name == "null"; });
    REQUIRE(it != list.end());
    CHECK_FALSE(it->available);
    CHECK(contains(it->reason, std::string("TILE_TARGET=") + bad));
  }
  scoped_env t("TILE_TARGET", "90a");  // the other spellings parse_arch accepts
  CHECK(null_dev().name() == "null (sm_90a)");
}

// ---- memory -----------------------------------------------------------------------------------

TEST_CASE("null: uploads, to_host, fills and views") {
  auto d = null_dev();
  std::vector<float> h = {1.f, 2.5f, -3.f, 4.f, 1e30f};
  auto b = d.upload(h);
  CHECK(b.size() == h.size());
  CHECK(b.address() != 0);
  CHECK(b.to_host() == h);
  auto z = d.alloc<int>(100);
  CHECK(z.to_host() == std::vector<int>(100, 0));  // zeroed, like every backend's memory
  b.fill_zero();
  CHECK(b.to_host() == std::vector<float>(h.size(), 0.f));
  b.copy_from(h);
  CHECK(b.view(1, 3).address() == b.address() + sizeof(float));
  auto empty = d.alloc<double>(0);
  CHECK(empty.to_host().empty());
}

// ---- launches -----------------------------------------------------------------------------------

TEST_CASE("null: a launch compiles the kernel, writes its PTX (and cubin) and runs nothing") {
  temp_dir dump("dump");
  scoped_env dd("TILE_DUMP_DIR", dump.path.c_str());
  scoped_env t("TILE_TARGET", nullptr);
  auto d = null_dev();
  const int n = 1000;
  auto x = d.upload(std::vector<float>(n, 1.f)), y = d.upload(std::vector<float>(n, 2.f));
  auto out = d.alloc<float>(n);
  add_null[{tile::cdiv(n, 256)}](x, y, out, n, "BLOCK"_c = 256);
  d.synchronize();
  CHECK(out.to_host() == std::vector<float>(n, 0.f));  // not computed
  CHECK(add_null.core().traces() == 1);
  CHECK(dump.files("add_null-", ".ptx").size() == 1);
  // a cubin too where ptxas is found (none without)
  CHECK(dump.files("add_null-", ".cubin").size() == (tile::jit::find_ptxas().empty() ? 0u : 1u));
  // A second launch of the same specialization compiles nothing more.
  add_null[{tile::cdiv(n, 256)}](x, y, out, n, "BLOCK"_c = 256);
  CHECK(add_null.core().traces() == 1);
  // An empty grid is valid (and runs nothing, as everywhere).
  add_null[{0}](x, y, out, n, "BLOCK"_c = 256);
}

TEST_CASE("null: a kernel whose registers limit its blocks an SM is compiled again lean, as on a device "
          "(TILE_OCCUPANCY_RETRY; it needs ptxas's register counts)" * needs_ptxas) {
  const std::string ptxas = ptxas_path();
  scoped_env t("TILE_TARGET", nullptr);  // sm_90a: 2048 threads and 65536 registers an SM
  auto d = null_dev();
  // row_softmax.hpp: 47 registers by default at 8192 columns on 16 warps, 40 lean
  const int cols = 8192;
  auto in = d.alloc<float>(cols), out = d.alloc<float>(cols);
  auto module_of = [&](const char* name, int num_warps) {
    temp_dir dump(name);
    scoped_env dd("TILE_DUMP_DIR", dump.path.c_str());
    auto k = make_row_softmax(name);
    auto m = tile::detail::compiled_module(k, {out, in, cols, cols},
                                           {tile::named("BLOCK", cols), tile::named("num_warps", num_warps)});
    const auto* nm = dynamic_cast<const tile::drivers::null_module*>(m.get());
    REQUIRE(nm != nullptr);
    CHECK(nm->assembled);
    CHECK(nm->registers > 0);
    const tile::jit::block_use use{.threads = 32 * num_warps, .registers = nm->registers,
                                   .shared_bytes = nm->shared_bytes};
    return std::tuple{nm->variant, nm->registers, tile::jit::blocks_per_sm(tile::jit::sm_limits_of(90), use),
                      dump.files(name, ".ptx").size()};
  };
  const auto [plain_variant, plain_regs, plain_blocks, plain_ptx] = [&] {
    scoped_env off("TILE_OCCUPANCY_RETRY", "0");
    return module_of("softmax_plain", 16);
  }();
  const auto [variant, regs, blocks, ptx_files] = module_of("softmax_retried", 16);
  MESSAGE("softmax of 8192 columns, 16 warps, sm_90a: " << plain_regs << " registers (" << plain_blocks
                                                        << " blocks an SM) by default; kept '" << variant << "', "
                                                        << regs << " registers (" << blocks << " blocks)");
  CHECK(plain_variant.empty());
  CHECK(plain_ptx == 1);
  if (variant == "lean") {  // tried and kept: more blocks
    CHECK(blocks > plain_blocks);
    CHECK(ptx_files == 2);  // both lowerings' PTX are in the dump
  } else {
    CHECK(regs == plain_regs);
  }
  // registers limited it and another block was within reach: the lean form was tried
  const int next = tile::jit::registers_for(tile::jit::sm_limits_of(90), 512, plain_blocks + 1);
  if (plain_blocks < 4 && plain_regs - next <= 16) CHECK(ptx_files == 2);
  // 4 warps (64 exps a thread, 128 registers, 4 blocks of 128 threads): a fifth block would need
  // 96, more than the lean form frees: not tried, one build
  const auto [wide_variant, wide_regs, wide_blocks, wide_ptx] = module_of("softmax_4_warps", 4);
  MESSAGE("softmax of 8192 columns, 4 warps: " << wide_regs << " registers, " << wide_blocks << " blocks, kept '"
                                               << wide_variant << "'");
  CHECK(wide_variant.empty());
  if (wide_regs > 96 + 16) CHECK(wide_ptx == 1);
}

TEST_CASE("null: fused attention at D = 64, 128 x 64 on 8 warps is compiled again with a register cap, two blocks "
          "an SM (TILE_OCCUPANCY_RETRY: .maxnreg where the next block is within 16 registers)" * needs_ptxas) {
  scoped_env t("TILE_TARGET", nullptr);  // sm_90a
  auto d = null_dev();
  const int H = 2, N = 512, D = 64;
  const std::size_t n = std::size_t(H) * N * D;
  auto q = d.alloc<tile::half>(n), o = d.alloc<tile::half>(n);
  auto m = d.alloc<float>(std::size_t(H) * N);
  temp_dir dump("attn");
  scoped_env dd("TILE_DUMP_DIR", dump.path.c_str());
  auto attn = make_attn_fwd<tile::half>("attn_cap");
  auto mod = tile::detail::compiled_module(
      attn, {q, q, q, 0.125f, m, o, H * N * D, N * D, D, H * N * D, N * D, D, H * N * D, N * D, D, H * N * D, N * D, D, H, N},
      {tile::named("HEAD_DIM", D), tile::named("BLOCK_M", 128), tile::named("BLOCK_N", 64), tile::named("STAGE", 1),
       tile::named("num_warps", 8)});
  const auto* nm = dynamic_cast<const tile::drivers::null_module*>(mod.get());
  REQUIRE(nm != nullptr);
  const tile::jit::block_use use{.threads = 256, .registers = nm->registers, .shared_bytes = nm->shared_bytes};
  MESSAGE("attention D = 64, 128 x 64, 8 warps: kept '" << nm->variant << "', " << nm->registers << " registers, "
                                                        << tile::jit::blocks_per_sm(tile::jit::sm_limits_of(90), use)
                                                        << " blocks an SM");
  // both builds' PTX in the dump; the kept one declares the cap and fits two blocks
  CHECK(dump.files("attn_cap-", ".ptx").size() == 2);
  CHECK(nm->variant == "lean");
  CHECK(nm->registers <= 128);
  CHECK(tile::jit::blocks_per_sm(tile::jit::sm_limits_of(90), use) == 2);
  bool capped = false;
  for (const auto& f : dump.files("attn_cap-", ".ptx")) {
    std::ifstream in(dump.path / f);
    std::stringstream ss;
    ss << in.rdbuf();
    capped = capped || ss.str().find(".maxnreg 128") != std::string::npos;
  }
  CHECK(capped);
}

TEST_CASE("null: a grid over the limits names the kernel and the launch's line") {
  auto d = null_dev();
  auto x = d.alloc<float>(64);
  int line = 0;
  auto e = error_of([&] {
    line = __LINE__ + 1;
    scale_grid[{1, 70000}](x, 64, "BLOCK"_c = 64);
  });
  CHECK(e.kernel() == "scale_grid");
  CHECK(ends_with(e.where().file, "test_null.cpp"));
  CHECK(e.where().line == static_cast<std::uint32_t>(line));
  CHECK(contains(e.message(), "grid extent y = 70000"));
  CHECK(contains(e.what(), "test_null.cpp:" + std::to_string(line) + ": error: kernel 'scale_grid'"));
}

TEST_CASE("null: a launch repeating the last one's values goes to the driver as packed then; any change is checked "
          "again, and each launch's grid is its own") {
  // the null driver packs as CUDA's does, so the typed launch's fingerprint is remembered here
  auto k = tile::kernel("repeat_null", [](tl::ptr<float> x, tl::ptr<float> out, tl::i32 n, tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
    tl::store(out + offs, tl::load(x + offs, offs < n), offs < n);
  });
  auto d = null_dev();
  auto x = d.alloc<float>(2048), y = d.alloc<float>(2048), other = d.alloc<float>(2048);
  int grid_calls = 0;
  auto grid = [&](const tile::meta& m) {
    ++grid_calls;
    return tile::grid3{tile::cdiv(std::int64_t{1000}, m["BLOCK"]), 1, 1};
  };
  k[grid](x, y, 1000, "BLOCK"_c = 256);
  k[grid](x, y, 1000, "BLOCK"_c = 256);  // the same values: from the fingerprint
  k[grid](x, y, 1000, "BLOCK"_c = 256);
  CHECK(k.core().traces() == 1);
  CHECK(grid_calls == 3);  // a grid function is called at every launch, the repeats' too
  k[grid](x, y, 1024, "BLOCK"_c = 256);  // n a multiple of 16: another specialization
  CHECK(k.core().traces() == 2);
  k[grid](y, y, 1000, "BLOCK"_c = 256);  // one buffer twice: aliased
  CHECK(k.core().traces() == 3);
  k[grid](x.view(1, 1500), y, 1000, "BLOCK"_c = 256);  // a view: not 16-byte aligned
  CHECK(k.core().traces() == 4);
  k[grid](x, y, 1000, "BLOCK"_c = 512);  // another meta-parameter value
  CHECK(k.core().traces() == 5);
  k[grid](x, y, 1000, "BLOCK"_c = 256);  // back to the first: found, not traced
  k[grid](other, y, 1000, "BLOCK"_c = 256);  // the same class, another buffer
  k[grid](other, y, 1000, "BLOCK"_c = 256);
  CHECK(k.core().traces() == 5);
  CHECK(grid_calls == 10);
  // a repeat's own grid is checked as every launch's is, at its own line
  k[{1}](x, y, 1000, "BLOCK"_c = 256);
  int line = 0;
  auto e = error_of([&] {
    line = __LINE__ + 1;
    k[{1, 70000}](x, y, 1000, "BLOCK"_c = 256);
  });
  CHECK(e.where().line == static_cast<std::uint32_t>(line));
  CHECK(contains(e.message(), "grid extent y = 70000"));
  // and an argument the kernel cannot take is still refused after a repeat (nothing remembered hides it)
  k[{1}](x, y, 1000, "BLOCK"_c = 256);
  auto empty = tile::buffer<float>();
  auto e2 = error_of([&] { k[{1}](empty, y, 1000, "BLOCK"_c = 256); });
  CHECK(contains(e2.message(), "empty buffer"));
  k[{1}](x, y, 1000, "BLOCK"_c = 256);  // and the kernel keeps working
  CHECK(k.core().traces() == 5);
}

TEST_CASE("null driver: launches checked against the target's limits") {
  using namespace tile::drivers;
  CHECK(max_dynamic_shared_bytes(90) == 227 * 1024);
  CHECK(max_dynamic_shared_bytes(80) == 163 * 1024);
  CHECK(max_dynamic_shared_bytes(86) == 99 * 1024);

  auto h100 = make_null_driver(null_limits_for(90, "sm_90a"));
  auto a100 = make_null_driver(null_limits_for(80, "sm_80"));
  CHECK(h100->name() == "null (sm_90a)");
  null_module m;
  m.kernel = "k";
  m.arch = "sm_90a";
  launch_config cfg;
  cfg.kernel = "k";
  const int line = __LINE__;
  cfg.where = tile::src_loc(std::source_location::current());
  kernel_arg p;
  p.k = kernel_arg::kind::pointer;
  p.t = tile::dtype::f32;
  p.addr = 0x1000;
  p.what = "argument 0 (ptr<f32>, 10 elements)";
  std::vector<kernel_arg> args = {p};

  auto fails = [&](driver& drv, const std::string& part) {
    auto e = error_of([&] { drv.launch(m, cfg, args); });
    CHECK(e.kernel() == "k");
    CHECK(e.where().line == static_cast<std::uint32_t>(line + 1));
    CHECK_MESSAGE(contains(e.message(), part), e.message());
  };

  h100->launch(m, cfg, args);  // within every limit
  cfg.grid[0] = 2147483647u;
  cfg.grid[1] = cfg.grid[2] = 65535u;
  h100->launch(m, cfg, args);  // at the limits
  cfg.grid[1] = 65536u;
  fails(*h100, "extent y = 65536 is more than sm_90a allows (65535)");
  cfg.grid[1] = 1;
  cfg.grid[2] = 70000u;
  fails(*h100, "extent z = 70000");
  cfg.grid[2] = 1;
  cfg.grid[0] = 2147483648u;
  fails(*h100, "extent x = 2147483648");
  cfg.grid[0] = 4;

  m.num_warps = 32;
  h100->launch(m, cfg, args);  // 1024 threads
  m.num_warps = 64;
  fails(*h100, "num_warps = 64 is 2048 threads per block; sm_90a allows 1024");
  m.num_warps = 4;

  m.shared_bytes = 200 * 1024;
  h100->launch(m, cfg, args);  // fits in 227 KiB
  fails(*a100, "needs 204800 bytes of shared memory per block; sm_80 allows at most 166912 (163 KiB)");
  m.shared_bytes = 228 * 1024;
  fails(*h100, "sm_90a allows at most 232448 (227 KiB)");
  m.shared_bytes = 0;

  args.push_back(p);
  args[1].addr = 0;
  args[1].what = "";  // named by describe_arg
  args[1].extent_bytes = 0;
  fails(*h100, "argument 1 (ptr<f32>, 0 elements) is a null pointer");
  args[1].what = "the output";
  fails(*h100, "the output is a null pointer");
  args.pop_back();

  struct other_module final : module {};
  other_module o;
  auto e = error_of([&] { h100->launch(o, cfg, args); });
  CHECK(contains(e.message(), "module compiled for another backend"));
}

// ---- ptxas ------------------------------------------------------------------------------------

TEST_CASE("ptxas: found on PATH, in /usr/local/cuda/bin, or where TILE_PTXAS says") {
  {
    scoped_env off("TILE_PTXAS", "0");
    CHECK(tile::jit::find_ptxas().empty());
  }
  {
    scoped_env bad("TILE_PTXAS", "/nonexistent/ptxas");
    auto e = error_of([] { (void)tile::jit::find_ptxas(); });
    CHECK(contains(e.message(), "TILE_PTXAS=/nonexistent/ptxas is not an executable file"));
  }
}

TEST_CASE("ptxas: TILE_PTXAS naming the one found is taken" * needs_ptxas) {
  std::string found = ptxas_path();
  scoped_env named("TILE_PTXAS", found.c_str());
  CHECK(tile::jit::find_ptxas() == found);
}

TEST_CASE("ptxas: assembles good PTX, quotes its errors for bad PTX" * needs_ptxas) {
  const std::string ptxas = ptxas_path();
  for (const char* arch : {"sm_80", "sm_90a"}) {
    CAPTURE(arch);
    auto ok = tile::jit::run_ptxas(ptxas, kGoodPtx, arch, "noop");
    CHECK_MESSAGE(ok.ok, ok.log);
    CHECK(ok.cubin.size() > 4);
    CHECK(ok.cubin.compare(0, 4, "\x7f" "ELF") == 0);
  }
  auto bad = tile::jit::run_ptxas(ptxas, kBadPtx, "sm_90a", "my kernel");
  CHECK_FALSE(bad.ok);
  CHECK(bad.cubin.empty());
  CHECK_MESSAGE(contains(bad.log, "my_kernel.ptx, line 7"), bad.log);  // the name, sanitized
  CHECK(contains(bad.log, "nonsense"));

  auto missing = tile::jit::run_ptxas("/nonexistent/ptxas", kGoodPtx, "sm_90a");
  CHECK_FALSE(missing.ok);
  CHECK(contains(missing.log, "cannot run /nonexistent/ptxas"));

  // assemble(): a rejection is an error naming the kernel and quoting ptxas.
  tile::jit::ptx_kernel k;
  k.kernel = "broken";
  k.entry = "tile_noop";
  k.arch = "sm_90a";
  k.ptx = kBadPtx;
  auto e = error_of([&] { (void)tile::jit::assemble(k); });
  CHECK(e.kernel() == "broken");
  CHECK(contains(e.what(), "kernel 'broken'"));
  CHECK(contains(e.message(), "-arch=sm_90a rejected the kernel's PTX (entry tile_noop)"));
  CHECK(contains(e.message(), "nonsense"));
  k.ptx = kGoodPtx;
  temp_dir dump("cubin");
  scoped_env dd("TILE_DUMP_DIR", dump.path.c_str());
  CHECK(tile::jit::assemble(k));
  CHECK(dump.files("broken-", ".cubin").size() == 1);
}

TEST_CASE("TILE_PTXAS_CHECK: an arch that does not exist, or no ptxas, is an error naming the kernel") {
  auto d = tile::device::get("interpreter");
  const int n = 300;
  auto x = d.upload(std::vector<float>(n, 1.f));
  auto out = d.alloc<float>(n);
  {
    // An arch that does not exist: the launch fails, naming the kernel and the switch.
    scoped_env c("TILE_PTXAS_CHECK", "sm_42");
    auto e = error_of([&] { copy_bad_arch[{tile::cdiv(n, 128)}](x, out, n, "BLOCK"_c = 128); });
    CHECK(e.kernel() == "copy_bad_arch");
    CHECK(ends_with(e.where().file, "test_null.cpp"));
    CHECK(contains(e.message(), "TILE_PTXAS_CHECK=sm_42"));
  }
  {
    // A check that cannot run is an error, not a silent pass.
    scoped_env c("TILE_PTXAS_CHECK", "sm_90a");
    scoped_env off("TILE_PTXAS", "0");
    auto e = error_of([&] { copy_no_ptxas[{tile::cdiv(n, 128)}](x, out, n, "BLOCK"_c = 128); });
    CHECK(e.kernel() == "copy_no_ptxas");
    CHECK(contains(e.message(), "TILE_PTXAS_CHECK=sm_90a: no ptxas"));
  }
}

TEST_CASE("TILE_PTXAS_CHECK: a kernel run on the interpreter is also compiled for sm_90a and assembled by ptxas" *
          needs_ptxas) {
  auto d = tile::device::get("interpreter");
  const int n = 300;
  auto x = d.upload(std::vector<float>(n, 1.f));
  auto out = d.alloc<float>(n);
  temp_dir dump("check");
  scoped_env dd("TILE_DUMP_DIR", dump.path.c_str());
  scoped_env c("TILE_PTXAS_CHECK", "sm_90a");
  copy_checked[{tile::cdiv(n, 128)}](x, out, n, "BLOCK"_c = 128);
  CHECK(out.to_host() == std::vector<float>(n, 2.f));  // the interpreter still ran it
  CHECK(dump.files("copy_checked-", ".ptx").size() == 1);
  CHECK(dump.files("copy_checked-", ".cubin").size() == 1);
}
