"""Complex pieces of the CPU scalar helpers (ports of NumPy's npymath / loops code and of
glibc's complex functions), used by the arithmetic and math helpers on complex types."""
import math

import numpy as np
from numba import types
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype

from .plumbing import _JIT, _cpack, _kind, _like


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
