"""Big ops called after an idle pause (a script doing I/O or printing between ops, an
interactive session, a Dask task arriving): tensorlib against NumPy (and PyTorch-CPU when
installed), per pause length.

    PYTHONPATH=src python benchmarks/idle_gaps_cpu.py [--gaps 0,0.001,0.01,0.1] [--reps 7]
    OMP_WAIT_POLICY=passive PYTHONPATH=src python benchmarks/idle_gaps_cpu.py   # the other policy

Before each timed call the process sleeps for the pause; the figures are the median call
time and the ratio of the means too (a stall in one call of seven shows in the mean). The
pause-0 column is a burst of calls right after the previous column's pauses.
Back-to-back benchmarks (pause 0) keep the OpenMP team of the parallel kernels spinning; after
a longer pause its threads sleep, and waking them can cost more than the op (measured on a
2-vCPU VM: ~7 ms after pauses of 20 ms and more with libgomp's default wait policy, for
tensorlib's parallel kernels and PyTorch's alike; see docs/benchmarks.md). The policy in force
is printed: libgomp reads OMP_WAIT_POLICY / GOMP_SPINCOUNT when it loads, so set them in the
environment of the run.
"""
from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np

import tensorlib as tl
from tensorlib.bench.impls import optional_module

torch = optional_module("torch")  # an optional baseline column, when installed


def _cases(n, rng):
    a = rng.random(n).astype(np.float32)
    b = rng.random(n).astype(np.float32)
    ta, tb = tl.asarray(a), tl.asarray(b)
    idx = rng.integers(0, n, n)
    tidx = tl.asarray(idx)
    rows = a.reshape(-1, 500)
    trows = tl.asarray(rows)
    cases = {
        "add": (lambda: ta + tb, lambda: a + b),
        "multiply scalar": (lambda: ta * 3.0, lambda: a * np.float32(3.0)),
        "exp": (lambda: tl.exp(ta), lambda: np.exp(a)),
        "sum": (lambda: tl.sum(ta), lambda: a.sum()),
        "max": (lambda: tl.max(ta), lambda: a.max()),
        "take": (lambda: ta[tidx], lambda: a[idx]),
        "boolean mask": (lambda: ta[ta > 0.5], lambda: a[a > 0.5]),
        "softmax rows": (lambda: tl.softmax(trows, axis=-1),
                         lambda: (e := np.exp(rows - rows.max(-1, keepdims=True)))
                         / e.sum(-1, keepdims=True)),
        "transpose copy": (lambda: trows.T.contiguous(), lambda: np.ascontiguousarray(rows.T)),
    }
    if torch is not None:
        pa, pb = torch.from_numpy(a), torch.from_numpy(b)
        pidx, prows = torch.from_numpy(idx), torch.from_numpy(rows)
        extra = {"add": lambda: pa + pb, "multiply scalar": lambda: pa * 3.0,
                 "exp": lambda: torch.exp(pa), "sum": lambda: pa.sum(), "max": lambda: pa.max(),
                 "take": lambda: pa[pidx], "boolean mask": lambda: pa[pa > 0.5],
                 "softmax rows": lambda: torch.softmax(prows, -1),
                 "transpose copy": lambda: prows.T.contiguous()}
        cases = {k: v + (extra[k],) for k, v in cases.items()}
    return cases


def _after(fn, gap, reps):
    """(median, mean) seconds of ``reps`` calls of ``fn``, each after a pause of ``gap`` s
    (none: a burst of calls, the first after the previous column's pauses)."""
    times = []
    for _ in range(reps):
        if gap:
            time.sleep(gap)
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), float(np.mean(times))


def _geomean(r):
    return math.exp(sum(map(math.log, r)) / len(r))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gaps", default="0,0.001,0.01,0.1", help="pauses in seconds")
    ap.add_argument("--sizes", default="3e5,2e6")
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args(argv)
    gaps = [float(g) for g in args.gaps.split(",")]
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    policy = ", ".join(f"{k}={os.environ[k]}" for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")
                       if k in os.environ) or "libgomp's default"
    print(f"OpenMP wait policy: {policy}; {os.cpu_count()} CPUs; float32; median of "
          f"{args.reps} calls, each after the pause")
    head = "  ".join(["tensorlib", "numpy"] + (["torch"] if torch is not None else []))
    rng = np.random.default_rng(0)
    ratios = {g: ([], []) for g in gaps}  # tensorlib / numpy of the medians, of the means
    for n in sizes:
        cases = _cases(n, rng)
        for fns in cases.values():
            for fn in fns:
                for _ in range(20):
                    fn()  # compiled, the team started
        print(f"\n{n:.0e} elements   pause -> median us: {head}   (tensorlib / numpy; of the "
              f"means)")
        for name, fns in cases.items():
            cells = []
            for gap in gaps:
                t = [_after(fn, gap, args.reps) for fn in fns]
                med, mean = t[0][0] / t[1][0], t[0][1] / t[1][1]
                ratios[gap][0].append(med)
                ratios[gap][1].append(mean)
                cells.append(f"{gap * 1e3:g} ms: " + " / ".join(f"{x[0] * 1e6:.0f}" for x in t)
                             + f" ({med:.2f}; {mean:.2f})")
            print(f"  {name:16s} " + "   ".join(cells))
    print("\ntensorlib / numpy per pause, geomean / worst, of the medians; of the means:")
    for gap in gaps:
        med, mean = ratios[gap]
        print(f"  {gap * 1e3:g} ms: {_geomean(med):.2f} / {max(med):.2f}; "
              f"{_geomean(mean):.2f} / {max(mean):.2f}")


if __name__ == "__main__":
    main()
