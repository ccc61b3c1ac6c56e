"""Complex exp, exp2, sinh, cosh, tanh, sin, cos and tan Triton helpers: ports of the CPU
helpers (_cexp, _csinh_ccosh, _ctanh), themselves ports of glibc with C99 Annex G special
values (complex_math.py is the facade kernels import).
"""
import triton.language as tl

from tensorlib.kernels.cuda.launch import helper_mode, helper_part

_MODE, jit = helper_mode(globals())  # launch.helper_part() loads this file once per mode
_b = helper_part("complex_base", _MODE)  # constants and small pieces of the same mode
libdevice, fdiv_ieee, neg = _b.libdevice, _b.fdiv_ieee, _b.neg
_isinf, _isfinite, _signbit = _b._isinf, _b._isfinite, _b._signbit
_INF, _LN2 = _b._INF, _b._LN2
_full, _nan, _copysign, _limits, _sincos, _sel = (_b._full, _b._nan, _b._copysign, _b._limits,
                                                  _b._sincos, _b._sel)

__all__ = ["c_exp", "c_exp2", "c_sinh", "c_cosh", "c_tanh", "c_sin", "c_cos", "c_tan"]


# ---------------------------------------------------------------- exp / sinh / cosh / tanh (glibc)

@jit
def c_exp(x, y):
    """The CPU's _cexp (glibc's cexp)."""
    t, _t2, mx, tiny, _eps = _limits(x)
    nan = _nan(x)
    inf = _full(x, _INF)
    zero = _full(x, 0.0)
    s, c = _sincos(y, tiny)
    # finite x: scale by exp(t) (up to twice) so exp(x) * cis(y) overflows only where it must
    et = libdevice.exp(t)
    b1 = x > t
    x1 = tl.where(b1, x - t, x)
    s1 = tl.where(b1, s * et, s)
    c1 = tl.where(b1, c * et, c)
    b2 = b1 & (x1 > t)
    x2 = tl.where(b2, x1 - t, x1)
    s2 = tl.where(b2, s1 * et, s1)
    c2 = tl.where(b2, c1 * et, c1)
    ev = libdevice.exp(x2)
    b3 = x2 > t
    fre = tl.where(b3, mx * c2, ev * c2)
    fim = tl.where(b3, mx * s2, ev * s2)
    fre, fim = _sel(_isfinite(y), fre, fim, nan, nan)
    # infinite x
    v = tl.where(x < 0, zero, inf)
    ire = _copysign(v, c)
    iim = _copysign(v, s)
    ire, iim = _sel(y == 0, v, y, ire, iim)
    nre = tl.where(x > 0, inf, zero)
    nim = tl.where(x > 0, y - y, _copysign(zero, y))
    ire, iim = _sel(_isfinite(y), ire, iim, nre, nim)
    # nan x
    xre = nan
    xim = tl.where(y == 0, y, nan)
    re, im = _sel(_isinf(x), ire, iim, xre, xim)
    return _sel(_isfinite(x), fre, fim, re, im)


@jit
def c_exp2(x, y):
    return c_exp(x * _LN2, y * _LN2)


@jit
def _csinh_ccosh(x, y, COSH: tl.constexpr):
    """The CPU's _csinh_ccosh (glibc's csinh / ccosh)."""
    t, _t2, mx, tiny, _eps = _limits(x)
    nan = _nan(x)
    inf = _full(x, _INF)
    zero = _full(x, 0.0)
    one = _full(x, 1.0)
    x_neg = _signbit(x)
    ax = tl.abs(x)
    s0, c0 = _sincos(y, tiny)
    if COSH:
        s = tl.where(x_neg, neg(s0), s0)
        c = c0
    else:
        s = s0
        c = tl.where(x_neg, neg(c0), c0)
    # finite x, finite y; |x| > t scales by exp(t) as in c_exp
    et = libdevice.exp(t)
    rx = ax - t
    sb = s * fdiv_ieee(et, _full(x, 2.0))
    cb = c * fdiv_ieee(et, _full(x, 2.0))
    b2 = rx > t
    rx2 = tl.where(b2, rx - t, rx)
    sb = tl.where(b2, sb * et, sb)
    cb = tl.where(b2, cb * et, cb)
    ev = libdevice.exp(rx2)
    b3 = rx2 > t
    bre = tl.where(b3, mx * cb, ev * cb)
    bim = tl.where(b3, mx * sb, ev * sb)
    if COSH:
        sre = libdevice.cosh(ax) * c
        sim = libdevice.sinh(ax) * s
    else:
        sre = libdevice.sinh(ax) * c
        sim = libdevice.cosh(ax) * s
    ffre, ffim = _sel(ax > t, bre, bim, sre, sim)
    # finite x, y inf / nan
    if COSH:
        fnre = y - y
        fnim = tl.where(x == 0, zero, nan)
    else:
        fnre = tl.where(x == 0, tl.where(x_neg, neg(zero), zero), nan)
        fnim = tl.where(x == 0, y - y, nan)
    fre, fim = _sel(_isfinite(y), ffre, ffim, fnre, fnim)
    # infinite x (fresh sin / cos of y: no sign adjustment)
    re_a = _copysign(inf, c0)
    im_a = _copysign(inf, s0)
    sgn = _copysign(one, x)
    if COSH:
        ire = re_a
        iim = im_a * sgn
        zre = inf
        zim = y * sgn
    else:
        ire = tl.where(x_neg, neg(re_a), re_a)
        iim = im_a
        zre = tl.where(x_neg, neg(inf), inf)
        zim = y
    ire, iim = _sel(y == 0, zre, zim, ire, iim)
    ire, iim = _sel(_isfinite(y), ire, iim, inf, y - y)
    # nan x
    re, im = _sel(_isinf(x), ire, iim, nan, tl.where(y == 0, y, nan))
    return _sel(_isfinite(x), fre, fim, re, im)


@jit
def c_sinh(x, y):
    return _csinh_ccosh(x, y, False)


@jit
def c_cosh(x, y):
    return _csinh_ccosh(x, y, True)


@jit
def c_tanh(x, y):
    """The CPU's _ctanh (glibc's ctanh)."""
    _t, t, _mx, tiny, eps = _limits(x)
    nan = _nan(x)
    zero = _full(x, 0.0)
    one = _full(x, 1.0)
    s, c = _sincos(y, tiny)
    # x or y not finite
    sx1 = _copysign(one, x)
    iim = _copysign(zero, y)  # tanh(+-inf + iy) = +-1 + 0j signed as y (the Array API's)
    zre = x
    zim = tl.where(y == 0, y, nan)
    zre, zim = _sel((y == 0) | (x == 0), zre, zim, nan, nan)
    nre, nim = _sel(_isinf(x), sx1, iim, zre, zim)
    # |x| > t: real part +-1, imaginary part 4 sin cos exp(-2|x|) without overflow
    e2t = libdevice.exp(2.0 * t)
    rx = tl.abs(x) - t
    bim = fdiv_ieee(4.0 * s * c, e2t)
    bim = tl.where(rx > t, fdiv_ieee(bim, e2t), fdiv_ieee(bim, libdevice.exp(2.0 * rx)))
    # the plain formula
    small = tl.abs(x) > tiny
    sh = tl.where(small, libdevice.sinh(x), x)
    ch = tl.where(small, libdevice.cosh(x), one)
    den = tl.where(tl.abs(sh) > tl.abs(c) * eps, sh * sh + c * c, c * c)
    pre = fdiv_ieee(sh * ch, den)
    pim = fdiv_ieee(s * c, den)
    fre, fim = _sel(tl.abs(x) > t, sx1, bim, pre, pim)
    return _sel(_isfinite(x) & _isfinite(y), fre, fim, nre, nim)


@jit
def c_sin(x, y):
    # sin z = -i sinh(i z); sin(+-inf/nan + i inf) = nan + i inf as glibc
    r, i = _csinh_ccosh(neg(y), x, False)
    odd = _isinf(y) & (~_isfinite(x))
    return _sel(odd, _nan(x), _full(x, _INF), i, neg(r))


@jit
def c_cos(x, y):
    return _csinh_ccosh(neg(y), x, True)  # cos z = cosh(i z)


@jit
def c_tan(x, y):
    r, i = c_tanh(neg(y), x)  # tan z = -i tanh(i z)
    return i, neg(r)
