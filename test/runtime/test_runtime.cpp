// test/runtime/test_runtime.cpp — the host side: devices and backend selection, buffers and
// views, specialization and the trace cache, the IR a specialization traces to, grids (fixed
// and computed from the meta-parameters), launches from many threads, TILE_DUMP_IR.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <tile/tile.hpp>
#include <vector>

#include "../requires.hpp"

using namespace tile::literals;

namespace {
tile::device interp() { return tile::device::get("interpreter"); }

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::size_t occurrences(const std::string& s, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = s.find(part); at != std::string::npos; at = s.find(part, at + 1)) ++n;
  return n;
}

std::string file_name_of(const std::string& path) {
  auto s = path.find_last_of('/');
  return s == std::string::npos ? path : path.substr(s + 1);
}

/// Runs `command` through the shell; returns its stdout and stderr together and its exit code.
std::pair<std::string, int> run(const std::string& command) {
  std::string out;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), static_cast<int>(buf.size()), p)) out += buf.data();
  int status = pclose(p);
  return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

std::string child() {
  const char* c = std::getenv("DUMP_IR_CHILD");
  REQUIRE_MESSAGE(c != nullptr, "DUMP_IR_CHILD must name the dump_ir_child executable");
  return c;
}

/// Sets an environment variable for the scope, restoring the old value (or its absence) after.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~scoped_env() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

auto fill = tile::kernel("fill", [](tl::ptr<float> out, tl::i32 n, tl::f32 value, tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  tl::store(out + offs, tl::full<float>({BLOCK}, value), offs < n);
});

auto copy = tile::kernel("copy", [](tl::ptr<float> src, tl::ptr<float> dst, tl::i32 n, tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  tl::store(dst + offs, tl::load(src + offs, offs < n), offs < n);
});
}  // namespace

// ---- devices --------------------------------------------------------------------------------

TEST_CASE("the interpreter is a backend, always available") {
  auto list = tile::device::backends();
  auto it = std::find_if(list.begin(), list.end(), [](const auto& b) { return b.name == "interpreter"; });
  REQUIRE(it != list.end());
  CHECK(it->available);
  CHECK(it->reason.empty());
  auto d = interp();
  CHECK(d.name() == "interpreter");
  CHECK(d.backend() == "interpreter");
  CHECK(d == tile::device::get("interpreter"));  // one device object per backend
  d.synchronize();
  d.default_stream().synchronize();
}

namespace {
/// "cpu, interpreter": the backends this build knows, in order of preference.
std::string known_backends() {
  std::string s;
  for (const auto& b : tile::device::backends()) s += (s.empty() ? "" : ", ") + b.name;
  return s;
}
/// The backend best() picks with TILE_BACKEND unset: the first available one.
std::string first_available() {
  for (const auto& b : tile::device::backends())
    if (b.available) return b.name;
  return "";
}
}  // namespace

TEST_CASE("device::best honours TILE_BACKEND") {
  {
    scoped_env e("TILE_BACKEND", "interpreter");
    CHECK(tile::device::best().backend() == "interpreter");
    CHECK(tile::device::best() == interp());
  }
  // A fresh process for each value: the switch may be read once, at the first call.
  auto [bad, bad_rc] = run("TILE_BACKEND=nope " + child() + " best");
  CHECK(bad_rc == 1);
  CHECK(bad == "error: backend 'nope' is not available: unknown backend 'nope' (known: " + known_backends() + ")\n");
  auto [good, good_rc] = run("TILE_BACKEND=interpreter " + child() + " best");
  CHECK(good_rc == 0);
  CHECK(good == "best: interpreter\n");
  auto [unset, unset_rc] = run("env -u TILE_BACKEND " + child() + " best");
  CHECK(unset_rc == 0);
  CHECK(unset == "best: " + first_available() + "\n");  // cpu where LLVM was found
  CHECK(known_backends().find("interpreter") != std::string::npos);
}

TEST_CASE("device::get of an unknown backend or device") {
  try {
    (void)tile::device::get("nope");
    FAIL_CHECK("device::get(\"nope\") must throw");
  } catch (const tile::error& e) {
    CHECK(e.message() == "backend 'nope' is not available: unknown backend 'nope' (known: " + known_backends() + ")");
    CHECK(e.kernel().empty());
  }
  try {
    (void)tile::device::get("interpreter", 1);
    FAIL_CHECK("device::get(\"interpreter\", 1) must throw");
  } catch (const tile::error& e) {
    CHECK(e.message() == "device interpreter:1 does not exist (the interpreter backend has one device)");
  }
}

// ---- buffers --------------------------------------------------------------------------------

TEST_CASE("buffers: alloc, upload, to_host for several element types") {
  auto dev = interp();
  auto b = dev.alloc<float>(10);
  CHECK(b.size() == 10);
  CHECK(b.bytes() == 40);
  CHECK(b.address() != 0);
  CHECK(b.allocation()->bytes == 40);
  std::vector<float> f{1.5f, -2.0f, 3.25f};
  CHECK(dev.upload(f).to_host() == f);
  std::vector<tile::half> h{tile::half(1.0f), tile::half(-0.5f), tile::half(65504.0f)};
  auto hb = dev.upload(h);
  CHECK(hb.bytes() == 6);
  auto hh = hb.to_host();
  CHECK(static_cast<float>(hh[1]) == -0.5f);
  CHECK(static_cast<float>(hh[2]) == 65504.0f);
  std::vector<std::int8_t> i8{-128, 0, 127};
  CHECK(dev.upload(i8).to_host() == i8);
  std::vector<std::uint64_t> u64{0, ~std::uint64_t{0}, 1ull << 63};
  CHECK(dev.upload(u64).to_host() == u64);
  std::vector<double> f64{1e300, -0.0, 5e-324};
  CHECK(dev.upload(std::span<const double>(f64)).to_host() == f64);
  auto empty = dev.alloc<float>(0);
  CHECK(empty.size() == 0);
  CHECK(empty.to_host().empty());
  empty.fill_zero();
  empty.copy_from(std::vector<float>{});
}

TEST_CASE("buffers: copies share memory; fill_zero; default-constructed") {
  auto dev = interp();
  auto b = dev.upload(std::vector<float>{1, 2, 3, 4, 5});
  auto alias = b;
  CHECK(alias.address() == b.address());
  alias.copy_from(std::vector<float>{9, 8, 7, 6, 5});
  CHECK(b.to_host() == std::vector<float>{9, 8, 7, 6, 5});
  b.fill_zero();
  CHECK(alias.to_host() == std::vector<float>(5, 0.0f));
  auto other = dev.upload(std::vector<float>{1, 2, 3, 4, 5});
  CHECK(other.address() != b.address());
  tile::buffer<float> none;
  CHECK(none.size() == 0);
  CHECK(none.address() == 0);
  CHECK(none.to_host().empty());
}

TEST_CASE("buffers: size mismatch and view bounds errors name the caller's line") {
  auto dev = interp();
  auto b = dev.alloc<float>(8);
  int line = __LINE__; auto f = [&] { b.copy_from(std::vector<float>(9)); };
  try {
    f();
    FAIL_CHECK("copy_from with 9 elements into 8 must throw");
  } catch (const tile::error& e) {
    CHECK(e.message() == "copy_from: host data has 9 elements, the buffer 8");
    CHECK(e.where().line == static_cast<std::uint32_t>(line));
    CHECK(file_name_of(e.where().file) == file_name_of(__FILE__));
  }
  line = __LINE__; auto g = [&] { (void)b.view(5, 4); };
  try {
    g();
    FAIL_CHECK("view(5, 4) of 8 elements must throw");
  } catch (const tile::error& e) {
    CHECK(e.message() == "buffer view [5, 9) exceeds the buffer's 8 elements");
    CHECK(e.where().line == static_cast<std::uint32_t>(line));
    CHECK(file_name_of(e.where().file) == file_name_of(__FILE__));
  }
  // views that end exactly at the end are fine, empty ones too
  auto v = b.view(4, 4);
  CHECK(v.count == 4);
  CHECK(v.address() == b.address() + 16);
  CHECK(b.view(8, 0).count == 0);
}

TEST_CASE("a view passed to a kernel is a pointer to its first element, bounded by its size") {
  auto dev = interp();
  auto out = dev.alloc<float>(64);
  fill[{1}](out.view(10, 20), 20, 4.0f, "BLOCK"_c = 32);
  auto h = out.to_host();
  for (std::size_t i = 0; i < 64; ++i) CHECK(h[i] == (i >= 10 && i < 30 ? 4.0f : 0.0f));
}

TEST_CASE("a view keeps its memory alive after the buffer is gone") {
  auto dev = interp();
  std::optional<tile::buffer_view<float>> v;
  {
    auto src = dev.upload(std::vector<float>(64, 7.0f));
    v = src.view(16, 32);
  }
  auto dst = dev.alloc<float>(32);
  copy[{1}](*v, dst, 32, "BLOCK"_c = 32);
  CHECK(dst.to_host() == std::vector<float>(32, 7.0f));
}

// ---- launches and specialization ------------------------------------------------------------

TEST_CASE("scalar arguments of each kind; typed and dynamic launches agree") {
  auto dev = interp();
  auto out = dev.alloc<float>(100);
  fill[{tile::cdiv(100, 32)}](out, 100, 2.5f, "BLOCK"_c = 32);
  CHECK(out.to_host() == std::vector<float>(100, 2.5f));
  fill[{4}](out, 100u, 7, "BLOCK"_c = 32);  // unsigned and int host values convert
  CHECK(out.to_host() == std::vector<float>(100, 7.0f));
  fill[{4}](out, std::int64_t{100}, 0.5, "BLOCK"_c = 32);
  CHECK(out.to_host()[99] == 0.5f);
  fill.launch({4}, {out, 100, 3.0f}, {{"BLOCK", 32}});
  CHECK(out.to_host() == std::vector<float>(100, 3.0f));
  fill.launch({4}, {out.view(50, 50), 50, -1.0}, {tile::named("BLOCK", 16)});
  auto h = out.to_host();
  CHECK(h[49] == 3.0f);
  CHECK(h[50] == -1.0f);
  CHECK(h[99] == -1.0f);
}

TEST_CASE("specialization: one trace per distinct specialization") {
  auto k = tile::kernel("spec", [](tl::ptr<float> out, tl::i32 n, tl::f32 x, tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::arange(0, BLOCK);
    tl::store(out + offs, tl::cast<float>(offs * n) + x);
  });
  auto dev = interp();
  auto out = dev.alloc<float>(256);
  auto traces = [&] { return k.core().traces(); };
  CHECK(traces() == 0);
  k[{1}](out, 3, 0.0f, "BLOCK"_c = 64);
  CHECK(traces() == 1);
  k[{1}](out, 5, 0.0f, "BLOCK"_c = 64);  // 3 and 5: the same class (not 1, not a multiple of 16)
  CHECK(traces() == 1);
  CHECK(out.to_host()[10] == 50.0f);
  k[{1}](out, 7, 2.0f, "BLOCK"_c = 64);  // floats never specialize
  CHECK(traces() == 1);
  CHECK(out.to_host()[10] == 72.0f);
  SUBCASE("the sign of an integer (ir::ArgInfo::nonneg)") {
    k[{1}](out, -7, 2.0f, "BLOCK"_c = 64);
    CHECK(traces() == 2);
    CHECK(out.to_host()[10] == -68.0f);
    k[{1}](out, -3, 0.0f, "BLOCK"_c = 64);
    CHECK(traces() == 2);
    k[{1}](out, -32, 0.0f, "BLOCK"_c = 64);  // negative and a multiple of 16: a class of its own
    CHECK(traces() == 3);
    CHECK(out.to_host()[2] == -64.0f);
  }
  SUBCASE("meta-parameter values") {
    k[{1}](out, 5, 0.0f, "BLOCK"_c = 128);
    CHECK(traces() == 2);
    k[{1}](out, 5, 0.0f, "BLOCK"_c = 64);
    k[{1}](out, 5, 0.0f, "BLOCK"_c = 128);
    CHECK(traces() == 2);
    CHECK(out.to_host()[100] == 500.0f);
  }
  SUBCASE("an integer equal to 1") {
    k[{1}](out, 2, 0.0f, "BLOCK"_c = 64);
    CHECK(traces() == 1);
    k[{1}](out, 1, 0.0f, "BLOCK"_c = 64);
    CHECK(traces() == 2);
    CHECK(out.to_host()[63] == 63.0f);
    k[{1}](out, 1, 1.0f, "BLOCK"_c = 64);
    CHECK(traces() == 2);
    CHECK(out.to_host()[63] == 64.0f);
    k[{1}](out, 2, 0.0f, "BLOCK"_c = 64);
    CHECK(traces() == 2);
    CHECK(out.to_host()[63] == 126.0f);
  }
  SUBCASE("integers divisible by 16") {
    k[{1}](out, 32, 0.0f, "BLOCK"_c = 64);
    CHECK(traces() == 2);
    k[{1}](out, 48, 0.0f, "BLOCK"_c = 64);
    CHECK(traces() == 2);
    k[{1}](out, -16, 0.0f, "BLOCK"_c = 64);  // negative: its own class
    CHECK(traces() == 3);
    CHECK(out.to_host()[3] == -48.0f);
    k[{1}](out, 17, 0.0f, "BLOCK"_c = 64);
    CHECK(traces() == 3);
    CHECK(out.to_host()[3] == 51.0f);
  }
  SUBCASE("pointers aligned to 16 bytes, or not") {
    k[{1}](out.view(1, 200), 5, 0.0f, "BLOCK"_c = 64);  // 4 bytes in: not aligned
    CHECK(traces() == 2);
    k[{1}](out.view(5, 200), 5, 0.0f, "BLOCK"_c = 64);
    CHECK(traces() == 2);
    k[{1}](out.view(4, 200), 5, 0.0f, "BLOCK"_c = 64);  // 16 bytes in: aligned again
    CHECK(traces() == 2);
    CHECK(out.to_host()[4 + 10] == 50.0f);
  }
  SUBCASE("launch options") {
    k[{1}](out, 5, 0.0f, "BLOCK"_c = 64, "num_warps"_c = 8);
    CHECK(traces() == 2);
    k[{1}](out, 5, 0.0f, "BLOCK"_c = 64, "num_warps"_c = 4);  // 4 is the default
    CHECK(traces() == 2);
    k[{1}](out, 5, 0.0f, "BLOCK"_c = 64, "num_stages"_c = 2);
    CHECK(traces() == 3);
  }
  SUBCASE("ir() traces like a launch and shares the cache") {
    auto text = k.ir(out, 5, 0.0f, "BLOCK"_c = 64);
    CHECK(contains(text, "kernel @spec("));
    CHECK(traces() == 1);
    (void)k.ir(out, 5, 0.0f, "BLOCK"_c = 256);
    CHECK(traces() == 2);
    k[{1}](out, 9, 0.0f, "BLOCK"_c = 256);
    CHECK(traces() == 2);
  }
}

TEST_CASE("the specialization key and the trace read one classification of the arguments") {
  // ir_hash traces afresh (no cache) and hashes the IR with its ArgInfo: arguments of one class
  // must trace to the same IR (else the cache, keyed by class, would hand one launch code traced
  // for another), and arguments of different classes to different IR (else the key splits
  // launches the trace cannot tell apart).
  auto k = tile::kernel("classes", [](tl::ptr<float> out, tl::ptr<float> in, tl::i32 n, tl::u32 u) {
    auto offs = tl::arange(0, 16);
    tl::store(out + offs, tl::load(in + offs) + tl::cast<float>(offs * n) + tl::cast<float>(u));
  });
  auto dev = interp();
  auto a = dev.alloc<float>(64), b = dev.alloc<float>(64);
  auto hash = [&](tile::arg out, tile::arg in, std::int32_t n, std::uint32_t u) {
    std::vector<tile::detail::launch_arg> rt{out.value, in.value, tile::arg(n).value, tile::arg(u).value};
    return k.core().ir_hash(rt, {}, {});
  };
  // each group: one class of n (i32), then of u (u32: 2^31 and up is not negative)
  const std::vector<std::vector<std::int32_t>> n_classes = {{3, 5, 1001}, {1}, {0}, {16, 48, 1 << 20},
                                                            {-16, -4096}, {-3, -17}};
  const std::vector<std::vector<std::uint32_t>> u_classes = {{3, 0x80000001u}, {1}, {0}, {32, 0x80000000u}};
  std::vector<std::uint64_t> seen;
  for (auto& g : n_classes) {
    const auto h = hash(a, b, g[0], 7);
    for (auto v : g) CHECK_MESSAGE(hash(a, b, v, 7) == h, "n = " << v << " vs " << g[0]);
    for (auto s : seen) CHECK_MESSAGE(s != h, "n = " << g[0]);
    seen.push_back(h);
  }
  for (std::size_t i = 1; i < u_classes.size(); ++i) {  // u = 7 was the first group's
    const auto& g = u_classes[i];
    const auto h = hash(a, b, 5, g[0]);
    for (auto v : g) CHECK_MESSAGE(hash(a, b, 5, v) == h, "u = " << v << " vs " << g[0]);
    for (auto s : seen) CHECK_MESSAGE(s != h, "u = " << g[0]);
    seen.push_back(h);
  }
  // pointers: disjoint or not, aligned to 16 bytes or not
  const auto disjoint_aligned = hash(a, b, 5, 7);
  CHECK(hash(a.view(4, 32), b.view(8, 32), 5, 7) == disjoint_aligned);
  const auto disjoint_unaligned = hash(a.view(1, 32), b, 5, 7);
  CHECK(hash(a.view(3, 32), b, 5, 7) == disjoint_unaligned);
  const auto aliased = hash(a, a.view(8, 32), 5, 7);
  CHECK(hash(b.view(4, 40), b, 5, 7) == aliased);
  const auto aliased_unaligned = hash(a.view(1, 40), a, 5, 7);
  const std::vector<std::uint64_t> ptrs = {disjoint_aligned, disjoint_unaligned, aliased, aliased_unaligned};
  for (std::size_t i = 0; i < ptrs.size(); ++i)
    for (std::size_t j = i + 1; j < ptrs.size(); ++j) CHECK_MESSAGE(ptrs[i] != ptrs[j], i << " vs " << j);
}

TEST_CASE("the IR shows the specialization") {
  int store_line = 0;
  auto k = tile::kernel("spec_ir", [&store_line](tl::ptr<float> out, tl::i32 n) {
    store_line = __LINE__; tl::store(out + tl::arange(0, 16), tl::cast<float>(n));
  });
  auto dev = interp();
  auto out = dev.alloc<float>(64);
  out.fill_zero();
  std::string plain = k.ir(out, 7);
  INFO(plain);
  CHECK(plain.rfind("kernel @spec_ir(%arg0: ptr<f32> {div=16} {noalias}, %arg1: i32 {positive}) {", 0) == 0);
  CHECK(contains(plain, "cast %arg1 : i32 -> f32"));
  CHECK(contains(plain, "loc(\"" + file_name_of(__FILE__) + "\":" + std::to_string(store_line) + ")"));
  CHECK(out.to_host() == std::vector<float>(64, 0.0f));  // ir() does not launch
  std::string one = k.ir(out.view(1, 32), 1);
  INFO(one);
  CHECK(one.rfind("kernel @spec_ir(%arg0: ptr<f32> {noalias}, %arg1: i32 {positive}) {", 0) == 0);
  CHECK(occurrences(one, "%arg1") == 1);  // declared, never used: the 1 is a constant
  CHECK(contains(one, "constant 1.0 : f32[16]"));
  std::string div = k.ir(out, 32);
  INFO(div);
  CHECK(div.rfind("kernel @spec_ir(%arg0: ptr<f32> {div=16} {noalias}, %arg1: i32 {div=16} {positive}) {", 0) == 0);
  std::string zero = k.ir(out, 0);  // 0: its own class (a multiple of 16, not positive)
  INFO(zero);
  CHECK(zero.rfind("kernel @spec_ir(%arg0: ptr<f32> {div=16} {noalias}, %arg1: i32 {div=16} {nonneg}) {", 0) == 0);
  CHECK(k.core().traces() == 4);
}

// ---- grids ----------------------------------------------------------------------------------

TEST_CASE("a grid computed from the meta-parameters") {
  auto dev = interp();
  auto out = dev.alloc<float>(1000);
  int calls = 0;
  auto grid = [&](const tile::meta& m) {
    ++calls;
    CHECK(m.has("BLOCK"));
    CHECK_FALSE(m.has("OTHER"));
    CHECK(m.get_float("BLOCK") == 128.0);
    CHECK_THROWS_AS((void)m["OTHER"], tile::error);
    return tile::grid3{tile::cdiv(1000, m["BLOCK"])};
  };
  fill[grid](out, 1000, 1.0f, "BLOCK"_c = 128);
  CHECK(calls == 1);
  CHECK(out.to_host() == std::vector<float>(1000, 1.0f));
  try {
    auto bad = [](const tile::meta& m) { return tile::grid3{m["BLOCK_M"]}; };
    fill[bad](out, 1000, 1.0f, "BLOCK"_c = 128);
    FAIL_CHECK("an unknown name in a grid function must throw");
  } catch (const tile::error& e) {
    CHECK(e.message() == "grid function: no meta-parameter named 'BLOCK_M'");
  }
}

TEST_CASE("grids of one, two and three dimensions") {
  auto k = tile::kernel("ids", [](tl::ptr<std::int32_t> out) {
    auto x = tl::program_id(0), y = tl::program_id(1), z = tl::program_id(2);
    auto nx = tl::num_programs(0), ny = tl::num_programs(1), nz = tl::num_programs(2);
    auto slot = out + ((z * ny + y) * nx + x) * 6;
    tl::store(slot, x);
    tl::store(slot + 1, y);
    tl::store(slot + 2, z);
    tl::store(slot + 3, nx);
    tl::store(slot + 4, ny);
    tl::store(slot + 5, nz);
  });
  auto dev = interp();
  for (auto g : {tile::grid3{5, 1, 1}, tile::grid3{3, 4, 1}, tile::grid3{2, 3, 4}, tile::grid3{1, 1, 7}}) {
    CAPTURE(g.x);
    CAPTURE(g.y);
    CAPTURE(g.z);
    std::int64_t n = g.x * g.y * g.z;
    auto out = dev.alloc<std::int32_t>(static_cast<std::size_t>(n * 6));
    k[g](out);
    auto h = out.to_host();
    for (std::int64_t z = 0; z < g.z; ++z)
      for (std::int64_t y = 0; y < g.y; ++y)
        for (std::int64_t x = 0; x < g.x; ++x) {
          auto i = static_cast<std::size_t>(((z * g.y + y) * g.x + x) * 6);
          CHECK(h[i] == x);
          CHECK(h[i + 1] == y);
          CHECK(h[i + 2] == z);
          CHECK(h[i + 3] == g.x);
          CHECK(h[i + 4] == g.y);
          CHECK(h[i + 5] == g.z);
        }
  }
  auto out = dev.alloc<std::int32_t>(2 * 3 * 6);
  k[{2, 3}](out);  // braces with two extents
  CHECK(out.to_host()[(1 * 2 + 1) * 6 + 1] == 1);
  CHECK(out.to_host()[5 * 6 + 4] == 3);
  k[{2, 3, 1}](out);
}

namespace {
/// A grid with an extent 0 is a no-op, as in Triton: no program runs, but the kernel is traced
/// and compiled for the launch and the launch is checked as any other (docs/LANGUAGE.md, "Grids").
void zero_grid_runs_nothing(const tile::device& dev) {
  CAPTURE(dev.name());
  auto k = tile::kernel("zero_grid", [](tl::ptr<float> out, tl::i32 n, tl::f32 value, tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
    tl::store(out + offs, tl::full<float>({BLOCK}, value), offs < n);
  });
  auto out = dev.upload(std::vector<float>(64, 1.0f));
  k[{0}](out, 64, 5.0f, "BLOCK"_c = 64);
  CHECK(k.core().traces() == 1);  // traced and compiled though nothing runs
  k[{4, 0}](out, 64, 5.0f, "BLOCK"_c = 64);
  k[{4, 2, 0}](out, 64, 5.0f, "BLOCK"_c = 64);
  k[{0, 0, 0}](out, 64, 5.0f, "BLOCK"_c = 64);
  auto none = [](const tile::meta&) { return tile::grid3{0, 0, 0}; };
  k[none](out, 64, 5.0f, "BLOCK"_c = 64);
  CHECK(k.core().traces() == 1);
  dev.synchronize();
  CHECK(out.to_host() == std::vector<float>(64, 1.0f));
  // … and a grid with no extent 0 runs the same kernel
  k[{1}](out, 64, 5.0f, "BLOCK"_c = 64);
  dev.synchronize();
  if (dev.computes()) CHECK(out.to_host() == std::vector<float>(64, 5.0f));

  // what is wrong is reported whatever the grid: a kernel that does not trace …
  auto bad = tile::kernel("zero_grid_bad", [](tl::ptr<float> p, tl::i32) { tl::store(p + tl::arange(0, 10), 1.0f); });
  CHECK_THROWS_WITH_AS(bad[{0}](out, 64), doctest::Contains("must be a power of two"), tile::error);
  // … a negative extent beside a zero one …
  CHECK_THROWS_WITH_AS((k[{0, -1}](out, 64, 5.0f, "BLOCK"_c = 64)), doctest::Contains("grid extent y = -1"), tile::error);
  // … and arguments on two devices
  for (const char* other : {"interpreter", "cpu", "null"}) {
    if (dev.backend() == other || !tiletest::backend_missing(other).empty()) continue;
    auto far = tile::device::get(other).alloc<float>(64);
    auto out2 = dev.alloc<float>(64);
    auto k2 = tile::kernel("zero_grid_copy", [](tl::ptr<float> a, tl::ptr<float> b) {
      tl::store(b + tl::arange(0, 64), tl::load(a + tl::arange(0, 64)));
    });
    CHECK_THROWS_WITH_AS(k2[{0}](out2, far), doctest::Contains("is on device"), tile::error);
    break;
  }
}

}  // namespace

TEST_CASE("a grid with a zero extent runs nothing, after tracing and checking the launch: interpreter") {
  zero_grid_runs_nothing(interp());
}

TEST_CASE("a grid with a zero extent runs nothing, after tracing and checking the launch: cpu" * tiletest::needs_cpu) {
  zero_grid_runs_nothing(tile::device::get("cpu"));
}

TEST_CASE("a grid with a zero extent runs nothing, after tracing and checking the launch: null" * tiletest::needs_null) {
  zero_grid_runs_nothing(tile::device::get("null"));
}

TEST_CASE("launches alternating between specializations each run their own (the launch path's last-launched shortcut)") {
  // V (a meta-parameter) and n (1 is its own specialization class) both change the key: each
  // launch must take its own compiled kernel, whichever was launched just before.
  auto k = tile::kernel("alternate", [](tl::ptr<std::int32_t> out, tl::i32 n, tl::constexpr_<"V"> V) {
    tl::store(out + tl::arange(0, 16), tl::full<std::int32_t>({16}, V) + n);
  });
  auto dev = interp();
  auto out = dev.alloc<std::int32_t>(16);
  const std::pair<int, int> order[] = {{1, 1}, {2, 1}, {1, 1}, {1, 5}, {2, 5}, {2, 1}, {1, 5}, {1, 1}};
  for (auto [v, n] : order) {
    k[{1}](out, n, "V"_c = v);
    CHECK_MESSAGE(out.to_host() == std::vector<std::int32_t>(16, v + n), "V = " << v << ", n = " << n);
  }
  CHECK(k.core().traces() == 4);
}

TEST_CASE("a launch repeating the last one's arguments reuses its specialization; any change is classified again") {
  auto dev = interp();
  std::vector<float> h(2048);
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = static_cast<float>(i);
  auto x = dev.upload(h), y = dev.alloc<float>(2048);
  auto k = tile::kernel("repeat_copy", [](tl::ptr<float> src, tl::ptr<float> dst, tl::i32 n, tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
    tl::store(dst + offs, tl::load(src + offs, offs < n) + 1.0f, offs < n);
  });
  auto run = [&](const auto& src, const auto& dst, int n) { k[{tile::cdiv(n, 256)}](src, dst, n, "BLOCK"_c = 256); };
  run(x, y, 1000);
  run(x, y, 1000);  // the same values: the same kernel
  CHECK(k.core().traces() == 1);
  CHECK(y.to_host()[999] == 1000.0f);
  run(x, y, 1024);  // n a multiple of 16: another class
  CHECK(k.core().traces() == 2);
  run(y, y, 1000);  // one buffer twice: aliased pointers
  CHECK(k.core().traces() == 3);
  run(x.view(1, 1500), y, 1000);  // a pointer no longer 16-byte aligned
  CHECK(k.core().traces() == 4);
  CHECK(y.to_host()[0] == 2.0f);
  run(x, y, 1000);  // back to the first: found, not traced
  CHECK(k.core().traces() == 4);
  CHECK(y.to_host()[0] == 1.0f);
  k[{4}](x, y, 1000, "BLOCK"_c = 512);  // another meta-parameter value
  CHECK(k.core().traces() == 5);
  auto other = dev.upload(std::vector<float>(2048, 7.0f));  // the same class, other buffers
  run(other, y, 1000);
  CHECK(k.core().traces() == 5);
  CHECK(y.to_host()[999] == 8.0f);
}

TEST_CASE("noalias of adopted memory: adopted ranges are compared, whatever allocation they came from" * tiletest::needs_cpu) {
  auto k = tile::kernel("alias_adopted", [](tl::ptr<float> a, tl::ptr<float> b, tl::i32 n, tl::ptr<float> c) {
    auto offs = tl::arange(0, 16);
    tl::store(c + offs, tl::load(a + offs) + tl::load(b + offs) + tl::cast<float>(n));
  });
  auto dev = tile::device::get("cpu");
  auto owner = dev.alloc<float>(64), out = dev.alloc<float>(16);
  auto header = [](const std::string& ir) { return ir.substr(0, ir.find('{', ir.find(')'))); };
  auto lo = dev.adopt<float>(owner.address(), 32), hi = dev.adopt<float>(owner.address() + 16 * sizeof(float), 32);
  std::string overlap = header(k.ir(lo, hi, 3, out));  // two adoptions sharing 16 elements
  INFO(overlap);
  CHECK(occurrences(overlap, "{noalias}") == 1);
  auto apart = dev.adopt<float>(owner.address() + 32 * sizeof(float), 32);
  CHECK(occurrences(header(k.ir(lo, apart, 3, out)), "{noalias}") == 3);
  CHECK(occurrences(header(k.ir(owner, apart, 3, out)), "{noalias}") == 1);  // the owner covers the adoption
}

// ---- threads --------------------------------------------------------------------------------

TEST_CASE("16 threads launching a kernel never launched before trace it once") {
  auto k = tile::kernel("racy", [](tl::ptr<float> out, tl::f32 v, tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
    tl::store(out + offs, tl::full<float>({BLOCK}, v) + tl::cast<float>(offs));
  });
  auto dev = interp();
  std::vector<tile::buffer<float>> outs;
  for (int i = 0; i < 16; ++i) outs.push_back(dev.alloc<float>(256));
  std::atomic<bool> go{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < 16; ++i)
    threads.emplace_back([&, i] {
      while (!go.load()) std::this_thread::yield();
      try {
        k[{4}](outs[i], static_cast<float>(i), "BLOCK"_c = 64);
      } catch (...) {
        ++failures;
      }
    });
  go = true;
  for (auto& t : threads) t.join();
  CHECK(failures == 0);
  CHECK(k.core().traces() == 1);
  for (std::size_t i = 0; i < 16; ++i) {
    auto h = outs[i].to_host();
    bool right = true;
    for (std::size_t j = 0; j < 256; ++j) right = right && h[j] == static_cast<float>(i + j);
    CHECK_MESSAGE(right, "thread " << i << " got wrong results");
  }
}

TEST_CASE("8 threads launching 8 specializations") {
  auto k = tile::kernel("specs", [](tl::ptr<std::int32_t> out, tl::constexpr_<"V"> V) {
    tl::store(out + tl::arange(0, 16), tl::full<std::int32_t>({16}, V) + tl::program_id(0));
  });
  auto dev = interp();
  std::vector<tile::buffer<std::int32_t>> outs;
  for (int i = 0; i < 8; ++i) outs.push_back(dev.alloc<std::int32_t>(16));
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      while (!go.load()) std::this_thread::yield();
      for (int rep = 0; rep < 3; ++rep) k[{1}](outs[i], "V"_c = static_cast<int>(i) * 10);
    });
  go = true;
  for (auto& t : threads) t.join();
  CHECK(k.core().traces() == 8);
  for (std::size_t i = 0; i < 8; ++i)
    CHECK(outs[i].to_host() == std::vector<std::int32_t>(16, static_cast<std::int32_t>(i) * 10));
}

// ---- environment switches -------------------------------------------------------------------

TEST_CASE("TILE_DUMP_IR=1 prints the IR after tracing and after each pass, once per trace") {
  auto [out, rc] = run("TILE_DUMP_IR=1 TILE_BACKEND=interpreter " + child());
  INFO(out);
  CHECK(rc == 0);
  // the pipeline's passes, in order of their first run, and how often each runs in one trace
  const std::pair<const char*, int> passes[] = {{"trace", 1}, {"constant_fold", 2}, {"cse", 3}, {"dce", 2},
                                                {"version_single_trip_loops", 1}, {"load_cse", 1}};
  std::size_t prev = 0;
  for (auto [pass, runs] : passes) {
    std::string header = std::string("// ----- IR after ") + pass + " (kernel dump_me) ----- //\n";
    CHECK_MESSAGE(occurrences(out, header) == 2 * runs, header << " (per specialization: BLOCK=16, BLOCK=32)");
    auto at = out.find(header);
    CHECK_MESSAGE(at != std::string::npos, header);
    if (at == std::string::npos) continue;
    CHECK_MESSAGE(at >= prev, pass << " is dumped in pipeline order");
    prev = at;
    CHECK(out.compare(at + header.size(), 17, "kernel @dump_me(%") == 0);
  }
  CHECK(occurrences(out, "kernel @dump_me(") == 2 * (1 + 9));  // trace and 9 passes, twice
  CHECK(contains(out, "arange {start = 0, end = 16}"));
  CHECK(contains(out, "arange {start = 0, end = 32}"));
  CHECK(out.size() >= 9);
  CHECK(out.substr(out.size() - 9) == "child OK\n");
  // without the switch, or with it off, nothing is printed
  auto [quiet, quiet_rc] = run("env -u TILE_DUMP_IR TILE_BACKEND=interpreter " + child());
  CHECK(quiet_rc == 0);
  CHECK(quiet == "child OK\n");
  auto [off, off_rc] = run("TILE_DUMP_IR=0 TILE_BACKEND=interpreter " + child());
  CHECK(off_rc == 0);
  CHECK(off == "child OK\n");
}

TEST_CASE("TILE_TIME_PASSES=1 prints a timing table per trace") {
  auto [out, rc] = run("TILE_TIME_PASSES=1 TILE_BACKEND=interpreter " + child());
  INFO(out);
  CHECK(rc == 0);
  CHECK(occurrences(out, "// ----- pass timing (kernel dump_me) ----- //") == 2);
  // a row per pass run, in each of the two traces (canonicalize runs fold, cse and dce again
  // after version_single_trip_loops, and cse once more after load_cse)
  for (auto [pass, runs] : {std::pair{"constant_fold", 2}, {"cse", 3}, {"dce", 2}, {"version_single_trip_loops", 1},
                            {"load_cse", 1}, {"total", 1}})
    CHECK_MESSAGE(occurrences(out, std::string("  ") + pass + " ") == 2 * runs, pass);
  CHECK_FALSE(contains(out, "IR after"));
}

TEST_CASE("noalias: a pointer is noalias only when no other pointer argument shares a byte with it") {
  auto k = tile::kernel("alias_ir", [](tl::ptr<float> a, tl::ptr<float> b, tl::i32 n, tl::ptr<float> c) {
    auto offs = tl::arange(0, 16);
    tl::store(c + offs, tl::load(a + offs) + tl::load(b + offs) + tl::cast<float>(n));
  });
  auto dev = interp();
  auto x = dev.alloc<float>(64), y = dev.alloc<float>(64);
  auto header = [](const std::string& ir) { return ir.substr(0, ir.find('{', ir.find(')'))); };
  // three buffers: all noalias
  CHECK(occurrences(header(k.ir(x, y, 3, dev.alloc<float>(16))), "{noalias}") == 3);
  // the same buffer twice (a and c): only b
  std::string twice = header(k.ir(x, y, 3, x));
  INFO(twice);
  CHECK(occurrences(twice, "{noalias}") == 1);
  CHECK(contains(twice, "%arg1: ptr<f32> {div=16} {noalias}"));
  // disjoint views of one buffer: all noalias; views overlapping by one element: those two alias
  CHECK(occurrences(header(k.ir(x.view(0, 16), x.view(16, 16), 3, x.view(32, 16))), "{noalias}") == 3);
  std::string overlap = header(k.ir(x.view(0, 17), x.view(16, 16), 3, y));
  INFO(overlap);
  CHECK(occurrences(overlap, "{noalias}") == 1);
  CHECK(contains(overlap, "%arg3: ptr<f32> {div=16} {noalias}"));
  // an empty view aliases nothing
  CHECK(occurrences(header(k.ir(x.view(0, 0), x, 3, y)), "{noalias}") == 3);
}
