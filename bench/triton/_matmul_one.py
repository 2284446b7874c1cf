"""One launch config of Triton's matmul kernel (_matmul.py), for profilers: f16, M = N = K = n
(argv[1], default 8192), 128 x 256 x 64 blocks, GROUP_M 8, 8 warps, 3 stages — the config tile's
`kernel_probe matmul_one` launches. Launches it 3 times, prints its registers, spills and shared
memory, and writes its PTX to $OUT/tri_mm.ptx (else /tmp). run-all skips it (leading _):
    ncu --metrics … -k regex:matmul -c 1 --launch-skip 1 python3 bench/triton/_matmul_one.py 8192"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
import torch  # noqa: E402
import _matmul  # noqa: E402

n = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
a = torch.full((n, n), 0.5, device="cuda", dtype=torch.float16)
b = torch.full((n, n), 0.25, device="cuda", dtype=torch.float16)
c = torch.empty((n, n), device="cuda", dtype=torch.float16)
grid = ((n // 128) * (n // 256),)
for _ in range(3):
    k = _matmul.matmul_kernel[grid](a, b, c, n, n, n, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                                    c.stride(1), BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, ACTIVATION="",
                                    num_warps=8, num_stages=3)
torch.cuda.synchronize()
print("regs", k.n_regs, "spills", k.n_spills, "shared", k.metadata.shared)
with open(os.path.join(os.environ.get("OUT", "/tmp"), "tri_mm.ptx"), "w") as f:
    f.write(k.asm["ptx"])
