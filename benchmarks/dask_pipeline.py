"""dask.array on tensorlib chunks against the same pipeline on NumPy chunks (threaded scheduler).

    PYTHONPATH=src python benchmarks/dask_pipeline.py [--n 2e8] [--chunks auto] [--repeat 3]
        [--busy] [--pipelines gauss,arith,trig]

The data: ``n`` float32 standard-normal values in one NumPy array; the tensorlib side wraps the
same memory (``tl.from_numpy``, zero-copy), so both sides read identical bytes and the data is
held once (2e8 float32: 800 MB). ``--chunks auto`` is dask's default chunking (128 MiB
chunks); both sides get the same chunks. Each pipeline is an elementwise chain ending in
reductions, computed with ``dask.compute(..., scheduler="threads")``; dask fuses each chunk's
elementwise tasks, so a task holds the chunk's temporaries only while it runs.

The target (issue 17): the ``gauss`` pipeline on tensorlib chunks takes at most 0.7x the time
of the NumPy one. Every pipeline is checked against NumPy first (relative error of each
result), then timed ``--repeat`` times interleaved (tensorlib, NumPy, tensorlib, ...); the
table shows the best and the median of each and the ratio of the bests. ``--busy`` runs the
timing a second time with a busy-loop process beside it (a machine shared with other work).

Measured 2026-11-25 (2-core VM shared with three other agents' jobs, load average 7-10, so the
process got ~20 % of the CPU; best of 3), ratio tensorlib / NumPy:

    chunks                      gauss   arith   trig
    auto (6 x 128 MiB), run 1   0.54    0.35    0.72    busy loop beside: 0.25 0.38 0.52
    auto (6 x 128 MiB), run 2   0.35    0.43    0.49    busy loop beside: 0.25 0.36 0.46
    4e6 (50 x 16 MB), best of 2 0.62    1.00    1.02

Where tensorlib gains with dask's default chunks: every temporary of a 128 MiB chunk is a
fresh mmap for NumPy (above glibc's largest mmap threshold) whose pages fault in on first
write, while tensorlib's caching allocator hands the same blocks back. Measured on the gauss
pipeline over 2 chunks of 128 MiB (getrusage): the same user time on both sides (0.46-0.51 s),
NumPy 0.26-1.05 s of system time and 5760 page faults, tensorlib none. With 16 MB chunks only
the gauss pipeline (exp + sum/max) stays below 0.7.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

import numpy as np

import dask
import dask.array as da

import tensorlib as tl
from tensorlib.runtime.cpu import cores

TARGET = ("gauss", 0.7)

PIPELINES = {
    # a Gaussian bump plus a linear term, then its total and its peak
    "gauss": lambda x: (lambda y: (y.sum(), y.max()))(da.exp(-0.5 * x * x) + 0.25 * x),
    # arithmetic only: memory-bound passes
    "arith": lambda x: (((x * 2.0 + 1.0) * x).sum(), (x * x).mean()),
    # a trigonometric term
    "trig": lambda x: ((da.sin(x) * x).sum(),),
}


def _compute(outs):
    return dask.compute(*outs, scheduler="threads")


def _values(results):
    return [float(r.numpy() if isinstance(r, tl.Tensor) else r) for r in results]


def _check(name, x_tl, x_np):
    results = _compute(PIPELINES[name](x_tl))
    if not all(isinstance(r, tl.Tensor) for r in results):
        raise SystemExit(f"{name}: the tensorlib side gave {[type(r) for r in results]}")
    got = _values(results)
    want = _values(_compute(PIPELINES[name](x_np)))
    worst = max(abs(g - w) / max(abs(w), 1e-30) for g, w in zip(got, want))
    # float32 sums of 2e8 terms in different orders (blocked vs pairwise) differ at ~1e-6
    if worst > 1e-4:
        raise SystemExit(f"{name}: tensorlib {got} != NumPy {want} (relative error {worst:.1e})")
    return worst


def _time(name, x_tl, x_np, repeat):
    outs = {"tl": PIPELINES[name](x_tl), "np": PIPELINES[name](x_np)}
    times = {"tl": [], "np": []}
    for _ in range(repeat):
        for side in ("tl", "np"):
            t0 = time.perf_counter()
            _compute(outs[side])
            times[side].append(time.perf_counter() - t0)
    return times


def _table(rows, title):
    print(f"\n{title}")
    print(f"{'pipeline':9s} {'tensorlib best':>15s} {'median':>9s} {'NumPy best':>11s} "
          f"{'median':>9s} {'ratio':>7s}  target")
    for name, t in rows:
        ratio = min(t["tl"]) / min(t["np"])
        target = ""
        if name == TARGET[0]:
            target = f"<= {TARGET[1]}: {'met' if ratio <= TARGET[1] else 'NOT met'}"
        print(f"{name:9s} {min(t['tl']):14.3f}s {statistics.median(t['tl']):8.3f}s "
              f"{min(t['np']):10.3f}s {statistics.median(t['np']):8.3f}s {ratio:7.2f}  {target}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=float, default=2e8)
    ap.add_argument("--chunks", default="auto", help="'auto' (dask's 128 MiB) or elements")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--busy", action="store_true", help="also time beside a busy loop")
    ap.add_argument("--pipelines", default=",".join(PIPELINES))
    args = ap.parse_args(argv)
    names = args.pipelines.split(",")
    unknown = [p for p in names if p not in PIPELINES]
    if unknown:
        ap.error(f"unknown pipeline(s) {unknown}; choose from {list(PIPELINES)}")
    n = int(args.n)
    chunks = args.chunks if args.chunks == "auto" else int(float(args.chunks))

    # compile the kernels (parallel variants included) before timing, on a small array with
    # chunks above the parallel threshold
    cores.DEFER_PARALLEL_COMPILE = False
    small = np.random.default_rng(1).standard_normal(1 << 21, dtype=np.float32)
    for name in names:
        _compute(PIPELINES[name](da.from_array(tl.from_numpy(small), chunks=1 << 19)))

    t0 = time.perf_counter()
    a = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
    x_np = da.from_array(a, chunks=chunks, asarray=False)
    x_tl = da.from_array(tl.from_numpy(a), chunks=chunks, asarray=False)
    assert type(x_tl._meta) is tl.Tensor and x_tl.chunks == x_np.chunks
    print(f"{n:.3g} float32 ({a.nbytes / 2**20:.0f} MiB) in {len(x_np.chunks[0])} chunks of "
          f"{x_np.chunks[0][0]:,} elements; data made in {time.perf_counter() - t0:.1f} s; "
          f"dask {dask.__version__}, NumPy {np.__version__}, threaded scheduler")
    for name in names:
        print(f"  {name}: checked against NumPy, relative error {_check(name, x_tl, x_np):.1e}")

    _table([(name, _time(name, x_tl, x_np, args.repeat)) for name in names],
           f"quiet machine (as quiet as it is), best of {args.repeat}")
    if args.busy:
        loop = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        try:
            _table([(name, _time(name, x_tl, x_np, args.repeat)) for name in names],
                   f"beside one busy-loop process, best of {args.repeat}")
        finally:
            loop.kill()
            loop.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
