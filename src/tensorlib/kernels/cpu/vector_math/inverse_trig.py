"""atan, atan2, asin and acos on float32 / float64 (fdlibm's reductions, selected per lane;
float32 atan in float32 arithmetic)."""
import numpy as np

from .base import (_INF, _NAN, _copysign, _copysign_f32, _rcp2, _rcp_corr, _vjit, f32_bits,
    f64_bits, fma)
from .trig import _PIO2_1, _PIO2_2

# --------------------------------------------------------------------------
# atan / atan2
# --------------------------------------------------------------------------

# fdlibm s_atan.c: atan(t) for t >= 0 reduced by one of five maps t -> (a t - b) / (c + d t)
# to |u| <= 7/16, atan t = atan(hi_i + lo_i) + atan u, then an odd polynomial in u. Selected
# per lane instead of branched.
_ATANHI = (4.63647609000806093515e-01, 7.85398163397448278999e-01,
           9.82793723247329054082e-01, 1.57079632679489655800e+00)
_ATANLO = (2.26987774529616870924e-17, 3.06161699786838301793e-17,
           1.39033110312309984516e-17, 6.12323399573676603587e-17)
_AT = (3.33333333333329318027e-01, -1.99999999998764832476e-01, 1.42857142725034663711e-01,
       -1.11111104054623557880e-01, 9.09088713343650656196e-02, -7.69187620504482999495e-02,
       6.66107313738753120669e-02, -5.83357013379057348645e-02, 4.97687799461593236017e-02,
       -3.65315727442169155270e-02, 1.62858201153657823623e-02)
_AH0, _AH1, _AH2, _AH3 = _ATANHI
_AL0, _AL1, _AL2, _AL3 = _ATANLO
_AT0, _AT1, _AT2, _AT3, _AT4, _AT5, _AT6, _AT7, _AT8, _AT9, _AT10 = _AT
_PI = 3.1415926535897931160e+00
_PI_LO = 1.2246467991473531772e-16


@_vjit
def _atan_pos2(t, tl):
    """(hi, tail): atan(t + tl) = hi - tail for t >= 0 (or nan; +inf gives pi/2), tl a small
    correction (the rounding error of a quotient t, or 0); hi is one of fdlibm's atanhi."""
    t = 1e300 if t > 1e300 else t                       # inf: -1/t = -0.0, not 0 * inf = nan
    r1 = t < 0.4375
    r2 = t < 0.6875
    r3 = t < 1.1875
    r4 = t < 2.4375
    # u = (a t - b) / (c + d t): t, (2t - 1) / (2 + t), (t - 1) / (t + 1),
    # (t - 1.5) / (1 + 1.5 t), -1 / t
    a = 1.0 if r1 else (2.0 if r2 else (1.0 if r4 else 0.0))
    b = 0.0 if r1 else (1.0 if r3 else (1.5 if r4 else 1.0))
    c = 1.0 if r1 else (2.0 if r2 else (1.0 if r4 else 0.0))
    d = 0.0 if r1 else (1.0 if r3 else (1.5 if r4 else 1.0))
    hi = 0.0 if r1 else (_AH0 if r2 else (_AH1 if r3 else (_AH2 if r4 else _AH3)))
    lo = 0.0 if r1 else (_AL0 if r2 else (_AL1 if r3 else (_AL2 if r4 else _AL3)))
    u = fma(a, t, -b) / fma(d, t, c)
    # du/dt = (a c + b d) / (c + d t)**2 carries tl into u's frame
    du = tl * (fma(a, c, b * d) / (fma(d, t, c) * fma(d, t, c)))
    du = du if du == du else 0.0                        # t = inf
    z = u * u
    w = z * z
    s1 = z * (_AT0 + w * (_AT2 + w * (_AT4 + w * (_AT6 + w * (_AT8 + w * _AT10)))))
    s2 = w * (_AT1 + w * (_AT3 + w * (_AT5 + w * (_AT7 + w * _AT9))))
    return hi, ((u * (s1 + s2) - lo) - du) - u


@_vjit
def _atan_pos(t, tl):
    hi, tail = _atan_pos2(t, tl)
    return hi - tail


@_vjit
def atan_f64(x):
    res = _copysign(_atan_pos(abs(x), 0.0), x)
    return res if abs(x) >= 7.450580596923828e-09 else x   # |x| < 2**-27: atan x rounds to x


# float32 atan in float32 arithmetic (16 lanes): t = |x| or 1 / |x| (<= 1), atan t = t + t**3
# Q(t**2) with Q of degree 8 (minimax for the relative error on [0, 1], each coefficient
# rounded to float32 in turn and the rest refitted: 0.045 x 2**-24;
# scripts/check_inverse_trig_f32.py --fit atan), then pi/2 - atan t for |x| > 1. Max error
# 1.381 ulp over every float32 (that script; NumPy's float32 arctan: 2.27 ulp on a sample),
# where the float64 route took ~6x NumPy's time per element.
_ATAN_Q = tuple(np.float32(c) for c in (
    -0.33333298563957214, 0.1999852955341339, -0.1426401436328888, 0.10950861126184464,
    -0.08399207890033722, 0.05787887051701546, -0.0310935340821743, 0.010866271331906319,
    -0.0017821441870182753))
_AQ0, _AQ1, _AQ2, _AQ3, _AQ4, _AQ5, _AQ6, _AQ7, _AQ8 = _ATAN_Q
_F32_PIO2_HI = np.float32(1.5707963705062866)      # float32(pi / 2), above pi / 2
_F32_PIO2_LO = np.float32(-4.371139000186243e-08)  # pi / 2 - _F32_PIO2_HI


@_vjit
def _atan01_f32(t):
    """atan t for float32 t in [0, 1] (or nan), in float32 arithmetic."""
    z = t * t
    q = fma(_AQ8, z, _AQ7)
    q = fma(q, z, _AQ6)
    q = fma(q, z, _AQ5)
    q = fma(q, z, _AQ4)
    q = fma(q, z, _AQ3)
    q = fma(q, z, _AQ2)
    q = fma(q, z, _AQ1)
    q = fma(q, z, _AQ0)
    return fma(t * z, q, t)


@_vjit
def atan_f32(x):
    one = np.float32(1.0)
    a = abs(x)
    inv = a > one
    p = _atan01_f32(one / a if inv else a)             # (inf -> 0; nan stays nan)
    return _copysign_f32((_F32_PIO2_HI - p) + _F32_PIO2_LO if inv else p, x)


@_vjit
def _atan2_d(y, x):
    """atan2 in double: z = atan(|y| / |x|), placed in the quadrant of (x, y) (C99's zero,
    infinity and nan cases included)."""
    ay = abs(y)
    ax = abs(x)
    t = ay / ax
    tl = fma(-t, ax, ay) / ax                           # ay / ax = t + tl (to ~2**-106)
    tl = tl if tl == tl else 0.0
    both_inf = (ay == _INF) & (ax == _INF)
    t = 1.0 if both_inf else t                          # atan2(+-inf, +-inf): odd multiples of pi/4
    t = 0.0 if ay == 0.0 else t                         # atan2(+-0, x) for every x, zeros too
    tl = 0.0 if both_inf | (ay == 0.0) else tl
    hi, tail = _atan_pos2(t, tl)
    # x < 0 (-0.0 too): pi - atan = (pi - hi) + tail, pi - hi as an exact sum d + err
    d = _PI - hi
    err = (_PI - d) - hi
    zneg = d + (err + (tail + _PI_LO))
    xneg = (f64_bits(x) >> np.uint64(63)) != np.uint64(0)
    res = _copysign(zneg if xneg else hi - tail, y)
    return res if (x == x) & (y == y) else x + y


@_vjit
def atan2_f64(y, x):
    return _atan2_d(y, x)


_F32_PI_HI = np.float32(3.1415927410125732)        # float32(pi), above pi
_F32_PI_LO = np.float32(-8.742278000372485e-08)    # pi - _F32_PI_HI


@_vjit
def atan2_f32(y, x):
    # in float32 arithmetic, as atan_f32: t = the smaller of |y|, |x| over the larger, then
    # pi/2 - atan t where |y| is the larger, pi - that for x < 0 (-0.0 too), y's sign;
    # C99's zeros and infinities by the choice of t
    ay = abs(y)
    ax = abs(x)
    swap = ay > ax
    t = (ax / ay) if swap else (ay / ax)
    both_inf = (ay == np.float32(_INF)) & (ax == np.float32(_INF))
    t = np.float32(1.0) if both_inf else t             # atan2(+-inf, +-inf): odd pi/4s
    t = np.float32(0.0) if ay == np.float32(0.0) else t    # atan2(+-0, x), x = 0 too
    p = _atan01_f32(t)
    r = (_F32_PIO2_HI - p) + _F32_PIO2_LO if swap else p
    xneg = (f32_bits(x) >> np.uint32(31)) != np.uint32(0)
    r = (_F32_PI_HI - r) + _F32_PI_LO if xneg else r
    res = _copysign_f32(r, y)
    return res if (x == x) & (y == y) else x + y


# --------------------------------------------------------------------------
# asin / acos
# --------------------------------------------------------------------------

# fdlibm e_asin.c: asin x = x + x R(x*x) for |x| < 1/2, R(t) = t P(t) / Q(t); above,
# asin |x| = pi/2 - 2 (s + s R(t)), t = (1 - |x|) / 2, s = sqrt(t) (here a double-double).
# acos follows e_acos.c's three ranges. Both ranges are evaluated, one selected.
_PS = (1.66666666666666657415e-01, -3.25565818622400915405e-01, 2.01212532134862925881e-01,
       -4.00555345006794114027e-02, 7.91534994289814532176e-04, 3.47933107596021167570e-05)
_QS = (-2.40339491173441421878e+00, 2.02094576023350569471e+00, -6.88283971605453293030e-01,
       7.70381505559019352791e-02)
_PS0, _PS1, _PS2, _PS3, _PS4, _PS5 = _PS
_QS1, _QS2, _QS3, _QS4 = _QS


@_vjit
def _asin_parts(x):
    """(t, R(t), s, sl) with t = x*x (|x| < 1/2) or (1 - |x|) / 2, sqrt(t) = s + sl."""
    a = abs(x)
    t = x * x if a < 0.5 else (1.0 - a) * 0.5       # 1 - a exact for a >= 1/2
    p = t * fma(t, fma(t, fma(t, fma(t, fma(t, _PS5, _PS4), _PS3), _PS2), _PS1), _PS0)
    q = fma(t, fma(t, fma(t, fma(t, _QS4, _QS3), _QS2), _QS1), 1.0)
    R = p * _rcp2(q)                                # q in [0.4, 1]; R's error is damped by <= 0.07
    s = np.sqrt(t)
    sl = fma(-s, s, t) * _rcp_corr(s + s)           # (t = x*x may be tiny: unused there)
    sl = sl if t > 0.0 else 0.0
    return t, R, s, sl


@_vjit
def asin_f64(x):
    a = abs(x)
    t, R, s, sl = _asin_parts(x)
    small = fma(x, R, x)
    s2 = s + s
    h = _PIO2_1 - s2                        # Fast2Sum: 2s <= 1
    e = (_PIO2_1 - h) - s2
    big = h + (e - (fma(s2, R, sl + sl) - _PIO2_2))
    res = small if a < 0.5 else _copysign(big, x)
    res = res if a <= 1.0 else _NAN
    return res if x == x else x


@_vjit
def acos_f64(x):
    a = abs(x)
    t, R, s, sl = _asin_parts(x)
    # |x| < 1/2: pi/2 - (x + x R)
    h0 = _PIO2_1 - x
    e0 = (_PIO2_1 - h0) - x
    small = h0 + (e0 + (_PIO2_2 - x * R))
    # x >= 1/2: 2 (s + sl + s R); x <= -1/2: pi - 2 (s + sl + s R)
    pos = 2.0 * (s + fma(s, R, sl))
    s2 = s + s
    h1 = _PI - s2
    e1 = (_PI - h1) - s2
    neg = h1 + (e1 + (_PI_LO - fma(s2, R, sl + sl)))
    res = small if a < 0.5 else (pos if x > 0.0 else neg)
    res = res if a <= 1.0 else _NAN
    return res if x == x else x


# float32 asin / acos in float32 arithmetic: asin u = u + u**3 P(u**2) on [0, 1/2], P of degree
# 5 (minimax as atan's: 0.005 x 2**-24; scripts/check_inverse_trig_f32.py --fit asin), with
# e_asin.c's ranges: above 1/2, asin |x| = pi/2 - 2 asin s, s = sqrt((1 - |x|) / 2) (no
# double-double s here: that step's cancellation gives the largest errors). Max error over
# every float32: asin 1.881 ulp (near 0.533), acos 1.266 ulp (that script; NumPy's float32
# arcsin 3.12, arccos 2.10 on samples).
_ASIN_P = tuple(np.float32(c) for c in (
    0.16666659712791443, 0.07500521838665009, 0.04451335221529007, 0.0318395234644413,
    0.01431217323988676, 0.03770212084054947))
_SP0, _SP1, _SP2, _SP3, _SP4, _SP5 = _ASIN_P


@_vjit
def _asin_half_f32(u):
    """asin u for float32 |u| <= 1/2 (or nan), in float32 arithmetic."""
    z = u * u
    p = fma(_SP5, z, _SP4)
    p = fma(p, z, _SP3)
    p = fma(p, z, _SP2)
    p = fma(p, z, _SP1)
    p = fma(p, z, _SP0)
    return fma(u * z, p, u)


@_vjit
def asin_f32(x):
    a = abs(x)
    big = a > np.float32(0.5)
    s = np.sqrt((np.float32(1.0) - a) * np.float32(0.5))   # exact argument; |x| > 1: nan
    w = _asin_half_f32(s if big else a)
    res = (_F32_PIO2_HI - (w + w)) + _F32_PIO2_LO if big else w
    return _copysign_f32(res, x)


@_vjit
def acos_f32(x):
    a = abs(x)
    big = a > np.float32(0.5)
    s = np.sqrt((np.float32(1.0) - a) * np.float32(0.5))
    w = _asin_half_f32(s if big else x)
    # |x| <= 1/2: pi/2 - asin x; x > 1/2: 2 asin s; x < -1/2: pi - 2 asin s
    small = (_F32_PIO2_HI - w) + _F32_PIO2_LO
    neg = (_F32_PI_HI - (w + w)) + _F32_PI_LO
    return small if not big else (w + w if x > np.float32(0.0) else neg)
