"""Triton's and PyTorch's references for fused attention forward (samples/08_fused_attention.cpp
--bench): B = 4, H = 32, f16, N = 1024 ... 16384, D = 64 and 128, causal and not. Triton: a
forward kernel in the style of Triton's tutorial 06 (one program a block of BLOCK_M queries, the
online softmax in base 2 over key blocks of BLOCK_N, the causal form in two stages: the blocks
left of the diagonal, then the diagonal block masked), the best of the same BLOCK_M / BLOCK_N /
num_warps configurations the C++ side tries (num_stages 3); PyTorch: scaled_dot_product_attention
with the flash and the cuDNN backends. TFLOP/s = 4*B*H*N*N*D / time, halved for causal. Writes
triton-attention.csv. Also holds tutorial 06's backward kernels (_attn_bwd_preprocess, _attn_bwd
with _attn_bwd_dkdv and _attn_bwd_dq, in its configuration BWD_CONFIG), which _export_kernels.py
compiles with attn_fwd for bench/gpu_attention.cpp to time in its own process."""
import sys

sys.dont_write_bytecode = True
import _common  # noqa: E402

torch, triton, out_dir = _common.setup("triton/attention.py")
import triton.language as tl


@triton.jit
def _fwd_stage(acc, l_i, m_i, q, k_base, v_base, stride_n, start_m, qk_scale, offs_m, offs_n, offs_d, N_CTX,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr):
    if STAGE == 1:
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
    else:
        lo, hi = 0, N_CTX
    for start_n in range(lo, hi, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(k_base + offs_d[:, None] + cols[None, :] * stride_n)
        qk = tl.dot(q, k)
        if STAGE == 2:
            keep = offs_m[:, None] >= cols[None, :]
            qk = qk * qk_scale + tl.where(keep, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(v_base + cols[:, None] * stride_n + offs_d[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def attn_fwd(Q, K, V, sm_scale, M, Out, stride_z, stride_h, stride_n, H, N_CTX, HEAD_DIM: tl.constexpr,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    base = (off_hz // H) * stride_z + (off_hz % H) * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    q = tl.load(Q + base + offs_m[:, None] * stride_n + offs_d[None, :])
    if STAGE & 1:
        acc, l_i, m_i = _fwd_stage(acc, l_i, m_i, q, K + base, V + base, stride_n, start_m, qk_scale, offs_m, offs_n,
                                   offs_d, N_CTX, BLOCK_M, BLOCK_N, 4 - STAGE)
    if STAGE & 2:
        acc, l_i, m_i = _fwd_stage(acc, l_i, m_i, q, K + base, V + base, stride_n, start_m, qk_scale, offs_m, offs_n,
                                   offs_d, N_CTX, BLOCK_M, BLOCK_N, 2)
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(M + off_hz * N_CTX + offs_m, m_i)
    tl.store(Out + base + offs_m[:, None] * stride_n + offs_d[None, :], acc.to(tl.float16))


@triton.jit
def _fwd_stage_desc(acc, l_i, m_i, q, desc_k, desc_v, offset_y, start_m, qk_scale, offs_m, offs_n, N_CTX,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr):
    if STAGE == 1:
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
        lo = tl.multiple_of(lo, BLOCK_M)
    else:
        lo, hi = 0, N_CTX
    offsetk_y = offset_y + lo
    for start_n in tl.range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        k = desc_k.load([offsetk_y, 0]).T
        qk = tl.dot(q, k)
        if STAGE == 2:
            mask = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = qk * qk_scale + tl.where(mask, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_ij = tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = desc_v.load([offsetk_y, 0])
        p = p.to(tl.float16)
        acc = tl.dot(p, v, acc)
        l_i = l_i * alpha + l_ij
        m_i = m_ij
        offsetk_y += BLOCK_N
    return acc, l_i, m_i


@triton.jit
def attn_fwd_desc(sm_scale, M, Z, H, desc_q, desc_k, desc_v, desc_o, N_CTX, HEAD_DIM: tl.constexpr,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr):
    """Triton 3.6's tutorial 06 forward as it runs on Hopper: Q, K, V, O through host tensor descriptors over
    [Z * H * N_CTX, HEAD_DIM] (the TMA), N_CTX a multiple of the blocks."""
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    offset_y = off_z * (N_CTX * H) + off_h * N_CTX
    qo_offset_y = offset_y + start_m * BLOCK_M
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    q = desc_q.load([qo_offset_y, 0])
    if STAGE & 1:
        acc, l_i, m_i = _fwd_stage_desc(acc, l_i, m_i, q, desc_k, desc_v, offset_y, start_m, qk_scale, offs_m, offs_n,
                                        N_CTX, BLOCK_M, BLOCK_N, 4 - STAGE)
    if STAGE & 2:
        acc, l_i, m_i = _fwd_stage_desc(acc, l_i, m_i, q, desc_k, desc_v, offset_y, start_m, qk_scale, offs_m, offs_n,
                                        N_CTX, BLOCK_M, BLOCK_N, 2)
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(M + off_hz * N_CTX + offs_m, m_i)
    desc_o.store([qo_offset_y, 0], acc.to(tl.float16))


@triton.jit
def _attn_bwd_preprocess(O, DO, Delta, N_CTX, BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr):
    """Delta = rowsum(O * dO) of BLOCK_M rows (O, dO contiguous [Z, H, N_CTX, HEAD_DIM])."""
    off_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    off_hz = tl.program_id(1)
    off_n = tl.arange(0, HEAD_DIM)
    at = off_hz * HEAD_DIM * N_CTX + off_m[:, None] * HEAD_DIM + off_n[None, :]
    o = tl.load(O + at)
    do = tl.load(DO + at).to(tl.float32)
    tl.store(Delta + off_hz * N_CTX + off_m, tl.sum(o * do, axis=1))


@triton.jit
def _attn_bwd_dkdv(dk, dv, Q, k, v, DO, M, D, stride_tok, start_n, start_m, num_steps, BLOCK_M1: tl.constexpr,
                   BLOCK_N1: tl.constexpr, HEAD_DIM: tl.constexpr, MASK: tl.constexpr):
    """The key block at start_n against num_steps query blocks of BLOCK_M1 from start_m: P^T = 2^(K Q^T - M),
    dV += P^T dO, dS^T = P^T (V dO^T - Delta), dK += dS^T Q; MASK keeps the queries at or after each key."""
    offs_m = start_m + tl.arange(0, BLOCK_M1)
    offs_n = start_n + tl.arange(0, BLOCK_N1)
    offs_k = tl.arange(0, HEAD_DIM)
    qT_ptrs = Q + offs_m[None, :] * stride_tok + offs_k[:, None]
    do_ptrs = DO + offs_m[:, None] * stride_tok + offs_k[None, :]
    tl.static_assert(BLOCK_N1 % BLOCK_M1 == 0)
    for blk_idx in range(num_steps):
        qT = tl.load(qT_ptrs)
        rows = start_m + blk_idx * BLOCK_M1 + tl.arange(0, BLOCK_M1)
        m = tl.load(M + rows)
        qkT = tl.dot(k, qT)
        pT = tl.math.exp2(qkT - m[None, :])
        if MASK:
            pT = tl.where(rows[None, :] >= offs_n[:, None], pT, 0.0)
        do = tl.load(do_ptrs)
        dv += tl.dot(pT.to(tl.float16), do)
        Di = tl.load(D + rows)
        dpT = tl.dot(v, tl.trans(do)).to(tl.float32)
        dsT = (pT * (dpT - Di[None, :])).to(tl.float16)
        dk += tl.dot(dsT, tl.trans(qT))
        qT_ptrs += BLOCK_M1 * stride_tok
        do_ptrs += BLOCK_M1 * stride_tok
    return dk, dv


@triton.jit
def _attn_bwd_dq(dq, q, K, V, do, m, D, stride_tok, start_m, start_n, num_steps, BLOCK_M2: tl.constexpr,
                 BLOCK_N2: tl.constexpr, HEAD_DIM: tl.constexpr, MASK: tl.constexpr):
    """The query block at start_m against num_steps key blocks of BLOCK_N2 from start_n: P = 2^(Q K^T - M),
    dS = P (dO V^T - Delta), dQ += dS K; MASK keeps the keys at or before each query."""
    offs_m = start_m + tl.arange(0, BLOCK_M2)
    offs_n = start_n + tl.arange(0, BLOCK_N2)
    offs_k = tl.arange(0, HEAD_DIM)
    kT_ptrs = K + offs_n[None, :] * stride_tok + offs_k[:, None]
    vT_ptrs = V + offs_n[None, :] * stride_tok + offs_k[:, None]
    Di = tl.load(D + offs_m)
    tl.static_assert(BLOCK_M2 % BLOCK_N2 == 0)
    for blk_idx in range(num_steps):
        kT = tl.load(kT_ptrs)
        vT = tl.load(vT_ptrs)
        qk = tl.dot(q, kT)
        p = tl.math.exp2(qk - m)
        if MASK:
            cols = start_n + blk_idx * BLOCK_N2 + tl.arange(0, BLOCK_N2)
            p = tl.where(offs_m[:, None] >= cols[None, :], p, 0.0)
        dp = tl.dot(do, vT).to(tl.float32)
        ds = (p * (dp - Di[:, None])).to(tl.float16)
        dq += tl.dot(ds, tl.trans(kT))
        kT_ptrs += BLOCK_N2 * stride_tok
        vT_ptrs += BLOCK_N2 * stride_tok
    return dq


@triton.jit
def _attn_bwd(Q, K, V, sm_scale, DO, DQ, DK, DV, M, D, stride_z, stride_h, stride_tok, H, N_CTX,
              BLOCK_M1: tl.constexpr, BLOCK_N1: tl.constexpr, BLOCK_M2: tl.constexpr, BLOCK_N2: tl.constexpr,
              BLK_SLICE_FACTOR: tl.constexpr, HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr):
    """Tutorial 06's backward: program pid computes dK, dV of key block pid (BLOCK_N1 keys) and dQ of query
    block pid (BLOCK_M2 queries). K arrives scaled by sm_scale / ln 2 and M is the forward's log-sum-exp in
    base 2, so the scores are in base 2; Q, K, V, dO, dQ, dK, dV contiguous [Z, H, N_CTX, HEAD_DIM], M and D
    (Delta) [Z, H, N_CTX]. The causal form walks the diagonal block in slices of BLOCK / BLK_SLICE_FACTOR
    with the mask, then the rest without it. Grid: (N_CTX // BLOCK_N1, 1, Z * H)."""
    LN2: tl.constexpr = 0.6931471824645996
    MASK_BLOCK_M1: tl.constexpr = BLOCK_M1 // BLK_SLICE_FACTOR
    MASK_BLOCK_N2: tl.constexpr = BLOCK_N2 // BLK_SLICE_FACTOR
    bhid = tl.program_id(2)
    off_chz = (bhid * N_CTX).to(tl.int64)
    adj = (stride_h * (bhid % H) + stride_z * (bhid // H)).to(tl.int64)
    pid = tl.program_id(0)
    Q += adj
    K += adj
    V += adj
    DO += adj
    DQ += adj
    DK += adj
    DV += adj
    M += off_chz
    D += off_chz
    offs_k = tl.arange(0, HEAD_DIM)

    # dK and dV of key block pid
    start_n = pid * BLOCK_N1
    offs_n = start_n + tl.arange(0, BLOCK_N1)
    dv = tl.zeros([BLOCK_N1, HEAD_DIM], dtype=tl.float32)
    dk = tl.zeros([BLOCK_N1, HEAD_DIM], dtype=tl.float32)
    k = tl.load(K + offs_n[:, None] * stride_tok + offs_k[None, :])
    v = tl.load(V + offs_n[:, None] * stride_tok + offs_k[None, :])
    start_m = 0
    if CAUSAL:
        start_m = start_n
        num_steps = BLOCK_N1 // MASK_BLOCK_M1
        dk, dv = _attn_bwd_dkdv(dk, dv, Q, k, v, DO, M, D, stride_tok, start_n, start_m, num_steps, MASK_BLOCK_M1,
                                BLOCK_N1, HEAD_DIM, MASK=True)
        start_m += num_steps * MASK_BLOCK_M1
    num_steps = (N_CTX - start_m) // BLOCK_M1
    dk, dv = _attn_bwd_dkdv(dk, dv, Q, k, v, DO, M, D, stride_tok, start_n, start_m, num_steps, BLOCK_M1, BLOCK_N1,
                            HEAD_DIM, MASK=False)
    tl.store(DV + offs_n[:, None] * stride_tok + offs_k[None, :], dv.to(tl.float16))
    dk *= sm_scale
    tl.store(DK + offs_n[:, None] * stride_tok + offs_k[None, :], dk.to(tl.float16))

    # dQ of query block pid
    start_m = pid * BLOCK_M2
    offs_m = start_m + tl.arange(0, BLOCK_M2)
    q = tl.load(Q + offs_m[:, None] * stride_tok + offs_k[None, :])
    do = tl.load(DO + offs_m[:, None] * stride_tok + offs_k[None, :])
    dq = tl.zeros([BLOCK_M2, HEAD_DIM], dtype=tl.float32)
    m = tl.load(M + offs_m)[:, None]
    if CAUSAL:
        end_n = start_m + BLOCK_M2
        num_steps = BLOCK_M2 // MASK_BLOCK_N2
        dq = _attn_bwd_dq(dq, q, K, V, do, m, D, stride_tok, start_m, end_n - num_steps * MASK_BLOCK_N2, num_steps,
                          BLOCK_M2, MASK_BLOCK_N2, HEAD_DIM, MASK=True)
        end_n -= num_steps * MASK_BLOCK_N2
        num_steps = end_n // BLOCK_N2
        dq = _attn_bwd_dq(dq, q, K, V, do, m, D, stride_tok, start_m, end_n - num_steps * BLOCK_N2, num_steps,
                          BLOCK_M2, BLOCK_N2, HEAD_DIM, MASK=False)
    else:
        dq = _attn_bwd_dq(dq, q, K, V, do, m, D, stride_tok, start_m, 0, N_CTX // BLOCK_N2, BLOCK_M2, BLOCK_N2,
                          HEAD_DIM, MASK=False)
    dq *= LN2
    tl.store(DQ + offs_m[:, None] * stride_tok + offs_k[None, :], dq.to(tl.float16))


CONFIGS = [(128, 64, 8), (128, 128, 8), (64, 64, 4), (128, 32, 8)]  # BLOCK_M, BLOCK_N, num_warps
# The tutorial's backward: BLOCK_M1, BLOCK_N1, BLOCK_M2, BLOCK_N2, BLK_SLICE_FACTOR, num_warps, num_stages, and
# the preprocess's BLOCK_M
BWD_CONFIG = (32, 128, 128, 32, 2, 4, 5)
BWD_PRE_BLOCK = 128


def main():
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.functional as F
    Z, H = 4, 32
    # --one D N causal BLOCK_M BLOCK_N num_warps: that point and configuration alone (for a profiler)
    one = [int(a) for a in sys.argv[sys.argv.index("--one") + 1:][:6]] if "--one" in sys.argv else None
    if one:
        D, N, causal, bm, bn, w = one
        q, k, v = (torch.randn(Z, H, N, D, device="cuda", dtype=torch.float16) for _ in range(3))
        o, m = torch.empty_like(q), torch.empty(Z, H, N, device="cuda", dtype=torch.float32)
        run = lambda: attn_fwd[(triton.cdiv(N, bm), Z * H)](q, k, v, D ** -0.5, m, o, q.stride(0), q.stride(1),  # noqa: E731
                                                            q.stride(2), H, N, HEAD_DIM=D, BLOCK_M=bm, BLOCK_N=bn,
                                                            STAGE=3 if causal else 1, num_warps=w, num_stages=3)
        ck = run()
        ms = _common.median_ms(run)
        print(f"one: D={D} N={N} causal={causal} {bm}/{bn}/{w}: {4.0 * Z * H * N * N * D * (0.5 if causal else 1.0) / (ms * 1e-3) / 1e12:.1f} "
              f"TFLOP/s, {ck.n_regs} registers, {ck.n_spills} spills")
        return
    # --n N1,N2,...: those sequence lengths only
    ns = [int(x) for x in sys.argv[sys.argv.index("--n") + 1].split(",")] if "--n" in sys.argv else [1024, 2048, 4096, 8192, 16384]
    rows, cols = [], {"triton": [], "triton tma": [], "sdpa flash": [], "sdpa cudnn": []}
    from triton.tools.tensor_descriptor import TensorDescriptor
    for D in (64, 128):
        for causal in (False, True):
            for N in ns:
                q, k, v = (torch.randn(Z, H, N, D, device="cuda", dtype=torch.float16) for _ in range(3))
                o = torch.empty_like(q)
                m = torch.empty(Z, H, N, device="cuda", dtype=torch.float32)
                flops = 4.0 * Z * H * N * N * D * (0.5 if causal else 1.0)
                scale = D ** -0.5
                ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
                y = Z * H * N

                def launcher(form, bm, bn, w):  # one launch of a form's kernel in a configuration
                    grid = (triton.cdiv(N, bm), Z * H)
                    meta = dict(HEAD_DIM=D, BLOCK_M=bm, BLOCK_N=bn, STAGE=3 if causal else 1, num_warps=w, num_stages=3)
                    if form == "triton":
                        return lambda: attn_fwd[grid](q, k, v, scale, m, o, q.stride(0), q.stride(1), q.stride(2), H, N, **meta)
                    # the tensor-descriptor form (Triton 3.6's tutorial on Hopper)
                    descs = [TensorDescriptor(t.view(y, D), shape=[y, D], strides=[D, 1], block_shape=[blk, D])
                             for t, blk in ((q, bm), (k, bn), (v, bn), (o, bm))]
                    return lambda: attn_fwd_desc[grid](scale, m, Z, H, *descs, N, **meta)

                chosen = {}
                for form in ("triton", "triton tma"):
                    best, chosen[form] = 0.0, None
                    for bm, bn, w in CONFIGS:
                        run = launcher(form, bm, bn, w)
                        try:
                            o.zero_()
                            ck = run()
                        except Exception as e:  # (a config that does not fit the shared memory)
                            print(f"  D={D} causal={causal} N={N} {form} config {bm},{bn},{w}: {type(e).__name__}")
                            continue
                        err = (o - ref).abs().max().item()
                        if err > 1e-2:
                            sys.exit(f"{form} attention D={D} causal={causal} N={N}: max error {err:.3g}")
                        t = flops / (_common.median_ms(run) * 1e-3) / 1e12
                        if t > best:
                            best, chosen[form] = t, f"{bm}/{bn}/{w}, {ck.n_regs} registers, {ck.n_spills} spills"
                    cols[form].append(best)
                for name, backend in (("sdpa flash", SDPBackend.FLASH_ATTENTION), ("sdpa cudnn", SDPBackend.CUDNN_ATTENTION)):
                    try:
                        with sdpa_kernel(backend):
                            fn = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)  # noqa: E731
                            fn()
                            cols[name].append(flops / (_common.median_ms(fn) * 1e-3) / 1e12)
                    except Exception as e:
                        print(f"  {name} D={D} causal={causal} N={N}: {type(e).__name__}: {e}")
                        cols[name].append(float("nan"))
                rows.append(f"D={D} {'causal' if causal else 'full'} N={N}")
                print(f"  D={D:3d} causal={int(causal)} N={N:5d}: triton {cols['triton'][-1]:6.1f} ({chosen['triton']}), "
                      f"triton tma {cols['triton tma'][-1]:6.1f} ({chosen['triton tma']}), "
                      f"sdpa flash {cols['sdpa flash'][-1]:6.1f}, sdpa cudnn {cols['sdpa cudnn'][-1]:6.1f} TFLOP/s")
    _common.report("triton-attention", "case", list(range(len(rows))), cols, [("triton", "sdpa cudnn")], out_dir)
    for i, r in enumerate(rows):
        print(f"  case {i}: {r}")
    print("B = 4, H = 32, f16; TFLOP/s = 4*B*H*N*N*D / median time (halved for causal)")


main()
