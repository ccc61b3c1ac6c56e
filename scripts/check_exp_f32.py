"""Checks the float32 exp kernel (vector_math/exp_log.py exp_f32, computed in float32 arithmetic)
over every float32 with a finite, nonzero-or-underflowing result: all values in [-104, 89]
(about 2.2e9 bit patterns, denormal results included), against the float64 exp (libm through
Numba, ~2**-29 ulp of float32), in float32 ulps of the reference rounded to float32 (the
exhaustive checker of check_log_f32.py). About a minute on 2 cores.

    PYTHONPATH=src python scripts/check_exp_f32.py [--step K]

Prints the max error and where (exit status 1 above the bound the tests assert, 1 ulp).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_log_f32 import _checker  # noqa: E402  (the exhaustive ulp checker)

from tensorlib.kernels.cpu.vector_math import exp_log as vm  # noqa: E402

BOUND = 1.0
# [+0, 89] and [-0, -104] as bit patterns (stop excluded)
RANGES = [(0x00000000, int(np.float32(89.0).view(np.uint32)) + 1),
          (0x80000000, int(np.float32(-104.0).view(np.uint32)) + 1)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--step", type=int, default=1)
    args = ap.parse_args(argv)
    check = _checker(vm.exp_f32, np.exp)
    t = time.perf_counter()
    worst, at, count = -1.0, np.uint32(0), 0
    for first, stop in RANGES:
        m, w = check(first, stop, args.step, 256)
        i = int(np.argmax(m))
        count += (stop - first + args.step - 1) // args.step
        if m[i] > worst:
            worst, at = m[i], w[i]
    x = np.uint32(at).view(np.float32)
    print(f"exp: max {worst:.4f} ulp at x={float(x)!r} over {count} float32 values "
          f"({time.perf_counter() - t:.0f} s)", flush=True)
    return 0 if worst <= BOUND else 1


if __name__ == "__main__":
    sys.exit(main())
