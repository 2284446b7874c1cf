// Sample 09 — fused attention, backward (Triton's tutorial 06): from O, dO and the forward's
// log-sum-exp M (sample 08), the gradients dQ, dK and dV. Three steps, as the tutorial:
//   preprocess   Delta = rowsum(O · dO), one program a block of queries
//   dK, dV       one program a block of keys walks the queries: P̃ᵀ = 2^(K Qᵀ - M) (K arrives
//                scaled by sm_scale / ln 2, so the scores are in base 2), dV += P̃ᵀ dO,
//                dSᵀ = P̃ᵀ (V dOᵀ - Delta), dK += dSᵀ Q
//   dQ           the same program then takes a block of queries and walks the keys:
//                dS = P̃ (dO Vᵀ - Delta), dQ += dS K
// The causal form walks the diagonal block in narrower slices with the mask first, then the
// rest without it. Loads are masked at N (queries past N get M = +inf, so P̃ = 0 there; keys past
// N are masked in the scores), so any N works: the check below uses one that is not a multiple
// of the blocks. O and M come from a float64 reference here, so the backward is checked alone.
// The same kernel with Q, K, V and dO read through tensor descriptors (make_attn_bwd_desc) is
// checked beside it; on sm_90a its loops' blocks are Tensor Memory Accelerator copies.
#include <cmath>

// the kernels (make_bwd_preprocess, make_attn_bwd): attention_kernels.hpp, which bench/gpu_attention times too

#include "attention_kernels.hpp"
#include "common.hpp"

using namespace tile::literals;

auto bwd_preprocess_f16 = make_bwd_preprocess<tile::half>("attn_bwd_preprocess_f16");
auto bwd_preprocess_bf16 = make_bwd_preprocess<tile::bfloat16>("attn_bwd_preprocess_bf16");
auto attn_bwd_f16 = make_attn_bwd<tile::half>("attn_bwd_f16");
auto attn_bwd_bf16 = make_attn_bwd<tile::bfloat16>("attn_bwd_bf16");
auto attn_bwd_desc_f16 = make_attn_bwd_desc<tile::half>("attn_bwd_desc_f16");  // (Q, K, V, dO through tensor descriptors)
auto attn_bwd_desc_bf16 = make_attn_bwd_desc<tile::bfloat16>("attn_bwd_desc_bf16");

namespace {

using vec = std::vector<double>;

/// The float64 forward and backward of one (z, h): O, M (base-2 log-sum-exp of the scaled
/// scores) and dQ, dK, dV from dO.
struct Reference {
  vec o, m, dq, dk, dv;
};

Reference reference(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                    const std::vector<float>& d_o, int ZH, int N, int D, double scale, bool causal) {
  Reference r;
  const std::size_t n = static_cast<std::size_t>(ZH) * N * D;
  r.o.assign(n, 0), r.dq.assign(n, 0), r.dk.assign(n, 0), r.dv.assign(n, 0);
  r.m.assign(static_cast<std::size_t>(ZH) * N, 0);
  const double log2e = 1.0 / std::log(2.0);
  vec P(static_cast<std::size_t>(N) * N), dP(static_cast<std::size_t>(N) * N);
  auto at = [&](int zh, int i) { return (static_cast<std::size_t>(zh) * N + i) * D; };
  for (int zh = 0; zh < ZH; ++zh) {
    for (int i = 0; i < N; ++i) {
      double mx = -INFINITY;
      for (int j = 0; j < N; ++j) {
        double s = -INFINITY;
        if (!causal || j <= i) {
          s = 0;
          for (int e = 0; e < D; ++e) s += static_cast<double>(q[at(zh, i) + e]) * k[at(zh, j) + e];
          s *= scale;
        }
        P[static_cast<std::size_t>(i) * N + j] = s;
        mx = std::max(mx, s);
      }
      double sum = 0;
      for (int j = 0; j < N; ++j) sum += std::exp(P[static_cast<std::size_t>(i) * N + j] - mx);
      for (int j = 0; j < N; ++j) {
        double& p = P[static_cast<std::size_t>(i) * N + j];
        p = std::exp(p - mx) / sum;
        for (int e = 0; e < D; ++e) r.o[at(zh, i) + e] += p * v[at(zh, j) + e];
      }
      r.m[static_cast<std::size_t>(zh) * N + i] = (mx + std::log(sum)) * log2e;
    }
    for (int i = 0; i < N; ++i) {
      double di = 0;
      for (int e = 0; e < D; ++e) di += static_cast<double>(d_o[at(zh, i) + e]) * r.o[at(zh, i) + e];
      for (int j = 0; j < N; ++j) {
        const double p = P[static_cast<std::size_t>(i) * N + j];
        double dp = 0;
        for (int e = 0; e < D; ++e) dp += static_cast<double>(d_o[at(zh, i) + e]) * v[at(zh, j) + e];
        const double ds = p * (dp - di);
        for (int e = 0; e < D; ++e) {
          r.dv[at(zh, j) + e] += p * d_o[at(zh, i) + e];
          r.dq[at(zh, i) + e] += scale * ds * k[at(zh, j) + e];
          r.dk[at(zh, j) + e] += scale * ds * q[at(zh, i) + e];
        }
      }
    }
  }
  return r;
}

template <class T>
std::vector<T> rounded(const std::vector<float>& f) {
  return std::vector<T>(f.begin(), f.end());
}
template <class T>
std::vector<float> widened(const std::vector<T>& t) {
  std::vector<float> f(t.size());
  for (std::size_t i = 0; i < t.size(); ++i) f[i] = float(t[i]);
  return f;
}

/// One configuration on `dev`: the largest error of dQ, dK and dV against the reference. `Desc`:
/// the kernel is make_attn_bwd_desc's.
template <class T, bool Desc, class Pre, class Bwd>
double run(Pre& pre, Bwd& bwd, tile::device& dev, int Z, int H, int N, int D, bool causal) {
  const std::size_t n = static_cast<std::size_t>(Z) * H * N * D;
  const auto hq = rounded<T>(sample::random_floats(n, 21)), hk = rounded<T>(sample::random_floats(n, 22)),
             hv = rounded<T>(sample::random_floats(n, 23)), hdo = rounded<T>(sample::random_floats(n, 24));
  const auto fq = widened(hq), fk = widened(hk), fv = widened(hv), fdo = widened(hdo);
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  const Reference want = reference(fq, fk, fv, fdo, Z * H, N, D, scale, causal);
  // the forward's outputs (O rounded to T as the forward stores it; M in f32), and K scaled as
  // the tutorial's host code scales it: by sm_scale / ln 2
  std::vector<float> fo(want.o.begin(), want.o.end()), fm(want.m.begin(), want.m.end()), fks(n);
  for (std::size_t i = 0; i < n; ++i) fks[i] = static_cast<float>(fk[i] * scale / std::log(2.0));
  auto q = dev.upload(hq), k = dev.upload(rounded<T>(fks)), v = dev.upload(hv), d_o = dev.upload(hdo);
  auto o = dev.upload(rounded<T>(fo));
  auto m = dev.upload(fm);
  auto delta = dev.alloc<float>(static_cast<std::size_t>(Z) * H * N);
  auto dq = dev.alloc<T>(n), dk = dev.alloc<T>(n), dv = dev.alloc<T>(n);
  const int PRE_BLOCK = 64;
  pre[{tile::cdiv(N, PRE_BLOCK), Z * H}](o, d_o, delta, N, "BLOCK_M"_c = PRE_BLOCK, "HEAD_DIM"_c = D);
  const int BLOCK_M1 = 32, BLOCK_N1 = 64, BLOCK_M2 = 64, BLOCK_N2 = 32;
  if constexpr (Desc)
    bwd[{tile::cdiv(N, BLOCK_N1), 1, Z * H}](q, k, v, static_cast<float>(scale), d_o, dq, dk, dv, m, delta, Z, H, N,
                                              "BLOCK_M1"_c = BLOCK_M1, "BLOCK_N1"_c = BLOCK_N1, "BLOCK_M2"_c = BLOCK_M2,
                                              "BLOCK_N2"_c = BLOCK_N2, "BLK_SLICE_FACTOR"_c = 2, "HEAD_DIM"_c = D,
                                              "CAUSAL"_c = causal);
  else
    bwd[{tile::cdiv(N, BLOCK_N1), 1, Z * H}](q, k, v, static_cast<float>(scale), d_o, dq, dk, dv, m, delta, H * N * D,
                                              N * D, D, H, N, "BLOCK_M1"_c = BLOCK_M1, "BLOCK_N1"_c = BLOCK_N1,
                                              "BLOCK_M2"_c = BLOCK_M2, "BLOCK_N2"_c = BLOCK_N2,
                                              "BLK_SLICE_FACTOR"_c = 2, "HEAD_DIM"_c = D, "CAUSAL"_c = causal);
  if (!dev.computes()) return 0;
  return std::max({sample::max_abs_error(dq.to_host(), want.dq), sample::max_abs_error(dk.to_host(), want.dk),
                   sample::max_abs_error(dv.to_host(), want.dv)});
}

}  // namespace

int main() {
  auto dev = tile::device::best();
  const int Z = 1, H = 2, N = 200;  // N deliberately not a multiple of the blocks
  double worst_f16 = 0, worst_bf16 = 0;
  for (int D : {64, 128})
    for (bool causal : {true, false}) {
      worst_f16 = std::max({worst_f16, run<tile::half, false>(bwd_preprocess_f16, attn_bwd_f16, dev, Z, H, N, D, causal),
                            run<tile::half, true>(bwd_preprocess_f16, attn_bwd_desc_f16, dev, Z, H, N, D, causal)});
      worst_bf16 = std::max({worst_bf16, run<tile::bfloat16, false>(bwd_preprocess_bf16, attn_bwd_bf16, dev, Z, H, N, D, causal),
                             run<tile::bfloat16, true>(bwd_preprocess_bf16, attn_bwd_desc_bf16, dev, Z, H, N, D, causal)});
    }
  // the gradients pass through P̃ and dS rounded to the input type (as the tutorial rounds them)
  int rc = sample::report("09_attention_backward (f16)", dev, worst_f16, 1e-2);
  rc |= sample::report("09_attention_backward (bf16)", dev, worst_bf16, 6e-2);
  return rc;
}
