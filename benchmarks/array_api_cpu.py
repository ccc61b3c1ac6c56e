"""Array API CPU benchmark: sort / argsort, cumsum, randn, gather, cast f32->f16 and a
softmax composed from ops, tensorlib against NumPy with ratios.

Run: python benchmarks/array_api_cpu.py [--quick] [--n N]
Each case checks tensorlib's answer first (exact, or statistics for randn), then times both
sides (best and median of the repeats after two warm-up calls). ratio = tensorlib / NumPy time
(< 1: tensorlib is faster); targets (issue 3: not slower than NumPy): randn, the 1-D value sort
and the row sort (NumPy 2.x sorts float32 with AVX-512 x86-simd-sort, one thread; tensorlib
uses every thread, so its timings swing with the machine's load: compare when it is quiet).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np


def _times(fn, repeats):
    fn()
    fn()
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return min(out), statistics.median(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--n", type=int, default=10 ** 7, help="elements per case")
    args = parser.parse_args(argv)
    repeats = 3 if args.quick else 9
    n = args.n

    import tensorlib as tl
    from tensorlib import random as tlr

    rng = np.random.default_rng(0)
    rows = []

    def case(name, ours, theirs, check=None, target=None):
        if check is not None:
            check()
        best, med = _times(ours, repeats)
        best_np, med_np = _times(theirs, repeats)
        ratio = best / best_np
        ok = "" if target is None else ("yes" if ratio <= target else "NO")
        rows.append((name, best * 1e3, med * 1e3, best_np * 1e3, med_np * 1e3, ratio,
                     "" if target is None else f"<= {target}", ok))

    x_np = rng.random(n, dtype=np.float32)
    x = tl.asarray(x_np)

    def check_sort():
        np.testing.assert_array_equal(tl.sort(x).numpy(), np.sort(x_np))
    case(f"sort {n:.0e} f32", lambda: tl.sort(x), lambda: np.sort(x_np), check_sort,
         target=1.0)

    def check_argsort():
        np.testing.assert_array_equal(tl.argsort(x).numpy(), np.argsort(x_np, kind="stable"))
    case(f"argsort (stable) {n:.0e} f32", lambda: tl.argsort(x),
         lambda: np.argsort(x_np, kind="stable"), check_argsort)

    m_np = rng.random((n // 1000, 1000), dtype=np.float32)
    m = tl.asarray(m_np)
    case(f"sort rows ({n // 1000},1000) f32", lambda: tl.sort(m, axis=-1),
         lambda: np.sort(m_np, axis=-1),
         lambda: np.testing.assert_array_equal(tl.sort(m).numpy(), np.sort(m_np)),
         target=1.0)

    case(f"cumsum {n:.0e} f32", lambda: tl.cumsum(x), lambda: np.cumsum(x_np),
         lambda: np.testing.assert_allclose(tl.cumsum(x).numpy(), np.cumsum(x_np), rtol=1e-3))

    g = tlr.Generator("cpu").manual_seed(0)

    def check_randn():
        z = tl.randn((n,), generator=g).numpy()
        assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01, (z.mean(), z.std())
    case(f"randn {n:.0e} f32", lambda: tl.randn((n,), generator=g),
         lambda: rng.standard_normal(n, dtype=np.float32), check_randn, target=1.0)
    case(f"rand {n:.0e} f32", lambda: tl.rand((n,), generator=g),
         lambda: rng.random(n, dtype=np.float32))

    idx_np = rng.integers(0, n, n)
    idx = tl.asarray(idx_np)
    case(f"gather x[idx] {n:.0e} f32", lambda: x[idx], lambda: x_np[idx_np],
         lambda: np.testing.assert_array_equal(x[idx].numpy(), x_np[idx_np]))

    case(f"cast f32->f16 {n:.0e}", lambda: x.astype(tl.float16),
         lambda: x_np.astype(np.float16),
         lambda: np.testing.assert_array_equal(x.astype(tl.float16).numpy(),
                                               x_np.astype(np.float16)))

    s_np = rng.standard_normal((n // 1000, 1000), dtype=np.float32)
    s = tl.asarray(s_np)

    def softmax_tl(v):
        e = tl.exp(v - tl.max(v, axis=-1, keepdims=True))
        return e / tl.sum(e, axis=-1, keepdims=True)

    def softmax_np(v):
        e = np.exp(v - v.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    case(f"softmax (composed) ({n // 1000},1000)", lambda: softmax_tl(s),
         lambda: softmax_np(s_np),
         lambda: np.testing.assert_allclose(softmax_tl(s).numpy(), softmax_np(s_np),
                                            rtol=1e-5, atol=1e-8))

    print(f"{'case':<34} {'tl best':>9} {'tl med':>9} {'np best':>9} {'np med':>9} "
          f"{'ratio':>7}  target")
    for name, b, md, bn, mdn, ratio, target, ok in rows:
        print(f"{name:<34} {b:>9.2f} {md:>9.2f} {bn:>9.2f} {mdn:>9.2f} {ratio:>7.3f}  "
              f"{target} {ok}")
    print("(ms; ratio = best tensorlib / best NumPy time; threads: "
          f"{__import__('numba').config.NUMBA_NUM_THREADS})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
