"""Triton's reference for bench/gpu_matmul.cpp: the matmul tutorial's kernel (grouped program order,
f32 accumulation, the output stored in the inputs' type; A, B, C all f16 or all bf16, row-major),
autotuned over the tutorial's 8 CUDA configs for f16/bf16 (the same list tile tunes over) with
key (M, N, K, ACTIVATION) and 10 ms warm-up / 40 ms of repetitions per config (tile's budget),
against torch.mm (cuBLAS through PyTorch) into a preallocated output. Shapes: square
M = N = K = 512 ... 8192 and the LLM projections M = 8192, N = K in {4096, 11008, 14336};
--quick: 1024, 4096, 8192 and N = K = 11008. Second pair of tables: leaky ReLU fused into the
kernel's epilogue (ACTIVATION="leaky_relu", on the f32 accumulator) against torch.mm followed by
F.leaky_relu in place, both in one timed function. TFLOP/s = 2*M*N*K / median time (do_bench:
25 ms warm-up, 100 ms of repetitions, L2 flushed before each). Before timing, Triton's output
(written into a NaN-filled C) is checked against torch's element by element:
|triton - torch| <= rtol*|torch| + 1e-3*max|C|, rtol 1e-2 for f16 and 2e-2 for bf16; a mismatch
or an error is printed with the shape and config, its value left out, and the script exits 1 after
its tables. Writes triton-matmul-*.csv."""
import argparse
import sys
import time
import traceback

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
import _common  # noqa: E402

torch, triton, out_dir = _common.setup("triton/matmul.py")
import _matmul  # noqa: E402  (after setup: it needs triton)

LLM_TOKENS = 8192
ATOL_OF_MAX = 1e-3
RTOL = {"f16": 1e-2, "bf16": 2e-2}
DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16}


def tuning_bench(fn, quantiles):
    # tile's autotuner budget per config (gpu_matmul.cpp: kTuneWarmupMs, kTuneRepMs)
    return triton.testing.do_bench(fn, warmup=10, rep=40, quantiles=quantiles)


# ACTIVATION is in the key so the fused variant is tuned on its own, as tile's launch meta-parameter
# is; Triton adds the tensors' dtypes to the key itself.
matmul_kernel = triton.autotune(configs=_matmul.tutorial_configs(), key=["M", "N", "K", "ACTIVATION"],
                                do_bench=tuning_bench)(_matmul.matmul_kernel)


def shapes(quick):
    square = [1024, 4096, 8192] if quick else [512, 1024, 2048, 4096, 8192]
    llm = [11008] if quick else [4096, 11008, 14336]
    return [(n, n, n, False) for n in square] + [(LLM_TOKENS, n, n, True) for n in llm]


def tflops(M, N, K, ms):
    return 2.0 * M * N * K / (ms * 1e-3) / 1e12


def mismatch(got, want, rtol):
    """'' when |got - want| <= rtol*|want| + 1e-3*max|want| everywhere (NaN fails), else what is off."""
    g, w = got.float(), want.float()
    max_want = w.abs().nan_to_num(0.0, 0.0, 0.0).max().item()
    bound = rtol * w.abs() + ATOL_OF_MAX * max_want
    d = (g - w).abs()
    bad = ~(d <= bound)
    n_bad = int(bad.sum().item())
    if n_bad == 0:
        return "", d.max().item(), max_want
    excess = torch.where(bad, (d / bound).nan_to_num(float("inf")), torch.zeros_like(d))
    worst = int(excess.argmax().item())
    i, j = divmod(worst, w.shape[1])
    msg = (f"{n_bad} of {w.numel()} elements are off; worst C[{i}, {j}] = {g[i, j].item():.6g}, torch "
           f"{w[i, j].item():.6g} (allowed +-{bound[i, j].item():.3g}: {rtol:.0e}*|want| + {ATOL_OF_MAX:.0e}*max|C|, "
           f"max|C| = {max_want:.4g}); max |diff| = {d.nan_to_num(float('inf')).max().item():.4g}")
    return msg, float("nan"), max_want


def table_name(kind, dt, llm):
    """The square shapes' table has x = M = N = K, the LLM shapes' x = N = K (M = 8192)."""
    return f"triton-matmul-{kind}{dt}" + ("-llm" if llm else "")


def measure(M, N, K, llm, dt, epilogue, values, failures):
    """Times Triton and torch for one shape and type (and the leaky ReLU pair when `epilogue`);
    values[(table, x, column)] = TFLOP/s."""
    what = f"{dt} M={M} N={N} K={K}"
    step = "set-up"
    try:
        torch.manual_seed(M * 31 + N)
        a = (torch.rand(M, K, device="cuda") * 2 - 1).to(DTYPES[dt])
        b = (torch.rand(K, N, device="cuda") * 2 - 1).to(DTYPES[dt])
        c = torch.empty(M, N, device="cuda", dtype=DTYPES[dt])
        ref = torch.empty_like(c)
        grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)  # noqa: E731

        def run_triton(act):
            matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                                c.stride(1), ACTIVATION=act)

        def run_torch():
            torch.mm(a, b, out=ref)

        def run_torch_act():
            torch.mm(a, b, out=ref)
            torch.nn.functional.leaky_relu(ref, 0.01, inplace=True)

        for act in (["", "leaky_relu"] if epilogue else [""]):
            tag = " (leaky ReLU)" if act else ""
            step = "torch" + tag
            (run_torch_act if act else run_torch)()
            step = "autotuning triton" + tag
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            run_triton(act)
            torch.cuda.synchronize()
            tune_ms = (time.perf_counter() - t0) * 1e3
            cfg = str(matmul_kernel.best_config)
            step = f"triton{tag} with {{{cfg}}}"
            c.fill_(float("nan"))
            run_triton(act)
            torch.cuda.synchronize()
            msg, max_diff, max_c = mismatch(c, ref, RTOL[dt])
            ok = not msg
            if not ok:
                failures.append(f"{what}: triton{tag} {{{cfg}}} against torch: {msg}")
                print(f"  FAILED {failures[-1]}", flush=True)
            step = "timing triton" + tag
            tri = tflops(M, N, K, _common.median_ms(lambda: run_triton(act))) if ok else float("nan")
            step = "timing torch" + tag
            ref_tf = tflops(M, N, K, _common.median_ms(run_torch_act if act else run_torch))
            table = table_name("leaky-relu-" if act else "", dt, llm)
            cols = ("triton fused", "torch + leaky_relu") if act else ("triton", "torch")
            values[(table, N, cols[0])] = tri
            values[(table, N, cols[1])] = ref_tf
            print(f"  {dt:<5} {'M=%d N=%d K=%d' % (M, N, K):<26}{' leaky ReLU' if act else '':<13} triton {tri:7.1f}  "
                  f"{'torch+act' if act else 'torch'} {ref_tf:7.1f} TFLOP/s  ({tri / ref_tf:.2f}x)  "
                  f"max|triton-torch| {max_diff:.3g} (max|C| {max_c:.4g})\n        {{{cfg}}}; tuned in {tune_ms:.0f} ms",
                  flush=True)
    except Exception as e:  # a compile error, or a CUDA error (which poisons the context)
        failures.append(f"{what}: {step} failed: {type(e).__name__}: {e}")
        print(f"  FAILED {failures[-1]}\n{traceback.format_exc()}", flush=True)


def main():
    parser = argparse.ArgumentParser(description="triton/matmul.py")
    parser.add_argument("--quick", action="store_true", help="M=N=K 1024, 4096, 8192 and M=8192 N=K=11008 only")
    args, _ = parser.parse_known_args()
    all_shapes = shapes(args.quick)
    t0 = time.perf_counter()
    values, failures = {}, []
    print(f"{len(all_shapes)} shapes{' (--quick)' if args.quick else ''}; autotuning over "
          f"{len(_matmul.tutorial_configs())} configs per shape, type and epilogue", flush=True)
    for M, N, K, llm in all_shapes:
        measure(M, N, K, llm, "f16", True, values, failures)
        measure(M, N, K, llm, "bf16", False, values, failures)
        torch.cuda.empty_cache()
    print()
    for kind, dt, cols in (("", "f16", ("triton", "torch")), ("", "bf16", ("triton", "torch")),
                           ("leaky-relu-", "f16", ("triton fused", "torch + leaky_relu"))):
        for llm in (False, True):
            name = table_name(kind, dt, llm)
            xs = [N for M, N, K, l in all_shapes if l == llm]
            columns = {col: [values.get((name, x, col), float("nan")) for x in xs] for col in cols}
            _common.report(name, "N=K (M=8192)" if llm else "M=N=K", xs, columns, [cols], out_dir)
            print()
    print("A, B, C row-major; f32 accumulation; torch: torch.mm(a, b, out=c) (cuBLAS); TFLOP/s = 2*M*N*K / median "
          "time; triton autotuned over the tutorial's 8 configs (key M, N, K, ACTIVATION)")
    print(f"triton/matmul.py: {time.perf_counter() - t0:.0f} s in all")
    if failures:
        print(f"triton/matmul.py: {len(failures)} failure(s):", file=sys.stderr)
        for f in failures:
            print(f"  {f}", file=sys.stderr)
        sys.exit(1)


main()
