"""Checks the float32 asinh, acosh and atanh kernels (vector_math/hyperbolic.py, computed in
float32 arithmetic) over every float32 they take a finite result for: asinh every positive
finite value (it is odd and works on |x|), acosh every value in [1, inf), atanh every value in
[0, 1) (odd too). Reference and error as scripts/check_log_f32.py (float64 libm through Numba,
float32 ulps of the reference rounded to float32). About a minute per function on 2 cores.

    PYTHONPATH=src python scripts/check_hyperbolic_f32.py [--step K] [--funcs asinh,atanh]

Prints the max error and where per function; exit status 1 if one exceeds its bound (the one
tests/kernels/cpu/test_vector_math.py asserts).
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_log_f32 import report_max  # noqa: E402  (the exhaustive ulp checker)

from tensorlib.kernels.cpu.vector_math import hyperbolic as vm  # noqa: E402

ONE = 0x3F800000
INF = 0x7F800000
FUNCS = {
    "asinh": (vm.asinh_f32, np.arcsinh, [(0, INF)]),
    "acosh": (vm.acosh_f32, np.arccosh, [(ONE, INF)]),
    "atanh": (vm.atanh_f32, np.arctanh, [(0, ONE)]),
}
BOUND = {"asinh": 1.0, "acosh": 1.0, "atanh": 1.0}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--step", type=int, default=1, help="check every K-th bit pattern")
    ap.add_argument("--funcs", default=",".join(FUNCS))
    args = ap.parse_args(argv)
    bad = False
    for name in args.funcs.split(","):
        fn, ref, ranges = FUNCS[name]
        bad |= not (report_max(name, fn, ref, ranges, args.step) <= BOUND[name])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
