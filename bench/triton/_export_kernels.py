"""Exports Triton's compiled kernels for the C++ benches to time in their own process (run-all runs
it before the benchmarks; the leading _ keeps it out of the list of reference scripts):
    python3 bench/triton/_export_kernels.py DIR
For each shape bench/gpu_softmax.cpp and bench/gpu_layer_norm.cpp time, compiles the kernel of
softmax.py / layer_norm.py with the tutorials' BLOCK and num_warps (the very kernels those scripts
time), runs it once against torch, and writes DIR/NAME.cubin, DIR/NAME.ptx and DIR/NAME.meta, NAME being
softmax-N or layer_norm-N; the same kernels at other num_warps for the benches' tuned columns
(softmax-N-wW, W = 2, 4, 8, 16; layer_norm-N-wW, W = 1, 2, 4, 8) and layer norm with the row in
registers (layer_norm_row-N, layer_norm.py's layer_norm_fwd_row); and for bench/gpu_matmul.cpp the matmul tutorial's kernel (_matmul.py) in
its large-shape config, as matmul-f16, matmul-bf16 and matmul-f16-leaky_relu; for bench/gpu_attention.cpp
attention.py's forward (attn_fwd-D<D>-causal<c>-<BLOCK_M>-<BLOCK_N>-<num_warps>) and tutorial 06's backward
(attn_bwd_preprocess-D<D>-<BLOCK_M>, attn_bwd-D<D>-causal<c>-<M1>-<N1>-<M2>-<N2>-<num_warps>), f16, D = 64
and 128, causal and not. The .meta is `key value` lines: entry (the cubin's function), num_warps,
shared (dynamic shared memory bytes), params (the function's parameter count: the user's
arguments, then Triton's hidden scratch pointers, which these kernels do not use and get null),
and for the matmul and attention args (the names of the user's arguments the compiled function kept).
bench/triton_kernels.hpp loads them (TILE_TRITON_KERNELS=DIR): tile's kernel and Triton's then run
on one stream, timed by one timer with one L2 flush, in alternating rounds, so neither process
start, clocks nor the timing code differ between the two columns.
Exits 0 printing why when there is no Triton, PyTorch or GPU (writes nothing then)."""
import math
import os
import re
import sys

sys.dont_write_bytecode = True
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
out = sys.argv[1] if len(sys.argv) > 1 else "triton-kernels"
sys.argv = sys.argv[:1]
import _common  # noqa: E402

torch, triton, _ = _common.setup("triton/_export_kernels.py")


def export(name, compiled, warps, args=None):
    """args: the kernel's parameter names, for a kernel whose launch the C++ side builds by name (the
    matmul): those that stay in the compiled function, in order, written to the .meta."""
    meta = compiled.metadata
    for scratch in ("global_scratch_size", "profile_scratch_size"):
        if getattr(meta, scratch, 0):
            sys.exit(f"_export_kernels: {name} needs {scratch} = {getattr(meta, scratch)}; the C++ side passes null")
    ptx = compiled.asm["ptx"]
    entry = re.search(r"\.entry\s+(\w+)\s*\((.*?)\)", ptx, re.S)
    if not entry or entry.group(1) != meta.name:
        sys.exit(f"_export_kernels: {name}: no .entry {meta.name} in its PTX")
    params = len(re.findall(r"\.param\s", entry.group(2)))
    if args is not None and len(args) + 2 != params:  # the user's arguments, then 2 scratch pointers
        raise RuntimeError(f"{name}: {params} parameters, not {len(args)} arguments + 2 scratch pointers")
    with open(os.path.join(out, name + ".cubin"), "wb") as f:
        f.write(compiled.asm["cubin"])
    with open(os.path.join(out, name + ".ptx"), "w") as f:  # for reading beside tile's (TILE_DUMP_DIR)
        f.write(ptx)
    with open(os.path.join(out, name + ".meta"), "w") as f:
        f.write(f"entry {meta.name}\nnum_warps {warps}\nshared {meta.shared}\nparams {params}\n")
        if args is not None:
            f.write("args " + " ".join(args) + "\n")
    print(f"  {name}: {meta.name}, {warps} warps, {meta.shared} B shared, {params} params, "
          f"{compiled.n_regs} registers, {compiled.n_spills} spills")


os.makedirs(out, exist_ok=True)
sm, ln = _common.load_script("softmax"), _common.load_script("layer_norm")
M = 4096
for n in [256 << i for i in range(7)]:
    x = torch.randn(M, n, device="cuda") * 2
    y = torch.empty_like(x)
    block = triton.next_power_of_2(n)
    for name, warps in [(f"softmax-{n}", sm.warps_for(block))] + [(f"softmax-{n}-w{w}", w) for w in (2, 4, 8, 16)]:
        y.zero_()
        k = sm.softmax_kernel[(M,)](y, x, x.stride(0), y.stride(0), n, BLOCK=block, num_warps=warps)
        if (y - torch.softmax(x, dim=1)).abs().max().item() > 1e-5:
            sys.exit(f"_export_kernels: Triton's {name} is wrong")
        export(name, k, warps)
for n in (1024, 2048, 4096, 8192):
    x = (torch.rand(M, n, device="cuda") * 4 - 2).half()
    w, b = torch.rand(n, device="cuda").half(), torch.rand(n, device="cuda").half()
    y = torch.empty_like(x)
    mean, rstd = torch.empty(M, device="cuda"), torch.empty(M, device="cuda")
    block = min(65536 // x.element_size(), triton.next_power_of_2(n))
    warps = min(max(block // 256, 1), 8)
    want = torch.nn.functional.layer_norm(x.float(), (n,), w.float(), b.float(), 1e-5)
    for name, fn, nw in [(f"layer_norm-{n}", ln.layer_norm_fwd, warps), (f"layer_norm_row-{n}", ln.layer_norm_fwd_row, warps)] + \
            [(f"layer_norm-{n}-w{v}", ln.layer_norm_fwd, v) for v in (1, 2, 4, 8)]:
        y.zero_()
        k = fn[(M,)](x, y, w, b, mean, rstd, x.stride(0), n, 1e-5, BLOCK=block, num_warps=nw)
        if (y.float() - want).abs().max().item() > 1 / 64:
            sys.exit(f"_export_kernels: Triton's {name} is wrong")
        export(name, k, nw)
# The matmul tutorial's kernel (bench/triton/_matmul.py) in the config Triton's autotuner picks for
# the large shapes (128 x 256 x 64, 8 warps, 3 stages): f16, bf16, and f16 with leaky ReLU fused.
# Integer arguments equal to 1 (the unit strides) may be specialized away: the parameter count of
# the PTX says which of the two signatures it is, and the .meta lists the arguments that remain.
try:
    import _matmul

    names = ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm",
             "stride_cn"]
    ones = {"stride_ak", "stride_bn", "stride_cn"}
    n = 1024
    for dt, act in (("f16", ""), ("bf16", ""), ("f16", "leaky_relu")):
        dtype = torch.float16 if dt == "f16" else torch.bfloat16
        a = (torch.rand(n, n, device="cuda") * 2 - 1).to(dtype)
        b = (torch.rand(n, n, device="cuda") * 2 - 1).to(dtype)
        c = torch.full((n, n), float("nan"), device="cuda", dtype=dtype)
        grid = (triton.cdiv(n, 128) * triton.cdiv(n, 256),)
        k = _matmul.matmul_kernel[grid](a, b, c, n, n, n, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                                        c.stride(1), BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, ACTIVATION=act,
                                        num_warps=8, num_stages=3)
        want = a.float() @ b.float()
        if act:
            want = torch.where(want >= 0, want, 0.01 * want)
        if not ((c.float() - want).abs() <= 2e-2 * want.abs() + 1e-3 * want.abs().max()).all().item():
            raise RuntimeError(f"Triton's matmul {dt} {act} is wrong")
        params = len(re.findall(r"\.param\s", re.search(r"\.entry\s+\w+\s*\((.*?)\)", k.asm["ptx"], re.S).group(1)))
        args = names if params == len(names) + 2 else [x for x in names if x not in ones]
        export(f"matmul-{dt}" + (f"-{act}" if act else ""), k, 8, args)
except Exception as e:  # noqa: BLE001 — the softmax and layer-norm kernels stay usable
    print(f"  matmul kernels not exported: {type(e).__name__}: {e}")
# Fused attention (bench/triton/attention.py), f16: the forward at one config per head dimension, Triton's
# best known (BLOCK_M 128, BLOCK_N 64; 8 warps at D = 128, 4 at D = 64; 3 stages), and the backward in the
# tutorial's config (attention.py's BWD_CONFIG; K pre-scaled by sm_scale / ln 2 as the tutorial's host code
# does; dQ, dK, dV from the forward's O and M), each checked once against float32 torch (autograd) at
# Z = 1, H = 16, N = 1024: every integer argument divisible by 16, as at the bench's shapes.
try:
    att = _common.load_script("attention")

    def close(got, want, tol=2e-2):  # |got - want| <= tol * max(1, max |want|)
        return (got.float() - want).abs().max().item() <= tol * max(1.0, want.abs().max().item())

    fwd_args = ["Q", "K", "V", "sm_scale", "M", "Out", "stride_z", "stride_h", "stride_n", "H", "N_CTX"]
    bwd_args = ["Q", "K", "V", "sm_scale", "DO", "DQ", "DK", "DV", "M", "D", "stride_z", "stride_h", "stride_tok",
                "H", "N_CTX"]
    m1, n1, m2, n2, slices, bwd_warps, bwd_stages = att.BWD_CONFIG
    pre_block = att.BWD_PRE_BLOCK
    Z, H, N = 1, 16, 1024
    for D in (64, 128):
        gen = torch.Generator(device="cuda").manual_seed(D)
        q, k, v, do = ((torch.randn(Z, H, N, D, device="cuda", generator=gen) * sd).half() for sd in (0.5, 0.5, 0.5, 1))
        scale = D ** -0.5
        ks = (k.float() * (scale / math.log(2))).half()
        for causal in (False, True):
            c = int(causal)
            qf, kf, vf = (t.float().requires_grad_() for t in (q, k, v))
            sc = qf @ kf.transpose(-1, -2) * scale
            if causal:
                sc = sc.masked_fill(~torch.ones(N, N, dtype=torch.bool, device="cuda").tril(), float("-inf"))
            want_m = (torch.logsumexp(sc, -1) / math.log(2)).detach()
            want_o = torch.softmax(sc, -1) @ vf
            want_o.backward(do.float())
            for bm, bn, w in ((128, 64, 8), (128, 128, 8)):  # attention.py's best on the H200
                o, m = torch.full_like(q, float("nan")), torch.full((Z, H, N), float("nan"), device="cuda")
                kern = att.attn_fwd[(N // bm, Z * H)](q, k, v, scale, m, o, q.stride(0), q.stride(1), q.stride(2), H, N,
                                                      HEAD_DIM=D, BLOCK_M=bm, BLOCK_N=bn, STAGE=3 if causal else 1,
                                                      num_warps=w, num_stages=3)
                if not close(o, want_o.detach()) or not close(m, want_m, 1e-3):
                    raise RuntimeError(f"Triton's attn_fwd D={D} causal={c} {bm}/{bn}/{w} is wrong")
                export(f"attn_fwd-D{D}-causal{c}-{bm}-{bn}-{w}", kern, w, fwd_args)
            delta = torch.full_like(m, float("nan"))
            kern = att._attn_bwd_preprocess[(N // pre_block, Z * H)](o, do, delta, N, BLOCK_M=pre_block, HEAD_DIM=D)
            if not close(delta, (o.float() * do.float()).sum(-1), 1e-3):
                raise RuntimeError(f"Triton's _attn_bwd_preprocess D={D} is wrong")
            if not causal:
                export(f"attn_bwd_preprocess-D{D}-{pre_block}", kern, 4, ["O", "DO", "Delta", "N_CTX"])
            dq, dk, dv = (torch.full_like(q, float("nan")) for _ in range(3))
            kern = att._attn_bwd[(N // n1, 1, Z * H)](q, ks, v, scale, do, dq, dk, dv, m, delta, q.stride(0), q.stride(1),
                                                      q.stride(2), H, N, BLOCK_M1=m1, BLOCK_N1=n1, BLOCK_M2=m2,
                                                      BLOCK_N2=n2, BLK_SLICE_FACTOR=slices, HEAD_DIM=D, CAUSAL=causal,
                                                      num_warps=bwd_warps, num_stages=bwd_stages)
            for name, got, want in (("dQ", dq, qf.grad), ("dK", dk, kf.grad), ("dV", dv, vf.grad)):
                if not close(got, want):
                    raise RuntimeError(f"Triton's _attn_bwd D={D} causal={c}: {name} is wrong, max |diff| "
                                       f"{(got.float() - want).abs().max().item():.3g}")
            export(f"attn_bwd-D{D}-causal{c}-{m1}-{n1}-{m2}-{n2}-{bwd_warps}", kern, bwd_warps, bwd_args)
except Exception as e:  # noqa: BLE001 — the other kernels stay usable
    print(f"  attention kernels not (all) exported: {type(e).__name__}: {e}")
print(f"wrote {out}")
