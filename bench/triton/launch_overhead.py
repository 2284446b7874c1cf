"""Triton's reference for bench/gpu_launch_overhead.cpp: what a launch costs the host, for an
already compiled tiny kernel (grid 1, a 128-element tile) of 1, 4 and 12 runtime arguments (and
one constexpr), launched in batches of 256 with no synchronization inside a batch, timed with
time.perf_counter_ns; microseconds per launch, the median over 40 batches (interleaved):
  triton           kernel[(1,)](args..., BLOCK=128): Triton's whole Python launch path
  triton compiled  the CompiledKernel that launch returned, called as compiled[(1, 1, 1)](args...):
                   Triton's launcher without the JIT's dispatch (binding, specialization key,
                   cache lookup); NaN where this Triton's CompiledKernel cannot be called so
  torch fill_      out.fill_(1.0) on a 128-element tensor: one PyTorch op's launch, for scale
Writes triton-launch-overhead.csv."""
import statistics
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
import _common  # noqa: E402

torch, triton, out_dir = _common.setup("triton/launch_overhead.py")
import triton.language as tl

BATCH, BATCHES, BLOCK = 256, 40, 128


@triton.jit
def launch1(out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, offs.to(tl.float32))


@triton.jit
def launch4(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


@triton.jit
def launch12(out, a, b, c, d, e, f, g, n, i, j, k, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    s = (tl.load(a + offs, mask=m) + tl.load(b + offs, mask=m) + tl.load(c + offs, mask=m) +
         tl.load(d + offs, mask=m) + tl.load(e + offs, mask=m) + tl.load(f + offs, mask=m) +
         tl.load(g + offs, mask=m))
    tl.store(out + offs, s + (i + j + k).to(tl.float32), mask=m)


def batch_us(fn):
    torch.cuda.synchronize()
    t0 = time.perf_counter_ns()
    for _ in range(BATCH):
        fn()
    t1 = time.perf_counter_ns()
    return (t1 - t0) / 1e3 / BATCH


def main():
    bufs = [torch.zeros(BLOCK, device="cuda") for _ in range(8)]
    o, n = bufs[0], BLOCK
    kernels = {
        1: (launch1, (o,)),
        4: (launch4, (bufs[1], bufs[2], o, n)),
        12: (launch12, (o, *bufs[1:8], n, 1, 2, 3)),
    }
    names = ["triton", "triton compiled", "torch fill_"]
    cols = {name: [] for name in names}
    for nargs, (kern, args) in kernels.items():
        compiled = kern[(1,)](*args, BLOCK=BLOCK)
        torch.cuda.synchronize()
        providers = {"triton": lambda: kern[(1,)](*args, BLOCK=BLOCK), "torch fill_": lambda: o.fill_(1.0)}
        # A CompiledKernel is launched as compiled[grid](*args); Triton 3.x's launcher takes every
        # argument, constexprs included (it skips them), older ones the runtime arguments only.
        why = None
        for full in ((*args, BLOCK), args):
            try:
                runner = compiled[(1, 1, 1)]
                runner(*full)
                torch.cuda.synchronize()
                providers["triton compiled"] = lambda runner=runner, full=full: runner(*full)
                break
            except Exception as e:  # noqa: BLE001 - another Triton's API: try the next form
                why = f"{type(e).__name__}: {e}"
        if "triton compiled" not in providers:
            print(f"{nargs} args: no 'triton compiled' column ({why})")
        for fn in providers.values():
            for _ in range(4 * BATCH):
                fn()
        samples = {name: [] for name in providers}
        for _ in range(BATCHES):
            for name, fn in providers.items():
                samples[name].append(batch_us(fn))
        torch.cuda.synchronize()
        for name in names:
            cols[name].append(statistics.median(samples[name]) if name in samples else float("nan"))
    _common.report("triton-launch-overhead", "runtime args", list(kernels), cols,
                   [("triton", "triton compiled"), ("triton", "torch fill_")], out_dir)
    print(f"us per launch: medians over {BATCHES} batches of {BATCH} launches (grid 1, BLOCK = {BLOCK}, "
          "num_warps 4), no synchronization inside a batch")


main()
