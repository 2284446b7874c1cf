"""Triton's reference for bench/gpu_autotune.cpp: @triton.autotune over the 6 configs Triton's
matmul tutorial lists first, on the tutorial's kernel (f16 in, f32 accumulate, f16 out, grouped
order), M = N = K = 2048, key (M, N, K). Times the first call, where Triton compiles and
benchmarks every config: with an empty TRITON_CACHE_DIR (cold: every config compiled), then in
a new process with the same cache directory (Triton's compile cache is warm, but its autotuner
keeps its choice in memory only, so it benchmarks the 6 configs again). Prints one table."""
import os
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True

M = 2048


def child():
    """Run in a fresh process: time the first autotuned call and print it."""
    import torch
    import triton
    import _matmul

    # the tutorial's first 6 configs, its kernel without an epilogue
    matmul = triton.autotune(configs=_matmul.tutorial_configs()[:6], key=["M", "N", "K"])(_matmul.matmul_kernel)

    a = torch.full((M, M), 0.5, device="cuda", dtype=torch.float16)
    b = torch.full((M, M), 0.25, device="cuda", dtype=torch.float16)
    c = torch.empty((M, M), device="cuda", dtype=torch.float16)
    torch.cuda.synchronize()
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(M, meta["BLOCK_N"]),)
    t0 = time.perf_counter()
    matmul[grid](a, b, c, M, M, M, M, 1, M, 1, M, 1, ACTIVATION="")
    torch.cuda.synchronize()
    ms = (time.perf_counter() - t0) * 1e3
    want = 0.5 * 0.25 * M
    if abs(c[7, 9].item() - want) > 0.5:
        sys.exit(f"triton matmul: wrong result {c[7, 9].item()}, want {want}")
    print(f"FIRST {ms:.1f} {matmul.best_config}")


def main():
    try:
        import torch
        import triton
    except ImportError as e:
        print(f"triton/autotune.py: skipped, no PyTorch or Triton ({e})")
        return
    if not torch.cuda.is_available():
        print("triton/autotune.py: skipped, no CUDA device")
        return
    print(f"triton/autotune.py on {torch.cuda.get_device_name()}: triton {triton.__version__}, torch {torch.__version__}")
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, TRITON_CACHE_DIR=cache)
        rows = []
        for label in ("cold (empty TRITON_CACHE_DIR)", "new process, warm compile cache"):
            t0 = time.perf_counter()
            out = subprocess.run([sys.executable, __file__, "--child"], env=env, capture_output=True, text=True)
            whole = (time.perf_counter() - t0) * 1e3
            line = next((l for l in out.stdout.splitlines() if l.startswith("FIRST ")), None)
            if out.returncode != 0 or line is None:
                sys.exit(f"triton/autotune.py: child failed: {out.stdout}{out.stderr}")
            _, ms, best = line.split(" ", 2)
            rows.append((label, float(ms), whole, best))
    print(f"\ntriton-autotune: matmul {M}x{M}x{M} f16, 6 configs")
    print(f"{'run':<36} {'first call':>12} {'whole process':>14}  best")
    for label, ms, whole, best in rows:
        print(f"{label:<36} {ms:>9.1f} ms {whole:>11.1f} ms  {best}")


if __name__ == "__main__":
    if "--child" in sys.argv:
        child()
    else:
        main()
