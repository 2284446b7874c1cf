// bench/kernels.hpp — the kernels the benches time, one definition each (the samples' kernels, in
// the shapes the benches use): every make_* call returns a fresh kernel object (nothing traced
// yet), which the compile-time benches need for cold compiles; the others make one at start-up.
// Also the plain C++ softmax the softmax benches check against (and, on the CPU, time).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <type_traits>
#include <utility>

#include <tile/tile.hpp>

namespace bench {

using tile::half;

inline auto make_warmup() {  // the unrelated warm-up kernel
  return tile::kernel("warmup", [](tl::ptr<float> out, tl::i32 n, tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
    tl::store(out + offs, tl::cast<float>(offs), offs < n);
  });
}

inline auto make_add() {
  return tile::kernel("add", [](tl::ptr<float> x, tl::ptr<float> y, tl::ptr<float> out, tl::i32 n,
                                tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
    auto mask = offs < n;
    tl::store(out + offs, tl::load(x + offs, mask) + tl::load(y + offs, mask), mask);
  });
}

/// How the softmax kernel computes its exp and division: tile's (exp with the product's rounding
/// put back, IEEE `/`), Triton's (tl::fast_exp, tl::fast_div: ex2.approx.f32 of x·log2 e and
/// div.full.f32 on the GPU), one of each, or forms for diagnosis only (kernel_probe
/// softmax_variants): a multiply by the reciprocal, no exp at all.
enum class softmax_math { exact, fast_exp, fast_div, fast, recip_mul, no_exp };

inline auto make_softmax_math(softmax_math m, const char* name) {
  return tile::kernel(name, [m](tl::ptr<float> out, tl::ptr<float> in, tl::i32 stride, tl::i32 n_cols,
                                tl::constexpr_<"BLOCK"> BLOCK) {
    auto row = tl::program_id(0);
    auto cols = tl::arange(0, BLOCK);
    auto mask = cols < n_cols;
    auto x = tl::load(in + row * stride + cols, mask, -tl::inf<float>());
    auto shifted = x - tl::max(x, 0);
    const bool fast_exp = m == softmax_math::fast_exp || m == softmax_math::fast;
    const bool fast_div = m == softmax_math::fast_div || m == softmax_math::fast;
    auto num = m == softmax_math::no_exp ? shifted : fast_exp ? tl::fast_exp(shifted) : tl::exp(shifted);
    auto den = tl::sum(num, 0);
    auto y = fast_div ? tl::fast_div(num, den) : m == softmax_math::recip_mul ? num * (1.0f / den) : num / den;
    tl::store(out + row * stride + cols, y, mask);
  });
}

/// `triton_numerics`: exp and the division as Triton computes tl.exp and `/` on f32.
inline auto make_softmax_numerics(bool triton_numerics) {
  return make_softmax_math(triton_numerics ? softmax_math::fast : softmax_math::exact, triton_numerics ? "softmax_fast" : "softmax");
}
inline auto make_softmax() { return make_softmax_numerics(false); }

/// f16 data, f32 statistics. `triton_numerics`: the statistics' divisions and square root as
/// Triton computes `/` and tl.sqrt on f32 (tl::fast_div, tl::fast_sqrt: div.full.f32 and
/// sqrt.approx.f32 on the GPU), as in Triton's tutorial kernel; otherwise IEEE (tile's `/`).
inline auto make_layer_norm_numerics(bool triton_numerics) {
  return tile::kernel(triton_numerics ? "layer_norm_fast" : "layer_norm", [triton_numerics](tl::ptr<half> X, tl::ptr<half> Y, tl::ptr<half> W, tl::ptr<half> B,
                                       tl::ptr<float> Mean, tl::ptr<float> Rstd, tl::i32 stride, tl::i32 N, tl::f32 eps,
                                       tl::constexpr_<"BLOCK"> BLOCK) {
    auto row = tl::program_id(0);
    auto x_row = X + row * stride;
    auto y_row = Y + row * stride;
    auto sum = tl::zeros<float>({BLOCK});
    tl::for_range(0, N, BLOCK, [&](tl::tensor off) {
      auto cols = off + tl::arange(0, BLOCK);
      sum += tl::cast<float>(tl::load(x_row + cols, cols < N, 0.0f));
    });
    auto mean = triton_numerics ? tl::fast_div(tl::sum(sum, 0), N) : tl::sum(sum, 0) / N;
    auto sq = tl::zeros<float>({BLOCK});
    tl::for_range(0, N, BLOCK, [&](tl::tensor off) {
      auto cols = off + tl::arange(0, BLOCK);
      auto d = tl::where(cols < N, tl::cast<float>(tl::load(x_row + cols, cols < N, 0.0f)) - mean, 0.0f);
      sq += d * d;
    });
    auto var = (triton_numerics ? tl::fast_div(tl::sum(sq, 0), N) : tl::sum(sq, 0) / N) + eps;
    auto rstd = triton_numerics ? tl::fast_div(1.0f, tl::fast_sqrt(var)) : 1.0f / tl::sqrt(var);
    tl::store(Mean + row, mean);
    tl::store(Rstd + row, rstd);
    tl::for_range(0, N, BLOCK, [&](tl::tensor off) {
      auto cols = off + tl::arange(0, BLOCK);
      auto mask = cols < N;
      auto w = tl::cast<float>(tl::load(W + cols, mask));
      auto b = tl::cast<float>(tl::load(B + cols, mask));
      auto x = tl::cast<float>(tl::load(x_row + cols, mask, 0.0f));
      tl::store(y_row + cols, tl::cast<tl::f16>((x - mean) * rstd * w + b), mask);
    });
  });
}

inline auto make_layer_norm() { return make_layer_norm_numerics(false); }

/// The same statistics and output (two passes over the values: mean, then the centred sum of
/// squares; IEEE `/` and sqrt) for rows that fit one BLOCK (N <= BLOCK): the row is loaded once
/// and kept in registers, as Triton's softmax tutorial keeps its row, instead of being read
/// three times. bench/triton/layer_norm.py times Triton's version of this kernel too.
inline auto make_layer_norm_row() {
  return tile::kernel("layer_norm_row", [](tl::ptr<half> X, tl::ptr<half> Y, tl::ptr<half> W, tl::ptr<half> B,
                                           tl::ptr<float> Mean, tl::ptr<float> Rstd, tl::i32 stride, tl::i32 N,
                                           tl::f32 eps, tl::constexpr_<"BLOCK"> BLOCK) {
    auto row = tl::program_id(0);
    auto cols = tl::arange(0, BLOCK);
    auto mask = cols < N;
    auto x = tl::cast<float>(tl::load(X + row * stride + cols, mask, 0.0f));
    auto mean = tl::sum(x, 0) / N;
    auto d = tl::where(mask, x - mean, 0.0f);
    auto rstd = 1.0f / tl::sqrt(tl::sum(d * d, 0) / N + eps);
    tl::store(Mean + row, mean);
    tl::store(Rstd + row, rstd);
    auto w = tl::cast<float>(tl::load(W + cols, mask));
    auto b = tl::cast<float>(tl::load(B + cols, mask));
    tl::store(Y + row * stride + cols, tl::cast<tl::f16>(d * rstd * w + b), mask);
  });
}
inline auto make_layer_norm_fast() { return make_layer_norm_numerics(true); }

/// leaky ReLU, as in Triton's matmul tutorial (and sample 03): x where x >= 0, else 0.01·x.
inline tl::tensor leaky_relu(const tl::tensor& x) { return tl::where(x >= 0, x, 0.01f * x); }

/// The (pid_m, pid_n) block of C that this program computes, in the grouped order of Triton's
/// matmul tutorial: GROUP_M block-rows walked before the next block-column, so neighbouring
/// programs share A and B blocks in L2.
inline std::pair<tl::tensor, tl::tensor> grouped_block(const auto& M, const auto& N, const auto& BM, const auto& BN,
                                                      const auto& GROUP_M) {
  auto pid = tl::program_id(0);
  auto num_pid_m = tl::cdiv(M, BM);
  auto num_pid_n = tl::cdiv(N, BN);
  auto num_pid_in_group = GROUP_M * num_pid_n;
  auto group_id = pid / num_pid_in_group;
  auto first_pid_m = group_id * GROUP_M;
  auto group_size_m = tl::minimum(num_pid_m - first_pid_m, GROUP_M);
  return {first_pid_m + (pid % num_pid_in_group) % group_size_m, (pid % num_pid_in_group) / group_size_m};
}

/// The matmul's epilogue: `acc` (f32) cast to Out and stored as block (pid_m, pid_n) of C, masked
/// at C's edges.
template <class Out>
inline void store_block(const auto& c, const tl::tensor& acc, const auto& M, const auto& N, const auto& stride_cm,
                        const auto& stride_cn, const tl::tensor& pid_m, const tl::tensor& pid_n, const auto& BM,
                        const auto& BN) {
  using tl::_;
  using tl::newaxis;
  auto offs_cm = pid_m * BM + tl::arange(0, BM);
  auto offs_cn = pid_n * BN + tl::arange(0, BN);
  auto c_ptrs = c + stride_cm * offs_cm(_, newaxis) + stride_cn * offs_cn(newaxis, _);
  tl::store(c_ptrs, tl::cast<Out>(acc), (offs_cm(_, newaxis) < M) & (offs_cn(newaxis, _) < N));
}

/// One program of Triton's matmul tutorial kernel: the BM × BN block of C = A @ B (row-major
/// strides given) that program id picks in the grouped order (GROUP_M block-rows walked before
/// the next block-column, so neighbouring programs share A and B blocks in L2), accumulated in
/// f32 over K in BK steps, optionally passed through leaky ReLU while still f32 (`activation`:
/// a trace-time choice), stored as `Out`. Generic over the argument types, so the kernel that
/// calls it traces exactly the ops its own lambda would (make_matmul's IR is unchanged by it).
template <class Out>
inline void matmul_program(const auto& a, const auto& b, const auto& c, const auto& M, const auto& N, const auto& K,
                           const auto& stride_am, const auto& stride_ak, const auto& stride_bk, const auto& stride_bn,
                           const auto& stride_cm, const auto& stride_cn, const auto& BM, const auto& BN,
                           const auto& BK, const auto& GROUP_M, bool activation,
                           tl::precision precision = tl::precision::tf32) {
  using tl::_;
  using tl::newaxis;
  const auto block = grouped_block(M, N, BM, BN, GROUP_M);
  const tl::tensor &pid_m = block.first, &pid_n = block.second;
  auto offs_am = (pid_m * BM + tl::arange(0, BM)) % M;
  auto offs_bn = (pid_n * BN + tl::arange(0, BN)) % N;
  auto offs_k = tl::arange(0, BK);
  auto a_ptrs = a + (offs_am(_, newaxis) * stride_am + offs_k(newaxis, _) * stride_ak);
  auto b_ptrs = b + (offs_k(_, newaxis) * stride_bk + offs_bn(newaxis, _) * stride_bn);
  auto acc = tl::zeros<float>({BM, BN});
  tl::for_range(0, tl::cdiv(K, BK), [&](tl::tensor k) {
    auto av = tl::load(a_ptrs, offs_k(newaxis, _) < K - k * BK, 0.0f);
    auto bv = tl::load(b_ptrs, offs_k(_, newaxis) < K - k * BK, 0.0f);
    acc = tl::dot(av, bv, acc, precision);
    a_ptrs += BK * stride_ak;
    b_ptrs += BK * stride_bk;
  });
  store_block<Out>(c, activation ? leaky_relu(acc) : acc, M, N, stride_cm, stride_cn, pid_m, pid_n, BM, BN);
}

/// matmul_program with A and B read through tensor descriptors (Triton's tutorial 09 form): the
/// same grouped order and epilogue, no pointer tiles or masks; on sm_90a the loads become TMA
/// copies (both descriptors' last stride is an argument equal to 1, which the launch
/// specializes into the constant the TMA needs).
template <class Out>
inline void matmul_desc_program(const auto& a, const auto& b, const auto& c, const auto& M, const auto& N, const auto& K,
                                const auto& stride_am, const auto& stride_ak, const auto& stride_bk, const auto& stride_bn,
                                const auto& stride_cm, const auto& stride_cn, const auto& BM, const auto& BN,
                                const auto& BK, const auto& GROUP_M, bool activation) {
  const auto block = grouped_block(M, N, BM, BN, GROUP_M);
  const tl::tensor &pid_m = block.first, &pid_n = block.second;
  auto a_desc = tl::make_tensor_descriptor(a, {M, K}, {stride_am, stride_ak}, {BM, BK});
  auto b_desc = tl::make_tensor_descriptor(b, {K, N}, {stride_bk, stride_bn}, {BK, BN});
  auto acc = tl::zeros<float>({BM, BN});
  tl::for_range(0, tl::cdiv(K, BK), [&](tl::tensor k) {
    acc = tl::dot(a_desc.load({pid_m * BM, k * BK}), b_desc.load({k * BK, pid_n * BN}), acc);
  });
  store_block<Out>(c, activation ? leaky_relu(acc) : acc, M, N, stride_cm, stride_cn, pid_m, pid_n, BM, BN);
}

/// Triton's matmul tutorial (sample 03's kernel without the activation): f16 in, f32 accumulate,
/// f16 out, grouped program order. The autotuning bench's kernel.
inline auto make_matmul() {
  return tile::kernel("matmul", [](tl::ptr<half> a, tl::ptr<half> b, tl::ptr<half> c, tl::i32 M, tl::i32 N, tl::i32 K,
                                   tl::i32 stride_am, tl::i32 stride_ak, tl::i32 stride_bk, tl::i32 stride_bn,
                                   tl::i32 stride_cm, tl::i32 stride_cn, tl::constexpr_<"BLOCK_M"> BM,
                                   tl::constexpr_<"BLOCK_N"> BN, tl::constexpr_<"BLOCK_K"> BK,
                                   tl::constexpr_<"GROUP_M"> GROUP_M) {
    matmul_program<half>(a, b, c, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, BM, BN, BK,
                         GROUP_M, false);
  });
}

/// The matmul bench's kernel (bench/gpu_matmul.cpp): the same program with the element type T
/// of A, B and C (tile::half or tile::bfloat16; f32 accumulation) and sample 03's ACTIVATION
/// meta-parameter (true: leaky ReLU fused into the epilogue). Named "matmul_f16" / "matmul_bf16".
template <class T>
inline auto make_matmul_t() {
  static_assert(std::is_same_v<T, half> || std::is_same_v<T, tile::bfloat16>, "matmul_t: f16 or bf16 elements");
  return tile::kernel(std::is_same_v<T, half> ? "matmul_f16" : "matmul_bf16",
                      [](tl::ptr<T> a, tl::ptr<T> b, tl::ptr<T> c, tl::i32 M, tl::i32 N, tl::i32 K, tl::i32 stride_am,
                         tl::i32 stride_ak, tl::i32 stride_bk, tl::i32 stride_bn, tl::i32 stride_cm, tl::i32 stride_cn,
                         tl::constexpr_<"BLOCK_M"> BM, tl::constexpr_<"BLOCK_N"> BN, tl::constexpr_<"BLOCK_K"> BK,
                         tl::constexpr_<"GROUP_M"> GROUP_M, tl::constexpr_<"ACTIVATION", bool> ACTIVATION) {
                        matmul_program<T>(a, b, c, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                                          stride_cn, BM, BN, BK, GROUP_M, ACTIVATION.value);
                      });
}

/// make_matmul_t through tensor descriptors (matmul_desc_program): "matmul_desc_f16" / "_bf16".
template <class T>
inline auto make_matmul_desc_t() {
  static_assert(std::is_same_v<T, half> || std::is_same_v<T, tile::bfloat16>, "matmul_desc_t: f16 or bf16 elements");
  return tile::kernel(std::is_same_v<T, half> ? "matmul_desc_f16" : "matmul_desc_bf16",
                      [](tl::ptr<T> a, tl::ptr<T> b, tl::ptr<T> c, tl::i32 M, tl::i32 N, tl::i32 K, tl::i32 stride_am,
                         tl::i32 stride_ak, tl::i32 stride_bk, tl::i32 stride_bn, tl::i32 stride_cm, tl::i32 stride_cn,
                         tl::constexpr_<"BLOCK_M"> BM, tl::constexpr_<"BLOCK_N"> BN, tl::constexpr_<"BLOCK_K"> BK,
                         tl::constexpr_<"GROUP_M"> GROUP_M, tl::constexpr_<"ACTIVATION", bool> ACTIVATION) {
                        matmul_desc_program<T>(a, b, c, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                                               stride_cn, BM, BN, BK, GROUP_M, ACTIVATION.value);
                      });
}

/// The cpu matmul bench's kernel: f32 A, B and C at IEEE precision (exact f32 products, as its
/// C++ reference), with ACTIVATION.
inline auto make_matmul_f32_ieee() {
  return tile::kernel("matmul", [](tl::ptr<float> a, tl::ptr<float> b, tl::ptr<float> c, tl::i32 M, tl::i32 N,
                                   tl::i32 K, tl::i32 stride_am, tl::i32 stride_ak, tl::i32 stride_bk,
                                   tl::i32 stride_bn, tl::i32 stride_cm, tl::i32 stride_cn, tl::constexpr_<"BLOCK_M"> BM,
                                   tl::constexpr_<"BLOCK_N"> BN, tl::constexpr_<"BLOCK_K"> BK,
                                   tl::constexpr_<"GROUP_M"> GROUP_M, tl::constexpr_<"ACTIVATION", bool> ACTIVATION) {
    matmul_program<float>(a, b, c, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, BM, BN,
                          BK, GROUP_M, ACTIVATION.value, tl::precision::ieee);
  });
}

/// leaky ReLU in place over n elements of T (computed in f32): the separate activation kernel
/// the matmul bench runs after cuBLAS, to compare with the fused epilogue.
template <class T>
inline auto make_leaky_relu() {
  return tile::kernel(std::is_same_v<T, half> ? "leaky_relu_f16" : "leaky_relu_bf16",
                      [](tl::ptr<T> x, tl::i32 n, tl::constexpr_<"BLOCK"> BLOCK) {
                        auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
                        auto mask = offs < n;
                        auto v = tl::cast<float>(tl::load(x + offs, mask));
                        tl::store(x + offs, tl::cast<T>(leaky_relu(v)), mask);
                      });
}

/// softmax of rows [r0, r1) of an n-column matrix in plain C++ (the benches' reference; compiled
/// with each bench's flags, -O3 -march=native).
inline void softmax_rows(const float* x, float* y, std::size_t n, std::size_t r0, std::size_t r1) {
  for (std::size_t r = r0; r < r1; ++r) {
    const float* in = x + r * n;
    float* out = y + r * n;
    float m = -std::numeric_limits<float>::infinity(), s = 0;
    for (std::size_t c = 0; c < n; ++c) m = std::max(m, in[c]);
    for (std::size_t c = 0; c < n; ++c) s += out[c] = std::exp(in[c] - m);
    for (std::size_t c = 0; c < n; ++c) out[c] = out[c] / s;
  }
}

}  // namespace bench
