"""A/B timing of softmax or layer norm kernels as PTX, against Triton's cubin, in one process, to 0.1 %:
    [KERNEL=layer_norm] python3 bench/triton/_ptx_ab.py VARDIR TRITON_KERNELS_DIR [N ...]
Not a reference script (the leading _ keeps it out of run-all's list). It is how a change to the
code tile emits is judged before it goes into the compiler: write the kernel's PTX on any machine
(TILE_BACKEND=null TILE_TARGET=sm_90a TILE_DUMP_DIR=d kernel_probe softmax N, or layer_norm N),
edit a copy by hand, and time both here on the GPU against the Triton kernel the benches compare
with.

KERNEL: softmax (the default) or layer_norm. VARDIR holds NAME-N.ptx files. A NAME starting with
"tri" is an edit of Triton's own PTX (softmax: out, in, in_stride, out_stride, n_cols; layer norm:
X, Y, W, B, Mean, Rstd, stride, N, eps; then Triton's scratch pointers); any other is tile's kernel
(softmax: out, in, stride, n_cols; layer norm: Triton's order without the scratch pointers), its
block size read from .reqntid/.maxntid. Each file loads through the driver's JIT, as tile loads its
PTX, and (PTXAS=1, the default) also as a cubin from the ptxas that Triton ships.
TRITON_KERNELS_DIR is bench/triton/_export_kernels.py's output: its KERNEL-N.cubin is the reference
("triton cubin"), its KERNEL-N.ptx is loaded through the JIT too ("triton ptx->jit": how far apart
two loads of the same code time, the noise floor).

M = 4096 rows; softmax: torch.randn·2 in f32, checked against torch.softmax (1e-5); layer norm: f16
in [-2, 2), weight and bias in [0, 1), eps 1e-5, checked against torch's layer_norm in f32 (1/64).
Timing: 7 rounds, the kernels in alternating order; in each, 40 launches a kernel, each after a
256 MB L2 flush, timed by CUDA events, the median. Printed per N and kernel: registers, blocks an SM
(cuOccupancyMaxActiveBlocksPerMultiprocessor), GB/s (softmax 2·M·N·4 bytes, layer norm
(2·M·N + 2·N)·2) and the per-round speed against Triton's cubin (median and range; above 1 is
faster). SASS_DIR=D also writes D/NAME-N.sass (cuobjdump of the JIT's cubin, from cuLinkComplete)
and D/triton-N.sass. CARVEOUT=P adds each kernel loaded once more with
CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = P ("NAME carveP"; tile's, with 64 bytes of
dynamic shared memory, as tile launches them). CTAS=k[,k...] asks how the blocks an SM change a
kernel's speed with nothing else changed: each kernel (Triton's cubin and the JIT loads) is loaded
again with a carveout of 64 KB of shared memory ("NAME c64k": the hint alone, which the driver may
pass over for a larger configuration) and, for each k, launched with the dynamic shared memory
that leaves room for k blocks an SM in 64 KB and not k + 1 ("NAME c64k kK"; skipped where
registers or threads already allow fewer than k). The kK loads all run in the 64 KB configuration
(the L1 keeps 192 KB), so they differ only in k; the blocks an SM printed for them is k, since the
occupancy API counts the SM's whole shared memory, not the carveout: ncu's
launch__shared_mem_config_size and launch__occupancy_limit_shared_mem confirm it. NOFLUSH=1 drops the
flush; BATCH=k times k launches between the events (GB/s then reads k times too low; the ratios
hold).
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
CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 9
CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81
CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK = 111
carveout = int(os.environ["CARVEOUT"]) if os.environ.get("CARVEOUT") else None
ctas = [int(k) for k in os.environ.get("CTAS", "").split(",") if k]
kernel = os.environ.get("KERNEL", "softmax")
if kernel not in ("softmax", "layer_norm"):
    sys.exit(f"_ptx_ab: KERNEL={kernel}: softmax or layer_norm")
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


def device_attribute(attr):
    v = ctypes.c_int()
    check(cu.cuDeviceGetAttribute(ctypes.byref(v), attr, torch.cuda.current_device()), "cuDeviceGetAttribute")
    return v.value


def blocks_per_sm(k):
    fn, _, block, shared, _ = k
    n = ctypes.c_int()
    check(cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(ctypes.byref(n), fn, block, ctypes.c_size_t(shared)),
          "cuOccupancyMaxActiveBlocksPerMultiprocessor")
    return n.value


C64K = 64 << 10  # the shared memory the CTAS loads ask for: L1 keeps the rest of the SM's 256 KB


def with_c64k(loaded):
    fn, regs = loaded
    percent = 100 * C64K // device_attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)
    check(cu.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, percent), "cuFuncSetAttribute")
    check(cu.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 48 << 10), "cuFuncSetAttribute")
    return fn, regs


def capped(k, blocks, static_shared):
    """k launched with the dynamic shared memory that lets `blocks` blocks, not one more, share 64 KB."""
    fn, regs, block, shared, args = k
    reserved = device_attribute(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK)
    per_block = C64K // blocks - reserved - static_shared
    per_block -= per_block % 128
    if per_block < shared or per_block > 48 << 10 or (blocks + 1) * (per_block + reserved + static_shared) <= C64K:
        return None
    return fn, regs, block, per_block, args


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
    vals = [ctypes.c_void_p(a) if kind == "p" else ctypes.c_float(a) if kind == "f" else ctypes.c_int32(a)
            for kind, a in args]
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


def static_shared(fn):
    v = ctypes.c_int()
    check(cu.cuFuncGetAttribute(ctypes.byref(v), 1, fn), "cuFuncGetAttribute")  # CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
    return v.value


def problem(n):
    """(tile's arguments, Triton's arguments before its scratch pointers, output, reference, tolerance, bytes)."""
    if kernel == "softmax":
        x = torch.randn(M, n, device="cuda") * 2
        y = torch.empty_like(x)
        tile_args = [("p", y.data_ptr()), ("p", x.data_ptr()), ("i", n), ("i", n)]
        triton_args = [("p", y.data_ptr()), ("p", x.data_ptr()), ("i", n), ("i", n), ("i", n)]
        return tile_args, triton_args, y, torch.softmax(x, dim=1), 1e-5, 2 * M * n * 4
    x = (torch.rand(M, n, device="cuda") * 4 - 2).half()
    w, b = torch.rand(n, device="cuda").half(), torch.rand(n, device="cuda").half()
    y = torch.empty_like(x)
    mean, rstd = torch.empty(M, device="cuda"), torch.empty(M, device="cuda")
    args = [("p", t.data_ptr()) for t in (x, y, w, b, mean, rstd)] + [("i", n), ("i", n), ("f", 1e-5)]
    want = torch.nn.functional.layer_norm(x.float(), (n,), w.float(), b.float(), 1e-5)
    return args, args, y, want, 1 / 64, (2 * M * n + 2 * n) * 2


print(f"_ptx_ab on {torch.cuda.get_device_name()}: triton {triton.__version__}, {kernel}")
for n in sizes:
    tile_args, t_args, y, want, tolerance, moved = problem(n)
    with open(os.path.join(tdir, f"{kernel}-{n}.meta")) as f:
        meta = dict(line.split(" ", 1) for line in f.read().splitlines())
    t_args = t_args + [("p", 0)] * (int(meta["params"]) - len(t_args))
    t_block, t_shared = 32 * int(meta["num_warps"]), int(meta["shared"])
    kernels = {}
    with open(os.path.join(tdir, f"{kernel}-{n}.cubin"), "rb") as f:
        cubin = f.read()
    kernels["triton cubin"] = (*load(cubin, meta["entry"]), t_block, t_shared, t_args)
    if carveout is not None:
        kernels[f"triton carve{carveout}"] = (*with_carveout(load(cubin, meta["entry"])), t_block, t_shared, t_args)
    dump_sass(f"triton-{n}", cubin)
    with open(os.path.join(tdir, f"{kernel}-{n}.ptx"), "rb") as f:
        kernels["triton ptx->jit"] = (*load(f.read() + b"\0", meta["entry"]), t_block, t_shared, t_args)
    texts, cap_of = {}, {}
    for path in sorted(glob.glob(os.path.join(vardir, f"*-{n}.ptx"))):
        name = os.path.basename(path)[: -len(f"-{n}.ptx")]
        with open(path, "rb") as f:
            text = f.read()
        entry = re.search(rb"\.entry\s+(\w+)", text).group(1).decode()
        if name.startswith("tri"):
            args, block, shared = t_args, t_block, t_shared
        else:  # tile's kernel; 1 KiB of dynamic shared memory covers its reductions' partials
            args = tile_args
            block, shared = int(re.search(rb"\.(?:reqntid|maxntid)\s+(\d+)", text).group(1)), 1024
        texts[name + " jit"] = (text, entry)
        kernels[name + " jit"] = (*load(text + b"\0", entry), block, shared, args)
        if carveout is not None:
            kernels[f"{name} carve{carveout}"] = (*with_carveout(load(text + b"\0", entry)), block,
                                                 shared if name.startswith("tri") else 64, args)
        if os.environ.get("SASS_DIR"):
            dump_sass(f"{name}-{n}", jit_cubin(text + b"\0"))
        if os.environ.get("PTXAS", "1") == "1":
            kernels[name + " ptxas"] = (*load(assemble(path), entry), block, shared, args)
    if ctas:
        images = {"triton cubin": (cubin, meta["entry"])}
        images.update({name: (text + b"\0", entry) for name, (text, entry) in texts.items()})
        for name, (image, entry) in images.items():
            _, _, block, shared, args = kernels[name]
            loaded = with_c64k(load(image, entry))
            base = (*loaded, block, shared, args)
            kernels[f"{name} c64k"] = base
            for k in ctas:
                cap = capped(base, k, static_shared(loaded[0]))
                if cap is not None and blocks_per_sm(base) >= k:
                    kernels[f"{name} c64k k{k}"] = cap
                    cap_of[f"{name} c64k k{k}"] = k
    for name, k in kernels.items():
        y.zero_()
        launch(k)
        torch.cuda.synchronize()
        err = (y.float() - want).abs().max().item()
        if not err <= tolerance:
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
        gbps = moved / (statistics.median(rounds[name]) * 1e-3) / 1e9
        print(f"  {name:32s} {kernels[name][1]:3d} registers {cap_of.get(name, blocks_per_sm(kernels[name])):2d} blocks/SM {gbps:7.1f} GB/s"
              f"   speed against Triton's cubin: median {statistics.median(speed):.4f} ({min(speed):.4f} ... "
              f"{max(speed):.4f})")
    sys.stdout.flush()
