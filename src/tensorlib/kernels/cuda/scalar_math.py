"""Triton versions of the scalar helpers of ``kernels/cpu/scalar_math.py``.

Generated CUDA kernels do ``from tensorlib.kernels.cuda.scalar_math import *`` and evaluate the
same ops.yaml expressions (``floordiv(self, other)``...) on blocks already converted to the op's
compute dtype. Every helper is a ``@jit`` function that branches on its operands' dtype
at compile time, so one name serves every dtype, as the Numba overloads do.

Semantics follow the NumPy 2 ufunc on the same dtype (the oracle): nan / +-inf / signed zeros,
wrapping integer overflow, integer division by zero giving 0, x86 float -> int conversions
(nan / out of range -> INT64_MIN). Gaps, and why:

* complex: Triton has no complex type; complex kernels carry (re, im) pairs of component
  blocks and call the ``c_*`` helpers of complex_math.py instead of these (pointwise.py).
* float32 ``/`` and ``sqrt`` are approximate in Triton; these helpers use ``div_rn`` /
  ``sqrt_rn`` (IEEE) instead, and the generated kernels disable FMA contraction, so
  arithmetic rounds as NumPy does.
* transcendental functions use CUDA libdevice (within 1-2 ulp of correctly rounded, as glibc);
  results can differ from NumPy's in the last bit or two. In interpret mode ``libdevice`` is a
  NumPy shim (``_interp_libdevice``), so interpreted results equal NumPy's.
* ``erf`` uses ``tl.erf`` (libdevice erff / erf on a GPU).

Only builtins of ``triton.language`` are used (not its ``@triton.jit`` library functions such
as ``tl.zeros_like``), so the file can be built in either mode (see launch.py).
"""
import triton.language as tl

from tensorlib.kernels.cuda.launch import jit_for

# launch.helpers() loads this file once per mode; a plain import is the compiled copy
_MODE = globals().get("__tl_mode__", "compiled")
jit = jit_for(_MODE)
if _MODE == "interpret":
    from tensorlib.kernels.cuda._interp_libdevice import libdevice
else:
    from triton.language.extra.cuda import libdevice

__all__ = [
    # storage conversions and scalar arguments
    "join64", "bf16_bits_to_f32", "f32_to_bf16_bits", "f64_to_f32_odd", "u64_to_f32_odd",
    "i64_to_f32_odd", "f2i64", "f2u64", "to_bool", "fdiv_ieee",
    # arithmetic
    "floordiv", "remainder", "fmod_", "power", "true_div", "reciprocal",
    "neg", "square", "negative", "absolute", "sign", "scale",
    # complex parts (identity / zero on real types)
    "conj", "real_part", "imag_part",
    # comparison-ish
    "maximum", "minimum", "clip", "copysign", "nextafter", "signbit",
    "isnan", "isinf", "isfinite",
    # math
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh",
    "tanh", "asinh", "acosh", "atanh", "sigmoid", "erf", "floor", "ceil",
    "trunc", "round_half_even", "hypot", "logaddexp",
    # bitwise
    "bit_and", "bit_or", "bit_xor", "bit_not", "left_shift", "right_shift",
    # logical
    "logical_and", "logical_or", "logical_xor", "logical_not",
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


# ---------------------------------------------------------------- arithmetic

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
# Complex compute dtypes never reach a generated kernel (see the module docstring); on real
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


# ---------------------------------------------------------------- math (float32 / float64)

@jit
def exp(a):
    return libdevice.exp(a)


@jit
def exp2(a):
    return libdevice.exp2(a)


@jit
def expm1(a):
    return libdevice.expm1(a)


@jit
def log(a):
    return libdevice.log(a)


@jit
def log2(a):
    return libdevice.log2(a)


@jit
def log10(a):
    return libdevice.log10(a)


@jit
def log1p(a):
    return libdevice.log1p(a)


@jit
def sqrt(a):
    return _sqrt_ieee(a)


@jit
def rsqrt(a):
    return fdiv_ieee(tl.full(a.shape, 1.0, a.dtype), _sqrt_ieee(a))


@jit
def sin(a):
    return libdevice.sin(a)


@jit
def cos(a):
    return libdevice.cos(a)


@jit
def tan(a):
    return libdevice.tan(a)


@jit
def asin(a):
    return libdevice.asin(a)


@jit
def acos(a):
    return libdevice.acos(a)


@jit
def atan(a):
    return libdevice.atan(a)


@jit
def atan2(a, b):
    return libdevice.atan2(a, b)


@jit
def sinh(a):
    return libdevice.sinh(a)


@jit
def cosh(a):
    return libdevice.cosh(a)


@jit
def tanh(a):
    return libdevice.tanh(a)


@jit
def asinh(a):
    return libdevice.asinh(a)


@jit
def acosh(a):
    return libdevice.acosh(a)


@jit
def atanh(a):
    return libdevice.atanh(a)


@jit
def sigmoid(a):
    # the two forms of the CPU helper, each where it cannot overflow
    one = tl.full(a.shape, 1.0, a.dtype)
    pos = fdiv_ieee(one, one + libdevice.exp(neg(a)))
    e = libdevice.exp(a)
    return tl.where(a >= 0, pos, fdiv_ieee(e, one + e))


@jit
def erf(a):
    return tl.erf(a)


@jit
def floor(a):
    if a.dtype.is_floating():
        return tl.floor(a)
    else:
        return a


@jit
def ceil(a):
    if a.dtype.is_floating():
        return tl.ceil(a)
    else:
        return a


@jit
def trunc(a):
    if a.dtype.is_floating():
        return libdevice.trunc(a)
    else:
        return a


@jit
def round_half_even(a):
    if a.dtype.is_floating():
        return libdevice.rint(a)
    else:
        return a


@jit
def hypot(a, b):
    return libdevice.hypot(a, b)


@jit
def logaddexp(a, b):
    # npy_logaddexp: equal values (also equal infinities) avoid inf - inf
    d = a - b
    r = tl.where(d > 0, a + libdevice.log1p(libdevice.exp(neg(d))),
                 tl.where(d <= 0, b + libdevice.log1p(libdevice.exp(d)), d))
    return tl.where(a == b, a + 0.6931471805599453, r)


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
