"""Broadcasts and joins along an inner axis across 1e3..1e7 output elements of a square float32
matrix X (k x k): ``X - X.mean(1, keepdims=True)``-style column operands (``X - col``,
``where(col > 0.5, X, 0)``), a row operand (``X * row``), outer products and differences
(``a[:, None] * b``, ``a[:, None] - b``), and ``concat([X, half], axis=1)`` /
``stack([X, X], axis=1)``, against NumPy (best of ~0.05 s of batches each). Prints each case,
then the geometric mean and the worst tensorlib / NumPy per size.

    PYTHONPATH=src python benchmarks/broadcast_cpu.py [--sizes 1e3,1e5] [--dtypes float32]
"""
import math

import numpy as np

import tensorlib as tl
from _ratios import run_cases  # benchmarks/_ratios.py


def cases(size, dt):
    """(name, tensorlib call, NumPy call) with about ``size`` output elements."""
    dt = np.dtype(dt).type
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


if __name__ == "__main__":
    run_cases(__doc__, cases, "float32,float64")
