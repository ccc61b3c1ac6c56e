"""Measures the float32 sin / cos / tan block fast path (vector_math sin_short_f32 etc., which
kernels/cpu/pointwise.py runs over blocks of elements below vector_math.TRIG_SHORT_BOUND)
over every float32 below the bound, both signs (~2.2e9 values per function; a few minutes
each on 2 cores): the error in float32 ulps (at the reference) against the float64 function
of the float64 value, and whether the special cases (+-0.0, tiny x) match the plain path.

    PYTHONPATH=src python scripts/check_trig_short.py [--step K] [--only sin,cos,tan]

Prints the max ulp per function and where it occurs (exit status 1 above LIMIT: 1.0 ulp for
sin / cos, 1.1 for tan; or if +-0.0 / tiny x give other bits than the plain path).
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np
from numba import njit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_log_f32 import _checker  # noqa: E402  (the exhaustive ulp checker)

from tensorlib.kernels.cpu import vector_math as vm  # noqa: E402

# the largest error allowed per function (tests/kernels/cpu/test_vector_math.py holds the same):
# tan is a quotient of sin / cos parts (max 1.058 ulp, near 8.9e5; NumPy's float32 tan: 3.62)
LIMIT = {"sin": 1.0, "cos": 1.0, "tan": 1.1}


FUNCS = {"sin": (vm.sin_short_f32, vm.sin_f32, math.sin),
         "cos": (vm.cos_short_f32, vm.cos_f32, math.cos),
         "tan": (vm.tan_short_f32, vm.tan_f32, math.tan)}


def _specials_match(short, plain):
    @njit(error_model="numpy")
    def both(x, a, b):
        for i in range(x.size):
            a[i] = short(x[i])
            b[i] = plain(x[i])
    x = np.float32([0.0, 1e-45, 1e-40, 1e-30, 2.0 ** -13, 2.0 ** -12 * 0.999])
    x = np.concatenate([x, -x])
    a, b = np.empty_like(x), np.empty_like(x)
    both(x, a, b)
    return bool(np.array_equal(a.view(np.uint32), b.view(np.uint32)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--step", type=int, default=1)
    ap.add_argument("--only", default="sin,cos,tan")
    args = ap.parse_args(argv)
    bound = int(np.float32(vm.TRIG_SHORT_BOUND).view(np.uint32))
    status = 0
    for name in args.only.split(","):
        short, plain, ref = FUNCS[name]
        worst = _checker(short, ref)
        t = time.perf_counter()
        best, where = -1.0, 0
        for sign in (0, 0x80000000):
            err, at = worst(sign, sign + bound, args.step, 256)
            i = int(np.argmax(err))
            if err[i] > best:
                best, where = float(err[i]), int(at[i])
        x = np.uint32(where).view(np.float32)
        special = _specials_match(short, plain)
        checked = 2 * ((bound + args.step - 1) // args.step)
        print(f"{name}: max {best:.4f} ulp at x = {x!r} over {checked} float32 values with "
              f"|x| < {vm.TRIG_SHORT_BOUND:g}; specials {'match' if special else 'DIFFER'} "
              f"({time.perf_counter() - t:.0f} s)", flush=True)
        status |= best > LIMIT[name] or not special
    return 1 if status else 0


if __name__ == "__main__":
    sys.exit(main())
