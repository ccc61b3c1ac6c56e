"""Checks the float32 exp and exp2 kernels (vector_math/exp_log.py exp_f32 / exp2_f32, computed
in float32 arithmetic) over every float32 whose result is finite or underflows: all values in
[-104, 89] for exp, [-150, 128] for exp2 (about 2.2e9 bit patterns each, denormal results
included), against the float64 function (libm through Numba, ~2**-29 ulp of float32), in
float32 ulps of the reference rounded to float32 (the exhaustive checker of check_log_f32.py).
About a minute per function on 2 cores.

    PYTHONPATH=src python scripts/check_exp_f32.py [--step K] [--funcs exp,exp2]

Prints the max error and where (exit status 1 above the bound the tests assert, 1 ulp).
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_log_f32 import report_max  # noqa: E402  (the exhaustive ulp checker)

from tensorlib.kernels.cpu.vector_math import exp_log as vm  # noqa: E402

BOUND = 1.0


def _ranges(hi, lo):
    """[+0, hi] and [-0, lo] as bit patterns (stop excluded)."""
    return [(0x00000000, int(np.float32(hi).view(np.uint32)) + 1),
            (0x80000000, int(np.float32(lo).view(np.uint32)) + 1)]


FUNCS = {"exp": (vm.exp_f32, np.exp, _ranges(89.0, -104.0)),
         "exp2": (vm.exp2_f32, np.exp2, _ranges(128.0, -150.0))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--step", type=int, default=1)
    ap.add_argument("--funcs", default=",".join(FUNCS))
    args = ap.parse_args(argv)
    status = 0
    for name in args.funcs.split(","):
        fn, ref, ranges = FUNCS[name]
        status |= not report_max(name, fn, ref, ranges, args.step) <= BOUND
    return status


if __name__ == "__main__":
    sys.exit(main())
