"""Triton's reference for bench/gpu_vector_add.cpp: out = x + y in f32, N = 2^12 ... 2^28 (powers
of 4), Triton's tutorial-01 kernel (BLOCK = 1024, num_warps = 4), torch.add, and the device's copy
bandwidth (a device-to-device copy of 1.5*N*4 bytes with Tensor.copy_, which moves the 3*N*4 bytes
the add moves). GB/s = 3*N*4 bytes / median time for all three (the copy: 2 x the bytes copied).
Writes triton-vector-add.csv."""
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
import _common  # noqa: E402

torch, triton, out_dir = _common.setup("triton/vector_add.py")
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    in_range = offsets < n
    a = tl.load(x_ptr + offsets, mask=in_range)
    b = tl.load(y_ptr + offsets, mask=in_range)
    tl.store(out_ptr + offsets, a + b, mask=in_range)


def main():
    block, warps = 1024, 4
    sizes = [1 << p for p in range(12, 29, 2)]
    cols = {"triton": [], "torch": [], "D2D copy": []}
    for n in sizes:
        x = torch.rand(n, device="cuda", dtype=torch.float32)
        y = torch.rand(n, device="cuda", dtype=torch.float32)
        out = torch.empty_like(x)
        grid = (triton.cdiv(n, block),)

        def run_triton():
            add_kernel[grid](x, y, out, n, BLOCK=block, num_warps=warps)

        run_triton()
        if not torch.equal(out, x + y):
            sys.exit(f"triton add N={n}: wrong result")
        nbytes = 3 * n * 4
        cols["triton"].append(_common.gbps(nbytes, _common.median_ms(run_triton)))
        cols["torch"].append(_common.gbps(nbytes, _common.median_ms(lambda: torch.add(x, y, out=out))))
        src = torch.empty(n * 4 * 3 // 2, device="cuda", dtype=torch.uint8)
        dst = torch.empty_like(src)
        cols["D2D copy"].append(_common.gbps(2 * src.numel(), _common.median_ms(lambda: dst.copy_(src))))
        del x, y, out, src, dst
        torch.cuda.empty_cache()
    r = _common.report("triton-vector-add", "N", sizes, cols, [("triton", "D2D copy"), ("torch", "D2D copy")], out_dir)
    print(f"GB/s: 3*N*4 bytes; D2D copy: 1.5*N*4 bytes copied, counted 2x; BLOCK = {block}, num_warps = {warps}")
    at = sizes.index(1 << 26)
    print(f"at N = 2^26: triton {r['triton/D2D copy'][at]:.3f}x, torch {r['torch/D2D copy'][at]:.3f}x the D2D copy")


main()
