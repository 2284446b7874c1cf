// samples/attention_kernels.hpp — the fused attention kernels of Triton's tutorial 06 in tile, one
// definition for sample 08 (the forward: attn_fwd_inner, make_attn_fwd), sample 09 (the backward:
// make_bwd_preprocess, attn_bwd_dkdv, attn_bwd_dq, make_attn_bwd) and bench/gpu_attention.cpp,
// which times them against Triton's own compiled kernels. Each make_* returns a fresh kernel
// object; `T` is Q, K, V's element type (tile::half or tile::bfloat16).
#pragma once

#include <tile/tile.hpp>

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

/// The forward through tensor descriptors, as Triton 3.6's tutorial writes it: K and V are named by
/// one descriptor each over all heads, [Z·H·N_CTX, HEAD_DIM], and read a block of BLOCK_N rows at a
/// time by row coordinates (on sm_90a the loop's reads become Tensor Memory Accelerator copies).
/// A block that runs past N_CTX reads the next head's first rows (zeros past the last head), whose
/// scores the key mask sets to -1e6 as for the pointer form's zeros. Q and O are read and written
/// through one descriptor a head, [N_CTX, HEAD_DIM], so rows past N_CTX are neither read nor written.
/// Q, K, V, O: [Z, H, N_CTX, HEAD_DIM], contiguous; M: [Z, H, N_CTX]. Grid: (cdiv(N_CTX, BLOCK_M), Z·H).
template <class T>
void attn_fwd_inner_desc(tl::tensor& acc, tl::tensor& l_i, tl::tensor& m_i, const tl::tensor& q,
                         const tl::tensor_descriptor& desc_k, const tl::tensor_descriptor& desc_v, const tl::tensor& offset_y,
                         const tl::tensor& start_m, const tl::tensor& qk_scale, const tl::tensor& offs_m,
                         const tl::tensor& offs_n, const tl::tensor& n_ctx, int BLOCK_M, int BLOCK_N, int STAGE) {
  using tl::_;
  using tl::newaxis;
  auto body = [&](tl::tensor start_n) {
    auto cols = start_n + offs_n;  // the block's keys
    auto k = tl::trans(desc_k.load({offset_y + start_n, 0}));
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
    auto alpha = tl::exp2(m_i - m_ij);
    auto l_ij = tl::sum(p, 1);
    acc = acc * alpha(_, newaxis);
    auto v = desc_v.load({offset_y + start_n, 0});
    acc = tl::dot(tl::cast<T>(p), v, acc);
    l_i = l_i * alpha + l_ij;
    m_i = m_ij;
  };
  if (STAGE == 1) tl::for_range(0, start_m * BLOCK_M, BLOCK_N, body);
  else if (STAGE == 2) tl::for_range(start_m * BLOCK_M, tl::minimum((start_m + 1) * BLOCK_M, n_ctx), BLOCK_N, body);
  else tl::for_range(0, n_ctx, BLOCK_N, body);
}

template <class T>
auto make_attn_fwd_desc(const char* name) {
  return tile::kernel(name, [](tl::f32 sm_scale, tl::ptr<float> M, tl::i32 Z, tl::i32 H, tl::ptr<T> Q, tl::ptr<T> K,
                               tl::ptr<T> V, tl::ptr<T> Out, tl::i32 N_CTX, tl::constexpr_<"HEAD_DIM"> HEAD_DIM,
                               tl::constexpr_<"BLOCK_M"> BLOCK_M, tl::constexpr_<"BLOCK_N"> BLOCK_N,
                               tl::constexpr_<"STAGE"> STAGE) {
    using tl::_;
    using tl::newaxis;
    auto start_m = tl::program_id(0);
    auto off_hz = tl::program_id(1);
    auto y_dim = Z * H * N_CTX;
    auto desc_k = tl::make_tensor_descriptor(K, {y_dim, HEAD_DIM}, {HEAD_DIM, 1}, {BLOCK_N, HEAD_DIM});
    auto desc_v = tl::make_tensor_descriptor(V, {y_dim, HEAD_DIM}, {HEAD_DIM, 1}, {BLOCK_N, HEAD_DIM});
    auto head = off_hz * N_CTX * HEAD_DIM;  // (this head's Q and O)
    auto desc_q = tl::make_tensor_descriptor(Q + head, {N_CTX, HEAD_DIM}, {HEAD_DIM, 1}, {BLOCK_M, HEAD_DIM});
    auto desc_o = tl::make_tensor_descriptor(Out + head, {N_CTX, HEAD_DIM}, {HEAD_DIM, 1}, {BLOCK_M, HEAD_DIM});
    auto offset_y = off_hz * N_CTX;
    auto offs_m = start_m * BLOCK_M + tl::arange(0, BLOCK_M);
    auto offs_n = tl::arange(0, BLOCK_N);
    auto m_i = tl::full<float>({BLOCK_M}, -tl::inf<float>());
    auto l_i = tl::full<float>({BLOCK_M}, 1.0f);
    auto acc = tl::zeros<float>({BLOCK_M, HEAD_DIM});
    auto qk_scale = sm_scale * 1.44269504f;
    auto q = desc_q.load({start_m * BLOCK_M, 0});
    if (STAGE & 1)
      attn_fwd_inner_desc<T>(acc, l_i, m_i, q, desc_k, desc_v, offset_y, start_m, qk_scale, offs_m, offs_n, N_CTX,
                             BLOCK_M, BLOCK_N, 4 - STAGE);
    if (STAGE & 2)
      attn_fwd_inner_desc<T>(acc, l_i, m_i, q, desc_k, desc_v, offset_y, start_m, qk_scale, offs_m, offs_n, N_CTX,
                             BLOCK_M, BLOCK_N, 2);
    m_i = m_i + tl::log2(l_i);
    acc = acc / l_i(_, newaxis);
    tl::store(M + off_hz * N_CTX + offs_m, m_i, offs_m < N_CTX);
    desc_o.store({start_m * BLOCK_M, 0}, tl::cast<T>(acc));
  });
}

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

/// The backward through tensor descriptors: Q, K, V and dO named over all heads, [Z·H·N_CTX,
/// HEAD_DIM], and read a block of rows at a time by row coordinates in both loops (on sm_90a the
/// Tensor Memory Accelerator copies them; no pointer tiles are carried). Rows past N_CTX read the
/// next head's (zeros past the last head), whose contributions the masks zero as for the pointer
/// form's zeros: M = inf makes P̃ᵀ 0 past N, and the keys past N are masked. Arguments as
/// make_attn_bwd's, contiguous, plus Z; grid: (cdiv(N_CTX, BLOCK_N1), 1, Z·H).
template <class T>
void attn_bwd_dkdv_desc(tl::tensor& dk, tl::tensor& dv, const tl::tensor_descriptor& desc_q, const tl::tensor& k,
                        const tl::tensor& v, const tl::tensor_descriptor& desc_do, const tl::tensor& M, const tl::tensor& D,
                        const tl::tensor& offset_y, const tl::tensor& n_ctx, int BLOCK_M1, int BLOCK_N1,
                        const tl::tensor& start_n, const tl::tensor& start_m, const tl::tensor& num_steps, bool MASK) {
  using tl::_;
  using tl::newaxis;
  auto offs_n = start_n + tl::arange(0, BLOCK_N1);
  auto curr_m = start_m;
  tl::for_range(0, num_steps, [&](tl::tensor) {
    auto rows = curr_m + tl::arange(0, BLOCK_M1);  // the block's queries
    auto q = desc_q.load({offset_y + curr_m, 0});
    auto m = tl::load(M + rows, rows < n_ctx, tl::inf<float>());  // (past N: P̃ = 0)
    auto qkT = tl::dot(k, tl::trans(q));
    auto pT = tl::exp2(qkT - m(newaxis, _));
    if (MASK) pT = tl::where(rows(newaxis, _) >= offs_n(_, newaxis), pT, 0.0f);
    auto d_o = desc_do.load({offset_y + curr_m, 0});
    dv = tl::dot(tl::cast<T>(pT), d_o, dv);
    auto Di = tl::load(D + rows, rows < n_ctx, 0.0f);
    auto dpT = tl::dot(v, tl::trans(d_o));
    auto dsT = tl::cast<T>(pT * (dpT - Di(newaxis, _)));
    dk = tl::dot(dsT, q, dk);
    curr_m = curr_m + BLOCK_M1;
  });
}

template <class T>
void attn_bwd_dq_desc(tl::tensor& dq, const tl::tensor& q, const tl::tensor_descriptor& desc_k,
                      const tl::tensor_descriptor& desc_v, const tl::tensor& d_o, const tl::tensor& m, const tl::tensor& Di,
                      const tl::tensor& offset_y, const tl::tensor& n_ctx, int BLOCK_M2, int BLOCK_N2,
                      const tl::tensor& start_m, const tl::tensor& start_n, const tl::tensor& num_steps, bool MASK) {
  using tl::_;
  using tl::newaxis;
  auto offs_m = start_m + tl::arange(0, BLOCK_M2);
  auto curr_n = start_n;
  tl::for_range(0, num_steps, [&](tl::tensor) {
    auto cols = curr_n + tl::arange(0, BLOCK_N2);  // the block's keys
    auto k = desc_k.load({offset_y + curr_n, 0});
    auto v = desc_v.load({offset_y + curr_n, 0});
    auto qk = tl::dot(q, tl::trans(k));
    auto p = tl::exp2(qk - m);
    auto keep = cols(newaxis, _) < n_ctx;  // (keys past N)
    if (MASK) keep = keep & (offs_m(_, newaxis) >= cols(newaxis, _));
    p = tl::where(keep, p, 0.0f);
    auto dp = tl::dot(d_o, tl::trans(v));
    auto ds = tl::cast<T>(p * (dp - Di(_, newaxis)));
    dq = tl::dot(ds, k, dq);
    curr_n = curr_n + BLOCK_N2;
  });
}

template <class T>
auto make_attn_bwd_desc(const char* name) {
  return tile::kernel(name, [](tl::ptr<T> Q, tl::ptr<T> K, tl::ptr<T> V, tl::f32 sm_scale, tl::ptr<T> DO,
                               tl::ptr<T> DQ, tl::ptr<T> DK, tl::ptr<T> DV, tl::ptr<float> M, tl::ptr<float> D, tl::i32 Z,
                               tl::i32 H, tl::i32 N_CTX, tl::constexpr_<"BLOCK_M1"> BLOCK_M1,
                               tl::constexpr_<"BLOCK_N1"> BLOCK_N1, tl::constexpr_<"BLOCK_M2"> BLOCK_M2,
                               tl::constexpr_<"BLOCK_N2"> BLOCK_N2, tl::constexpr_<"BLK_SLICE_FACTOR"> BLK_SLICE_FACTOR,
                               tl::constexpr_<"HEAD_DIM"> HEAD_DIM, tl::constexpr_<"CAUSAL", bool> CAUSAL) {
    using tl::_;
    using tl::newaxis;
    const float LN2 = 0.6931471824645996f;
    auto bhid = tl::program_id(2);
    auto pid = tl::program_id(0);
    auto y_dim = Z * H * N_CTX;
    auto desc_q = tl::make_tensor_descriptor(Q, {y_dim, HEAD_DIM}, {HEAD_DIM, 1}, {BLOCK_M1, HEAD_DIM});
    auto desc_do = tl::make_tensor_descriptor(DO, {y_dim, HEAD_DIM}, {HEAD_DIM, 1}, {BLOCK_M1, HEAD_DIM});
    auto desc_k = tl::make_tensor_descriptor(K, {y_dim, HEAD_DIM}, {HEAD_DIM, 1}, {BLOCK_N2, HEAD_DIM});
    auto desc_v = tl::make_tensor_descriptor(V, {y_dim, HEAD_DIM}, {HEAD_DIM, 1}, {BLOCK_N2, HEAD_DIM});
    // the causal diagonal's slices: blocks of BLOCK / BLK_SLICE_FACTOR rows
    const int MASK_BLOCK_M1 = BLOCK_M1 / BLK_SLICE_FACTOR, MASK_BLOCK_N2 = BLOCK_N2 / BLK_SLICE_FACTOR;
    auto desc_q_mask = tl::make_tensor_descriptor(Q, {y_dim, HEAD_DIM}, {HEAD_DIM, 1}, {MASK_BLOCK_M1, HEAD_DIM});
    auto desc_do_mask = tl::make_tensor_descriptor(DO, {y_dim, HEAD_DIM}, {HEAD_DIM, 1}, {MASK_BLOCK_M1, HEAD_DIM});
    auto desc_k_mask = tl::make_tensor_descriptor(K, {y_dim, HEAD_DIM}, {HEAD_DIM, 1}, {MASK_BLOCK_N2, HEAD_DIM});
    auto desc_v_mask = tl::make_tensor_descriptor(V, {y_dim, HEAD_DIM}, {HEAD_DIM, 1}, {MASK_BLOCK_N2, HEAD_DIM});
    auto offset_y = bhid * N_CTX;  // (this head's first row)
    auto adj = offset_y * HEAD_DIM;
    Q += adj;
    K += adj;
    V += adj;
    DO += adj;
    DQ += adj;
    DK += adj;
    DV += adj;
    M += offset_y;
    D += offset_y;
    auto offs_k = tl::arange(0, HEAD_DIM);

    // dK and dV of the key block pid
    auto start_n = pid * BLOCK_N1;
    auto offs_n = start_n + tl::arange(0, BLOCK_N1);
    auto n_ok = offs_n(_, newaxis) < N_CTX;
    auto dv = tl::zeros<float>({BLOCK_N1, HEAD_DIM});
    auto dk = tl::zeros<float>({BLOCK_N1, HEAD_DIM});
    auto k = tl::load(K + offs_n(_, newaxis) * HEAD_DIM + offs_k(newaxis, _), n_ok, 0.0f);
    auto v = tl::load(V + offs_n(_, newaxis) * HEAD_DIM + offs_k(newaxis, _), n_ok, 0.0f);
    tl::tensor start_m = start_n;
    if (CAUSAL) {
      const int steps = BLOCK_N1 / MASK_BLOCK_M1;
      attn_bwd_dkdv_desc<T>(dk, dv, desc_q_mask, k, v, desc_do_mask, M, D, offset_y, N_CTX, MASK_BLOCK_M1, BLOCK_N1, start_n,
                            start_m, tl::full<int>({}, steps), true);
      start_m = start_m + steps * MASK_BLOCK_M1;
    } else {
      start_m = tl::full<int>({}, 0);
    }
    auto num_steps = tl::cdiv(tl::maximum(N_CTX - start_m, 0), BLOCK_M1);
    attn_bwd_dkdv_desc<T>(dk, dv, desc_q, k, v, desc_do, M, D, offset_y, N_CTX, BLOCK_M1, BLOCK_N1, start_n, start_m,
                          num_steps, false);
    tl::store(DV + offs_n(_, newaxis) * HEAD_DIM + offs_k(newaxis, _), tl::cast<T>(dv), n_ok);
    dk = dk * sm_scale;
    tl::store(DK + offs_n(_, newaxis) * HEAD_DIM + offs_k(newaxis, _), tl::cast<T>(dk), n_ok);

    // dQ of the query block pid
    auto start_m2 = pid * BLOCK_M2;
    auto offs_m = start_m2 + tl::arange(0, BLOCK_M2);
    auto m_ok = offs_m(_, newaxis) < N_CTX;
    auto q = tl::load(Q + offs_m(_, newaxis) * HEAD_DIM + offs_k(newaxis, _), m_ok, 0.0f);
    auto dq = tl::zeros<float>({BLOCK_M2, HEAD_DIM});
    auto d_o = tl::load(DO + offs_m(_, newaxis) * HEAD_DIM + offs_k(newaxis, _), m_ok, 0.0f);
    auto m = tl::load(M + offs_m, offs_m < N_CTX, tl::inf<float>())(_, newaxis);
    auto Di = tl::load(D + offs_m, offs_m < N_CTX, 0.0f);
    if (CAUSAL) {
      const int steps = BLOCK_M2 / MASK_BLOCK_N2;
      attn_bwd_dq_desc<T>(dq, q, desc_k_mask, desc_v_mask, d_o, m, Di, offset_y, N_CTX, BLOCK_M2, MASK_BLOCK_N2, start_m2,
                          start_m2, tl::full<int>({}, steps), true);
      attn_bwd_dq_desc<T>(dq, q, desc_k, desc_v, d_o, m, Di, offset_y, N_CTX, BLOCK_M2, BLOCK_N2, start_m2,
                          tl::full<int>({}, 0), start_m2 / BLOCK_N2, false);
    } else {
      attn_bwd_dq_desc<T>(dq, q, desc_k, desc_v, d_o, m, Di, offset_y, N_CTX, BLOCK_M2, BLOCK_N2, start_m2,
                          tl::full<int>({}, 0), tl::cdiv(N_CTX, BLOCK_N2), false);
    }
    dq = dq * LN2;
    tl::store(DQ + offs_m(_, newaxis) * HEAD_DIM + offs_k(newaxis, _), tl::cast<T>(dq), m_ok);
  });
}
