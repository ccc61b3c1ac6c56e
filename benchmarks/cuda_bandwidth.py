"""Memory bandwidth on the GPU: tensorlib's pointwise add and sum reduction against a
device-to-device copy, in GB/s.

Run: python benchmarks/cuda_bandwidth.py [--quick] [--dtypes float32,float16,bfloat16]
                                         [--sizes 1048576,...] [--json out.json]

For each size (elements) and dtype: ``tl.add(x, y, out=z)`` (moves 3 n bytes-per-element),
``tl.sum(x)`` (n plus one element), and ``cuMemcpyAsync`` device to device of the same n
elements (reads and writes: 2 n), the practical roofline of a streaming kernel. Each is timed
by tensorlib's benchmarker (``tensorlib.kernels.cuda.autotune.benchmark``: timing events on the
current stream, a 256 MiB L2 flush before each rep, warm-up, median). GB/s = bytes moved /
median time; the "of copy" columns are each op's GB/s over the copy's. Small sizes include
the op's Python dispatch when it outlasts the flush (what a caller sees).

Without a CUDA GPU it prints ``no CUDA GPU present: skipped`` and exits 0.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

os.environ["TENSORLIB_CUDA_BACKEND"] = "real"  # a benchmark means a GPU, never the interpreter
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

SIZES = [1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28]


def _parse_sizes(text):
    try:
        sizes = [int(s) for s in text.split(",")]
        if min(sizes) < 1:
            raise ValueError
    except ValueError:
        raise SystemExit(f"cuda_bandwidth: --sizes: expected positive element counts, got "
                         f"{text!r}") from None
    return sizes


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="two sizes, float32 only")
    ap.add_argument("--dtypes", default=None, help="comma list, default float32,float16")
    ap.add_argument("--sizes", default=None, help="comma list of element counts")
    ap.add_argument("--budget-ms", type=float, default=100.0, help="timing budget per op")
    ap.add_argument("--json", default=None, help="also write the rows to this file")
    args = ap.parse_args(argv)

    from _gpu import gpu_unavailable  # benchmarks/_gpu.py
    code = gpu_unavailable("cuda_bandwidth")
    if code is not None:
        return code
    import tensorlib as tl
    import numpy as np
    from tensorlib.kernels.cuda import autotune as A
    from tensorlib.runtime.cuda import context
    from tensorlib.runtime.cuda.streams import current_handle

    names = (args.dtypes or ("float32" if args.quick else "float32,float16")).split(",")
    for name in names:
        if not hasattr(tl, name):
            raise SystemExit(f"cuda_bandwidth: --dtypes: unknown dtype {name!r}")
    sizes = (_parse_sizes(args.sizes) if args.sizes else
             [1 << 22, 1 << 26] if args.quick else SIZES)
    driver = context.require("cuda_bandwidth")
    props = tl.cuda.get_device_properties()
    print(f"device: {props.name} (sm_{props.major}{props.minor}, L2 "
          f"{props.L2_cache_size >> 20} MiB)")
    head = (f"{'dtype':9} {'elements':>11} {'MiB':>7} {'copy GB/s':>10} {'add GB/s':>9} "
            f"{'of copy':>8} {'sum GB/s':>9} {'of copy':>8}")
    print(head)
    print("-" * len(head))
    rows = []
    rng = np.random.default_rng(0)
    for name in names:
        dt = getattr(tl, name)
        for n in sizes:
            host = rng.uniform(-1, 1, size=n).astype(np.float32)
            x = tl.asarray(host, device="cuda").astype(dt)
            y = tl.asarray(host[::-1].copy(), device="cuda").astype(dt)
            z = tl.empty((n,), dtype=dt, device="cuda")
            nbytes = n * dt.itemsize
            src, dst = x.data_ptr(), z.data_ptr()
            dev = tl.cuda.current_device()

            def copy():
                driver.memcpy_async(dst, src, nbytes, current_handle(dev), "d2d")
            t_copy = A.benchmark(copy, budget_ms=args.budget_ms).median_ms
            t_add = A.benchmark(lambda: tl.add(x, y, out=z), budget_ms=args.budget_ms).median_ms
            t_sum = A.benchmark(lambda: tl.sum(x), budget_ms=args.budget_ms).median_ms
            gb = lambda moved, ms: moved / ms / 1e6  # noqa: E731  (bytes / ms -> GB/s)
            row = {"dtype": name, "elements": n, "copy_gbs": gb(2 * nbytes, t_copy),
                   "add_gbs": gb(3 * nbytes, t_add), "sum_gbs": gb(nbytes, t_sum),
                   "copy_ms": t_copy, "add_ms": t_add, "sum_ms": t_sum}
            row["add_of_copy"] = row["add_gbs"] / row["copy_gbs"]
            row["sum_of_copy"] = row["sum_gbs"] / row["copy_gbs"]
            rows.append(row)
            print(f"{name:9} {n:>11} {nbytes / 2**20:>7.1f} {row['copy_gbs']:>10.0f} "
                  f"{row['add_gbs']:>9.0f} {row['add_of_copy']:>8.2f} {row['sum_gbs']:>9.0f} "
                  f"{row['sum_of_copy']:>8.2f}", flush=True)
            x = y = z = None   # free before the next size allocates
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": props.name, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
