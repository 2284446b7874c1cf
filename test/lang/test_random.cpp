// test/lang/test_random.cpp — Philox 4x32-10 (known answers and an independent C++ model) and
// the distributions built on it.
#include <array>

#include "lang_test2.hpp"

namespace {
std::array<std::uint32_t, 4> philox_ref(std::uint64_t seed, std::array<std::uint32_t, 4> c) {
  std::uint32_t k0 = static_cast<std::uint32_t>(seed), k1 = static_cast<std::uint32_t>(seed >> 32);
  for (int r = 0; r < 10; ++r) {
    std::uint64_t p0 = std::uint64_t{0xD2511F53u} * c[0], p1 = std::uint64_t{0xCD9E8D57u} * c[2];
    c = {static_cast<std::uint32_t>(p1 >> 32) ^ c[1] ^ k0, static_cast<std::uint32_t>(p1),
         static_cast<std::uint32_t>(p0 >> 32) ^ c[3] ^ k1, static_cast<std::uint32_t>(p0)};
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c;
}

auto rint4 = tile::kernel("rint4", [](tl::ptr<std::uint32_t> out, tl::i64 seed, tl::i32 base, tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto r = tl::randint4x(seed, offs + base);
  for (int i = 0; i < 4; ++i) tl::store(out + offs * 4 + i, r[static_cast<std::size_t>(i)]);
});
auto uniform = tile::kernel("uniform", [](tl::ptr<float> u, tl::ptr<float> g, tl::i32 seed, tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  tl::store(u + offs, tl::rand(seed, offs));
  tl::store(g + offs, tl::randn(seed, offs));
});
}  // namespace

TEST_CASE("Philox known answer: counter 0, key 0") {
  auto out = lt2::dev().alloc<std::uint32_t>(64);
  rint4[{1}](out, 0, 0, "BLOCK"_c = 16);
  auto r = out.to_host();
  CHECK(r[0] == 0x6627e8d5u);
  CHECK(r[1] == 0xe169c58du);
  CHECK(r[2] == 0xbc57ac4cu);
  CHECK(r[3] == 0x9b00dbd8u);
}

TEST_CASE("randint4x matches an independent Philox for many seeds and offsets") {
  auto d = lt2::dev();
  for (std::int64_t seed : {std::int64_t{1}, std::int64_t{42}, std::int64_t{0x123456789abLL}, std::int64_t{-7}}) {
    for (int base : {0, 1000, 123456}) {
      auto out = d.alloc<std::uint32_t>(256 * 4);
      rint4[{4}](out, seed, base, "BLOCK"_c = 64);
      auto r = out.to_host();
      for (int i = 0; i < 256; i += 7) {
        auto want = philox_ref(static_cast<std::uint64_t>(seed), {static_cast<std::uint32_t>(i + base), 0, 0, 0});
        for (int j = 0; j < 4; ++j) CHECK(r[static_cast<std::size_t>(i * 4 + j)] == want[static_cast<std::size_t>(j)]);
      }
    }
  }
}

TEST_CASE("rand is uniform in [0, 1), randn is standard normal, both independent of BLOCK") {
  const int n = 1 << 16;
  auto d = lt2::dev();
  auto u = d.alloc<float>(n), g = d.alloc<float>(n);
  uniform[{n / 1024}](u, g, 1234, "BLOCK"_c = 1024);
  auto hu = u.to_host(), hg = g.to_host();
  double su = 0, su2 = 0, sg = 0, sg2 = 0;
  for (int i = 0; i < n; ++i) {
    REQUIRE(hu[static_cast<std::size_t>(i)] >= 0.0f);
    REQUIRE(hu[static_cast<std::size_t>(i)] < 1.0f);
    su += hu[static_cast<std::size_t>(i)];
    su2 += hu[static_cast<std::size_t>(i)] * hu[static_cast<std::size_t>(i)];
    sg += hg[static_cast<std::size_t>(i)];
    sg2 += hg[static_cast<std::size_t>(i)] * hg[static_cast<std::size_t>(i)];
  }
  CHECK(su / n == doctest::Approx(0.5).epsilon(0.01));
  CHECK(su2 / n - (su / n) * (su / n) == doctest::Approx(1.0 / 12).epsilon(0.02));
  CHECK(std::abs(sg / n) < 0.02);
  CHECK(sg2 / n == doctest::Approx(1.0).epsilon(0.03));
  // the value at an offset does not depend on the block size or the launch
  auto u2 = d.alloc<float>(n), g2 = d.alloc<float>(n);
  uniform[{n / 128}](u2, g2, 1234, "BLOCK"_c = 128);
  CHECK(u2.to_host() == hu);
  CHECK(g2.to_host() == hg);
  // and each value is Triton's mapping of the first Philox word
  for (int i = 0; i < n; i += 4099) {
    auto bits = static_cast<std::int32_t>(philox_ref(1234, {static_cast<std::uint32_t>(i), 0, 0, 0})[0]);
    if (bits < 0) bits = -bits - 1;
    CHECK(hu[static_cast<std::size_t>(i)] == static_cast<float>(bits) * 4.6566127342e-10f);
  }
}
