"""A/B timing of softmax kernels as PTX, against Triton's cubin, in one process, to 0.1 %:
    python3 bench/triton/_ptx_ab.py VARDIR TRITON_KERNELS_DIR [N ...]
Not a reference script (the leading _ keeps it out of run-all's list). It is how a change to the
code tile emits is judged before it goes into the compiler: write the kernel's PTX on any machine
(TILE_BACKEND=null TILE_TARGET=sm_90a TILE_DUMP_DIR=d kernel_probe softmax N), edit a copy by hand,
and time both here on the GPU against the Triton kernel the benches compare with.

VARDIR holds NAME-N.ptx files. A NAME starting with "tri" is an edit of Triton's own PTX (Triton's
signature: out, in, in_stride, out_stride, n_cols and its scratch pointers); any other is tile's
softmax (out, in, stride, n_cols), its block size read from .reqntid/.maxntid. Each file loads
through the driver's JIT, as tile loads its PTX, and (PTXAS=1, the default) also as a cubin from the
ptxas that Triton ships. TRITON_KERNELS_DIR is bench/triton/_export_kernels.py's output: its
softmax-N.cubin is the reference ("triton cubin"), its softmax-N.ptx is loaded through the JIT too
("triton ptx->jit": how far apart two loads of the same code time, the noise floor).

M = 4096 rows of torch.randn·2; every kernel's output is checked against torch.softmax (1e-5)
first. Timing: 7 rounds, the kernels in alternating order; in each, 40 launches a kernel, each after
a 256 MB L2 flush, timed by CUDA events, the median. Printed per N and kernel: registers, GB/s
(2·M·N·4 bytes), and the per-round speed against Triton's cubin (median and range; above 1 is
faster). SASS_DIR=D also writes D/NAME-N.sass (cuobjdump of the JIT's cubin, from cuLinkComplete)
and D/triton-N.sass. CARVEOUT=P adds each kernel loaded once more with
CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = P ("NAME carveP"; tile's, with 64 bytes of
dynamic shared memory, as tile launches them). NOFLUSH=1 drops the flush; BATCH=k times k launches
between the events (GB/s then reads k times too low; the ratios hold).
"""
import ctypes
import glob
import os
import re
import statistics
import subprocess
import sys

sys.dont_write_bytecode = True
if len(sys.argv) < 3:
    sys.exit(__doc__)
vardir, tdir = sys.argv[1], sys.argv[2]
sizes = [int(a) for a in sys.argv[3:]] or [1024, 4096, 16384]
try:
    import torch
    import triton
except ImportError as e:
    sys.exit(f"_ptx_ab: needs PyTorch and Triton ({e})")
if not torch.cuda.is_available():
    sys.exit("_ptx_ab: no CUDA device")

cu = ctypes.CDLL("libcuda.so.1")
torch.zeros(1, device="cuda")  # the primary context, current on this thread
ptxas = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas")
M = 4096
CU_FUNC_ATTRIBUTE_NUM_REGS = 4
CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 9
carveout = int(os.environ["CARVEOUT"]) if os.environ.get("CARVEOUT") else None
CU_JIT_INPUT_PTX = 1


def check(status, what):
    if status != 0:
        name = ctypes.c_char_p()
        cu.cuGetErrorName(status, ctypes.byref(name))
        raise RuntimeError(f"{what}: {name.value}")


def load(image, entry):
    """(function, registers) of `entry` in a module loaded from a cubin or NUL-terminated PTX."""
    mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
    check(cu.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(image)), "cuModuleLoadData " + entry)
    check(cu.cuModuleGetFunction(ctypes.byref(fn), mod, entry.encode()), "cuModuleGetFunction " + entry)
    regs = ctypes.c_int()
    check(cu.cuFuncGetAttribute(ctypes.byref(regs), CU_FUNC_ATTRIBUTE_NUM_REGS, fn), "cuFuncGetAttribute")
    return fn, regs.value


def with_carveout(loaded):
    fn, regs = loaded
    check(cu.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, carveout), "cuFuncSetAttribute")
    return fn, regs


def jit_cubin(ptx):
    """The cubin the driver's JIT makes of NUL-terminated `ptx` (through cuLink*)."""
    state, image, size = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_size_t()
    check(cu.cuLinkCreate_v2(0, None, None, ctypes.byref(state)), "cuLinkCreate")
    check(cu.cuLinkAddData_v2(state, CU_JIT_INPUT_PTX, ctypes.c_char_p(ptx), ctypes.c_size_t(len(ptx)), b"k.ptx", 0,
                              None, None), "cuLinkAddData")
    check(cu.cuLinkComplete(state, ctypes.byref(image), ctypes.byref(size)), "cuLinkComplete")
    data = ctypes.string_at(image, size.value)
    cu.cuLinkDestroy(state)
    return data


def dump_sass(name, cubin):
    out = os.environ.get("SASS_DIR")
    if not out:
        return
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, name + ".cubin")
    with open(path, "wb") as f:
        f.write(cubin)
    with open(os.path.join(out, name + ".sass"), "w") as f:
        subprocess.run(["cuobjdump", "-sass", path], stdout=f, check=False)
    os.remove(path)


def assemble(path):
    cubin = path + ".cubin"
    r = subprocess.run([ptxas, "-arch=sm_90a", path, "-o", cubin], capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"ptxas {path}: {r.stderr}")
    with open(cubin, "rb") as f:
        data = f.read()
    os.remove(cubin)
    return data


flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
stream = torch.cuda.current_stream().cuda_stream


def launch(k):
    fn, _, block, shared, args = k
    vals = [ctypes.c_void_p(a) if kind == "p" else ctypes.c_int32(a) for kind, a in args]
    ptrs = (ctypes.c_void_p * len(vals))(*[ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in vals])
    check(cu.cuLaunchKernel(fn, M, 1, 1, block, 1, 1, shared, ctypes.c_void_p(stream), ptrs, None), "cuLaunchKernel")


def median_ms(k, reps=40):
    launch(k)
    times = []
    for _ in range(reps):
        if not os.environ.get("NOFLUSH"):
            flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(int(os.environ.get("BATCH", "1"))):
            launch(k)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


print(f"_ptx_ab on {torch.cuda.get_device_name()}: triton {triton.__version__}")
for n in sizes:
    x = torch.randn(M, n, device="cuda") * 2
    y = torch.empty_like(x)
    want = torch.softmax(x, dim=1)
    with open(os.path.join(tdir, f"softmax-{n}.meta")) as f:
        meta = dict(line.split(" ", 1) for line in f.read().splitlines())
    t_args = [("p", y.data_ptr()), ("p", x.data_ptr()), ("i", n), ("i", n), ("i", n)]
    t_args += [("p", 0)] * (int(meta["params"]) - len(t_args))
    t_block, t_shared = 32 * int(meta["num_warps"]), int(meta["shared"])
    kernels = {}
    with open(os.path.join(tdir, f"softmax-{n}.cubin"), "rb") as f:
        cubin = f.read()
    kernels["triton cubin"] = (*load(cubin, meta["entry"]), t_block, t_shared, t_args)
    if carveout is not None:
        kernels[f"triton carve{carveout}"] = (*with_carveout(load(cubin, meta["entry"])), t_block, t_shared, t_args)
    dump_sass(f"triton-{n}", cubin)
    with open(os.path.join(tdir, f"softmax-{n}.ptx"), "rb") as f:
        kernels["triton ptx->jit"] = (*load(f.read() + b"\0", meta["entry"]), t_block, t_shared, t_args)
    for path in sorted(glob.glob(os.path.join(vardir, f"*-{n}.ptx"))):
        name = os.path.basename(path)[: -len(f"-{n}.ptx")]
        with open(path, "rb") as f:
            text = f.read()
        entry = re.search(rb"\.entry\s+(\w+)", text).group(1).decode()
        if name.startswith("tri"):
            args, block, shared = t_args, t_block, t_shared
        else:  # tile's softmax; 1 KiB of dynamic shared memory covers its reductions' partials
            args = [("p", y.data_ptr()), ("p", x.data_ptr()), ("i", n), ("i", n)]
            block, shared = int(re.search(rb"\.(?:reqntid|maxntid)\s+(\d+)", text).group(1)), 1024
        kernels[name + " jit"] = (*load(text + b"\0", entry), block, shared, args)
        if carveout is not None:
            kernels[f"{name} carve{carveout}"] = (*with_carveout(load(text + b"\0", entry)), block,
                                                 shared if name.startswith("tri") else 64, args)
        if os.environ.get("SASS_DIR"):
            dump_sass(f"{name}-{n}", jit_cubin(text + b"\0"))
        if os.environ.get("PTXAS", "1") == "1":
            kernels[name + " ptxas"] = (*load(assemble(path), entry), block, shared, args)
    for name, k in kernels.items():
        y.zero_()
        launch(k)
        torch.cuda.synchronize()
        err = (y - want).abs().max().item()
        if not err <= 1e-5:
            sys.exit(f"_ptx_ab: {name} at N = {n} is wrong (max error {err:.3g})")
    names = list(kernels)
    rounds = {name: [] for name in names}
    for r in range(7):
        for name in names if r % 2 == 0 else names[::-1]:
            rounds[name].append(median_ms(kernels[name]))
    print(f"N = {n}")
    base = rounds["triton cubin"]
    for name in names:
        speed = [b / t for b, t in zip(base, rounds[name])]
        gbps = 2 * M * n * 4 / (statistics.median(rounds[name]) * 1e-3) / 1e9
        print(f"  {name:28s} {kernels[name][1]:3d} registers {gbps:7.1f} GB/s   speed against Triton's cubin: median "
              f"{statistics.median(speed):.4f} ({min(speed):.4f} ... {max(speed):.4f})")
    sys.stdout.flush()
