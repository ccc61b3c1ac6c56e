"""Checks the float32 sin / cos / tan short-argument reduction against the full one over every
float32 below vector_math.TRIG_SHORT_BOUND, both signs (~2.2e9 values per function; a few
minutes on 2 cores): kernels/cpu/pointwise.py runs the short form over blocks of elements
below the bound and the full form elsewhere, which is only right if they agree bit for bit.

    PYTHONPATH=src python scripts/check_trig_short.py [--step K]   # K > 1: every K-th value

Prints the mismatch count per function (exit status 1 if any).
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from numba import njit, prange

from tensorlib.kernels.cpu import vector_math as vm


@njit(parallel=True, error_model="numpy", nogil=True)
def mismatches(first, stop, step, mode, nchunks):
    """Bit patterns first, first + step, ... below stop whose two results differ, per chunk."""
    count = (stop - first + step - 1) // step
    out = np.zeros(nchunks, np.int64)
    for c in prange(nchunks):
        lo = count * c // nchunks
        hi = count * (c + 1) // nchunks
        bad = 0
        for j in range(lo, hi):
            x = vm.bits_f32(np.uint32(first + j * step))
            full = vm._trig_f32(x, mode)
            short = vm._trig_f32_short(x, mode)
            bad += vm.f32_bits(full) != vm.f32_bits(short)
        out[c] = bad
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--step", type=int, default=1)
    args = ap.parse_args(argv)
    bound = int(np.float32(vm.TRIG_SHORT_BOUND).view(np.uint32))
    total = 0
    for mode, name in enumerate(("sin", "cos", "tan")):
        t = time.perf_counter()
        bad = 0
        for sign in (0, 0x80000000):
            bad += int(mismatches(sign, sign + bound, args.step, mode, 256).sum())
        checked = 2 * ((bound + args.step - 1) // args.step)
        print(f"{name}: {bad} mismatches over {checked} float32 values with |x| < "
              f"{vm.TRIG_SHORT_BOUND:g} ({time.perf_counter() - t:.0f} s)", flush=True)
        total += bad
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
