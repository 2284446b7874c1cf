"""Triton's reference for bench/gpu_softmax.cpp: fused row softmax of a 4096 x N f32 matrix,
N = 256 ... 16384, Triton's tutorial-02 style kernel (one program per row, BLOCK = next_pow2(N),
num_warps 4 / 8 from BLOCK 2048 / 16 from 4096), torch.softmax, and the device's copy bandwidth
(M*N*4 bytes copied, counted 2x). GB/s = 2*M*N*4 bytes / median time. Writes triton-softmax.csv."""
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
import _common  # noqa: E402

torch, triton, out_dir = _common.setup("triton/softmax.py")
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    in_row = tl.load(in_ptr + row * in_stride + cols, mask=cols < n_cols, other=-float("inf"))
    shifted = in_row - tl.max(in_row, axis=0)
    num = tl.exp(shifted)
    tl.store(out_ptr + row * out_stride + cols, num / tl.sum(num, axis=0), mask=cols < n_cols)


def warps_for(block):
    return 16 if block >= 4096 else 8 if block >= 2048 else 4


def main():
    M = 4096
    sizes = [256 << i for i in range(7)]
    cols = {"triton": [], "torch": [], "D2D copy": []}
    for n in sizes:
        x = torch.randn(M, n, device="cuda", dtype=torch.float32) * 2
        y = torch.empty_like(x)
        block = triton.next_power_of_2(n)
        warps = warps_for(block)

        def run_triton():
            softmax_kernel[(M,)](y, x, x.stride(0), y.stride(0), n, BLOCK=block, num_warps=warps)

        run_triton()
        err = (y - torch.softmax(x, dim=1)).abs().max().item()
        if err > 1e-5:
            sys.exit(f"triton softmax N={n}: max error {err:.3g}")
        nbytes = 2 * M * n * 4
        cols["triton"].append(_common.gbps(nbytes, _common.median_ms(run_triton)))
        cols["torch"].append(_common.gbps(nbytes, _common.median_ms(lambda: torch.softmax(x, dim=1))))
        src = torch.empty(M * n * 4, device="cuda", dtype=torch.uint8)
        dst = torch.empty_like(src)
        cols["D2D copy"].append(_common.gbps(2 * src.numel(), _common.median_ms(lambda: dst.copy_(src))))
    _common.report("triton-softmax", "N", sizes, cols, [("triton", "D2D copy"), ("torch", "D2D copy"),
                                                        ("triton", "torch")], out_dir)
    print(f"M = {M} rows, one program per row, BLOCK = next_pow2(N), num_warps 4 / 8 / 16; GB/s: 2*M*N*4 bytes; "
          "D2D copy: M*N*4 bytes copied, counted 2x")


main()
