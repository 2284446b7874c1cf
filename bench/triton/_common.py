"""Shared by the Triton reference scripts (bench/triton/*.py; run-all skips files starting with _).

Each script runs Triton's version of a tile GPU bench (bench/gpu_*.cpp) and PyTorch's where it
means something, over the same shapes, timed with triton.testing.do_bench (25 ms warm-up, 100 ms
of repetitions, the median: what tile::testing::do_bench and the C++ benches use), prints a
table like tile's and writes <name>.csv into --out DIR, else $TILE_BENCH_DIR, else
bench-results/ (where the C++ benches write theirs).
"""
import argparse
import math
import os
import sys


def setup(script):
    """(torch, triton, out_dir) — or prints why the script skipped and exits 0: no PyTorch, no
    Triton, or no CUDA device, as the C++ GPU benches do."""
    parser = argparse.ArgumentParser(description=script)
    parser.add_argument("--out", default=None, help="where the CSV goes (default $TILE_BENCH_DIR or bench-results)")
    args, _ = parser.parse_known_args()
    try:
        import torch
        import triton
    except ImportError as e:
        print(f"{script}: skipped, no PyTorch or Triton ({e})")
        sys.exit(0)
    if not torch.cuda.is_available():
        print(f"{script}: skipped, no CUDA device (torch.cuda.is_available() is False)")
        sys.exit(0)
    out = args.out or os.environ.get("TILE_BENCH_DIR") or "bench-results"
    os.makedirs(out, exist_ok=True)
    print(f"{script} on {torch.cuda.get_device_name()}: triton {triton.__version__}, torch {torch.__version__}")
    return torch, triton, out


def load_script(name):
    """Imports bench/triton/NAME.py without running its main() (its module body calls main()), for
    the helper scripts that reuse a reference script's kernels."""
    here = os.path.dirname(os.path.abspath(__file__))
    src = open(os.path.join(here, name + ".py")).read().replace("\nmain()\n", "\n")
    mod = type(sys)(name)
    mod.__file__ = os.path.join(here, name + ".py")
    exec(compile(src, mod.__file__, "exec"), mod.__dict__)
    return mod


def median_ms(fn):
    """The median of triton.testing.do_bench (its L2 flush and CUDA events included)."""
    import triton.testing
    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")


def gbps(nbytes, ms):
    return nbytes / (ms * 1e-3) / 1e9


def _fmt_column(values):
    """Like tile's tables: integers as such, else enough decimals for three significant digits."""
    finite = [v for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
    if all(float(v).is_integer() and abs(v) < 1e15 for v in finite):
        decimals = 0
    else:
        smallest = min((abs(v) for v in finite if v != 0), default=1.0)
        decimals = max(0, min(6, 2 - math.floor(math.log10(smallest))))
    return ["NaN" if not (isinstance(v, (int, float)) and math.isfinite(v)) else f"{v:.{decimals}f}" for v in values]


def report(name, x_name, xs, columns, ratios, out_dir):
    """Prints `name:` and an aligned table (x, every column, then each ratio a/b for (a, b) in
    `ratios`) and writes out_dir/name.csv. columns: {column name: [value per x]}."""
    cols = dict(columns)
    for a, b in ratios:
        cols[f"{a}/{b}"] = [x / y if y and math.isfinite(x) and math.isfinite(y) else float("nan")
                            for x, y in zip(columns[a], columns[b])]
    header = [x_name] + list(cols)
    body = [_fmt_column(list(xs))] + [_fmt_column(v) for v in cols.values()]
    rows = [[body[c][i] for c in range(len(header))] for i in range(len(xs))]
    widths = [max(len(h), *(len(r[c]) for r in rows)) for c, h in enumerate(header)]
    print(f"{name}:")
    for r in [header] + rows:
        print("  ".join(s.rjust(w) for s, w in zip(r, widths)).rstrip())
    path = os.path.join(out_dir, f"{name}.csv")
    with open(path, "w") as f:
        f.write(",".join(f'"{h}"' if "," in h else h for h in header) + "\n")
        for i, x in enumerate(xs):
            vals = [x] + [v[i] for v in cols.values()]
            f.write(",".join("" if not math.isfinite(v) else repr(float(v)) if not float(v).is_integer() else str(int(v))
                             for v in vals) + "\n")
    print(f"wrote {path}")
    return cols
