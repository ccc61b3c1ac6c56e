"""tanh, sigmoid, sinh, cosh, asinh, acosh and atanh on float32 / float64."""
import numpy as np

from .base import (TABLE_LOOKUPS, _F32_SHIFT, _INF, _LN2, _LN2_LO53, _LOG2E, _NAN, _SHIFT,
    _copysign, _copysign_f32, _pow2, _rcp_corr, _two_prod, _two_sum, _vjit, bits_f32, f32_bits,
    f64_bits, fma)
from .exp_log import (_EXP_N, _EXP_T_HI, _EXP_T_LO, _EXP_TI_HI, _EXP_TI_LO, _F32_INF,
    _F32_LOG2E, _F32_NAN, _LN2F_HI, _LN2F_LO, _LN2N, _LN2N_LO, _N_LOG2E, _exp_dd, _exp_f32d,
    _expf_finish, _expm1_core, _log_uc, _logf_uc, _scale_exp, exp_f64)

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
# and bounded fused GELU). With a = min(|x|, 9.5) (tanh(9.5) rounds to 1; the clamp keeps NaN),
# both ranges run (the loop is vectorized, branch-free) and share one division and one FMA:
# tanh a = y - y * (num / den), then x's sign.
# * a < 0.85: y = a, num / den = z P(z) / (z + q0), z = a^2, P of degree 2: a rational fit of
#   (a - tanh a) / a^3 (its pole -q0 sits near tanh's, -pi^2/4) for the result's relative error
#   (0.014 x 2**-24; scripts/check_tanh_f32.py --fit rederives every coefficient here). The
#   roundings of num and den are damped by y num / den / tanh a <= 0.23; tiny a come back
#   exactly (y num / den is below half of a's ulp; for denormals z = 0).
# * above: y = 1, num / den = 2 / (exp(2a) + 1) with exp(2a) = 2**k exp(2r), r = a - k ln2/2 from
#   one FMA (float32 ln2/2 is off by ~1e-9: k r-errors of at most 3e-8 hit q = 2/den < 2**(1-k),
#   so they stay below 0.02 ulp); 2**k is t's bits shifted (the rounding constant that makes t
#   carries the exponent bias too); exp(2r) = 1 + r (2 + W2 r + ... + W6 r^5) by Horner (minimax
#   relative error 2**-28.3 on |r| <= ln2/4), rounded, and den = 2**k exp(2r) + 1 by one FMA.
#   Rounding exp(2r) adds up to q (1 - q/2) ulp of the result: the split is 0.85, where q = 0.31
#   (den as 2**k r (2 + W2 r + ...) + (2**k + 1), one operation more: max 1.01 above 0.85).
# The loop is throughput-bound on the two 512-bit vector ports, so the count of vector operations
# is the cost: 25 micro-ops per 16 lanes (the division is 3), LLVM folding the selects of num
# and den into masked operations (AVX-512 merge masking; written with the small range's value
# in the true arm for that). The form before this one took 31: |a| < 0.75: a + a^3 P(a^2), P of
# degree 5; above: 1 - 2/(2**k (1 + w) + 1), w = exp(2r) - 1 of degree 6 in Estrin form, a
# separate 2**k + 1, bias add and blend (1.067-1.08 ulp). Measured (Cascade Lake, one thread,
# 30 rounds alternating, best of 10 calls each, median per-round ratio over six processes; the
# machine was shared): 65536 float32 (in cache) a loop of fused GELU's body (8 float32
# operations + tanh) 0.88-0.90x (1.87-1.98 -> 1.52-1.78 ms per 4e6), a loop of tanh alone
# 0.84-0.88x; 4e6 float32: tanh alone 0.73-0.88x (~1.45 -> ~1.17 ms), GELU 0.86-0.93x in five
# processes, 1.02x in one (partly memory-bound there: 1.6-2.2 ms from process to process).
# Max error 1.020 ulp at x = 0.97371 over every float32 in [0, 9.6] (scripts/check_tanh_f32.py;
# above 9.5 the result is 1, and tanh is odd): the rounding of exp(2r) at k = 3. Below the split
# the max is 0.921 (at 0.78422). NumPy's float32 tanh: 1.35-1.37.
# Tried and not kept: tanh = e / (e + 2), e = expm1(2a), for every a (2.57 ulp at 0.062); the
# old polynomial small range with the bias, Horner and the blend folded into a masked subtract
# (28 micro-ops); exp(2r) of degree 5 (1.76 x 2**-24 relative; 24 micro-ops): 1.12 ulp at best
# (split 1.0, every 3rd float32); a degree-4 P (fit 0.11 x 2**-24 on [0, 0.65], 0.26 on
# [0, 0.7]) with the large range from there, which alone is 1.16 ulp at 0.65.
_TANH_SPLIT = np.float32(0.85)
_TANH_P0, _TANH_P1, _TANH_P2 = (np.float32(0.8226657509803772), np.float32(0.004267535172402859),
                                np.float32(-0.00014255946734920144))
_TANH_Q0 = np.float32(2.4679973125457764)
# exp(2r) = 1 + r (2 + W2 r + W3 r^2 + W4 r^3 + W5 r^4 + W6 r^5), |r| <= ln2/4
_TANH_W2, _TANH_W3, _TANH_W4, _TANH_W5, _TANH_W6 = (
    np.float32(1.999999761581421), np.float32(1.3333216905593872), np.float32(0.6666920781135559),
    np.float32(0.26779720187187195), np.float32(0.08845743536949158))
_F32_2LOG2E = np.float32(2.0 * 1.4426950408889634)   # k = round(2a / ln2)
_F32_LN2_HALF = np.float32(0.6931471805599453 / 2)
# 1.5 * 2**23 + 127: t = 2a/ln2 + this rounds to an integer whose low bits hold k + 127, so
# t's bits shifted left by 23 are 2**k's (k in [0, 28])
_F32_SHIFT_BIAS = np.float32(12582912.0 + 127.0)


@_vjit
def tanh_f32(x):
    one = np.float32(1.0)
    ax = abs(x)
    a = np.float32(9.5) if ax > np.float32(9.5) else ax  # tanh(9.5) rounds to 1; NaN stays NaN
    z = a * a
    t = fma(a, _F32_2LOG2E, _F32_SHIFT_BIAS)
    k = t - _F32_SHIFT_BIAS
    r = fma(-k, _F32_LN2_HALF, a)                    # |r| <= ln2/4
    h = fma(_TANH_W6, r, _TANH_W5)
    h = fma(h, r, _TANH_W4)
    h = fma(h, r, _TANH_W3)
    h = fma(h, r, _TANH_W2)
    h = fma(h, r, np.float32(2.0))
    e = fma(r, h, one)                               # exp(2r)
    scale = bits_f32(np.uint32(f32_bits(t) << np.uint32(23)))   # 2**k
    p = fma(fma(_TANH_P2, z, _TANH_P1), z, _TANH_P0)
    small = a < _TANH_SPLIT          # NaN: false, and den = NaN
    # written with the small range's operation in the true arm: LLVM merges it into the large
    # range's value under the mask (no separate blend)
    num = z * p if small else np.float32(2.0)
    den = z + _TANH_Q0 if small else fma(scale, e, one)
    y = a if small else one
    res = fma(-y, num / den, y)
    return _copysign_f32(res, x)


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
    return _scale_exp(s, k - 1.0)


@_vjit
def _sinh_small(a):
    """sinh a for 0 <= a < 1: the odd Taylor series (degree 19: truncation < 2**-62)."""
    z = a * a
    p = fma(z, 1.0 / 121645100408832000.0, 1.0 / 355687428096000.0)
    p = fma(p, z, 1.0 / 1307674368000.0)
    p = fma(p, z, 1.0 / 6227020800.0)
    p = fma(p, z, 1.0 / 39916800.0)
    p = fma(p, z, 1.0 / 362880.0)
    p = fma(p, z, 1.0 / 5040.0)
    p = fma(p, z, 1.0 / 120.0)
    p = fma(p, z, 1.0 / 6.0)
    return fma(a * z, p, a)


# float64 sinh / cosh where table loads are cheap (base.TABLE_LOOKUPS): with exp_log._exp_tab's
# reduction a = (128 M + j) ln2/128 + r, (e**a + s e**-a) / 2 = 2**(M-1) (T e**r + s 2**-2M T'
# e**-r), T = 2**(j/128) and T' = 2**(-j/128) as double-doubles (two tables), e**+-r = 1 + (E +-
# O) from the even and odd halves of one Taylor sum (to r^6: 2**-72). The two leading parts add
# by Fast2Sum (T >= 2**-2M T'), the rest to the low part, one rounding and one scaling
# (_scale_exp: inf from cosh's overflow at 710.4758600739439). No division.
@_vjit
def _sinhcosh_tab(a, sign):
    """cosh (sign 1.0) or sinh (sign -1.0: a >= 1/2, where the terms cancel at most e**-1) of
    a in [0, 711] (tables)."""
    t = fma(a, _N_LOG2E, _SHIFT)
    n = t - _SHIFT                                   # round(128 a / ln2) = 128 M + j
    r = fma(-n, _LN2N, a) - n * _LN2N_LO             # |r| <= ln2/256
    j = np.int64(f64_bits(t) & np.uint64(_EXP_N - 1))
    m = np.floor(n * (1.0 / _EXP_N))
    r2 = r * r
    odd = fma(r2 * r, fma(r2, 1.0 / 120.0, 1.0 / 6.0), r)
    even = r2 * fma(r2, fma(r2, 1.0 / 720.0, 1.0 / 24.0), 0.5)
    th = _EXP_T_HI[j]
    ti = _EXP_TI_HI[j]
    p2m = _pow2(max(-2.0 * m, -1022.0)) * sign       # (2**-1022 T': lost under T's ulp)
    bh = ti * p2m
    sh = th + bh
    lo = ((th - sh) + bh) + (fma(th, even + odd, _EXP_T_LO[j]) +
                             p2m * fma(ti, even - odd, _EXP_TI_LO[j]))
    return _scale_exp(sh + lo, m - 1.0)


@_vjit
def sinh_f64_tables(x):
    a = abs(x)
    big = _sinhcosh_tab(min(a, 711.0), -1.0)
    res = _copysign(_sinh_small(a) if a < 0.5 else big, x)
    return res if x == x else x


@_vjit
def cosh_f64_tables(x):
    a = abs(x)
    res = _sinhcosh_tab(min(a, 711.0), 1.0)
    return res if x == x else a


@_vjit
def sinh_f64_arith(x):
    a = abs(x)
    big = _sinhcosh_big(min(a, 711.0), -1.0)
    res = _copysign(_sinh_small(a) if a < 1.0 else big, x)
    return res if x == x else x


@_vjit
def cosh_f64_arith(x):
    a = abs(x)
    res = _sinhcosh_big(min(a, 711.0), 1.0)
    return res if x == x else a


sinh_f64 = sinh_f64_tables if TABLE_LOOKUPS else sinh_f64_arith
cosh_f64 = cosh_f64_tables if TABLE_LOOKUPS else cosh_f64_arith


# float32 sinh / cosh in float32 arithmetic (16 lanes), from h = e**|x| / 2 by exp_f32's steps
# with the power of two one lower (one rounding; finite up to sinh / cosh's own overflow):
# cosh = h + 1/(4h); sinh = h - 1/(4h) for |x| >= 2 (cancels < 4%), below it
# a + a^3 P(a^2), P of degree 4 (minimax for the relative error on [0, 2], float32
# coefficients: 0.007 x 2**-24; scripts/check_exp_f32.py --fit-sinh). Max error over every
# float32: sinh 1.517, cosh 1.339 ulp (scripts/check_exp_f32.py; NumPy's float32 sinh 1.52,
# cosh 2.48 on samples), where the float64 route took ~3x NumPy's time.
_SINHF_P = tuple(np.float32(c) for c in (0.1666666716337204, 0.008333316072821617,
                                         0.00019843189511448145, 2.7464741378935287e-06,
                                         2.70710778238481e-08))


@_vjit
def _half_exp_f32(a):
    """e**a / 2 for float32 a in [0, 90] (inf beyond e**a / 2's range)."""
    ks = fma(a, _F32_LOG2E, _F32_SHIFT)
    k = ks - _F32_SHIFT
    rh = fma(-k, _LN2F_HI, a)
    return _expf_finish(ks - np.float32(1.0), rh, fma(-k, _LN2F_LO, rh), -k * _LN2F_LO)


@_vjit
def sinh_f32(x):
    p0, p1, p2, p3, p4 = _SINHF_P
    a = abs(x)
    z = a * a
    small = fma(a * z, fma(fma(fma(fma(p4, z, p3), z, p2), z, p1), z, p0), a)
    h = _half_exp_f32(min(a, np.float32(90.0)))
    res = small if a < np.float32(2.0) else h - np.float32(0.25) / h
    res = _copysign_f32(res, x)
    return res if x == x else x


@_vjit
def cosh_f32(x):
    h = _half_exp_f32(min(abs(x), np.float32(90.0)))
    res = h + np.float32(0.25) / h
    return res if x == x else x


# --------------------------------------------------------------------------
# asinh / acosh / atanh
# --------------------------------------------------------------------------

@_vjit
def _onep(w, wl):
    """(u, c): 1 + w + wl = u (1 + c) for w >= 0, u = 1 + w rounded (Goldberg's log1p
    correction: u - 1 and w - (u - 1) are exact below 2**53)."""
    u = 1.0 + w
    return u, ((w - (u - 1.0)) + wl) * _rcp_corr(u)


@_vjit
def asinh_f64(x):
    a = abs(x)
    ac = min(a, 268435456.0)                # 2**28: beyond, asinh a = log(2a) to 2**-58
    zh, zl = _two_prod(ac, ac)
    v = 1.0 + zh                            # 1 + a*a = v + vl (TwoSum)
    vb = v - zh
    vl = ((1.0 - vb) + (zh - (v - vb))) + zl
    sq = np.sqrt(v)                         # sqrt(1 + a*a) = sq + sql
    sql = (fma(-sq, sq, v) + vl) * _rcp_corr(sq + sq)
    # log(a + sqrt(1 + a*a)), the argument as a double-double u (1 + c): no cancellation left
    # for small a (log_uc's f = u - 1 is exact)
    u = sq + ac
    c = (((sq - u) + ac) + sql) * _rcp_corr(u)
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
    sl = (fma(-sh, sh, y) + yl) * _rcp_corr(sh + sh)
    sl = sl if y > 0.0 else 0.0
    w = sh + t
    u1, c1 = _onep(w, ((sh - w) + t) + sl)
    # 2 <= x < 2**28: log(x + sqrt(x*x - 1))
    xc = min(max(x, 2.0), 268435456.0)
    qh, ql = _two_prod(xc, xc)
    v = qh - 1.0
    vl = ((qh - v) - 1.0) + ql
    vh = np.sqrt(v)
    vs = (fma(-vh, vh, v) + vl) * _rcp_corr(vh + vh)
    u2 = xc + vh
    c2 = (((xc - u2) + vh) + vs) * _rcp_corr(u2)
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
    ql = (fma(-q, den, num) - q * denl) * _rcp_corr(den)
    u, c = _onep(q, ql)
    res = _copysign(0.5 * _log_uc(u, c, 0.0), x)
    res = res if a < 1.0 else (_copysign(_INF, x) if a == 1.0 else _NAN)
    res = res if a >= 3.725290298461914e-09 else x      # |x| < 2**-28: atanh x rounds to x
    return res if x == x else x


# float32 asinh / acosh / atanh in float32 arithmetic: the float64 kernels' schemes (the argument
# of the log as a float32 pair u (1 + c), its low part from TwoSum / FMA residuals, so no
# cancellation is left for small arguments), with log_f32's logarithm taking the correction c
# and an extra k (exp_log._logf_uc). The float64-internal versions spent their time in three
# double divisions and a double square root per element (16 cycles each per 8 lanes on the
# divider): 3.9-4.3x NumPy's per core at 1e5. Here the same steps are float32 divisions and a
# float32 square root over 16 lanes. Above 2**12, asinh a and acosh a are log(2a) (dropping
# 1/(4a^2) <= 2**-26 of a result >= 9: under 0.02 ulp). Every float32 checked
# (scripts/check_hyperbolic_f32.py): max error asinh 0.888 ulp, acosh 0.853, atanh 0.885 (the float64-internal ones:
# ~0.5).
_F32_BIG = np.float32(4096.0)
# below 2**-12, asinh a = a - a^3/6 and atanh a = a + a^3/3 round to a; there the rounding of
# u = 1 + a (coarse next to a) leaves c a large part of the result, and c's own rounding
# showed (1 ulp at 7.4e-8)
_F32_TINY_ARG = np.float32(2.0 ** -12)


@_vjit
def asinh_f32(x):
    one = np.float32(1.0)
    a = abs(x)
    ac = min(a, _F32_BIG)
    zh, zl = _two_prod(ac, ac)              # a*a = zh + zl exactly
    v, vl = _two_sum(zh, one)               # 1 + a*a = v + vl
    vl = vl + zl
    sq = np.sqrt(v)                         # sqrt(1 + a*a) = sq + sql
    sql = (fma(-sq, sq, v) + vl) / (sq + sq)
    u = sq + ac                             # a + sqrt(1 + a*a) = u (1 + c), sq >= a
    c = (((sq - u) + ac) + sql) / u
    big = a >= _F32_BIG
    res = _logf_uc(a if big else u, np.float32(0.0) if big else c,
                   one if big else np.float32(0.0))
    res = _copysign_f32(res, x)
    res = res if (a >= _F32_TINY_ARG) & (a < _F32_INF) else x
    return res if x == x else x


@_vjit
def acosh_f32(x):
    one = np.float32(1.0)
    t = min(x, _F32_BIG) - one              # exact for 1 <= x < 2**24
    ph, pl = _two_prod(t, t)                # t*t = ph + pl exactly
    y, yl = _two_sum(ph, t + t)             # x*x - 1 = 2t + t*t = y + yl
    yl = yl + pl
    sh = np.sqrt(y)                         # sqrt(x*x - 1) = sh + sl
    sl = (fma(-sh, sh, y) + yl) / (sh + sh)
    sl = sl if y > np.float32(0.0) else np.float32(0.0)
    w = sh + t                              # x - 1 + sqrt(x*x - 1) = w + wl, sh >= t
    wl = ((sh - w) + t) + sl
    u = one + w                             # 1 + w + wl = u (1 + c): u - 1 and w - (u - 1)
    c = ((w - (u - one)) + wl) / u          # exact below 2**24
    big = x >= _F32_BIG
    res = _logf_uc(x if big else u, np.float32(0.0) if big else c,
                   one if big else np.float32(0.0))
    res = res if x < _F32_INF else x
    res = res if x >= one else _F32_NAN
    return res if x == x else x


@_vjit
def atanh_f32(x):
    one = np.float32(1.0)
    a = abs(x)
    # atanh a = log1p(2a / (1 - a)) / 2, the quotient as a float32 pair q + ql
    den = one - a
    denl = (one - den) - a
    num = a + a
    rd = one / den
    q = num * rd
    ql = (fma(-q, den, num) - q * denl) * rd
    u = one + q
    c = ((q - (u - one)) + ql) / u
    res = _copysign_f32(np.float32(0.5) * _logf_uc(u, c, np.float32(0.0)), x)
    res = res if a < one else (_copysign_f32(_F32_INF, x) if a == one else _F32_NAN)
    res = res if a >= _F32_TINY_ARG else x
    return res if x == x else x
