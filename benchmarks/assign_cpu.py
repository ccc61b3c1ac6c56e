"""Scalar writes into views across 1e3..1e7 elements of the tensor: ``x[::2].fill_(v)``,
``x[::-1].fill_(v)``, ``x[::2] = v``, ``x[1:-1] = v`` (1-D), ``x2[:, 0] = v`` (a column),
``x2[:, :k // 2] = v`` (half of each row) and ``x2.diagonal().fill_(v)`` of a square ``x2``,
float32 / int64 / float16, against NumPy's ``fill`` / assignment on the same views (best of
~0.05 s of batches each). Prints each case, then the geometric mean and the worst tensorlib /
NumPy per size.

    PYTHONPATH=src python benchmarks/assign_cpu.py [--sizes 1e3,1e5] [--dtypes float32]
"""
import math

import numpy as np

import tensorlib as tl
from _ratios import run_cases  # benchmarks/_ratios.py


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


if __name__ == "__main__":
    run_cases(__doc__, cases, "float32,int64,float16")
