"""Triton's reference for bench/gpu_compile_time.cpp: how long Triton takes to get the kernels of
tutorials 01, 02 and 05 running (written as in bench/triton/*.py, with the tile samples' sizes and
meta-parameters, as gpu_compile_time uses them), each number measured inside a child
process (this script re-run with --child) after torch's CUDA context exists and an unrelated
warm-up kernel ran (so Python imports, the context and Triton's one-time set-up are excluded):
  cold compile       the first launch, synchronized, with TRITON_CACHE_DIR a fresh empty
                     directory: Python AST -> TTIR -> TTGIR -> LLVM -> PTX -> ptxas cubin, the
                     launcher, load, run; median of 3 children, each with its own empty directory
  warm first launch  the same first launch in a NEW process whose TRITON_CACHE_DIR a cold child
                     filled: the cache lookup, load the cubin, run; median of 3 children
  launch             the second launch in the same process (the kernel's own run time)
The warm-up kernel is compiled in each child too (cold children: cold; warm ones: from the
cache). Writes triton-compile-time.csv."""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
import _common  # noqa: E402

KERNELS = ["01 vector add", "02 fused softmax", "05 layer norm (f16)"]


def child():
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def warmup_kernel(out, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out + offs, offs.to(tl.float32), mask=offs < n)

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)

    @triton.jit
    def softmax_kernel(out_ptr, in_ptr, stride, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        v = tl.load(in_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
        num = tl.exp(v - tl.max(v, axis=0))
        tl.store(out_ptr + row * stride + cols, num / tl.sum(num, axis=0), mask=cols < n_cols)

    @triton.jit
    def layer_norm_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        X += row * stride
        Y += row * stride
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, N, BLOCK):
            c = start + tl.arange(0, BLOCK)
            acc += tl.load(X + c, mask=c < N, other=0.).to(tl.float32)
        mean = tl.sum(acc, axis=0) / N
        acc2 = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, N, BLOCK):
            c = start + tl.arange(0, BLOCK)
            d = tl.where(c < N, tl.load(X + c, mask=c < N, other=0.).to(tl.float32) - mean, 0.)
            acc2 += d * d
        rstd = 1 / tl.sqrt(tl.sum(acc2, axis=0) / N + eps)
        tl.store(Mean + row, mean)
        tl.store(Rstd + row, rstd)
        for start in range(0, N, BLOCK):
            c = start + tl.arange(0, BLOCK)
            m = c < N
            w = tl.load(W + c, mask=m).to(tl.float32)
            b = tl.load(B + c, mask=m).to(tl.float32)
            v = tl.load(X + c, mask=m, other=0.).to(tl.float32)
            tl.store(Y + c, ((v - mean) * rstd * w + b).to(tl.float16), mask=m)

    def timed(fn):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        return (time.perf_counter() - t0) * 1e3

    buf = torch.zeros(4096, device="cuda")
    print(f"R warm-up|{timed(lambda: warmup_kernel[(4,)](buf, 4096, BLOCK=1024)):.4f}")
    n = 98432
    x, y, out = (torch.rand(n, device="cuda") for _ in range(3))
    rows, cols = 123, 781
    sx, sy = torch.rand(rows, cols, device="cuda"), torch.empty(rows, cols, device="cuda")
    ln_rows, ln_n = 64, 1000
    lx, ly = (torch.rand(ln_rows, ln_n, device="cuda").half() for _ in range(2))
    lw, lb = (torch.rand(ln_n, device="cuda").half() for _ in range(2))
    mean, rstd = (torch.empty(ln_rows, device="cuda") for _ in range(2))
    launches = {
        "01 vector add": lambda: add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024),
        "02 fused softmax": lambda: softmax_kernel[(rows,)](sy, sx, cols, cols, BLOCK=1024),
        "05 layer norm (f16)": lambda: layer_norm_fwd[(ln_rows,)](lx, ly, lw, lb, mean, rstd, ln_n, ln_n, 1e-5,
                                                                  BLOCK=256),
    }
    for name in KERNELS:
        first = timed(launches[name])
        second = timed(launches[name])
        print(f"R {name}|{first:.4f}|{second:.4f}")


def run_child(cache_dir):
    env = dict(os.environ, TRITON_CACHE_DIR=cache_dir)
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child"], env=env, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"triton/compile_time.py: child failed:\n{p.stdout}{p.stderr}")
    out = {}
    for line in p.stdout.splitlines():
        if line.startswith("R "):
            name, *vals = line[2:].split("|")
            out[name] = [float(v) for v in vals]
    return out


def main():
    torch, triton, out_dir = _common.setup("triton/compile_time.py")
    del torch, triton  # the children measure
    base = tempfile.mkdtemp(prefix="triton-compile-time-")
    try:
        colds = [run_child(os.path.join(base, f"cold{i}")) for i in range(3)]
        warms = [run_child(os.path.join(base, "cold0")) for _ in range(3)]
    finally:
        shutil.rmtree(base, ignore_errors=True)
    med = lambda runs, name, i: statistics.median(r[name][i] for r in runs)  # noqa: E731
    cols = {
        "cold compile": [med(colds, k, 0) for k in KERNELS],
        "warm first launch": [med(warms, k, 0) for k in KERNELS],
        "launch": [med(colds + warms, k, 1) for k in KERNELS],
    }
    print("kernels: " + ", ".join(f"{i + 1} = {k}" for i, k in enumerate(KERNELS)))
    print(f"one-time: warm-up kernel's first launch: cold {med(colds, 'warm-up', 0):.2f} ms, "
          f"from the cache {med(warms, 'warm-up', 0):.2f} ms")
    _common.report("triton-compile-time", "kernel #", list(range(1, len(KERNELS) + 1)), cols, [], out_dir)
    print("ms, medians of 3 child processes; cold: an empty TRITON_CACHE_DIR; warm: a new process on a filled one")


if __name__ == "__main__":
    if "--child" in sys.argv:
        child()
    else:
        main()
