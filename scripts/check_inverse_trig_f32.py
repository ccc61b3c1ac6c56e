"""Measures the float32 atan, asin and acos (vector_math.atan_f32 / asin_f32 / acos_f32,
computed in float32 arithmetic) over every float32 they take against the float64 functions,
with scripts/check_log_f32.py's checker (float32 ulps of the reference rounded to float32):
atan over every non-negative float32 (inf included; it is odd, the sign is copied back),
asin over [0, 1] (odd too), acos over [-1, 1]. atan ~1 minute on 2 cores, the others seconds.

    PYTHONPATH=src python scripts/check_inverse_trig_f32.py [atan|asin|acos] [--step K]
        [--bound B]
    PYTHONPATH=src python scripts/check_inverse_trig_f32.py atan --fit   # rederive Q (or asin: P)

Prints the largest error and where it occurs; exit status 1 if it exceeds ``--bound`` (the
bounds tests/kernels/cpu/test_vector_math.py holds them to). --fit prints the polynomial:
atan t = t + t**3 Q(t**2) on [0, 1] (Q of degree 8) or asin u = u + u**3 P(u**2) on [0, 1/2]
(P of degree 5), minimax for the relative error of the result (Lawson's reweighted least
squares on Chebyshev nodes, long double reference), each coefficient rounded to float32 in
turn and the rest refitted.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_log_f32 import _checker  # noqa: E402  (the exhaustive ulp checker)
from check_tanh_f32 import _lawson, _nodes  # noqa: E402

from tensorlib.kernels.cpu.vector_math import inverse_trig  # noqa: E402

# name: (helper, reference, first and last bit pattern checked, fit: (f, hi, degree), bound)
_F32 = lambda v: int(np.float32(v).view(np.uint32))  # noqa: E731
CASES = {
    "atan": (inverse_trig.atan_f32, np.arctan, [(0, _F32(np.inf))], (np.arctan, 1.0, 8), 1.4),
    "asin": (inverse_trig.asin_f32, np.arcsin, [(0, _F32(1.0))], (np.arcsin, 0.5, 5), 1.9),
    "acos": (inverse_trig.acos_f32, np.arccos, [(0, _F32(1.0)), (_F32(-0.0), _F32(-1.0))],
             None, 1.3),
}


def fit(f, hi, degree, npts=6000, iters=300):
    """(float32 coefficients of C with f(u) = u + u**3 C(u**2) on [0, hi], their max error in
    units of 2**-24 relative)."""
    ld = np.longdouble
    u = _nodes(1e-4, hi, npts)
    z = u * u
    g = (f(u) - u) / u ** 3
    wt = u ** 3 / f(u) * 2.0 ** 24     # error of C -> the result's relative error
    c = []
    for j in range(degree + 1):
        rest = g - sum(ld(v) * z ** i for i, v in enumerate(c))
        A = np.stack([z ** i for i in range(j, degree + 1)], 1) * wt[:, None]
        c.append(np.float32(_lawson(A.astype(float), (rest * wt).astype(float), iters)[0]))
    err = np.abs((sum(ld(v) * z ** i for i, v in enumerate(c)) - g) * wt).max()
    return c, float(err)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("name", nargs="?", default="atan", choices=sorted(CASES))
    ap.add_argument("--step", type=int, default=1, help="check every K-th bit pattern")
    ap.add_argument("--bound", type=float, default=None, help="largest error allowed (ulp)")
    ap.add_argument("--fit", action="store_true", help="print the fitted coefficients")
    args = ap.parse_args(argv)
    fn, ref, spans, how, bound = CASES[args.name]
    bound = bound if args.bound is None else args.bound
    if args.fit:
        if how is None:
            print(f"{args.name} uses asin's polynomial")
            return 0
        c, err = fit(*how)
        print(f"{args.name}: coefficients (error {err:.4f} x 2**-24 relative):")
        print("    " + ", ".join(repr(float(v)) for v in c))
        return 0
    t0 = time.perf_counter()
    worst, where, count = 0.0, 0, 0
    for first, last in spans:
        err, at = _checker(fn, ref)(first, last + 1, args.step, 256)
        k = int(np.argmax(err))
        count += (last + 1 - first + args.step - 1) // args.step
        if err[k] >= worst:
            worst, where = float(err[k]), int(at[k])
    x = np.uint32(where).view(np.float32)
    print(f"{args.name}_f32 over {count} float32: max {worst:.4f} ulp at x = {float(x)!r} "
          f"(bits 0x{where:08x}); {time.perf_counter() - t0:.1f} s")
    return 0 if worst <= bound else 1


if __name__ == "__main__":
    sys.exit(main())
