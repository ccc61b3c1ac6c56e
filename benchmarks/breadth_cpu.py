"""Breadth survey on the CPU: ~100 NumPy-named operations, tensorlib against NumPy, to find the
ones a user meets slow (the everyday suite of ``python -m tensorlib.bench`` covers 30).

    python benchmarks/breadth_cpu.py [--sizes 1e3,1e5,2e6] [--dtypes float32,float64,int64]
                                     [--only name,name] [--worst 40]

Per case: the best of repeated timed batches (~0.15 s each side, warm kernels: parallel
variants compile at once, as in the bench CLI), tensorlib's time over NumPy's; then the worst
cases and the geometric mean. Families: unary and binary pointwise ops, Python-scalar operands,
where / clip, full and per-axis reductions, a bool mask's count, sort / argsort / unique /
searchsorted / isin, indexing (take, rows, points, take_along_axis, mask, nonzero, setitem by
index, rows and mask, in-place maximum), small 2-D sorts along each axis, joins and copies
(concat, stack, flip, roll, diff, tile, repeat, transpose, strided views, transcendentals of
strided views), dot, casts. Not a test: ratios for the issue notes.
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np

import tensorlib as tl
from tensorlib.runtime.cpu import cores

UNARY = ["abs", "negative", "sqrt", "square", "exp", "exp2", "expm1", "log", "log1p", "log2",
         "log10", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
         "arcsinh", "arctanh", "floor", "ceil", "trunc", "round", "sign", "isnan", "isinf",
         "isfinite", "reciprocal", "logical_not", "signbit", "sigmoid"]
FLOAT_ONLY = {"sqrt", "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sin", "cos",
              "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arctanh",
              "sigmoid", "reciprocal", "isnan", "isinf", "isfinite", "signbit", "floor", "ceil",
              "trunc", "round", "divide", "arctan2", "hypot", "logaddexp", "copysign",
              "nextafter", "pow"}
BINARY = ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "pow",
          "maximum", "minimum", "arctan2", "hypot", "logaddexp", "copysign", "equal", "less",
          "greater_equal", "logical_and", "nextafter"]
REDUCE = ["sum", "prod", "mean", "var", "std", "max", "min", "argmax", "argmin", "any", "all",
          "cumsum", "cumprod", "count_nonzero"]
_NP = {"sigmoid": lambda x: 1 / (1 + np.exp(-x)), "pow": np.power}


def best_time(fn, budget=0.15):
    for _ in range(3):
        fn()
    t0 = time.perf_counter()
    fn()
    one = time.perf_counter() - t0
    n = max(1, min(2000, int(0.01 / max(one, 1e-7))))
    times = []
    end = time.perf_counter() + budget
    while len(times) < 3 or time.perf_counter() < end:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        times.append((time.perf_counter() - t0) / n)
    return min(times)


def cases(rng, dt, n):
    is_float = dt.startswith("float")
    a = rng.random(n).astype(dt) * 0.9 + 0.05 if is_float else \
        rng.integers(-100, 100, n).astype(dt)
    a = a.astype(dt)
    b = a[::-1].copy()
    ta, tb = tl.asarray(a), tl.asarray(b)
    out = []
    for name in UNARY:
        if not is_float and name in FLOAT_ONLY:
            continue
        f, g = _NP[name] if name in _NP else getattr(np, name), getattr(tl, name)
        out.append((name, lambda f=f: f(a), lambda g=g: g(ta)))
    for name in BINARY:
        if not is_float and name in FLOAT_ONLY:
            continue
        f, g = _NP[name] if name in _NP else getattr(np, name), getattr(tl, name)
        out.append((name, lambda f=f: f(a, b), lambda g=g: g(ta, tb)))
    out += [("mul_scalar", lambda: a * 3, lambda: ta * 3),
            ("add_scalar", lambda: a + 1, lambda: ta + 1),
            ("where", lambda: np.where(a > b, a, b), lambda: tl.where(ta > tb, ta, tb)),
            ("where_scalar", lambda: np.where(a > 0.5, a, 0), lambda: tl.where(ta > 0.5, ta, 0)),
            ("clip", lambda: np.clip(a, 0.2, 0.8), lambda: tl.clip(ta, 0.2, 0.8))]
    for name in REDUCE:
        f, g = getattr(np, name), getattr(tl, name)
        out.append((name, lambda f=f: f(a), lambda g=g: g(ta)))
    if n >= 1000:
        m = n // 100
        a2, t2 = a.reshape(100, m), ta.reshape((100, m))
        for name in ("sum", "max", "min", "argmax", "argmin", "mean", "std"):
            f, g = getattr(np, name), getattr(tl, name)
            out.append((name + "_ax0", lambda f=f: f(a2, axis=0), lambda g=g: g(t2, axis=0)))
            out.append((name + "_ax1", lambda f=f: f(a2, axis=1), lambda g=g: g(t2, axis=1)))
        out.append(("T_copy", lambda: np.ascontiguousarray(a2.T), lambda: t2.T.contiguous()))
        out.append(("sort_ax0", lambda: np.sort(a2, axis=0), lambda: tl.sort(t2, axis=0)))
        out.append(("sort_ax1", lambda: np.sort(a2, axis=1), lambda: tl.sort(t2, axis=1)))
        out.append(("argsort_ax0", lambda: np.argsort(a2, axis=0, kind="stable"),
                    lambda: tl.argsort(t2, axis=0)))
        # row and point gathers (embedding lookups), take_along_axis, a row scatter
        rows, cols = rng.integers(0, 100, 50), rng.integers(0, m, 50)
        trows, tcols = tl.asarray(rows), tl.asarray(cols)
        ci = rng.integers(0, m, (100, 1))
        tci = tl.asarray(ci)
        out.append(("take_rows", lambda: a2[rows], lambda: t2[trows]))
        out.append(("take_points", lambda: a2[rows, cols], lambda: t2[trows, tcols]))
        out.append(("take_along", lambda: np.take_along_axis(a2, ci, 1),
                    lambda: tl.take_along_axis(t2, tci, axis=1)))
        w2, tw2 = a2.copy(), tl.asarray(a2.copy())
        v2 = a2[:50].copy()
        tv2 = tl.asarray(v2)
        out.append(("setitem_rows", lambda: w2.__setitem__(rows, v2),
                    lambda: tw2.__setitem__(trows, tv2)))
        img = rng.random((n // 3, 3)).astype(dt)
        scale = np.array([2, 3, 5], dt)
        timg, tscale = tl.asarray(img), tl.asarray(scale)
        out.append(("img*scale", lambda: img * scale, lambda: timg * tscale))
    idx = rng.integers(0, n, n)
    tidx = tl.asarray(idx)
    mask = a > np.median(a)
    tmask = tl.asarray(mask)
    srt = np.sort(a)
    tsrt = tl.asarray(srt)
    other = np.float64 if dt != "float64" else np.float32
    tother = tl.float64 if dt != "float64" else tl.float32
    out += [("sort", lambda: np.sort(a), lambda: tl.sort(ta)),
            ("argsort", lambda: np.argsort(a), lambda: tl.argsort(ta)),
            ("unique", lambda: np.unique(a), lambda: tl.unique_values(ta)),
            ("flip", lambda: np.flip(a).copy(), lambda: tl.flip(ta).contiguous()),
            ("roll", lambda: np.roll(a, 7), lambda: tl.roll(ta, 7)),
            ("diff", lambda: np.diff(a), lambda: tl.diff(ta)),
            ("concat", lambda: np.concatenate([a, b]), lambda: tl.concat([ta, tb])),
            ("stack", lambda: np.stack([a, b]), lambda: tl.stack([ta, tb])),
            ("take", lambda: a[idx], lambda: ta[tidx]),
            ("mask", lambda: a[mask], lambda: ta[tmask]),
            ("nonzero", lambda: np.nonzero(mask), lambda: tl.nonzero(tmask)),
            ("searchsorted", lambda: np.searchsorted(srt, b), lambda: tl.searchsorted(tsrt, tb)),
            ("search_1000", lambda: np.searchsorted(srt, b[:1000]),
             lambda: tl.searchsorted(tsrt, tb[:1000])),
            ("isin", lambda: np.isin(a, b[:50]), lambda: tl.isin(ta, tb[:50])),
            ("astype", lambda: a.astype(other), lambda: ta.astype(tother)),
            ("strided_add", lambda: a[::2] + b[::2], lambda: ta[::2] + tb[::2]),
            ("strided_sin", lambda: np.sin(a[::2]), lambda: tl.sin(ta[::2])),
            ("strided_exp", lambda: np.exp(a[::-3]), lambda: tl.exp(ta[::-3])),
            ("strided_pow", lambda: a[::2] ** a.dtype.type(2.7), lambda: ta[::2] ** 2.7),
            ("dot", lambda: np.dot(a, b), lambda: tl.dot(ta, tb)),
            ("tile", lambda: np.tile(a, 2), lambda: tl.tile(ta, 2)),
            ("repeat", lambda: np.repeat(a, 2), lambda: tl.repeat(ta, 2))]
    # assignments into copies (the arrays above stay as they are for the other cases)
    w, tw = a.copy(), tl.asarray(a.copy())
    few, tfew = idx[:max(1, n // 20)], tidx[:max(1, n // 20)]
    vals, tvals = b[:few.size].copy(), tl.asarray(b[:few.size].copy())
    out += [("setitem_idx", lambda: w.__setitem__(few, 1), lambda: tw.__setitem__(tfew, 1)),
            ("setitem_vals", lambda: w.__setitem__(few, vals),
             lambda: tw.__setitem__(tfew, tvals)),
            ("setitem_mask", lambda: w.__setitem__(mask, 0), lambda: tw.__setitem__(tmask, 0)),
            ("maximum_inplace", lambda: np.maximum(w, 0, out=w),
             lambda: tl.maximum(tw, 0, out=tw)),
            ("count_nonzero_bool", lambda: np.count_nonzero(mask), lambda: tl.count_nonzero(tmask))]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1e3,1e5,2e6")
    ap.add_argument("--dtypes", default="float32")
    ap.add_argument("--only", default="", help="comma-separated case names")
    ap.add_argument("--worst", type=int, default=40, help="worst cases listed at the end")
    args = ap.parse_args(argv)
    cores.DEFER_PARALLEL_COMPILE = False  # (steady state: parallel variants compiled at once)
    only = set(filter(None, args.only.split(",")))
    rng = np.random.default_rng(0)
    rows = []
    for dt in args.dtypes.split(","):
        for n in (int(float(s)) for s in args.sizes.split(",")):
            for name, fnp, ftl in cases(rng, dt, n):
                if only and name not in only:
                    continue
                try:
                    tn, tt = best_time(fnp), best_time(ftl)
                except Exception as e:  # noqa: BLE001 - a case an op refuses is reported
                    print(f"ERR {name} {dt} {n}: {type(e).__name__}: {str(e)[:100]}", flush=True)
                    continue
                rows.append((tt / tn, name, dt, n, tt, tn))
                print(f"{name:14s} {dt:8s} {n:>9d}  tl {tt * 1e6:10.1f} us  np {tn * 1e6:10.1f} us"
                      f"  ratio {tt / tn:6.2f}", flush=True)
    if not rows:
        return 0
    rows.sort(reverse=True)
    print(f"\nworst {min(args.worst, len(rows))} (tensorlib / NumPy):")
    for r, name, dt, n, tt, tn in rows[:args.worst]:
        print(f"{name:14s} {dt:8s} {n:>9d}  tl {tt * 1e6:10.1f} us  np {tn * 1e6:10.1f} us"
              f"  ratio {r:6.2f}")
    geo = math.exp(sum(math.log(r[0]) for r in rows) / len(rows))
    print(f"geomean tensorlib / NumPy over {len(rows)} cases: {geo:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
