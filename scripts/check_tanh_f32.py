"""Measures the float32 tanh's error (vector_math.tanh_f32, computed in float32 arithmetic) over
every float32 in [0, 9.6] (~1.09e9 values; about a minute on 2 cores) against float64 tanh,
with scripts/check_log_f32.py's checker (float32 ulps of the reference rounded to float32).
tanh is odd and the helper works on |x| (its sign is copied back), and above 9.5 it returns 1
exactly, so this covers every finite input.

    PYTHONPATH=src python scripts/check_tanh_f32.py [--step K] [--bound B]
    PYTHONPATH=src python scripts/check_tanh_f32.py --fit      # rederive the coefficients

Prints the largest error and where it occurs; exit status 1 if it exceeds ``--bound`` (the
bound tests/kernels/cpu/test_vector_math.py holds tanh to). --fit prints tanh_f32's float32
coefficients: the small range's (a - tanh a) / a^3 = P(z) / (z + q0), z = a^2, P of degree 2
on [0, 0.85] (minimax for the relative error of the result: Loeb's linearization for q0, then
P refitted after each coefficient's rounding to float32), and W2..W6 of
exp(2r) = 1 + r (2 + W2 r + ... + W6 r^5) on |r| <= ln2/4 (minimax relative error, each
coefficient rounded in turn and the rest refitted); Lawson's iteratively reweighted least
squares on Chebyshev nodes, long double reference.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_log_f32 import _checker  # noqa: E402  (the exhaustive ulp checker)

from tensorlib.kernels.cpu.vector_math import hyperbolic  # noqa: E402


def _lawson(A, y, iters):
    """c minimizing max |A c - y| (rows already weighted): Lawson's reweighted least squares."""
    u = np.full(len(y), 1.0 / len(y))
    for _ in range(iters):
        s = np.sqrt(u)
        c, *_ = np.linalg.lstsq(A * s[:, None], y * s, rcond=None)
        e = np.abs(A @ c - y)
        u = u * e / (u * e).sum()
    return c


def _nodes(lo, hi, n):
    t = np.cos(np.pi * (np.arange(n) + 0.5) / n)
    return ((lo + hi) / 2 + (hi - lo) / 2 * t).astype(np.longdouble)


def fit(split=0.85, npts=4000, iters=200):
    """(P, q0, its max error, W2..W6, their max error), errors in units of 2**-24 relative."""
    ld = np.longdouble
    a = _nodes(1e-3, split, npts)
    z = a * a
    g = (a - np.tanh(a)) / a ** 3
    wt = a ** 3 / np.tanh(a) * 2.0 ** 24          # error of P/Q -> the result's relative error
    den = z + 2.5
    for _ in range(20):             # Loeb: P - g q0 = g z, weighted by 1 / the last denominator
        A = np.stack([z ** 0, z, z * z, -g], 1) * (wt / den)[:, None]
        c = _lawson(A.astype(float), (g * z * wt / den).astype(float), iters)
        den = z + ld(c[3])
    q0 = np.float32(c[3])
    P = []
    for j in range(3):
        rest = g - sum(ld(v) * z ** i for i, v in enumerate(P)) / (z + ld(q0))
        A = np.stack([z ** i / (z + ld(q0)) for i in range(j, 3)], 1) * wt[:, None]
        P.append(np.float32(_lawson(A.astype(float), (rest * wt).astype(float), iters)[0]))
    err_p = np.abs((sum(ld(v) * z ** i for i, v in enumerate(P)) / (z + ld(q0)) - g) * wt).max()
    r = _nodes(-0.1733, 0.1733, npts)               # |r| <= ln2/4, a little wider
    y = np.expm1(2 * r) - 2 * r
    wt = 2.0 ** 24 / np.exp(2 * r)
    W = []
    for j in range(2, 7):
        rest = y - sum(ld(v) * r ** (i + 2) for i, v in enumerate(W))
        A = np.stack([r ** i for i in range(j, 7)], 1) * wt[:, None]
        W.append(np.float32(_lawson(A.astype(float), (rest * wt).astype(float), iters)[0]))
    err_w = np.abs((y - sum(ld(v) * r ** (i + 2) for i, v in enumerate(W))) * wt).max()
    return P, q0, float(err_p), W, float(err_w)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--step", type=int, default=1, help="check every K-th bit pattern")
    ap.add_argument("--bound", type=float, default=1.2, help="largest error allowed (ulp)")
    ap.add_argument("--fit", action="store_true", help="print the fitted coefficients")
    args = ap.parse_args(argv)
    if args.fit:
        P, q0, err_p, W, err_w = fit()
        print(f"P, q0 (small range; result error {err_p:.4f} x 2**-24 relative):")
        print("    " + ", ".join(repr(float(v)) for v in P) + f"; {float(q0)!r}")
        print(f"W2..W6 (exp(2r) error {err_w:.4f} x 2**-24 relative):")
        print("    " + ", ".join(repr(float(v)) for v in W))
        return 0
    stop = int(np.float32(9.6).view(np.uint32)) + 1
    t0 = time.perf_counter()
    err, at = _checker(hyperbolic.tanh_f32, np.tanh)(0, stop, args.step, 256)
    k = int(np.argmax(err))
    x = np.uint32(at[k]).view(np.float32)
    print(f"tanh_f32 over {(stop + args.step - 1) // args.step} float32 in [0, 9.6]: max "
          f"{err[k]:.4f} ulp at x = {float(x)!r} (bits 0x{int(at[k]):08x}); "
          f"{time.perf_counter() - t0:.1f} s")
    return 0 if err[k] <= args.bound else 1


if __name__ == "__main__":
    sys.exit(main())
