"""Bit-level pieces of the Triton scalar helpers (scalar_math.py is the facade kernels import):
storage conversions and scalar-argument rebuilding, IEEE division / sqrt, the sign-bit
negation and the nan / inf tests. They call nothing outside this file, so the other helper
parts (scalar_arith, scalar_transcend, complex_base) build on them.
"""
import triton.language as tl

from tensorlib.kernels.cuda.launch import helper_mode

_MODE, jit = helper_mode(globals())  # launch.helper_part() loads this file once per mode

__all__ = [
    "join64", "bf16_bits_to_f32", "f32_to_bf16_bits", "f64_to_f32_odd", "u64_to_f32_odd",
    "i64_to_f32_odd", "f2i64", "f2u64", "to_bool", "fdiv_ieee",
    "neg", "signbit", "isnan", "isinf", "isfinite",
]


# ---------------------------------------------------------------- conversions

@jit
def join64(lo, hi):
    """int64 from two int32 halves (scalar arguments travel as bit pairs)."""
    return (hi.to(tl.int64) << 32) | lo.to(tl.uint32, bitcast=True).to(tl.int64)


@jit
def bf16_bits_to_f32(u):
    return (u.to(tl.uint32) << 16).to(tl.float32, bitcast=True)


@jit
def f32_to_bf16_bits(x):
    # round to nearest even on the bits (the interpreter's own bf16 cast truncates); nan stays
    # a quiet nan with its sign
    u = x.to(tl.uint32, bitcast=True)
    r = (u + (0x7FFF + ((u >> 16) & 1))) >> 16
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    r = tl.where(nan, ((u >> 16) & 0x8000) | 0x7FC0, r)
    return r.to(tl.uint16)


@jit
def f64_to_f32_odd(x):
    # float64 -> float32 rounded to odd: a later round to a half type is then correctly rounded
    # (no double rounding), as NumPy's direct double -> half conversion is
    f = x.to(tl.float32)
    d = f.to(tl.float64)
    u = f.to(tl.int32, bitcast=True)
    u = tl.where(tl.abs(d) > tl.abs(x), u - 1, u)  # rounded away from zero: truncate instead
    r = (u | 1).to(tl.float32, bitcast=True)
    keep = (d == x) | (x != x) | ((f.to(tl.int32, bitcast=True) & 0x7FFFFFFF) == 0x7F800000)
    return tl.where(keep, f, r)


@jit
def u64_to_f32_odd(a):
    # keep 42+ significant bits with a sticky bit, exactly in float64, then round to odd
    big = (a >> 53) != 0
    m = (a >> 11) | ((a & 0x7FF) != 0).to(tl.uint64)
    x = tl.where(big, m.to(tl.float64) * 2048.0, a.to(tl.float64))
    return f64_to_f32_odd(x)


@jit
def i64_to_f32_odd(v):
    is_neg = v < 0
    a = tl.where(is_neg, 0 - v, v).to(tl.uint64, bitcast=True)  # -INT64_MIN wraps to 2**63
    r = u64_to_f32_odd(a)
    return tl.where(is_neg, neg(r), r)


@jit
def f2i64(x):
    # x86 cvttsd2si: nan and out-of-range give INT64_MIN (NumPy inherits it); the GPU would
    # saturate, so the bad lanes are replaced before converting
    bad = (x != x) | (x >= 9.223372036854775807e18) | (x < -9.223372036854775808e18)
    return tl.where(bad, -9223372036854775808, tl.where(bad, 0.0, x).to(tl.int64))


@jit
def f2u64(x):
    inr = (x >= 0.0) & (x < 1.8446744073709551616e19)
    hi = x >= 9.223372036854775808e18
    xs = tl.where(inr, x, 0.0)
    low = tl.where(hi, 0.0, xs).to(tl.int64).to(tl.uint64, bitcast=True)
    high = (tl.where(hi, xs - 9.223372036854775808e18, 0.0).to(tl.int64)
            .to(tl.uint64, bitcast=True) + 9223372036854775808)
    r = tl.where(hi, high, low)
    r = tl.where(inr, r, f2i64(x).to(tl.uint64, bitcast=True))
    return tl.where(x != x, 9223372036854775808, r)


@jit
def to_bool(x):
    """NumPy truthiness of a real value (nan is true)."""
    if x.dtype.is_int1():
        return x
    else:
        return x != 0


# ---------------------------------------------------------------- IEEE division and sqrt

@jit
def fdiv_ieee(a, b):
    # float32 `/` is div.full (approximate) in Triton; float64 `/` is IEEE already
    if a.dtype.is_fp64():
        return a / b
    else:
        return tl.div_rn(a, b)


@jit
def _sqrt_ieee(a):
    if a.dtype.is_fp64():
        return tl.sqrt(a)
    else:
        return tl.sqrt_rn(a)


# ---------------------------------------------------------------- sign and class

@jit
def neg(a):
    """-a as the CPU computes it (the sign bit flipped, also of 0.0 and nan): Triton before 3.7
    lowers unary minus to 0 - a, which turns -(+0.0) into +0.0 and so picks the wrong side of
    complex branch cuts, and a product with -1 keeps a nan's sign. Kernel code writes neg(x),
    never -x."""
    if a.dtype.is_floating():
        if a.dtype.primitive_bitwidth == 64:
            return (a.to(tl.uint64, bitcast=True) ^ 0x8000000000000000).to(a.dtype, bitcast=True)
        elif a.dtype.primitive_bitwidth == 32:
            return (a.to(tl.uint32, bitcast=True) ^ 0x80000000).to(a.dtype, bitcast=True)
        else:
            return ((a.to(tl.uint16, bitcast=True) ^ 0x8000).to(tl.uint16)).to(a.dtype,
                                                                             bitcast=True)
    else:
        return 0 - a


@jit
def signbit(a):
    if a.dtype.is_fp64():
        return a.to(tl.int64, bitcast=True) < 0
    elif a.dtype.is_floating():
        return a.to(tl.int32, bitcast=True) < 0
    elif a.dtype.is_int_signed():
        return a < 0
    else:
        return a != a


@jit
def isnan(a):
    return a != a


@jit
def isinf(a):
    if a.dtype.is_fp64():
        return (a.to(tl.int64, bitcast=True) & 0x7FFFFFFFFFFFFFFF) == 0x7FF0000000000000
    elif a.dtype.is_floating():
        return (a.to(tl.int32, bitcast=True) & 0x7FFFFFFF) == 0x7F800000
    else:
        return a != a


@jit
def isfinite(a):
    if a.dtype.is_fp64():
        return (a.to(tl.int64, bitcast=True) & 0x7FFFFFFFFFFFFFFF) < 0x7FF0000000000000
    elif a.dtype.is_floating():
        return (a.to(tl.int32, bitcast=True) & 0x7FFFFFFF) < 0x7F800000
    else:
        return a == a
