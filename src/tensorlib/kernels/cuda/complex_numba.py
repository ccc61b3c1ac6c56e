"""Complex log, log2, log10, log1p, expm1, sqrt, rsqrt and the inverse functions (asin, acos,
atan, asinh, acosh, atanh) as Numba computes them (with the CPU's special-value patches),
and power (the CPU's _cpow) through them (complex_math.py is the facade kernels import; its
docstring lists where these depart from the CPU).
"""
import math

import triton.language as tl

from tensorlib.kernels.cuda.launch import helper_mode, helper_part

_MODE, jit = helper_mode(globals())  # launch.helper_part() loads this file once per mode
_b = helper_part("complex_base", _MODE)  # constants and small pieces of the same mode
libdevice, fdiv_ieee, neg = _b.libdevice, _b.fdiv_ieee, _b.neg
_sqrt_ieee, _isnan, _isinf, _isfinite, _signbit = (_b._sqrt_ieee, _b._isnan, _b._isinf,
                                                   _b._isfinite, _b._signbit)
_INF, _FLT_MAX, _LN2 = _b._INF, _b._FLT_MAX, _b._LN2
_full, _nan, _copysign, _sel, _wide, _narrow = (_b._full, _b._nan, _b._copysign, _b._sel,
                                                _b._wide, _b._narrow)
_arith = helper_part("complex_arith", _MODE)
c_mul, c_reciprocal, _cdiv_simple = _arith.c_mul, _arith.c_reciprocal, _arith._cdiv_simple

__all__ = [
    "c_pow", "c_expm1", "c_log", "c_log2", "c_log10", "c_log1p", "c_sqrt", "c_rsqrt",
    "c_asin", "c_acos", "c_atan", "c_asinh", "c_acosh", "c_atanh",
]

_LN_4 = tl.constexpr(math.log(4))
_PI_2 = tl.constexpr(math.pi / 2)
_FLT_MAX_4 = tl.constexpr(_FLT_MAX.value / 4)                      # Numba's cmath THRES
_ATANH_LARGE = tl.constexpr(math.sqrt(_FLT_MAX.value / 4))         # for both widths, as Numba
_ATANH_SMALL = tl.constexpr(math.sqrt(1.1754943508222875e-38))
_SQRT_THRES_F = tl.constexpr(_FLT_MAX.value / (1.0 + 1.4142135623730951))
_SQRT_THRES_D = tl.constexpr(1.7976931348623157e308 / (1.0 + 1.4142135623730951))
_LOG2E = tl.constexpr(1.442695040888963407359924681001892137)
_LOG10E = tl.constexpr(0.434294481903251827651128918916605082)


# ---------------------------------------------------------------- Numba's (log, sqrt, inverses)

@jit
def _nb_exp(x, y):
    # Numba's cmath exp (the CPU's general complex power)
    nan = _nan(x)
    zero = _full(x, 0.0)
    c = libdevice.cos(y)
    s = libdevice.sin(y)
    r = libdevice.exp(x)
    fre, fim = _sel(_isfinite(y), r * c, r * s, nan, nan)
    nre, nim = _sel(y != 0, x, x, x, y)                      # nan x
    pre = tl.where(c != 0, c * x, c)                           # +inf x
    pim = tl.where(s != 0, s * x, s)
    pre, pim = _sel(_isfinite(y), pre, pim, x, nan)
    mre, mim = _sel(_isfinite(y), r * c, r * s, zero, zero)    # -inf x
    re, im = _sel(x > 0, pre, pim, mre, mim)
    re, im = _sel(_isnan(x), nre, nim, re, im)
    return _sel(_isfinite(x), fre, fim, re, im)


@jit
def c_log(x, y):
    # Numba's log(hypot) overflows for |z| > max (the CPU's does): halve the parts there
    h = libdevice.hypot(x, y)
    big = _isinf(h) & _isfinite(x) & _isfinite(y)
    lg = tl.where(big, libdevice.log(libdevice.hypot(x * 0.5, y * 0.5)) + _LN2,
                  libdevice.log(h))
    return lg, libdevice.atan2(y, x)


@jit
def c_log2(x, y):
    r, i = c_log(x, y)
    return r * _LOG2E, i * _LOG2E


@jit
def c_log10(x, y):
    r, i = c_log(x, y)
    return r * _LOG10E, i * _LOG10E


@jit
def c_expm1(x, y):
    # the CPU's _c_expm1: NumPy's formula (no cancellation near 0), y == 0 exact; where x is
    # +-inf, the values of exp(z) - 1 with c_exp's special cases (written out: calling c_exp
    # here spills registers for complex128); a nan / inf y with finite x is nan + nan j as is
    h = libdevice.sin(y * 0.5)
    s = libdevice.sin(y)
    c = libdevice.cos(y)
    em1 = libdevice.expm1(x)
    re = em1 * c - 2.0 * h * h
    im = libdevice.exp(x) * s
    finy = _isfinite(y)
    zero = _full(x, 0.0)
    ire, iim = _sel(x > 0, tl.where(finy, x * c, x), tl.where(finy, x * s, _nan(x)),
                    _full(x, -1.0), tl.where(finy, _copysign(zero, s), _copysign(zero, y)))
    re, im = _sel(_isinf(x), ire, iim, re, im)
    return _sel(y == 0, em1, y, re, im)


@jit
def c_log1p(x, y):
    xp1 = x + 1.0
    return libdevice.log(libdevice.hypot(xp1, y)), libdevice.atan2(y, xp1)


@jit
def _nb_sqrt(a, b, thres):
    # Numba's cmath sqrt (NumPy's npy_csqrt algorithm), on float64 blocks; the rescale after
    # the overflow-avoiding quartering doubles both parts as npy_csqrt does (Numba's, and so
    # the CPU's, doubles only the real part)
    scale = (tl.abs(a) >= thres) | (tl.abs(b) >= thres)
    sa = tl.where(scale, a * 0.25, a)
    sb = tl.where(scale, b * 0.25, b)
    h = libdevice.hypot(sa, sb)
    t1 = _sqrt_ieee((sa + h) * 0.5)
    t2 = _sqrt_ieee((neg(sa) + h) * 0.5)
    re, im = _sel(sa >= 0, t1, fdiv_ieee(sb, 2.0 * t1), fdiv_ieee(tl.abs(sb), 2.0 * t2),
                  _copysign(t2, sb))
    re = tl.where(scale, re * 2.0, re)
    im = tl.where(scale, im * 2.0, im)
    # special cases, last checked first
    ire, iim = _sel(a < 0, tl.abs(b - b), _copysign(a, b), a, _copysign(b - b, b))
    re, im = _sel(_isinf(a), ire, iim, re, im)
    re, im = _sel(_isnan(a), a, a, re, im)
    re, im = _sel(_isinf(b), tl.abs(b), b, re, im)
    return _sel((a == 0) & (b == 0), tl.abs(b), b, re, im)


@jit
def c_sqrt(x, y):
    # complex64 in float64, as Numba's version computes it
    if x.dtype.is_fp64():
        return _nb_sqrt(x, y, _full(x, _SQRT_THRES_D))
    else:
        xw = _wide(x)
        r, i = _nb_sqrt(xw, _wide(y), _full(xw, _SQRT_THRES_F))
        return _narrow(x, r), _narrow(x, i)


@jit
def c_rsqrt(x, y):
    r, i = c_sqrt(x, y)
    return c_reciprocal(r, i)


@jit
def _nb_asinh(x, y):
    # Numba's cmath asinh (CPython's c_asinh), float64 blocks
    thres = _full(x, _FLT_MAX_4)
    big = (tl.abs(x) > thres) | (tl.abs(y) > thres)
    lre = _copysign(libdevice.log(libdevice.hypot(x * 0.5, y * 0.5)) + _LN_4, x)
    lim = libdevice.atan2(y, tl.abs(x))
    s1r, s1i = _nb_sqrt(1.0 + y, neg(x), _full(x, _SQRT_THRES_D))
    s2r, s2i = _nb_sqrt(1.0 - y, x, _full(x, _SQRT_THRES_D))
    re = libdevice.asinh(s1r * s2i - s2r * s1i)
    im = libdevice.atan2(y, s1r * s2r - s1i * s2i)
    return _sel(big, lre, lim, re, im)


@jit
def _nb_acos(x, y):
    # Numba's cmath acos (CPython's c_acos), float64 blocks
    thres = _full(x, _FLT_MAX_4)
    big = (tl.abs(x) > thres) | (tl.abs(y) > thres)
    lre = libdevice.atan2(tl.abs(y), x)
    lim = _copysign(libdevice.log(libdevice.hypot(x * 0.5, y * 0.5)) + _LN_4, neg(y))
    s1r, s1i = _nb_sqrt(1.0 - x, neg(y), _full(x, _SQRT_THRES_D))
    s2r, s2i = _nb_sqrt(1.0 + x, y, _full(x, _SQRT_THRES_D))
    re = 2.0 * libdevice.atan2(s1r, s2r)
    im = libdevice.asinh(s2r * s1i - s2i * s1r)
    return _sel(big, lre, lim, re, im)


@jit
def _nb_atanh(x0, y0):
    # Numba's cmath atanh (CPython's c_atanh), float64 blocks
    nan = _nan(x0)
    zero = _full(x0, 0.0)
    negate = x0 < 0.0
    x = tl.where(negate, neg(x0), x0)
    y = tl.where(negate, neg(y0), y0)
    ay = tl.abs(y)
    large = _isnan(x) | (x > _ATANH_LARGE) | (ay > _ATANH_LARGE)
    h = libdevice.hypot(x * 0.5, y * 0.5)
    lre = fdiv_ieee(fdiv_ieee(fdiv_ieee(x, _full(x, 4.0)), h), h)
    lre = tl.where(_isinf(x), zero, lre)
    lre = tl.where(_isinf(y), _copysign(zero, x), lre)
    lim = _copysign(_full(x, _PI_2), y)  # = -copysign(pi/2, -y)
    one = (x == 1.0) & (ay < _ATANH_SMALL)
    ore = neg(libdevice.log(fdiv_ieee(_sqrt_ieee(ay), _sqrt_ieee(libdevice.hypot(ay, _full(x, 2.0))))))
    oim = _copysign(libdevice.atan2(_full(x, 2.0), neg(ay)) * 0.5, y)
    ore, oim = _sel(ay == 0, _full(x, _INF), y, ore, oim)
    sqay = ay * ay
    zr1 = 1.0 - x
    rre = libdevice.log1p(fdiv_ieee(4.0 * x, zr1 * zr1 + sqay)) * 0.25
    rim = neg(libdevice.atan2(-2.0 * y, zr1 * (1.0 + x) - sqay)) * 0.5
    re, im = _sel(one, ore, oim, rre, rim)
    re, im = _sel(large, lre, lim, re, im)
    im = tl.where(_isnan(y), nan, im)
    return _sel(negate, neg(re), neg(im), re, im)


@jit
def _c_asinh_w(x, y):
    # the CPU's _c_asinh on float64 blocks: nan + 0i stays itself
    r, i = _nb_asinh(x, y)
    return _sel(_isnan(x) & (y == 0), x, y, r, i)


@jit
def _c_acos_w(x, y):
    r, i = _nb_acos(x, y)
    return _sel((x == 0) & _isnan(y), _full(x, _PI_2), _nan(x), r, i)


@jit
def _c_atanh_w(x, y):
    r, i = _nb_atanh(x, y)
    nan = _nan(x)
    r, i = _sel((x == 0) & _isnan(y), x, nan, r, i)
    return _sel(_isnan(x) & _isfinite(y), nan, nan, r, i)


@jit
def c_asinh(x, y):
    if x.dtype.is_fp64():
        return _c_asinh_w(x, y)
    else:
        r, i = _c_asinh_w(_wide(x), _wide(y))
        return _narrow(x, r), _narrow(x, i)


@jit
def c_asin(x, y):
    # asin z = -i asinh(i z), Numba's; 0 + nan i stays itself (the CPU's patch)
    if x.dtype.is_fp64():
        r, i = _nb_asinh(neg(y), x)
    else:
        rw, iw = _nb_asinh(_wide(neg(y)), _wide(x))
        r = _narrow(x, rw)
        i = _narrow(x, iw)
    return _sel((x == 0) & _isnan(y), x, y, i, neg(r))


@jit
def c_acos(x, y):
    if x.dtype.is_fp64():
        return _c_acos_w(x, y)
    else:
        r, i = _c_acos_w(_wide(x), _wide(y))
        return _narrow(x, r), _narrow(x, i)


@jit
def c_acosh(x, y):
    # acosh z = +-i acos z, the sign following the imaginary part of z (glibc; the CPU's)
    wr, wi = c_acos(x, y)
    return _sel(_signbit(y), wi, neg(wr), neg(wi), wr)


@jit
def c_atanh(x, y):
    if x.dtype.is_fp64():
        return _c_atanh_w(x, y)
    else:
        r, i = _c_atanh_w(_wide(x), _wide(y))
        return _narrow(x, r), _narrow(x, i)


@jit
def c_atan(x, y):
    r, i = c_atanh(neg(y), x)  # atan z = -i atanh(i z)
    return i, neg(r)


# ---------------------------------------------------------------- power

@jit
def c_pow(ar, ai, br, bi):
    """The CPU's _cpow (npy_cpow): exact repeated multiplication for integer exponents
    |n| < 100, exp(b log a) otherwise."""
    nan = _nan(ar)
    zero = _full(ar, 0.0)
    one = _full(ar, 1.0)
    # integer exponent: square-and-multiply over the 7 bits of |n| < 100
    inr = (bi == 0) & (br > -100.0) & (br < 100.0)
    n = tl.where(inr, br, zero).to(tl.int32)       # truncates like int()
    isint = inr & (n.to(ar.dtype) == br)
    m = tl.where(n < 0, neg(n), n)
    acc_r = one
    acc_i = zero
    p_r = ar
    p_i = ai
    for k in range(7):
        bit = ((m >> k) & 1) != 0
        t_r, t_i = c_mul(acc_r, acc_i, p_r, p_i)
        acc_r = tl.where(bit, t_r, acc_r)
        acc_i = tl.where(bit, t_i, acc_i)
        p_r, p_i = c_mul(p_r, p_i, p_r, p_i)
    inv_r, inv_i = _cdiv_simple(one, zero, acc_r, acc_i)
    acc_r, acc_i = _sel(br < 0, inv_r, inv_i, acc_r, acc_i)
    sq_r, sq_i = c_mul(ar, ai, ar, ai)
    cu_r, cu_i = c_mul(ar, ai, sq_r, sq_i)
    acc_r, acc_i = _sel(n == 3, cu_r, cu_i, acc_r, acc_i)
    acc_r, acc_i = _sel(n == 2, sq_r, sq_i, acc_r, acc_i)
    acc_r, acc_i = _sel(n == 1, ar, ai, acc_r, acc_i)
    # general: exp(b * log(a)) with Numba's exp / log
    lr, li = c_log(ar, ai)
    er, ei = c_mul(br, bi, lr, li)
    gr, gi = _nb_exp(er, ei)
    re, im = _sel(isint, acc_r, acc_i, gr, gi)
    zre, zim = _sel(br > 0, zero, zero, nan, nan)
    re, im = _sel((ar == 0) & (ai == 0), zre, zim, re, im)
    return _sel((br == 0) & (bi == 0), one, zero, re, im)
