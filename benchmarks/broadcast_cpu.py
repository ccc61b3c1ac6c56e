"""Broadcasts and joins along an inner axis across 1e3..1e7 output elements of a square float32
matrix X (k x k): ``X - X.mean(1, keepdims=True)``-style column operands (``X - col``,
``where(col > 0.5, X, 0)``), a row operand (``X * row``), outer products and differences
(``a[:, None] * b``, ``a[:, None] - b``), and ``concat([X, half], axis=1)`` /
``stack([X, X], axis=1)``, against NumPy (best of ~0.05 s of batches each). Prints each case,
then the geometric mean and the worst tensorlib / NumPy per size.

    PYTHONPATH=src python benchmarks/broadcast_cpu.py [--sizes 1e3,1e5] [--dtypes float32]
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
    """(name, tensorlib call, NumPy call) with about ``size`` output elements."""
    k = max(2, math.isqrt(int(size)))
    rng = np.random.default_rng(0)
    x = rng.random((k, k)).astype(dt)
    a, b = rng.random(k).astype(dt), rng.random(k).astype(dt)
    col, row = x.mean(1, keepdims=True).astype(dt), x.mean(0, keepdims=True).astype(dt)
    half = rng.random((k, k // 2)).astype(dt)
    X, A, B, C, R, H = (tl.asarray(v) for v in (x, a, b, col, row, half))
    Ac, Br, ac, br = A[:, None], B[None, :], a[:, None], b[None, :]
    return [
        ("X - col", lambda: X - C, lambda: x - col),
        ("where(col > .5, X, 0)", lambda: tl.where(C > 0.5, X, 0.0),
         lambda: np.where(col > 0.5, x, dt(0))),
        ("X * row", lambda: X * R, lambda: x * row),
        ("a[:, None] * b", lambda: Ac * Br, lambda: ac * br),
        ("a[:, None] - b", lambda: Ac - Br, lambda: ac - br),
        ("concat([X, half], axis=1)", lambda: tl.concat([X, H], axis=1),
         lambda: np.concatenate([x, half], axis=1)),
        ("stack([X, X], axis=1)", lambda: tl.stack([X, X], axis=1),
         lambda: np.stack([x, x], axis=1)),
    ]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="1e3,1e4,1e5,1e6,1e7")
    p.add_argument("--dtypes", default="float32,float64")
    args = p.parse_args()
    sizes = [float(s) for s in args.sizes.split(",")]
    rows = []  # (name, dtype, size, tensorlib us, NumPy us)
    for size in sizes:
        for dt in args.dtypes.split(","):
            for name, ours, theirs in cases(size, np.dtype(dt).type):
                row = (name, dt, size, best_us(ours), best_us(theirs))
                rows.append(row)
                print(f"{name:26s} {dt:8s} {size:7.0e} {row[3]:9.1f} {row[4]:9.1f} us "
                      f"{row[3] / row[4]:6.2f}x", flush=True)
    for size in sizes:
        sel = [r for r in rows if r[2] == size]
        geo = math.exp(sum(math.log(r[3] / r[4]) for r in sel) / len(sel))
        worst = max(sel, key=lambda r: r[3] / r[4])
        print(f"{size:7.0e} geomean {geo:5.2f} worst {worst[3] / worst[4]:5.2f} "
              f"({worst[0]} {worst[1]}: {worst[3]:.1f} vs {worst[4]:.1f} us)")


if __name__ == "__main__":
    main()
