"""Transcendental pointwise ops on the CPU: tensorlib against NumPy, per function, dtype, size.

    PYTHONPATH=src python benchmarks/transcendental_cpu.py [--sizes 1e3,1e5,2e6] [--repeat 15]
        [--funcs exp,log,sin,cos,tanh,expm1,log1p,sigmoid] [--threads 1]

Each (function, dtype, size): both implementations run once to compile / warm, then their
timings are interleaved (tensorlib, NumPy, tensorlib, ...) ``--repeat`` times; the table shows
the best and the median of each and the ratio tensorlib / NumPy of the best (< 1: tensorlib is
faster). ``--threads 1`` keeps tensorlib's parallel variant (above 32 K elements) on one thread,
for a per-core comparison with NumPy's single-threaded ufuncs. Inputs: uniform over a range
where the function is interesting (log / log1p: positive). NumPy has no sigmoid: its row
times the composed ``1 / (1 + np.exp(-x))``.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import tensorlib as tl

RANGES = {"exp": (-10, 10), "log": (0.01, 100), "sin": (-10, 10), "cos": (-10, 10),
          "tanh": (-5, 5), "expm1": (-5, 5), "log1p": (0, 10), "sigmoid": (-10, 10)}


def _np_fn(name):
    if name == "sigmoid":
        return lambda x, out: np.divide(1.0, np.add(1.0, np.exp(np.negative(x, out=out), out=out),
                                                    out=out), out=out)
    f = getattr(np, name)
    return lambda x, out: f(x, out=out)


def bench(name, dtype, n, repeat):
    lo, hi = RANGES[name]
    x = np.random.default_rng(0).uniform(lo, hi, n).astype(dtype)
    tx = tl.asarray(x)
    tfn = getattr(tl, name)
    out_np = np.empty_like(x)
    nfn = _np_fn(name)
    tfn(tx)
    nfn(x, out_np)
    tt, tn = [], []
    inner = max(1, int(2e5 // n))  # small sizes: time a batch of calls
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(inner):
            tfn(tx)
        tt.append((time.perf_counter() - t0) / inner)
        t0 = time.perf_counter()
        for _ in range(inner):
            nfn(x, out_np)
        tn.append((time.perf_counter() - t0) / inner)
    return min(tt), float(np.median(tt)), min(tn), float(np.median(tn))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1e3,1e5,2e6")
    ap.add_argument("--funcs", default=",".join(RANGES))
    ap.add_argument("--dtypes", default="float32,float64")
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--threads", type=int, default=0, help="0: tensorlib's default")
    args = ap.parse_args()
    if args.threads:
        from tensorlib.runtime.cpu import cores
        cores.use_threads(args.threads)
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    print(f"{'func':8s} {'dtype':8s} {'n':>8s} {'tl best':>10s} {'tl med':>10s} "
          f"{'np best':>10s} {'np med':>10s} {'tl/np':>6s}")
    ratios = []
    for name in args.funcs.split(","):
        for dt in args.dtypes.split(","):
            for n in sizes:
                tb, tm, nb, nm = bench(name, np.dtype(dt), n, args.repeat)
                ratios.append(tb / nb)
                print(f"{name:8s} {dt:8s} {n:8d} {tb * 1e6:9.1f}u {tm * 1e6:9.1f}u "
                      f"{nb * 1e6:9.1f}u {nm * 1e6:9.1f}u {tb / nb:6.2f}", flush=True)
    print(f"geomean tl/np (best times): {float(np.exp(np.mean(np.log(ratios)))):.2f}")


if __name__ == "__main__":
    main()
