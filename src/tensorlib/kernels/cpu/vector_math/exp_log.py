"""exp, expm1, exp2 and log, log1p, log2, log10 on float32 / float64, with the pieces the other
parts reuse (the degree-13 exp polynomial, exp of a double-double, the exponent split)."""
import numpy as np

from .base import (_INF, _LN2, _LN2_HI, _LN2_LO, _LN2_LO53, _LOG2E, _NAN, _SHIFT, _TWO52,
    _TWO52_BITS, _pow2, _scale2, _two_sum, _vjit, bits_f64, f64_bits, fma)

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
def exp_f64(x):
    xc = min(max(x, -746.0), 710.0)
    k, r = _exp_reduce(xc)
    p = fma(r * r, _exp_poly13(r), r) + 1.0
    res = _scale2(p, k)
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


@_vjit
def exp_f32(x):
    res = np.float32(_exp_f32d(min(max(np.float64(x), -104.0), 90.0)))
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


@_vjit
def _expm1_f32core(xd):
    """expm1 of a double in [-20, 90] to ~2**-32 relative."""
    t = fma(xd, _LOG2E, _SHIFT)
    k = t - _SHIFT
    r = fma(-k, _LN2, xd)
    p = 1.0 / 3628800.0
    p = fma(p, r, 1.0 / 362880.0)
    p = fma(p, r, 1.0 / 40320.0)
    p = fma(p, r, 1.0 / 5040.0)
    p = fma(p, r, 1.0 / 720.0)
    p = fma(p, r, 1.0 / 120.0)
    p = fma(p, r, 1.0 / 24.0)
    p = fma(p, r, 1.0 / 6.0)
    p = fma(p, r, 0.5)
    q = fma(r * r, p, r)
    y = q + (1.0 - _pow2(-k))
    res = y * _pow2(k)
    return res if k != 0.0 else q


@_vjit
def expm1_f32(x):
    xd = min(max(np.float64(x), -20.0), 90.0)
    res = np.float32(_expm1_f32core(xd))
    res = res if x == x else x
    return res if x != 0 else x


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
def log_f64(x):
    k, z = _split_any(x)
    return _log_specials(x, _log_kz(k, z, k * _LN2_LO))


@_vjit
def _log_f32parts(xd):
    """(k, ln z) for a positive double xd = 2**k z, ln z to ~2**-35 relative."""
    k, z = _split(f64_bits(xd))
    f = z - 1.0
    s = f / (2.0 + f)
    z2 = s * s
    # 2 atanh(s) = 2s (1 + z2/3 + z2^2/5 + ...): truncation (z2 <= 0.0295) ~2**-35
    p = fma(z2, 1.0 / 13.0, 1.0 / 11.0)
    p = fma(p, z2, 1.0 / 9.0)
    p = fma(p, z2, 1.0 / 7.0)
    p = fma(p, z2, 1.0 / 5.0)
    p = fma(p, z2, 1.0 / 3.0)
    return k, fma(2.0 * s * z2, p, 2.0 * s)


@_vjit
def _log_f32core(xd):
    k, ls = _log_f32parts(xd)
    return fma(k, _LN2, ls)


@_vjit
def log_f32(x):
    xd = np.float64(x)   # float32 denormals are normal doubles
    return np.float32(_log_specials(xd, _log_f32core(xd)))


@_vjit
def log1p_f64(x):
    # log1p(x) = log(u) + c/u with u = 1 + x rounded, c = (x - (u - 1)) the rounding error
    # (Goldberg's trick, done with the correction term: exact to ~1 ulp).
    u = 1.0 + x
    uu = max(u, 2.2250738585072014e-308)   # u <= 0 / nan -> handled below
    k, z = _split(f64_bits(uu))
    c = (x - (u - 1.0)) if k < 54.0 else 0.0
    c = c / u
    res = _log_kz(k, z, k * _LN2_LO + c)
    res = res if abs(x) >= 1.1102230246251565e-16 else x   # |x| < 2**-53: log1p(x) = x
    res = res if x != _INF else x
    res = res if x != -1.0 else -_INF
    res = res if not (x < -1.0) else _NAN
    return res if x == x else x


@_vjit
def log1p_f32(x):
    xd = np.float64(x)
    u = 1.0 + xd              # exact for |x| >= 2**-29 ... and for the rest error < 2**-53
    uu = max(u, 2.2250738585072014e-308)
    c = (xd - (u - 1.0)) / uu
    res = np.float32(_log_f32core(uu) + c)
    res = res if abs(xd) >= 5.960464477539063e-08 else x   # |x| < 2**-24
    res = res if x != _INF else x
    res = res if x != -1.0 else np.float32(-_INF)
    res = res if not (x < -1.0) else np.float32(_NAN)
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


@_vjit
def exp2_f64(x):
    xc = min(max(x, -1080.0), 1025.0)
    k = (xc + _SHIFT) - _SHIFT              # round(x)
    r = xc - k                              # exact, |r| <= 1/2
    rh = r * _LN2                           # r ln2 = rh + rl to ~2**-106
    rl = fma(r, _LN2, -rh) + r * _LN2_LO53
    hi, lo = _exp_dd(rh, rl)
    res = _scale2(hi + lo, k)
    return res if x == x else x


@_vjit
def exp2_f32(x):
    xd = np.float64(x)
    xc = min(max(xd, -160.0), 130.0)
    k = (xc + _SHIFT) - _SHIFT
    res = np.float32(_exp_taylor8((xc - k) * _LN2) * _pow2(k))
    return res if x == x else x


@_vjit
def _log_parts(x):
    """(k, hi, lo): log(x) = k ln2 + hi + lo (hi + lo to ~2**-60 relative) for a positive
    finite x, denormals included (fdlibm e_log2.c's split of log(1 + f), with an exact
    Fast2Sum for f - f*f/2 instead of clearing low bits)."""
    k, z = _split_any(x)
    f, s, hfsq, R = _log_terms(z)
    hi = f - hfsq
    lo = ((f - hi) - hfsq) + s * (hfsq + R)
    return k, hi, lo


@_vjit
def log2_f64(x):
    k, hi, lo = _log_parts(x)
    vh = hi * _LOG2E
    vl = fma(hi, _LOG2E, -vh) + fma(hi, _IVLN2_LO, lo * _LOG2E)
    w = k + vh                              # Fast2Sum: |vh| <= 1/2 <= |k| unless k == 0
    vl = vl + ((k - w) + vh)
    return _log_specials(x, w + vl)


@_vjit
def log10_f64(x):
    k, hi, lo = _log_parts(x)
    vh = hi * _IVLN10
    vl = fma(hi, _IVLN10, -vh) + fma(hi, _IVLN10_LO, lo * _IVLN10)
    kh = k * _LOG10_2
    kl = fma(k, _LOG10_2, -kh) + k * _LOG10_2_LO
    w, e = _two_sum(kh, vh)                 # either may be the larger
    return _log_specials(x, w + (e + (kl + vl)))


@_vjit
def log2_f32(x):
    xd = np.float64(x)
    k, ls = _log_f32parts(xd)
    return np.float32(_log_specials(xd, fma(ls, _LOG2E, k)))


@_vjit
def log10_f32(x):
    xd = np.float64(x)
    k, ls = _log_f32parts(xd)
    return np.float32(_log_specials(xd, fma(ls, _IVLN10, k * _LOG10_2)))
