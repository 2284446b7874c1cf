// test/lang/test_dot.cpp — tl::dot against a C++ matrix product: a representative grid of M, N, K
// in {16 ... 256}; f16, bf16, f32 (tf32, tf32x3, ieee), f64 and i8/u8 -> i32 inputs; with and
// without an accumulator; operands transposed with tl::trans; the blocked matmul with a
// tl::for_range K loop and masked edges, software-pipelined on the GPU (2 to 4 stages, 4 and 8
// warps, wgmma and mma.sync); and the shapes and dtypes dot rejects.
//
// Tolerance: none, but for f16/bf16 and tf32 inputs on the GPU, which runs them on tensor cores
// (check_dot_result: within a summation error bound). The interpreter computes out = acc + a @ b with k in order from 0, each
// product and sum in the accumulator's type (f32 for f16/bf16/f32 inputs, f64 for f64, wrapping
// i32 for 8-bit integers), f32 inputs rounded to tf32 first under precision::tf32. The host
// reference does the same in the same order, so results agree bit for bit.
#include <array>
#include <tuple>

#include "lang_test2.hpp"

namespace {
using lt2::ix;

template <class In>
using acc_t = std::conditional_t<std::is_integral_v<In>, std::int32_t, std::conditional_t<std::is_same_v<In, double>, double, float>>;

// c = [c +] a @ b with a [M, K] (stored [K, M] when TRANS_A) and b [K, N] (stored [N, K] when
// TRANS_B); the stored transposes are loaded as such and turned with tl::trans.
template <class In>
auto dot_kernel = tile::kernel("dot", [](tl::ptr<In> a, tl::ptr<In> b, tl::ptr<acc_t<In>> c, tl::constexpr_<"M"> M,
                                         tl::constexpr_<"N"> N, tl::constexpr_<"K"> K, tl::constexpr_<"PREC"> PREC,
                                         tl::constexpr_<"ACC", bool> ACC, tl::constexpr_<"TRANS_A", bool> TRANS_A,
                                         tl::constexpr_<"TRANS_B", bool> TRANS_B) {
  using tl::_;
  using tl::newaxis;
  auto m = tl::arange(0, M), n = tl::arange(0, N), k = tl::arange(0, K);
  auto av = TRANS_A ? tl::trans(tl::load(a + k(_, newaxis) * M + m(newaxis, _))) : tl::load(a + m(_, newaxis) * K + k(newaxis, _));
  auto bv = TRANS_B ? tl::trans(tl::load(b + n(_, newaxis) * K + k(newaxis, _))) : tl::load(b + k(_, newaxis) * N + n(newaxis, _));
  CHECK(av.shape() == tl::shape_t{M, K});
  CHECK(bv.shape() == tl::shape_t{K, N});
  const auto p = static_cast<tl::precision>(PREC.value);
  auto c_ptrs = c + m(_, newaxis) * N + n(newaxis, _);
  auto res = ACC ? tl::dot(av, bv, tl::load(c_ptrs), p) : tl::dot(av, bv, p);
  CHECK(res.dtype() == tile::dtype_of<acc_t<In>>);
  CHECK(res.shape() == tl::shape_t{M, N});
  tl::store(c_ptrs, res);
});

/// acc + a @ b in the interpreter's order and types (a: [M, K], b: [K, N], row-major).
template <class In>
std::vector<acc_t<In>> ref_dot(const std::vector<In>& a, const std::vector<In>& b, const std::vector<acc_t<In>>& acc,
                               int M, int N, int K, bool round_tf32) {
  using Out = acc_t<In>;
  std::vector<Out> out(ix(M * N));
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      Out s = acc.empty() ? Out(0) : acc[ix(i * N + j)];
      for (int l = 0; l < K; ++l) {
        const In x = a[ix(i * K + l)], y = b[ix(l * N + j)];
        if constexpr (std::is_integral_v<In>) {
          s = lt2::add(s, lt2::mul(static_cast<Out>(x), static_cast<Out>(y)));
        } else if constexpr (std::is_same_v<Out, double>) {
          volatile double p = x * y;  // volatile: no fma contraction of the reference
          s += p;
        } else {
          float fx = static_cast<float>(x), fy = static_cast<float>(y);
          if (round_tf32) fx = lt2::tf32(fx), fy = lt2::tf32(fy);
          s += lt2::mul_f32(fx, fy);
        }
      }
      out[ix(i * N + j)] = s;
    }
  return out;
}

template <class T>
std::vector<T> transpose(const std::vector<T>& x, int rows, int cols) {
  std::vector<T> t(x.size());
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) t[ix(j * rows + i)] = x[ix(i * cols + j)];
  return t;
}

template <class In>
std::vector<In> operand_data(std::size_t n, unsigned seed) {
  if constexpr (std::is_same_v<In, std::int8_t>)
    return lt2::random_vec<In>(n, seed, -128, 127);
  else if constexpr (std::is_same_v<In, std::uint8_t>)
    return lt2::random_vec<In>(n, seed, 0, 255);
  else
    return lt2::random_vec<In>(n, seed, -1, 1);  // f32/f64: full mantissas, so tf32 rounding shows
}

/// The result of a dot against the reference: bit for bit, except where the device ran it on
/// float tensor cores (f16/bf16 inputs, and f32 at tf32 precision, on the cuda backend: mma.sync
/// sums each step's products in its own order and rounding; 8-bit integers stay exact). There every element must be within K * 2^-22 of the reference,
/// relative to the sum of the magnitudes it added (|acc| + sum |a||b|): a summation error bound.
template <class In, class Out>
void check_dot_result(const std::vector<Out>& got, const std::vector<Out>& want, const std::vector<In>& a,
                      const std::vector<In>& b, const std::vector<Out>& acc, int M, int N, int K, bool tf32 = false) {
  constexpr bool half_in = std::is_same_v<In, tile::half> || std::is_same_v<In, tile::bfloat16>;
  const bool tensor_cores = half_in || (std::is_same_v<In, float> && tf32);  // 8-bit integers: exact there too
  if (!tensor_cores || lt2::dev().backend() != "cuda") return lt2::check_same(got, want);
  REQUIRE(got.size() == want.size());
  int bad = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double mag = acc.empty() ? 0.0 : std::abs(double(acc[ix(i * N + j)]));
      for (int l = 0; l < K; ++l) mag += std::abs(double(float(a[ix(i * K + l)])) * double(float(b[ix(l * N + j)])));
      const double err = std::abs(double(got[ix(i * N + j)]) - double(want[ix(i * N + j)]));
      if (err > double(K) * std::ldexp(1.0, -22) * mag + 1e-30 && ++bad <= 5)
        FAIL_CHECK("element (" << i << ", " << j << "): got " << got[ix(i * N + j)] << ", want " << want[ix(i * N + j)]
                               << " (bound " << double(K) * std::ldexp(1.0, -22) * mag << ")");
    }
  CHECK(bad == 0);
}

template <class In>
void check_dot(int M, int N, int K, tl::precision p, bool acc, bool trans_a, bool trans_b, unsigned seed) {
  using Out = acc_t<In>;
  CAPTURE(M);
  CAPTURE(N);
  CAPTURE(K);
  CAPTURE(static_cast<int>(p));
  CAPTURE(acc);
  CAPTURE(trans_a);
  CAPTURE(trans_b);
  auto ha = operand_data<In>(ix(M * K), seed), hb = operand_data<In>(ix(K * N), seed + 1);
  std::vector<Out> hc = std::is_integral_v<Out> ? lt2::random_vec<Out>(ix(M * N), seed + 2, -100000, 100000)
                                                : lt2::random_vec<Out>(ix(M * N), seed + 2, -4, 4);
  auto d = lt2::dev();
  auto a = d.upload(trans_a ? transpose(ha, M, K) : ha);
  auto b = d.upload(trans_b ? transpose(hb, K, N) : hb);
  auto c = d.upload(hc);
  dot_kernel<In>[{1}](a, b, c, "M"_c = M, "N"_c = N, "K"_c = K, "PREC"_c = static_cast<int>(p), "ACC"_c = acc,
                      "TRANS_A"_c = trans_a, "TRANS_B"_c = trans_b);
  const bool round_tf32 = std::is_same_v<In, float> && p == tl::precision::tf32;
  const std::vector<Out> acc_in = acc ? hc : std::vector<Out>{};
  check_dot_result(c.to_host(), ref_dot(ha, hb, acc_in, M, N, K, round_tf32), ha, hb, acc_in, M, N, K, round_tf32);
}

// with 4 warps, shapes with M a multiple of 64 (and N, K multiples of 16) run as wgmma on sm_90a,
// the others as mma.sync; f32 at ieee and f64 stage both operands whole in shared memory, which
// bounds (M + N) * K (f64: 16 KB per 256 elements of it)
const std::array<std::tuple<int, int, int>, 13> shapes = {{{16, 16, 16},
                                                           {16, 32, 64},
                                                           {32, 16, 128},
                                                           {64, 64, 32},
                                                           {128, 16, 16},
                                                           {16, 128, 32},
                                                           {32, 64, 16},
                                                           {128, 128, 64},
                                                           {256, 64, 32},
                                                           {64, 256, 16},
                                                           {32, 256, 64},
                                                           {16, 64, 256},
                                                           {256, 16, 64}}};
}  // namespace

TEST_CASE("dot: f16 and bf16 inputs accumulate in f32") {
  unsigned seed = 1;
  for (auto [M, N, K] : shapes) {
    check_dot<tile::half>(M, N, K, tl::precision::tf32, false, false, false, seed += 3);
    check_dot<tile::half>(M, N, K, tl::precision::ieee, true, true, false, seed += 3);
    check_dot<tile::bfloat16>(M, N, K, tl::precision::tf32, true, false, true, seed += 3);
    check_dot<tile::bfloat16>(M, N, K, tl::precision::tf32, false, true, true, seed += 3);
  }
}

TEST_CASE("dot: f32 inputs under tf32 (rounded), tf32x3 and ieee (exact f32); f64 inputs in f64") {
  unsigned seed = 50;
  for (auto [M, N, K] : shapes) {
    check_dot<float>(M, N, K, tl::precision::tf32, false, false, false, seed += 3);
    check_dot<float>(M, N, K, tl::precision::tf32, true, true, true, seed += 3);
    check_dot<float>(M, N, K, tl::precision::ieee, true, false, true, seed += 3);
    check_dot<float>(M, N, K, tl::precision::tf32x3, false, true, false, seed += 3);
    check_dot<double>(M, N, K, tl::precision::ieee, true, false, false, seed += 3);
  }
}

TEST_CASE("dot: i8 and u8 inputs accumulate in i32") {
  unsigned seed = 90;
  for (auto [M, N, K] : shapes) {
    check_dot<std::int8_t>(M, N, K, tl::precision::tf32, false, false, false, seed += 3);
    check_dot<std::int8_t>(M, N, K, tl::precision::tf32, true, true, true, seed += 3);
    check_dot<std::uint8_t>(M, N, K, tl::precision::tf32, true, false, true, seed += 3);
  }
}

TEST_CASE("dot: tf32 rounds f32 inputs to 10 mantissa bits, nearest even; ieee and tf32x3 do not") {
  // a [16, 16] of v times b [16, 16] of ones: every output is the sum of 16 products v * 1
  auto k = tile::kernel("prec", [](tl::ptr<float> out, tl::f32 v, tl::constexpr_<"PREC"> PREC, tl::constexpr_<"SIDE"> SIDE) {
    auto vs = tl::full<float>({16, 16}, v);
    auto ones = tl::full<float>({16, 16}, 1.0f);
    const auto p = static_cast<tl::precision>(PREC.value);
    auto c = SIDE == 0 ? tl::dot(vs, ones, p) : tl::dot(ones, vs, p);
    tl::store(out + tl::arange(0, 16), tl::max(c, 1));
  });
  auto d = lt2::dev();
  auto out = d.alloc<float>(16);
  const float e11 = 1.0f / 2048;  // 2^-11: half a tf32 ulp at 1
  struct row {
    float v, tf32;
  };
  const row rows[] = {
      {1.0f + e11, 1.0f},                            // a tie: to even (down)
      {1.0f + 3 * e11, 1.0f + 4 * e11},              // a tie: to even (up)
      {1.0f + 1.5f * e11, 1.0f + 2 * e11},           // above half: up
      {-(1.0f + 3 * e11), -(1.0f + 4 * e11)},        // negative
      {3.0f + 0.5f * e11, 3.0f},                     // below half an ulp (2^-9 at 3): down
  };
  for (auto [v, t] : rows)
    for (int side = 0; side < 2; ++side) {
      CAPTURE(v);
      CAPTURE(side);
      k[{1}](out, v, "PREC"_c = static_cast<int>(tl::precision::tf32), "SIDE"_c = side);
      CHECK(out.to_host()[3] == 16 * t);
      CHECK(lt2::tf32(v) == t);  // the host helper agrees
      for (auto p : {tl::precision::ieee, tl::precision::tf32x3}) {
        k[{1}](out, v, "PREC"_c = static_cast<int>(p), "SIDE"_c = side);
        CHECK(out.to_host()[3] == 16 * v);
      }
    }
}

TEST_CASE("dot: the accumulator is where the sum starts, and it broadcasts") {
  // dot(a, b, acc) adds the products to acc one by one; (a @ b) + acc rounds differently
  auto k = tile::kernel("dot_acc", [](tl::ptr<float> a, tl::ptr<float> b, tl::ptr<float> bias, tl::ptr<float> out) {
    using tl::_;
    using tl::newaxis;
    auto r = tl::arange(0, 16), c = tl::arange(0, 32);
    auto av = tl::load(a + r(_, newaxis) * 32 + c(newaxis, _));  // [16, 32]
    auto bv = tl::load(b + c(_, newaxis) * 16 + r(newaxis, _));  // [32, 16]
    auto row = tl::load(bias + r)(newaxis, _);                  // [1, 16]
    auto o = r(_, newaxis) * 16 + r(newaxis, _);
    tl::store(out + o, tl::dot(av, bv, row, tl::precision::ieee));
    tl::store(out + 256 + o, tl::dot(av, bv, 1000.0f, tl::precision::ieee));
    tl::store(out + 512 + o, tl::dot(av, bv, tl::precision::ieee) + 1000.0f);
  });
  auto ha = lt2::random_vec<float>(512, 3, -1, 1), hb = lt2::random_vec<float>(512, 4, -1, 1);
  auto hbias = lt2::random_vec<float>(16, 5, -100, 100);
  auto d = lt2::dev();
  auto a = d.upload(ha);
  auto b = d.upload(hb);
  auto bias = d.upload(hbias);
  auto out = d.alloc<float>(768);
  k[{1}](a, b, bias, out);
  std::vector<float> acc_row(256), acc_k(256, 1000.0f);
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) acc_row[ix(i * 16 + j)] = hbias[ix(j)];
  auto r = out.to_host();
  const auto with_row = ref_dot(ha, hb, acc_row, 16, 16, 32, false);
  const auto with_k = ref_dot(ha, hb, acc_k, 16, 16, 32, false);
  auto plain = ref_dot(ha, hb, {}, 16, 16, 32, false);
  for (auto& v : plain) v += 1000.0f;
  lt2::check_same(std::vector<float>(r.begin(), r.begin() + 256), with_row, "acc = a broadcast row");
  lt2::check_same(std::vector<float>(r.begin() + 256, r.begin() + 512), with_k, "acc = a literal");
  lt2::check_same(std::vector<float>(r.begin() + 512, r.end()), plain, "dot + literal");
  int differ = 0;  // the two orders of rounding disagree somewhere (else the test above shows nothing)
  for (std::size_t i = 0; i < 256; ++i) differ += with_k[i] != plain[i];
  CHECK(differ > 0);
}

namespace {
/// The rows and columns of C this program computes (program ids row-major over N / BN blocks),
/// and the offsets of one K step, as the tutorial numbers them.
auto block_ranges(const auto& N, const auto& BM, const auto& BN, const auto& BK) {
  auto pid = tl::program_id(0);
  auto n_blocks_n = tl::cdiv(N, BN);
  return std::tuple{(pid / n_blocks_n) * BM + tl::arange(0, BM), (pid % n_blocks_n) * BN + tl::arange(0, BN),
                    tl::arange(0, BK)};
}

// Triton's tutorial matmul: pointer tiles advanced each K step, loads masked to 0 at the edges,
// strides as arguments (so b may be a transposed view), f16 or f32 inputs.
template <class In>
auto matmul = tile::kernel("matmul", [](tl::ptr<In> a, tl::ptr<In> b, tl::ptr<float> c, tl::i32 M, tl::i32 N, tl::i32 K,
                                        tl::i32 stride_am, tl::i32 stride_ak, tl::i32 stride_bk, tl::i32 stride_bn,
                                        tl::constexpr_<"BM"> BM, tl::constexpr_<"BN"> BN, tl::constexpr_<"BK"> BK) {
  using tl::_;
  using tl::newaxis;
  auto [rm, rn, rk] = block_ranges(N, BM, BN, BK);
  auto a_ptrs = a + rm(_, newaxis) * stride_am + rk(newaxis, _) * stride_ak;
  auto b_ptrs = b + rk(_, newaxis) * stride_bk + rn(newaxis, _) * stride_bn;
  auto acc = tl::zeros<float>({BM, BN});
  tl::for_range(0, tl::cdiv(K, BK), [&](tl::tensor kb) {
    auto k_left = K - kb * BK;
    auto av = tl::load(a_ptrs, (rm(_, newaxis) < M) & (rk(newaxis, _) < k_left), 0.0f);
    auto bv = tl::load(b_ptrs, (rk(_, newaxis) < k_left) & (rn(newaxis, _) < N), 0.0f);
    acc = tl::dot(av, bv, acc, tl::precision::ieee);
    a_ptrs += BK * stride_ak;
    b_ptrs += BK * stride_bk;
  });
  tl::store(c + rm(_, newaxis) * N + rn(newaxis, _), acc, (rm(_, newaxis) < M) & (rn(newaxis, _) < N));
});

// the same product through tensor descriptors (Triton's tutorial 09 form): no pointer arithmetic
// and no masks in the kernel; on sm_90a both loads become TMA copies into the ring
template <class In>
auto matmul_desc = tile::kernel("matmul_desc", [](tl::ptr<In> a, tl::ptr<In> b, tl::ptr<float> c, tl::i32 M, tl::i32 N,
                                                  tl::i32 K, tl::i32 stride_am, tl::i32 stride_ak, tl::i32 stride_bk,
                                                  tl::i32 stride_bn, tl::constexpr_<"BM"> BM, tl::constexpr_<"BN"> BN,
                                                  tl::constexpr_<"BK"> BK) {
  auto pid = tl::program_id(0);
  auto n_blocks_n = tl::cdiv(N, BN);
  auto m0 = (pid / n_blocks_n) * BM, n0 = (pid % n_blocks_n) * BN;
  auto ad = tl::make_tensor_descriptor(a, {M, K}, {stride_am, stride_ak}, {BM, BK});
  auto bd = tl::make_tensor_descriptor(b, {K, N}, {stride_bk, stride_bn}, {BK, BN});
  auto cd = tl::make_tensor_descriptor(c, {M, N}, {N, 1}, {BM, BN});
  auto acc = tl::zeros<float>({BM, BN});
  tl::for_range(0, tl::cdiv(K, BK), [&](tl::tensor kb) {
    acc = tl::dot(ad.load({m0, kb * BK}), bd.load({kb * BK, n0}), acc, tl::precision::ieee);
  });
  cd.store({m0, n0}, acc);
});

/// c = a @ b by `matmul` (pointer tiles) or, with `descriptors`, by `matmul_desc`, against the
/// host product.
template <class In>
void check_matmul(int M, int N, int K, int BM, int BN, int BK, bool b_transposed, unsigned seed, int warps = 4,
                  int stages = 3, bool descriptors = false) {
  CAPTURE(descriptors);
  CAPTURE(warps);
  CAPTURE(stages);
  CAPTURE(M);
  CAPTURE(N);
  CAPTURE(K);
  CAPTURE(BM);
  CAPTURE(BN);
  CAPTURE(BK);
  CAPTURE(b_transposed);
  auto ha = lt2::random_vec<In>(ix(M * K), seed, -1, 1), hb = lt2::random_vec<In>(ix(K * N), seed + 1, -1, 1);
  auto d = lt2::dev();
  auto a = d.upload(ha);
  // b as [K, N] (strides N, 1) or stored as [N, K] and read through strides (1, K)
  auto b = d.upload(b_transposed ? transpose(hb, K, N) : hb);
  auto c = d.alloc<float>(ix(M * N));  // exactly M * N: a store past the edge would be an error
  const int sbk = b_transposed ? 1 : N, sbn = b_transposed ? K : 1;
  const int programs = tile::cdiv(M, BM) * tile::cdiv(N, BN);
  if (descriptors)
    matmul_desc<In>[{programs}](a, b, c, M, N, K, K, 1, sbk, sbn, "BM"_c = BM, "BN"_c = BN, "BK"_c = BK,
                                "num_warps"_c = warps, "num_stages"_c = stages);
  else
    matmul<In>[{programs}](a, b, c, M, N, K, K, 1, sbk, sbn, "BM"_c = BM, "BN"_c = BN, "BK"_c = BK, "num_warps"_c = warps,
                           "num_stages"_c = stages);
  // masked lanes add products 0 * x = ±0, which leave a sum unchanged: the plain product
  check_dot_result(c.to_host(), ref_dot(ha, hb, {}, M, N, K, false), ha, hb, std::vector<float>{}, M, N, K);
}
}  // namespace

TEST_CASE("blocked matmul: for_range over K, pointer tiles advanced, masked edges") {
  check_matmul<float>(37, 50, 45, 16, 32, 16, false, 7);
  check_matmul<float>(64, 64, 64, 32, 32, 32, true, 9);      // exact multiples of the blocks
  check_matmul<tile::half>(100, 33, 70, 32, 16, 32, true, 11);
  check_matmul<tile::half>(16, 16, 15, 16, 16, 16, false, 13);  // K below one block: one masked step
  check_matmul<tile::bfloat16>(5, 130, 200, 16, 64, 64, false, 15);
  check_matmul<float>(20, 20, 0, 16, 16, 16, false, 17);  // K = 0: zero-trip loop, c = 0
}

namespace {
// the tutorial matmul's fused epilogue: leaky ReLU on the f32 accumulator, then the result
// rounded to Out (f16 or bf16) and stored — on the GPU the activation runs in the accumulator's
// layout and the 16-bit values go to the store's layout through shared memory
template <class Out>
auto matmul_act = tile::kernel("matmul_act", [](tl::ptr<tile::half> a, tl::ptr<tile::half> b, tl::ptr<Out> c, tl::i32 M,
                                                tl::i32 N, tl::i32 K, tl::constexpr_<"BM"> BM, tl::constexpr_<"BN"> BN,
                                                tl::constexpr_<"BK"> BK) {
  using tl::_;
  using tl::newaxis;
  auto [rm, rn, rk] = block_ranges(N, BM, BN, BK);
  auto acc = tl::zeros<float>({BM, BN});
  tl::for_range(0, tl::cdiv(K, BK), [&](tl::tensor kb) {
    auto k = kb * BK + rk;
    auto av = tl::load(a + rm(_, newaxis) * K + k(newaxis, _), (rm(_, newaxis) < M) & (k(newaxis, _) < K), 0.0f);
    auto bv = tl::load(b + k(_, newaxis) * N + rn(newaxis, _), (k(_, newaxis) < K) & (rn(newaxis, _) < N), 0.0f);
    acc = tl::dot(av, bv, acc);
  });
  auto act = tl::where(acc >= 0, acc, 0.01f * acc);
  tl::store(c + rm(_, newaxis) * N + rn(newaxis, _), tl::cast<Out>(act), (rm(_, newaxis) < M) & (rn(newaxis, _) < N));
});

template <class Out>
void check_matmul_act(int M, int N, int K, int BM, int BN, int BK, int warps, unsigned seed) {
  CAPTURE(M);
  CAPTURE(N);
  CAPTURE(K);
  CAPTURE(BM);
  CAPTURE(BN);
  CAPTURE(warps);
  auto ha = lt2::random_vec<tile::half>(ix(M * K), seed, -1, 1), hb = lt2::random_vec<tile::half>(ix(K * N), seed + 1, -1, 1);
  auto d = lt2::dev();
  auto a = d.upload(ha), b = d.upload(hb);
  auto c = d.alloc<Out>(ix(M * N));
  matmul_act<Out>[{tile::cdiv(M, BM) * tile::cdiv(N, BN)}](a, b, c, M, N, K, "BM"_c = BM, "BN"_c = BN, "BK"_c = BK,
                                                            "num_warps"_c = warps, "num_stages"_c = 3);
  const auto got = c.to_host();
  const auto want = ref_dot(ha, hb, {}, M, N, K, false);
  // the sum's error bound (check_dot_result's), through leaky ReLU, plus one unit in the last
  // place of the 16-bit result (the sum may sit on the other side of a rounding boundary)
  const double ulp = std::is_same_v<Out, tile::half> ? std::ldexp(1.0, -10) : std::ldexp(1.0, -7);
  int bad = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double mag = 0;
      for (int l = 0; l < K; ++l) mag += std::abs(double(float(ha[ix(i * K + l)])) * double(float(hb[ix(l * N + j)])));
      const double w = double(want[ix(i * N + j)]), x = w >= 0 ? w : 0.01 * w;
      const double err = std::abs(double(float(got[ix(i * N + j)])) - x);
      const double bound = double(K) * std::ldexp(1.0, -22) * mag + ulp * std::abs(x) + 1e-7;
      if (err > bound && ++bad <= 5)
        FAIL_CHECK("element (" << i << ", " << j << "): got " << float(got[ix(i * N + j)]) << ", want " << x << " (bound " << bound << ")");
    }
  CHECK(bad == 0);
}
}  // namespace

TEST_CASE("blocked matmul with a fused epilogue: leaky ReLU, then the f32 accumulator rounded to f16 or bf16") {
  check_matmul_act<tile::half>(130, 260, 96, 128, 128, 32, 8, 31);  // wgmma on sm_90a, 8 warps, masked edges
  check_matmul_act<tile::bfloat16>(130, 260, 96, 128, 128, 32, 8, 33);
  check_matmul_act<tile::half>(64, 96, 64, 64, 32, 32, 4, 35);  // narrower tiles
  check_matmul_act<tile::bfloat16>(64, 96, 64, 64, 32, 32, 4, 37);
}

namespace {
// the pipelined matmul with an in-order use of a value the copies' masks use too (k_left): the
// loop also sums min(k_left, BK) over its iterations — K in the end
auto matmul_steps = tile::kernel("matmul_steps", [](tl::ptr<tile::half> a, tl::ptr<tile::half> b, tl::ptr<float> c,
                                                    tl::ptr<std::int32_t> steps_out, tl::i32 M, tl::i32 N, tl::i32 K,
                                                    tl::constexpr_<"BM"> BM, tl::constexpr_<"BN"> BN,
                                                    tl::constexpr_<"BK"> BK) {
  using tl::_;
  using tl::newaxis;
  auto rm = tl::arange(0, BM), rn = tl::arange(0, BN), rk = tl::arange(0, BK);
  auto a_ptrs = a + rm(_, newaxis) * K + rk(newaxis, _);
  auto b_ptrs = b + rk(_, newaxis) * N + rn(newaxis, _);
  auto acc = tl::zeros<float>({BM, BN});
  auto steps = tl::zeros<std::int32_t>({BN});
  tl::for_range(0, tl::cdiv(K, BK), [&](tl::tensor kb) {
    auto k_left = K - kb * BK;
    auto av = tl::load(a_ptrs, (rm(_, newaxis) < M) & (rk(newaxis, _) < k_left), 0.0f);
    auto bv = tl::load(b_ptrs, (rk(_, newaxis) < k_left) & (rn(newaxis, _) < N), 0.0f);
    acc = tl::dot(av, bv, acc);
    steps = steps + tl::minimum(k_left, BK);
    a_ptrs += BK;
    b_ptrs += BK * N;
  });
  tl::store(c + rm(_, newaxis) * N + rn(newaxis, _), acc, (rm(_, newaxis) < M) & (rn(newaxis, _) < N));
  tl::store(steps_out + rn, steps);
});
}  // namespace

TEST_CASE("pipelined matmul: an in-order op sharing the copies' mask arithmetic sees its own iteration's values") {
  const int M = 64, N = 64, K = 160, BK = 32;
  auto ha = lt2::random_vec<tile::half>(ix(M * K), 41, -1, 1), hb = lt2::random_vec<tile::half>(ix(K * N), 42, -1, 1);
  auto d = lt2::dev();
  auto a = d.upload(ha), b = d.upload(hb);
  auto c = d.alloc<float>(ix(M * N));
  auto steps = d.alloc<std::int32_t>(64);
  matmul_steps[{1}](a, b, c, steps, M, N, K, "BM"_c = 64, "BN"_c = 64, "BK"_c = BK, "num_stages"_c = 3);
  CHECK(steps.to_host() == std::vector<std::int32_t>(64, K));
  check_dot_result(c.to_host(), ref_dot(ha, hb, {}, M, N, K, false), ha, hb, std::vector<float>{}, M, N, K);
}

TEST_CASE("blocked matmul, software-pipelined on the GPU: K a multiple of 16, so the loads become cp.async copies into a ring") {
  // rows and columns masked at the edges, the last K step partly masked (zero-filled copies),
  // copies issued past the loop's end; wgmma (M blocks of 64 per 4 warps, 128 per 8) and
  // mma.sync blocks; 2 to 4 stages; K shorter than the ring (fewer iterations than stages)
  check_matmul<tile::half>(256, 256, 512, 128, 128, 64, false, 21);
  check_matmul<tile::half>(200, 136, 80, 64, 64, 64, false, 23, 4, 2);
  check_matmul<tile::bfloat16>(130, 260, 336, 128, 256, 32, false, 25, 8, 3);
  check_matmul<tile::half>(96, 80, 160, 32, 64, 32, false, 27, 4, 4);  // BM 32: mma.sync from the ring
  check_matmul<tile::bfloat16>(64, 64, 32, 64, 64, 16, false, 29, 4, 4);  // 2 iterations, 4 stages
  check_matmul<tile::half>(128, 128, 48, 128, 64, 16, true, 31, 4, 3);    // B through strides (1, K): not pipelined
}

TEST_CASE("matmul through tensor descriptors: TMA copies on sm_90a (boxes of 32, 64 and 128-byte rows), masked loads elsewhere") {
  // edges in every direction (the TMA zero-fills outside the tensor), K steps past the end, B in
  // two and four 64-column boxes, fewer iterations than stages
  // (strides are N and K: the TMA needs them multiples of 16 elements, which the launch's
  // specialization tells the compiler, so K and N below are; 136 is not: masked loads)
  check_matmul<tile::half>(200, 144, 208, 64, 64, 64, false, 51, 4, 3, true);
  check_matmul<tile::bfloat16>(256, 256, 192, 128, 256, 64, false, 53, 8, 3, true);
  check_matmul<tile::half>(130, 208, 96, 128, 128, 32, false, 55, 8, 4, true);   // 64-byte rows of A: 64-byte swizzle
  check_matmul<tile::half>(200, 136, 200, 64, 64, 64, false, 63, 4, 3, true);    // row strides not multiples of 16: masked loads
  check_matmul<tile::half>(64, 48, 80, 64, 32, 16, false, 57, 4, 2, true);       // 32-byte rows of A and B
  check_matmul<tile::half>(64, 64, 32, 64, 64, 64, false, 59, 4, 4, true);       // one iteration, four stages
  check_matmul<tile::half>(96, 64, 64, 32, 64, 32, false, 61, 4, 3, true);       // BM 32: no wgmma, masked loads
  check_matmul<tile::half>(64, 64, 0, 64, 64, 64, false, 65, 4, 3, true);        // K = 0: another specialization (no TMA), c = 0
  check_matmul<tile::half>(128, 96, 64, 64, 32, 32, true, 67, 4, 3, true);       // B through strides (1, K): masked loads
}

namespace {
/// Every element of `got` within bound[i] of want[i] (the first five misses reported).
void check_within(const std::vector<float>& got, const std::vector<double>& want, const std::vector<double>& bound) {
  int bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (std::abs(double(got[i]) - want[i]) > bound[i] && ++bad <= 5)
      MESSAGE("element " << i << ": got " << got[i] << ", want " << want[i] << " (within " << bound[i] << ")");
  CHECK(bad == 0);
}
}  // namespace

TEST_CASE("chained dots: a product, exponentiated along its rows and cast, is the next dot's A (attention's P @ V)") {
  // s = q @ kᵀ block by block, p = exp2(s - rowmax(s)) cast to f16, acc += p @ v: on a warp's MMA
  // (sm_80) both dots put every warp along M and p stays in registers as mma.sync's A fragment
  // (test/ir/golden/assign_layouts_forward_sm80.tir); on sm_90a, wgmma's register form. In a loop
  // over key blocks, as attention's, and once outside any loop (BLOCKS = 0).
  auto chain = tile::kernel("dot_chain", [](tl::ptr<tile::half> q, tl::ptr<tile::half> k, tl::ptr<tile::half> v,
                                            tl::ptr<float> out, tl::constexpr_<"M"> M, tl::constexpr_<"D"> D,
                                            tl::constexpr_<"BLOCKS"> BLOCKS) {
    using tl::_;
    using tl::newaxis;
    auto m = tl::arange(0, M), d = tl::arange(0, D);
    auto qv = tl::load(q + m(_, newaxis) * D + d(newaxis, _));  // [M, D]
    auto step = [&](const tl::tensor& acc, const tl::tensor& j) {
      auto kt = tl::load(k + j * (M * D) + m(newaxis, _) * D + d(_, newaxis));  // kᵀ: [D, M], key i in column i
      auto s = tl::dot(qv, kt);                                                 // [M, M]
      auto p = tl::exp2(s - tl::max(s, 1)(_, newaxis));
      auto vv = tl::load(v + j * (M * D) + m(_, newaxis) * D + d(newaxis, _));   // [M, D]
      return tl::dot(tl::cast<tile::half>(p), vv, acc);
    };
    auto acc = tl::zeros<float>({M, D});
    if (BLOCKS.value == 0)
      acc = step(acc, tl::program_id(0));  // (grid 1: block 0)
    else
      tl::for_range(0, static_cast<int>(BLOCKS.value), [&](tl::tensor j) { acc = step(acc, j); });
    tl::store(out + m(_, newaxis) * D + d(newaxis, _), acc);
  });
  constexpr int M = 64, D = 64;
  for (int blocks : {0, 2, 5}) {  // (5: the rings wrap)
    CAPTURE(blocks);
    const int nb = blocks == 0 ? 1 : blocks;
    auto hq = lt2::random_vec<tile::half>(M * D, 11, -1, 1), hk = lt2::random_vec<tile::half>(std::size_t(nb) * M * D, 12, -1, 1),
         hv = lt2::random_vec<tile::half>(std::size_t(nb) * M * D, 13, -1, 1);
    auto dv = lt2::dev();
    auto q = dv.upload(hq), kb = dv.upload(hk), vb = dv.upload(hv);
    auto out = dv.alloc<float>(M * D);
    chain[{1}](q, kb, vb, out, "M"_c = M, "D"_c = D, "BLOCKS"_c = blocks);
    if (!dv.computes()) continue;
    // the reference in double, p rounded to f16 as the kernel rounds it; the bound allows p's
    // last bit either way and the products' order of summation
    std::vector<double> want(M * D, 0.0), bound(M * D, 1e-6);
    for (int j = 0; j < nb; ++j)
      for (int i = 0; i < M; ++i) {
        std::vector<double> srow(M);
        double mx = -1e300;
        for (int c = 0; c < M; ++c) {
          double sum = 0;
          for (int e = 0; e < D; ++e)
            sum += double(float(hq[ix(i * D + e)])) * double(float(hk[ix(j * M * D + c * D + e)]));
          srow[ix(c)] = sum;
          mx = std::max(mx, sum);
        }
        for (int c = 0; c < M; ++c) {
          const double p = double(float(tile::half(float(std::exp2(srow[ix(c)] - mx)))));
          for (int e = 0; e < D; ++e) {
            const double x = double(float(hv[ix(j * M * D + c * D + e)]));
            want[ix(i * D + e)] += p * x;
            bound[ix(i * D + e)] += 2e-3 * std::abs(x) * std::max(p, 1e-3);
          }
        }
      }
    check_within(out.to_host(), want, bound);
  }
}

TEST_CASE("independent dots in a loop: both products in flight at once (the backward's QKᵀ and dO·Vᵀ)") {
  // s1 = a @ b_j and s2 = c @ d_j, then acc += s1 * s2 elementwise: on sm_90a overlap_dots issues
  // the two warpgroup dots back to back and waits for each at its first use
  auto two = tile::kernel("dot_two", [](tl::ptr<tile::half> a, tl::ptr<tile::half> b, tl::ptr<tile::half> c,
                                        tl::ptr<tile::half> d, tl::ptr<float> out, tl::constexpr_<"BLOCKS"> BLOCKS) {
    using tl::_;
    using tl::newaxis;
    auto r = tl::arange(0, 64);
    auto at = r(_, newaxis) * 64 + r(newaxis, _);
    auto av = tl::load(a + at), cv = tl::load(c + at);
    auto acc = tl::zeros<float>({64, 64});
    tl::for_range(0, static_cast<int>(BLOCKS.value), [&](tl::tensor j) {
      auto s1 = tl::dot(av, tl::load(b + j * 4096 + at));
      auto e = tl::exp2(s1 * 0.125f);
      auto s2 = tl::dot(cv, tl::load(d + j * 4096 + at));
      acc = acc + e * s2;
    });
    tl::store(out + at, acc);
  });
  constexpr int blocks = 3, n = 64;
  auto ha = lt2::random_vec<tile::half>(n * n, 21, -1, 1), hc = lt2::random_vec<tile::half>(n * n, 22, -1, 1);
  auto hb = lt2::random_vec<tile::half>(std::size_t(blocks) * n * n, 23, -1, 1), hd = lt2::random_vec<tile::half>(std::size_t(blocks) * n * n, 24, -1, 1);
  auto dv = lt2::dev();
  auto a = dv.upload(ha), b = dv.upload(hb), c = dv.upload(hc), d = dv.upload(hd);
  auto out = dv.alloc<float>(n * n);
  two[{1}](a, b, c, d, out, "BLOCKS"_c = blocks);
  if (!dv.computes()) return;
  std::vector<double> want(n * n, 0.0), bound(n * n, 1e-6);
  for (int j = 0; j < blocks; ++j)
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < n; ++k) {
        double s1 = 0, s2 = 0, m1 = 0, m2 = 0;
        for (int e = 0; e < n; ++e) {
          const double x1 = double(float(ha[ix(i * n + e)])) * double(float(hb[ix(j * n * n + e * n + k)]));
          const double x2 = double(float(hc[ix(i * n + e)])) * double(float(hd[ix(j * n * n + e * n + k)]));
          s1 += x1, s2 += x2, m1 += std::abs(x1), m2 += std::abs(x2);
        }
        const double ex = std::exp2(s1 * 0.125);
        want[ix(i * n + k)] += ex * s2;
        // f32 sums in any order (n eps a sum of |terms|), exp2's few ulp, both propagated
        bound[ix(i * n + k)] += ex * (m2 * 1e-5 + std::abs(s2) * (m1 * 0.125 * 1e-5 + 1e-5));
      }
  check_within(out.to_host(), want, bound);
}

TEST_CASE("dot rejects M, N or K below 16, mismatched inner dimensions and bad dtypes") {
  // CASE 0 is valid; each other case breaks one rule and fails to trace
  auto k = tile::kernel("dot_bad", [](tl::ptr<float> out, tl::constexpr_<"CASE"> CASE) {
    const std::int64_t c = CASE;
    std::int64_t m = 16, ka = 16, kb = 16, n = 16;
    if (c == 1) m = 8;             // M < 16
    if (c == 2) n = 8;             // N < 16
    if (c == 3) ka = kb = 8;       // K < 16
    if (c == 4) ka = 32;           // inner dimensions differ
    if (c == 5) m = ka = kb = n = 4;
    tl::tensor a = tl::zeros<float>({m, ka}), b = tl::zeros<float>({kb, n}), acc;
    if (c == 6) b = tl::zeros<tile::half>({kb, n});         // dtypes differ
    if (c == 7) a = tl::zeros<std::int32_t>({m, ka}), b = tl::zeros<std::int32_t>({kb, n});  // i32 inputs
    if (c == 8) acc = tl::zeros<tile::half>({m, n});        // accumulator not f32
    if (c == 9) acc = tl::zeros<float>({32, n});            // accumulator of another shape
    if (c == 10) a = tl::zeros<float>({16}), b = tl::zeros<float>({16});  // 1-D
    if (c == 11) a = tl::zeros<std::int8_t>({m, ka}), b = tl::zeros<std::int8_t>({kb, n}), acc = tl::zeros<float>({m, n});
    auto r = acc.defined() ? tl::dot(a, b, acc) : tl::dot(a, b);
    tl::store(out, tl::cast<float>(tl::sum(r)));
  });
  auto out = lt2::dev().alloc<float>(1);
  k[{1}](out, "CASE"_c = 0);
  CHECK(out.to_host()[0] == 0.0f);
  for (int c = 1; c <= 11; ++c) {
    CAPTURE(c);
    CHECK_THROWS_AS(k[{1}](out, "CASE"_c = c), tile::error);
  }
}
