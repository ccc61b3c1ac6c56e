"""Per-call overhead on small (1e3-element) float32 tensors: tensorlib against NumPy.

Run: python benchmarks/small_ops_cpu.py [--rounds N] [--number K] [--only NAME,...]
Each op's tensorlib and NumPy callables are timed interleaved (round r times ours then
theirs, K calls each), and the best round per call is reported, in microseconds, with the
ratio ours/NumPy of the best rounds and the median of the per-round ratios (a round's two
timings share the machine's state, so their ratio is steadier than either time when other
processes come and go; the geometric means are over those medians).
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def _cases(tl):
    rng = np.random.default_rng(0)
    n = 1000
    xn = rng.random(n, dtype=np.float32)
    yn = rng.random(n, dtype=np.float32)
    x2n = rng.random((40, 25), dtype=np.float32)
    mn = xn < yn
    idxn = rng.integers(0, n, 100)
    tkn = rng.integers(0, n, n)               # the everyday suite's take: n int64 indices
    x3n = rng.random((40, 25), dtype=np.float32)  # transposed to (25, 40), then copied
    an = rng.random((32, 32), dtype=np.float32)
    bn = rng.random((32, 32), dtype=np.float32)
    sn = rng.standard_normal((25, 40)).astype(np.float32)
    hn, gn = xn[:500].copy(), yn[500:].copy()
    rn, cn = rng.random(40, dtype=np.float32), rng.random((25, 1), dtype=np.float32)
    wn = rng.random((50, 80), dtype=np.float32)  # its [::2, ::2] is (25, 40)
    accn, outn = sn.copy(), np.empty((25, 40), np.float32)
    x, y, x2, m, idx = (tl.asarray(a) for a in (xn, yn, x2n, mn, idxn))
    tk, x3, a, b, s, h, g = (tl.asarray(v) for v in (tkn, x3n, an, bn, sn, hn, gn))
    r, c, w, acc, out = (tl.asarray(v) for v in (rn, cn, wn, accn, outn))
    m2n = sn > 0
    m2 = tl.asarray(m2n)
    f32 = tl.float32

    # a sliding window: a new offset each call (1000 of them, more layouts than an op keeps
    # runners for: the full path's per-call cost)
    seqn = rng.standard_normal((1024, 40)).astype(np.float32)
    seq = tl.asarray(seqn)
    at = [0]

    def window(src):
        k = at[0] = (at[0] + 1) % 1000
        return src[k:k + 25]

    def np_softmax(v):
        e = np.exp(v - v.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    return [
        ("x + y", lambda: x + y, lambda: xn + yn),
        ("x < y", lambda: x < y, lambda: xn < yn),
        ("x * 3.0", lambda: x * 3.0, lambda: xn * 3.0),
        ("x + 1", lambda: x + 1, lambda: xn + 1),
        ("zeros((1000,))", lambda: tl.zeros((n,)), lambda: np.zeros((n,), np.float32)),
        ("full((1000,), 2.0)", lambda: tl.full((n,), 2.0), lambda: np.full((n,), 2.0, np.float32)),
        ("x.astype(float64)", lambda: x.astype(tl.float64), lambda: xn.astype(np.float64)),
        ("sum(x)", lambda: tl.sum(x), lambda: np.sum(xn)),
        ("max(x)", lambda: tl.max(x), lambda: np.max(xn)),
        ("argmax(x)", lambda: tl.argmax(x), lambda: np.argmax(xn)),
        ("mean(x2, axis=0)", lambda: tl.mean(x2, axis=0), lambda: np.mean(x2n, axis=0)),
        ("concat([x, y])", lambda: tl.concat([x, y]), lambda: np.concatenate([xn, yn])),
        ("where(m, x, y)", lambda: tl.where(m, x, y), lambda: np.where(mn, xn, yn)),
        ("linspace(0, 1, 1000)", lambda: tl.linspace(0, 1, n),
         lambda: np.linspace(0, 1, n, dtype=np.float32)),
        ("x[idx]", lambda: x[idx], lambda: xn[idxn]),
        ("x[mask]", lambda: x[m], lambda: xn[mn]),
        ("cumsum(x, axis=0)", lambda: tl.cumsum(x, axis=0), lambda: np.cumsum(xn, axis=0)),
        # the everyday survey's 1e3 cases, spelled as tensorlib.bench spells them
        ("sum(x2, axis=1)", lambda: tl.sum(x2, axis=1), lambda: np.sum(x2n, axis=1)),
        ("std(x)", lambda: tl.std(x), lambda: np.std(xn)),
        ("sort(x)", lambda: tl.sort(x), lambda: np.sort(xn)),
        ("argsort(x)", lambda: tl.argsort(x), lambda: np.argsort(xn)),
        ("take(x, idx1000)", lambda: tl.take(x, tk), lambda: np.take(xn, tkn)),
        ("x3.T.contiguous()", lambda: x3.T.contiguous(), lambda: np.ascontiguousarray(x3n.T)),
        ("matmul 32x32", lambda: tl.matmul(a, b), lambda: np.matmul(an, bn)),
        ("softmax (25,40)", lambda: tl.softmax(s, axis=-1), lambda: np_softmax(sn)),
        ("concat 500+500", lambda: tl.concat([h, g]), lambda: np.concatenate([hn, gn])),
        ("linspace dtype,device", lambda: tl.linspace(0.0, 1.0, n, dtype=f32, device="cpu"),
         lambda: np.linspace(0.0, 1.0, n, dtype=np.float32)),
        ("zeros dtype,device", lambda: tl.zeros((n,), dtype=f32, device="cpu"),
         lambda: np.zeros((n,), dtype=np.float32)),
        ("x[::2] * y[::2]", lambda: x[::2] * y[::2], lambda: xn[::2] * yn[::2]),
        # more of the families (joins, basic indexing, views, creation)
        ("stack 500+500", lambda: tl.stack([h, g]), lambda: np.stack([hn, gn])),
        ("x2[3]", lambda: x2[3], lambda: x2n[3]),
        ("x2[:, 1]", lambda: x2[:, 1], lambda: x2n[:, 1]),
        ("x3.T", lambda: x3.T, lambda: x3n.T),
        ("x2.reshape((1000,))", lambda: x2.reshape((n,)), lambda: x2n.reshape((n,))),
        ("arange(1000)", lambda: tl.arange(n), lambda: np.arange(n)),
        # other layouts: broadcasting, transposed and 2-D strided operands, in-place and out=
        ("s + row: (25 40) + (40)", lambda: s + r, lambda: sn + rn),
        ("s * col: (25 40) * (25 1)", lambda: s * c, lambda: sn * cn),
        ("s + x3.T", lambda: s + x3.T, lambda: sn + x3n.T),
        ("w[::2 ::2] * 2.0", lambda: w[::2, ::2] * 2.0, lambda: wn[::2, ::2] * 2.0),
        ("acc += row", lambda: acc.__iadd__(r), lambda: accn.__iadd__(rn)),
        ("window(25 40) * col", lambda: window(seq) * c, lambda: window(seqn) * cn),
        ("window(25 40).sum(1)", lambda: tl.sum(window(seq), axis=1),
         lambda: np.sum(window(seqn), axis=1)),
        ("softmax window(25 40)", lambda: tl.softmax(window(seq), axis=-1),
         lambda: np_softmax(window(seqn))),
        ("window(25 40) -= row", lambda: window(seq).__isub__(r),
         lambda: window(seqn).__isub__(rn)),
        ("add(s row out=o)", lambda: tl.add(s, r, out=out), lambda: np.add(sn, rn, out=outn)),
        ("where(m2 s col)", lambda: tl.where(m2, s, c), lambda: np.where(m2n, sn, cn)),
        ("s - s.mean(1 keepdims)", lambda: s - s.mean(axis=1, keepdims=True),
         lambda: sn - sn.mean(axis=1, keepdims=True)),
        ("x3.T.astype(float64)", lambda: x3.T.astype(tl.float64),
         lambda: x3n.T.astype(np.float64)),
        ("asarray(2.0)", lambda: tl.asarray(2.0), lambda: np.asarray(2.0, np.float32)),
        ("tensor([1. 2. 3.])", lambda: tl.tensor([1.0, 2.0, 3.0]),
         lambda: np.array([1.0, 2.0, 3.0], np.float32)),
    ]


def _per_call(fn, number):
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="timed rounds (best is kept)")
    parser.add_argument("--number", type=int, default=200, help="calls per round")
    parser.add_argument("--only", default="", help="comma-separated op names to run (the names "
                        "of the cases added for other layouts hold no commas)")
    args = parser.parse_args(argv)

    import tensorlib as tl

    cases = _cases(tl)
    if args.only:
        keep = set(args.only.split(","))
        cases = [c for c in cases if c[0] in keep]
    print(f"{'op (1e3 float32)':<24}{'tensorlib us':>14}{'numpy us':>11}{'ratio':>9}"
          f"{'median ratio':>14}")
    ratios = []
    for name, ours, theirs in cases:
        for _ in range(100):  # warm: hot-path counters, kernel compiles, allocator caches
            ours()
            theirs()
        best_o = best_t = float("inf")
        per_round = []
        for _ in range(args.rounds):
            o = _per_call(ours, args.number)
            t = _per_call(theirs, args.number)
            best_o, best_t = min(best_o, o), min(best_t, t)
            per_round.append(o / t)
        med = float(np.median(per_round))
        ratios.append(med)
        print(f"{name:<24}{best_o * 1e6:>14.2f}{best_t * 1e6:>11.2f}{best_o / best_t:>9.1f}"
              f"{med:>14.1f}", flush=True)
    geo = float(np.exp(np.mean(np.log(ratios))))
    print(f"{'geomean (median ratios)':<24}{'':>34}{geo:>14.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
