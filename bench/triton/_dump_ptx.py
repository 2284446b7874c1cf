"""Developer tool (not a bench; run-all skips files starting with _): compiles the Triton kernels
of softmax.py and layer_norm.py for the shapes the benches time, and writes each one's PTX and
ptxas resource use (registers, spills, shared memory) to DIR (default $OUT or ptx-triton/), so
tile's PTX (TILE_DUMP_DIR) can be compared with Triton's for the same kernel. Needs a GPU:
    python3 bench/triton/_dump_ptx.py [DIR]"""
import importlib.util
import os
import sys

sys.dont_write_bytecode = True
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.environ.get("OUT", "."), "ptx-triton")
os.makedirs(out, exist_ok=True)
sys.argv = sys.argv[:1]


import _common  # noqa: E402
import torch  # noqa: E402

sm = _common.load_script("softmax")
ln = _common.load_script("layer_norm")
lines = []
M = 4096
for n in (1024, 4096, 16384):
    x = torch.randn(M, n, device="cuda")
    y = torch.empty_like(x)
    block = 1 << (n - 1).bit_length()
    k = sm.softmax_kernel[(M,)](y, x, x.stride(0), y.stride(0), n, BLOCK=block, num_warps=sm.warps_for(block))
    open(os.path.join(out, f"softmax-{n}.ptx"), "w").write(k.asm["ptx"])
    lines.append(f"softmax N={n}: {k.n_regs} registers, {k.n_spills} spills, {k.metadata.shared} B shared, warps {sm.warps_for(block)}")
for n in (1024, 4096, 8192):
    x = torch.randn(M, n, device="cuda").half()
    w = torch.randn(n, device="cuda").half()
    b = torch.randn(n, device="cuda").half()
    y = torch.empty_like(x)
    mean = torch.empty(M, device="cuda")
    rstd = torch.empty(M, device="cuda")
    block = min(32768, 1 << (n - 1).bit_length())
    warps = min(max(block // 256, 1), 8)
    k = ln.layer_norm_fwd[(M,)](x, y, w, b, mean, rstd, x.stride(0), n, 1e-5, BLOCK=block, num_warps=warps)
    open(os.path.join(out, f"layer_norm-{n}.ptx"), "w").write(k.asm["ptx"])
    lines.append(f"layer_norm N={n}: {k.n_regs} registers, {k.n_spills} spills, {k.metadata.shared} B shared, warps {warps}")
open(os.path.join(out, "resources.txt"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
