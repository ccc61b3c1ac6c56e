"""Measures the float32 tanh's error (vector_math.tanh_f32, computed in float32 arithmetic) over
every float32 in [0, 9.6] (~1.09e9 values; about a minute on 2 cores) against float64 tanh,
with scripts/check_log_f32.py's checker (float32 ulps of the reference rounded to float32).
tanh is odd and the helper works on |x| (its sign is copied back), and above 9.5 it returns 1
exactly, so this covers every finite input.

    PYTHONPATH=src python scripts/check_tanh_f32.py [--step K] [--bound B]

Prints the largest error and where it occurs; exit status 1 if it exceeds ``--bound`` (the
bound tests/kernels/cpu/test_vector_math.py holds tanh to).
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--step", type=int, default=1, help="check every K-th bit pattern")
    ap.add_argument("--bound", type=float, default=1.2, help="largest error allowed (ulp)")
    args = ap.parse_args(argv)
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
