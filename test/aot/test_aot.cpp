// test/aot/test_aot.cpp — kernels built ahead of time (src/aot), end to end on the CPU. Built
// twice: linked with libtile_rt (no compiler: every launch must find its kernel in the object
// kernels_gen wrote, and one that does not is an error naming the specialization and the
// nearest ones) and with libtile (TILE_TEST_FULL: the object is a pre-filled cache; what it
// lacks compiles). AOT_ARCHIVE names an archive file the same build step wrote for sm_90a, which
// the bad-input cases damage.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "doctest/doctest.h"
#include "kernels.hpp"
#ifdef TILE_TEST_FULL
#include "jit/compile.hpp"  // jit::stats: whether a launch compiled
#endif

namespace tile::jit {
std::uint64_t xxh64(std::string_view s, std::uint64_t seed);  // src/jit/disk_cache.hpp (exported)
}

using namespace tile::literals;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

/// This CPU's best x86-64 level, as the cpu device's archive targets name it.
std::string host_level() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v4")) return "cpu-x86-64-v4";
  if (__builtin_cpu_supports("x86-64-v3")) return "cpu-x86-64-v3";
  if (__builtin_cpu_supports("x86-64-v2")) return "cpu-x86-64-v2";
  return "cpu-x86-64";
}

std::string read(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string write_temp(const std::string& name, const std::string& bytes) {
  const char* tmp = std::getenv("TMPDIR");
  const std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/tile-aot-test-" + std::to_string(::getpid()) + "-" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string archive_path() {
  const char* p = std::getenv("AOT_ARCHIVE");
  REQUIRE_MESSAGE(p, "AOT_ARCHIVE names the archive file the build step wrote (test/aot/meson.build)");
  return p;
}

/// The message of what `f` throws ("" when it does not throw).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const tile::error& e) {
    return e.what();
  }
  return "";
}

/// Launches that went to the compiler (compiled, or found in its memory or disk cache).
std::uint64_t compiles() {
#ifdef TILE_TEST_FULL
  const auto s = tile::jit::stats();
  return s.compiled + s.memory_hits + s.disk_hits;
#else
  return 0;  // libtile_rt compiles nothing
#endif
}

}  // namespace

TEST_CASE("the linked object registered its kernels for this CPU (and sm_90a)") {
  const std::string c = tile::aot::catalog();
  INFO(c);
  CHECK(contains(c, "aot_add  ptr<f32> 16-byte-aligned noalias, ptr<f32> 16-byte-aligned noalias, ptr<f32> 16-byte-aligned "
                    "noalias, i32 positive, BLOCK=256, num_warps=4, num_stages=3  cpu-x86-64"));
  CHECK(contains(c, "ptx:sm_90a"));
  CHECK(contains(c, "aot_row_sum"));
  CHECK(contains(c, "aot_desc_copy"));
  CHECK(contains(c, "aot_kernels.o"));
  // the add listed twice is there once a target
  CHECK(c.find("BLOCK=256, num_warps=4, num_stages=3  sm_90a") == c.rfind("BLOCK=256, num_warps=4, num_stages=3  sm_90a"));
}

TEST_CASE("launches find their prebuilt kernels and compute what the host computes") {
  auto dev = tile::device::get("cpu");
  const auto before = compiles();
  const int n = 1000;
  std::vector<float> hx(n), hy(n);
  for (int i = 0; i < n; ++i) hx[i] = 0.5f * i, hy[i] = 3.0f - i;
  auto x = dev.upload(hx), y = dev.upload(hy);
  auto out = dev.alloc<float>(n);
  aot_test::add[{tile::cdiv(n, 256)}](x, y, out, n, "BLOCK"_c = 256);
  auto h = out.to_host();
  for (int i = 0; i < n; ++i) REQUIRE(h[i] == hx[i] + hy[i]);
  // 777: the same class as 1000 (positive, not a multiple of 16): the same kernel
  out.fill_zero();
  aot_test::add[{tile::cdiv(777, 256)}](x, y, out, 777, "BLOCK"_c = 256);
  h = out.to_host();
  CHECK(h[776] == hx[776] + hy[776]);
  CHECK(h[777] == 0.0f);
  // a multiple of 16, BLOCK 1024
  auto big = dev.alloc<float>(4096), bx = dev.upload(std::vector<float>(4096, 1.5f)), by = dev.upload(std::vector<float>(4096, 2.0f));
  aot_test::add[{4}](bx, by, big, 4096, "BLOCK"_c = 1024);
  CHECK(big.to_host()[4095] == 3.5f);
  // a reduction over a large tile (the CPU kernel's scratch memory) with a device-side check
  const int rows = 7, cols = 100;
  std::vector<float> m(rows * cols);
  for (int i = 0; i < rows * cols; ++i) m[i] = static_cast<float>(i % 13);
  auto in = dev.upload(m);
  auto sums = dev.alloc<float>(rows);
  aot_test::row_sum[{rows}](in, sums, cols, "BLOCK"_c = 128);
  auto hs = sums.to_host();
  for (int r = 0; r < rows; ++r) {
    float want = 0;
    for (int c = 0; c < cols; ++c) want += m[r * cols + c];
    CHECK(hs[r] == want);
  }
  // tensor descriptors, run as masked loads
  const int R = 50, C = 48;
  std::vector<float> src(R * C);
  for (int i = 0; i < R * C; ++i) src[i] = static_cast<float>(i);
  auto s = dev.upload(src);
  auto d = dev.alloc<float>(R * C);
  aot_test::desc_copy[{tile::cdiv(R, 16), tile::cdiv(C, 16)}](s, d, R, C, "BR"_c = 16, "BC"_c = 16);
  auto hd = d.to_host();
  CHECK(hd[0] == 0.0f);
  CHECK(hd[R * C - 1] == 2.0f * (R * C - 1));
  CHECK(compiles() == before);  // every one prebuilt, none compiled
}

TEST_CASE("a launch whose specialization was not built ahead of time") {
  auto dev = tile::device::get("cpu");
  auto x = dev.upload(std::vector<float>(100, 1.0f)), y = dev.upload(std::vector<float>(100, 2.0f));
  auto out = dev.alloc<float>(100);
  const auto before = compiles();
  const int line = __LINE__ + 1;
  auto launch = [&] { aot_test::add[{1}](x, y, out, 100, "BLOCK"_c = 128); };  // BLOCK = 128 was not listed
#ifdef TILE_TEST_FULL
  // the full library compiles it, as without an archive
  launch();
  CHECK(out.to_host()[99] == 3.0f);
  CHECK(compiles() == before + 1);
  (void)line;
#else
  const std::string e = error_of(launch);
  INFO(e);
  CHECK(contains(e, "test_aot.cpp:" + std::to_string(line)));
  CHECK(contains(e, "kernel 'aot_add'"));
  CHECK(contains(e, "no prebuilt kernel for this specialization on cpu"));
  CHECK(contains(e, "i32 positive, BLOCK=128, num_warps=4, num_stages=3"));
  CHECK(contains(e, "nearest prebuilt specializations of 'aot_add'"));
  CHECK(contains(e, "BLOCK=256, num_warps=4, num_stages=3  [cpu-x86-64"));
  CHECK(contains(e, "list the launch in its ahead-of-time build"));
  // the library keeps working: a listed launch still runs
  aot_test::add[{1}](x, y, out, 100, "BLOCK"_c = 256);
  CHECK(out.to_host()[99] == 3.0f);
  (void)before;
#endif
}

TEST_CASE("an archive file loads; a damaged or foreign one is refused, naming the file and the reason") {
  const std::string good = archive_path();
  const std::string bytes = read(good);
  REQUIRE(bytes.size() > 100);
  SUBCASE("the good one") {
    tile::aot::load(good);
    CHECK(contains(tile::aot::catalog(), "BLOCK=2048"));  // listed for the archive file only
  }
  SUBCASE("missing") {
    const std::string e = error_of([] { tile::aot::load("/nonexistent/kernels.tilear"); });
    CHECK(contains(e, "cannot read /nonexistent/kernels.tilear"));
  }
  SUBCASE("not an archive") {
    const std::string p = write_temp("junk", "#!/bin/sh\necho hello\n");
    const std::string e = error_of([&] { tile::aot::load(p); });
    CHECK(contains(e, p + " is refused: not a tile kernel archive"));
    std::remove(p.c_str());
  }
  SUBCASE("truncated") {
    const std::string p = write_temp("truncated", bytes.substr(0, bytes.size() / 2));
    const std::string e = error_of([&] { tile::aot::load(p); });
    CHECK(contains(e, p + " is refused: truncated"));
    std::remove(p.c_str());
  }
  SUBCASE("one byte changed") {
    std::string b = bytes;
    b[b.size() / 2] ^= 0x20;
    const std::string p = write_temp("corrupt", b);
    const std::string e = error_of([&] { tile::aot::load(p); });
    CHECK(contains(e, p + " is refused: corrupt"));
    std::remove(p.c_str());
  }
  SUBCASE("built by another tile version") {
    std::string b = bytes;
    const std::size_t at = b.find("\ntile ");
    REQUIRE(at != std::string::npos);
    b[at + 6] = b[at + 6] == '9' ? '8' : '9';  // the version's first digit
    const std::size_t tail = b.rfind("\nxxh64 ");
    char sum[17];
    std::snprintf(sum, sizeof sum, "%016llx", static_cast<unsigned long long>(tile::jit::xxh64(b.substr(0, tail + 1), 0)));
    b.replace(tail + 7, 16, sum);  // a valid checksum: only the version is wrong
    const std::string p = write_temp("version", b);
    const std::string e = error_of([&] { tile::aot::load(p); });
    CHECK(contains(e, p + " is refused: built by tile "));
    CHECK(contains(e, "build it again"));
    std::remove(p.c_str());
  }
  const std::string c = tile::aot::catalog();
  CHECK(!contains(c, "tile-aot-test-"));  // nothing of a refused file was added
}

TEST_CASE("kernels built for another device: the launch names where they are") {
  tile::aot::load(archive_path());  // BLOCK = 2048 only for sm_90a
  auto dev = tile::device::get("cpu");
  auto x = dev.upload(std::vector<float>(100, 1.0f)), y = dev.upload(std::vector<float>(100, 2.0f));
  auto out = dev.alloc<float>(100);
  const std::string e = error_of([&] { aot_test::add[{1}](x, y, out, 100, "BLOCK"_c = 2048); });
#ifdef TILE_TEST_FULL
  CHECK(e.empty());  // compiled for the CPU
  CHECK(out.to_host()[99] == 3.0f);
#else
  INFO(e);
  CHECK(contains(e, "no prebuilt kernel for this specialization on cpu"));
  CHECK(contains(e, "BLOCK=2048, num_warps=4, num_stages=3  [") );
  CHECK(contains(e, "ptx:sm_90a]"));
#endif
}

TEST_CASE("an autotuned launch takes the choice made when its kernels were built, without tuning") {
  auto dev = tile::device::get("cpu");
  const int n = 5000;  // the key the build step tuned
  std::vector<float> hx(n);
  for (int i = 0; i < n; ++i) hx[i] = static_cast<float>(i);
  auto x = dev.upload(hx);
  auto out = dev.alloc<float>(n);
  const std::string c = tile::aot::catalog();
  INFO(c);
  REQUIRE(contains(c, "aot_scale  tuned for configs {BLOCK: 128, num_warps: 4, num_stages: 1}{BLOCK: 512, num_warps: 4, "
                      "num_stages: 1}; key n=5000 on cpu-x86-64"));
  // tuned where the archive was built: taken here only if this CPU's best level is that one's
  const bool same_level = contains(c, "key n=5000 on " + host_level() + ":");
  const auto before = compiles();
  auto grid = [=](const tile::meta& m) { return aot_test::scale_grid(m, n); };
  aot_test::scale[grid](x, out, n);
  const auto h = out.to_host();
  for (int i = 0; i < n; ++i) REQUIRE(h[i] == 3.0f * hx[i]);
  const auto s = aot_test::scale.stats();
  REQUIRE(aot_test::scale.last_config());
  if (same_level) {
    CHECK(s.shipped == 1);
    CHECK(s.tunings == 0);
    CHECK(contains(c, "{" + aot_test::scale.last_config()->str() + "}  (aot_kernels.o"));  // the config shipped
    CHECK(compiles() == before);  // the chosen config's kernel was prebuilt too
  } else {
    CHECK(s.shipped == 0);  // a choice made for another CPU level is not taken: tuned here
    CHECK(s.tunings == 1);
  }
}

#ifdef TILE_TEST_FULL
TEST_CASE("TILE_AOT_RECORD: the launches a run traces are compiled ahead of time at its exit") {
  const char* child = std::getenv("AOT_RECORD_CHILD");
  REQUIRE_MESSAGE(child, "AOT_RECORD_CHILD names record_child (test/aot/meson.build)");
  const std::string out = write_temp("recorded.tilear", "");
  std::remove(out.c_str());
  const std::string log = out + ".log";
  const std::string cmd = "TILE_AOT_RECORD=" + out + " TILE_AOT_TARGETS=sm_80 " + child + " 2>" + log;
  REQUIRE(std::system(cmd.c_str()) == 0);
  const std::string said = read(log);
  INFO(said);
  CHECK(contains(said, "tile::aot: recorded 2 launches for sm_80 -> " + out));
  tile::aot::load(out);
  const std::string c = tile::aot::catalog();
  CHECK(contains(c, "i32 positive, BLOCK=64, num_warps=4, num_stages=3  ptx:sm_80  (" + out + ")"));
  CHECK(contains(c, "aot_row_sum  ptr<f32> 16-byte-aligned noalias, ptr<f32> 16-byte-aligned noalias, i32 positive, "
                    "BLOCK=128, num_warps=4, num_stages=3  ptx:sm_80  (" + out + ")"));
  std::remove(out.c_str());
  std::remove(log.c_str());
}
#endif
