"""do_bench's repeatability at 2^16 (a ~5 us kernel), on Triton's side:
    python3 bench/triton/_do_bench_repeat.py
Not a reference script (the leading _ keeps it out of run-all's list). Prints, for Triton's vector
add of 2^16 floats: triton.testing.do_bench's median twice in a row, four times; then the median
of a plain loop of 1000 repetitions (256 MB flush, start event, the kernel, end event) twice in a
row, four times each after: nothing, 5000 warm-up launches, 1000 flushed warm-up launches, a 0.2 s
pause. bench/results/h100.md has what it showed: Triton's do_bench pairs
1.2-24.6 % apart, the plain loop's 0.0-2.4 %.
"""
import statistics
import time

import torch
import triton
import triton.language as tl


@triton.jit
def add(x, y, o, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    m = offs < n
    tl.store(o + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


n = 1 << 16
x = torch.rand(n, device="cuda")
y = torch.rand(n, device="cuda")
o = torch.empty_like(x)


def fn():
    add[(n // 1024,)](x, y, o, n, B=1024)


fn()
torch.cuda.synchronize()
for _ in range(4):
    a = triton.testing.do_bench(fn, return_mode="median")
    b = triton.testing.do_bench(fn, return_mode="median")
    print(f"triton.testing.do_bench, 2^16, median: {a*1e3:.2f} us and {b*1e3:.2f} us, "
          f"{abs(a-b)/min(a,b)*100:.1f}% apart", flush=True)

cache = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(1000)]


def timed():
    for s, e in events:
        cache.zero_()
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return statistics.median([s.elapsed_time(e) for s, e in events]) * 1e3


def warm(k, flush):
    for _ in range(k):
        if flush:
            cache.zero_()
        fn()


def pause():
    torch.cuda.synchronize()
    time.sleep(0.2)


for name, before in (("no warmup", lambda: None), ("5000 warmup launches, no flush", lambda: warm(5000, False)),
                     ("1000 warmup launches, each after a flush", lambda: warm(1000, True)), ("sleep 0.2 s", pause)):
    pairs = []
    for _ in range(4):
        before()
        a = timed()
        before()
        b = timed()
        pairs.append(f"{a:.2f}/{b:.2f} ({abs(a-b)/min(a,b)*100:.1f}%)")
    print(f"1000-repetition loop, {name:42s} " + "  ".join(pairs), flush=True)
