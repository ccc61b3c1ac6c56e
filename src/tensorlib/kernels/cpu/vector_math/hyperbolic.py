"""tanh, sigmoid, sinh, cosh, asinh, acosh and atanh on float32 / float64."""
import numpy as np

from .base import (_F32_SHIFT, _INF, _LN2, _LN2_LO, _LN2_LO53, _LOG2E, _NAN, _SHIFT, _copysign,
    _pow2, _scale2, _two_prod, _two_sum, _vjit, bits_f32, f32_bits, f64_bits, fma)
from .exp_log import _exp_dd, _exp_f32d, _expm1_core, _log_f32core, _log_kz, _split, exp_f64

# --------------------------------------------------------------------------
# tanh / sigmoid
# --------------------------------------------------------------------------

@_vjit
def tanh_f64(x):
    a = min(abs(x), 40.0)
    em = _expm1_core(-2.0 * a, -80.0)      # in (-1, 0]
    t = -em / (2.0 + em)
    res = _copysign(t, x)
    return res if x == x else x


# float32 tanh in float32 arithmetic (16 lanes per 512-bit register instead of 8, and a float32
# division instead of a float64 one: the float64-internal version cost 3x a copy of its data
# and bounded fused GELU). |x| < 0.75: x + x^3 P(x^2), a degree-5 P fitted on [0, 0.75] for
# relative error (fit error ~0.03 ulp). Above: 1 - 2 / (exp(2|x|) + 1), exp(2a) = 2**k exp(2r)
# with r = a - k ln2/2 from one FMA (float32 ln2/2 is off by ~1e-9: k r-errors of at most
# 3e-8 hit q = 2/(exp(2a)+1) < 2**(1-k), so they stay below 0.02 ulp), exp(2r) - 1 by a
# degree-6 polynomial (2r + 2r^2 fixed, the rest fitted minimax on |r| <= ln2/4: 2**-28
# absolute) in Estrin form (shorter dependency chain), and 2**k + 1 + 2**k (exp(2r) - 1) with
# one rounding by FMA. Both branches run (the loop is vectorized, branch-free) and the loop is
# throughput-bound (~30 vector operations per 16 lanes), so every operation counts: this form
# has 6 fewer than the Taylor / two-constant Cody-Waite one before it (a + a folded into the
# constants, the NaN select replaced by a clamp that keeps NaN), ~20% less time, for a max
# error of ~1.08 ulp over every float32 in [0, 9.6] (scripts/check_tanh_f32.py; above 9.5 the
# result is 1, and tanh is odd); NumPy's float32 tanh: 1.35-1.37. The max sits just above 0.75,
# where the rounding of the denominator, the quotient and 1 - q add up; a Fast2Sum of the
# denominator and a Newton step on the quotient took it to 0.92 ulp for 18% more time.
_TANH_P = tuple(np.float32(c) for c in (
    -0.33333316445350647, 0.1333269476890564, -0.053892724215984344, 0.021452033892273903,
    -0.007657255511730909, 0.0017369358101859689))
_TH0, _TH1, _TH2, _TH3, _TH4, _TH5 = _TANH_P
_F32_SHIFT_BITS = np.uint32(0x4B400000)
_F32_2LOG2E = np.float32(2.0 * 1.4426950408889634)   # k = round(2a / ln2)
_F32_LN2_HALF = np.float32(0.6931471805599453 / 2)
_F32_SIGN = np.uint32(0x80000000)
# exp(2r) - 1 = 2r + 2r^2 + E3 r^3 + ... + E6 r^6 on |r| <= ln2/4
_E3, _E4, _E5, _E6 = (np.float32(1.3333215713500977), np.float32(0.6666622161865234),
                      np.float32(0.26780030131340027), np.float32(0.08922892808914185))


@_vjit
def tanh_f32(x):
    one = np.float32(1.0)
    ax = abs(x)
    a = np.float32(9.5) if ax > np.float32(9.5) else ax  # tanh(9.5) rounds to 1; NaN stays NaN
    z = a * a
    p = fma(_TH5, z, _TH4)
    p = fma(p, z, _TH3)
    p = fma(p, z, _TH2)
    p = fma(p, z, _TH1)
    p = fma(p, z, _TH0)
    small = fma(a * z, p, a)
    t = fma(a, _F32_2LOG2E, _F32_SHIFT)
    k = t - _F32_SHIFT
    r = fma(-k, _F32_LN2_HALF, a)                    # |r| <= ln2/4
    r2 = r * r
    u = fma(r2, fma(_E6, r2, fma(_E5, r, _E4)), fma(_E3, r, np.float32(2.0)))
    w = fma(r2, u, r + r)                            # exp(2r) - 1
    scale = bits_f32(np.uint32((f32_bits(t) - _F32_SHIFT_BITS + np.uint32(127))
                               << np.uint32(23)))    # 2**k, k in [0, 28]
    s1 = scale + one                # exact for k <= 23; beyond, q is far below 1's half ulp
    d = fma(scale, w, s1)
    q = np.float32(2.0) / d
    res = small if a < np.float32(0.75) else one - q  # NaN: a < 0.75 is false, 1 - q is NaN
    return bits_f32(np.uint32((f32_bits(res) & ~_F32_SIGN) | (f32_bits(x) & _F32_SIGN)))


@_vjit
def sigmoid_f64(x):
    # 1 / (1 + exp(-x)) for x >= 0; exp(x) / (1 + exp(x)) for x < 0 (no overflow either way)
    e = exp_f64(-abs(x))
    d = 1.0 + e
    res = 1.0 / d if x >= 0.0 else e / d
    return res if x == x else x


@_vjit
def sigmoid_f32(x):
    xd = min(max(np.float64(x), -110.0), 110.0)
    e = _exp_f32d(-xd)         # exp(-x), finite for |x| <= 110
    res = np.float32(1.0 / (1.0 + e))
    return res if x == x else x


# --------------------------------------------------------------------------
# sinh / cosh
# --------------------------------------------------------------------------

@_vjit
def _sinhcosh_big(a, sign):
    """sinh (sign -1.0) or cosh (sign 1.0) of a in [0, 711] from exp(a) = (hi + lo) 2**k as a
    double-double: (e**a + sign e**-a) / 2 = 2**(k-1) (hi + lo + sign 2**-2k / (hi + lo)),
    summed with TwoSums and scaled once (overflows to inf from 710.4758600739439)."""
    k = fma(a, _LOG2E, _SHIFT) - _SHIFT
    hi, lo = _exp_dd(fma(-k, _LN2, a), -k * _LN2_LO53)     # a - k ln2 split exactly
    d = 1.0 / hi                            # 1 / (hi + lo) = d + dl
    dl = d * (fma(-d, hi, 1.0) - d * lo)
    m = _pow2(max(-2.0 * k, -1022.0)) * sign   # 2**-2k below 2**-1022 is lost under hi's ulp
    md = m * d
    s, e = _two_sum(hi, md)
    s = s + (e + (lo + m * dl))
    return _scale2(s, k - 1.0)


@_vjit
def sinh_f64(x):
    a = abs(x)
    # |x| < 1: odd Taylor series (degree 19: truncation < 2**-62)
    z = a * a
    p = fma(z, 1.0 / 121645100408832000.0, 1.0 / 355687428096000.0)
    p = fma(p, z, 1.0 / 1307674368000.0)
    p = fma(p, z, 1.0 / 6227020800.0)
    p = fma(p, z, 1.0 / 39916800.0)
    p = fma(p, z, 1.0 / 362880.0)
    p = fma(p, z, 1.0 / 5040.0)
    p = fma(p, z, 1.0 / 120.0)
    p = fma(p, z, 1.0 / 6.0)
    small = fma(a * z, p, a)
    big = _sinhcosh_big(min(a, 711.0), -1.0)
    res = _copysign(small if a < 1.0 else big, x)
    return res if x == x else x


@_vjit
def cosh_f64(x):
    a = abs(x)
    res = _sinhcosh_big(min(a, 711.0), 1.0)
    return res if x == x else a


@_vjit
def sinh_f32(x):
    xd = np.float64(x)
    a = abs(xd)
    z = a * a
    # |x| < 1/2: odd Taylor series to degree 13 (truncation ~2**-50)
    p = fma(z, 1.0 / 6227020800.0, 1.0 / 39916800.0)
    p = fma(p, z, 1.0 / 362880.0)
    p = fma(p, z, 1.0 / 5040.0)
    p = fma(p, z, 1.0 / 120.0)
    p = fma(p, z, 1.0 / 6.0)
    small = fma(a * z, p, a)
    e = _exp_f32d(min(a, 90.0))             # e**90 / 2 overflows float32 (not double)
    big = 0.5 * e - 0.5 / e                 # a >= 1/2: cancels at most one bit
    res = _copysign(small if a < 0.5 else big, xd)
    return np.float32(res if x == x else xd)


@_vjit
def cosh_f32(x):
    xd = np.float64(x)
    e = _exp_f32d(min(abs(xd), 90.0))
    res = 0.5 * e + 0.5 / e
    return np.float32(res if x == x else xd)


# --------------------------------------------------------------------------
# asinh / acosh / atanh
# --------------------------------------------------------------------------

@_vjit
def _log_uc(u, c, kadd):
    """log(u) + c + kadd ln2 for a positive normal finite u and a small correction c (the
    relative error of u, as log1p_f64 adds it): one rounding at the end."""
    k, z = _split(f64_bits(u))
    k = k + kadd
    return _log_kz(k, z, k * _LN2_LO + c)


@_vjit
def _onep(w, wl):
    """(u, c): 1 + w + wl = u (1 + c) for w >= 0, u = 1 + w rounded (Goldberg's log1p
    correction: u - 1 and w - (u - 1) are exact below 2**53)."""
    u = 1.0 + w
    return u, ((w - (u - 1.0)) + wl) / u


@_vjit
def asinh_f64(x):
    a = abs(x)
    ac = min(a, 268435456.0)                # 2**28: beyond, asinh a = log(2a) to 2**-58
    zh, zl = _two_prod(ac, ac)
    v = 1.0 + zh                            # 1 + a*a = v + vl (TwoSum)
    vb = v - zh
    vl = ((1.0 - vb) + (zh - (v - vb))) + zl
    sq = np.sqrt(v)                         # sqrt(1 + a*a) = sq + sql
    sql = (fma(-sq, sq, v) + vl) / (sq + sq)
    # log(a + sqrt(1 + a*a)), the argument as a double-double u (1 + c): no cancellation left
    # for small a (log_uc's f = u - 1 is exact)
    u = sq + ac
    c = (((sq - u) + ac) + sql) / u
    big = a >= 268435456.0
    u = a if big else u
    c = 0.0 if big else c
    res = _copysign(_log_uc(u, c, 1.0 if big else 0.0), x)
    res = res if a >= 3.725290298461914e-09 else x      # |x| < 2**-28: asinh x rounds to x
    res = res if a < _INF else x
    return res if x == x else x


@_vjit
def acosh_f64(x):
    t = x - 1.0                             # exact for x in [1, 2]
    # 1 <= x < 2: log1p(t + sqrt(2t + t*t))
    ph, pl = _two_prod(t, t)
    y = (t + t) + ph
    yl = (((t + t) - y) + ph) + pl
    sh = np.sqrt(y)
    sl = (fma(-sh, sh, y) + yl) / (sh + sh)
    sl = sl if y > 0.0 else 0.0
    w = sh + t
    u1, c1 = _onep(w, ((sh - w) + t) + sl)
    # 2 <= x < 2**28: log(x + sqrt(x*x - 1))
    xc = min(max(x, 2.0), 268435456.0)
    qh, ql = _two_prod(xc, xc)
    v = qh - 1.0
    vl = ((qh - v) - 1.0) + ql
    vh = np.sqrt(v)
    vs = (fma(-vh, vh, v) + vl) / (vh + vh)
    u2 = xc + vh
    c2 = (((xc - u2) + vh) + vs) / u2
    small = x < 2.0
    big = x >= 268435456.0
    u = u1 if small else (x if big else u2)
    c = c1 if small else (0.0 if big else c2)
    res = _log_uc(u, c, 1.0 if big else 0.0)
    res = res if x < _INF else x
    res = res if x >= 1.0 else _NAN
    return res if x == x else x


@_vjit
def atanh_f64(x):
    a = abs(x)
    # atanh a = log1p(2a / (1 - a)) / 2, the quotient as a double-double
    den = 1.0 - a
    denl = (1.0 - den) - a
    num = a + a
    q = num / den
    ql = (fma(-q, den, num) - q * denl) / den
    u, c = _onep(q, ql)
    res = _copysign(0.5 * _log_uc(u, c, 0.0), x)
    res = res if a < 1.0 else (_copysign(_INF, x) if a == 1.0 else _NAN)
    res = res if a >= 3.725290298461914e-09 else x      # |x| < 2**-28: atanh x rounds to x
    return res if x == x else x


@_vjit
def _log1p_f32d(w):
    """log1p of a double w >= 0 to ~2**-34 relative."""
    u = 1.0 + w
    return _log_f32core(u) + (w - (u - 1.0)) / u


@_vjit
def asinh_f32(x):
    xd = np.float64(x)
    a = abs(xd)
    z = a * a                               # no overflow in double
    res = _copysign(_log1p_f32d(a + z / (1.0 + np.sqrt(1.0 + z))), xd)
    res = res if a < _INF else xd
    return np.float32(res if x == x else xd)


@_vjit
def acosh_f32(x):
    xd = np.float64(x)
    t = xd - 1.0                            # exact
    res = _log1p_f32d(t + np.sqrt(fma(t, t, t + t)))
    res = res if xd < _INF else xd
    res = res if xd >= 1.0 else _NAN
    return np.float32(res if x == x else xd)


@_vjit
def atanh_f32(x):
    xd = np.float64(x)
    a = abs(xd)
    res = _copysign(0.5 * _log1p_f32d((a + a) / (1.0 - a)), xd)    # 1 - a exact
    res = res if a < 1.0 else (_copysign(_INF, xd) if a == 1.0 else _NAN)
    return np.float32(res if x == x else xd)
