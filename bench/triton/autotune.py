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
    import triton.language as tl

    def cfg(bm, bn, bk, warps, stages):
        return triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}, num_warps=warps,
                             num_stages=stages)

    configs = [cfg(128, 256, 64, 8, 3), cfg(64, 256, 32, 4, 4), cfg(128, 128, 32, 4, 4), cfg(128, 64, 32, 4, 4),
               cfg(64, 128, 32, 4, 4), cfg(128, 32, 32, 4, 4)]

    @triton.autotune(configs=configs, key=["M", "N", "K"])
    @triton.jit
    def matmul(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
               BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
        pid = tl.program_id(0)
        num_pid_m = tl.cdiv(M, BLOCK_M)
        num_pid_n = tl.cdiv(N, BLOCK_N)
        num_pid_in_group = GROUP_M * num_pid_n
        group_id = pid // num_pid_in_group
        first_pid_m = group_id * GROUP_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
        pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
        pid_n = (pid % num_pid_in_group) // group_size_m
        offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
        offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
        offs_k = tl.arange(0, BLOCK_K)
        a_ptrs = a + (offs_am[:, None] * sam + offs_k[None, :] * sak)
        b_ptrs = b + (offs_k[:, None] * sbk + offs_bn[None, :] * sbn)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            av = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
            bv = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
            acc = tl.dot(av, bv, acc)
            a_ptrs += BLOCK_K * sak
            b_ptrs += BLOCK_K * sbk
        offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        c_ptrs = c + scm * offs_cm[:, None] + scn * offs_cn[None, :]
        tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))

    a = torch.full((M, M), 0.5, device="cuda", dtype=torch.float16)
    b = torch.full((M, M), 0.25, device="cuda", dtype=torch.float16)
    c = torch.empty((M, M), device="cuda", dtype=torch.float16)
    torch.cuda.synchronize()
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(M, meta["BLOCK_N"]),)
    t0 = time.perf_counter()
    matmul[grid](a, b, c, M, M, M, M, 1, M, 1, M, 1)
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
