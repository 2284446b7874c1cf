// test/jit/cache_child.cpp — run by test_cpu_jit (the disk-cache tests) as a fresh process, with
// TILE_CACHE_DIR / TILE_CACHE set by the test: launches one vector-add kernel on the cpu device,
// checks the result and prints one line to stdout,
//   compiled=<n> disk_hits=<n> memory_hits=<n>
// from tile::jit::stats(). Exit status: 0 if the result is right, 1 if it is wrong, 2 if the
// launch threw (the message on stderr), 3 if the cpu backend is not available.
//
// `cache_child assert a|b BACKEND`: launches a kernel whose device_assert fails, with the assert
// on one line (a) or another (b) and nothing else different, on BACKEND (null: compiled only);
// prints the same counters plus `line=<the assert's line>`, and the error (or "no error") on stderr.
// Exit status 0 unless the backend is missing (3).
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <tile/tile.hpp>
#include <vector>

#include "jit/compile.hpp"

using namespace tile::literals;

namespace {
auto add = tile::kernel("cache_child_add", [](tl::ptr<float> x, tl::ptr<float> y, tl::ptr<float> out, tl::i32 n,
                                              tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs < n;
  tl::store(out + offs, tl::load(x + offs, mask) * 2.0f + tl::load(y + offs, mask), mask);
});
int g_assert_line = 0;  // the line of the assert the last trace made

#define MOVED_ASSERT(v) (tl::device_assert((v) < 5, "v below 5"), g_assert_line = __LINE__)
auto make_moved_assert(bool b) {
  return tile::kernel("cache_child_assert", [b](tl::ptr<std::int32_t> x, tl::i32 n) {
    auto offs = tl::arange(0, 32);
    auto v = tl::load(x + offs, offs < n, 0);
    if (!b) {
      MOVED_ASSERT(v);
    } else {

      MOVED_ASSERT(v);
    }
  });
}

void print_stats() {
  const auto s = tile::jit::stats();
  std::printf("compiled=%llu disk_hits=%llu memory_hits=%llu\n", static_cast<unsigned long long>(s.compiled),
              static_cast<unsigned long long>(s.disk_hits), static_cast<unsigned long long>(s.memory_hits));
}

int moved_assert(bool b, const char* backend) {
  std::optional<tile::device> dev;
  try {
    dev.emplace(tile::device::get(backend));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cache_child: %s\n", e.what());
    return 3;
  }
  auto k = make_moved_assert(b);
  std::vector<std::int32_t> hx(32, 1);
  hx[7] = 9;  // fails the assert
  try {
    auto x = dev->upload(hx);
    k[{1}](x, 32);
    dev->synchronize();
    std::fprintf(stderr, "no error\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
  }
  std::fflush(stderr);
  print_stats();
  std::printf("line=%d\n", g_assert_line);
  std::fflush(stdout);
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "assert") return moved_assert(std::string(argv[2]) == "b", argv[3]);
  bool have_cpu = false;
  for (const auto& b : tile::device::backends()) have_cpu = have_cpu || (b.name == "cpu" && b.available);
  if (!have_cpu) {
    std::fprintf(stderr, "cache_child: the cpu backend is not available\n");
    return 3;
  }
  try {
    auto dev = tile::device::get("cpu");
    const int n = 1000;
    std::vector<float> hx(n), hy(n);
    for (int i = 0; i < n; ++i) {
      hx[static_cast<std::size_t>(i)] = static_cast<float>(i) * 0.5f;
      hy[static_cast<std::size_t>(i)] = static_cast<float>(n - i);
    }
    auto x = dev.upload(hx), y = dev.upload(hy);
    auto out = dev.upload(std::vector<float>(n + 24, -1.0f));
    add[{tile::cdiv(n, 256)}](x, y, out, n, "BLOCK"_c = 256);
    const auto got = out.to_host();
    int bad = 0;
    for (int i = 0; i < n + 24; ++i) {
      const float want = i < n ? hx[static_cast<std::size_t>(i)] * 2.0f + hy[static_cast<std::size_t>(i)] : -1.0f;
      if (got[static_cast<std::size_t>(i)] != want) ++bad;
    }
    const auto s = tile::jit::stats();
    std::printf("compiled=%llu disk_hits=%llu memory_hits=%llu\n", static_cast<unsigned long long>(s.compiled),
                static_cast<unsigned long long>(s.disk_hits), static_cast<unsigned long long>(s.memory_hits));
    std::fflush(stdout);
    if (bad != 0) {
      std::fprintf(stderr, "cache_child: %d wrong elements\n", bad);
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cache_child: %s\n", e.what());
    return 2;
  }
}
