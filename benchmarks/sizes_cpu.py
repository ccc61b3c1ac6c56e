"""tensorlib / NumPy across sizes 1e3..1e7 (float32), quiet or with a busy loop beside it.

    python benchmarks/sizes_cpu.py [--busy] [--only name,name]

Per op and size: the median over 5 interleaved rounds of tensorlib's time over NumPy's, the
worst round's ratio, and tensorlib's best time. Ops: tanh, exp, sin, sum, max, argmax, sort
and argsort (against NumPy's default sort / argsort; tensorlib's are stable), add, log (of
positive values), pow by 2.5, 2 and 2.7 (of positive values), std, take by n random int64
indices, cross_entropy forward + backward on (N, 10) against the same step written in NumPy,
pow by -1 and 0.5, dot, norm, clip to [-1, 1], count_nonzero of a mask,
``x[1:] - x[:-1]`` (fresh views each call), and in place: ``x += y``, ``x += 0.5`` and
``m += row`` (rows of 100). ``--only a,b`` measures those cases alone. ``--busy`` runs one
busy-loop process beside the measurement (what a laptop, CI runner or worker pool sees). Not
a test: ratios for the issue notes.
"""
from __future__ import annotations

import subprocess
import sys
import time

import numpy as np

import tensorlib as tl

SIZES = (1_000, 10_000, 100_000, 1_000_000, 10_000_000)


def _np_cross_entropy(x, y):
    z = x - x.max(1, keepdims=True)
    e = np.exp(z)
    s = e.sum(1, keepdims=True)
    loss = np.mean(np.log(s[:, 0]) - z[np.arange(len(y)), y])
    g = e / s
    g[np.arange(len(y)), y] -= 1
    return loss, g / len(y)


def _cases(rng, n):
    a = (rng.random(n) * 4 - 2).astype(np.float32)
    t = tl.asarray(a)
    cases = {name: (lambda f=fn: f(a), lambda f=ft: f(t)) for name, (fn, ft) in {
        "tanh": (np.tanh, tl.tanh), "exp": (np.exp, tl.exp), "sin": (np.sin, tl.sin),
        "sum": (np.sum, tl.sum), "max": (np.max, tl.max), "argmax": (np.argmax, tl.argmax),
        "sort": (np.sort, tl.sort), "argsort": (np.argsort, tl.argsort),
        "add": (lambda x: x + x, lambda x: x + x)}.items()}
    pos = np.abs(a) + np.float32(1e-3)
    tp = tl.asarray(pos)
    cases["log"] = (lambda: np.log(pos), lambda: tl.log(tp))
    # pow by a Python scalar: a half-integer (vector_math.pow_halves_f32) and a general one
    for e in (2.5, 2, 2.7):
        cases[f"pow {e}"] = (lambda e=e: pos ** np.float32(e), lambda e=e: tp ** e)
    cases["std"] = (lambda: np.std(a), lambda: tl.std(t))
    idn = rng.integers(0, n, n)
    idx = tl.asarray(idn)
    cases["take"] = (lambda: np.take(a, idn), lambda: tl.take(t, idx))
    xn = rng.standard_normal((n // 10, 10)).astype(np.float32)
    yn = rng.integers(0, 10, n // 10)
    x, y = tl.asarray(xn).requires_grad_(), tl.asarray(yn)

    def ours():
        x.grad = None
        tl.nn.functional.cross_entropy(x, y).backward()
    cases["cross_entropy"] = (lambda: _np_cross_entropy(xn, yn), ours)
    for e in (-1, 0.5):  # NumPy's fast scalar powers (ops.yaml value forms here)
        cases[f"pow {e}"] = (lambda e=e: pos ** e, lambda e=e: tp ** e)
    bn2 = (a * 0.5).astype(np.float32)
    tb2 = tl.asarray(bn2)
    cases["dot"] = (lambda: a @ bn2, lambda: t @ tb2)
    cases["norm"] = (lambda: np.linalg.norm(a), lambda: tl.linalg.vector_norm(t))
    cases["clip"] = (lambda: np.clip(a, -1.0, 1.0), lambda: tl.clip(t, -1.0, 1.0))
    mask, tmask = a > 0, t > 0
    cases["count_nonzero"] = (lambda: np.count_nonzero(mask), lambda: tl.count_nonzero(tmask))
    # neighbour differences through fresh views each call (np.diff's arithmetic)
    cases["x[1:] - x[:-1]"] = (lambda: a[1:] - a[:-1], lambda: t[1:] - t[:-1])
    # in place: each side accumulates into arrays of its own (the values stay finite)
    acc, an, bn = tl.asarray(a.copy()), a.copy(), (a * 0.5).astype(np.float32)
    b = tl.asarray(bn)
    cases["x += y"] = (lambda: an.__iadd__(bn), lambda: acc.__iadd__(b))
    cases["x += 0.5"] = (lambda: an.__iadd__(0.5), lambda: acc.__iadd__(0.5))
    mn, rown = a.reshape(-1, 100).copy(), bn[:100].copy()
    m, row = tl.asarray(mn.copy()), tl.asarray(rown)
    cases["m += row"] = (lambda: mn.__iadd__(rown), lambda: m.__iadd__(row))
    return cases


def main() -> int:
    busy = None
    if "--busy" in sys.argv:
        busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        rng = np.random.default_rng(0)
        rows = {}
        only = sys.argv[sys.argv.index("--only") + 1].split(",") if "--only" in sys.argv else None
        for n in SIZES:
            for name, (fn, ft) in _cases(rng, n).items():
                if only is not None and name not in only:
                    continue
                reps = max(1, int((3e5 if name in ("sort", "argsort") else 3e6) // n))
                fn(), ft(), ft()
                rn, rt = [], []
                for _ in range(5):
                    for f, out in ((fn, rn), (ft, rt)):
                        s = time.perf_counter()
                        for _ in range(reps):
                            f()
                        out.append((time.perf_counter() - s) / reps)
                ratios = [t / q for t, q in zip(rt, rn)]
                rows.setdefault(name, []).append(
                    f"{sorted(rt)[2] / sorted(rn)[2]:5.2f} ({max(ratios):5.2f}) {min(rt) * 1e6:9.1f}us")
        print(f"tensorlib / numpy, median (worst round) and tensorlib's best, float32, "
              f"{'one busy loop beside' if busy else 'quiet'}; sizes {SIZES}")
        for name, cells in rows.items():
            print(f"  {name:14s}" + " | ".join(cells))
    finally:
        if busy is not None:
            busy.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
