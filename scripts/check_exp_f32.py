"""Checks the float32 exp, exp2, expm1, sinh and cosh kernels (vector_math exp_f32 / exp2_f32 /
expm1_f32 / sinh_f32 / cosh_f32, computed in float32 arithmetic) over every float32 whose result
is finite or underflows: all values in [-104, 89] for exp, [-150, 128] for exp2, [-20, 89] for
expm1 (below -20 it is -1), [-89.4, 89.4] for sinh / cosh (about 2.2e9 bit patterns each,
denormal results included), against the float64
function (libm through Numba, ~2**-29 ulp of float32), in float32 ulps of the reference rounded
to float32 (the exhaustive checker of check_log_f32.py). About a minute per function on 2 cores.

    PYTHONPATH=src python scripts/check_exp_f32.py [--step K] [--funcs exp,exp2,expm1,sinh,cosh]
    PYTHONPATH=src python scripts/check_exp_f32.py --fit-expm1   # rederive expm1_f32's Q
    PYTHONPATH=src python scripts/check_exp_f32.py --fit-sinh    # ... and sinh_f32's P

Prints the max error and where (exit status 1 above the bound the tests assert: 1 ulp, expm1
1.25, sinh / cosh 1.55). --fit-expm1 prints Q of expm1 r = r + r^2 Q(r) on |r| <= 0.7 (degree
6), --fit-sinh P of sinh a = a + a^3 P(a^2) on [0, 2] (degree 4): minimax for the relative
error of the result (Lawson's reweighted least squares on Chebyshev nodes, long double
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

from tensorlib.kernels.cpu.vector_math import exp_log as vm, hyperbolic  # noqa: E402

BOUND = {"exp": 1.0, "exp2": 1.0, "expm1": 1.25, "sinh": 1.55, "cosh": 1.55}  # as the tests


def _ranges(hi, lo):
    """[+0, hi] and [-0, lo] as bit patterns (stop excluded)."""
    return [(0x00000000, int(np.float32(hi).view(np.uint32)) + 1),
            (0x80000000, int(np.float32(lo).view(np.uint32)) + 1)]


FUNCS = {"exp": (vm.exp_f32, np.exp, _ranges(89.0, -104.0)),
         "exp2": (vm.exp2_f32, np.exp2, _ranges(128.0, -150.0)),
         "expm1": (vm.expm1_f32, np.expm1, _ranges(89.0, -20.0)),
         "sinh": (hyperbolic.sinh_f32, np.sinh, _ranges(89.4, -89.4)),
         "cosh": (hyperbolic.cosh_f32, np.cosh, _ranges(89.4, -89.4))}


def _fit(f, lo, hi, power, var, degree, npts=6000, iters=300):
    """Float32 coefficients c of f(r) = r + r**power C(var(r)) on [lo, hi], minimax for the
    relative error of f (each rounded in turn, the rest refitted), and that error in units of
    2**-24."""
    ld = np.longdouble
    r = _nodes(lo, hi, npts)
    r = r[np.abs(r) > 1e-6]
    g = (f(r) - r) / r ** power
    v = var(r)
    wt = np.abs(r ** power / f(r)) * 2.0 ** 24     # error of C -> the result's relative error
    c = []
    for j in range(degree + 1):
        rest = g - sum(ld(x) * v ** i for i, x in enumerate(c))
        A = np.stack([v ** i for i in range(j, degree + 1)], 1) * wt[:, None]
        c.append(np.float32(_lawson(A.astype(float), (rest * wt).astype(float), iters)[0]))
    return c, float(np.abs((sum(ld(x) * v ** i for i, x in enumerate(c)) - g) * wt).max())


FITS = {  # expm1 r = r + r^2 Q(r) on |r| <= 0.7; sinh a = a + a^3 P(a^2) on [0, 2]
    "expm1": (np.expm1, -0.7, 0.7, 2, lambda r: r, 6),
    "sinh": (np.sinh, 0.0, 2.0, 3, lambda a: a * a, 4),
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--step", type=int, default=1)
    ap.add_argument("--funcs", default=",".join(FUNCS))
    ap.add_argument("--fit-expm1", action="store_true", help="print expm1_f32's coefficients")
    ap.add_argument("--fit-sinh", action="store_true", help="print sinh_f32's coefficients")
    args = ap.parse_args(argv)
    for name in ("expm1", "sinh"):
        if getattr(args, f"fit_{name}"):
            c, err = _fit(*FITS[name])
            print(f"{name} (error {err:.4f} x 2**-24 relative):")
            print("    " + ", ".join(repr(float(v)) for v in c))
            return 0
    status = 0
    for name in args.funcs.split(","):
        fn, ref, ranges = FUNCS[name]
        status |= not report_max(name, fn, ref, ranges, args.step) <= BOUND[name]
    return status


if __name__ == "__main__":
    sys.exit(main())
