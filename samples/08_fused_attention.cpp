// Sample 08 — fused attention, forward (Triton's tutorial 06): O = softmax(Q Kᵀ · sm_scale) V for
// every (batch, head), one program a block of BLOCK_M queries, K and V walked in blocks of
// BLOCK_N keys with the online softmax in base 2 (FlashAttention's rescaling: the running row
// maximum m and sum l, the accumulator scaled by 2^(m_old - m_new) when the maximum grows). The
// causal form runs the tutorial's two stages: the key blocks wholly left of the diagonal, then
// the diagonal block with its mask. Each program also writes M = m + log2(l), the row's
// log-sum-exp in base 2 that the backward pass (sample 09) reads.
// The tutorial assumes N is a multiple of the blocks; here the loads, the scores and the stores
// are masked at N, so any N works (the check below uses one that is not).
#include <cmath>

#include "common.hpp"

using namespace tile::literals;

/// The tutorial's _attn_fwd_inner: one stage's walk over key blocks [lo, hi), updating the
/// accumulator, the row maxima m_i and the row sums l_i. STAGE 1: left of the diagonal; 2: the
/// diagonal block (mask keys after the query); 3: every block (not causal). `T`: Q, K, V's type.
template <class T>
void attn_fwd_inner(tl::tensor& acc, tl::tensor& l_i, tl::tensor& m_i, const tl::tensor& q, const tl::tensor& k_base,
                    const tl::tensor& v_base, const tl::tensor& stride_kn, const tl::tensor& stride_vn,
                    const tl::tensor& start_m, const tl::tensor& qk_scale, const tl::tensor& offs_m,
                    const tl::tensor& offs_n, const tl::tensor& offs_d, const tl::tensor& n_ctx, int BLOCK_M, int BLOCK_N,
                    int STAGE) {
  using tl::_;
  using tl::newaxis;
  auto body = [&](tl::tensor start_n) {
    auto cols = start_n + offs_n;  // the block's keys
    // K read transposed: a [HEAD_DIM, BLOCK_N] tile whose column j is key start_n + j
    auto k = tl::load(k_base + offs_d(_, newaxis) + cols(newaxis, _) * stride_kn, cols(newaxis, _) < n_ctx, 0.0f);
    auto qk = tl::dot(q, k);
    tl::tensor m_ij;
    if (STAGE == 2) {
      auto mask = (offs_m(_, newaxis) >= cols(newaxis, _)) & (cols(newaxis, _) < n_ctx);
      qk = qk * qk_scale + tl::where(mask, 0.0f, -1.0e6f);
      m_ij = tl::maximum(m_i, tl::max(qk, 1));
      qk = qk - m_ij(_, newaxis);
    } else {
      if (STAGE == 3) qk = tl::where(cols(newaxis, _) < n_ctx, qk, -1.0e6f);  // (keys past N)
      m_ij = tl::maximum(m_i, tl::max(qk, 1) * qk_scale);
      qk = qk * qk_scale - m_ij(_, newaxis);
    }
    auto p = tl::exp2(qk);
    auto l_ij = tl::sum(p, 1);
    auto alpha = tl::exp2(m_i - m_ij);  // the rescaling of what was summed so far
    l_i = l_i * alpha + l_ij;
    acc = acc * alpha(_, newaxis);
    auto v = tl::load(v_base + cols(_, newaxis) * stride_vn + offs_d(newaxis, _), cols(_, newaxis) < n_ctx, 0.0f);
    acc = tl::dot(tl::cast<T>(p), v, acc);
    m_i = m_ij;
  };
  if (STAGE == 1) tl::for_range(0, start_m * BLOCK_M, BLOCK_N, body);
  else if (STAGE == 2) tl::for_range(start_m * BLOCK_M, tl::minimum((start_m + 1) * BLOCK_M, n_ctx), BLOCK_N, body);
  else tl::for_range(0, n_ctx, BLOCK_N, body);
}

/// The tutorial's _attn_fwd for Q, K, V, O of shape [Z, H, N_CTX, HEAD_DIM] (the last stride 1)
/// and M of [Z, H, N_CTX]. Grid: (cdiv(N_CTX, BLOCK_M), Z·H).
template <class T>
auto make_attn_fwd(const char* name) {
  return tile::kernel(name, [](tl::ptr<T> Q, tl::ptr<T> K, tl::ptr<T> V, tl::f32 sm_scale, tl::ptr<float> M,
                               tl::ptr<T> Out, tl::i32 stride_qz, tl::i32 stride_qh, tl::i32 stride_qm,
                               tl::i32 stride_kz, tl::i32 stride_kh, tl::i32 stride_kn, tl::i32 stride_vz,
                               tl::i32 stride_vh, tl::i32 stride_vn, tl::i32 stride_oz, tl::i32 stride_oh,
                               tl::i32 stride_om, tl::i32 H, tl::i32 N_CTX, tl::constexpr_<"HEAD_DIM"> HEAD_DIM,
                               tl::constexpr_<"BLOCK_M"> BLOCK_M, tl::constexpr_<"BLOCK_N"> BLOCK_N,
                               tl::constexpr_<"STAGE"> STAGE) {
    using tl::_;
    using tl::newaxis;
    auto start_m = tl::program_id(0);
    auto off_hz = tl::program_id(1);
    auto off_z = off_hz / H;
    auto off_h = off_hz % H;
    auto q_base = Q + off_z * stride_qz + off_h * stride_qh;
    auto k_base = K + off_z * stride_kz + off_h * stride_kh;
    auto v_base = V + off_z * stride_vz + off_h * stride_vh;
    auto o_base = Out + off_z * stride_oz + off_h * stride_oh;

    auto offs_m = start_m * BLOCK_M + tl::arange(0, BLOCK_M);
    auto offs_n = tl::arange(0, BLOCK_N);
    auto offs_d = tl::arange(0, HEAD_DIM);
    // the running maximum and sum of each row, and the accumulator
    auto m_i = tl::full<float>({BLOCK_M}, -tl::inf<float>());
    auto l_i = tl::full<float>({BLOCK_M}, 1.0f);
    auto acc = tl::zeros<float>({BLOCK_M, HEAD_DIM});
    auto qk_scale = sm_scale * 1.44269504f;  // 1 / ln(2): exp2 instead of exp
    auto row_ok = offs_m(_, newaxis) < N_CTX;
    auto q = tl::load(q_base + offs_m(_, newaxis) * stride_qm + offs_d(newaxis, _), row_ok, 0.0f);
    // stage 1 (causal) or 3 (not): the blocks left of the diagonal, or all of them
    if (STAGE & 1)
      attn_fwd_inner<T>(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn, start_m, qk_scale, offs_m, offs_n,
                        offs_d, N_CTX, BLOCK_M, BLOCK_N, 4 - STAGE);
    // stage 2 (causal): the diagonal block
    if (STAGE & 2)
      attn_fwd_inner<T>(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn, start_m, qk_scale, offs_m, offs_n,
                        offs_d, N_CTX, BLOCK_M, BLOCK_N, 2);
    // epilogue
    m_i = m_i + tl::log2(l_i);
    acc = acc / l_i(_, newaxis);
    tl::store(M + off_hz * N_CTX + offs_m, m_i, offs_m < N_CTX);
    tl::store(o_base + offs_m(_, newaxis) * stride_om + offs_d(newaxis, _), tl::cast<T>(acc), row_ok);
  });
}

auto attn_fwd_f16 = make_attn_fwd<tile::half>("attn_fwd_f16");
auto attn_fwd_bf16 = make_attn_fwd<tile::bfloat16>("attn_fwd_bf16");

namespace {

/// The float64 reference: O = softmax(Q Kᵀ · scale) V per (z, h), and M = log2 of each row's
/// sum of exp2((s - max) · log2 e) plus that maximum in base 2 (the kernel's M).
void reference(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v, int ZH, int N,
               int D, double scale, bool causal, std::vector<double>& o, std::vector<double>& m) {
  o.assign(static_cast<std::size_t>(ZH) * N * D, 0.0);
  m.assign(static_cast<std::size_t>(ZH) * N, 0.0);
  std::vector<double> s(static_cast<std::size_t>(N));
  const double log2e = 1.0 / std::log(2.0);
  for (int zh = 0; zh < ZH; ++zh)
    for (int i = 0; i < N; ++i) {
      const std::size_t qi = (static_cast<std::size_t>(zh) * N + i) * D;
      const int last = causal ? i : N - 1;
      double mx = -INFINITY;
      for (int j = 0; j <= last; ++j) {
        const std::size_t kj = (static_cast<std::size_t>(zh) * N + j) * D;
        double d = 0;
        for (int e = 0; e < D; ++e) d += static_cast<double>(q[qi + e]) * k[kj + e];
        s[static_cast<std::size_t>(j)] = d * scale * log2e;  // base 2
        mx = std::max(mx, s[static_cast<std::size_t>(j)]);
      }
      double sum = 0;
      for (int j = 0; j <= last; ++j) sum += std::exp2(s[static_cast<std::size_t>(j)] - mx);
      for (int j = 0; j <= last; ++j) {
        const double p = std::exp2(s[static_cast<std::size_t>(j)] - mx) / sum;
        const std::size_t vj = (static_cast<std::size_t>(zh) * N + j) * D;
        for (int e = 0; e < D; ++e) o[qi + e] += p * v[vj + e];
      }
      m[static_cast<std::size_t>(zh) * N + i] = mx + std::log2(sum);
    }
}

/// One configuration on `dev`: the largest error of O and of M against the reference.
template <class T, class Kernel>
std::pair<double, double> run(Kernel& kernel, tile::device& dev, int Z, int H, int N, int D, bool causal, int BM, int BN) {
  const std::size_t n = static_cast<std::size_t>(Z) * H * N * D;
  auto fq = sample::random_floats(n, 11), fk = sample::random_floats(n, 12), fv = sample::random_floats(n, 13);
  std::vector<T> hq(fq.begin(), fq.end()), hk(fk.begin(), fk.end()), hv(fv.begin(), fv.end());
  for (std::size_t i = 0; i < n; ++i) fq[i] = float(hq[i]), fk[i] = float(hk[i]), fv[i] = float(hv[i]);  // (as stored)
  auto q = dev.upload(hq), k = dev.upload(hk), v = dev.upload(hv);
  auto o = dev.alloc<T>(n);
  auto m = dev.alloc<float>(static_cast<std::size_t>(Z) * H * N);
  const float sm_scale = 1.0f / std::sqrt(static_cast<float>(D));
  const int sz = H * N * D, sh = N * D, sm = D;
  auto grid = [&](const tile::meta& meta) { return tile::grid3{tile::cdiv(N, meta["BLOCK_M"]), Z * H}; };
  kernel[grid](q, k, v, sm_scale, m, o, sz, sh, sm, sz, sh, sm, sz, sh, sm, sz, sh, sm, H, N, "HEAD_DIM"_c = D,
               "BLOCK_M"_c = BM, "BLOCK_N"_c = BN, "STAGE"_c = causal ? 3 : 1);
  if (!dev.computes()) return {0, 0};
  std::vector<double> want_o, want_m;
  reference(fq, fk, fv, Z * H, N, D, sm_scale, causal, want_o, want_m);
  return {sample::max_abs_error(o.to_host(), want_o), sample::max_abs_error(m.to_host(), want_m)};
}

}  // namespace

/// `--bench` (as the tutorial's bench_flash_attention): forward TFLOP/s at B = 4, H = 32, f16,
/// N = 1024 … 16384, D = 64 and 128, causal and not (4·B·H·N²·D flops, halved for causal); the
/// best of a few BLOCK_M / BLOCK_N / num_warps configurations at each point.
/// `--bench D N causal BLOCK_M BLOCK_N num_warps`: that one point and configuration (for a profiler).
int bench(tile::device& dev, const std::vector<int>& one) {
  const int Z = 4, H = 32;
  struct config {
    int bm, bn, warps;
  };
  std::vector<config> configs = {{128, 64, 8}, {128, 128, 8}, {64, 64, 4}, {128, 32, 8}};
  std::vector<int> Ds = {64, 128}, Ns = {1024, 2048, 4096, 8192, 16384};
  std::vector<bool> causals = {false, true};
  if (one.size() == 6) Ds = {one[0]}, Ns = {one[1]}, causals = {one[2] != 0}, configs = {{one[3], one[4], one[5]}};
  std::printf("%6s %4s %7s %9s  %s\n", "N", "D", "causal", "TFLOP/s", "BLOCK_M, BLOCK_N, num_warps");
  for (int D : Ds)
    for (bool causal : causals)
      for (int N : Ns) {
        const std::size_t n = static_cast<std::size_t>(Z) * H * N * D;
        auto q = dev.alloc<tile::half>(n), k = dev.alloc<tile::half>(n), v = dev.alloc<tile::half>(n), o = dev.alloc<tile::half>(n);
        auto m = dev.alloc<float>(static_cast<std::size_t>(Z) * H * N);
        const int sz = H * N * D, sh = N * D;
        double best = 0;
        config chosen{};
        for (const config& c : configs) {
          auto run = [&] {
            attn_fwd_f16[{tile::cdiv(N, c.bm), Z * H}](q, k, v, 0.125f, m, o, sz, sh, D, sz, sh, D, sz, sh, D, sz, sh, D, H, N,
                                                      "HEAD_DIM"_c = D, "BLOCK_M"_c = c.bm, "BLOCK_N"_c = c.bn,
                                                      "STAGE"_c = causal ? 3 : 1, "num_warps"_c = c.warps);
          };
          run();
          const auto r = tile::testing::do_bench(run, 25, 100, {}, tile::testing::make_timer(dev).get());
          const double tflops = 4.0 * Z * H * N * static_cast<double>(N) * D * (causal ? 0.5 : 1.0) / (r.median_ms * 1e-3) / 1e12;
          if (tflops > best) best = tflops, chosen = c;
        }
        std::printf("%6d %4d %7s %9.1f  %d, %d, %d\n", N, D, causal ? "yes" : "no", best, chosen.bm, chosen.bn, chosen.warps);
      }
  return 0;
}

int main(int argc, char** argv) {
  auto dev = tile::device::best();
  if (argc > 1 && std::string(argv[1]) == "--bench") {
    std::vector<int> one;
    for (int i = 2; i < argc; ++i) one.push_back(std::atoi(argv[i]));
    return dev.computes() ? bench(dev, one) : 0;
  }
  const int Z = 1, H = 2, N = 200;  // N deliberately not a multiple of the blocks
  // O's elements are averages of values in [-1, 1]: f16 keeps 11 bits, bf16 8; P is rounded to
  // the input type before the second dot, as the tutorial does
  double worst_o_f16 = 0, worst_o_bf16 = 0, worst_m = 0;
  for (int D : {64, 128})
    for (bool causal : {false, true}) {
      auto [eo, em] = run<tile::half>(attn_fwd_f16, dev, Z, H, N, D, causal, 64, 32);
      worst_o_f16 = std::max(worst_o_f16, eo);
      worst_m = std::max(worst_m, em);
      auto [bo, bm] = run<tile::bfloat16>(attn_fwd_bf16, dev, Z, H, N, D, causal, 64, 32);
      worst_o_bf16 = std::max(worst_o_bf16, bo);
      worst_m = std::max(worst_m, bm);
    }
  int rc = sample::report("08_fused_attention (f16 O)", dev, worst_o_f16, 4e-3);
  rc |= sample::report("08_fused_attention (bf16 O)", dev, worst_o_bf16, 2e-2);
  rc |= sample::report("08_fused_attention (log-sum-exp M)", dev, worst_m, 1e-3);
  return rc;
}
