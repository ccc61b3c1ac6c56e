"""Scalar writes into views across 1e3..1e7 elements of the tensor: ``x[::2].fill_(v)``,
``x[::-1].fill_(v)``, ``x[::2] = v``, ``x[1:-1] = v`` (1-D), ``x2[:, 0] = v`` (a column),
``x2[:, :k // 2] = v`` (half of each row) and ``x2.diagonal().fill_(v)`` of a square ``x2``,
float32 / int64 / float16, against NumPy's ``fill`` / assignment on the same views (best of
~0.05 s of batches each). Prints each case, then the geometric mean and the worst tensorlib /
NumPy per size.

    PYTHONPATH=src python benchmarks/assign_cpu.py [--sizes 1e3,1e5] [--dtypes float32]
"""
import argparse
import math
import time

import numpy as np

import tensorlib as tl


def best_us(f, budget=0.05):
    f()  # warm: compiles, or loads from disk
    start = time.perf_counter()
    f()
    number = max(1, int(0.01 / max(time.perf_counter() - start, 1e-7)))
    best, spent = math.inf, 0.0
    while spent < budget:
        start = time.perf_counter()
        for _ in range(number):
            f()
        took = time.perf_counter() - start
        spent += took
        best = min(best, took / number)
    return best * 1e6


def cases(size, dt):
    """(name, tensorlib call, NumPy call) over fresh data of ``size`` elements."""
    a = (np.arange(int(size)) % 100).astype(dt)
    k = max(2, int(math.isqrt(int(size))))
    a2 = (np.arange(k * k) % 100).astype(dt).reshape(k, k)
    x, x2 = tl.asarray(a.copy()), tl.asarray(a2.copy())
    half = (slice(None), slice(0, k // 2))
    return [
        ("x[::2].fill_(3)", lambda: x[::2].fill_(3), lambda: a[::2].fill(3)),
        ("x[::-1].fill_(3)", lambda: x[::-1].fill_(3), lambda: a[::-1].fill(3)),
        ("x[::2] = 3", lambda: x.__setitem__(slice(None, None, 2), 3),
         lambda: a.__setitem__(slice(None, None, 2), 3)),
        ("x[1:-1] = 3", lambda: x.__setitem__(slice(1, -1), 3),
         lambda: a.__setitem__(slice(1, -1), 3)),
        ("x2[:, 0] = 3", lambda: x2.__setitem__((slice(None), 0), 3),
         lambda: a2.__setitem__((slice(None), 0), 3)),
        ("x2[:, :k//2] = 3", lambda: x2.__setitem__(half, 3), lambda: a2.__setitem__(half, 3)),
        ("x2.diagonal().fill_(3)", lambda: x2.diagonal().fill_(3),
         lambda: np.fill_diagonal(a2, 3)),
    ]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="1e3,1e4,1e5,1e6,1e7")
    p.add_argument("--dtypes", default="float32,int64,float16")
    args = p.parse_args()
    sizes = [float(s) for s in args.sizes.split(",")]
    rows = []  # (name, dtype, size, tensorlib us, NumPy us)
    for size in sizes:
        for dt in args.dtypes.split(","):
            for name, ours, theirs in cases(size, dt):
                row = (name, dt, size, best_us(ours), best_us(theirs))
                rows.append(row)
                print(f"{name:24s} {dt:8s} {size:7.0e} {row[3]:9.1f} {row[4]:9.1f} us "
                      f"{row[3] / row[4]:6.2f}x", flush=True)
    for size in sizes:
        sel = [r for r in rows if r[2] == size]
        geo = math.exp(sum(math.log(r[3] / r[4]) for r in sel) / len(sel))
        worst = max(sel, key=lambda r: r[3] / r[4])
        print(f"{size:7.0e} geomean {geo:5.2f} worst {worst[3] / worst[4]:5.2f} "
              f"({worst[0]} {worst[1]}: {worst[3]:.1f} vs {worst[4]:.1f} us)")


if __name__ == "__main__":
    main()
