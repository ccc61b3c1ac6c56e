"""``python -m tensorlib.warmup``: compile the everyday CPU kernels into the on-disk caches.

tensorlib compiles a Numba kernel the first time an (op, dtypes, layout) combination runs and
caches it on disk (generated modules under ``~/.cache/tensorlib``, Numba's cache under
``NUMBA_CACHE_DIR``), so only a machine's first calls wait. This runs the everyday ops (the
``everyday`` bench suite's list: pointwise, casts, reductions, scans, sorts, indexing, joins,
creation, matmul, softmax) on small and on large tensors (serial and parallel variants) of the
common dtypes, split over ``--jobs`` processes, so those first calls happen here, in parallel.

    python -m tensorlib.warmup                 # float32, float64, int64; one job per core
    python -m tensorlib.warmup --dtypes float32 --jobs 2
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

DEFAULT_DTYPES = ("float32", "float64", "int64")
SIZES = (1000, 1 << 17)  # below and above the parallel grain: both variants compile


def _float_ops():
    import tensorlib as tl
    return [
        ("exp", lambda x, y, i, m: tl.exp(x)), ("log", lambda x, y, i, m: tl.log(x)),
        ("sin", lambda x, y, i, m: tl.sin(x)), ("tanh", lambda x, y, i, m: tl.tanh(x)),
        ("sqrt", lambda x, y, i, m: tl.sqrt(x)), ("pow", lambda x, y, i, m: x ** 2.5),
        ("std", lambda x, y, i, m: tl.std(x)), ("mean", lambda x, y, i, m: tl.mean(x)),
        ("softmax", lambda x, y, i, m: tl.softmax(x.reshape((8, -1)), axis=1)),
        ("divide", lambda x, y, i, m: x / y),
    ]


def _ops():
    import tensorlib as tl
    return [
        ("add", lambda x, y, i, m: x + y), ("multiply scalar", lambda x, y, i, m: x * 3),
        ("maximum", lambda x, y, i, m: tl.maximum(x, y)), ("less", lambda x, y, i, m: x < y),
        ("where", lambda x, y, i, m: tl.where(m, x, y)),
        ("astype float64", lambda x, y, i, m: x.astype(tl.float64)),
        ("astype float32", lambda x, y, i, m: x.astype(tl.float32)),
        ("sum", lambda x, y, i, m: tl.sum(x)),
        ("sum axis 0", lambda x, y, i, m: tl.sum(x.reshape((8, -1)), axis=0)),
        ("sum axis 1", lambda x, y, i, m: tl.sum(x.reshape((8, -1)), axis=1)),
        ("max", lambda x, y, i, m: tl.max(x)), ("argmax", lambda x, y, i, m: tl.argmax(x)),
        ("cumsum", lambda x, y, i, m: tl.cumsum(x, axis=0)),
        ("sort", lambda x, y, i, m: tl.sort(x)), ("argsort", lambda x, y, i, m: tl.argsort(x)),
        ("unique_values", lambda x, y, i, m: tl.unique_values(x)),
        ("take", lambda x, y, i, m: x[i]), ("mask", lambda x, y, i, m: x[m]),
        ("transpose copy", lambda x, y, i, m: tl.asarray(x.reshape((8, -1)).T, copy=True)),
        ("concat", lambda x, y, i, m: tl.concat([x, y])),
        ("strided multiply", lambda x, y, i, m: x[::2] * y[::2]),
        ("matmul", lambda x, y, i, m: x[:900].reshape((30, 30)) @ y[:900].reshape((30, 30))),
    ]


def _creation(dtype):
    import tensorlib as tl
    dt = getattr(tl, dtype)
    tl.zeros((1000,), dtype=dt)
    tl.ones((1000,), dtype=dt)
    tl.full((1000,), 2, dtype=dt)
    tl.arange(1000, dtype=dt)
    if dt.kind == "f":
        tl.linspace(0, 1, 1000, dtype=dt)


def _run(task):
    """One job: every op of its share on every size of one dtype; returns (dtype, seconds,
    failures)."""
    dtype, names = task
    import numpy as np

    import tensorlib as tl
    from tensorlib.ops.pointwise import HOT_CALLS
    from tensorlib.runtime.cpu import cores
    cores.DEFER_PARALLEL_COMPILE = False  # big calls compile (or load) their parallel variant now
    t0 = time.perf_counter()
    ops = dict(_ops())
    if dtype.startswith("float"):
        ops.update(_float_ops())
    failures = []
    rng = np.random.default_rng(0)
    for n in SIZES:
        base = rng.random(n) + 0.5 if dtype.startswith("float") else rng.integers(1, 100, n)
        x = tl.asarray(base.astype(dtype))
        y = tl.asarray(base[::-1].astype(dtype))
        idx = tl.asarray(rng.integers(0, n, n))
        mask = x > x[n // 2]
        # Small sizes run past HOT_CALLS: the dense fast path then compiles its flat loops.
        reps = HOT_CALLS + 1 if n < SIZES[-1] else 1
        for name in names:
            fn = ops.get(name)
            if fn is None:
                continue
            try:
                for _ in range(reps):
                    fn(x, y, idx, mask)
            except Exception as e:  # noqa: BLE001 - an op a dtype refuses is not a failure to stop on
                failures.append(f"{name} {dtype} {n}: {type(e).__name__}: {e}")
    if "creation" in names:
        _creation(dtype)
    return dtype, time.perf_counter() - t0, failures


def tasks(dtypes, jobs):
    """The work split: per dtype, the op names dealt round robin into ``jobs`` shares."""
    names = [n for n, _ in _ops()] + [n for n, _ in _float_ops()] + ["creation"]
    out = []
    for dt in dtypes:
        for j in range(jobs):
            share = names[j::jobs]
            if share:
                out.append((dt, share))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tensorlib.warmup", description=__doc__.split(
        "\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dtypes", default=",".join(DEFAULT_DTYPES),
                    help="comma-separated dtypes (default: %(default)s)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="processes compiling at once (default: the number of cores)")
    args = ap.parse_args(argv)
    dtypes = [d.strip() for d in args.dtypes.split(",") if d.strip()]
    import tensorlib as tl
    for d in dtypes:
        if not isinstance(getattr(tl, d, None), type(tl.float32)):
            ap.error(f"--dtypes: unknown dtype {d!r}")
    if args.jobs < 1:
        ap.error(f"--jobs: must be >= 1, got {args.jobs}")
    t0 = time.perf_counter()
    work = tasks(dtypes, args.jobs)
    failures = []
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for dtype, secs, failed in pool.map(_run, work):
            failures += failed
    print(f"tensorlib warmup: {len(work)} jobs over {args.jobs} processes, dtypes "
          f"{', '.join(dtypes)}: {time.perf_counter() - t0:.1f} s")
    for f in failures:
        print(f"  not compiled: {f}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
