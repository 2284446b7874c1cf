// test/jit/test_cpu_jit.cpp — the CPU backend's compile pipeline (tile::device::get("cpu")):
//   - the in-memory compile cache (tile::jit::stats() deltas: compiled / memory_hits / disk_hits);
//   - the on-disk cache across processes (cache_child, named by $TILE_CACHE_CHILD): a hit in a
//     second process, a corrupt entry rebuilt with a warning, TILE_CACHE=0, concurrent children,
//     an unwritable directory;
//   - 16 threads launching one new kernel: one compile;
//   - TILE_DUMP_DIR: .tir, .ll and .s per compiled kernel, and a dump forces a fresh compile;
//   - device_assert / bad for_range step errors: the interpreter's text exactly;
//   - device_print: the interpreter's lines exactly;
//   - sample-like kernels (vector add, softmax, matmul, cumsum, argmax, atomics): the cpu
//     backend's outputs equal the interpreter's bit for bit (atomic float sums within tolerance).
// Every test is reported as skipped, saying why, where the cpu backend is not available.
//
// The in-process tests count compiles exactly, so a disk hit left by an earlier run must not
// stand in for a compile: at start-up this process points TILE_CACHE_DIR at a fresh private
// directory (removed at exit) and unsets TILE_CACHE, TILE_DUMP_DIR and TILE_TIME_PASSES. The
// child processes get their own directories on their command line.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <tile/tile.hpp>
#include <vector>

#include "jit/compile.hpp"
#include "../requires.hpp"

using namespace tile::literals;
namespace fs = std::filesystem;

namespace {

// ---- helpers ----------------------------------------------------------------------------------

/// A private, fresh TILE_CACHE_DIR for this process (see the file comment).
struct private_cache_dir {
  fs::path path;
  private_cache_dir() {
    path = fs::temp_directory_path() / ("tile-cpu-jit-test-cache-" + std::to_string(::getpid()));
    std::error_code ec;
    fs::remove_all(path, ec);
    ::setenv("TILE_CACHE_DIR", path.c_str(), 1);
    // and none of the switches that turn the caches off or bypass their lookups
    for (const char* name : {"TILE_CACHE", "TILE_DUMP_DIR", "TILE_TIME_PASSES"}) ::unsetenv(name);
  }
  ~private_cache_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};
const private_cache_dir g_private_cache;

/// The multi-process test runs cache_child (test/jit/meson.build names it in TILE_CACHE_CHILD).
constexpr tiletest::needs needs_cpu_and_child{"needs the cpu backend and cache_child", []() -> std::string {
  if (std::string why = tiletest::backend_missing("cpu"); !why.empty()) return why;
  const char* child = std::getenv("TILE_CACHE_CHILD");
  return child && *child ? "" : "TILE_CACHE_CHILD is not set: no child process to share the disk cache with";
}};

tile::device cpu() { return tile::device::get("cpu"); }
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

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// A fresh directory <temp>/tile-cpu-jit-test-<pid>-<n>, removed with everything in it at the end.
struct temp_dir {
  fs::path path;
  temp_dir() {
    static std::atomic<int> n{0};
    path = fs::temp_directory_path() /
           ("tile-cpu-jit-test-" + std::to_string(::getpid()) + "-" + std::to_string(n.fetch_add(1)));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  std::string str() const { return path.string(); }
};

/// Sets an environment variable for the scope, restoring the old value (or its absence) after.
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

/// The compile counters' change since construction.
struct stats_meter {
  tile::jit::compile_stats start = tile::jit::stats();
  std::uint64_t compiled() const { return tile::jit::stats().compiled - start.compiled; }
  std::uint64_t memory_hits() const { return tile::jit::stats().memory_hits - start.memory_hits; }
  std::uint64_t disk_hits() const { return tile::jit::stats().disk_hits - start.disk_hits; }
};

/// Regular files directly in `dir` (none if it does not exist), by name, with their sizes.
std::map<std::string, std::uintmax_t> files_in(const fs::path& dir) {
  std::map<std::string, std::uintmax_t> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) out[e.path().filename().string()] = e.file_size();
  return out;
}

/// Everything written to std::cout while `f` runs (restored on exceptions too).
std::string capture_cout(const std::function<void()>& f) {
  std::stringstream ss;
  std::cout.flush();
  std::streambuf* old = std::cout.rdbuf(ss.rdbuf());
  try {
    f();
  } catch (...) {
    std::cout.rdbuf(old);
    throw;
  }
  std::cout.rdbuf(old);
  return ss.str();
}

std::vector<std::string> sorted_lines(const std::string& s) {
  std::vector<std::string> lines;
  std::istringstream is(s);
  for (std::string l; std::getline(is, l);) lines.push_back(l);
  std::sort(lines.begin(), lines.end());
  return lines;
}

/// The what() of the tile::error `f` throws ("" if it throws nothing, "<other>" for another type).
std::string error_text(const std::function<void()>& f, tile::error* out = nullptr) {
  try {
    f();
  } catch (const tile::error& e) {
    if (out) *out = e;
    return e.what();
  } catch (...) {
    return "<an exception that is not tile::error>";
  }
  return "";
}

/// CHECKs that two host vectors hold the same bytes; names the first differing element.
template <class T>
void check_same_bits(const std::vector<T>& got_cpu, const std::vector<T>& got_interp, const std::string& what) {
  INFO(what);
  REQUIRE(got_cpu.size() == got_interp.size());
  const bool same = std::memcmp(got_cpu.data(), got_interp.data(), got_cpu.size() * sizeof(T)) == 0;
  if (!same) {
    for (std::size_t i = 0; i < got_cpu.size(); ++i)
      if (std::memcmp(&got_cpu[i], &got_interp[i], sizeof(T)) != 0) {
        if constexpr (std::is_arithmetic_v<T>)
          FAIL_CHECK("cpu and interpreter differ first at element " << i << ": cpu " << +got_cpu[i]
                                                                     << ", interpreter " << +got_interp[i]);
        else
          FAIL_CHECK("cpu and interpreter differ first at element " << i);
        break;
      }
  }
  CHECK(same);
}

std::vector<float> random_floats(std::size_t n, unsigned seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(gen);
  return v;
}

std::vector<std::int32_t> random_ints(std::size_t n, unsigned seed, std::int32_t lo, std::int32_t hi) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<std::int32_t> d(lo, hi);
  std::vector<std::int32_t> v(n);
  for (auto& x : v) x = d(gen);
  return v;
}

// ---- the disk cache across processes: running cache_child -----------------------------------

struct child_result {
  int rc = -1;
  std::string out, err;
  long compiled = -1, disk_hits = -1, memory_hits = -1;
};

long field(const std::string& out, const std::string& name) {
  auto at = out.find(name + "=");
  if (at == std::string::npos) return -1;
  return std::strtol(out.c_str() + at + name.size() + 1, nullptr, 10);
}

child_result parse_child(int rc, std::string out, std::string err) {
  child_result r;
  r.rc = rc;
  r.out = std::move(out);
  r.err = std::move(err);
  r.compiled = field(r.out, "compiled");
  r.disk_hits = field(r.out, "disk_hits");
  r.memory_hits = field(r.out, "memory_hits");
  return r;
}

/// The shell words that run the child with `env_vars` ("A=1 B=2") in an environment cleared of
/// the switches that would bypass or change the caches.
std::string child_command(const std::string& child, const std::string& env_vars) {
  return "env -u TILE_CACHE -u TILE_CACHE_DIR -u TILE_DUMP_DIR -u TILE_TIME_PASSES -u TILE_DUMP_IR " + env_vars +
         " '" + child + "'";
}

/// Runs the child once; stdout and stderr go to files in `scratch`, read back.
child_result run_child(const std::string& child, const std::string& env_vars, const fs::path& scratch) {
  static int n = 0;
  const std::string tag = std::to_string(n++);
  const fs::path out = scratch / ("child-" + tag + ".out"), err = scratch / ("child-" + tag + ".err");
  const std::string cmd = child_command(child, env_vars) + " >'" + out.string() + "' 2>'" + err.string() + "'";
  const int status = std::system(cmd.c_str());
  const int rc = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return parse_child(rc, read_file(out), read_file(err));
}

/// Starts `count` children at once (one shell, each in the background) and waits for all.
std::vector<child_result> run_children_at_once(const std::string& child, const std::string& env_vars,
                                               const fs::path& scratch, int count) {
  std::string script;
  for (int i = 0; i < count; ++i) {
    const std::string base = (scratch / ("par-" + std::to_string(i))).string();
    script += "(" + child_command(child, env_vars) + " >'" + base + ".out' 2>'" + base + ".err'; echo $? >'" + base +
              ".rc') & ";
  }
  script += "wait";
  const int status = std::system(script.c_str());
  REQUIRE(status != -1);
  std::vector<child_result> results;
  for (int i = 0; i < count; ++i) {
    const std::string base = (scratch / ("par-" + std::to_string(i))).string();
    const std::string rc_text = read_file(base + ".rc");
    const int rc = rc_text.empty() ? -1 : std::atoi(rc_text.c_str());
    results.push_back(parse_child(rc, read_file(base + ".out"), read_file(base + ".err")));
  }
  return results;
}

std::string describe(const child_result& r) {
  return "rc " + std::to_string(r.rc) + "\nstdout: " + r.out + "stderr: " + r.err;
}

/// The one cache entry (<kernel>-<digest>.o) in `dir`; "" unless there is exactly one file.
fs::path the_entry(const fs::path& dir) {
  auto files = files_in(dir);
  if (files.size() != 1) return {};
  return dir / files.begin()->first;
}

std::size_t temp_files_in(const fs::path& dir) {
  std::size_t n = 0;
  for (const auto& [name, size] : files_in(dir)) n += name.find(".tmp-") != std::string::npos;
  return n;
}

// ---- kernels shared by the comparisons ----------------------------------------------------------

auto vadd = tile::kernel("jit_cmp_add", [](tl::ptr<float> x, tl::ptr<float> y, tl::ptr<float> out, tl::i32 n,
                                            tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs < n;
  tl::store(out + offs, tl::load(x + offs, mask) + tl::load(y + offs, mask), mask);
});

auto softmax = tile::kernel("jit_cmp_softmax", [](tl::ptr<float> out, tl::ptr<float> in, tl::i32 stride,
                                                   tl::i32 n_cols, tl::constexpr_<"BLOCK"> BLOCK) {
  auto row = tl::program_id(0);
  auto cols = tl::arange(0, BLOCK);
  auto mask = cols < n_cols;
  auto x = tl::load(in + row * stride + cols, mask, -tl::inf<float>());
  auto num = tl::exp(x - tl::max(x, 0));
  tl::store(out + row * stride + cols, num / tl::sum(num, 0), mask);
});

auto matmul = tile::kernel("jit_cmp_matmul", [](tl::ptr<float> a, tl::ptr<float> b, tl::ptr<float> c, tl::i32 M,
                                                 tl::i32 N, tl::i32 K, tl::constexpr_<"BM"> BM,
                                                 tl::constexpr_<"BN"> BN, tl::constexpr_<"BK"> BK,
                                                 tl::constexpr_<"IEEE", bool> IEEE) {
  using tl::_;
  using tl::newaxis;
  auto pid = tl::program_id(0);
  auto n_blocks_n = tl::cdiv(N, BN);
  auto rm = (pid / n_blocks_n) * BM + tl::arange(0, BM);
  auto rn = (pid % n_blocks_n) * BN + tl::arange(0, BN);
  auto rk = tl::arange(0, BK);
  auto a_ptrs = a + rm(_, newaxis) * K + rk(newaxis, _);
  auto b_ptrs = b + rk(_, newaxis) * N + rn(newaxis, _);
  auto acc = tl::zeros<float>({BM, BN});
  tl::for_range(0, tl::cdiv(K, BK), [&](tl::tensor kb) {
    auto k_left = K - kb * BK;
    auto av = tl::load(a_ptrs, (rm(_, newaxis) < M) & (rk(newaxis, _) < k_left), 0.0f);
    auto bv = tl::load(b_ptrs, (rk(_, newaxis) < k_left) & (rn(newaxis, _) < N), 0.0f);
    acc = tl::dot(av, bv, acc, IEEE ? tl::precision::ieee : tl::precision::tf32);
    a_ptrs += BK;
    b_ptrs += BK * N;
  });
  tl::store(c + rm(_, newaxis) * N + rn(newaxis, _), acc, (rm(_, newaxis) < M) & (rn(newaxis, _) < N));
});

// cumsum of a [R, C] tile along both axes (forward and reverse), floats and ints.
auto scans = tile::kernel("jit_cmp_cumsum", [](tl::ptr<float> x, tl::ptr<std::int32_t> xi, tl::ptr<float> out,
                                                tl::ptr<std::int32_t> outi, tl::constexpr_<"R"> R,
                                                tl::constexpr_<"C"> C) {
  using tl::_;
  using tl::newaxis;
  auto o = tl::arange(0, R)(_, newaxis) * C + tl::arange(0, C)(newaxis, _);
  auto v = tl::load(x + o);
  auto vi = tl::load(xi + o);
  tl::store(out + o, tl::cumsum(v, 1));
  tl::store(out + R * C + o, tl::cumsum(v, 0));
  tl::store(out + 2 * R * C + o, tl::cumsum(v, 1, true));
  tl::store(outi + o, tl::cumsum(vi, 1));
  tl::store(outi + R * C + o, tl::cumsum(vi, 0, true));
});

// argmax of a [R, C] tile (with ties) along both axes.
auto argmaxes = tile::kernel("jit_cmp_argmax", [](tl::ptr<float> x, tl::ptr<std::int32_t> rows,
                                                   tl::ptr<std::int32_t> cols, tl::constexpr_<"R"> R,
                                                   tl::constexpr_<"C"> C) {
  using tl::_;
  using tl::newaxis;
  auto v = tl::load(x + tl::arange(0, R)(_, newaxis) * C + tl::arange(0, C)(newaxis, _));
  tl::store(rows + tl::arange(0, R), tl::argmax(v, 1));
  tl::store(cols + tl::arange(0, C), tl::argmax(v, 0));
});

auto atomic_sum = tile::kernel("jit_cmp_atomic_add", [](tl::ptr<float> cell, tl::ptr<float> x,
                                                         tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  tl::atomic_add(cell + tl::zeros<std::int32_t>({BLOCK}), tl::load(x + offs));
});

auto atomic_maxes = tile::kernel("jit_cmp_atomic_max", [](tl::ptr<std::int32_t> slots, tl::ptr<std::int32_t> x,
                                                           tl::constexpr_<"BLOCK"> BLOCK,
                                                           tl::constexpr_<"SLOTS"> SLOTS) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  tl::atomic_max(slots + offs % SLOTS, tl::load(x + offs));
});

// ---- kernels of the error and print tests ------------------------------------------------------

int g_assert_line = 0;
int g_scalar_assert_line = 0;
int g_step_line = 0;

auto asserter = tile::kernel("jit_asserter", [](tl::ptr<std::int32_t> x, tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto v = tl::load(x + offs);
  g_assert_line = __LINE__; tl::device_assert(v < 100, "v must stay below 100");
  tl::store(x + offs, v + 1);
});

auto scalar_asserter = tile::kernel("jit_scalar_asserter", [](tl::ptr<std::int32_t> out) {
  auto x = tl::program_id(0), y = tl::program_id(1);
  g_scalar_assert_line = __LINE__; tl::device_assert((x != 2) || (y != 1), "not program (2, 1)");
  tl::store(out + y * 3 + x, x + 10 * y);
});

auto stepper = tile::kernel("jit_bad_step", [](tl::ptr<std::int32_t> out, tl::i32 step) {
  auto acc = tl::constant<std::int32_t>(0);
  g_step_line = __LINE__; tl::for_range(0, 10, step, [&](tl::tensor i) { acc = acc + i; });
  tl::store(out, acc);
});

auto printer = tile::kernel("jit_printer", [](tl::ptr<std::int32_t> x, tl::ptr<float> f, tl::i32 n) {
  using tl::_;
  using tl::newaxis;
  auto v = tl::load(x + tl::arange(0, 4));
  tl::device_print("v = ", v);
  auto m = tl::load(f + tl::arange(0, 2)(_, newaxis) * 4 + tl::arange(0, 4)(newaxis, _));
  tl::device_print("f: ", m);
  tl::device_print("n=", n);
  tl::device_print("both ", tl::arange(0, 2) + 1, tl::constant<float>(0.5));
  tl::device_print("hello");
  tl::device_print_hex("hex ", v);
  tl::device_print("mask ", v > 0);
  tl::device_print("pid ", tl::program_id(0), tl::num_programs(0));
  tl::device_print("half ", tl::cast<tile::half>(m));
  tl::device_print("f64 ", tl::cast<double>(m) / 3.0);
  auto acc = tl::constant<std::int32_t>(1);
  tl::for_range(0, n, [&](tl::tensor i) {
    acc = acc * 3;
    tl::device_print("it ", i, acc);
  });
});

}  // namespace

// ---- 1. the in-memory compile cache ------------------------------------------------------------

TEST_CASE("cpu: the in-memory compile cache: one compile per IR, shared by kernel objects" * tiletest::needs_cpu) {
  auto body = [](tl::ptr<float> x, tl::ptr<float> out, tl::i32 n, tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
    auto m = offs < n;
    tl::store(out + offs, tl::load(x + offs, m) * 3.0f + 1.0f, m);
  };
  auto k1 = tile::kernel("jit_mem_cache", body);
  auto k2 = tile::kernel("jit_mem_cache", body);          // a second object, the same IR
  auto k3 = tile::kernel("jit_mem_cache_renamed", body);  // the same body under another name
  auto dev = cpu();
  const int n = 300;
  auto hx = random_floats(n, 11);
  auto x = dev.upload(hx);
  std::vector<float> want(n);
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = hx[i] * 3.0f + 1.0f;
  auto launch = [&](auto& k, int block) {
    auto out = dev.alloc<float>(n);
    k[{tile::cdiv(n, block)}](x, out, n, "BLOCK"_c = block);
    CHECK(out.to_host() == want);
  };

  stats_meter m;
  launch(k1, 64);  // a new IR: compiled
  CHECK(m.compiled() == 1);
  CHECK(m.memory_hits() == 0);
  CHECK(m.disk_hits() == 0);
  launch(k1, 64);  // the same specialization again: the kernel's own cache, nothing compiled
  CHECK(m.compiled() == 1);
  CHECK(m.memory_hits() == 0);
  CHECK(m.disk_hits() == 0);
  CHECK(k1.core().traces() == 1);

  launch(k2, 64);  // another kernel object, identical IR: served from the memory cache
  CHECK(k2.core().traces() == 1);
  CHECK(m.compiled() == 1);
  CHECK(m.memory_hits() == 1);
  CHECK(m.disk_hits() == 0);

  launch(k1, 128);  // another meta-parameter value: a different IR, a miss
  CHECK(m.compiled() == 2);
  CHECK(m.memory_hits() == 1);
  launch(k2, 128);
  CHECK(m.compiled() == 2);
  CHECK(m.memory_hits() == 2);
  launch(k1, 128);
  launch(k2, 64);
  CHECK(m.compiled() == 2);
  CHECK(m.memory_hits() == 2);

  launch(k3, 64);  // the kernel's name is part of the key
  CHECK(m.compiled() == 3);
  CHECK(m.memory_hits() == 2);
  CHECK(m.disk_hits() == 0);
}

// ---- 2. the disk cache across processes ------------------------------------------------------

TEST_CASE("cpu: the disk cache across processes" * needs_cpu_and_child) {
  const char* child_env = std::getenv("TILE_CACHE_CHILD");
  const std::string child = child_env;
  REQUIRE(fs::exists(child));
  temp_dir scratch;  // the children's output files
  temp_dir root;
  const fs::path cache = root.path / "cache";  // created by the first store
  const std::string with_cache = "TILE_CACHE_DIR='" + cache.string() + "'";

  // first run: a compile, stored
  auto first = run_child(child, with_cache, scratch.path);
  INFO("first run: " << describe(first));
  REQUIRE(first.rc == 0);
  CHECK(first.compiled == 1);
  CHECK(first.disk_hits == 0);
  CHECK(first.err.empty());
  const fs::path entry = the_entry(cache);
  REQUIRE_MESSAGE(!entry.empty(), "one cache entry after the first run");
  CHECK(file_name_of(entry.string()).starts_with("cache_child_add-"));
  CHECK(entry.extension() == ".o");
  const std::string good_bytes = read_file(entry);

  {  // second run: a disk hit, no compile
    auto second = run_child(child, with_cache, scratch.path);
    INFO("second run: " << describe(second));
    CHECK(second.rc == 0);
    CHECK(second.compiled == 0);
    CHECK(second.disk_hits == 1);
    CHECK(second.err.empty());
    CHECK(read_file(entry) == good_bytes);
  }

  SUBCASE("a corrupt entry (flipped bytes, then truncated) is rebuilt with a warning") {
    std::string bytes = good_bytes;
    REQUIRE(bytes.size() > 200);
    for (std::size_t i = bytes.size() / 2; i < bytes.size() / 2 + 8; ++i) bytes[i] = static_cast<char>(bytes[i] ^ 0x5a);
    write_file(entry, bytes);
    auto third = run_child(child, with_cache, scratch.path);
    INFO("run after flipping bytes: " << describe(third));
    CHECK(third.rc == 0);  // and so the result is right
    CHECK(third.compiled == 1);
    CHECK(third.disk_hits == 0);
    CHECK(occurrences(third.err, "ignoring corrupt cache entry") == 1);
    CHECK(contains(third.err, "tile: warning: ignoring corrupt cache entry " + entry.string() + " ("));
    CHECK(read_file(entry) == good_bytes);  // rebuilt: the same object again

    fs::resize_file(entry, good_bytes.size() / 3);
    auto fourth = run_child(child, with_cache, scratch.path);
    INFO("run after truncating: " << describe(fourth));
    CHECK(fourth.rc == 0);
    CHECK(fourth.compiled == 1);
    CHECK(fourth.disk_hits == 0);
    CHECK(occurrences(fourth.err, "ignoring corrupt cache entry") == 1);
    CHECK(contains(fourth.err, "(truncated)"));
    CHECK(read_file(entry) == good_bytes);

    auto fifth = run_child(child, with_cache, scratch.path);
    INFO("run after the rebuild: " << describe(fifth));
    CHECK(fifth.rc == 0);
    CHECK(fifth.compiled == 0);
    CHECK(fifth.disk_hits == 1);
    CHECK(fifth.err.empty());
  }

  SUBCASE("TILE_CACHE=0: compiled, nothing read or written") {
    const auto before = files_in(cache);
    const auto mtime = fs::last_write_time(entry);
    auto off = run_child(child, "TILE_CACHE=0 " + with_cache, scratch.path);
    INFO("TILE_CACHE=0 run: " << describe(off));
    CHECK(off.rc == 0);
    CHECK(off.compiled == 1);
    CHECK(off.disk_hits == 0);
    CHECK(off.err.empty());
    CHECK(files_in(cache) == before);
    CHECK(fs::last_write_time(entry) == mtime);
    // on a fresh directory: it is not even created
    const fs::path fresh = root.path / "fresh-off";
    auto off2 = run_child(child, "TILE_CACHE=0 TILE_CACHE_DIR='" + fresh.string() + "'", scratch.path);
    INFO("TILE_CACHE=0 run on a fresh directory: " << describe(off2));
    CHECK(off2.rc == 0);
    CHECK(off2.compiled == 1);
    CHECK(files_in(fresh).empty());
  }

  SUBCASE("4 children at once on a fresh directory") {
    const fs::path fresh = root.path / "concurrent" / "cache";
    const std::string env = "TILE_CACHE_DIR='" + fresh.string() + "'";
    auto results = run_children_at_once(child, env, scratch.path, 4);
    for (std::size_t i = 0; i < results.size(); ++i) {
      INFO("child " << i << ": " << describe(results[i]));
      CHECK(results[i].rc == 0);
      CHECK(results[i].compiled + results[i].disk_hits == 1);
      CHECK(results[i].err.empty());
    }
    CHECK(temp_files_in(fresh) == 0);
    const auto files = files_in(fresh);
    CHECK(files.size() == 1);
    const fs::path e = the_entry(fresh);
    REQUIRE(!e.empty());
    CHECK(file_name_of(e.string()) == file_name_of(entry.string()));  // the same key in every process
    CHECK(read_file(e) == good_bytes);
    auto after = run_child(child, env, scratch.path);
    INFO("run after the concurrent ones: " << describe(after));
    CHECK(after.rc == 0);
    CHECK(after.compiled == 0);
    CHECK(after.disk_hits == 1);
  }

  SUBCASE("an unwritable directory: the child still succeeds, with one warning") {
    write_file(root.path / "file", "a regular file, not a directory");
    const fs::path bad = root.path / "file" / "sub";  // under a regular file: fails even for root
    auto r = run_child(child, "TILE_CACHE_DIR='" + bad.string() + "'", scratch.path);
    INFO("unwritable-directory run: " << describe(r));
    CHECK(r.rc == 0);
    CHECK(r.compiled == 1);
    CHECK(r.disk_hits == 0);
    CHECK(occurrences(r.err, "is not writable") == 1);
    CHECK(occurrences(r.err, "\n") == 1);  // exactly one line on stderr
    CHECK(r.err.starts_with("tile: warning: cache directory " + bad.string() + " is not writable ("));
    CHECK(read_file(root.path / "file") == "a regular file, not a directory");
  }
}

/// `cache_child assert a|b BACKEND` with the shared cache directory `cache`.
child_result run_moved_assert(const std::string& child, const fs::path& cache, const fs::path& scratch, const char* which,
                              const char* backend, const std::string& extra_env = "") {
  return run_child(child + "' assert " + which + " '" + backend, "TILE_CACHE_DIR='" + cache.string() + "' " + extra_env, scratch);
}

TEST_CASE("a device_assert moved to another line reports its new line through a warm disk cache" * needs_cpu_and_child) {
  const std::string child = std::getenv("TILE_CACHE_CHILD");
  temp_dir scratch, root;
  const fs::path cache = root.path / "cache";
  SUBCASE("NVPTX code embeds the line: the moved assert misses the cache, the unmoved one hits") {
    const std::string sm90 = "TILE_TARGET=sm_90a";
    auto a = run_moved_assert(child, cache, scratch.path, "a", "null", sm90);
    INFO("a: " << describe(a));
    REQUIRE(a.rc == 0);
    CHECK(a.compiled == 1);
    auto b = run_moved_assert(child, cache, scratch.path, "b", "null", sm90);
    INFO("b: " << describe(b));
    REQUIRE(b.rc == 0);
    CHECK(field(b.out, "line") == field(a.out, "line") + 3);
    CHECK(b.compiled == 1);  // the assert's line is part of the key
    CHECK(b.disk_hits == 0);
    auto again = run_moved_assert(child, cache, scratch.path, "a", "null", sm90);
    INFO("a again: " << describe(again));
    CHECK(again.compiled == 0);
    CHECK(again.disk_hits == 1);
  }
  SUBCASE("the CPU backend reports a site id resolved against the current trace: one entry, both lines right") {
    auto a = run_moved_assert(child, cache, scratch.path, "a", "cpu");
    INFO("a: " << describe(a));
    REQUIRE(a.rc == 0);
    CHECK(contains(a.err, "cache_child.cpp:" + std::to_string(field(a.out, "line")) + ":"));
    auto b = run_moved_assert(child, cache, scratch.path, "b", "cpu");
    INFO("b: " << describe(b));
    REQUIRE(b.rc == 0);
    CHECK(b.disk_hits == 1);
    CHECK(contains(b.err, "cache_child.cpp:" + std::to_string(field(b.out, "line")) + ":"));
  }
  SUBCASE("on an NVIDIA GPU the printed assert names the new line") {
    if (!tiletest::backend_missing("cuda").empty()) {
      MESSAGE("skipped here: " << tiletest::backend_missing("cuda"));
      return;
    }
    for (const char* which : {"a", "b", "a"}) {
      auto r = run_moved_assert(child, cache, scratch.path, which, "cuda");
      INFO(which << ": " << describe(r));
      REQUIRE(r.rc == 0);
      const std::string line = std::to_string(field(r.out, "line"));
      CHECK(contains(r.out + r.err, "cache_child.cpp:" + line));
    }
  }
}

// ---- 3. many threads, one new kernel -----------------------------------------------------------

TEST_CASE("cpu: 16 threads launching a new kernel at once compile it once" * tiletest::needs_cpu) {
  auto k = tile::kernel("jit_stress", [](tl::ptr<float> out, tl::f32 v, tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
    tl::store(out + offs, tl::full<float>({BLOCK}, v) * 2.0f + tl::cast<float>(offs));
  });
  auto dev = cpu();
  constexpr int kThreads = 16, kBlock = 32, kGrid = 8, kN = kBlock * kGrid;
  std::vector<tile::buffer<float>> outs;
  for (int i = 0; i < kThreads; ++i) outs.push_back(dev.alloc<float>(kN));
  stats_meter m;
  std::atomic<bool> go{false};
  std::atomic<int> failures{0};
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      while (!go.load()) std::this_thread::yield();
      try {
        k[{kGrid}](outs[i], static_cast<float>(i), "BLOCK"_c = kBlock);
      } catch (const std::exception& e) {
        errors[i] = e.what();
        ++failures;
      }
    });
  go = true;
  for (auto& t : threads) t.join();
  CHECK(failures == 0);
  for (const auto& e : errors)
    if (!e.empty()) MESSAGE("a launch threw: " << e);
  CHECK(k.core().traces() == 1);
  CHECK_MESSAGE(m.compiled() == 1, "the compile count rose by " << m.compiled() << " for one specialization");
  CHECK(m.memory_hits() == 0);
  CHECK(m.disk_hits() == 0);
  for (std::size_t i = 0; i < kThreads; ++i) {
    auto h = outs[i].to_host();
    bool right = true;
    for (std::size_t j = 0; j < kN; ++j) right = right && h[j] == static_cast<float>(i) * 2.0f + static_cast<float>(j);
    CHECK_MESSAGE(right, "thread " << i << " got wrong results");
  }
}

// ---- 4. TILE_DUMP_DIR --------------------------------------------------------------------------

TEST_CASE("cpu: TILE_DUMP_DIR writes the .tir, .ll and .s of each compile, and forces a compile" * tiletest::needs_cpu) {
  auto body = [](tl::ptr<float> x, tl::ptr<float> out, tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
    tl::store(out + offs, tl::sqrt(tl::abs(tl::load(x + offs))) - 0.25f);
  };
  auto dev = cpu();
  auto hx = random_floats(128, 21);
  auto x = dev.upload(hx);
  std::vector<float> want(hx.size());
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = std::sqrt(std::abs(hx[i])) - 0.25f;
  temp_dir root;

  // The three artifacts, named <kernel>-<16 hex digits>.<ext>, all with one stem.
  auto check_dump = [](const fs::path& dir, const std::string& kernel) {
    const auto files = files_in(dir);
    INFO("dump directory " << dir.string() << " holds " << files.size() << " files");
    REQUIRE(files.size() == 3);
    std::string stem;
    for (const auto& [name, size] : files) {
      INFO("file " << name);
      CHECK(name.starts_with(kernel + "-"));
      CHECK(size > 0);
      const std::string s = fs::path(name).stem().string();
      CHECK(s.size() == kernel.size() + 1 + 16);
      CHECK(s.substr(kernel.size() + 1).find_first_not_of("0123456789abcdef") == std::string::npos);
      if (stem.empty()) stem = s;
      CHECK(s == stem);
    }
    const std::string tir = read_file(dir / (stem + ".tir")), ll = read_file(dir / (stem + ".ll")),
                      s = read_file(dir / (stem + ".s"));
    CHECK(contains(tir, "kernel @" + kernel + "("));
    CHECK(contains(ll, "define"));
    CHECK(contains(ll, "tile_kernel"));
    CHECK(contains(s, "tile_kernel"));
    CHECK_FALSE(s.empty());
  };

  {  // a kernel compiled for the first time, with the dump on
    auto fresh = tile::kernel("jit_dump_fresh", body);
    const fs::path dir = root.path / "fresh" / "dumps";  // created by the dump
    stats_meter m;
    {
      scoped_env e("TILE_DUMP_DIR", dir.c_str());
      auto out = dev.alloc<float>(128);
      fresh[{2}](x, out, "BLOCK"_c = 64);
      CHECK(out.to_host() == want);
    }
    CHECK(m.compiled() == 1);
    check_dump(dir, "jit_dump_fresh");
  }

  {  // a kernel already in the memory cache: the dump bypasses the lookup and compiles again
    auto first = tile::kernel("jit_dump_cached", body);
    auto second = tile::kernel("jit_dump_cached", body);  // the same IR, traced anew
    auto third = tile::kernel("jit_dump_cached", body);
    const fs::path dir = root.path / "cached";
    stats_meter m;
    auto out = dev.alloc<float>(128);
    first[{2}](x, out, "BLOCK"_c = 64);
    CHECK(m.compiled() == 1);
    CHECK(files_in(dir).empty());
    {
      scoped_env e("TILE_DUMP_DIR", dir.c_str());
      out.fill_zero();
      second[{2}](x, out, "BLOCK"_c = 64);
      CHECK(out.to_host() == want);
    }
    CHECK(m.compiled() == 2);  // not a memory hit
    CHECK(m.memory_hits() == 0);
    CHECK(m.disk_hits() == 0);
    check_dump(dir, "jit_dump_cached");
    // with the dump off again, the IR is in the memory cache
    out.fill_zero();
    third[{2}](x, out, "BLOCK"_c = 64);
    CHECK(out.to_host() == want);
    CHECK(m.compiled() == 2);
    CHECK(m.memory_hits() == 1);
    CHECK(files_in(dir).size() == 3);  // nothing more dumped
  }
}

// ---- 5. errors ---------------------------------------------------------------------------------

TEST_CASE("cpu: a failing device_assert and a bad for_range step read as on the interpreter" * tiletest::needs_cpu) {
  const std::string file = file_name_of(__FILE__);

  SUBCASE("device_assert on a tile: program 2, element 5 fails") {
    std::vector<std::int32_t> data(32, 7);
    data[2 * 8 + 5] = 100;
    tile::error ce(""), ie("");
    g_assert_line = 0;
    auto xc = cpu().upload(data);
    const std::string on_cpu = error_text([&] { asserter[{4}](xc, "BLOCK"_c = 8); }, &ce);
    const int line = g_assert_line;
    auto xi = interp().upload(data);
    const std::string on_interp = error_text([&] { asserter[{4}](xi, "BLOCK"_c = 8); }, &ie);
    INFO("cpu: " << on_cpu);
    INFO("interpreter: " << on_interp);
    REQUIRE(line != 0);
    CHECK(on_cpu == on_interp);
    CHECK(contains(on_cpu, file + ":" + std::to_string(line) + ": error: kernel 'jit_asserter': "));
    CHECK(ce.message() == "device_assert failed: v must stay below 100 (program (2, 0, 0), element [5])");
    CHECK(ce.kernel() == "jit_asserter");
    CHECK(ce.where().line == static_cast<std::uint32_t>(line));
    CHECK(file_name_of(ce.where().file) == file);
    CHECK(ce.message() == ie.message());
    CHECK(ce.where().line == ie.where().line);
    // not poisoned: passing data runs
    auto ok = cpu().upload(std::vector<std::int32_t>(32, 1));
    CHECK_NOTHROW(asserter[{4}](ok, "BLOCK"_c = 8));
    CHECK(ok.to_host() == std::vector<std::int32_t>(32, 2));
  }

  SUBCASE("device_assert on a scalar in a 2-D grid: no element") {
    tile::error ce(""), ie("");
    g_scalar_assert_line = 0;
    auto oc = cpu().alloc<std::int32_t>(6);
    const std::string on_cpu = error_text([&] { scalar_asserter[{3, 2}](oc); }, &ce);
    const int line = g_scalar_assert_line;
    auto oi = interp().alloc<std::int32_t>(6);
    const std::string on_interp = error_text([&] { scalar_asserter[{3, 2}](oi); }, &ie);
    INFO("cpu: " << on_cpu);
    INFO("interpreter: " << on_interp);
    REQUIRE(line != 0);
    CHECK(on_cpu == on_interp);
    CHECK(ce.message() == "device_assert failed: not program (2, 1) (program (2, 1, 0))");
    CHECK(contains(on_cpu, file + ":" + std::to_string(line) + ": error: kernel 'jit_scalar_asserter': "));
  }

  SUBCASE("for_range with a runtime step of 0 or below") {
    for (int step : {0, -2}) {
      CAPTURE(step);
      tile::error ce(""), ie("");
      g_step_line = 0;
      auto oc = cpu().alloc<std::int32_t>(1);
      const std::string on_cpu = error_text([&] { stepper[{1}](oc, step); }, &ce);
      const int line = g_step_line;
      auto oi = interp().alloc<std::int32_t>(1);
      const std::string on_interp = error_text([&] { stepper[{1}](oi, step); }, &ie);
      INFO("cpu: " << on_cpu);
      INFO("interpreter: " << on_interp);
      REQUIRE(line != 0);
      CHECK(contains(on_cpu, "for_range step must be positive"));
      CHECK(ce.message() == "for_range step must be positive, got " + std::to_string(step));
      CHECK(ce.kernel() == "jit_bad_step");
      CHECK(on_cpu == on_interp);
      CHECK(ce.where().line == static_cast<std::uint32_t>(line));
      CHECK(file_name_of(ce.where().file) == file);
    }
    auto oc = cpu().alloc<std::int32_t>(1);
    stepper[{1}](oc, 3);
    CHECK(oc.to_host()[0] == 0 + 3 + 6 + 9);
  }
}

// ---- 6. device_print ---------------------------------------------------------------------------

TEST_CASE("cpu: device_print prints the interpreter's lines exactly (both to std::cout)" * tiletest::needs_cpu) {
  const std::vector<std::int32_t> ints{5, -1, 7, 255};
  const std::vector<float> floats{0.1f, 1.5f, -2.0f, 1e20f, -0.0f, std::numeric_limits<float>::infinity(), 3.0f,
                                  1.0f / 3.0f};
  auto run_on = [&](const tile::device& d, int grid) {
    auto x = d.upload(ints);
    auto f = d.upload(floats);
    return capture_cout([&] { printer[{grid}](x, f, 3); });
  };
  const std::string one_cpu = run_on(cpu(), 1), one_interp = run_on(interp(), 1);
  INFO("cpu:\n" << one_cpu);
  INFO("interpreter:\n" << one_interp);
  CHECK_FALSE(one_interp.empty());
  CHECK(occurrences(one_interp, "\n") == 4 + 8 + 1 + 3 + 1 + 4 + 4 + 2 + 8 + 8 + 6);
  CHECK(one_cpu == one_interp);  // one program: the same lines in the same order
  CHECK(contains(one_cpu, "pid (0, 0, 0) idx (1, 3) f: 0.33333334\n"));
  CHECK(contains(one_cpu, "pid (0, 0, 0) idx (1) hex 0xffffffff\n"));

  const std::string many_cpu = run_on(cpu(), 3), many_interp = run_on(interp(), 3);
  CHECK(occurrences(many_interp, "\n") == 3 * occurrences(one_interp, "\n"));
  CHECK(sorted_lines(many_cpu) == sorted_lines(many_interp));  // programs interleave: compare as sets
}

// ---- 7. sample-like kernels: cpu == interpreter, bit for bit ----------------------------------

TEST_CASE("cpu: sample-like kernels give the interpreter's results bit for bit" * tiletest::needs_cpu) {
  const tile::device devs[2] = {cpu(), interp()};

  {  // vector add
    const int n = 1000;
    auto hx = random_floats(n, 1), hy = random_floats(n, 2);
    std::vector<float> got[2];
    for (int d = 0; d < 2; ++d) {
      auto x = devs[d].upload(hx), y = devs[d].upload(hy);
      auto out = devs[d].alloc<float>(n);
      vadd[{tile::cdiv(n, 256)}](x, y, out, n, "BLOCK"_c = 256);
      got[d] = out.to_host();
    }
    check_same_bits(got[0], got[1], "vector add");
    for (std::size_t i = 0; i < hx.size(); ++i) REQUIRE(got[0][i] == hx[i] + hy[i]);
  }

  {  // row softmax
    const int rows = 8, cols = 100;
    auto hx = random_floats(static_cast<std::size_t>(rows * cols), 7, -4.f, 4.f);
    std::vector<float> got[2];
    for (int d = 0; d < 2; ++d) {
      auto x = devs[d].upload(hx);
      auto y = devs[d].alloc<float>(hx.size());
      softmax[{rows}](y, x, cols, cols, "BLOCK"_c = 128);
      got[d] = y.to_host();
    }
    check_same_bits(got[0], got[1], "softmax");
    double err = 0;
    for (int r = 0; r < rows; ++r) {
      const float* in = &hx[static_cast<std::size_t>(r * cols)];
      float mx = *std::max_element(in, in + cols), s = 0;
      for (int c = 0; c < cols; ++c) s += std::exp(in[c] - mx);
      for (int c = 0; c < cols; ++c)
        err = std::max(err, static_cast<double>(std::abs(got[0][static_cast<std::size_t>(r * cols + c)] -
                                                         std::exp(in[c] - mx) / s)));
    }
    CHECK(err < 1e-6);
  }

  {  // matmul through tl::dot, tf32 (the default) and ieee, masked edges
    const int M = 40, N = 48, K = 72;
    auto ha = random_floats(static_cast<std::size_t>(M * K), 3), hb = random_floats(static_cast<std::size_t>(K * N), 4);
    for (bool ieee : {false, true}) {
      CAPTURE(ieee);
      std::vector<float> got[2];
      for (int d = 0; d < 2; ++d) {
        auto a = devs[d].upload(ha), b = devs[d].upload(hb);
        auto c = devs[d].alloc<float>(static_cast<std::size_t>(M * N));
        const int grid = tile::cdiv(M, 16) * tile::cdiv(N, 16);
        matmul[{grid}](a, b, c, M, N, K, "BM"_c = 16, "BN"_c = 16, "BK"_c = 16, "IEEE"_c = ieee);
        got[d] = c.to_host();
      }
      check_same_bits(got[0], got[1], ieee ? "matmul (ieee)" : "matmul (tf32)");
      double err = 0;
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
          double s = 0;
          for (int k = 0; k < K; ++k)
            s += static_cast<double>(ha[static_cast<std::size_t>(i * K + k)]) * hb[static_cast<std::size_t>(k * N + j)];
          err = std::max(err, std::abs(s - got[0][static_cast<std::size_t>(i * N + j)]));
        }
      CHECK(err < (ieee ? 1e-4 : 5e-2));
    }
  }

  {  // cumsum, forward and reverse, floats and ints
    const int R = 4, C = 64;
    auto hx = random_floats(static_cast<std::size_t>(R * C), 5, -10.f, 10.f);
    auto hi = random_ints(static_cast<std::size_t>(R * C), 6, -1000, 1000);
    std::vector<float> got[2];
    std::vector<std::int32_t> goti[2];
    for (int d = 0; d < 2; ++d) {
      auto x = devs[d].upload(hx);
      auto xi = devs[d].upload(hi);
      auto out = devs[d].alloc<float>(static_cast<std::size_t>(3 * R * C));
      auto outi = devs[d].alloc<std::int32_t>(static_cast<std::size_t>(2 * R * C));
      scans[{1}](x, xi, out, outi, "R"_c = R, "C"_c = C);
      got[d] = out.to_host();
      goti[d] = outi.to_host();
    }
    check_same_bits(got[0], got[1], "cumsum (f32)");
    check_same_bits(goti[0], goti[1], "cumsum (i32)");
    std::int32_t run = 0;  // row 0, forward, ints
    for (int c = 0; c < C; ++c) {
      run += hi[static_cast<std::size_t>(c)];
      CHECK(goti[0][static_cast<std::size_t>(c)] == run);
    }
  }

  {  // argmax with ties
    const int R = 8, C = 64;
    auto hx = random_ints(static_cast<std::size_t>(R * C), 8, 0, 9);
    std::vector<float> fx(hx.begin(), hx.end());
    std::vector<std::int32_t> rows[2], cols[2];
    for (int d = 0; d < 2; ++d) {
      auto x = devs[d].upload(fx);
      auto r = devs[d].alloc<std::int32_t>(R), c = devs[d].alloc<std::int32_t>(C);
      argmaxes[{1}](x, r, c, "R"_c = R, "C"_c = C);
      rows[d] = r.to_host();
      cols[d] = c.to_host();
    }
    check_same_bits(rows[0], rows[1], "argmax along rows");
    check_same_bits(cols[0], cols[1], "argmax along columns");
    for (int r = 0; r < R; ++r) {
      const float* in = &fx[static_cast<std::size_t>(r * C)];
      CHECK(rows[0][static_cast<std::size_t>(r)] == std::max_element(in, in + C) - in);  // the first maximum
    }
  }

  {  // atomics: a float sum into one cell (order-dependent: within tolerance), an i32 max (exact)
    const int grid = 64, block = 32;
    auto hx = random_floats(static_cast<std::size_t>(grid * block), 9, 0.f, 1.f);
    double want = 0;
    for (float v : hx) want += v;
    float sum[2];
    for (int d = 0; d < 2; ++d) {
      auto cell = devs[d].upload(std::vector<float>{0.0f});
      auto x = devs[d].upload(hx);
      atomic_sum[{grid}](cell, x, "BLOCK"_c = block);
      sum[d] = cell.to_host()[0];
    }
    INFO("sum of " << hx.size() << " values: " << want << "; cpu " << sum[0] << ", interpreter " << sum[1]);
    CHECK(std::abs(sum[0] - want) < 1e-4 * want);
    CHECK(std::abs(sum[1] - want) < 1e-4 * want);

    const int slots = 8;
    auto hi = random_ints(static_cast<std::size_t>(grid * block), 10, -1000000, 1000000);
    std::vector<std::int32_t> wmax(slots, std::numeric_limits<std::int32_t>::min());
    for (std::size_t i = 0; i < hi.size(); ++i) wmax[i % slots] = std::max(wmax[i % slots], hi[i]);
    std::vector<std::int32_t> got[2];
    for (int d = 0; d < 2; ++d) {
      auto s = devs[d].upload(std::vector<std::int32_t>(slots, std::numeric_limits<std::int32_t>::min()));
      auto x = devs[d].upload(hi);
      atomic_maxes[{grid}](s, x, "BLOCK"_c = block, "SLOTS"_c = slots);
      got[d] = s.to_host();
    }
    check_same_bits(got[0], got[1], "atomic_max (i32)");
    CHECK(got[0] == wmax);
  }
}

// ---- fused loads and stores -------------------------------------------------------------------
// The CPU backend computes a single-use load inside its consumer's loop (codegen/lowering.hpp).
// Semantics must not change: every load of a program happens before any later store, so a store
// that overlaps a fused load at a different element takes the unfused path, and a store between
// a load and its use sees the load done first.

auto shift_in_place = tile::kernel("jit_shift_in_place", [](tl::ptr<float> p, tl::i32 n, tl::i32 by) {
  auto offs = tl::arange(0, 64);
  auto v = tl::load(p + offs, offs < n);
  tl::store(p + offs + by, v * 2.f, offs + by < n);  // overlaps the load at another element
});
auto same_place = tile::kernel("jit_scale_in_place", [](tl::ptr<float> p, tl::i32 n) {
  auto offs = tl::arange(0, 64);
  tl::store(p + offs, tl::load(p + offs, offs < n) + 1.f, offs < n);  // each element read, then written
});
auto reverse_in_place = tile::kernel("jit_reverse_in_place", [](tl::ptr<float> p) {
  auto offs = tl::arange(0, 64);
  tl::store(p + (63 - offs), tl::load(p + offs));  // a negative coefficient, full overlap
});
auto store_between = tile::kernel("jit_store_between", [](tl::ptr<float> x, tl::ptr<float> y) {
  auto offs = tl::arange(0, 64);
  auto v = tl::load(x + offs);
  tl::store(x + offs, tl::zeros<float>({64}));  // x is cleared after it was read
  tl::store(y + offs, v + 1.f);
});

auto loop_loads = tile::kernel("jit_loop_loads", [](tl::ptr<float> x, tl::ptr<float> y, tl::i32 n) {
  auto offs = tl::arange(0, 16);
  auto acc = tl::zeros<float>({16});
  tl::for_range(0, n, 16, [&](tl::tensor off) {  // loads fused inside a loop body, a store after it
    acc += tl::load(x + off + offs, off + offs < n, 0.0f) * 2.f;
  });
  tl::store(y + offs, acc);
});

TEST_CASE("cpu: fused loads keep their order with stores (in place, shifted, reversed, stores between)" * tiletest::needs_cpu) {
  tile::device devs[2] = {tile::device::get("cpu"), tile::device::get("interpreter")};
  const auto h = random_floats(64, 42);
  for (int by : {1, 3, -1}) {
    CAPTURE(by);
    std::vector<float> got[2];
    for (int d = 0; d < 2; ++d) {
      auto p = devs[d].upload(h);
      if (by < 0)
        same_place[{1}](p, 60);
      else
        shift_in_place[{1}](p, 64, by);
      got[d] = p.to_host();
    }
    check_same_bits(got[0], got[1], "in place");
    if (by > 0) CHECK(got[0][static_cast<std::size_t>(by + 5)] == h[5] * 2.f);  // the old value, not a re-read one
  }
  {
    std::vector<float> got[2];
    for (int d = 0; d < 2; ++d) {
      auto p = devs[d].upload(h);
      reverse_in_place[{1}](p);
      got[d] = p.to_host();
    }
    check_same_bits(got[0], got[1], "reversed in place");
    CHECK(got[0][0] == h[63]);
    CHECK(got[0][63] == h[0]);
  }
  {
    std::vector<float> gx[2], gy[2];
    for (int d = 0; d < 2; ++d) {
      auto x = devs[d].upload(h);
      auto y = devs[d].alloc<float>(64);
      store_between[{1}](x, y);
      gx[d] = x.to_host();
      gy[d] = y.to_host();
    }
    check_same_bits(gy[0], gy[1], "a store between a load and its use");
    std::vector<float> gl[2];
    const auto hl = random_floats(100, 43);
    for (int d = 0; d < 2; ++d) {
      auto x2 = devs[d].upload(hl);
      auto y2 = devs[d].alloc<float>(16);
      loop_loads[{1}](x2, y2, 100);
      gl[d] = y2.to_host();
    }
    check_same_bits(gl[0], gl[1], "loads in a loop body, the store after the loop");
    CHECK(gy[0][7] == h[7] + 1.f);
    CHECK(gx[0][7] == 0.f);
  }
}

// ---- tiles larger than a thread's stack -----------------------------------------------------------
// A program's tiles can exceed any thread's stack (2^20 f32 = 4 MiB a tile, several live at once):
// the CPU backend keeps tiles over 16 KiB in per-thread scratch memory instead.
auto big_tiles = tile::kernel("jit_big_tiles", [](tl::ptr<float> x, tl::ptr<float> out, tl::i32 n,
                                                  tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto a = tl::load(x + offs, m, 0.0f);  // used three times: kept in memory
  auto b = a * a + 1.f;                  // used twice
  tl::store(out + offs, b + a + tl::max(b, 0) + tl::sum(a, 0) * 0.f, m);
});

TEST_CASE("cpu: tiles of 2^16 to 2^20 elements (beyond the stack) run and agree with the interpreter" * tiletest::needs_cpu) {
  tile::device cpu = tile::device::get("cpu"), interp = tile::device::get("interpreter");
  for (int lg : {16, 18, 20}) {
    const int block = 1 << lg, n = block * 2 + 17;
    CAPTURE(block);
    const auto hx = random_floats(static_cast<std::size_t>(n), 44);
    std::vector<float> got[2];
    tile::device devs[2] = {cpu, interp};
    for (int d = 0; d < (lg <= 16 ? 2 : 1); ++d) {
      auto x = devs[d].upload(hx);
      auto out = devs[d].alloc<float>(static_cast<std::size_t>(n));
      big_tiles[{tile::cdiv(n, block)}](x, out, n, "BLOCK"_c = block);
      got[d] = out.to_host();
    }
    if (lg <= 16) check_same_bits(got[0], got[1], "2^16 elements");
    // host reference for every size
    for (int p = 0; p < tile::cdiv(n, block); ++p) {
      float mx = -INFINITY;
      for (int i = p * block; i < std::min(n, (p + 1) * block); ++i) {
        const float a = hx[static_cast<std::size_t>(i)];
        mx = std::max(mx, a * a + 1.f);
      }
      if ((p + 1) * block > n) mx = std::max(mx, 1.f);  // masked lanes read 0: b = 1
      const std::size_t i = static_cast<std::size_t>(p * block);
      CHECK(got[0][i] == hx[i] * hx[i] + 1.f + hx[i] + mx);
    }
  }
}
