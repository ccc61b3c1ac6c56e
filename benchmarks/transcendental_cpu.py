"""Transcendental pointwise ops on the CPU: tensorlib against NumPy, per function, dtype, size.

    PYTHONPATH=src python benchmarks/transcendental_cpu.py [--sizes 1e5,2e6] [--repeat 15]
        [--funcs exp,log,...] [--dtypes float32,float64] [--threads 1]

Each (function, dtype, size): both implementations run once to compile / warm, then their
timings are interleaved (tensorlib, NumPy, tensorlib, ...) ``--repeat`` times, in one process;
each call allocates its result (``tl.exp(x)`` against ``np.exp(x)``). The table shows the best
and the median of each and two ratios tensorlib / NumPy (< 1: tensorlib is faster): ``typ`` of
the medians and ``best`` of the best times; the summary gives their geometric means and the
worst case. ``--threads 1`` (the default) keeps tensorlib's parallel variant (above 32 K
elements) on one thread, for a per-core comparison with NumPy's single-threaded ufuncs (0:
tensorlib's default thread count). Inputs: uniform over a range where the function is
interesting (log / log1p / pow bases: positive). NumPy has no sigmoid: its row times the
composed ``1 / (1 + np.exp(-x))``; nor erf: its rows are skipped. ``pow2.5`` is ``x ** 2.5``
(a Python-scalar exponent), ``pow`` is ``x ** y`` on two arrays, ``atan2`` takes two arrays.
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

import tensorlib as tl

RANGES = {"exp": (-10, 10), "log": (0.01, 100), "sin": (-10, 10), "cos": (-10, 10),
          "tan": (-10, 10), "tanh": (-5, 5), "expm1": (-5, 5), "log1p": (0, 10),
          "sigmoid": (-10, 10), "sqrt": (0, 100), "pow2.5": (0.01, 10), "pow": (0.01, 10),
          "atan2": (-10, 10), "erf": (-4, 4), "exp2": (-20, 20), "log2": (0.01, 100),
          "log10": (0.01, 100), "sinh": (-10, 10), "cosh": (-10, 10), "asinh": (-10, 10),
          "acosh": (1, 100), "atanh": (-0.99, 0.99), "asin": (-1, 1), "acos": (-1, 1),
          "atan": (-10, 10)}
BINARY = {"pow": (-4, 4), "atan2": (-10, 10)}   # second operand's range


def _np_fn(name):
    if name == "sigmoid":
        def sig(x, y):
            e = np.exp(np.negative(x))
            return np.divide(1.0, np.add(1.0, e, out=e), out=e)
        return sig
    if name == "pow2.5":
        return lambda x, y: x ** 2.5
    if name == "pow":
        return lambda x, y: np.power(x, y)
    if name == "atan2":
        return lambda x, y: np.arctan2(x, y)
    f = getattr(np, name, None)
    return None if f is None else (lambda x, y: f(x))


def _tl_fn(name):
    if name == "pow2.5":
        return lambda x, y: x ** 2.5
    if name == "pow":
        return lambda x, y: tl.pow(x, y)
    if name == "atan2":
        return lambda x, y: tl.atan2(x, y)
    f = getattr(tl, name)
    return lambda x, y: f(x)


def _wait_background_compiles():
    """Joins the parallel variants' background compiles (runtime/cpu/cores.py), which would
    otherwise compete with the timed calls."""
    from tensorlib.runtime.cpu import cores
    for t in list(getattr(cores, "_compiling", {}).values()):
        t.join()


def bench(name, dtype, n, repeat):
    rng = np.random.default_rng(0)
    lo, hi = RANGES[name]
    x = rng.uniform(lo, hi, n).astype(dtype)
    y = rng.uniform(*BINARY.get(name, (0, 1)), n).astype(dtype)
    tx, ty = tl.asarray(x), tl.asarray(y)
    tfn = _tl_fn(name)
    nfn = _np_fn(name)
    if nfn is None:
        return None
    for _ in range(3):   # compile; big sizes start the parallel variant's compile
        tfn(tx, ty)
    _wait_background_compiles()
    tfn(tx, ty)
    nfn(x, y)
    tt, tn = [], []
    inner = max(1, int(2e5 // n))  # small sizes: time a batch of calls
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(inner):
            tfn(tx, ty)
        tt.append((time.perf_counter() - t0) / inner)
        t0 = time.perf_counter()
        for _ in range(inner):
            nfn(x, y)
        tn.append((time.perf_counter() - t0) / inner)
    return min(tt), float(np.median(tt)), min(tn), float(np.median(tn))


def _gmean(v):
    return float(np.exp(np.mean(np.log(v))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1e5,2e6")
    ap.add_argument("--funcs", default=",".join(RANGES))
    ap.add_argument("--dtypes", default="float32,float64")
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--threads", type=int, default=1, help="0: tensorlib's default")
    args = ap.parse_args()
    if args.threads:
        from tensorlib.runtime.cpu import cores
        cores.use_threads(args.threads)
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    print(f"# load average {os.getloadavg()[0]:.2f}, "
          f"tensorlib threads: {args.threads or 'default'}")
    print(f"{'func':8s} {'dtype':8s} {'n':>8s} {'tl best':>10s} {'tl med':>10s} "
          f"{'np best':>10s} {'np med':>10s} {'typ':>6s} {'best':>6s}")
    typ, best = [], []
    for name in args.funcs.split(","):
        for dt in args.dtypes.split(","):
            for n in sizes:
                r = bench(name, np.dtype(dt), n, args.repeat)
                if r is None:
                    continue
                tb, tm, nb, nm = r
                typ.append((tm / nm, f"{name} {dt} {n}"))
                best.append(tb / nb)
                print(f"{name:8s} {dt:8s} {n:8d} {tb * 1e6:9.1f}u {tm * 1e6:9.1f}u "
                      f"{nb * 1e6:9.1f}u {nm * 1e6:9.1f}u {tm / nm:6.2f} {tb / nb:6.2f}",
                      flush=True)
    worst = max(typ)
    print(f"geomean tl/np: typical (medians) {_gmean([t for t, _ in typ]):.2f}, "
          f"best times {_gmean(best):.2f}; worst (medians) {worst[0]:.2f} ({worst[1]}); "
          f"load average now {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
