"""Checks the CPU kernels' float16 / bfloat16 storage conversions (scalar_math f32_to_f16,
f32_to_bf16) over every float32 bit pattern, 2**32 of them, against NumPy's float32 -> float16
cast (whose nan rule, the payload's top bits kept and forced non-zero, the helper follows) and
the bfloat16 rule (round to nearest even, overflow to inf, nan to the quiet nan of its sign).
The other direction, 65536 patterns, is exhaustive in tests/kernels/cpu/test_scalar_math.py.
About half an hour on 2 cores (2026-12-06: 0 mismatches for both).

    PYTHONPATH=src python scripts/check_half_conversions.py

Prints the mismatches per helper (exit status 1 if any).
"""
from __future__ import annotations

import sys

import numba
import numpy as np

from tensorlib.kernels.cpu.scalar_math import f32_to_bf16, f32_to_f16

CHUNK = 1 << 26


@numba.njit(parallel=True)
def _convert(x, to_f16, to_bf16):
    for i in numba.prange(x.size):
        to_f16[i] = f32_to_f16(x[i])
        to_bf16[i] = f32_to_bf16(x[i])


def _bf16_rule(bits):
    b = bits.astype(np.uint64)
    nan = (b & 0x7FFFFFFF) > 0x7F800000
    rne = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
    return np.where(nan, ((b >> 16) & 0x8000) | 0x7FC0, rne).astype(np.uint16)


def main() -> int:
    bad = {"f32_to_f16": 0, "f32_to_bf16": 0}
    to_f16 = np.empty(CHUNK, np.uint16)
    to_bf16 = np.empty(CHUNK, np.uint16)
    for c in range((1 << 32) // CHUNK):
        bits = np.arange(c * CHUNK, (c + 1) * CHUNK, dtype=np.uint64).astype(np.uint32)
        x = bits.view(np.float32)
        _convert(x, to_f16, to_bf16)
        with np.errstate(all="ignore"):
            want = x.astype(np.float16).view(np.uint16)
        for name, got, exp in (("f32_to_f16", to_f16, want),
                               ("f32_to_bf16", to_bf16, _bf16_rule(bits))):
            wrong = np.nonzero(got != exp)[0]
            if wrong.size:
                bad[name] += wrong.size
                i = wrong[0]
                print(f"{name}: 0x{int(bits[i]):08x} -> 0x{int(got[i]):04x}, want "
                      f"0x{int(exp[i]):04x} ({wrong.size} in this chunk)")
    for name, n in bad.items():
        print(f"{name}: {n} mismatches over 2**32 patterns")
    return 1 if any(bad.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
