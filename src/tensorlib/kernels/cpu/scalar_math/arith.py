"""Arithmetic, comparison and complex-part helpers (NumPy 2 ufunc semantics per type)."""
import math

import numpy as np
from numba import types
from numba.extending import register_jitable

from .. import vector_math as _vm
from .plumbing import _JIT, _bits, _cpack, _define, _from_bits, _kind, _like, _wide
from .complex_math import _cdiv, _cpow, _crecip


@register_jitable(**_JIT)
def _fdivmod(a, b):
    # npy_divmod; caller handles b == 0
    mod = np.fmod(a, b)
    div = (a - mod) / b
    if mod != 0:  # also true for nan
        if (b < 0) != (mod < 0):
            mod += b
            div -= _like(a, 1.0)
    else:
        mod = math.copysign(_like(a, 0.0), b)
    if div != 0:
        fl = np.floor(div)
        if div - fl > _like(a, 0.5):
            fl += _like(a, 1.0)
    else:
        fl = math.copysign(_like(a, 0.0), a / b)
    return fl, mod


# --------------------------------------------------------------------------
# arithmetic
# --------------------------------------------------------------------------

def _mk_floordiv(t):
    k = _kind(t)
    if k == "i":
        def impl(a, b):
            if b == 0:
                return t(0)
            if b == -1:  # INT_MIN // -1 wraps; sdiv would trap
                return t(0 - a)
            return t(a // b)
    elif k == "u":
        def impl(a, b):
            if b == 0:
                return t(0)
            return t(a // b)
    elif k == "f":
        def impl(a, b):
            if b == 0 or not (math.isfinite(a) and math.isfinite(b)):
                # floor(a / b), the Array API's values: inf // 2 = inf, 1 // -inf = -0.0
                # (NumPy's divmod gives nan and -1.0 there)
                return np.floor(a / b)
            return _fdivmod(a, b)[0]
    else:
        return None
    return impl


def _mk_remainder(t):
    k = _kind(t)
    if k == "i":
        def impl(a, b):
            if b == 0 or b == -1:
                return t(0)
            return t(a % b)  # Numba follows Python: sign of the divisor
    elif k == "u":
        def impl(a, b):
            if b == 0:
                return t(0)
            return t(a % b)
    elif k == "f":
        def impl(a, b):
            if b == 0:
                return np.fmod(a, b)
            return _fdivmod(a, b)[1]
    else:
        return None
    return impl


def _mk_fmod(t):
    k = _kind(t)
    if k == "i":
        def impl(a, b):
            if b == 0 or b == -1:
                return t(0)
            r = a % b
            if r != 0 and (r < 0) != (a < 0):  # C truncation: sign of a
                r -= b
            return t(r)
    elif k == "u":
        def impl(a, b):
            if b == 0:
                return t(0)
            return t(a % b)
    elif k == "f":
        def impl(a, b):
            return np.fmod(a, b)
    else:
        return None
    return impl


def _mk_power(t):
    k = _kind(t)
    if k in ("i", "u"):
        w = _wide(t)
        signed = k == "i"

        def impl(a, b):
            if signed and b < 0:  # NumPy raises; we follow PyTorch
                if a == 1:
                    return t(1)
                if a == -1:
                    return t(1) if (b & 1) == 0 else t(-1)
                return t(0)
            r = w(1)
            base = w(a)
            e = w(b)
            while e != 0:
                if e & w(1):
                    r = r * base  # wraps
                e = e >> w(1)
                base = base * base
            return t(r)
    elif t == types.float32:
        def impl(a, b):
            return _vm.pow_f32(a, b)
    elif t == types.float64:
        def impl(a, b):
            return _vm.pow_f64(a, b)
    elif k == "f":
        def impl(a, b):
            return np.power(a, b)
    elif k == "c":
        def impl(a, b):
            return _cpow(a, b)
    else:
        return None
    return impl


def _mk_true_div(t):
    k = _kind(t)
    if k == "f":
        return lambda a, b: a / b
    if k == "c":
        return lambda a, b: _cdiv(a, b)
    if k in ("b", "i", "u"):  # NumPy divides integers in float64
        return lambda a, b: np.float64(a) / np.float64(b)
    return None


def _mk_reciprocal(t):
    k = _kind(t)
    if k == "f":
        return lambda a: _like(a, 1.0) / a
    if k == "c":
        return lambda a: _crecip(a)
    if k == "i":
        # 1/a truncated; for a == 0 NumPy returns a UB-derived value, we give 0
        return lambda a: a if (a == 1 or a == -1) else t(0)
    if k == "u":
        return lambda a: a if a == 1 else t(0)
    return None


def _mk_square(t):
    k = _kind(t)
    if k in ("i", "u"):
        return lambda a: t(a * a)
    if k == "f":
        return lambda a: a * a
    if k == "c":
        def impl(a):
            r, i = a.real, a.imag
            return _cpack(a, r * r - i * i, r * i + i * r)
        return impl
    return None


def _mk_negative(t):
    k = _kind(t)
    if k in ("i", "u"):
        return lambda a: t(t(0) - a)  # wraps; typed 0 keeps uint64 integral
    if k == "f":
        return lambda a: -a
    if k == "c":
        return lambda a: _cpack(a, -a.real, -a.imag)
    return None


def _mk_absolute(t):
    k = _kind(t)
    if k in ("b", "u"):
        return lambda a: a
    if k == "i":
        return lambda a: a if a >= 0 else t(0 - a)  # abs(INT_MIN) == INT_MIN
    if k == "f":
        return lambda a: abs(a)
    if k == "c" and t.bitwidth == 64:
        # complex64: |z| in float64 cannot overflow and rounds once, as glibc's hypotf; unlike
        # a hypotf call it vectorizes (4x faster)
        def impl(a):
            x, y = np.float64(a.real), np.float64(a.imag)
            m = np.float32(math.sqrt(x * x + y * y))
            return np.float32(math.inf) if math.isinf(x) or math.isinf(y) else m
        return impl
    if k == "c":
        return lambda a: np.hypot(a.real, a.imag)
    return None


def _mk_sign(t):
    k = _kind(t)
    if k == "u":
        return lambda a: t(1) if a > 0 else t(0)
    if k == "i":
        return lambda a: t(1) if a > 0 else (t(-1) if a < 0 else t(0))
    if k == "f":
        # nan passes through; -0.0 gives +0.0 like NumPy
        return lambda a: t(1) if a > 0 else (t(-1) if a < 0 else (t(0) if a == 0 else a))
    if k == "c":
        def impl(a):
            r, i = a.real, a.imag
            m = np.hypot(r, i)
            if math.isnan(m):
                return _cpack(a, math.nan, math.nan)
            if math.isinf(m):
                if math.isinf(r):
                    if math.isinf(i):
                        return _cpack(a, math.nan, math.nan)
                    return _cpack(a, 1.0 if r > 0 else -1.0, 0.0)
                return _cpack(a, 0.0, 1.0 if i > 0 else -1.0)
            if m == 0:
                return _cpack(a, 0.0, 0.0)
            return _cpack(a, r / m, i / m)
        return impl
    return None


floordiv = _define("floordiv", 2, _mk_floordiv)
remainder = _define("remainder", 2, _mk_remainder)
fmod_ = _define("fmod_", 2, _mk_fmod)
def _inline_real_float(expr, caller_info, callee_info):
    """Numba inline policy: inline the calls with a real float operand (float power is
    vector_math's pow_f32 / pow_f64, which must reach the loop to vectorize) and not the integer
    power loop (inlining it in Numba's IR trips an internal scope check)."""
    return any(isinstance(types.unliteral(caller_info.typemap[v.name]), types.Float)
               for v in expr.args)


power = _define("power", 2, _mk_power, inline=_inline_real_float)


# Block fast form of pow (ops.yaml block_fast): float32 / float64 powers by a half-integer in
# [0, vector_math.POW_HALVES_MAX] by products and a square root (vector_math.pow_halves_f32 /
# pow_halves_f64).
def _mk_small_halves(t):
    if t in (types.float32, types.float64):
        npt = np.float32 if t == types.float32 else np.float64
        top, two, zero = npt(_vm.POW_HALVES_MAX), npt(2.0), npt(0.0)

        def impl(b):
            m = b * two
            return (np.floor(m) == m) & (b >= zero) & (b <= top)  # not nan, inf
        return impl
    return lambda b: False


def _mk_pow_form(f32, f64):
    """The maker of a block form of pow: vector_math's float32 / float64 kernels ``f32`` /
    ``f64``, pow itself for other types (where its guard never holds)."""
    def make(t):
        if t == types.float32:
            return lambda a, b: f32(a, b)
        if t == types.float64:
            return lambda a, b: f64(a, b)
        return _mk_power(t)
    return make


def _small_halves_value(b):
    """small_halves on a NumPy scalar (a guard that reads only values is decided in Python:
    kernels/cpu/pointwise.py _python_guard): the test in double, where 2b is exact."""
    if not isinstance(b, (np.float32, np.float64)):
        return False
    f = float(b)
    return 0.0 <= f <= _vm.POW_HALVES_MAX and (2.0 * f).is_integer()   # nan, inf: False


small_halves = _define("small_halves", 1, _mk_small_halves, inline="always")
# where it can hold (kernels/cpu/pointwise.py)
small_halves.block_dtypes = frozenset(("float32", "float64"))
small_halves.value_py = _small_halves_value
power_halves = _define("power_halves", 2, _mk_pow_form(_vm.pow_halves_f32, _vm.pow_halves_f64),
                       inline=_inline_real_float)


# The ordinary form of pow (ops.yaml block_fast, after the half-integer one): a positive finite
# base and a finite exponent other than the value forms' 2, -1 and 1/2 need none of C99's cases
# (vector_math.pow_ordinary_f32 / pow_ordinary_f64: the same bits as power there, cheaper).
def _mk_ordinary_pow(t):
    if t in (types.float32, types.float64):
        npt = np.float32 if t == types.float32 else np.float64
        zero, inf, two, minus_one, half = npt(0.0), npt(np.inf), npt(2.0), npt(-1.0), npt(0.5)

        def impl(a, b):
            return ((a > zero) & (a < inf) & (abs(b) < inf) & (b != two) & (b != minus_one)
                    & (b != half))
        return impl
    return lambda a, b: False


ordinary_pow = _define("ordinary_pow", 2, _mk_ordinary_pow, inline="always")
ordinary_pow.block_dtypes = frozenset(("float32", "float64"))
power_ordinary = _define("power_ordinary", 2,
                         _mk_pow_form(_vm.pow_ordinary_f32, _vm.pow_ordinary_f64),
                         inline=_inline_real_float)
true_div = _define("true_div", 2, _mk_true_div)
reciprocal = _define("reciprocal", 1, _mk_reciprocal)
def _mk_scale(t):
    k = _kind(t)
    if k == "c":
        def impl(alpha, b):
            if alpha.imag == 0:  # a real factor scales each part: 1 * (0 + inf j) stays inf j
                return _cpack(b, alpha.real * b.real, alpha.real * b.imag)
            return alpha * b
        return impl
    if k == "b":
        return lambda alpha, b: alpha and b
    if k is not None:
        return lambda alpha, b: alpha * b
    return None


scale = _define("scale", 2, _mk_scale)  # add / subtract's alpha * other
square = _define("square", 1, _mk_square)
negative = _define("negative", 1, _mk_negative)
absolute = _define("absolute", 1, _mk_absolute)
sign = _define("sign", 1, _mk_sign)


# --------------------------------------------------------------------------
# comparison-ish
# --------------------------------------------------------------------------

def _mk_minmax(is_max):
    def make(t):
        k = _kind(t)
        if k == "b":
            return (lambda a, b: a or b) if is_max else (lambda a, b: a and b)
        if k in ("i", "u"):
            return (lambda a, b: a if a > b else b) if is_max else (lambda a, b: a if a < b else b)
        if k == "f":
            # nan in either propagates; equal values (+-0) give b, as NumPy's
            # SIMD loops do on x86
            if is_max:
                return lambda a, b: a if (a > b or a != a) else b
            return lambda a, b: a if (a < b or a != a) else b
        if k == "c":
            # NumPy's lexicographic CGE/CLE with nan propagation
            if is_max:
                def impl(a, b):
                    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
                    if (math.isnan(ar) or math.isnan(ai)
                            or (ar > br and not math.isnan(ai) and not math.isnan(bi))
                            or (ar == br and ai >= bi)):
                        return a
                    return b
            else:
                def impl(a, b):
                    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
                    if (math.isnan(ar) or math.isnan(ai)
                            or (ar < br and not math.isnan(ai) and not math.isnan(bi))
                            or (ar == br and ai <= bi)):
                        return a
                    return b
            return impl
        return None
    return make


maximum = _define("maximum", 2, _mk_minmax(True))
minimum = _define("minimum", 2, _mk_minmax(False))


def _mk_clip(t):
    if _kind(t) is None:
        return None
    return lambda x, lo, hi: minimum(maximum(x, lo), hi)


clip = _define("clip", 3, _mk_clip)


def _mk_copysign(t):
    if _kind(t) == "f":
        return lambda a, b: math.copysign(a, b)
    return None


def _mk_nextafter(t):
    if _kind(t) != "f":
        return None

    def impl(a, b):
        if a != a or b != b:
            return a + b
        if a == b:
            return b
        if a == 0:
            return math.copysign(_from_bits(a, 1), b)  # smallest subnormal
        u = _bits(a)
        if (a < b) == (a > 0):  # sign-magnitude: grow or shrink |a|
            return _from_bits(a, u + _like(u, 1))
        return _from_bits(a, u - _like(u, 1))
    return impl


def _mk_signbit(t):
    k = _kind(t)
    if k == "f":
        shift = t.bitwidth - 1
        return lambda a: (_bits(a) >> shift) != 0
    if k == "i":
        return lambda a: a < 0
    if k in ("u", "b"):
        return lambda a: a != a  # False, but typed bool rather than a literal
    return None


def _mk_isnan(t):
    k = _kind(t)
    if k == "f":
        return lambda a: math.isnan(a)
    if k == "c":
        return lambda a: math.isnan(a.real) or math.isnan(a.imag)
    if k is not None:
        return lambda a: a != a  # False as a non-literal bool
    return None


def _mk_isinf(t):
    k = _kind(t)
    if k == "f":
        return lambda a: math.isinf(a)
    if k == "c":
        return lambda a: math.isinf(a.real) or math.isinf(a.imag)
    if k is not None:
        return lambda a: a != a
    return None


def _mk_isfinite(t):
    k = _kind(t)
    if k == "f":
        return lambda a: math.isfinite(a)
    if k == "c":
        return lambda a: math.isfinite(a.real) and math.isfinite(a.imag)
    if k is not None:
        return lambda a: a == a
    return None


copysign = _define("copysign", 2, _mk_copysign)
nextafter = _define("nextafter", 2, _mk_nextafter)
signbit = _define("signbit", 1, _mk_signbit)
isnan = _define("isnan", 1, _mk_isnan)
isinf = _define("isinf", 1, _mk_isinf)
isfinite = _define("isfinite", 1, _mk_isfinite)


# --------------------------------------------------------------------------
# complex parts: on real types conj and real_part are the identity and
# imag_part is zero (NumPy's np.conj / np.real / np.imag on real arrays)
# --------------------------------------------------------------------------

def _mk_conj(t):
    k = _kind(t)
    if k == "c":
        return lambda a: _cpack(a, a.real, -a.imag)  # -0.0 imaginary parts flip sign too
    if k in ("i", "u", "f"):
        return lambda a: a
    return None


def _mk_real_part(t):
    k = _kind(t)
    if k == "c":
        return lambda a: a.real
    if k in ("i", "u", "f"):
        return lambda a: a
    return None


def _mk_imag_part(t):
    k = _kind(t)
    if k == "c":
        return lambda a: a.imag
    if k in ("i", "u", "f"):
        return lambda a: t(0)
    return None


conj = _define("conj", 1, _mk_conj)
real_part = _define("real_part", 1, _mk_real_part)
imag_part = _define("imag_part", 1, _mk_imag_part)
