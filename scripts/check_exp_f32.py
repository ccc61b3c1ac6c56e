"""Checks the float32 exp, exp2 and expm1 kernels (vector_math/exp_log.py exp_f32 / exp2_f32 /
expm1_f32, computed in float32 arithmetic) over every float32 whose result is finite or
underflows: all values in [-104, 89] for exp, [-150, 128] for exp2, [-20, 89] for expm1 (below
-20 it is -1; about 2.2e9 bit patterns each, denormal results included), against the float64
function (libm through Numba, ~2**-29 ulp of float32), in float32 ulps of the reference rounded
to float32 (the exhaustive checker of check_log_f32.py). About a minute per function on 2 cores.

    PYTHONPATH=src python scripts/check_exp_f32.py [--step K] [--funcs exp,exp2,expm1]
    PYTHONPATH=src python scripts/check_exp_f32.py --fit-expm1   # rederive expm1_f32's Q

Prints the max error and where (exit status 1 above the bound the tests assert: 1 ulp, expm1
1.25).
--fit-expm1 prints Q of expm1 r = r + r^2 Q(r) on |r| <= 0.7 (degree 6), minimax for the
relative error of expm1 r (Lawson's reweighted least squares on Chebyshev nodes, long double
reference), each coefficient rounded to float32 in turn and the rest refitted.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_log_f32 import report_max  # noqa: E402  (the exhaustive ulp checker)
from check_tanh_f32 import _lawson, _nodes  # noqa: E402

from tensorlib.kernels.cpu.vector_math import exp_log as vm  # noqa: E402

BOUND = {"exp": 1.0, "exp2": 1.0, "expm1": 1.25}  # as tests/kernels/cpu/test_vector_math.py


def _ranges(hi, lo):
    """[+0, hi] and [-0, lo] as bit patterns (stop excluded)."""
    return [(0x00000000, int(np.float32(hi).view(np.uint32)) + 1),
            (0x80000000, int(np.float32(lo).view(np.uint32)) + 1)]


FUNCS = {"exp": (vm.exp_f32, np.exp, _ranges(89.0, -104.0)),
         "exp2": (vm.exp2_f32, np.exp2, _ranges(128.0, -150.0)),
         "expm1": (vm.expm1_f32, np.expm1, _ranges(89.0, -20.0))}


def fit_expm1(degree=6, npts=6000, iters=300):
    """(Q's float32 coefficients, their max error in units of 2**-24 relative)."""
    ld = np.longdouble
    r = _nodes(-0.7, 0.7, npts)
    r = r[np.abs(r) > 1e-6]
    g = (np.expm1(r) - r) / r ** 2
    wt = r ** 2 / np.abs(np.expm1(r)) * 2.0 ** 24   # error of Q -> expm1 r's relative error
    q = []
    for j in range(degree + 1):
        rest = g - sum(ld(v) * r ** i for i, v in enumerate(q))
        A = np.stack([r ** i for i in range(j, degree + 1)], 1) * wt[:, None]
        q.append(np.float32(_lawson(A.astype(float), (rest * wt).astype(float), iters)[0]))
    return q, float(np.abs((sum(ld(v) * r ** i for i, v in enumerate(q)) - g) * wt).max())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--step", type=int, default=1)
    ap.add_argument("--funcs", default=",".join(FUNCS))
    ap.add_argument("--fit-expm1", action="store_true", help="print expm1_f32's coefficients")
    args = ap.parse_args(argv)
    if args.fit_expm1:
        q, err = fit_expm1()
        print(f"Q0..Q6 (expm1 error {err:.4f} x 2**-24 relative):")
        print("    " + ", ".join(repr(float(v)) for v in q))
        return 0
    status = 0
    for name in args.funcs.split(","):
        fn, ref, ranges = FUNCS[name]
        status |= not report_max(name, fn, ref, ranges, args.step) <= BOUND[name]
    return status


if __name__ == "__main__":
    sys.exit(main())
