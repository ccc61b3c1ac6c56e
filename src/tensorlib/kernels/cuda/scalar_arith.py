"""Arithmetic, comparison, bitwise and logical Triton scalar helpers (scalar_math.py is the
facade kernels import; its docstring gives the semantics).
"""
import triton.language as tl

from tensorlib.kernels.cuda.launch import helper_mode, helper_part, libdevice_for

_MODE, jit = helper_mode(globals())  # launch.helper_part() loads this file once per mode
libdevice = libdevice_for(_MODE)
_bits = helper_part("scalar_bits", _MODE)  # the bit-level helpers of the same mode
fdiv_ieee, isfinite, neg, to_bool = _bits.fdiv_ieee, _bits.isfinite, _bits.neg, _bits.to_bool

__all__ = [
    "floordiv", "remainder", "fmod_", "power", "true_div", "reciprocal",
    "square", "negative", "absolute", "sign", "scale",
    "conj", "real_part", "imag_part",
    "maximum", "minimum", "clip", "copysign", "nextafter",
    "bit_and", "bit_or", "bit_xor", "bit_not", "left_shift", "right_shift",
    "logical_and", "logical_or", "logical_xor", "logical_not",
]


# ---------------------------------------------------------------- arithmetic

@jit
def _fdivmod(a, b):
    # npy_divmod (b != 0); fmod from libdevice: LLVM's frem lowering is inexact for big quotients
    mod = libdevice.fmod(a, b)
    div = fdiv_ieee(a - mod, b)
    adj = (mod != 0) & ((b < 0) != (mod < 0))
    mod = tl.where(adj, mod + b, mod)
    div = tl.where(adj, div - 1.0, div)
    zero = tl.full(a.shape, 0.0, a.dtype)
    mod = tl.where(mod != 0, mod, libdevice.copysign(zero, b))
    fl = tl.floor(div)
    fl = tl.where(div - fl > 0.5, fl + 1.0, fl)
    fl = tl.where(div != 0, fl, libdevice.copysign(zero, fdiv_ieee(a, b)))
    return fl, mod


@jit
def floordiv(a, b):
    if a.dtype.is_floating():
        fl, mod = _fdivmod(a, tl.where(b == 0, 1.0, b))
        # floor(a / b) where b == 0 or an operand is inf / nan: the Array API's values
        # (inf // 2 = inf, 1 // -inf = -0.0), as the CPU helper
        q = tl.floor(fdiv_ieee(a, b))
        fl = tl.where(isfinite(a), fl, q)  # nested wheres: an operand may be a scalar
        fl = tl.where(isfinite(b), fl, q)
        return tl.where(b == 0, q, fl)
    elif a.dtype.is_int_signed():
        bad = (b == 0) | (b == -1)
        bs = tl.where(bad, 1, b)
        q = a // bs  # truncating
        r = a - q * bs
        q = tl.where((r != 0) & ((r < 0) != (bs < 0)), q - 1, q)
        q = tl.where(b == -1, 0 - a, q)  # INT_MIN // -1 wraps
        return tl.where(b == 0, 0, q)
    else:
        bs = tl.where(b == 0, 1, b)
        return tl.where(b == 0, 0, a // bs)


@jit
def remainder(a, b):
    if a.dtype.is_floating():
        fl, mod = _fdivmod(a, tl.where(b == 0, 1.0, b))
        return tl.where(b == 0, libdevice.fmod(a, b), mod)
    elif a.dtype.is_int_signed():
        bad = (b == 0) | (b == -1)
        bs = tl.where(bad, 1, b)
        r = a - (a // bs) * bs
        r = tl.where((r != 0) & ((r < 0) != (bs < 0)), r + bs, r)  # sign of the divisor
        return tl.where(bad, 0, r)
    else:
        bs = tl.where(b == 0, 1, b)
        return tl.where(b == 0, 0, a - (a // bs) * bs)


@jit
def fmod_(a, b):
    if a.dtype.is_floating():
        return libdevice.fmod(a, b)
    elif a.dtype.is_int_signed():
        bad = (b == 0) | (b == -1)
        bs = tl.where(bad, 1, b)
        return tl.where(bad, 0, a - (a // bs) * bs)  # C truncation: sign of a
    else:
        bs = tl.where(b == 0, 1, b)
        return tl.where(b == 0, 0, a - (a // bs) * bs)


@jit
def power(a, b):
    if a.dtype.is_floating():
        return libdevice.pow(a, b)
    else:
        # square-and-multiply over every exponent bit (wraps like NumPy); a negative exponent
        # follows PyTorch (NumPy raises): 1 -> 1, -1 -> +-1, else 0
        base, e = tl.broadcast(a, b)  # loop-carried values keep one shape
        r = tl.full(base.shape, 1, a.dtype)
        for _ in range(a.dtype.primitive_bitwidth):
            r = tl.where((e & 1) != 0, r * base, r)
            base = base * base
            e = e >> 1
        if a.dtype.is_int_signed():
            odd = (b & 1) != 0
            inv = tl.where(a == 1, 1, tl.where(a == -1, tl.where(odd, -1, 1), 0))
            r = tl.where(b < 0, inv.to(a.dtype), r)
        return r


@jit
def true_div(a, b):
    if a.dtype.is_floating():
        return fdiv_ieee(a, b)
    else:
        return a.to(tl.float64) / b.to(tl.float64)  # NumPy divides integers in float64


@jit
def reciprocal(a):
    if a.dtype.is_floating():
        return fdiv_ieee(tl.full(a.shape, 1.0, a.dtype), a)
    elif a.dtype.is_int_signed():
        return tl.where((a == 1) | (a == -1), a, 0)
    else:
        return tl.where(a == 1, a, 0)


@jit
def scale(alpha, b):  # add / subtract's alpha * other
    if b.dtype == tl.int1:
        return alpha & b
    else:
        return alpha * b


@jit
def square(a):
    return a * a


@jit
def negative(a):
    if a.dtype.is_floating():
        return neg(a)
    else:
        return 0 - a


@jit
def absolute(a):
    if a.dtype.is_floating():
        return tl.abs(a)
    elif a.dtype.is_int_signed():
        return tl.where(a >= 0, a, 0 - a)  # abs(INT_MIN) == INT_MIN
    else:
        return a


@jit
def sign(a):
    if a.dtype.is_floating():
        return tl.where(a > 0, 1.0, tl.where(a < 0, -1.0, tl.where(a == 0, 0.0, a))).to(a.dtype)
    elif a.dtype.is_int_signed():
        return tl.where(a > 0, 1, tl.where(a < 0, -1, 0)).to(a.dtype)
    else:
        return tl.where(a > 0, 1, 0).to(a.dtype)


# ---------------------------------------------------------------- complex parts
# Complex compute dtypes never reach a generated kernel (see scalar_math's docstring); on real
# types conj / real_part are the identity and imag_part is zero, as on the CPU.

@jit
def conj(a):
    return a


@jit
def real_part(a):
    return a


@jit
def imag_part(a):
    return tl.where(a == a, 0, 0).to(a.dtype)  # zero of a's dtype and shape (nan -> 0 too)


# ---------------------------------------------------------------- comparison-ish

@jit
def maximum(a, b):
    if a.dtype.is_int1():
        return a | b
    elif a.dtype.is_floating():
        return tl.where((a > b) | (a != a), a, b)  # nan propagates; +-0 ties give b
    else:
        return tl.where(a > b, a, b)


@jit
def minimum(a, b):
    if a.dtype.is_int1():
        return a & b
    elif a.dtype.is_floating():
        return tl.where((a < b) | (a != a), a, b)
    else:
        return tl.where(a < b, a, b)


@jit
def clip(x, lo, hi):
    return minimum(maximum(x, lo), hi)


@jit
def copysign(a, b):
    return libdevice.copysign(a, b)


@jit
def nextafter(a, b):
    return libdevice.nextafter(a, b)


# ---------------------------------------------------------------- bitwise

@jit
def bit_and(a, b):
    return a & b


@jit
def bit_or(a, b):
    return a | b


@jit
def bit_xor(a, b):
    return a ^ b


@jit
def bit_not(a):
    if a.dtype.is_int1():
        return a == 0
    else:
        return ~a


@jit
def left_shift(a, b):
    # NumPy: counts outside [0, width) give 0
    nbits: tl.constexpr = a.dtype.primitive_bitwidth
    if a.dtype.is_int_signed():
        bad = (b < 0) | (b >= nbits)
    else:
        bad = b >= nbits
    return tl.where(bad, 0, a << tl.where(bad, 0, b))


@jit
def right_shift(a, b):
    # out-of-range counts give 0, or -1 for a negative a (arithmetic shift)
    nbits: tl.constexpr = a.dtype.primitive_bitwidth
    if a.dtype.is_int_signed():
        bad = (b < 0) | (b >= nbits)
        return tl.where(bad, tl.where(a < 0, -1, 0), a >> tl.where(bad, 0, b))
    else:
        bad = b >= nbits
        return tl.where(bad, 0, a >> tl.where(bad, 0, b))


# ---------------------------------------------------------------- logical

@jit
def logical_and(a, b):
    return to_bool(a) & to_bool(b)


@jit
def logical_or(a, b):
    return to_bool(a) | to_bool(b)


@jit
def logical_xor(a, b):
    return to_bool(a) != to_bool(b)


@jit
def logical_not(a):
    return to_bool(a) == 0
