"""pow on float32 / float64: exp(y log|x|) with C99's special cases."""
import numpy as np

from .base import (TABLE_LOOKUPS, TABLES_OVER_DIVISIONS, _INF, _LN2, _LN2_HI, _LN2_LO, _LN2_LO53,
    _LOG2E, _NAN, _SHIFT, _dd_mul, _pow2, _two_prod, _two_sum, _vjit, bits_f32, bits_f64, f32_bits,
    f64_bits, fma)
from .exp_log import (_F32_INF, _F32_NAN, _LOG_LOGC_HI, _LOG_LOGC_LO, _exp_dd, _exp_tab,
    _log1p_tail, _log_tab_reduce, _scale_exp, _split, _split_any)

# --------------------------------------------------------------------------
# pow
# --------------------------------------------------------------------------

@_vjit
def _pow_signs(res, x, y):
    """x**y from res = |x|**y (doubles), C99's cases: x < 0 gives (-1)**y |x|**y for an
    integer y, nan for other finite y; the sign of x by its bit, so -0.0 and -inf with an odd
    integer y keep it; x = 1 or y = 0 gives 1 even for a nan y / x, as does x = -1 with
    y = +-inf."""
    isint = np.floor(y) == y                            # inf too; nan not
    h = y * 0.5
    odd = isint & (np.floor(h) != h)
    res = -res if (odd & (f64_bits(x) >= np.uint64(0x8000000000000000))) else res
    res = _NAN if ((x < 0.0) & ~isint & (x > -_INF)) else res
    res = 1.0 if (x == 1.0) | (y == 0.0) else res
    return 1.0 if (x == -1.0) & (abs(y) == _INF) else res


@_vjit
def _pow_signs_f32(res, x, y):
    """_pow_signs for float32 (res = |x|**y rounded): the same cases in float32 operations
    (half the vector width of double ones in pow_f32's loop)."""
    one = np.float32(1.0)
    fy = np.floor(y)
    isint = fy == y                                     # inf too; nan not
    h = y * np.float32(0.5)
    odd = isint & (np.floor(h) != h)
    res = -res if (odd & (f32_bits(x) >= np.uint32(0x80000000))) else res
    res = _F32_NAN if ((x < np.float32(0.0)) & ~isint & (x > -_F32_INF)) else res
    res = one if (x == one) | (y == np.float32(0.0)) else res
    return one if (x == -one) & (abs(y) == _F32_INF) else res


@_vjit
def _value_forms_f32(x, y, res):
    """pow's value forms (ops.yaml), exactly: x * x for y = 2, 1 / x for y = -1, and sqrt(x)
    for y = 1/2 with C99's +0.0 / +inf for x = -0.0 / -inf (each correctly rounded; the general
    forms are correctly rounded but near halfway cases, which a square can be and a
    reciprocal or square root can come within ~2**-50 of). So every loop of x ** y gives
    what the value form's own loop gives."""
    one = np.float32(1.0)
    ax = abs(x)
    root = ax if (x == np.float32(0.0)) | (ax == np.float32(np.inf)) else np.sqrt(x)
    res = x * x if y == np.float32(2.0) else res
    res = one / x if y == -one else res
    return root if y == np.float32(0.5) else res


@_vjit
def _value_forms_f64(x, y, res):
    """_value_forms_f32 for float64 (the double-double pow is faithful: ~1% of squares came
    out an ulp off before it squared)."""
    ax = abs(x)
    root = ax if (x == 0.0) | (ax == _INF) else np.sqrt(x)
    res = x * x if y == 2.0 else res
    res = 1.0 / x if y == -1.0 else res
    return root if y == 0.5 else res


# float32 pow: |x|**y = exp(y log|x|) in double, then C99's cases in float32 operations (half
# the vector width of double ones in the loop). Two forms of the two steps; pow_f32 is the
# table form where table loads are cheap (base.TABLE_LOOKUPS), else the arithmetic one. The
# table form leaves the double result within ~2**-40 relative of |x|**y for |t| <= 150 (t = y
# log2|x|): correctly rounded to float32 but within ~2**-16 ulp of a halfway case; measured
# 0.500002 ulp over 9e7 sampled pairs. The arithmetic form is within 2**-30.9 (|t| ln2 2**-37.6
# from the log, 2**-34.2 from the exp): at most ~0.51 ulp; measured 0.505 over 5e7 pairs
# (scripts/check_pow_f32.py: 2.8e-4 of results an ulp off the correctly rounded one; NumPy's
# powf: 0.97); tests/kernels/cpu/test_vector_math.py runs both forms.
# * tables (1e5 per core on a CPU without the gather fix: x ** y 326 -> 251 us, x ** 0.3
#   237 -> 181): log2: |x| = 2**k z with z in [0.6992, 1.3984) (the float32 bits less those
#   of the range's start: k in the exponent field, the interval of z in the next
#   POWF_LOG_BITS bits), log2 z = log2 c + log2(1 + r), r = z / c - 1 from one FMA with 1/c
#   (|r| <= 2**-7; c = 1 on the interval starting at 1, so x near 1 has no cancellation),
#   log2(1 + r) = r (L0 + L1 r + ... + L5 r^5), the Taylor coefficients (truncation 2**-44.8
#   relative); exp2: t = n/32 + r2, |r2| <= 1/64, 2**t = 2**(n >> 5) T[n & 31] (1 + q(r2)), q
#   of degree 5 (truncation 2**-48).
# * arithmetic: log2|x| = k + 2 atanh(s) / ln2, s = f / (2 + f), 2 atanh(s) = 2s (1 + w P(w)),
#   w = s*s, P of degree 3 fitted for the relative error (2**-37.6 on |s| <= 0.1716; the
#   Taylor sum to s**17 it replaces was 2**-48 and four FMAs more); 2**t = 2**n exp(r ln2),
#   n = round(t), exp(r) = 1 + r + r*r Q(r), Q of degree 5 fitted for the relative error
#   (2**-34.2 on |r| <= ln2/2; the degree-11 Taylor polynomial before: ~2**-48, four FMAs
#   more); scripts/check_pow_f32.py --fit rederives both. The loop is bound by its count of
#   512-bit double operations (Zen 4): 1e5 float32 x ** y per core 214-225 -> 175-205 us,
#   x ** 0.3 250-262 -> 200-208 (NumPy 66-158 / 141).
# In both, log2 of a power of two is its exponent and 2**t of an integer t is exact, so
# 2 ** -150 is the halfway case it is (rounded to 0, as NumPy).
POWF_LOG_BITS = 7
_POWF_START = 0x3F330000                # the bits of 0.69921875
_POWF_SHIFT32 = 1.5 * 2.0 ** 47         # t + this rounds t to a multiple of 1/32


def _powf_log_table():
    """(1/c, log2 c) per interval of z: c its midpoint (1 for the interval starting at 1)."""
    n = 1 << POWF_LOG_BITS
    bits = _POWF_START + (np.arange(n + 1, dtype=np.uint64) << (23 - POWF_LOG_BITS))
    edges = bits.astype(np.uint32).view(np.float32).astype(np.float64)
    edges[n] = 2.0 * edges[0]
    inv = 1.0 / ((edges[:-1] + edges[1:]) / 2.0)
    inv[edges[:-1] == 1.0] = 1.0
    return inv, -np.log2(inv)


_POWF_INVC, _POWF_LOGC = _powf_log_table()
_POWF_EXP2 = np.exp2(np.arange(32) / 32.0)          # 2**(j/32)
_L0, _L1, _L2, _L3, _L4, _L5 = (_LOG2E * (-1.0) ** n / (n + 1) for n in range(6))
_E1, _E2, _E3, _E4, _E5 = (_LN2 ** n / float(np.prod(np.arange(1, n + 1))) for n in range(1, 6))


@_vjit
def _log2_f32d(a):
    """log2 a (a double) for a positive finite float32 a, denormals included (tables)."""
    sub = a < np.float32(1.1754943508222875e-38)
    ix = f32_bits(a * np.float32(8388608.0) if sub else a)
    tmp = np.int32(ix - np.uint32(_POWF_START))
    i = (tmp >> np.int32(23 - POWF_LOG_BITS)) & np.int32((1 << POWF_LOG_BITS) - 1)
    k = np.float64(tmp >> np.int32(23)) - (23.0 if sub else 0.0)
    z = np.float64(bits_f32(np.uint32(ix - np.uint32(tmp & np.int32(-8388608)))))
    r = fma(z, _POWF_INVC[i], -1.0)
    p = fma(fma(fma(fma(_L5, r, _L4), r, _L3), r, _L2), r, _L1)
    return (k + _POWF_LOGC[i]) + r * fma(p, r, _L0)


@_vjit
def _exp2_pow(t):
    """2**t for |t| <= 160 (a double, no overflow or underflow in double; tables)."""
    sh = t + _POWF_SHIFT32
    n = f64_bits(sh)                                    # low bits: round(32 t)
    r = t - (sh - _POWF_SHIFT32)
    s = bits_f64(f64_bits(_POWF_EXP2[np.int64(n & np.uint64(31))])
                 + ((n >> np.uint64(5)) << np.uint64(52)))
    q = r * fma(fma(fma(fma(_E5, r, _E4), r, _E3), r, _E2), r, _E1)
    return fma(s, q, s)


# the arithmetic form's fits (see above; scripts/check_pow_f32.py --fit)
_PL0, _PL1, _PL2, _PL3 = (0.33333332822706535, 0.2000016759920767, 0.14268654072781775,
                          0.11791078904518475)
_PE0, _PE1, _PE2, _PE3, _PE4, _PE5 = (0.5000000067651138, 0.1666666586941819,
                                      0.04166629506950245, 0.008333496996104396,
                                      0.0013944650058642918, 0.00019790363287925368)


@_vjit
def _log2_f32d_arith(a):
    """log2 a (a double) for a positive finite float32 a, denormals included (arithmetic; a
    power of two gives its exponent exactly)."""
    k, z = _split(f64_bits(np.float64(a)))              # float32 values are normal doubles
    f = z - 1.0
    s = f / (2.0 + f)
    z2 = s * s
    p = fma(fma(fma(_PL3, z2, _PL2), z2, _PL1), z2, _PL0)
    return k + fma(2.0 * s * z2, p, 2.0 * s) * _LOG2E


@_vjit
def _exp2_pow_arith(t):
    """2**t for |t| <= 160 (a double, no overflow or underflow in double; arithmetic; an
    integer t gives 2**t exactly)."""
    kk = (t + _SHIFT) - _SHIFT
    r = (t - kk) * _LN2                                 # |r| <= ln2/2
    e = fma(fma(fma(fma(fma(_PE5, r, _PE4), r, _PE3), r, _PE2), r, _PE1), r, _PE0)
    e = fma(e, r * r, r) + 1.0
    return e * _pow2(kk)


@_vjit
def _pow_f32_log(a, lg):
    """The log of |x| = a (float32) as pow takes it: lg for positive finite a, -inf at 0,
    inf at inf, nan at nan."""
    lg = lg if a != np.float32(0.0) else -_INF
    lg = lg if a != _F32_INF else _INF
    return lg if a == a else np.float64(a)


@_vjit
def _pow_f32_finish(x, y, t, res):
    """x**y in float32 from res = exp of t = y log|x| (either form)."""
    res = res if t == t else t                          # nan x or y (t nan: y log|x| = 0 * inf too)
    res = _pow_signs_f32(np.float32(res), x, y)
    # (a square can be a float32 halfway case: 2.1805549e13 ** 2 rounded the other way)
    return _value_forms_f32(x, y, res)


@_vjit
def pow_f32_tables(x, y):
    a = abs(x)
    t = np.float64(y) * _pow_f32_log(a, _log2_f32d(a))
    return _pow_f32_finish(x, y, t, _exp2_pow(min(max(t, -160.0), 160.0)))


@_vjit
def pow_f32_arith(x, y):
    a = abs(x)
    t = np.float64(y) * _pow_f32_log(a, _log2_f32d_arith(a))
    return _pow_f32_finish(x, y, t, _exp2_pow_arith(min(max(t, -160.0), 160.0)))


# pow's ordinary form (ops.yaml block_fast, scalar_math.ordinary_pow): where x is positive and
# finite and y finite and none of 2, -1, 1/2, C99's cases and the value forms leave the general
# form's result as its exp step gives it, so these return the same bits without them (the
# special handling was ~35% of float32 pow's time, ~17% of float64's: 1e5 per core on Zen 4).
@_vjit
def pow_ordinary_f32_tables(x, y):
    return np.float32(_exp2_pow(min(max(np.float64(y) * _log2_f32d(x), -160.0), 160.0)))


@_vjit
def pow_ordinary_f32_arith(x, y):
    return np.float32(_exp2_pow_arith(min(max(np.float64(y) * _log2_f32d_arith(x), -160.0),
                                          160.0)))


pow_f32 = pow_f32_tables if TABLE_LOOKUPS else pow_f32_arith
pow_ordinary_f32 = pow_ordinary_f32_tables if TABLE_LOOKUPS else pow_ordinary_f32_arith


# float64 pow: log|x| as a double-double to ~2**-68 relative (2 atanh(s) with s = (z - 1) /
# (z + 1) and its first two terms carried as double-doubles, the rest a Taylor sum in s*s),
# y log|x| as a double-double, then exp of it (_exp_dd) scaled by 2**k once.
_TWO3_HI = 0.6666666666666666
_TWO3_LO = 3.700743415417188e-17        # 2/3 - float64(2/3)


@_vjit
def _log_dd(a):
    """(hi, lo): log(a) = hi + lo to ~2**-68 relative, for a positive finite a."""
    k, z = _split_any(a)
    f = z - 1.0                                 # exact
    dh = 2.0 + f                                # z + 1 = dh + dl
    dl = (2.0 - dh) + f
    rd = 1.0 / dh
    sh = f * rd                                 # s = f / (z + 1) = sh + sl (sl: sh's residual)
    sl = (fma(-sh, dh, f) - sh * dl) * rd
    s2, s2l = _two_prod(sh, sh)
    s3 = s2 * sh                                # s**3 = s3 + s3l (to first order in sl)
    s3l = fma(s2, sh, -s3) + fma(s2l, sh, 3.0 * s2 * sl)
    c = s3 * _TWO3_HI                           # (2/3) s**3 = c + cl
    cl = fma(s3, _TWO3_HI, -c) + fma(s3, _TWO3_LO, s3l * _TWO3_HI)
    # 2 s**5 / 5 + 2 s**7 / 7 + ... + 2 s**27 / 27 (s*s <= 0.0295: truncation < 2**-70)
    p = fma(s2, 2.0 / 27.0, 2.0 / 25.0)
    p = fma(p, s2, 2.0 / 23.0)
    p = fma(p, s2, 2.0 / 21.0)
    p = fma(p, s2, 2.0 / 19.0)
    p = fma(p, s2, 2.0 / 17.0)
    p = fma(p, s2, 2.0 / 15.0)
    p = fma(p, s2, 2.0 / 13.0)
    p = fma(p, s2, 2.0 / 11.0)
    p = fma(p, s2, 2.0 / 9.0)
    p = fma(p, s2, 2.0 / 7.0)
    p = fma(p, s2, 0.4)
    rest = p * s3 * s2
    kh = k * _LN2_HI                            # exact (|k| < 2**11)
    # kh + 2 sh + c with TwoSums, the small terms added to the low part
    t = sh + sh
    u, e1 = _two_sum(kh, t)
    v, e2 = _two_sum(u, c)
    lo = (e1 + e2) + ((k * _LN2_LO + (sl + sl)) + (cl + rest))
    hi = v + lo
    return hi, (v - hi) + lo


@_vjit
def _exp_y_log_dd(y, lh, ll):
    """exp(y (lh + ll)) for a finite log lh + ll (double-double), as pow_f64_arith takes it."""
    th, tl = _two_prod(y, lh)                   # y log|x| = th + tl
    tl = tl + y * ll
    inr = abs(th) < 760.0
    tl = tl if inr else 0.0
    thc = min(max(th, -760.0), 760.0)
    k = (fma(thc, _LOG2E, _SHIFT) - _SHIFT)
    hi, lo = _exp_dd(fma(-k, _LN2, thc), fma(-k, _LN2_LO53, tl))
    k = min(max(k, -1085.0), 1100.0)                    # (2**-1085: 0 all the same)
    return _scale_exp(hi + lo, k)


@_vjit
def pow_f64_arith(x, y):
    a = abs(x)
    lh, ll = _log_dd(min(max(a, 5e-324), 1.7976931348623157e308))
    res = _exp_y_log_dd(y, lh, ll)
    # x = 0 / inf, y = +-inf: the limits (C99 pow's table) from the sign of y log|x|
    lg = -_INF if a == 0.0 else (_INF if a == _INF else lh)
    lg = lg if a == a else a
    ts = y * lg
    res = res if ts == ts else ts
    res = (_INF if ts > 0.0 else 0.0) if abs(ts) == _INF else res
    res = _pow_signs(res, x, y)
    return _value_forms_f64(x, y, res)


# float64 pow where table loads are not microcoded (base.TABLES_OVER_DIVISIONS: its tables replace
# the arithmetic form's divisions): no division, short polynomials.
# * log|x| as a double-double (~2**-68 relative) from exp_log's log table: k ln2 + log c
#   (exact, split at 2**-32) + r (exact) by TwoSum, - r^2/2 exact by an FMA residual and
#   Fast2Sum, the rest (r^3 P(r), the low parts) added to the low part.
# * exp(y log|x|) by exp_log._exp_tab (2**(j/128) tables, rounded once).
# Error: ~0.5 ulp plus |y log|x|| 2**-67 from the log (<= 0.53 ulp at ~745).


@_vjit
def _log_tab_dd(a):
    """(hi, lo): log(a) = hi + lo to ~2**-68 relative, for a positive finite a (tables)."""
    sub = a < 2.2250738585072014e-308
    k, i, r = _log_tab_reduce(f64_bits(a * 18014398509481984.0 if sub else a))  # denormals: 2**54
    k = k - 54.0 if sub else k
    t1 = fma(k, _LN2_HI, _LOG_LOGC_HI[i])                          # exact
    t2, e2 = _two_sum(t1, r)
    r2 = r * r
    a2 = -0.5 * r2
    hi = t2 + a2                                # |t2| >= |a2|: Fast2Sum
    e3 = (t2 - hi) + a2
    lo = (e2 + e3) + ((fma(k, _LN2_LO, _LOG_LOGC_LO[i]) - 0.5 * fma(r, r, -r2)) +
                      r2 * r * _log1p_tail(r))
    lh = hi + lo
    return lh, (hi - lh) + lo


@_vjit
def pow_f64_tables(x, y):
    a = abs(x)
    # log|x| of 0, inf, nan as -inf, inf, nan ((a - 1) inf): then y log|x| is C99's limit (its
    # sign picks exp's clamp: inf or 0), or nan (nan operands, 0 * inf: pow's cases fix those)
    lg, ll = _log_tab_dd(a)
    lg = lg if (a > 0.0) & (a < _INF) else (a - 1.0) * _INF
    th, tl = _two_prod(y, lg)                   # y log|x| = th + tl
    tl = fma(y, ll, tl)
    tl = tl if (th > -746.0) & (th < 760.0) else 0.0
    res = _exp_tab(min(max(th, -746.0), 760.0), tl)
    res = res if th == th else th
    return _value_forms_f64(x, y, _pow_signs(res, x, y))


# the ordinary form (see pow_ordinary_f32_tables): pow_f64_tables's steps for a positive
# finite x (written out: a shared helper is one more compile in a cold first call)
@_vjit
def pow_ordinary_f64_tables(x, y):
    lg, ll = _log_tab_dd(x)
    th, tl = _two_prod(y, lg)
    tl = fma(y, ll, tl)
    tl = tl if (th > -746.0) & (th < 760.0) else 0.0
    return _exp_tab(min(max(th, -746.0), 760.0), tl)


@_vjit
def pow_ordinary_f64_arith(x, y):
    lh, ll = _log_dd(x)
    return _exp_y_log_dd(y, lh, ll)


pow_f64 = pow_f64_tables if TABLES_OVER_DIVISIONS else pow_f64_arith
pow_ordinary_f64 = pow_ordinary_f64_tables if TABLES_OVER_DIVISIONS else pow_ordinary_f64_arith


# --------------------------------------------------------------------------
# pow by a small half-integer (ops.yaml block_fast of pow)
# --------------------------------------------------------------------------

# exponents y with 2y an integer and 0 <= y <= POW_HALVES_MAX take pow_halves_f32 / _f64
# (negative ones take pow_f32 / _f64: a reciprocal step made LLVM unswitch the loop on the sign
# too, +0.3 s of compile for every float32 pow kernel)
POW_HALVES_MAX = 8.0
_TWO64 = 1.8446744073709552e19
_TWO_M32 = 2.3283064365386963e-10
_TWO_M64 = 5.421010862427522e-20


@_vjit
def pow_halves_f32(x, y):
    """x**y for float32 x and y = n + h (n an integer, 0 <= n <= 8, h 0 or 1/2), in double:
    products of x, x**2, x**4, x**8 (exact or rounded once each), times sqrt(x) for h = 1/2.
    sqrt(x) without a double square root or division: the float32 one corrected by its
    residual (exact by FMA), to second order, with a float32 reciprocal refined once: ~2**-70
    relative, so x**0.5 rounds to sqrt's correctly rounded float32 (x below 2**-64 is scaled by 2**64 first, so the
    residual stays in range). Other results are correctly rounded but within ~2**-27 ulp of a
    halfway case (as pow_f32's: their bits may differ there)."""
    xd = np.float64(x)
    yd = np.float64(y)
    n = np.floor(yd)
    half = yd != n
    # C99: a non-integer power of -0.0 or -inf is that of +0.0 or +inf
    b = abs(xd) if half & ((xd == 0.0) | (xd == -_INF)) else xd
    b2 = b * b
    b4 = b2 * b2
    nb = np.uint64(n)
    p = b if (nb & np.uint64(1)) != np.uint64(0) else 1.0
    p = p * (b2 if (nb & np.uint64(2)) != np.uint64(0) else 1.0)
    p = p * (b4 if (nb & np.uint64(4)) != np.uint64(0) else 1.0)
    p = p * (b4 * b4 if (nb & np.uint64(8)) != np.uint64(0) else 1.0)
    tiny = abs(b) < _TWO_M64
    bs = b * _TWO64 if tiny else b
    s = np.sqrt(np.float32(bs))                         # nan for b < 0: pow's nan
    sd = np.float64(s)
    e = fma(-sd, sd, bs)                                # bs - s*s exactly
    r = np.float64(np.float32(1.0) / s)
    r = fma(r, fma(-sd, r, 1.0), r)                     # 1/s to ~2**-46
    # sqrt(s*s + e) = s (1 + d/2 - d*d/8 + ...), d = e/s**2 ~ 2**-24; s d/2 ~ h = e r/2 (the
    # d*d term matters: it is ~2**-51, as near as sqrt(x) comes to a float32 halfway point)
    h = 0.5 * e * r
    root = fma(h, fma(-0.5 * h, r, 1.0), sd) if (e != 0.0) & (abs(e) < _INF) else sd
    root = root * _TWO_M32 if tiny else root
    # (its x ** 0.5 is sqrt(x) to the bit and x ** 2 the rounded exact square, over every
    # float32: scripts/check_pow_halves_f32.py; pow's value forms hold here without selects)
    return np.float32(p * root if half else p)


_TWO100 = 1.2676506002282294e30
_TWO_M100 = 7.888609052210118e-31
_TWO_M50 = 8.881784197001252e-16


@_vjit
def pow_halves_f64(x, y):
    """x**y for float64 x and y = n + h (n an integer, 0 <= n <= 8, h 0 or 1/2): products of
    x, x**2, x**4, x**8 as double-doubles (exact squares by FMA residuals, ~2**-104 relative
    each), times sqrt(x) + its correction (x - s*s) / 2s for h = 1/2, rounded once: correctly
    rounded but within ~2**-50 ulp of a halfway case (sampled: 0.500 ulp for normal results;
    pow_f64 ~0.52). One square root and one division instead of exp(y log|x|): 1e5 x ** 2.5
    ~3x less time; x ** 0.5 is sqrt(x) and x ** 2 x * x. |x| below 2**-100 is scaled by
    2**100 first and the result by 2**(-100 y) (a normal power of two for y <= 8.5), so the
    pairs' low parts stay normal for every normal result; a denormal result is rounded twice
    (<= 0.75 ulp)."""
    n = np.floor(y)
    half = y != n
    # C99: a non-integer power of -0.0 or -inf is that of +0.0 or +inf
    b = abs(x) if half & ((x == 0.0) | (x == -_INF)) else x
    tiny = abs(b) < _TWO_M100
    b = b * _TWO100 if tiny else b
    b2h, b2l = _two_prod(b, b)
    b4h, b4l = _dd_mul(b2h, b2l, b2h, b2l)
    b8h, b8l = _dd_mul(b4h, b4l, b4h, b4l)
    nb = np.uint64(n)
    # each factor a pair, or (1, 0): an unselected power's overflow (inf, nan) stays out
    ph = b if (nb & np.uint64(1)) != np.uint64(0) else 1.0
    use = (nb & np.uint64(2)) != np.uint64(0)
    ph, pl = _dd_mul(ph, 0.0, b2h if use else 1.0, b2l if use else 0.0)
    use = (nb & np.uint64(4)) != np.uint64(0)
    ph, pl = _dd_mul(ph, pl, b4h if use else 1.0, b4l if use else 0.0)
    use = (nb & np.uint64(8)) != np.uint64(0)
    ph, pl = _dd_mul(ph, pl, b8h if use else 1.0, b8l if use else 0.0)
    s = np.sqrt(b)                                  # nan for b < 0: pow's nan
    e = fma(-s, s, b)                               # b - s*s exactly
    # sqrt(s*s + e) = s + h - h*h / 2s + ..., h = e / 2s (the second-order term matters next
    # to a halfway case: sqrt(1 - 2**-53) lies 2**-109 below one)
    inv = 0.5 / s
    h = e * inv
    sl = fma(-h, h * inv, h) if (e != 0.0) & (abs(e) < _INF) else 0.0
    r, rl = _dd_mul(ph, pl, s if half else 1.0, sl if half else 0.0)
    # inf or nan: the plain product's; a zero keeps its sign
    res = r + rl if (abs(r) < _INF) & (r != 0.0) else r
    # 2**(-100 y) = 2**(-50 (2 y)) >= 2**-850
    res = res * _pow2(-50.0 * (n + n + (1.0 if half else 0.0))) if tiny else res
    # x ** 0.5: sqrt's own rounding (2**-50 s is exact: a square root is normal); x ** 2: x * x,
    # denormal ones too
    res = (s * _TWO_M50 if tiny else s) if half & (nb == np.uint64(0)) else res
    return x * x if y == 2.0 else res
