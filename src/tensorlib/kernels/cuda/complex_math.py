"""Complex helpers for the generated CUDA pointwise kernels (Triton has no complex type).

A complex value is a pair of blocks (re, im) in its component dtype (float32 for complex64,
float64 for complex128). Every helper takes the components of its operands and returns a
tuple (re, im), or one block for real / bool results (abs, real, isnan...). Generated kernels
(kernels/cuda/pointwise.py) do ``from <this module> import *`` and call them on the pairs the
ops.yaml expression produces.

Each helper mirrors the CPU kernel's implementation of the same op (kernels/cpu/scalar_math.py)
branch for branch, written as selects over all lanes:

* exp, exp2, sinh, cosh, tanh, sin, cos, tan, divide, reciprocal, power, sign, square: ports of
  the CPU helpers (_cexp, _csinh_ccosh, _ctanh, _cdiv, _crecip, _cpow, ...), themselves ports
  of glibc / NumPy with C99 Annex G special values.
* log, log2, log10, log1p, expm1, sqrt, asin, acos, asinh, atanh (and atan, acosh through
  them): the CPU calls Numba's versions (numba/cpython/cmathimpl.py, numba/np/npyfuncs.py),
  plus the CPU's own special-value patches; both are mirrored here. Numba evaluates sqrt,
  asinh, acos and atanh of complex64 largely in float64 (its float literals widen the
  intermediates), so these run in float64 for complex64 too and round once at the end; the
  CPU keeps a few intermediates in float32 (e.g. atan2f on huge arguments), so complex64
  results of these can differ from the CPU's in the last bit.
* Two deliberate departures from the CPU, where Numba's versions are wrong and NumPy (the
  oracle) is not: sqrt of parts near the largest finite value doubles both parts after its
  overflow-avoiding scaling (Numba doubles only the real part, halving the imaginary one), and
  log / log2 / log10 (and power's general path) of |z| > max halve the parts before hypot
  instead of returning inf.

Real building blocks: libdevice on a GPU, NumPy's libm in interpret mode (the shim in
_interp_libdevice), division and sqrt correctly rounded (scalar_math.fdiv_ieee / _sqrt_ieee),
FMA contraction off at launch. Only ``triton.language`` builtins are used, so the file builds
in either mode (launch.complex_helpers loads it once per mode, as launch.helpers does
scalar_math).
"""
import math

import triton.language as tl

from tensorlib.kernels.cuda.launch import helpers, jit_for

_MODE = globals().get("__tl_mode__", "compiled")
jit = jit_for(_MODE)
_sm = helpers(_MODE)  # scalar_math of the same mode
libdevice = _sm.libdevice
fdiv_ieee = _sm.fdiv_ieee
_sqrt_ieee = _sm._sqrt_ieee
_isinf = _sm.isinf
_isfinite = _sm.isfinite
_signbit = _sm.signbit
_rint = _sm.round_half_even
neg = _sm.neg  # -x with the right zero sign on every Triton version

__all__ = [
    "c_add", "c_sub", "c_mul", "c_eq", "c_ne", "c_truth",
    "c_div", "c_pow", "c_scale", "c_negative", "c_abs", "c_sign", "c_reciprocal", "c_square",
    "c_conj", "c_real", "c_imag", "c_isnan", "c_isinf", "c_isfinite",
    "c_logical_and", "c_logical_or", "c_logical_xor", "c_logical_not",
    "c_exp", "c_exp2", "c_expm1", "c_log", "c_log2", "c_log10", "c_log1p", "c_sqrt", "c_rsqrt",
    "c_sin", "c_cos", "c_tan", "c_asin", "c_acos", "c_atan", "c_sinh", "c_cosh", "c_tanh",
    "c_asinh", "c_acosh", "c_atanh", "c_round",
]

_INF = tl.constexpr(float("inf"))
_LN_4 = tl.constexpr(math.log(4))
_PI_2 = tl.constexpr(math.pi / 2)
_FLT_MAX = tl.constexpr(3.4028234663852886e38)
_FLT_MAX_4 = tl.constexpr(_FLT_MAX.value / 4)                      # Numba's cmath THRES
_ATANH_LARGE = tl.constexpr(math.sqrt(_FLT_MAX.value / 4))         # for both widths, as Numba
_ATANH_SMALL = tl.constexpr(math.sqrt(1.1754943508222875e-38))
_SQRT_THRES_F = tl.constexpr(_FLT_MAX.value / (1.0 + 1.4142135623730951))
_SQRT_THRES_D = tl.constexpr(1.7976931348623157e308 / (1.0 + 1.4142135623730951))
_LOG2E = tl.constexpr(1.442695040888963407359924681001892137)
_LOG10E = tl.constexpr(0.434294481903251827651128918916605082)
_LN2 = tl.constexpr(0.6931471805599453)


# ---------------------------------------------------------------- small pieces

@jit
def _full(x, v):
    return tl.full(x.shape, v, x.dtype)


@jit
def _nan(x):
    # from its bits: a nan constexpr global would differ from itself in Triton's global checks
    if x.dtype.is_fp64():
        return tl.full(x.shape, 0x7FF8000000000000, tl.int64).to(tl.float64, bitcast=True)
    else:
        return tl.full(x.shape, 0x7FC00000, tl.int32).to(tl.float32, bitcast=True)


@jit
def _isnan(x):
    return x != x


@jit
def _copysign(a, b):
    return libdevice.copysign(a, b)


@jit
def _limits(x):
    # (exp cutoff, tanh cutoff, max, tiny, eps) of x's float type (the CPU's _limits)
    if x.dtype.is_fp64():
        return (_full(x, 709.0), _full(x, 354.0), _full(x, 1.7976931348623157e308),
                _full(x, 2.2250738585072014e-308), _full(x, 2.220446049250313e-16))
    else:
        return (_full(x, 88.0), _full(x, 44.0), _full(x, _FLT_MAX),
                _full(x, 1.1754943508222875e-38), _full(x, 1.1920928955078125e-07))


@jit
def _sincos(y, tiny):
    # the sign of a zero / tiny y is kept; nan gives (nan, 1) as the CPU's branch does
    big = tl.abs(y) > tiny
    return tl.where(big, libdevice.sin(y), y), tl.where(big, libdevice.cos(y), _full(y, 1.0))


@jit
def _sel(c, a_re, a_im, b_re, b_im):
    return tl.where(c, a_re, b_re), tl.where(c, a_im, b_im)


@jit
def _wide(x):
    return x.to(tl.float64)


@jit
def _narrow(like, v):
    # a float64 result back to like's component type (round to nearest once)
    if like.dtype.is_fp64():
        return v
    else:
        return v.to(tl.float32)


# ---------------------------------------------------------------- arithmetic

@jit
def c_add(ar, ai, br, bi):
    return ar + br, ai + bi


@jit
def c_sub(ar, ai, br, bi):
    return ar - br, ai - bi


@jit
def c_mul(ar, ai, br, bi):
    # (a+bi)(c+di) = (ac - bd) + (ad + bc)i, no special-value recovery (Numba's, NumPy's)
    return ar * br - ai * bi, ar * bi + ai * br


@jit
def c_eq(ar, ai, br, bi):
    return (ar == br) & (ai == bi)


@jit
def c_ne(ar, ai, br, bi):
    return (ar != br) | (ai != bi)


@jit
def c_truth(r, i):
    """NumPy truthiness: either part non-zero (nan counts)."""
    return (r != 0) | (i != 0)


@jit
def c_scale(alr, ali, br, bi):
    # add / subtract's alpha * other: a real alpha scales each part (1 * (0+inf j) stays inf j)
    fr, fi = c_mul(alr, ali, br, bi)
    real = ali == 0
    return tl.where(real, alr * br, fr), tl.where(real, alr * bi, fi)


@jit
def _cdiv_simple(ar, ai, br, bi):
    # npymath's cdiv (npy_cpow's): Smith's algorithm, 0/0 by parts
    abr = tl.abs(br)
    abi = tl.abs(bi)
    one = _full(ar, 1.0)
    rat1 = fdiv_ieee(bi, br)
    scl1 = fdiv_ieee(one, br + bi * rat1)
    r1 = (ar + ai * rat1) * scl1
    i1 = (ai - ar * rat1) * scl1
    rat2 = fdiv_ieee(br, bi)
    scl2 = fdiv_ieee(one, bi + br * rat2)
    r2 = (ar * rat2 + ai) * scl2
    i2 = (ai * rat2 - ar) * scl2
    zr = fdiv_ieee(ar, abr)
    zi = fdiv_ieee(ai, abi)
    first = abr >= abi
    zero = first & (abr == 0) & (abi == 0)
    re, im = _sel(first, r1, i1, r2, i2)
    return _sel(zero, zr, zi, re, im)


@jit
def c_div(ar, ai, br, bi):
    """NumPy's complex divide loop (the CPU's _cdiv), nan special cases included."""
    arn = _isnan(ar)
    ain = _isnan(ai)
    brn = _isnan(br)
    bin_ = _isnan(bi)
    inf_part = ((~arn) & _isinf(ar)) | ((~ain) & _isinf(ai))
    special = ((~brn) & (~bin_) & (arn | ain)
               & ((inf_part & ((br != 0) | (bi != 0))) | (_isinf(br) & _isinf(bi))))
    nan = tl.where(arn, ar, ai)
    abr = tl.abs(br)
    abi = tl.abs(bi)
    zero = (abr >= abi) & (abr == 0) & (abi == 0)
    keep = (arn & ((ai == 0) | ain)) | ((ar == 0) & ain)  # 0/0 with a nan part: that nan
    kr = tl.where(arn, ar, ai)
    ki = tl.where(ain, ai, ar)
    re, im = _cdiv_simple(ar, ai, br, bi)
    re, im = _sel(zero & keep, kr, ki, re, im)
    return _sel(special, nan, nan, re, im)


@jit
def c_reciprocal(ar, ai):
    # Smith's method with numerator 1 (the CPU's _crecip)
    one = _full(ar, 1.0)
    r1 = fdiv_ieee(ai, ar)
    d1 = ar + ai * r1
    r2 = fdiv_ieee(ar, ai)
    d2 = ar * r2 + ai
    first = tl.abs(ai) <= tl.abs(ar)
    return _sel(first, fdiv_ieee(one, d1), fdiv_ieee(neg(r1), d1),
                fdiv_ieee(r2, d2), fdiv_ieee(neg(one), d2))


@jit
def c_square(r, i):
    return r * r - i * i, r * i + i * r


@jit
def c_negative(r, i):
    return neg(r), neg(i)


@jit
def c_conj(r, i):
    return r, neg(i)


@jit
def c_real(r, i):
    return r


@jit
def c_imag(r, i):
    return i


@jit
def c_abs(r, i):
    if r.dtype.is_fp64():
        return libdevice.hypot(r, i)
    else:  # as the CPU: float64 cannot overflow, one rounding (glibc's hypotf does the same)
        x, y = _wide(r), _wide(i)
        m = _narrow(r, libdevice.sqrt(x * x + y * y))
        return tl.where(_isinf(x) | _isinf(y), _full(r, _INF), m)


@jit
def c_sign(r, i):
    # z / |z| with NumPy 2's infinities: (+-1, 0) or (0, +-1) for one infinite part
    m = libdevice.hypot(r, i)
    nan = _nan(r)
    zero = _full(r, 0.0)
    one = _full(r, 1.0)
    re = fdiv_ieee(r, m)
    im = fdiv_ieee(i, m)
    re, im = _sel(m == 0, zero, zero, re, im)
    inf_r = tl.where(_isinf(i), nan, tl.where(r > 0, one, neg(one)))
    inf_re = tl.where(_isinf(r), inf_r, zero)
    inf_im = tl.where(_isinf(r), tl.where(_isinf(i), nan, zero), tl.where(i > 0, one, neg(one)))
    re, im = _sel(_isinf(m), inf_re, inf_im, re, im)
    return _sel(_isnan(m), nan, nan, re, im)


@jit
def c_isnan(r, i):
    return _isnan(r) | _isnan(i)


@jit
def c_isinf(r, i):
    return _isinf(r) | _isinf(i)


@jit
def c_isfinite(r, i):
    return _isfinite(r) & _isfinite(i)


@jit
def c_logical_and(ar, ai, br, bi):
    return c_truth(ar, ai) & c_truth(br, bi)


@jit
def c_logical_or(ar, ai, br, bi):
    return c_truth(ar, ai) | c_truth(br, bi)


@jit
def c_logical_xor(ar, ai, br, bi):
    return c_truth(ar, ai) != c_truth(br, bi)


@jit
def c_logical_not(r, i):
    return c_truth(r, i) == 0


@jit
def c_round(r, i):
    return _rint(r), _rint(i)


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
