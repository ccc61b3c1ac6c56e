"""Checks float32 pow's half-integer form (vector_math.pow_halves_f32, the block fast form of
x ** y for y in 0, 0.5, ..., 8) over every non-negative finite float32 x: x ** 0.5 must be
sqrt(x) to the bit and x ** 2 the correctly rounded x * x (~2.1e9 values each; about a minute
each on 2 cores).

    PYTHONPATH=src python scripts/check_pow_halves_f32.py

Prints the mismatch count per exponent (exit status 1 if any).
"""
from __future__ import annotations

import sys
import time

import numpy as np
from numba import njit, prange

from tensorlib.kernels.cpu.vector_math import power
from tensorlib.kernels.cpu.vector_math.base import bits_f32, f32_bits

_CHUNKS = 64


@njit(parallel=True, error_model="numpy", nogil=True)
def _mismatches(y, square):
    """Per chunk of the bit patterns 0 .. 0x7f7fffff: the count of x whose x ** y differs
    from the reference (x * x rounded once if square, else sqrt(x)), and the first such x."""
    top = np.uint64(0x7f800000)
    bad = np.zeros(_CHUNKS, np.int64)
    first = np.zeros(_CHUNKS, np.uint32)
    for c in prange(_CHUNKS):
        lo = top * np.uint64(c) // np.uint64(_CHUNKS)
        hi = top * np.uint64(c + 1) // np.uint64(_CHUNKS)
        for u in range(lo, hi):
            x = bits_f32(np.uint32(u))
            got = power.pow_halves_f32(x, y)
            want = np.float32(np.float64(x) * np.float64(x)) if square else np.sqrt(x)
            if f32_bits(got) != f32_bits(want):
                if bad[c] == 0:
                    first[c] = np.uint32(u)
                bad[c] += 1
    return bad, first


def main() -> int:
    failed = False
    for y, square in ((0.5, False), (2.0, True)):
        t0 = time.perf_counter()
        bad, first = _mismatches(np.float32(y), square)
        examples = [first[c].view(np.float32) for c in range(_CHUNKS) if bad[c]][:3]
        print(f"x ** {y}: {int(bad.sum())} mismatches over every non-negative finite float32"
              f"{' (first: ' + str(examples) + ')' if examples else ''}, "
              f"{time.perf_counter() - t0:.0f} s")
        failed |= bool(bad.sum())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
