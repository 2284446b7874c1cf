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
#include <cmath>

#include "common.hpp"

using namespace tile::literals;

/// Delta[z, h, m] = Σ_d O · dO: one program a block of BLOCK_M rows. Grid: (cdiv(N, BLOCK_M), Z·H).
template <class T>
auto make_bwd_preprocess(const char* name) {
  return tile::kernel(name, [](tl::ptr<T> O, tl::ptr<T> DO, tl::ptr<float> Delta, tl::i32 N_CTX,
                               tl::constexpr_<"BLOCK_M"> BLOCK_M, tl::constexpr_<"HEAD_DIM"> HEAD_DIM) {
    using tl::_;
    using tl::newaxis;
    auto off_m = tl::program_id(0) * BLOCK_M + tl::arange(0, BLOCK_M);
    auto off_hz = tl::program_id(1);
    auto off_n = tl::arange(0, HEAD_DIM);
    auto at = off_hz * HEAD_DIM * N_CTX + off_m(_, newaxis) * HEAD_DIM + off_n(newaxis, _);
    auto ok = off_m(_, newaxis) < N_CTX;
    auto o = tl::load(O + at, ok, 0.0f);
    auto d_o = tl::cast<float>(tl::load(DO + at, ok, 0.0f));
    auto delta = tl::sum(tl::cast<float>(o) * d_o, 1);
    tl::store(Delta + off_hz * N_CTX + off_m, delta, off_m < N_CTX);
  });
}

/// The tutorial's _attn_bwd_dkdv: the key block [start_n, start_n + BLOCK_N1) against `num_steps`
/// query blocks of BLOCK_M1 from start_m; MASK: keep only queries at or after each key.
template <class T>
void attn_bwd_dkdv(tl::tensor& dk, tl::tensor& dv, const tl::tensor& Q, const tl::tensor& k, const tl::tensor& v,
                   const tl::tensor& DO, const tl::tensor& M, const tl::tensor& D, const tl::tensor& stride_tok,
                   const tl::tensor& n_ctx, int BLOCK_M1, int BLOCK_N1, int HEAD_DIM, const tl::tensor& start_n,
                   const tl::tensor& start_m, const tl::tensor& num_steps, bool MASK) {
  using tl::_;
  using tl::newaxis;
  auto offs_m = start_m + tl::arange(0, BLOCK_M1);
  auto offs_n = start_n + tl::arange(0, BLOCK_N1);
  auto offs_k = tl::arange(0, HEAD_DIM);
  auto qT_ptrs = Q + offs_m(newaxis, _) * stride_tok + offs_k(_, newaxis);
  auto do_ptrs = DO + offs_m(_, newaxis) * stride_tok + offs_k(newaxis, _);
  auto curr_m = start_m;
  tl::for_range(0, num_steps, [&](tl::tensor) {
    auto rows = curr_m + tl::arange(0, BLOCK_M1);  // the block's queries
    auto qT = tl::load(qT_ptrs, rows(newaxis, _) < n_ctx, 0.0f);
    auto m = tl::load(M + rows, rows < n_ctx, tl::inf<float>());  // (past N: P̃ = 0)
    auto qkT = tl::dot(k, qT);
    auto pT = tl::exp2(qkT - m(newaxis, _));
    if (MASK) pT = tl::where(rows(newaxis, _) >= offs_n(_, newaxis), pT, 0.0f);
    auto d_o = tl::load(do_ptrs, rows(_, newaxis) < n_ctx, 0.0f);
    dv = tl::dot(tl::cast<T>(pT), d_o, dv);
    auto Di = tl::load(D + rows, rows < n_ctx, 0.0f);
    auto dpT = tl::dot(v, tl::trans(d_o));
    auto dsT = tl::cast<T>(pT * (dpT - Di(newaxis, _)));
    dk = tl::dot(dsT, tl::trans(qT), dk);
    curr_m = curr_m + BLOCK_M1;
    qT_ptrs += BLOCK_M1 * stride_tok;
    do_ptrs += BLOCK_M1 * stride_tok;
  });
}

/// The tutorial's _attn_bwd_dq: the query block [start_m, start_m + BLOCK_M2) against
/// `num_steps` key blocks of BLOCK_N2 from start_n; MASK: keep only keys at or before each query.
template <class T>
void attn_bwd_dq(tl::tensor& dq, const tl::tensor& q, const tl::tensor& K, const tl::tensor& V, const tl::tensor& d_o,
                 const tl::tensor& m, const tl::tensor& Di, const tl::tensor& stride_tok, const tl::tensor& n_ctx,
                 int BLOCK_M2, int BLOCK_N2, int HEAD_DIM, const tl::tensor& start_m, const tl::tensor& start_n,
                 const tl::tensor& num_steps, bool MASK) {
  using tl::_;
  using tl::newaxis;
  auto offs_m = start_m + tl::arange(0, BLOCK_M2);
  auto offs_k = tl::arange(0, HEAD_DIM);
  auto curr_n = start_n;
  tl::for_range(0, num_steps, [&](tl::tensor) {
    auto cols = curr_n + tl::arange(0, BLOCK_N2);  // the block's keys
    auto kv_ok = cols(newaxis, _) < n_ctx;
    auto kT = tl::load(K + cols(newaxis, _) * stride_tok + offs_k(_, newaxis), kv_ok, 0.0f);
    auto vT = tl::load(V + cols(newaxis, _) * stride_tok + offs_k(_, newaxis), kv_ok, 0.0f);
    auto qk = tl::dot(q, kT);
    auto p = tl::exp2(qk - m);
    auto keep = kv_ok;  // (keys past N)
    if (MASK) keep = keep & (offs_m(_, newaxis) >= cols(newaxis, _));
    p = tl::where(keep, p, 0.0f);
    auto dp = tl::dot(d_o, vT);
    auto ds = tl::cast<T>(p * (dp - Di(_, newaxis)));
    dq = tl::dot(ds, tl::trans(kT), dq);
    curr_n = curr_n + BLOCK_N2;
  });
}

/// The tutorial's _attn_bwd for Q, K (scaled by sm_scale / ln 2), V, dO, dQ, dK, dV of shape
/// [Z, H, N_CTX, HEAD_DIM] (contiguous), M and Delta of [Z, H, N_CTX]. Program pid computes dK,
/// dV of key block pid (BLOCK_N1 keys) and dQ of query block pid (BLOCK_M2 queries); BLOCK_N1 =
/// BLOCK_M2. Grid: (cdiv(N_CTX, BLOCK_N1), 1, Z·H).
template <class T>
auto make_attn_bwd(const char* name) {
  return tile::kernel(name, [](tl::ptr<T> Q, tl::ptr<T> K, tl::ptr<T> V, tl::f32 sm_scale, tl::ptr<T> DO,
                               tl::ptr<T> DQ, tl::ptr<T> DK, tl::ptr<T> DV, tl::ptr<float> M, tl::ptr<float> D,
                               tl::i32 stride_z, tl::i32 stride_h, tl::i32 stride_tok, tl::i32 H, tl::i32 N_CTX,
                               tl::constexpr_<"BLOCK_M1"> BLOCK_M1, tl::constexpr_<"BLOCK_N1"> BLOCK_N1,
                               tl::constexpr_<"BLOCK_M2"> BLOCK_M2, tl::constexpr_<"BLOCK_N2"> BLOCK_N2,
                               tl::constexpr_<"BLK_SLICE_FACTOR"> BLK_SLICE_FACTOR,
                               tl::constexpr_<"HEAD_DIM"> HEAD_DIM, tl::constexpr_<"CAUSAL", bool> CAUSAL) {
    using tl::_;
    using tl::newaxis;
    const float LN2 = 0.6931471824645996f;
    auto bhid = tl::program_id(2);
    auto off_chz = bhid * N_CTX;
    auto adj = stride_h * (bhid % H) + stride_z * (bhid / H);
    auto pid = tl::program_id(0);
    Q += adj;
    K += adj;
    V += adj;
    DO += adj;
    DQ += adj;
    DK += adj;
    DV += adj;
    M += off_chz;
    D += off_chz;
    auto offs_k = tl::arange(0, HEAD_DIM);

    // dK and dV of the key block pid
    auto start_n = pid * BLOCK_N1;
    auto offs_n = start_n + tl::arange(0, BLOCK_N1);
    auto n_ok = offs_n(_, newaxis) < N_CTX;
    auto dv = tl::zeros<float>({BLOCK_N1, HEAD_DIM});
    auto dk = tl::zeros<float>({BLOCK_N1, HEAD_DIM});
    auto k = tl::load(K + offs_n(_, newaxis) * stride_tok + offs_k(newaxis, _), n_ok, 0.0f);
    auto v = tl::load(V + offs_n(_, newaxis) * stride_tok + offs_k(newaxis, _), n_ok, 0.0f);
    tl::tensor start_m = start_n;
    if (CAUSAL) {  // the diagonal block in slices of MASK_BLOCK_M1 queries, masked; then the rest
      const int MASK_BLOCK_M1 = BLOCK_M1 / BLK_SLICE_FACTOR;
      const int steps = BLOCK_N1 / MASK_BLOCK_M1;
      attn_bwd_dkdv<T>(dk, dv, Q, k, v, DO, M, D, stride_tok, N_CTX, MASK_BLOCK_M1, BLOCK_N1, HEAD_DIM, start_n,
                       start_m, tl::full<int>({}, steps), true);
      start_m = start_m + steps * MASK_BLOCK_M1;
    } else {
      start_m = tl::full<int>({}, 0);
    }
    auto num_steps = tl::cdiv(tl::maximum(N_CTX - start_m, 0), BLOCK_M1);
    attn_bwd_dkdv<T>(dk, dv, Q, k, v, DO, M, D, stride_tok, N_CTX, BLOCK_M1, BLOCK_N1, HEAD_DIM, start_n, start_m,
                     num_steps, false);
    tl::store(DV + offs_n(_, newaxis) * stride_tok + offs_k(newaxis, _), tl::cast<T>(dv), n_ok);
    dk = dk * sm_scale;
    tl::store(DK + offs_n(_, newaxis) * stride_tok + offs_k(newaxis, _), tl::cast<T>(dk), n_ok);

    // dQ of the query block pid
    auto start_m2 = pid * BLOCK_M2;
    auto offs_m = start_m2 + tl::arange(0, BLOCK_M2);
    auto m_ok = offs_m(_, newaxis) < N_CTX;
    auto q = tl::load(Q + offs_m(_, newaxis) * stride_tok + offs_k(newaxis, _), m_ok, 0.0f);
    auto dq = tl::zeros<float>({BLOCK_M2, HEAD_DIM});
    auto d_o = tl::load(DO + offs_m(_, newaxis) * stride_tok + offs_k(newaxis, _), m_ok, 0.0f);
    auto m = tl::load(M + offs_m, offs_m < N_CTX, tl::inf<float>())(_, newaxis);
    auto Di = tl::load(D + offs_m, offs_m < N_CTX, 0.0f);
    if (CAUSAL) {  // the diagonal block in slices of MASK_BLOCK_N2 keys, masked; then the keys before it
      const int MASK_BLOCK_N2 = BLOCK_N2 / BLK_SLICE_FACTOR;
      const int steps = BLOCK_M2 / MASK_BLOCK_N2;
      attn_bwd_dq<T>(dq, q, K, V, d_o, m, Di, stride_tok, N_CTX, BLOCK_M2, MASK_BLOCK_N2, HEAD_DIM, start_m2, start_m2,
                     tl::full<int>({}, steps), true);
      attn_bwd_dq<T>(dq, q, K, V, d_o, m, Di, stride_tok, N_CTX, BLOCK_M2, BLOCK_N2, HEAD_DIM, start_m2,
                     tl::full<int>({}, 0), start_m2 / BLOCK_N2, false);
    } else {
      attn_bwd_dq<T>(dq, q, K, V, d_o, m, Di, stride_tok, N_CTX, BLOCK_M2, BLOCK_N2, HEAD_DIM, start_m2,
                     tl::full<int>({}, 0), tl::cdiv(N_CTX, BLOCK_N2), false);
    }
    dq = dq * LN2;
    tl::store(DQ + offs_m(_, newaxis) * stride_tok + offs_k(newaxis, _), tl::cast<T>(dq), m_ok);
  });
}

auto bwd_preprocess_f16 = make_bwd_preprocess<tile::half>("attn_bwd_preprocess_f16");
auto bwd_preprocess_bf16 = make_bwd_preprocess<tile::bfloat16>("attn_bwd_preprocess_bf16");
auto attn_bwd_f16 = make_attn_bwd<tile::half>("attn_bwd_f16");
auto attn_bwd_bf16 = make_attn_bwd<tile::bfloat16>("attn_bwd_bf16");

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

/// One configuration on `dev`: the largest error of dQ, dK and dV against the reference.
template <class T, class Pre, class Bwd>
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
      worst_f16 = std::max(worst_f16, run<tile::half>(bwd_preprocess_f16, attn_bwd_f16, dev, Z, H, N, D, causal));
      worst_bf16 = std::max(worst_bf16, run<tile::bfloat16>(bwd_preprocess_bf16, attn_bwd_bf16, dev, Z, H, N, D, causal));
    }
  // the gradients pass through P̃ and dS rounded to the input type (as the tutorial rounds them)
  int rc = sample::report("09_attention_backward (f16)", dev, worst_f16, 1e-2);
  rc |= sample::report("09_attention_backward (bf16)", dev, worst_bf16, 6e-2);
  return rc;
}
