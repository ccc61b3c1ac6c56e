"""Checks float32 pow's arithmetic form (vector_math/power.py: log2 and exp2 in double by
fitted polynomials, table-free) over sampled pairs, and rederives its two fits.

    PYTHONPATH=src python scripts/check_pow_f32.py [--pairs 2e7] [--seed 0]
    PYTHONPATH=src python scripts/check_pow_f32.py --fit

The check runs pow_f32_arith (the general form, C99's cases included) through a Numba loop
over pairs in three families: bases log-uniform over the positive float32 range with
exponents that keep |y log2 x| up to 150 (results from the denormals to the overflow), bases
near 1 with exponents up to 1e6 (where the log's relative error is multiplied by |y|), and
uniform bases in (0, 10) with exponents in (-20, 20). The reference is NumPy's float64 pow of
the same float32 pair (within an ulp of float64: ~2**-29 ulp of float32); the error is
|got - ref| in float32 ulps of the reference rounded to float32 (NumPy's spacing, as
tests/kernels/cpu/test_vector_math.py measures). Prints the max error, where, and how many
results differ from the correctly rounded one; exit status 1 above the bound.

--fit prints the float64 coefficients of the two polynomials: P (degree 3) with
2 atanh(s) = 2s (1 + w P(w)), w = s*s, |s| <= (sqrt 2 - 1) / (sqrt 2 + 1), and Q (degree 5)
with exp(r) = 1 + r + r*r Q(r), |r| <= ln2 / 2, each a minimax fit of the relative error
(Lawson's iteratively reweighted least squares on Chebyshev nodes, long double reference),
with the max relative error over a dense grid.
"""
from __future__ import annotations

import argparse
import sys

import numpy as np
from numba import njit, prange

from tensorlib.kernels.cpu.vector_math import power

BOUND = 0.52  # the form's analysis: 0.5 + |t| ln2 2**-37.6 + 2**-34.2 relative, |t| <= 150

LD = np.longdouble


def _lawson(x, target, weight, degree, rounds=40):
    """Coefficients (low first) of the degree-``degree`` polynomial minimizing the max of
    |weight (p(x) - target)| over the nodes ``x``."""
    vander = np.vander(x.astype(np.float64), degree + 1, increasing=True).astype(LD)
    w = np.ones_like(x)
    for _ in range(rounds):
        a = (vander * (weight * w)[:, None]).astype(np.float64)
        c, *_ = np.linalg.lstsq(a, (target * weight * w).astype(np.float64), rcond=None)
        err = np.abs(weight * (vander @ c.astype(LD) - target))
        w = w * np.sqrt(err / err.max() + 1e-3)
        w /= w.mean()
    return [float(v) for v in c]


def _horner(coeffs, x):
    p = np.zeros_like(x)
    for c in coeffs[::-1]:
        p = p * x + LD(c)
    return p


def fit():
    n = 4000
    nodes = np.cos(np.pi * (np.arange(n) + 0.5) / (2 * n)).astype(LD)  # (0, 1]
    smax = (np.sqrt(LD(2)) - 1) / (np.sqrt(LD(2)) + 1)
    s = smax * nodes
    w = s * s
    atanh = 0.5 * np.log((1 + s) / (1 - s))
    # 2 atanh(s) = 2s (1 + w P): P's error counts times w in the result's relative error
    p = _lawson(w, (atanh / s - 1) / w, w, 3)
    rmax = np.log(LD(2)) / 2
    r = rmax * np.cos(np.pi * (np.arange(n) + 0.5) / n).astype(LD)
    q = _lawson(r, (np.expm1(r) - r) / (r * r), r * r / np.exp(r), 5)
    s2 = np.linspace(LD(1e-6), smax, 2_000_001, dtype=LD)
    w2 = s2 * s2
    log_err = np.max(np.abs(2 * s2 * (1 + w2 * _horner(p, w2)) /
                            np.log((1 + s2) / (1 - s2)) - 1))
    r2 = np.linspace(-rmax, rmax, 2_000_001, dtype=LD)
    exp_err = np.max(np.abs((1 + r2 + r2 * r2 * _horner(q, r2)) / np.exp(r2) - 1))
    print("P (log):", ", ".join(repr(c) for c in p),
          f"  max relative error 2**{np.log2(float(log_err)):.1f}")
    print("Q (exp):", ", ".join(repr(c) for c in q),
          f"  max relative error 2**{np.log2(float(exp_err)):.1f}")
    print("in power.py: _PL0.._PL3 =", (power._PL0, power._PL1, power._PL2, power._PL3))
    print("             _PE0.._PE5 =", (power._PE0, power._PE1, power._PE2, power._PE3,
                                        power._PE4, power._PE5))


_form = power.pow_f32_arith


@njit(parallel=True, error_model="numpy", nogil=True)
def _run(x, y, out):
    for i in prange(x.size):
        out[i] = _form(x[i], y[i])


def _pairs(rng, n):
    """(x, y) float32: the three families of the module docstring, n pairs each."""
    x1 = np.exp2(rng.uniform(-149, 128, n))
    t = rng.uniform(-150, 150, n)
    y1 = t / np.log2(x1)
    x2 = 1 + rng.uniform(-2 ** -10, 2 ** -10, n)
    y2 = rng.uniform(-1e6, 1e6, n)
    x3 = rng.uniform(0, 10, n)
    y3 = rng.uniform(-20, 20, n)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        x = np.concatenate([x1, x2, x3]).astype(np.float32)
        y = np.concatenate([y1, y2, y3]).astype(np.float32)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0)
    return x[ok], y[ok]


def check(pairs, seed):
    rng = np.random.default_rng(seed)
    worst, where, off, total = 0.0, None, 0, 0
    chunk = 1_000_000
    for start in range(0, pairs, 3 * chunk):
        x, y = _pairs(rng, min(chunk, (pairs - start) // 3 + 1))
        got = np.empty_like(x)
        _run(x, y, got)
        with np.errstate(all="ignore"):
            ref = np.power(x.astype(np.float64), y.astype(np.float64))
            keep = np.isfinite(ref) & (np.abs(ref) <= float(np.finfo(np.float32).max))
            ref32 = ref.astype(np.float32)
            ulp = np.spacing(np.abs(ref32)).astype(np.float64)
            err = np.abs(got.astype(np.float64) - ref) / ulp
        err[~keep] = 0.0
        off += int(np.count_nonzero(keep & (got != ref32)))
        total += int(np.count_nonzero(keep))
        i = int(np.argmax(err))
        if err[i] > worst:
            worst, where = float(err[i]), (float(x[i]), float(y[i]), float(got[i]), ref[i])
    print(f"pow_f32_arith over {total} pairs: max {worst:.4f} ulp at x, y, got, ref = {where}; "
          f"{off} results ({off / max(total, 1):.2e}) not the correctly rounded one; "
          f"bound {BOUND}")
    return worst <= BOUND


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=float, default=2e7)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--fit", action="store_true")
    args = ap.parse_args(argv)
    if args.fit:
        fit()
        return 0
    return 0 if check(int(args.pairs), args.seed) else 1


if __name__ == "__main__":
    sys.exit(main())
