"""Copies into short rows across 1e3..1e7 output elements: ``tl.repeat(x, r)`` (r = 2, 3, 8,
12, 15) and ``y[:, 2:2 + w].contiguous()`` of a 16-wide matrix (w = 3, 9, 12), float32 /
int64 / int16, against NumPy's ``repeat`` / ``ascontiguousarray`` (best of ~0.06 s of batches
each). Prints the geometric mean and the worst tensorlib / NumPy per kind and size.

    PYTHONPATH=src python benchmarks/short_rows_cpu.py
"""
import math
import time

import numpy as np

import tensorlib as tl

SIZES = (1e3, 1e4, 1e5, 1e6, 1e7)


def best_us(f, budget=0.06):
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


def main():
    rows = []  # (kind, dtype, r or w, size, tensorlib us, NumPy us)
    for size in SIZES:
        for dt in ("float32", "int64", "int16"):
            for r in (2, 3, 8, 12, 15):
                a = (np.arange(max(1, int(size / r))) % 1000).astype(dt)
                x = tl.asarray(a)
                rows.append(("repeat", dt, r, size, best_us(lambda: tl.repeat(x, r)),
                             best_us(lambda: np.repeat(a, r))))
            for w in (3, 9, 12):
                b = (np.arange(max(1, int(size / w)) * 16) % 1000).astype(dt).reshape(-1, 16)
                y = tl.asarray(b)
                rows.append(("colslice", dt, w, size,
                             best_us(lambda: y[:, 2:2 + w].contiguous()),
                             best_us(lambda: np.ascontiguousarray(b[:, 2:2 + w]))))
    for kind in ("repeat", "colslice"):
        for size in SIZES:
            sel = [r for r in rows if r[0] == kind and r[3] == size]
            geo = math.exp(sum(math.log(r[4] / r[5]) for r in sel) / len(sel))
            worst = max(sel, key=lambda r: r[4] / r[5])
            print(f"{kind:8s} {size:7.0e} geomean {geo:5.2f} worst {worst[4] / worst[5]:5.2f} "
                  f"({worst[1]} {worst[2]}: {worst[4]:.1f} vs {worst[5]:.1f} us)")


if __name__ == "__main__":
    main()
