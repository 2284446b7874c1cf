"""Triton's and PyTorch's references for fused attention forward (samples/08_fused_attention.cpp
--bench): B = 4, H = 32, f16, N = 1024 ... 16384, D = 64 and 128, causal and not. Triton: a
forward kernel in the style of Triton's tutorial 06 (one program a block of BLOCK_M queries, the
online softmax in base 2 over key blocks of BLOCK_N, the causal form in two stages: the blocks
left of the diagonal, then the diagonal block masked), the best of the same BLOCK_M / BLOCK_N /
num_warps configurations the C++ side tries (num_stages 3); PyTorch: scaled_dot_product_attention
with the flash and the cuDNN backends. TFLOP/s = 4*B*H*N*N*D / time, halved for causal. Writes
triton-attention.csv."""
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


CONFIGS = [(128, 64, 8), (128, 128, 8), (64, 64, 4), (128, 32, 8)]  # BLOCK_M, BLOCK_N, num_warps


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
    rows, cols = [], {"triton": [], "sdpa flash": [], "sdpa cudnn": []}
    for D in (64, 128):
        for causal in (False, True):
            for N in (1024, 2048, 4096, 8192, 16384):
                q, k, v = (torch.randn(Z, H, N, D, device="cuda", dtype=torch.float16) for _ in range(3))
                o = torch.empty_like(q)
                m = torch.empty(Z, H, N, device="cuda", dtype=torch.float32)
                flops = 4.0 * Z * H * N * N * D * (0.5 if causal else 1.0)
                scale = D ** -0.5
                ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
                best, chosen = 0.0, None
                for bm, bn, w in CONFIGS:
                    def run():
                        return attn_fwd[(triton.cdiv(N, bm), Z * H)](q, k, v, scale, m, o, q.stride(0), q.stride(1), q.stride(2),
                                                              H, N, HEAD_DIM=D, BLOCK_M=bm, BLOCK_N=bn,
                                                              STAGE=3 if causal else 1, num_warps=w, num_stages=3)
                    try:
                        ck = run()
                    except Exception as e:  # (a config that does not fit the shared memory)
                        print(f"  D={D} causal={causal} N={N} config {bm},{bn},{w}: {type(e).__name__}")
                        continue
                    err = (o - ref).abs().max().item()
                    if err > 1e-2:
                        sys.exit(f"triton attention D={D} causal={causal} N={N}: max error {err:.3g}")
                    t = flops / (_common.median_ms(run) * 1e-3) / 1e12
                    if t > best:
                        best, chosen = t, f"{bm}/{bn}/{w}, {ck.n_regs} registers, {ck.n_spills} spills"
                cols["triton"].append(best)
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
                print(f"  D={D:3d} causal={int(causal)} N={N:5d}: triton {best:6.1f} ({chosen}), "
                      f"sdpa flash {cols['sdpa flash'][-1]:6.1f}, sdpa cudnn {cols['sdpa cudnn'][-1]:6.1f} TFLOP/s")
    _common.report("triton-attention", "case", list(range(len(rows))), cols, [("triton", "sdpa cudnn")], out_dir)
    for i, r in enumerate(rows):
        print(f"  case {i}: {r}")
    print("B = 4, H = 32, f16; TFLOP/s = 4*B*H*N*N*D / median time (halved for causal)")


main()
