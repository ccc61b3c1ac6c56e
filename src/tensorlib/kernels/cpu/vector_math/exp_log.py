"""exp, expm1, exp2 and log, log1p, log2, log10 on float32 / float64, with the pieces the other
parts reuse (the degree-13 exp polynomial, exp of a double-double, the exponent split, the
log and exp tables with their reductions, the log of a corrected argument)."""
import math

import numpy as np

from .base import (TABLE_LOOKUPS, _INF, _LN2, _LN2_HI, _LN2_LO, _LN2_LO53, _LOG2E, _NAN, _SHIFT,
    _TWO52, _TWO52_BITS, _F32_SHIFT, _pow2, _rcp_corr, _two_prod, _two_sum, _vjit, bits_f32,
    bits_f64, f32_bits, f64_bits, fma)

# --------------------------------------------------------------------------
# exp / expm1
# --------------------------------------------------------------------------

@_vjit
def _exp_poly13(r):
    # Taylor series of exp on |r| <= ln2/2 to degree 13 (truncation < 2**-57 relative)
    p = 1.0 / 6227020800.0
    p = fma(p, r, 1.0 / 479001600.0)
    p = fma(p, r, 1.0 / 39916800.0)
    p = fma(p, r, 1.0 / 3628800.0)
    p = fma(p, r, 1.0 / 362880.0)
    p = fma(p, r, 1.0 / 40320.0)
    p = fma(p, r, 1.0 / 5040.0)
    p = fma(p, r, 1.0 / 720.0)
    p = fma(p, r, 1.0 / 120.0)
    p = fma(p, r, 1.0 / 24.0)
    p = fma(p, r, 1.0 / 6.0)
    p = fma(p, r, 0.5)
    return p  # exp(r) = 1 + r + r*r*p


@_vjit
def _exp_reduce(x):
    """(k, r): x = k ln2 + r, k = round(x / ln2), |r| <= ln2/2 (ln2 in two parts), |x| <= 760."""
    k = fma(x, _LOG2E, _SHIFT) - _SHIFT
    r = fma(-k, _LN2, x)                    # exact (|r| <= ln2/2, k has <= 11 bits)
    return k, fma(-k, _LN2_LO53, r)


@_vjit
def _scale_exp(p, k):
    """p 2**k rounded once, for p in [2**-0.5, 2**0.5] (a little wider is fine) and an
    integer-valued k in [-1085, 1100] (exp, exp2, pow and sinh / cosh of float64): 2**k joins
    p's exponent field as an integer add (k from the low bits of k + SHIFT), exact for a normal
    result; below k = -1020, k + 64 and then a product by 2**-64 (the one rounding of a
    denormal result); a field that reached 2047 (or wrapped past it into the sign bit) is
    inf. The bits of p 2**k1 2**(k - k1) with two normal factors, ~14% less time in exp_f64
    (1e5 float64, one thread)."""
    low = k < -1020.0
    q = bits_f64(f64_bits(p) + (f64_bits((k + 64.0 if low else k) + _SHIFT) << np.uint64(52)))
    res = q * 5.421010862427522e-20 if low else q   # 2**-64
    return _INF if f64_bits(q) >= np.uint64(0x7FF0000000000000) else res


@_vjit
def exp_f64_arith(x):
    xc = min(max(x, -746.0), 710.0)
    k, r = _exp_reduce(xc)
    p = fma(r * r, _exp_poly13(r), r) + 1.0
    res = _scale_exp(p, k)
    return res if x == x else x


@_vjit
def _exp_taylor8(r):
    """exp(r) by its degree 8 Taylor polynomial: truncation ~2**-32 on |r| <= ln2/2."""
    p = 1.0 / 40320.0
    p = fma(p, r, 1.0 / 5040.0)
    p = fma(p, r, 1.0 / 720.0)
    p = fma(p, r, 1.0 / 120.0)
    p = fma(p, r, 1.0 / 24.0)
    p = fma(p, r, 1.0 / 6.0)
    p = fma(p, r, 0.5)
    p = fma(p, r, 1.0)
    return fma(p, r, 1.0)


@_vjit
def _exp_f32d(a):
    """exp(a) for a double a in [-110, 110] to ~2**-32 relative."""
    k = fma(a, _LOG2E, _SHIFT) - _SHIFT
    return _exp_taylor8(fma(-k, _LN2, a)) * _pow2(k)


# float32 exp in float32 arithmetic (16 lanes per 512-bit register; the float64-internal form,
# _exp_f32d above, still serves erf / sinh / cosh / sigmoid, took 1.4x NumPy's AVX-512 expf per
# core). x = k ln2 + r, |r| <= ln2/2: k by the 1.5 * 2**23 shift, r_hi = x - k LN2F_HI exact
# (LN2F_HI has 15 significant bits, |k| <= 150), and exp(r) = 1 + (r_hi + (r^2 P(r) - k LN2F_LO)):
# the low part of k ln2 is folded in with the polynomial term rather than rounded into r, which
# leaves two roundings (the sum of the small terms, then + 1). P: degree 4, fitted minimax for
# the relative error of exp(r) on |r| <= ln2/2 (2**-28 with float32 coefficients). 2**k as two
# normal factors (one rounding, at the second product: denormal results round once). Max error
# 0.87 ulp over every float32 in [-104, 89] (scripts/check_exp_f32.py; NumPy's expf: ~0.5-2.5).
_F32_LOG2E = np.float32(1.4426950408889634)
_LN2F_HI = np.float32(0.693145751953125)
_LN2F_LO = np.float32(_LN2 - 0.693145751953125)
_EXPF_P = tuple(np.float32(c) for c in (0.49999994, 0.16666521, 0.04166839, 0.00836872,
                                        0.00138146))
_F32_BIAS = np.int32(127)


@_vjit
def _expf_finish(ks, rh, r, lo):
    """2**k exp(rh + lo) in float32, r = rh + lo rounded (|r| <= ln2/2 and a little), k the
    integer ks - F32_SHIFT: 1 + (rh + (r^2 P(r) + lo)), then the two power-of-two factors."""
    c2, c3, c4, c5, c6 = _EXPF_P
    p = fma(fma(fma(fma(c6, r, c5), r, c4), r, c3), r, c2)
    e = (rh + fma(r * r, p, lo)) + np.float32(1.0)
    ki = np.int32(f32_bits(ks) - f32_bits(_F32_SHIFT))   # k as an integer, in [-151, 129]
    k1 = ki >> np.int32(1)
    s1 = bits_f32(np.uint32((k1 + _F32_BIAS) << np.int32(23)))
    s2 = bits_f32(np.uint32((ki - k1 + _F32_BIAS) << np.int32(23)))
    return e * s1 * s2


@_vjit
def exp_f32(x):
    xc = min(max(x, np.float32(-104.0)), np.float32(89.0))  # beyond: 0 and inf still
    ks = fma(xc, _F32_LOG2E, _F32_SHIFT)
    k = ks - _F32_SHIFT
    rh = fma(-k, _LN2F_HI, xc)
    res = _expf_finish(ks, rh, fma(-k, _LN2F_LO, rh), -k * _LN2F_LO)
    return res if x == x else x


@_vjit
def _expm1_core(x, lo):
    """expm1 for x already clamped to [lo, 710] (lo <= -40), not nan."""
    k, r = _exp_reduce(x)
    q = fma(r * r, _exp_poly13(r), r)       # expm1(r)
    # expm1(x) = 2**k (q + 1 - 2**-k); no harmful cancellation for any k (see tests)
    k1 = np.floor(k * 0.5)
    k2 = k - k1
    s1 = _pow2(k1)
    s2 = _pow2(k2)
    y = q + (1.0 - _pow2(-k1) * _pow2(-k2))
    res = y * s1 * s2
    return res if k != 0.0 else q


@_vjit
def expm1_f64(x):
    xc = min(max(x, -40.0), 710.0)
    res = _expm1_core(xc, -40.0)
    res = res if x == x else x
    return res if (x != 0.0) else x  # keeps -0.0


# float32 expm1 in float32 arithmetic: x = k ln2 + r with k rounded toward zero, so r has x's
# sign and |r| < ln2 (no cancellation below: 2**k expm1 r and 2**k - 1 have one sign too);
# expm1 r = r + r^2 Q(r), Q of degree 6 (minimax for the relative error of expm1 r on
# |r| <= 0.7, float32 coefficients: 0.027 x 2**-24; scripts/check_exp_f32.py --fit-expm1), then
# expm1 x = 2 (2**(k-1) expm1 r + (2**(k-1) - 1/2)) with one rounding in the FMA (the doubling
# is exact, and 2**(k-1) keeps k = 128 finite until then); for k >= 25, where 2**(k-1) - 1/2 is
# no float32, 2 (2**(k-1) (expm1 r - 2**-k) + 2**(k-1)); k = 0 is expm1 r itself. Max error
# 1.227 ulp over every float32 in [-20, 89] (scripts/check_exp_f32.py; NumPy's float32
# expm1: 2.6 on samples), where the float64 route took ~3x NumPy's time.
_EXPM1F_Q = tuple(np.float32(c) for c in (
    0.5, 0.16666671633720398, 0.04166664183139801, 0.008332652039825916,
    0.0013889928814023733, 0.00020093780767638236, 2.4821287297527306e-05))


@_vjit
def expm1_f32(x):
    q0, q1, q2, q3, q4, q5, q6 = _EXPM1F_Q
    xc = min(max(x, np.float32(-20.0)), np.float32(89.0))   # beyond: -1 and inf still
    toward_zero = np.float32(-0.5) if xc > np.float32(0.0) else np.float32(0.5)
    ks = fma(xc, _F32_LOG2E, toward_zero) + _F32_SHIFT
    k = ks - _F32_SHIFT
    rh = fma(-k, _LN2F_HI, xc)                              # x - k LN2F_HI exact
    r = fma(-k, _LN2F_LO, rh)
    rl = fma(-k, _LN2F_LO, rh - r)                          # r's rounding error (|r| < ln2)
    q = fma(fma(fma(fma(fma(fma(q6, r, q5), r, q4), r, q3), r, q2), r, q1), r, q0)
    em = fma(r * r, q, r)                                   # expm1(r)
    em = fma(rl, em + np.float32(1.0), em)                  # expm1(r + rl), to first order
    ki = np.int32(f32_bits(ks) - f32_bits(_F32_SHIFT))      # k, in [-28, 128]
    half = bits_f32(np.uint32((ki + _F32_BIAS - np.int32(1)) << np.int32(23)))  # 2**(k-1)
    low = ki <= np.int32(24)
    t = bits_f32(np.uint32((_F32_BIAS - min(ki, np.int32(30))) << np.int32(23)))  # 2**-k
    res = fma(half, em if low else em - t, half - np.float32(0.5) if low else half)
    res = em if ki == np.int32(0) else res * np.float32(2.0)
    res = res if x == x else x
    return res if x != np.float32(0.0) else x              # keeps -0.0


# --------------------------------------------------------------------------
# log / log1p
# --------------------------------------------------------------------------

_LG1 = 6.666666666666735130e-01
_LG2 = 3.999999999940941908e-01
_LG3 = 2.857142874366239149e-01
_LG4 = 2.222219843214978396e-01
_LG5 = 1.818357216161805012e-01
_LG6 = 1.531383769920937332e-01
_LG7 = 1.479819860511658591e-01
_SQRT_HALF_OFF = np.uint64(0x3ff0000000000000 - 0x3fe6a09e667f3bcd)


@_vjit
def _split(u):
    """(k, z) with x = 2**k z, z in [sqrt(1/2), sqrt(2)), for the bit pattern u of a positive
    normal double (unsigned arithmetic only: AVX2 has no 64-bit arithmetic shift)."""
    e = (u + _SQRT_HALF_OFF) >> np.uint64(52)            # biased exponent of the result
    z = bits_f64(u - (e << np.uint64(52)) + np.uint64(0x3ff0000000000000))
    k = bits_f64(e | _TWO52_BITS) - _TWO52 - 1023.0     # exact int -> double
    return k, z


@_vjit
def _split_any(x):
    """_split for any positive finite double x: denormals are scaled by 2**54 first."""
    sub = x < 2.2250738585072014e-308
    xs = x * 18014398509481984.0 if sub else x
    k, z = _split(f64_bits(xs))
    return (k - 54.0 if sub else k), z


@_vjit
def _log_terms(z):
    """(f, s, hfsq, R) of fdlibm e_log.c for z = 1 + f in [sqrt(1/2), sqrt(2)):
    log(1+f) = f - (hfsq - s (hfsq + R(s*s)))."""
    f = z - 1.0
    s = f / (2.0 + f)
    z2 = s * s
    w = z2 * z2
    t1 = w * fma(w, fma(w, _LG6, _LG4), _LG2)
    t2 = z2 * fma(w, fma(w, fma(w, _LG7, _LG5), _LG3), _LG1)
    return f, s, 0.5 * f * f, t2 + t1


@_vjit
def _log_kz(k, z, tail):
    """k ln2 + log(z) + c for tail = k LN2_LO + c (c a small correction, or none): fdlibm's
    sum, one rounding at the end."""
    f, s, hfsq, R = _log_terms(z)
    return k * _LN2_HI - ((hfsq - (s * (hfsq + R) + tail)) - f)


@_vjit
def _log_specials(x, res):
    res = res if x != _INF else x
    res = res if x != 0.0 else -_INF
    res = res if not (x < 0.0) else _NAN
    return res if x == x else x


@_vjit
def log_f64_arith(x):
    k, z = _split_any(x)
    return _log_specials(x, _log_kz(k, z, k * _LN2_LO))


# The ordinary forms of log / log2 / log10 (ops.yaml block_fast, scalar_math.positive_normal):
# for a positive normal finite x the general forms' steps without the denormal scaling and the
# special values, so the same bits (1e5 float64 log per core on Zen 4: ~19% less time).
@_vjit
def log_ordinary_f64_arith(x):
    k, z = _split(f64_bits(x))
    return _log_kz(k, z, k * _LN2_LO)


# float32 log / log1p / log2 / log10 in float32 arithmetic (16 lanes per 512-bit register; a
# float64-internal version spent its time on the double division and polynomial: 2.3x NumPy's
# AVX-512 logf). No division (but log1p's correction c / u). x = 2**k z with z in
# [sqrt(1/2), sqrt(2)) (denormals scaled by 2**23 first), f = z - 1 exact (Sterbenz), and
# log(1 + f) = f + f^2 Q(f), Q(f) = -1/2 + f P(f): P is a minimax fit of degree 7 (log) or 8
# (log2, log10) on f in [sqrt(1/2) - 1, sqrt(2) - 1], weighted for the relative error of
# f + f^2 Q (2**-27.4 / 2**-30.3 with the float32 coefficients; scripts/check_log_f32.py --fit
# rederives them). The exactly known part of the sum (f, and k ln2's leading bits) is carried as
# a float32 pair (Fast2Sum; products split with fma), so f^2 Q and the low parts round once, at
# the end. Exhaustive over every positive float32 (scripts/check_log_f32.py; log1p: every
# float32 above -1): max log 0.876 ulp, log1p 0.883, log10 0.892, log2 1.007 (NumPy's float32:
# 3.17, >= 1.69, 2.1, 1.9).
_LOGF_P7 = tuple(np.float32(c) for c in (
    0.3333333134651184, -0.2500081956386566, 0.20001226663589478, -0.16623356938362122,
    0.14201757311820984, -0.13160182535648346, 0.1276157796382904, -0.07634498178958893))
_LOGF_P8 = tuple(np.float32(c) for c in (
    0.3333331346511841, -0.25000008940696716, 0.2000211924314499, -0.1666799634695053,
    0.14219552278518677, -0.1240558847784996, 0.11888162791728973, -0.11675652861595154,
    0.06746641546487808))
_P7_0, _P7_1, _P7_2, _P7_3, _P7_4, _P7_5, _P7_6, _P7_7 = _LOGF_P7
_P8_0, _P8_1, _P8_2, _P8_3, _P8_4, _P8_5, _P8_6, _P8_7, _P8_8 = _LOGF_P8
_F32_HALF = np.float32(0.5)
_F32_ONE = np.float32(1.0)
_F32_INF = np.float32(np.inf)
_F32_NAN = np.float32(np.nan)
_F32_TINY = np.float32(1.1754943508222875e-38)    # smallest normal float32, 2**-126
_F32_TWO23 = np.float32(8388608.0)
_F32_SQRT_HALF_OFF = np.uint32(0x3F800000 - 0x3F3504F3)   # 1.0's bits - sqrt(1/2)'s
_F32_SQRT_HALF_BITS = np.uint32(0x3F3504F3)
_F32_MANT = np.uint32(0x007FFFFF)
_F32_TWO23_BITS = np.uint32(0x4B000000)
_F32_KBIAS = np.float32(8388608.0 + 127.0)         # 2**23 + exponent bias
_F32_LN2_HI = np.float32(0.693145751953125)       # 16 bits: k * LN2_HI exact for |k| < 2**8
_F32_LN2_LO = np.float32(1.4286068e-06)            # ln2 - LN2_HI
_F32_LOG2E = np.float32(1.442695)                  # 1/ln2 = LOG2E + LOG2E_LO
_F32_LOG2E_LO = np.float32(1.925963e-08)
_F32_LOG10E = np.float32(0.4342945)                # 1/ln10 = LOG10E + LOG10E_LO
_F32_LOG10E_LO = np.float32(-1.010305e-08)
_F32_LOG10_2_HI = np.float32(0.3010254)            # 16 bits: k * LOG10_2_HI exact
_F32_LOG10_2_LO = np.float32(4.605039e-06)


@_vjit
def _logf_split_normal(x):
    """(k, f) with x = 2**k (1 + f), 1 + f in [sqrt(1/2), sqrt(2)), for a positive normal
    finite float32 x (k, f float32; f exact). Garbage for other x."""
    # adding 1.0's bits - sqrt(1/2)'s carries into the exponent field exactly when the
    # mantissa is >= sqrt(2)'s: the field is then k's, the low bits z's mantissa offset
    u = np.uint32(f32_bits(x) + _F32_SQRT_HALF_OFF)
    z = bits_f32(np.uint32((u & _F32_MANT) + _F32_SQRT_HALF_BITS))
    e = bits_f32(np.uint32((u >> np.uint32(23)) | _F32_TWO23_BITS))  # 2**23 + biased exponent
    return e - _F32_KBIAS, z - _F32_ONE


@_vjit
def _logf_split(x):
    """_logf_split_normal for any positive finite float32 x: denormals scaled by 2**23 first."""
    sub = x < _F32_TINY
    k, f = _logf_split_normal(x * _F32_TWO23 if sub else x)
    return (k - np.float32(23.0) if sub else k), f


@_vjit
def _logf_q7(f):
    """Q(f) = (log(1 + f) - f) / f^2 (degree 8 in f: P of degree 7) for f in
    [sqrt(1/2) - 1, sqrt(2) - 1]."""
    p = fma(_P7_7, f, _P7_6)
    p = fma(p, f, _P7_5)
    p = fma(p, f, _P7_4)
    p = fma(p, f, _P7_3)
    p = fma(p, f, _P7_2)
    p = fma(p, f, _P7_1)
    p = fma(p, f, _P7_0)
    return fma(p, f, -_F32_HALF)


@_vjit
def _logf_q8(f):
    """_logf_q7 one degree higher (2**-30.3 instead of 2**-27.4)."""
    p = fma(_P8_8, f, _P8_7)
    p = fma(p, f, _P8_6)
    p = fma(p, f, _P8_5)
    p = fma(p, f, _P8_4)
    p = fma(p, f, _P8_3)
    p = fma(p, f, _P8_2)
    p = fma(p, f, _P8_1)
    p = fma(p, f, _P8_0)
    return fma(p, f, -_F32_HALF)


@_vjit
def _logf_specials(x, res):
    """res for positive finite x; nan below 0, -inf at +-0, x itself at +inf and nan."""
    res = res if x > np.float32(0.0) else _F32_NAN
    res = res if x != np.float32(0.0) else -_F32_INF
    return res if x < _F32_INF else x


@_vjit
def _logf_kf(k, f):
    """k ln2 + log(1 + f) (log_f32's sum, one rounding at the end)."""
    q = _logf_q7(f)
    hi = fma(k, _F32_LN2_HI, f)             # k LN2_HI + f = hi + e exactly (Fast2Sum: for k
    e = f + fma(k, _F32_LN2_HI, -hi)        # != 0, |k LN2_HI| > |f|; k == 0: hi = f, e = 0)
    t = fma(f * f, q, fma(k, _F32_LN2_LO, e))
    return hi + t


@_vjit
def log_f32(x):
    k, f = _logf_split(x)
    return _logf_specials(x, _logf_kf(k, f))


@_vjit
def log_ordinary_f32(x):  # (see log_ordinary_f64_arith)
    k, f = _logf_split_normal(x)
    return _logf_kf(k, f)


@_vjit
def _logf_uc(u, c, kadd):
    """log(u) + c + kadd ln2 in float32 for a positive finite float32 u, a small correction c
    (the relative error of u, as log1p adds it) and an integer kadd: log_f32's sum with c
    beside the low parts, one rounding at the end."""
    k, f = _logf_split(u)
    k = k + kadd
    q = _logf_q7(f)
    hi = fma(k, _F32_LN2_HI, f)
    e = f + fma(k, _F32_LN2_HI, -hi)
    t = fma(f * f, q, fma(k, _F32_LN2_LO, e) + c)
    return hi + t


@_vjit
def log1p_f64(x):
    # log1p(x) = log(u) + c/u with u = 1 + x rounded, c = (x - (u - 1)) the rounding error
    # (Goldberg's trick, done with the correction term: exact to ~1 ulp; below 2**53, where it is
    # exact and counts).
    u = 1.0 + x
    uu = max(u, 2.2250738585072014e-308)   # u <= 0 / nan -> handled below
    c = (x - (u - 1.0)) * _rcp_corr(uu) if u < 9007199254740992.0 else 0.0
    res = _log_uc(uu, c, 0.0)
    res = res if abs(x) >= 1.1102230246251565e-16 else x   # |x| < 2**-53: log1p(x) = x
    res = res if x != _INF else x
    res = res if x != -1.0 else -_INF
    res = res if not (x < -1.0) else _NAN
    return res if x == x else x


@_vjit
def log1p_f32(x):
    # log(u) + c / u for 1 + x = u + c, u rounded (as log1p_f64), in float32 (log_f32's scheme):
    # c = x - (u - 1) is exact for |x| <= 1 (above, its error is far below the result's ulp);
    # the division is the only one (exhaustive: max 0.883 ulp over every float32 above -1;
    # NumPy's float32 log1p: 1.69 on the tests' samples)
    u = x + _F32_ONE
    c = x - (u - _F32_ONE)
    us = max(u, _F32_TINY)                  # u <= 0 / nan: replaced below
    res = _logf_uc(us, c / us, np.float32(0.0))
    res = res if abs(x) >= np.float32(5.960464477539063e-08) else x   # |x| < 2**-24, -0.0
    res = res if x != _F32_INF else x
    res = res if x != -_F32_ONE else -_F32_INF
    res = res if not (x < -_F32_ONE) else _F32_NAN
    return res if x == x else x


# --------------------------------------------------------------------------
# exp2 / log2 / log10
# --------------------------------------------------------------------------

_IVLN2_LO = 2.0355273740931033e-17      # 1/ln2 - float64(1/ln2)
_IVLN10 = 0.4342944819032518
_IVLN10_LO = 1.098319650216765e-17
_LOG10_2 = 0.3010299956639812
_LOG10_2_LO = -2.8037281277851704e-18


@_vjit
def _exp_dd(rh, rl):
    """exp(rh + rl) = hi + lo (|rh| <= ~ln2/2, |rl| <= 2**-44), the Taylor sum's rounding
    errors below 2**-58 relative: 1 + rh is split exactly, the rest is small."""
    hi = 1.0 + rh
    lo = (1.0 - hi) + rh
    t = rh * rh * _exp_poly13(rh)           # exp(rh) = 1 + rh + t; exp(rl) = 1 + rl
    lo = lo + (t + fma(rl, rh + t, rl))
    h = hi + lo
    return h, (hi - h) + lo


# log where table loads are cheap (base.TABLE_LOOKUPS; float64 pow, and asinh / acosh / atanh /
# log1p's log of a corrected argument): u = 2**k z with z in [0.7061, 1.4121), c the middle of
# z's interval (256 per binade, by the bits), 1/c rounded to 9 bits so that r = z (1/c) - 1 is
# exact (one FMA, |r| < 2**-7.2); the interval around 1 ([1 - 2**-10, 1 + 2**-9)) has c = 1, so
# log u near 1 keeps its relative accuracy. log c is split at 2**-32 (k LN2_HI + its high part
# is exact); log(1 + r) = r - r^2/2 + r^3 P(r), P Taylor's to r^8 (2**-72 relative).
LOG_TAB_BITS = 8
_LOG_TAB_OFF = np.uint64((1 << 43) + 150 * (1 << 44))  # bits(1.0) - bits(0.70605...)


def _log_table():
    """(1/c, log c high, log c low) per interval of z: exact rationals rounded once."""
    n = 1 << LOG_TAB_BITS
    start = 0x3FF0000000000000 - int(_LOG_TAB_OFF)
    edges = (np.arange(n + 1, dtype=np.uint64) << np.uint64(52 - LOG_TAB_BITS)) + np.uint64(start)
    v = edges.view(np.float64).tolist()
    invc, scaled = [], []                  # 1/c, and (m, p) with 1/c = m / 2**p, m in [256, 512]
    for lo, hi in zip(v, v[1:]):
        f, e = math.frexp(1.0 if lo <= 1.0 < hi else 2.0 / (lo + hi))
        m = round(f * 512.0)
        invc.append(math.ldexp(m, e - 9))
        scaled.append((m, 9 - e))
    # log(1/c) = log(m) - p log 2, in integers scaled by 2**140 (~1e-39 after the sums, far
    # below log c's low part's ulp; ~0.7 ms): the logs of the integers m by log(j + 1) = log(j) +
    # 2 atanh(1 / (2j + 1)), log 2 = 2 atanh(1/3), atanh(1/q) = sum of q**-(2k+1) / (2k+1)
    def atanh_inv(q):
        term = acc = (1 << 140) // q
        k = 1
        while term:
            term //= q * q
            k += 2
            acc += term // k
        return acc
    ln2 = 2 * atanh_inv(3)
    logs = [8 * ln2]
    for j in range(256, 511):
        logs.append(logs[-1] + 2 * atanh_inv(2 * j + 1))
    logc_hi, logc_lo = [], []
    for m, p in scaled:
        logc = p * ln2 - logs[m - 256]                          # log c = -log(1/c), times 2**140
        hi = (abs(logc) + (1 << 107)) >> 108                    # |log c| to 2**-32, rounded
        hi = hi if logc >= 0 else -hi
        logc_hi.append(hi / 2.0 ** 32)
        logc_lo.append((logc - (hi << 108)) / (1 << 140))      # (an int ratio: rounded once)
    return tuple(np.array(a) for a in (invc, logc_hi, logc_lo))


_LOG_INVC, _LOG_LOGC_HI, _LOG_LOGC_LO = _log_table()
_LOG1P_TAIL = (1 / 3, -1 / 4, 1 / 5, -1 / 6, 1 / 7, -1 / 8)


@_vjit
def _log_tab_reduce(u):
    """(k, i, r) for the bits u of a positive normal double: 2**k z, z's interval i, r exact."""
    w = u + _LOG_TAB_OFF                    # 2**k's biased exponent from bit 52, z's interval below
    e = w >> np.uint64(52)
    i = np.int64((w >> np.uint64(52 - LOG_TAB_BITS)) & np.uint64((1 << LOG_TAB_BITS) - 1))
    z = bits_f64(u - (e << np.uint64(52)) + np.uint64(0x3FF0000000000000))
    k = bits_f64(e | _TWO52_BITS) - _TWO52 - 1023.0
    return k, i, fma(z, _LOG_INVC[i], -1.0)


@_vjit
def _log1p_tail(r):
    """P(r) = 1/3 - r/4 + ... - r^5/8: log(1 + r) = r - r^2/2 + r^3 P(r) (|r| < 2**-7.2)."""
    c3, c4, c5, c6, c7, c8 = _LOG1P_TAIL
    return fma(fma(fma(fma(fma(c8, r, c7), r, c6), r, c5), r, c4), r, c3)


@_vjit
def _log_uc_arith(u, c, kadd):
    """log(u) + c + kadd ln2 for a positive normal finite u and a small correction c (the
    relative error of u, as log1p_f64 adds it): one rounding at the end."""
    k, z = _split(f64_bits(u))
    k = k + kadd
    return _log_kz(k, z, k * _LN2_LO + c)


@_vjit
def _log_uc_tab(u, c, kadd):
    """_log_uc_arith from the log table (no division): k ln2 + log c_i + r - r^2/2 + ...,
    the leading sum by Fast2Sum, one rounding at the end (~0.5 ulp)."""
    k, i, r = _log_tab_reduce(f64_bits(u))
    k = k + kadd
    t1 = fma(k, _LN2_HI, _LOG_LOGC_HI[i])           # exact
    hi = t1 + r
    lo = ((t1 - hi) + r) + (fma(k, _LN2_LO, _LOG_LOGC_LO[i]) + c)
    return hi + fma(r * r, fma(_log1p_tail(r), r, -0.5), lo)


_log_uc = _log_uc_tab if TABLE_LOOKUPS else _log_uc_arith


@_vjit
def log_f64_tables(x):
    sub = x < 2.2250738585072014e-308                 # denormals: times 2**54
    xs = x * 18014398509481984.0 if sub else x
    return _log_specials(x, _log_uc_tab(xs, 0.0, -54.0 if sub else 0.0))


@_vjit
def log_ordinary_f64_tables(x):  # (see log_ordinary_f64_arith)
    return _log_uc_tab(x, 0.0, 0.0)


log_f64 = log_f64_tables if TABLE_LOOKUPS else log_f64_arith
log_ordinary_f64 = log_ordinary_f64_tables if TABLE_LOOKUPS else log_ordinary_f64_arith


# exp where table loads are cheap (base.TABLE_LOOKUPS; float64 pow and exp2): exp(th + tl) with
# th + tl = n ln2/128 + r (n = round(128 th / ln2), |r| <= ln2/256), 2**(n/128) = 2**(n >> 7)
# T[n & 127] with T a double-double, exp(r) = 1 + q, q Taylor's to r^5 (2**-60.6 relative); the
# result T_hi + (T_hi q + T_lo) is rounded once (~0.5 ulp; a denormal one twice), then joins its
# exponent by an integer add (2**64 kept in the field below 2**-1020, removed by one product).
_EXP_N = 128


def _exp_table(sign):
    """(T_hi, T_lo): 2**(sign j/128) = T_hi + T_lo, each rounded once from 50-digit decimals
    (every step in that context: a default-context step would keep only 28 digits)."""
    from decimal import Decimal, localcontext
    with localcontext() as ctx:
        ctx.prec = 50
        step = (sign * Decimal(2).ln() / _EXP_N).exp()
        t, t_hi, t_lo = Decimal(1), [], []
        for _ in range(_EXP_N):
            t_hi.append(float(t))
            t_lo.append(float(t - Decimal(t_hi[-1])))
            t = t * step
    return np.array(t_hi), np.array(t_lo)


_EXP_T_HI, _EXP_T_LO = _exp_table(1)
_EXP_TI_HI, _EXP_TI_LO = _exp_table(-1)        # 2**(-j/128): sinh / cosh's e**-a
_N_LOG2E = _EXP_N / _LN2
_LN2N = _LN2 / _EXP_N
_LN2N_LO = _LN2_LO53 / _EXP_N                # ln2/128 - float64(ln2/128) (a power of two apart)


@_vjit
def _exp_tab(th, tl):
    """exp(th + tl) for th in [-746, 760] and |tl| <= ~2**-40 (tables); inf from 2**1024."""
    t = fma(th, _N_LOG2E, _SHIFT)
    n = t - _SHIFT                                                 # round(128 th / ln2)
    r = fma(-n, _LN2N, th) + fma(-n, _LN2N_LO, tl)
    j = np.int64(f64_bits(t) & np.uint64(_EXP_N - 1))
    q = fma(r * r, fma(fma(fma(1.0 / 120.0, r, 1.0 / 24.0), r, 1.0 / 6.0), r, 0.5), r)
    th_ = _EXP_T_HI[j]
    m = th_ + fma(th_, q, _EXP_T_LO[j])                            # in [0.997, 2)
    # n >> 7 into m's exponent field: t's bits are SHIFT's plus n, whose part above bit 6
    # survives the shift to bit 52 (SHIFT's bits leave the word); below 2**-1020 with 2**64 more
    low = n < -130560.0
    fld = ((f64_bits(t) >> np.uint64(7)) << np.uint64(52)) + (
        np.uint64(64 << 52) if low else np.uint64(0))
    qb = bits_f64(f64_bits(m) + fld)
    res = qb * 5.421010862427522e-20 if low else qb                # 2**-64
    return _INF if f64_bits(qb) >= np.uint64(0x7FF0000000000000) else res


@_vjit
def exp_f64_tables(x):
    res = _exp_tab(min(max(x, -746.0), 710.0), 0.0)
    return res if x == x else x


@_vjit
def exp2_f64_tables(x):
    xc = min(max(x, -1076.0), 1025.0)       # 2**-1076 rounds to 0, 2**1025 is inf
    th, tl = _two_prod(xc, _LN2)            # x ln2 = th + tl to ~2**-106
    res = _exp_tab(th, fma(xc, _LN2_LO53, tl))
    return res if x == x else x


@_vjit
def exp2_f64_arith(x):
    xc = min(max(x, -1080.0), 1025.0)
    k = (xc + _SHIFT) - _SHIFT              # round(x)
    r = xc - k                              # exact, |r| <= 1/2
    rh = r * _LN2                           # r ln2 = rh + rl to ~2**-106
    rl = fma(r, _LN2, -rh) + r * _LN2_LO53
    hi, lo = _exp_dd(rh, rl)
    res = _scale_exp(hi + lo, k)            # (k >= -1080: the field stays positive)
    return res if x == x else x


exp_f64 = exp_f64_tables if TABLE_LOOKUPS else exp_f64_arith
exp2_f64 = exp2_f64_tables if TABLE_LOOKUPS else exp2_f64_arith


# float32 exp2 by exp_f32's float32 tail: x = k + r exactly (k = round(x)), and r ln2 as the
# float32 pair rh + lo (the product's fma residual plus r times ln2's low part). Max error
# 0.875 ulp over every float32 in [-150, 128] (scripts/check_exp_f32.py --funcs exp2).
_LN2F = np.float32(_LN2)
_LN2F_LO2 = np.float32(_LN2 - np.float64(np.float32(_LN2)))


@_vjit
def exp2_f32(x):
    xc = min(max(x, np.float32(-151.0)), np.float32(129.0))  # beyond: 0 and inf still
    ks = xc + _F32_SHIFT
    r = xc - (ks - _F32_SHIFT)                               # exact
    rh = r * _LN2F
    lo = fma(r, _LN2F_LO2, fma(r, _LN2F, -rh))
    res = _expf_finish(ks, rh, rh + lo, lo)
    return res if x == x else x


@_vjit
def _log_hilo(z):
    """(hi, lo): log(z) = hi + lo (to ~2**-60 relative) for z in [sqrt(1/2), sqrt(2)) (fdlibm
    e_log2.c's split of log(1 + f), with an exact Fast2Sum for f - f*f/2 instead of clearing
    low bits)."""
    f, s, hfsq, R = _log_terms(z)
    hi = f - hfsq
    lo = ((f - hi) - hfsq) + s * (hfsq + R)
    return hi, lo


@_vjit
def _log2_kz(k, z):
    """k + log2(z), z as _split gives it."""
    hi, lo = _log_hilo(z)
    vh = hi * _LOG2E
    vl = fma(hi, _LOG2E, -vh) + fma(hi, _IVLN2_LO, lo * _LOG2E)
    w = k + vh                              # Fast2Sum: |vh| <= 1/2 <= |k| unless k == 0
    vl = vl + ((k - w) + vh)
    return w + vl


@_vjit
def _log10_kz(k, z):
    """k log10(2) + log10(z), z as _split gives it."""
    hi, lo = _log_hilo(z)
    vh = hi * _IVLN10
    vl = fma(hi, _IVLN10, -vh) + fma(hi, _IVLN10_LO, lo * _IVLN10)
    kh = k * _LOG10_2
    kl = fma(k, _LOG10_2, -kh) + k * _LOG10_2_LO
    w, e = _two_sum(kh, vh)                 # either may be the larger
    return w + (e + (kl + vl))


@_vjit
def log2_f64(x):
    k, z = _split_any(x)
    return _log_specials(x, _log2_kz(k, z))


@_vjit
def log10_f64(x):
    k, z = _split_any(x)
    return _log_specials(x, _log10_kz(k, z))


@_vjit
def log2_ordinary_f64(x):  # (see log_ordinary_f64_arith)
    k, z = _split(f64_bits(x))
    return _log2_kz(k, z)


@_vjit
def log10_ordinary_f64(x):
    k, z = _split(f64_bits(x))
    return _log10_kz(k, z)


@_vjit
def _log2f_kf(k, f):
    # k + (f + f^2 Q) / ln2: f / ln2 = ph + pl (fma residual), k + ph = hi + e (Fast2Sum, k an
    # integer with |k| >= 1 > |ph| or k == 0), f^2 as f2 + f2l; the small terms summed, then hi
    q = _logf_q8(f) * _F32_LOG2E
    f2 = f * f
    f2l = fma(f, f, -f2)
    ph = f * _F32_LOG2E
    pl = fma(f, _F32_LOG2E, -ph)
    hi = k + ph
    e = ph - (hi - k)
    t = fma(f2, q, fma(f2l, q, fma(f, _F32_LOG2E_LO, pl) + e))
    return hi + t


@_vjit
def _log10f_kf(k, f):
    # k log10(2) + (f + f^2 Q) / ln10, as _log2f_kf (k LOG10_2_HI exact; |k LOG10_2_HI| >
    # |f / ln10| for k != 0)
    q = _logf_q8(f) * _F32_LOG10E
    f2 = f * f
    f2l = fma(f, f, -f2)
    a = k * _F32_LOG10_2_HI
    ph = f * _F32_LOG10E
    pl = fma(f, _F32_LOG10E, -ph)
    hi = a + ph
    e = ph - (hi - a)
    t = fma(f2, q, fma(f2l, q, fma(k, _F32_LOG10_2_LO, fma(f, _F32_LOG10E_LO, pl) + e)))
    return hi + t


@_vjit
def log2_f32(x):
    k, f = _logf_split(x)
    return _logf_specials(x, _log2f_kf(k, f))


@_vjit
def log10_f32(x):
    k, f = _logf_split(x)
    return _logf_specials(x, _log10f_kf(k, f))


@_vjit
def log2_ordinary_f32(x):  # (see log_ordinary_f64_arith)
    k, f = _logf_split_normal(x)
    return _log2f_kf(k, f)


@_vjit
def log10_ordinary_f32(x):
    k, f = _logf_split_normal(x)
    return _log10f_kf(k, f)
