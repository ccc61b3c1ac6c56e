"""Scalar helpers for the generated Numba CPU kernels.

Generated kernel modules do ``from tensorlib.kernels.cpu.scalar_math import *``
and evaluate per-op expression strings such as ``"floordiv(a, b)"`` on operands
already converted to the op's compute type.  Every helper here is a plain Python
stub with a ``numba.extending.overload`` that picks a small implementation per
numba scalar type, so the helpers compile into (and are cached with) the
caller's ``@njit(cache=True, error_model='numpy')`` kernel.

Semantics follow the NumPy 2 ufunc on the same dtype (the test oracle),
including nan / +-inf / signed zeros, wrapping integer overflow and integer
division by zero giving 0.  No helper raises from inside a kernel.

Mixed operand types are promoted like NumPy (``np.result_type``); integer
literals are "weak" (NEP 50), so ``maximum(x_f32, 0)`` stays float32.

Calling a helper from plain Python works (it jit-compiles a wrapper on first
use) but is meant for debugging only: results come back as Python scalars.

Note on caching: Numba's on-disk cache of a generated kernel is keyed on the
kernel's own source file, not on this module.  ``SOURCE_HASH`` (a digest of
this file) should be written into generated sources so that an edit here
invalidates stale cached kernels.
"""

import hashlib
import math
from pathlib import Path

import numba
import numpy as np
from numba import types
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype, from_dtype

from . import vector_math as _vm

__all__ = [
    # 16-bit float storage conversions
    "f16_to_f32", "f32_to_f16", "bf16_to_f32", "f32_to_bf16",
    # arithmetic
    "floordiv", "remainder", "fmod_", "power", "true_div", "reciprocal",
    "square", "negative", "absolute", "sign", "scale",
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
    # block fast forms (CPU loops only; dispatch/pointwise_helpers.py BLOCK_HELPERS)
    "trig_short", "sin_short", "cos_short", "tan_short",
]

SOURCE_HASH = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]

# Generated kernels are keyed on this file's text (kernels/cpu/pointwise.py hashes it), and they
# inline vector_math.py's kernels: this digest of vector_math.py puts that file's text in here,
# so an edit there re-keys the kernels (tests/test_vector_math.py checks that it is current).
VECTOR_MATH_DIGEST = "bc2ab4a5db4664c9"

# Helper bodies are compiled separately from the calling kernel, so they need
# the kernel's float semantics themselves (no ZeroDivisionError, no fastmath).
_JIT = {"error_model": "numpy", "fastmath": False}


# --------------------------------------------------------------------------
# type plumbing
# --------------------------------------------------------------------------

def _kind(t):
    if isinstance(t, types.Boolean):
        return "b"
    if isinstance(t, types.Integer):
        return "i" if t.signed else "u"
    if isinstance(t, types.Float):
        return "f"
    if isinstance(t, types.Complex):
        return "c"
    return None


def _common(tys):
    """NumPy promotion of operand types; integer/bool literals are weak."""
    strong, weak = [], []
    for t in tys:
        (weak if isinstance(t, types.Literal) else strong).append(types.unliteral(t))
    if any(_kind(t) is None for t in strong + weak):
        return None
    if not strong:
        strong, weak = weak, []
    res = from_dtype(np.result_type(*[as_dtype(t) for t in strong]))
    if weak and _kind(res) == "b" and any(_kind(w) != "b" for w in weak):
        res = types.int64  # a Python int combined with bools is an int
    return res


def _wide(t):
    # integer work type: Numba promotes small ints to 64 bit anyway
    return types.int64 if t.signed else types.uint64


_CASTERS = {
    1: lambda stub, t: (lambda a: stub(t(a))),
    2: lambda stub, t: (lambda a, b: stub(t(a), t(b))),
    3: lambda stub, t: (lambda x, lo, hi: stub(t(x), t(lo), t(hi))),
}

_PY_WRAPPERS = {}
_PY_ARITY = {
    1: lambda f: (lambda a: f(a)),
    2: lambda f: (lambda a, b: f(a, b)),
    3: lambda f: (lambda x, lo, hi: f(x, lo, hi)),
}


def _pycall(stub, args):
    fn = _PY_WRAPPERS.get(stub)
    if fn is None:
        fn = _PY_WRAPPERS[stub] = numba.njit(**_JIT)(_PY_ARITY[len(args)](stub))
    return fn(*args)


def _stub(name, arity):
    # explicit parameter names so keyword calls fold onto the impls
    if arity == 1:
        def f(a):
            return _pycall(f, (a,))
    elif arity == 2:
        def f(a, b):
            return _pycall(f, (a, b))
    else:
        def f(x, lo, hi):
            return _pycall(f, (x, lo, hi))
    f.__name__ = f.__qualname__ = name
    f.__module__ = __name__
    return f


def _define(name, arity, make, inline="never"):
    """Create helper ``name``: operands are cast to their common type ``t``
    and ``make(t)`` returns the implementation (or None: unsupported).
    ``inline="always"``: the implementation is inlined into the caller in Numba's IR (the
    vector_math kernels: too big for LLVM's inliner, and a call stops vectorization); or a
    Numba inline policy function."""
    stub = _stub(name, arity)

    # strict=False: the typing function takes *args, the impls named params
    @overload(stub, prefer_literal=True, strict=False, jit_options=_JIT, inline=inline)
    def _ov(*args):
        t = _common(args)
        if t is None:
            return None
        if any(a != t for a in args):
            # one extra hop keeps a single compiled body per type
            return _CASTERS[arity](stub, t)
        return make(t)

    return stub


def _like(x, v):
    """``v`` converted to the type of ``x`` (typed constants in generic code)."""


@overload(_like, jit_options=_JIT)
def _ov_like(x, v):
    t = types.unliteral(x)
    return lambda x, v: t(v)


def _cpack(like, re, im):
    """complex of ``like``'s type from two real parts (inf/nan exact)."""


@overload(_cpack, jit_options=_JIT)
def _ov_cpack(like, re, im):
    t = types.unliteral(like)
    # float32 -> float64 -> float32 round trip is exact, so build via complex128
    return lambda like, re, im: t(complex(re, im))


# bit reinterpretation (no Numba builtin for scalars): vector_math's intrinsics
_f32_bits, _bits_f32 = _vm.f32_bits, _vm.bits_f32
_f64_bits, _bits_f64 = _vm.f64_bits, _vm.bits_f64


def _bits(x):
    """IEEE bit pattern of a float32/float64."""


@overload(_bits, jit_options=_JIT)
def _ov_bits(x):
    if x == types.float32:
        return lambda x: _f32_bits(x)
    if x == types.float64:
        return lambda x: _f64_bits(x)
    return None


def _from_bits(like, u):
    """float of ``like``'s type with bit pattern ``u`` (truncated)."""


@overload(_from_bits, jit_options=_JIT)
def _ov_from_bits(like, u):
    if like == types.float32:
        return lambda like, u: _bits_f32(np.uint32(u))
    if like == types.float64:
        return lambda like, u: _bits_f64(np.uint64(u))
    return None


# --------------------------------------------------------------------------
# float16 / bfloat16 storage conversions (integer arithmetic: no dependence
# on F16C or compiler-rt half builtins being linkable in the JIT)
# --------------------------------------------------------------------------

@register_jitable(**_JIT)
def _f16_to_f32(a):
    h = np.int64(a) & 0xFFFF
    sign = (h & 0x8000) << 16
    e = (h >> 10) & 0x1F
    m = h & 0x3FF
    if e == 0x1F:  # inf / nan, payload kept like NumPy
        return _bits_f32(np.uint32(sign | 0x7F800000 | (m << 13)))
    if e != 0:
        return _bits_f32(np.uint32(sign | ((e + 112) << 23) | (m << 13)))
    # zero / subnormal: m * 2**-24 is exact in float32
    v = np.float32(m) * np.float32(5.960464477539063e-08)
    return _bits_f32(np.uint32(sign | np.int64(_f32_bits(v))))


@register_jitable(**_JIT)
def _f32_to_f16(a):
    x = np.int64(_f32_bits(np.float32(a)))
    sign = (x >> 16) & 0x8000
    x &= 0x7FFFFFFF
    if x >= 0x7F800000:
        if x == 0x7F800000:
            return np.uint16(sign | 0x7C00)
        # nan: keep the top payload bits, force non-zero (NumPy does the same)
        r = 0x7C00 + ((x & 0x7FFFFF) >> 13)
        if r == 0x7C00:
            r += 1
        return np.uint16(sign | r)
    if x >= 0x477FF000:  # >= 65520 rounds to inf
        return np.uint16(sign | 0x7C00)
    if x >= 0x38800000:  # normal half: rebias and round to nearest even
        return np.uint16(sign | ((x - 0x38000000 + 0xFFF + ((x >> 13) & 1)) >> 13))
    if x <= 0x33000000:  # <= 2**-25 (a tie) rounds to zero
        return np.uint16(sign)
    # subnormal half: shift the full significand, round to nearest even
    shift = 126 - (x >> 23)
    m = (x & 0x7FFFFF) | 0x800000
    r = m >> shift
    rem = m & ((np.int64(1) << shift) - 1)
    half = np.int64(1) << (shift - 1)
    if rem > half or (rem == half and (r & 1) != 0):
        r += 1
    return np.uint16(sign | r)


@register_jitable(**_JIT)
def _bf16_to_f32(a):
    return _bits_f32(np.uint32((np.int64(a) & 0xFFFF) << 16))


@register_jitable(**_JIT)
def _f32_to_bf16(a):
    x = np.int64(_f32_bits(np.float32(a)))
    if (x & 0x7FFFFFFF) > 0x7F800000:
        return np.uint16(((x >> 16) & 0x8000) | 0x7FC0)
    # round to nearest even; overflow carries into inf naturally
    return np.uint16((x + 0x7FFF + ((x >> 16) & 1)) >> 16)


def _mk_conv(impl, src_kinds):
    def make(t):
        return impl if _kind(t) in src_kinds else None
    return make


# storage words are any integer type (uint16 normally); sources any real float
f16_to_f32 = _define("f16_to_f32", 1, _mk_conv(_f16_to_f32, ("i", "u")))
bf16_to_f32 = _define("bf16_to_f32", 1, _mk_conv(_bf16_to_f32, ("i", "u")))
f32_to_f16 = _define("f32_to_f16", 1, _mk_conv(_f32_to_f16, ("f",)))
f32_to_bf16 = _define("f32_to_bf16", 1, _mk_conv(_f32_to_bf16, ("f",)))


# --------------------------------------------------------------------------
# shared float / complex pieces (ports of NumPy's npymath / loops code)
# --------------------------------------------------------------------------

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


@register_jitable(**_JIT)
def _cmul(a, b):
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    return _cpack(a, ar * br - ai * bi, ar * bi + ai * br)


@register_jitable(**_JIT)
def _cdiv_simple(a, b):
    # npymath cdiv (used by npy_cpow)
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    abr, abi = abs(br), abs(bi)
    if abr >= abi:
        if abr == 0 and abi == 0:
            return _cpack(a, ar / abr, ai / abi)
        rat = bi / br
        scl = _like(ar, 1.0) / (br + bi * rat)
        return _cpack(a, (ar + ai * rat) * scl, (ai - ar * rat) * scl)
    rat = br / bi
    scl = _like(ar, 1.0) / (bi + br * rat)
    return _cpack(a, (ar * rat + ai) * scl, (ai * rat - ar) * scl)


@register_jitable(**_JIT)
def _cdiv(a, b):
    # NumPy's complex divide loop, including its nan special cases
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    abr, abi = abs(br), abs(bi)
    arn, ain = math.isnan(ar), math.isnan(ai)
    if (not math.isnan(br) and not math.isnan(bi) and (arn or ain)
            and ((((not arn and math.isinf(ar)) or (not ain and math.isinf(ai)))
                  and (br != 0 or bi != 0))
                 or (math.isinf(br) and math.isinf(bi)))):
        nan = ar if arn else ai
        return _cpack(a, nan, nan)
    if abr >= abi:
        if abr == 0 and abi == 0:
            if (arn and (ai == 0 or ain)) or (ar == 0 and ain):
                return _cpack(a, ar if arn else ai, ai if ain else ar)
            return _cpack(a, ar / abr, ai / abi)
        rat = bi / br
        scl = _like(ar, 1.0) / (br + bi * rat)
        return _cpack(a, (ar + ai * rat) * scl, (ai - ar * rat) * scl)
    rat = br / bi
    scl = _like(ar, 1.0) / (bi + br * rat)
    return _cpack(a, (ar * rat + ai) * scl, (ai * rat - ar) * scl)


@register_jitable(**_JIT)
def _crecip(a):
    ar, ai = a.real, a.imag
    one = _like(ar, 1.0)
    if abs(ai) <= abs(ar):
        r = ai / ar
        d = ar + ai * r
        return _cpack(a, one / d, -r / d)
    r = ar / ai
    d = ar * r + ai
    return _cpack(a, r / d, -one / d)


@register_jitable(**_JIT)
def _cpow(a, b):
    # npy_cpow: exact small integer powers by repeated multiplication
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    if br == 0 and bi == 0:
        return _like(a, 1.0)
    if ar == 0 and ai == 0:
        if br > 0:
            return _like(a, 0.0)
        return _cpack(a, math.nan, math.nan)
    if bi == 0 and br > -100 and br < 100:
        n = int(br)
        if n == br:
            if n == 1:
                return a
            if n == 2:
                return _cmul(a, a)
            if n == 3:
                return _cmul(a, _cmul(a, a))
            m = abs(n)
            mask = 1
            acc = _like(a, 1.0)
            p = a
            while True:
                if m & mask:
                    acc = _cmul(acc, p)
                mask <<= 1
                if m < mask:
                    break
                p = _cmul(p, p)
            if br < 0:
                acc = _cdiv_simple(_like(a, 1.0), acc)
            return acc
    # glibc's cpow is cexp(b * clog(a)) as well
    return np.exp(b * np.log(a))


# Complex exp/sinh/cosh/tanh: ports of glibc's (which NumPy calls on Linux).
# Numba's own versions give nan for overflowing parts (exp(1e30+0j) -> inf+nanj)
# and complex64 tanh(50+0j) -> nan.

def _limits(x):
    """(exp cutoff, tanh cutoff, max, tiny, eps) in the float type of ``x``."""


@overload(_limits, jit_options=_JIT)
def _ov_limits(x):
    if not isinstance(x, types.Float):
        return None
    fi = np.finfo(as_dtype(x))
    t_exp = float(int((fi.maxexp - 1) * math.log(2)))  # 88 / 709
    t_tanh = float(int((fi.maxexp - 1) * math.log(2) / 2))  # 44 / 354
    mx, tiny, eps = float(fi.max), float(fi.tiny), float(fi.eps)
    t = x
    return lambda x: (t(t_exp), t(t_tanh), t(mx), t(tiny), t(eps))


@register_jitable(**_JIT)
def _sincos(y, tiny):
    if abs(y) > tiny:
        return np.sin(y), np.cos(y)
    return y, _like(y, 1.0)  # keeps the sign of a zero / tiny y


@register_jitable(**_JIT)
def _cexp(z):
    x, y = z.real, z.imag
    t, _, mx, tiny, _ = _limits(x)
    if math.isfinite(x):
        if not math.isfinite(y):
            return _cpack(z, math.nan, math.nan)
        s, c = _sincos(y, tiny)
        if x > t:  # scale so exp(x) * cis(y) overflows only where it must
            et = np.exp(t)
            x -= t
            s *= et
            c *= et
            if x > t:
                x -= t
                s *= et
                c *= et
        if x > t:
            return _cpack(z, mx * c, mx * s)
        ev = np.exp(x)
        return _cpack(z, ev * c, ev * s)
    if math.isinf(x):
        if math.isfinite(y):
            v = _like(x, 0.0) if x < 0 else _like(x, math.inf)
            if y == 0:
                return _cpack(z, v, y)
            s, c = _sincos(y, tiny)
            return _cpack(z, math.copysign(v, c), math.copysign(v, s))
        if x > 0:
            return _cpack(z, math.inf, y - y)
        return _cpack(z, 0.0, math.copysign(_like(x, 0.0), y))
    if y == 0:
        return _cpack(z, math.nan, y)
    return _cpack(z, math.nan, math.nan)


@register_jitable(**_JIT)
def _csinh_ccosh(z, want_cosh):
    x, y = z.real, z.imag
    t, _, mx, tiny, _ = _limits(x)
    neg = math.copysign(_like(x, 1.0), x) < 0
    ax = abs(x)
    if math.isfinite(x):
        if math.isfinite(y):
            s, c = _sincos(y, tiny)
            if want_cosh:
                if neg:
                    s = -s
            elif neg:
                c = -c
            if ax > t:
                et = np.exp(t)
                rx = ax - t
                s *= et / 2
                c *= et / 2
                if rx > t:
                    rx -= t
                    s *= et
                    c *= et
                if rx > t:
                    return _cpack(z, mx * c, mx * s)
                ev = np.exp(rx)
                return _cpack(z, ev * c, ev * s)
            if want_cosh:
                return _cpack(z, np.cosh(ax) * c, np.sinh(ax) * s)
            return _cpack(z, np.sinh(ax) * c, np.cosh(ax) * s)
        if want_cosh:
            return _cpack(z, y - y, 0.0 if x == 0 else math.nan)
        if x == 0:
            return _cpack(z, -0.0 if neg else 0.0, y - y)
        return _cpack(z, math.nan, math.nan)
    if math.isinf(x):
        if math.isfinite(y) and y != 0:
            s, c = _sincos(y, tiny)
            re = math.copysign(_like(x, math.inf), c)
            im = math.copysign(_like(x, math.inf), s)
            if want_cosh:
                return _cpack(z, re, im * math.copysign(_like(x, 1.0), x))
            return _cpack(z, -re if neg else re, im)
        if y == 0:
            if want_cosh:
                return _cpack(z, math.inf, y * math.copysign(_like(x, 1.0), x))
            return _cpack(z, -math.inf if neg else math.inf, y)
        return _cpack(z, math.inf, y - y)
    return _cpack(z, math.nan, y if y == 0 else math.nan)


@register_jitable(**_JIT)
def _ctanh(z):
    x, y = z.real, z.imag
    _, t, _, tiny, eps = _limits(x)
    one = _like(x, 1.0)
    if not (math.isfinite(x) and math.isfinite(y)):
        if math.isinf(x):  # +-1 + 0j signed as y (the Array API's; glibc signs sin(2y))
            return _cpack(z, math.copysign(one, x), math.copysign(_like(x, 0.0), y))
        if y == 0 or x == 0:  # tanh(+-0 + i inf/nan) = +-0 + i nan (C23)
            return _cpack(z, x, y if y == 0 else math.nan)
        return _cpack(z, math.nan, math.nan)
    s, c = _sincos(y, tiny)
    if abs(x) > t:
        # real part is +-1; imaginary part 4 sin cos exp(-2|x|) without overflow
        e2t = np.exp(2 * t)
        im = 4 * s * c
        rx = abs(x) - t
        im /= e2t
        if rx > t:
            im /= e2t
        else:
            im /= np.exp(2 * rx)
        return _cpack(z, math.copysign(one, x), im)
    if abs(x) > tiny:
        sh, ch = np.sinh(x), np.cosh(x)
    else:
        sh, ch = x, one
    if abs(sh) > abs(c) * eps:
        den = sh * sh + c * c
    else:
        den = c * c
    return _cpack(z, sh * ch / den, s * c / den)


@register_jitable(**_JIT)
def _times_i(z):
    return _cpack(z, -z.imag, z.real)


@register_jitable(**_JIT)
def _times_minus_i(z):
    return _cpack(z, z.imag, -z.real)


# Numba's complex sqrt and log are right except near the top of the range: its sqrt halves the
# imaginary part of huge inputs, and log(hypot(x, y)) overflows to inf where |z| does.

@register_jitable(**_JIT)
def _c_sqrt(a):
    x, y = a.real, a.imag
    big = _limits(x)[2] * _like(x, 0.25)
    if math.isfinite(x) and math.isfinite(y) and (abs(x) > big or abs(y) > big):
        q = _like(x, 0.25)  # sqrt(z) = 2 sqrt(z / 4), exact scalings
        s = np.sqrt(_cpack(a, x * q, y * q))
        return _cpack(a, s.real * 2, s.imag * 2)
    return np.sqrt(a)


@register_jitable(**_JIT)
def _log_overflows(a, w):
    return (math.isinf(w.real) and w.real > 0 and math.isfinite(a.real)
            and math.isfinite(a.imag))


@register_jitable(**_JIT)
def _half_modulus(a):
    h = _like(a.real, 0.5)
    return np.hypot(a.real * h, a.imag * h)


@register_jitable(**_JIT)
def _c_log(a):
    w = np.log(a)
    if _log_overflows(a, w):  # log|z| = log|z / 2| + ln 2
        return _cpack(a, np.log(_half_modulus(a)) + _like(a.real, 0.6931471805599453),
                      w.imag)
    return w


@register_jitable(**_JIT)
def _c_log2(a):
    w = np.log2(a)
    if _log_overflows(a, w):
        return _cpack(a, np.log2(_half_modulus(a)) + _like(a.real, 1.0), w.imag)
    return w


@register_jitable(**_JIT)
def _c_log10(a):
    w = np.log10(a)
    if _log_overflows(a, w):
        return _cpack(a, np.log10(_half_modulus(a)) + _like(a.real, 0.3010299956639812),
                      w.imag)
    return w


def _mk_cfunc(real_fn, complex_fn):
    # float -> NumPy/libm ufunc; complex -> the given port
    def make(t):
        k = _kind(t)
        if k == "f":
            return lambda a: real_fn(a)
        if k == "c":
            return complex_fn
        return None
    return make


@register_jitable(**_JIT)
def _c_exp(a):
    return _cexp(a)


@register_jitable(**_JIT)
def _c_exp2(a):
    ln2 = _like(a.real, 0.6931471805599453)
    return _cexp(_cpack(a, a.real * ln2, a.imag * ln2))


@register_jitable(**_JIT)
def _c_sinh(a):
    return _csinh_ccosh(a, False)


@register_jitable(**_JIT)
def _c_cosh(a):
    return _csinh_ccosh(a, True)


@register_jitable(**_JIT)
def _c_tanh(a):
    return _ctanh(a)


@register_jitable(**_JIT)
def _c_expm1(a):
    x, y = a.real, a.imag
    if math.isfinite(x) and math.isfinite(y):
        if y == 0:
            return _cpack(a, np.expm1(x), y)
        # NumPy's formula: no cancellation near 0 (exp(z) - 1 loses every digit there)
        h = np.sin(y * _like(y, 0.5))
        return _cpack(a, np.expm1(x) * np.cos(y) - 2 * h * h, np.exp(x) * np.sin(y))
    # an inf / nan part: exp(z) - 1 with glibc's cexp special cases, the Array API's values
    # (inf + 0j -> inf + 0j, -inf + inf j -> -1 + 0j; NumPy's expm1 gives nan parts)
    w = _cexp(a)
    return _cpack(a, w.real - _like(w.real, 1.0), w.imag)


@register_jitable(**_JIT)
def _c_sin(a):  # sin z = -i sinh(i z)
    if math.isinf(a.imag) and not math.isfinite(a.real):
        return _cpack(a, math.nan, math.inf)  # the standard leaves the sign open; glibc's
    return _times_minus_i(_csinh_ccosh(_times_i(a), False))


@register_jitable(**_JIT)
def _c_cos(a):  # cos z = cosh(i z)
    return _csinh_ccosh(_times_i(a), True)


@register_jitable(**_JIT)
def _c_tan(a):  # tan z = -i tanh(i z)
    return _times_minus_i(_ctanh(_times_i(a)))


# Numba's inverse functions are right for finite input; patch the C99
# special values on which they disagree with glibc.

@register_jitable(**_JIT)
def _c_asin(a):
    if a.real == 0 and math.isnan(a.imag):
        return a
    return np.arcsin(a)


@register_jitable(**_JIT)
def _c_acos(a):
    if a.real == 0 and math.isnan(a.imag):
        return _cpack(a, math.pi / 2, math.nan)
    return np.arccos(a)


@register_jitable(**_JIT)
def _c_asinh(a):
    if math.isnan(a.real) and a.imag == 0:
        return a
    return np.arcsinh(a)


@register_jitable(**_JIT)
def _c_atanh(a):
    if math.isnan(a.real) and math.isfinite(a.imag):
        return _cpack(a, math.nan, math.nan)
    if a.real == 0 and math.isnan(a.imag):
        return _cpack(a, a.real, math.nan)
    return np.arctanh(a)


@register_jitable(**_JIT)
def _c_atan(a):  # atan z = -i atanh(i z)
    return _times_minus_i(_c_atanh(_times_i(a)))


@register_jitable(**_JIT)
def _c_acosh(a):
    # acosh z = +-i acos z, the sign following the imaginary part of z (glibc);
    # Numba's own acosh picks the wrong branch for negative reals
    w = _c_acos(a)
    if math.copysign(_like(a.real, 1.0), a.imag) < 0:
        return _cpack(a, w.imag, -w.real)
    return _cpack(a, -w.imag, w.real)


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


# --------------------------------------------------------------------------
# math (float32 stays float32: Numba maps np.* on float32 to the libm f-variants)
# --------------------------------------------------------------------------

# exp, exp2, expm1, log, log2, log10, log1p, sin, cos, tan, asin, acos, atan, atan2, sinh,
# cosh, tanh, asinh, acosh, atanh, sigmoid, erf and power on float32 / float64 use
# the branch-free kernels of vector_math.py (the loops calling them vectorize; libm calls do
# not). Complex types keep the helpers above.

def _mk_vfunc(f32, f64, complex_fn):
    def make(t):
        if t == types.float32:
            return lambda a: f32(a)
        if t == types.float64:
            return lambda a: f64(a)
        if _kind(t) == "c" and complex_fn is not None:
            return complex_fn
        return None
    return make


def _mk_ufunc1(fn, complex_ok=True):
    def make(t):
        k = _kind(t)
        if k == "f" or (k == "c" and complex_ok):
            return lambda a: fn(a)
        return None
    return make


def _mk_ufunc2(fn):
    def make(t):
        if _kind(t) == "f":
            return lambda a, b: fn(a, b)
        return None
    return make


def _mk_rounding(fn, complex_ok=False):
    def make(t):
        k = _kind(t)
        if k in ("b", "i", "u"):
            return lambda a: a  # integers are already integral
        if k == "f" or (k == "c" and complex_ok):
            return lambda a: fn(a)
        return None
    return make


def _mk_rsqrt(t):
    k = _kind(t)
    if k == "f":
        return lambda a: _like(a, 1.0) / np.sqrt(a)
    if k == "c":
        return lambda a: _crecip(_c_sqrt(a))
    return None


def _mk_sigmoid(t):
    if t == types.float32:
        return lambda a: _vm.sigmoid_f32(a)
    if t == types.float64:
        return lambda a: _vm.sigmoid_f64(a)
    if _kind(t) != "f":
        return None

    def impl(a):
        one = _like(a, 1.0)
        if a >= 0:
            return one / (one + np.exp(-a))
        e = np.exp(a)  # a < 0 (or nan): no overflow
        return e / (one + e)
    return impl


def _mk_atan2(t):
    if t == types.float32:
        return lambda a, b: _vm.atan2_f32(a, b)
    if t == types.float64:
        return lambda a, b: _vm.atan2_f64(a, b)
    if _kind(t) == "f":
        return lambda a, b: np.arctan2(a, b)
    return None


def _mk_erf(t):
    if t == types.float32:
        return lambda a: _vm.erf_f32(a)
    if t == types.float64:
        return lambda a: _vm.erf_f64(a)
    if _kind(t) == "f":
        return lambda a: math.erf(a)
    return None


def _mk_logaddexp(t):
    if _kind(t) != "f":
        return None

    def impl(a, b):
        # npy_logaddexp
        if a == b:  # also equal infinities, without inf - inf
            return a + _like(a, 0.6931471805599453)
        d = a - b
        if d > 0:
            return a + np.log1p(np.exp(-d))
        if d <= 0:
            return b + np.log1p(np.exp(d))
        return d  # nan
    return impl


exp = _define("exp", 1, _mk_vfunc(_vm.exp_f32, _vm.exp_f64, _c_exp), inline="always")
exp2 = _define("exp2", 1, _mk_vfunc(_vm.exp2_f32, _vm.exp2_f64, _c_exp2), inline="always")
expm1 = _define("expm1", 1, _mk_vfunc(_vm.expm1_f32, _vm.expm1_f64, _c_expm1), inline="always")
log = _define("log", 1, _mk_vfunc(_vm.log_f32, _vm.log_f64, _c_log), inline="always")
log2 = _define("log2", 1, _mk_vfunc(_vm.log2_f32, _vm.log2_f64, _c_log2), inline="always")
log10 = _define("log10", 1, _mk_vfunc(_vm.log10_f32, _vm.log10_f64, _c_log10), inline="always")
log1p = _define("log1p", 1, _mk_vfunc(_vm.log1p_f32, _vm.log1p_f64, lambda a: np.log1p(a)), inline="always")
sqrt = _define("sqrt", 1, _mk_cfunc(np.sqrt, _c_sqrt))
rsqrt = _define("rsqrt", 1, _mk_rsqrt)
sin = _define("sin", 1, _mk_vfunc(_vm.sin_f32, _vm.sin_f64, _c_sin), inline="always")
cos = _define("cos", 1, _mk_vfunc(_vm.cos_f32, _vm.cos_f64, _c_cos), inline="always")
tan = _define("tan", 1, _mk_vfunc(_vm.tan_f32, _vm.tan_f64, _c_tan), inline="always")
# Block fast forms of sin / cos / tan (ops.yaml block_fast): the same results as sin / cos /
# tan; float32 arguments below vector_math.TRIG_SHORT_BOUND take a cheaper reduction.


def _mk_trig_short(t):
    if t == types.float32:
        bound = np.float32(_vm.TRIG_SHORT_BOUND)
        return lambda a: abs(a) < bound  # False for nan and inf
    return lambda a: False


trig_short = _define("trig_short", 1, _mk_trig_short)
sin_short = _define("sin_short", 1, _mk_vfunc(_vm.sin_short_f32, _vm.sin_f64, _c_sin),
                    inline="always")
cos_short = _define("cos_short", 1, _mk_vfunc(_vm.cos_short_f32, _vm.cos_f64, _c_cos),
                    inline="always")
tan_short = _define("tan_short", 1, _mk_vfunc(_vm.tan_short_f32, _vm.tan_f64, _c_tan),
                    inline="always")
asin = _define("asin", 1, _mk_vfunc(_vm.asin_f32, _vm.asin_f64, _c_asin), inline="always")
acos = _define("acos", 1, _mk_vfunc(_vm.acos_f32, _vm.acos_f64, _c_acos), inline="always")
atan = _define("atan", 1, _mk_vfunc(_vm.atan_f32, _vm.atan_f64, _c_atan), inline="always")
atan2 = _define("atan2", 2, _mk_atan2, inline="always")
sinh = _define("sinh", 1, _mk_vfunc(_vm.sinh_f32, _vm.sinh_f64, _c_sinh), inline="always")
cosh = _define("cosh", 1, _mk_vfunc(_vm.cosh_f32, _vm.cosh_f64, _c_cosh), inline="always")
tanh = _define("tanh", 1, _mk_vfunc(_vm.tanh_f32, _vm.tanh_f64, _c_tanh), inline="always")
asinh = _define("asinh", 1, _mk_vfunc(_vm.asinh_f32, _vm.asinh_f64, _c_asinh), inline="always")
acosh = _define("acosh", 1, _mk_vfunc(_vm.acosh_f32, _vm.acosh_f64, _c_acosh), inline="always")
atanh = _define("atanh", 1, _mk_vfunc(_vm.atanh_f32, _vm.atanh_f64, _c_atanh), inline="always")
sigmoid = _define("sigmoid", 1, _mk_sigmoid, inline="always")
erf = _define("erf", 1, _mk_erf, inline="always")
floor = _define("floor", 1, _mk_rounding(np.floor))
ceil = _define("ceil", 1, _mk_rounding(np.ceil))
trunc = _define("trunc", 1, _mk_rounding(np.trunc))
round_half_even = _define("round_half_even", 1, _mk_rounding(np.rint, complex_ok=True))
hypot = _define("hypot", 2, _mk_ufunc2(np.hypot))
logaddexp = _define("logaddexp", 2, _mk_logaddexp)


# --------------------------------------------------------------------------
# bitwise (ints, bool as logical)
# --------------------------------------------------------------------------

def _mk_bitop(op):
    def make(t):
        k = _kind(t)
        if k == "b":
            if op == "and":
                return lambda a, b: a and b
            if op == "or":
                return lambda a, b: a or b
            return lambda a, b: a != b
        if k in ("i", "u"):
            if op == "and":
                return lambda a, b: t(a & b)
            if op == "or":
                return lambda a, b: t(a | b)
            return lambda a, b: t(a ^ b)
        return None
    return make


def _mk_bit_not(t):
    k = _kind(t)
    if k == "b":
        return lambda a: not a
    if k in ("i", "u"):
        return lambda a: t(~a)
    return None


def _mk_shift(left):
    def make(t):
        k = _kind(t)
        if k not in ("i", "u"):
            return None
        nbits = t.bitwidth
        signed = k == "i"
        # NumPy: counts outside [0, width) give 0 (or -1 for a negative a >>)
        if left:
            def impl(a, b):
                if (signed and b < 0) or b >= nbits:
                    return t(0)
                return t(a << b)
        else:
            def impl(a, b):
                if (signed and b < 0) or b >= nbits:
                    return t(-1) if (signed and a < 0) else t(0)
                return t(a >> b)
        return impl
    return make


bit_and = _define("bit_and", 2, _mk_bitop("and"))
bit_or = _define("bit_or", 2, _mk_bitop("or"))
bit_xor = _define("bit_xor", 2, _mk_bitop("xor"))
bit_not = _define("bit_not", 1, _mk_bit_not)
left_shift = _define("left_shift", 2, _mk_shift(True))
right_shift = _define("right_shift", 2, _mk_shift(False))


# --------------------------------------------------------------------------
# logical (truthiness of each operand; no promotion needed)
# --------------------------------------------------------------------------

def _truth(a):
    """NumPy truthiness: non-zero (nan counts), complex if either part is."""


@overload(_truth, jit_options=_JIT)
def _ov_truth(a):
    k = _kind(a)
    if k == "b":
        return lambda a: a
    if k in ("i", "u", "f"):
        return lambda a: a != 0
    if k == "c":
        return lambda a: a.real != 0 or a.imag != 0
    return None


def _mk_logical(fn):
    def make(t):
        return fn if _kind(t) is not None else None
    return make


logical_and = _define("logical_and", 2, _mk_logical(lambda a, b: _truth(a) and _truth(b)))
logical_or = _define("logical_or", 2, _mk_logical(lambda a, b: _truth(a) or _truth(b)))
logical_xor = _define("logical_xor", 2, _mk_logical(lambda a, b: _truth(a) != _truth(b)))
logical_not = _define("logical_not", 1, _mk_logical(lambda a: not _truth(a)))
