"""Measures the float32 atan's error (vector_math.atan_f32, computed in float32 arithmetic)
over every non-negative float32 (~2.14e9 values, inf included; a couple of minutes on 2
cores) against float64 atan, with scripts/check_log_f32.py's checker (float32 ulps of the
reference rounded to float32). atan is odd and the helper works on |x| (its sign is copied
back), so this covers every input.

    PYTHONPATH=src python scripts/check_atan_f32.py [--step K] [--bound B]
    PYTHONPATH=src python scripts/check_atan_f32.py --fit      # rederive the coefficients

Prints the largest error and where it occurs; exit status 1 if it exceeds ``--bound`` (the
bound tests/kernels/cpu/test_vector_math.py holds atan to). --fit prints atan_f32's Q:
atan t = t + t**3 Q(t**2) on [0, 1], Q of degree 8, minimax for the relative error of atan t
(Lawson's reweighted least squares on Chebyshev nodes, long double reference), each
coefficient rounded to float32 in turn and the rest refitted.
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


def fit(degree=8, npts=6000, iters=300):
    """(Q's float32 coefficients, their max error in units of 2**-24 relative)."""
    ld = np.longdouble
    t = _nodes(1e-4, 1.0, npts)
    z = t * t
    g = (np.arctan(t) - t) / t ** 3
    wt = t ** 3 / np.arctan(t) * 2.0 ** 24     # error of Q -> the result's relative error
    q = []
    for j in range(degree + 1):
        rest = g - sum(ld(v) * z ** i for i, v in enumerate(q))
        A = np.stack([z ** i for i in range(j, degree + 1)], 1) * wt[:, None]
        q.append(np.float32(_lawson(A.astype(float), (rest * wt).astype(float), iters)[0]))
    err = np.abs((sum(ld(v) * z ** i for i, v in enumerate(q)) - g) * wt).max()
    return q, float(err)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--step", type=int, default=1, help="check every K-th bit pattern")
    ap.add_argument("--bound", type=float, default=1.1, help="largest error allowed (ulp)")
    ap.add_argument("--fit", action="store_true", help="print the fitted coefficients")
    args = ap.parse_args(argv)
    if args.fit:
        q, err = fit()
        print(f"Q0..Q8 (atan error {err:.4f} x 2**-24 relative):")
        print("    " + ", ".join(repr(float(v)) for v in q))
        return 0
    stop = int(np.float32(np.inf).view(np.uint32)) + 1
    t0 = time.perf_counter()
    err, at = _checker(inverse_trig.atan_f32, np.arctan)(0, stop, args.step, 256)
    k = int(np.argmax(err))
    x = np.uint32(at[k]).view(np.float32)
    print(f"atan_f32 over {(stop + args.step - 1) // args.step} float32 in [0, inf]: max "
          f"{err[k]:.4f} ulp at x = {float(x)!r} (bits 0x{int(at[k]):08x}); "
          f"{time.perf_counter() - t0:.1f} s")
    return 0 if err[k] <= args.bound else 1


if __name__ == "__main__":
    sys.exit(main())
