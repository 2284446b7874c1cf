"""Triton's reference for bench/gpu_layer_norm.cpp: layer norm forward as in Triton's tutorial 05
(x, y, weight, bias in f16; each row's mean and 1/std in f32), M = 4096 rows, N = 1024 ... 8192:
the tutorial-style kernel (one program per row, the row walked in BLOCKs three times; BLOCK =
min(65536 / 2, next_pow2(N)), num_warps = min(max(BLOCK / 256, 1), 8)), the same with the row
loaded once and kept in registers (bench::make_layer_norm_row's twin), torch's
F.layer_norm, and the device's copy bandwidth ((M*N + N)*2 bytes copied, counted 2x).
GB/s = (2*M*N + 2*N)*2 bytes / median time (x read, y written, w and b read). Writes
triton-layer-norm.csv."""
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
import _common  # noqa: E402

torch, triton, out_dir = _common.setup("triton/layer_norm.py")
import triton.language as tl


@triton.jit
def layer_norm_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    acc2 = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        v = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        d = tl.where(cols < N, v - mean, 0.)
        acc2 += d * d
    rstd = 1 / tl.sqrt(tl.sum(acc2, axis=0) / N + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < N
        w = tl.load(W + cols, mask=mask).to(tl.float32)
        b = tl.load(B + cols, mask=mask).to(tl.float32)
        v = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        tl.store(Y + cols, ((v - mean) * rstd * w + b).to(tl.float16), mask=mask)


@triton.jit
def layer_norm_fwd_row(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK: tl.constexpr):
    # bench::make_layer_norm_row's twin: the row (N <= BLOCK) loaded once and kept in registers
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * stride + cols, mask=mask, other=0.).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    d = tl.where(mask, x - mean, 0.)
    rstd = 1 / tl.sqrt(tl.sum(d * d, axis=0) / N + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    b = tl.load(B + cols, mask=mask).to(tl.float32)
    tl.store(Y + row * stride + cols, (d * rstd * w + b).to(tl.float16), mask=mask)


# the tutorial's kernel with num_warps tuned over 1, 2, 4, 8 (bench/gpu_layer_norm.cpp's "tile
# tuned warps" tunes tile's the same way)
layer_norm_fwd_tuned = triton.autotune(configs=[triton.Config({}, num_warps=w) for w in (1, 2, 4, 8)],
                                       key=["N"])(layer_norm_fwd)


def main():
    M, eps = 4096, 1e-5
    sizes = [1024, 2048, 4096, 8192]
    cols = {"triton": [], "triton row in registers": [], "triton tuned warps": [], "torch": [], "D2D copy": []}
    for n in sizes:
        x = (torch.rand(M, n, device="cuda") * 4 - 2).to(torch.float16)
        w = (torch.rand(n, device="cuda") * 2 - 1).to(torch.float16)
        b = (torch.rand(n, device="cuda") * 2 - 1).to(torch.float16)
        y = torch.empty_like(x)
        mean = torch.empty(M, device="cuda", dtype=torch.float32)
        rstd = torch.empty(M, device="cuda", dtype=torch.float32)
        block = min(65536 // x.element_size(), triton.next_power_of_2(n))
        warps = min(max(block // 256, 1), 8)

        def run_triton():
            layer_norm_fwd[(M,)](x, y, w, b, mean, rstd, x.stride(0), n, eps, BLOCK=block, num_warps=warps)

        def run_triton_tuned():
            layer_norm_fwd_tuned[(M,)](x, y, w, b, mean, rstd, x.stride(0), n, eps, BLOCK=block)

        def run_triton_row():
            layer_norm_fwd_row[(M,)](x, y, w, b, mean, rstd, x.stride(0), n, eps, BLOCK=block, num_warps=warps)

        want = torch.nn.functional.layer_norm(x.float(), (n,), w.float(), b.float(), eps)
        for name, fn in (("layer_norm", run_triton), ("layer_norm_row", run_triton_row),
                         ("layer_norm tuned", run_triton_tuned)):
            y.zero_()
            fn()
            err = (y.float() - want).abs().max().item()
            if err > 1 / 64:
                sys.exit(f"triton {name} N={n}: max error {err:.3g}")
        nbytes = (2 * M * n + 2 * n) * 2
        cols["triton"].append(_common.gbps(nbytes, _common.median_ms(run_triton)))
        cols["triton row in registers"].append(_common.gbps(nbytes, _common.median_ms(run_triton_row)))
        cols["triton tuned warps"].append(_common.gbps(nbytes, _common.median_ms(run_triton_tuned)))
        print(f"  N = {n}: tuned num_warps = {layer_norm_fwd_tuned.best_config.num_warps}")
        cols["torch"].append(_common.gbps(nbytes, _common.median_ms(
            lambda: torch.nn.functional.layer_norm(x, (n,), w, b, eps))))
        src = torch.empty((M * n + n) * 2, device="cuda", dtype=torch.uint8)
        dst = torch.empty_like(src)
        cols["D2D copy"].append(_common.gbps(2 * src.numel(), _common.median_ms(lambda: dst.copy_(src))))
    _common.report("triton-layer-norm", "N", sizes, cols, [("triton", "D2D copy"), ("torch", "D2D copy"),
                                                           ("triton", "torch")], out_dir)
    print(f"M = {M} rows, f16 data, f32 statistics, BLOCK = next_pow2(N), num_warps = min(max(BLOCK/256, 1), 8); "
          "GB/s: (2*M*N + 2*N)*2 bytes; D2D copy: (M*N + N)*2 bytes copied, counted 2x")


main()
