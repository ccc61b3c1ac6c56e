"""Copies into short rows across 1e3..1e7 output elements: ``tl.repeat(x, r)`` (r = 2, 3, 8,
12, 15) and ``y[:, 2:2 + w].contiguous()`` of a 16-wide matrix (w = 3, 9, 12), float32 /
int64 / int16, against NumPy's ``repeat`` / ``ascontiguousarray`` (best of ~0.05 s of batches
each). Prints the geometric mean and the worst tensorlib / NumPy per kind and size.

    PYTHONPATH=src python benchmarks/short_rows_cpu.py
"""
import numpy as np

import tensorlib as tl
from _ratios import best_us, summarize  # benchmarks/_ratios.py

SIZES = (1e3, 1e4, 1e5, 1e6, 1e7)


def main():
    rows = {"repeat": [], "colslice": []}  # (r or w, dtype, size, tensorlib us, NumPy us)
    for size in SIZES:
        for dt in ("float32", "int64", "int16"):
            for r in (2, 3, 8, 12, 15):
                a = (np.arange(max(1, int(size / r))) % 1000).astype(dt)
                x = tl.asarray(a)
                rows["repeat"].append((r, dt, size, best_us(lambda: tl.repeat(x, r)),
                                       best_us(lambda: np.repeat(a, r))))
            for w in (3, 9, 12):
                b = (np.arange(max(1, int(size / w)) * 16) % 1000).astype(dt).reshape(-1, 16)
                y = tl.asarray(b)
                rows["colslice"].append((w, dt, size,
                                         best_us(lambda: y[:, 2:2 + w].contiguous()),
                                         best_us(lambda: np.ascontiguousarray(b[:, 2:2 + w]))))
    for kind, sel in rows.items():
        summarize(sel, SIZES, f"{kind:8s} ")

if __name__ == "__main__":
    main()
