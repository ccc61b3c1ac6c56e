"""Measures the float32 tanh's error (vector_math.tanh_f32, computed in float32 arithmetic) over
every float32 in [0, 9.6] (~1.09e9 values; tens of seconds on 2 cores) against float64 tanh,
in units of the float32 ulp of the correctly rounded result. tanh is odd and the helper works
on |x| (its sign is copied back), and above 9.5 it returns 1 exactly, so this covers every
finite input.

    PYTHONPATH=src python scripts/check_tanh_f32.py [--step K] [--bound B]

Prints the largest error and where it occurs; exit status 1 if it exceeds ``--bound`` (the
bound tests/kernels/cpu/test_vector_math.py holds tanh to).
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from numba import njit, prange

from tensorlib.kernels.cpu.vector_math import base, hyperbolic


@njit(parallel=True, error_model="numpy", nogil=True)
def worst(first, stop, step, nchunks):
    """(largest ulp error, its bit pattern) per chunk over first, first + step, ... < stop."""
    count = (stop - first + step - 1) // step
    err = np.zeros(nchunks)
    at = np.zeros(nchunks, np.int64)
    for c in prange(nchunks):
        lo = count * c // nchunks
        hi = count * (c + 1) // nchunks
        m = 0.0
        where = first
        for j in range(lo, hi):
            b = first + j * step
            x = base.bits_f32(np.uint32(b))
            got = np.float64(hyperbolic.tanh_f32(x))
            ref = np.tanh(np.float64(x))
            ulp = np.float64(np.spacing(np.float32(abs(np.float32(ref)))))
            e = abs(got - ref) / ulp
            if e > m:
                m = e
                where = b
        err[c] = m
        at[c] = where
    return err, at


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--step", type=int, default=1, help="check every K-th bit pattern")
    ap.add_argument("--bound", type=float, default=1.2, help="largest error allowed (ulp)")
    args = ap.parse_args(argv)
    stop = int(np.float32(9.6).view(np.uint32)) + 1
    t0 = time.perf_counter()
    err, at = worst(0, stop, args.step, 256)
    k = int(np.argmax(err))
    x = np.uint32(at[k]).view(np.float32)
    print(f"tanh_f32 over {(stop + args.step - 1) // args.step} float32 in [0, 9.6]: max "
          f"{err[k]:.4f} ulp at x = {float(x)!r} (bits 0x{int(at[k]):08x}); "
          f"{time.perf_counter() - t0:.1f} s")
    return 0 if err[k] <= args.bound else 1


if __name__ == "__main__":
    sys.exit(main())
