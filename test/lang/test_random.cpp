// test/lang/test_random.cpp — tl::randint4x / randint / rand / randn: Philox 4x32 known answers
// from Random123, an independent C++ Philox for many (seed, offset) pairs including 64-bit seeds,
// the uniform and normal mappings, their statistics over 2^16 samples, and determinism across
// launches, block sizes and tile shapes.
//
// The counter is (offset, 0, 0, 0) and the key (seed & 0xffffffff, seed >> 32), as in Triton.
#include <algorithm>
#include <array>

#include "lang_test2.hpp"

namespace {
using lt2::ix;
using u32 = std::uint32_t;
using ctr_t = std::array<u32, 4>;

/// Philox 4x32-R from the Random123 definition (Salmon et al., SC'11): each round multiplies
/// words 0 and 2 by 0xD2511F53 and 0xCD9E8D57 and mixes the high halves with the key; the key
/// is bumped by the Weyl constants 0x9E3779B9, 0xBB67AE85 between rounds.
ctr_t philox(ctr_t c, std::array<u32, 2> k, int rounds = 10) {
  for (int r = 0; r < rounds; ++r) {
    if (r > 0) {
      k[0] += 0x9E3779B9u;
      k[1] += 0xBB67AE85u;
    }
    const std::uint64_t p0 = std::uint64_t{0xD2511F53u} * c[0];
    const std::uint64_t p1 = std::uint64_t{0xCD9E8D57u} * c[2];
    c = {static_cast<u32>(p1 >> 32) ^ c[1] ^ k[0], static_cast<u32>(p1), static_cast<u32>(p0 >> 32) ^ c[3] ^ k[1],
         static_cast<u32>(p0)};
  }
  return c;
}
ctr_t philox_seed(std::uint64_t seed, u32 offset, int rounds = 10) {
  return philox({offset, 0, 0, 0}, {static_cast<u32>(seed), static_cast<u32>(seed >> 32)}, rounds);
}

/// Triton's uint_to_uniform_float for 32 bits: fold the sign, scale by a float just below 2^-31.
float uniform_ref(u32 bits) {
  auto i = static_cast<std::int32_t>(bits);
  if (i < 0) i = -(i + 1);  // -i - 1 without overflow at INT32_MIN
  return static_cast<float>(i) * 4.6566127342e-10f;
}

// out[4 * i + j] = word j of randint4x(seed, i + base) for i in this program's block
auto rint4 = tile::kernel("rint4", [](tl::ptr<u32> out, tl::i64 seed, tl::i32 base, tl::constexpr_<"BLOCK"> BLOCK,
                                      tl::constexpr_<"ROUNDS"> ROUNDS) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto r = tl::randint4x(seed, offs + base, static_cast<int>(ROUNDS));
  for (std::int64_t j = 0; j < 4; ++j) {
    CHECK(r[ix(j)].dtype() == tile::dtype::u32);
    CHECK(r[ix(j)].shape() == offs.shape());
    tl::store(out + offs * 4 + j, r[ix(j)]);
  }
});

std::vector<u32> run_rint4(std::int64_t seed, int base, int n, int block, int rounds = 10) {
  auto out = lt2::dev().alloc<u32>(ix(4 * n));
  rint4[{n / block}](out, seed, base, "BLOCK"_c = block, "ROUNDS"_c = rounds);
  return out.to_host();
}
}  // namespace

TEST_CASE("the reference Philox reproduces Random123's known-answer vectors") {
  // Random123 kat_vectors: counter, key -> output
  struct kat {
    int rounds;
    ctr_t ctr;
    std::array<u32, 2> key;
    ctr_t want;
  };
  const kat kats[] = {
      {10, {0, 0, 0, 0}, {0, 0}, {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
      {10, {~0u, ~0u, ~0u, ~0u}, {~0u, ~0u}, {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
      {10, {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u},
       {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}},
      {7, {0, 0, 0, 0}, {0, 0}, {0x5f6fb709u, 0x0d893f64u, 0x4f121f81u, 0x4f730a48u}},
      {7, {~0u, ~0u, ~0u, ~0u}, {~0u, ~0u}, {0x5207ddc2u, 0x45165e59u, 0x4d8ee751u, 0x8c52f662u}},
      {7, {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u},
       {0x4dfccabau, 0x190a87f0u, 0xc47362bau, 0xb6b5242au}},
  };
  for (const kat& t : kats) {
    CAPTURE(t.rounds);
    CAPTURE(t.ctr[0]);
    CHECK(philox(t.ctr, t.key, t.rounds) == t.want);
  }
}

TEST_CASE("randint4x(seed = 0, offset = 0) is Random123's Philox4x32-10 known answer") {
  auto r = run_rint4(0, 0, 16, 16);
  CHECK(r[0] == 0x6627e8d5u);
  CHECK(r[1] == 0xe169c58du);
  CHECK(r[2] == 0xbc57ac4cu);
  CHECK(r[3] == 0x9b00dbd8u);
  // and with 7 rounds, the Philox4x32-7 known answer
  auto r7 = run_rint4(0, 0, 16, 16, 7);
  CHECK(r7[0] == 0x5f6fb709u);
  CHECK(r7[1] == 0x0d893f64u);
  CHECK(r7[2] == 0x4f121f81u);
  CHECK(r7[3] == 0x4f730a48u);
}

TEST_CASE("randint4x matches the reference Philox for many seeds (64-bit too) and offsets") {
  const std::int64_t seeds[] = {0,
                                1,
                                42,
                                0x7fffffff,
                                0xffffffffLL,          // key (0xffffffff, 0)
                                0x100000000LL,         // key (0, 1): the high word matters
                                0x123456789abcdef0LL,  // both words
                                -1,                    // key (0xffffffff, 0xffffffff)
                                -7,
                                std::numeric_limits<std::int64_t>::min()};
  for (std::int64_t seed : seeds)
    for (int base : {0, 1, 1000, 123456, 0x7fffff00}) {
      CAPTURE(seed);
      CAPTURE(base);
      auto r = run_rint4(seed, base, 256, 64);
      std::vector<u32> want(r.size());
      for (int i = 0; i < 256; ++i) {
        auto w = philox_seed(static_cast<std::uint64_t>(seed), static_cast<u32>(i + base));
        for (int j = 0; j < 4; ++j) want[ix(4 * i + j)] = w[ix(j)];
      }
      lt2::check_same(r, want);
    }
  // other round counts
  for (int rounds : {1, 3, 7, 12}) {
    CAPTURE(rounds);
    auto r = run_rint4(99, 5, 64, 64, rounds);
    for (int i = 0; i < 64; i += 9)
      for (int j = 0; j < 4; ++j) CHECK(r[ix(4 * i + j)] == philox_seed(99, static_cast<u32>(i + 5), rounds)[ix(j)]);
  }
}

TEST_CASE("seeds and offsets of other integer types, literals and 2-D offset tiles") {
  // seed: an i32 argument (sign-extended to 64 bits, as Triton's cast does), a u64 argument, a
  // trace-time literal; offsets: a u32 tile above 2^31, a 2-D tile
  auto k = tile::kernel("seed_types", [](tl::ptr<u32> out, tl::i32 s32, tl::u64 s64, tl::u32 base) {
    using tl::_;
    using tl::newaxis;
    auto i = tl::arange(0, 16);
    tl::store(out + i, tl::randint(s32, i));
    tl::store(out + 16 + i, tl::randint(s64, i));
    tl::store(out + 32 + i, tl::randint(0x5eed, i));
    tl::store(out + 48 + i, tl::randint(7, tl::cast<u32>(i) + base));
    auto offs2 = tl::arange(0, 4)(_, newaxis) * 8 + tl::arange(0, 8)(newaxis, _);
    auto r2 = tl::randint4x(7, offs2);
    CHECK(r2[3].shape() == tl::shape_t{4, 8});
    tl::store(out + 64 + offs2, r2[3]);
  });
  auto out = lt2::dev().alloc<u32>(96);
  const std::uint64_t s64 = 0xfedcba9876543210ull;
  k[{1}](out, -3, s64, 0x80000000u);
  auto r = out.to_host();
  for (u32 i = 0; i < 16; ++i) {
    CHECK(r[i] == philox_seed(static_cast<std::uint64_t>(std::int64_t{-3}), i)[0]);
    CHECK(r[16 + i] == philox_seed(s64, i)[0]);
    CHECK(r[32 + i] == philox_seed(0x5eed, i)[0]);
    CHECK(r[48 + i] == philox_seed(7, 0x80000000u + i)[0]);
  }
  for (u32 i = 0; i < 32; ++i) CHECK(r[64 + i] == philox_seed(7, i)[3]);
}

namespace {
auto dists = tile::kernel("dists", [](tl::ptr<u32> bits, tl::ptr<float> u, tl::ptr<float> g, tl::i64 seed, tl::i32 base,
                                      tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto x = tl::randint(seed, offs + base);
  auto fu = tl::rand(seed, offs + base), fg = tl::randn(seed, offs + base);
  CHECK(x.dtype() == tile::dtype::u32);
  CHECK(fu.dtype() == tile::dtype::f32);
  CHECK(fg.dtype() == tile::dtype::f32);
  tl::store(bits + offs, x);
  tl::store(u + offs, fu);
  tl::store(g + offs, fg);
});

struct samples {
  std::vector<u32> bits;
  std::vector<float> u, g;
};
samples run_dists(std::int64_t seed, int base, int n, int block) {
  auto d = lt2::dev();
  auto bits = d.alloc<u32>(ix(n));
  auto u = d.alloc<float>(ix(n));
  auto g = d.alloc<float>(ix(n));
  dists[{n / block}](bits, u, g, seed, base, "BLOCK"_c = block);
  return {bits.to_host(), u.to_host(), g.to_host()};
}
}  // namespace

TEST_CASE("randint is word 0; rand and randn are Triton's mappings of words 0 and 1") {
  const int n = 4096;
  for (std::int64_t seed : {std::int64_t{3}, std::int64_t{0x1234567890LL}}) {
    CAPTURE(seed);
    auto s = run_dists(seed, 17, n, 256);
    std::vector<u32> want_bits(ix(n));
    std::vector<float> want_u(ix(n));
    int bad_g = 0;
    std::string first_bad;
    for (int i = 0; i < n; ++i) {
      auto w = philox_seed(static_cast<std::uint64_t>(seed), static_cast<u32>(i + 17));
      want_bits[ix(i)] = w[0];
      want_u[ix(i)] = uniform_ref(w[0]);
      // randn: Box-Muller on two uniforms, u1 clamped to 1e-7, in f32 with <cmath>'s functions
      // (as the interpreter computes them); allow 4 ulps for a different libm
      const float u1 = std::max(1.0e-7f, uniform_ref(w[0])), u2 = uniform_ref(w[1]);
      const float th = 6.283185307179586f * u2;
      const float rad = std::sqrt(-2.0f * std::log(u1));
      const float want_g = rad * std::cos(th);
      // (the GPU's log and cos are its approximate instructions: docs/LANGUAGE.md)
      const float ulps = lt2::dev().backend() == "cuda" ? 64.f : 4.f;
      if (!(std::abs(s.g[ix(i)] - want_g) <= ulps * std::numeric_limits<float>::epsilon() * std::max(1.0f, std::abs(want_g))) &&
          bad_g++ == 0)
        first_bad = "randn at offset " + std::to_string(i + 17) + ": got " + std::to_string(s.g[ix(i)]) + ", want " +
                    std::to_string(want_g);
    }
    CHECK_MESSAGE(bad_g == 0, first_bad);
    lt2::check_same(s.bits, want_bits, "randint");
    lt2::check_same(s.u, want_u, "rand");
  }
}

TEST_CASE("rand is uniform on [0, 1) and randn standard normal over 2^16 samples") {
  const int n = 1 << 16;
  auto s = run_dists(1234, 0, n, 1024);
  // uniform: range, mean 1/2, variance 1/12, a flat 16-bin histogram, extremes near 0 and 1,
  // adjacent words uncorrelated. Tolerances are about 5 standard errors for n = 2^16.
  double su = 0, su2 = 0, cross = 0;
  int bins[16] = {}, outside = 0;
  float lo = 1, hi = 0;
  for (int i = 0; i < n; ++i) {
    const double x = s.u[ix(i)];
    if (!(x >= 0.0 && x < 1.0)) {
      ++outside;
      continue;
    }
    su += x;
    su2 += x * x;
    if (i > 0) cross += (x - 0.5) * (s.u[ix(i - 1)] - 0.5);
    ++bins[static_cast<int>(x * 16)];
    lo = std::min(lo, s.u[ix(i)]);
    hi = std::max(hi, s.u[ix(i)]);
  }
  REQUIRE(outside == 0);
  const double mean = su / n, var = su2 / n - mean * mean;
  CHECK(std::abs(mean - 0.5) < 0.006);
  CHECK(std::abs(var - 1.0 / 12) < 0.0015);
  CHECK(std::abs(cross / n) < 0.006 / 12 * 5);  // correlation of neighbours, times 1/12
  double chi2 = 0;
  for (int b : bins) chi2 += (b - n / 16.0) * (b - n / 16.0) / (n / 16.0);
  CHECK(chi2 < 40);  // 15 degrees of freedom: P(chi2 > 40) < 0.001
  CHECK(lo < 1e-3f);
  CHECK(hi > 0.999f);
  // normal: mean 0, variance 1, kurtosis 3, the one- and two-sigma masses
  double sg = 0, sg2 = 0, sg4 = 0;
  int in1 = 0, in2 = 0, not_finite = 0;
  for (float v : s.g) {
    not_finite += !std::isfinite(v);
    sg += v;
    sg2 += double{v} * v;
    sg4 += double{v} * v * v * v;
    in1 += std::abs(v) < 1;
    in2 += std::abs(v) < 2;
  }
  REQUIRE(not_finite == 0);
  const double gm = sg / n, gv = sg2 / n - gm * gm;
  CHECK(std::abs(gm) < 0.02);
  CHECK(std::abs(gv - 1) < 0.03);
  CHECK(std::abs(sg4 / n - 3) < 0.1);
  CHECK(std::abs(static_cast<double>(in1) / n - 0.6827) < 0.01);
  CHECK(std::abs(static_cast<double>(in2) / n - 0.9545) < 0.005);
  // 32-bit words: nearly all distinct (a birthday bound allows about one collision)
  auto sorted = s.bits;
  std::sort(sorted.begin(), sorted.end());
  CHECK(std::unique(sorted.begin(), sorted.end()) - sorted.begin() >= n - 4);
}

TEST_CASE("same seed and offset give the same numbers regardless of BLOCK, grid and launch") {
  const int n = 1 << 12;
  auto ref = run_dists(77, 3, n, 1024);
  for (int block : {16, 128, 1024, 4096}) {
    CAPTURE(block);
    auto s = run_dists(77, 3, n, block);
    CHECK(s.bits == ref.bits);
    CHECK(s.u == ref.u);
    CHECK(s.g == ref.g);
  }
  CHECK(run_dists(77, 3, n, 256).bits == ref.bits);  // relaunch of a cached specialization
  // a shifted window: offset base + i agrees with the first launch at the same offsets
  auto shifted = run_dists(77, 3 + 1024, n, 256);
  CHECK(std::equal(shifted.bits.begin(), shifted.bits.begin() + (n - 1024), ref.bits.begin() + 1024));
  // randint4x agrees across block sizes too
  CHECK(run_rint4(-5, 9, 1024, 32) == run_rint4(-5, 9, 1024, 1024));
  // other seeds and offsets give other numbers
  CHECK(run_dists(78, 3, n, 1024).bits != ref.bits);
  CHECK(run_dists(77, 4, n, 1024).bits != ref.bits);
  CHECK(run_dists(77 + (std::int64_t{1} << 32), 3, n, 1024).bits != ref.bits);
}
