"""Everyday ops over strided views across 1e3..1e7 elements: ``x[::2]`` of a 1-D x, and of a
C-order (n / 100, 100) matrix X the views ``X[:, ::2]`` (one dim of step 2 after coalescing),
``X.T``, ``X[::-1]`` and ``X[:, 1:-1]``, each under pointwise ops (cheap and dear: add,
x * 2.0, abs, less, sqrt, reciprocal, exp, sin), casts and copies (astype float64,
contiguous) and reductions (sum, sum along the last axis, max, argmax), against NumPy on the
same views (best of ~0.05 s of batches each; the views are made once, outside the timing).
Prints each case, then the geometric mean and the worst tensorlib / NumPy per size.

    PYTHONPATH=src python benchmarks/strided_views_cpu.py [--sizes 1e3,1e5] [--dtypes float32]
"""
import numpy as np

import tensorlib as tl
from _ratios import run_cases  # benchmarks/_ratios.py

VIEWS = {
    "x[::2]": lambda m: m.reshape(-1)[::2],
    "X[:, ::2]": lambda m: m[:, ::2],
    "X.T": lambda m: m.T,
    "X[::-1]": lambda m: m[::-1],
    "X[:, 1:-1]": lambda m: m[:, 1:-1],
}


def _warmed(f, calls=40):
    """``f``, called ``calls`` times at its first call: a layout's runner is made at its 32nd
    call (ops/pointwise.HOT_CALLS) and may compile then, which best_us's one warm call would
    leave inside the timing (first calls: benchmarks/cold_start_cpu.py)."""
    todo = [calls]

    def g():
        while todo[0]:
            todo[0] -= 1
            f()
        return f()
    return g


def cases(size, dt):
    """(name, tensorlib call, NumPy call) over views of about ``size`` elements' matrix."""
    npdt = np.dtype(dt).type
    rows = max(2, int(size) // 100)
    rng = np.random.default_rng(0)
    xn = (rng.random((rows, 100)) + 0.5).astype(npdt)
    yn = (rng.random((rows, 100)) + 0.5).astype(npdt)
    x, y = tl.asarray(xn), tl.asarray(yn)
    two = npdt(2.0)
    out = []
    for vname, view in VIEWS.items():
        a, b, an, bn = view(x), view(y), view(xn), view(yn)
        out += [
            (f"{vname} + y", lambda a=a, b=b: a + b, lambda an=an, bn=bn: an + bn),
            (f"{vname} * 2.0", lambda a=a: a * 2.0, lambda an=an: an * two),
            (f"abs({vname})", lambda a=a: tl.abs(a), lambda an=an: np.abs(an)),
            (f"{vname} < y", lambda a=a, b=b: a < b, lambda an=an, bn=bn: an < bn),
            (f"sqrt({vname})", lambda a=a: tl.sqrt(a), lambda an=an: np.sqrt(an)),
            (f"reciprocal({vname})", lambda a=a: tl.reciprocal(a),
             lambda an=an: np.reciprocal(an)),
            (f"exp({vname})", lambda a=a: tl.exp(a), lambda an=an: np.exp(an)),
            (f"sin({vname})", lambda a=a: tl.sin(a), lambda an=an: np.sin(an)),
            (f"{vname}.astype(f64)", lambda a=a: a.astype(tl.float64),
             lambda an=an: an.astype(np.float64)),
            (f"{vname}.contiguous()", lambda a=a: a.contiguous(),
             lambda an=an: np.ascontiguousarray(an)),
            (f"{vname}.sum()", lambda a=a: a.sum(), lambda an=an: an.sum()),
            (f"{vname}.sum(-1)", lambda a=a: a.sum(-1), lambda an=an: an.sum(-1)),
            (f"{vname}.max()", lambda a=a: a.max(), lambda an=an: an.max()),
            (f"{vname}.argmax()", lambda a=a: a.argmax(), lambda an=an: an.argmax()),
        ]
    return [(name, _warmed(ours), theirs) for name, ours, theirs in out]


if __name__ == "__main__":
    run_cases(__doc__, cases, "float32")
