// test/lang/test_dot.cpp — tl::dot against a C++ matrix product: shapes, dtypes, precisions,
// accumulators, transposed operands, masked edges and the blocked-K loop.
#include "lang_test2.hpp"

namespace {
template <class In>
auto dot_kernel = tile::kernel("dot", [](tl::ptr<In> a, tl::ptr<In> b, tl::ptr<float> c, tl::constexpr_<"M"> M,
                                         tl::constexpr_<"N"> N, tl::constexpr_<"K"> K, tl::constexpr_<"PREC"> PREC,
                                         tl::constexpr_<"ACC", bool> ACC, tl::constexpr_<"TRANS_B", bool> TRANS_B) {
  using tl::_;
  using tl::newaxis;
  auto m = tl::arange(0, M), n = tl::arange(0, N), k = tl::arange(0, K);
  auto av = tl::load(a + m(_, newaxis) * K + k(newaxis, _));
  // b is stored [K, N], or [N, K] and transposed in the kernel
  auto bv = TRANS_B ? tl::trans(tl::load(b + n(_, newaxis) * K + k(newaxis, _))) : tl::load(b + k(_, newaxis) * N + n(newaxis, _));
  auto p = static_cast<tl::precision>(PREC.value);
  auto c_ptrs = c + m(_, newaxis) * N + n(newaxis, _);
  auto res = ACC ? tl::dot(av, bv, tl::load(c_ptrs), p) : tl::dot(av, bv, p);
  tl::store(c_ptrs, res);
});

template <class In>
void check_dot(int M, int N, int K, tl::precision p, bool acc, bool trans_b) {
  CAPTURE(M);
  CAPTURE(N);
  CAPTURE(K);
  CAPTURE(static_cast<int>(p));
  CAPTURE(acc);
  CAPTURE(trans_b);
  auto fa = lt2::random_vec<float>(static_cast<std::size_t>(M * K), 1, -1, 1);
  auto fb = lt2::random_vec<float>(static_cast<std::size_t>(K * N), 2, -1, 1);
  auto fc = lt2::random_vec<float>(static_cast<std::size_t>(M * N), 3, -1, 1);
  std::vector<In> ha(fa.begin(), fa.end()), hb(fb.begin(), fb.end());
  auto d = lt2::dev();
  auto a = d.upload(ha), b = d.upload(hb);
  auto c = d.upload(fc);
  dot_kernel<In>[{1}](a, b, c, "M"_c = M, "N"_c = N, "K"_c = K, "PREC"_c = static_cast<int>(p), "ACC"_c = acc,
                      "TRANS_B"_c = trans_b);
  auto r = c.to_host();
  bool round_tf32 = std::is_same_v<In, float> && p == tl::precision::tf32;
  auto in = [&](float v) { return round_tf32 ? lt2::tf32(v) : v; };
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float s = acc ? fc[static_cast<std::size_t>(i * N + j)] : 0.0f;
      for (int k = 0; k < K; ++k) {
        float av = in(static_cast<float>(ha[static_cast<std::size_t>(i * K + k)]));
        float bv = in(static_cast<float>(trans_b ? hb[static_cast<std::size_t>(j * K + k)] : hb[static_cast<std::size_t>(k * N + j)]));
        s += av * bv;
      }
      // the interpreter accumulates k in order in f32: exact agreement; allow a few ulps for fma contraction
      CHECK(r[static_cast<std::size_t>(i * N + j)] == doctest::Approx(s).epsilon(1e-5));
    }
}
}  // namespace

TEST_CASE("dot shapes and precisions, f16 / bf16 / f32") {
  for (auto [M, N, K] : {std::tuple{16, 16, 16}, {32, 16, 64}, {16, 128, 32}, {64, 32, 16}, {128, 16, 128}}) {
    check_dot<tile::half>(M, N, K, tl::precision::tf32, false, false);
    check_dot<tile::bfloat16>(M, N, K, tl::precision::tf32, true, false);
    check_dot<float>(M, N, K, tl::precision::tf32, false, false);
    check_dot<float>(M, N, K, tl::precision::ieee, true, true);
  }
  check_dot<tile::half>(32, 32, 32, tl::precision::ieee, true, true);
}

TEST_CASE("tf32 and ieee differ on f32 inputs that need more than 10 mantissa bits") {
  auto k = tile::kernel("prec", [](tl::ptr<float> out, tl::constexpr_<"PREC"> PREC) {
    auto a = tl::full<float>({16, 16}, 1.0f + 1.0f / 4096);  // needs 12 mantissa bits
    auto b = tl::full<float>({16, 16}, 1.0f);
    auto c = tl::dot(a, b, static_cast<tl::precision>(PREC.value));
    tl::store(out, tl::max(c));
  });
  auto d = lt2::dev();
  auto out = d.alloc<float>(1);
  k[{1}](out, "PREC"_c = static_cast<int>(tl::precision::ieee));
  CHECK(out.to_host()[0] == 16.0f + 16.0f / 4096);
  k[{1}](out, "PREC"_c = static_cast<int>(tl::precision::tf32));
  CHECK(out.to_host()[0] == 16.0f);
}

TEST_CASE("int8 dot accumulates in i32") {
  auto k = tile::kernel("dot_i8", [](tl::ptr<std::int8_t> a, tl::ptr<std::int8_t> b, tl::ptr<std::int32_t> c) {
    using tl::_;
    using tl::newaxis;
    auto r = tl::arange(0, 32);
    auto av = tl::load(a + r(_, newaxis) * 32 + r(newaxis, _));
    auto bv = tl::load(b + r(_, newaxis) * 32 + r(newaxis, _));
    auto res = tl::dot(av, bv);
    tl::static_assert_(res.dtype() == tile::dtype::i32, "i8 dot gives i32");
    tl::store(c + r(_, newaxis) * 32 + r(newaxis, _), res);
  });
  auto ha = lt2::random_vec<std::int8_t>(1024, 5, -128, 127), hb = lt2::random_vec<std::int8_t>(1024, 6, -128, 127);
  auto d = lt2::dev();
  auto a = d.upload(ha), b = d.upload(hb);
  auto c = d.alloc<std::int32_t>(1024);
  k[{1}](a, b, c);
  auto r = c.to_host();
  for (int i = 0; i < 32; ++i)
    for (int j = 0; j < 32; ++j) {
      std::int32_t s = 0;
      for (int l = 0; l < 32; ++l) s += ha[static_cast<std::size_t>(i * 32 + l)] * hb[static_cast<std::size_t>(l * 32 + j)];
      CHECK(r[static_cast<std::size_t>(i * 32 + j)] == s);
    }
}

TEST_CASE("blocked matmul with a K loop and masked edges") {
  auto mm = tile::kernel("mm", [](tl::ptr<float> a, tl::ptr<float> b, tl::ptr<float> c, tl::i32 M, tl::i32 N, tl::i32 K,
                                  tl::constexpr_<"BM"> BM, tl::constexpr_<"BN"> BN, tl::constexpr_<"BK"> BK) {
    using tl::_;
    using tl::newaxis;
    auto rm = tl::program_id(0) * BM + tl::arange(0, BM);
    auto rn = tl::program_id(1) * BN + tl::arange(0, BN);
    auto rk = tl::arange(0, BK);
    auto acc = tl::zeros<float>({BM, BN});
    tl::for_range(0, K, BK, [&](tl::tensor k0) {
      auto kk = k0 + rk;
      auto av = tl::load(a + rm(_, newaxis) * K + kk(newaxis, _), (rm(_, newaxis) < M) & (kk(newaxis, _) < K), 0.0f);
      auto bv = tl::load(b + kk(_, newaxis) * N + rn(newaxis, _), (kk(_, newaxis) < K) & (rn(newaxis, _) < N), 0.0f);
      acc = tl::dot(av, bv, acc, tl::precision::ieee);
    });
    tl::store(c + rm(_, newaxis) * N + rn(newaxis, _), acc, (rm(_, newaxis) < M) & (rn(newaxis, _) < N));
  });
  const int M = 37, N = 50, K = 45;
  auto ha = lt2::random_vec<float>(M * K, 7, -1, 1), hb = lt2::random_vec<float>(K * N, 8, -1, 1);
  auto d = lt2::dev();
  auto a = d.upload(ha), b = d.upload(hb);
  auto c = d.alloc<float>(M * N);
  mm[{tile::cdiv(M, 16), tile::cdiv(N, 32)}](a, b, c, M, N, K, "BM"_c = 16, "BN"_c = 32, "BK"_c = 16);
  auto r = c.to_host();
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float s = 0;
      for (int l = 0; l < K; ++l) s += ha[static_cast<std::size_t>(i * K + l)] * hb[static_cast<std::size_t>(l * N + j)];
      CHECK(r[static_cast<std::size_t>(i * N + j)] == doctest::Approx(s).epsilon(1e-5));
    }
}

TEST_CASE("dot rejects small and mismatched shapes") {
  auto k = tile::kernel("dot_bad", [](tl::ptr<float> out, tl::constexpr_<"K"> K) {
    auto a = tl::zeros<float>({16, K}), b = tl::zeros<float>({32, 16});
    tl::store(out, tl::sum(tl::dot(a, b)));
  });
  auto out = lt2::dev().alloc<float>(1);
  CHECK_THROWS_AS(k[{1}](out, "K"_c = 16), tile::error);
  CHECK_THROWS_AS(k[{1}](out, "K"_c = 8), tile::error);
  k[{1}](out, "K"_c = 32);
  CHECK(out.to_host()[0] == 0.0f);
}
