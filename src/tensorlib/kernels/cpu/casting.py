"""Conversions between dtypes inside generated Numba kernels.

``cast_code(src, dst, expr)`` returns Numba source converting ``expr`` (a value of ``src``, or its
raw 16-bit pattern for float16/bfloat16) to ``dst`` (again raw bits for the half types). The
float-to-integer helpers give NumPy's x86 answers for nan/inf/out-of-range instead of LLVM's
undefined result.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ... import dtypes as _dt
from .scalar_math import _bits, _from_bits

__all__ = ["cast_code", "f2i64", "f2u64", "f64_to_f32_odd", "i64_to_f32_odd", "kernel_array"]

_I64_MIN = np.int64(-(2 ** 63))


@njit(inline="always", error_model="numpy")
def f2i64(x):
    # x86 cvttsd2si yields INT64_MIN for nan and out-of-range values; NumPy inherits that.
    if x != x or x >= 9.223372036854775807e18 or x < -9.223372036854775808e18:
        return _I64_MIN
    return np.int64(x)


@njit(inline="always", error_model="numpy")
def f2u64(x):
    if x != x:
        return np.uint64(2 ** 63)
    if 0.0 <= x < 1.8446744073709551616e19:
        if x >= 9.223372036854775808e18:
            return np.uint64(np.int64(x - 9.223372036854775808e18)) + np.uint64(2 ** 63)
        return np.uint64(np.int64(x))
    return np.uint64(f2i64(x))


@njit(inline="always", error_model="numpy")
def f64_to_f32_odd(x):
    # float64 -> float32 rounded to odd. Rounding to nearest twice (float64 -> float32 -> half)
    # can turn a value just off a half-type tie into an exact tie and round it the wrong way;
    # with the float32 step rounded to odd (float32 keeps more than 2 extra bits over float16 and
    # bfloat16) the final round-to-nearest-even is the correctly rounded result, as NumPy's
    # direct double -> half conversion gives.
    f = np.float32(x)
    d = np.float64(f)
    if d == x or x != x or math.isinf(d):
        return f
    u = np.int64(_bits(f))
    if abs(d) > abs(x):
        u -= 1  # f was rounded away from zero: take the truncated neighbour
    return _from_bits(f, u | 1)


@njit(inline="always", error_model="numpy")
def i64_to_f32_odd(v):
    # int64/uint64 -> float32 rounded to odd (see f64_to_f32_odd); going through float64 would
    # round to nearest first (53 bits) and can create the false tie itself.
    neg = v < 0
    a = np.uint64(-v) if neg else np.uint64(v)  # -INT64_MIN wraps to 2**63: still right
    e = math.frexp(np.float64(a))[1]  # bit length, or one more when the float rounded up
    if e <= 24:
        r = np.float32(a)
    else:
        shift = e - 24  # keep 23-24 significant bits: still > 2 more than either half type
        m = a >> np.uint64(shift)
        if a & ((np.uint64(1) << np.uint64(shift)) - np.uint64(1)):
            m |= np.uint64(1)
        r = np.float32(math.ldexp(np.float64(m), shift))
    return -r if neg else r


def kernel_array(t):
    """The 1-D array a kernel indexes for tensor t; half types as raw uint16 (Numba has no
    float16 arrays), converted with f16_to_f32 & co. in cast_code."""
    dt = t._dtype
    np_dtype = np.uint16 if dt.itemsize == 2 and dt.kind == "f" else dt.storage_np_dtype
    return t._storage.typed(np_dtype)


def _np_name(d) -> str:
    return "bool_" if d is _dt.bool_ else d.name


def cast_code(src, dst, expr: str) -> str:
    if src is dst:
        return expr
    # Widen half types to float32 first; the rest of the rules then apply to float32.
    if src is _dt.float16:
        return cast_code(_dt.float32, dst, f"f16_to_f32({expr})")
    if src is _dt.bfloat16:
        return cast_code(_dt.float32, dst, f"bf16_to_f32({expr})")
    if dst is _dt.bool_:
        return f"(({expr}) != 0)"
    if src.kind == "c" and dst.kind != "c":
        return cast_code(_dt.real_for(src), dst, f"({expr}).real")
    if dst is _dt.float16 or dst is _dt.bfloat16:
        conv = "f32_to_f16" if dst is _dt.float16 else "f32_to_bf16"
        # sources wider than float32's 24-bit significand: avoid double rounding
        if src.kind in "iu" and src.itemsize == 8:
            return f"{conv}(i64_to_f32_odd({expr}))"
        if src is _dt.float64 or (src.kind in "iu" and src.itemsize == 4):
            return f"{conv}(f64_to_f32_odd(np.float64({expr})))"
        return f"{conv}({cast_code(src, _dt.float32, expr)})"
    if src.kind == "f" and dst.kind in "iu":
        if dst is _dt.uint64:
            return f"f2u64({expr})"
        return f"np.{dst.name}(f2i64({expr}))"
    return f"np.{_np_name(dst)}({expr})"
