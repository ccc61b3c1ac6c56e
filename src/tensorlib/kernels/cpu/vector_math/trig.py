"""sin, cos and tan on float32 / float64: Payne-Hanek reduction for every input (the package
docstring says why), then fdlibm / musl polynomials."""
import math

import numpy as np

from .base import (_INF, _SHIFT, _SHIFT_BITS, _SIGN, _TWO52_BITS, _flipsign, _two_prod, _two_sum,
    _vjit, bits_f32, bits_f64, f32_bits, f64_bits, fma)

# --------------------------------------------------------------------------
# sin / cos / tan
# --------------------------------------------------------------------------

_S1 = -1.66666666666666324348e-01
_S2 = 8.33333333332248946124e-03
_S3 = -1.98412698298579493134e-04
_S4 = 2.75573137070700676789e-06
_S5 = -2.50507602534068634195e-08
_S6 = 1.58969099521155010221e-10
_C1 = 4.16666666666666019037e-02
_C2 = -1.38888888888741095749e-03
_C3 = 2.48015872894767294178e-05
_C4 = -2.75573143513906633035e-07
_C5 = 2.08757232129817482790e-09
_C6 = -1.13596475577881948265e-11

# pi/2 as a double-double
_PIO2_1 = 1.5707963267948966
_PIO2_2 = 6.123233995736766e-17


# Payne-Hanek tables: V(E) = 2**(E - bias) * (2/pi) mod 4 as fixed-point chunks, per biased
# exponent E, so that x 2/pi mod 4 = m V(E) mod 4 for x = m 2**(E - bias), m an integer.

def _two_over_pi_fixed(bits):
    """floor(2/pi * 2**bits) (Machin's formula in integers)."""
    g = bits + 40

    def arctan_inv(n):
        s, t, k = 0, (1 << g) // n, 0
        while t:
            s += -(t // (2 * k + 1)) if k & 1 else t // (2 * k + 1)
            t //= n * n
            k += 1
        return s

    pi = 4 * (4 * arctan_inv(5) - arctan_inv(239))   # pi * 2**g
    return (2 << (g + bits)) // pi


def _ph_table(nexp, bias, cuts):
    """(len(cuts) - 1, nexp) array: chunk j of V(E) holds its bits from 2**-cuts[j]
    (exclusive) down to 2**-cuts[j+1]."""
    frac = cuts[-1]
    top = _two_over_pi_fixed(bias + frac + 64)
    out = np.zeros((len(cuts) - 1, nexp))
    for e in range(nexp):
        sh = e - bias + frac
        v = (top << sh) if sh >= 0 else (top >> -sh)
        v = (v >> (bias + frac + 64)) % (4 << frac)      # V(E) * 2**frac
        for j in range(len(cuts) - 1):
            lo, hi = cuts[j + 1], cuts[j]
            chunk = (v >> (frac - lo)) & ((1 << (lo - hi)) - 1) if j else v >> (frac - lo)
            out[j, e] = math.ldexp(chunk, -lo)
    return out


# float32 needs no table: x = m 2**s (m < 2**24, s = E - 150 <= 104) and 2/pi = G0 + G1 + G2 + G3
# (53-bit chunks _G0.._G3: bits 2**-1..2**-53, 2**-54..2**-106, ...), so x 2/pi mod 4 =
# sum_i m ((Gi 2**s) mod 4) mod 4, each (Gi 2**s) mod 4 exact in a double. Per-lane table loads
# (gathers) cost ~30 cycles each on CPUs with the Gather Data Sampling microcode fix; this
# arithmetic is ~2.4x faster there and gives the same bits.
_TWO_OVER_PI_212 = _two_over_pi_fixed(212)
_G0, _G1, _G2, _G3 = (math.ldexp((_TWO_OVER_PI_212 >> (159 - 53 * j)) & ((1 << 53) - 1),
                                 -53 * (j + 1)) for j in range(4))


# The mode argument of the sin / cos / tan helpers (0, 1, 2) as int64 values, not literals:
# Numba compiles a helper once per literal argument, and a cold cache then paid each helper's
# compile once per function; with one int64 signature sin, cos and tan share it, and LLVM
# still folds the mode away where a kernel inlines the helper.
_MODE0, _MODE1, _MODE2 = np.int64(0), np.int64(1), np.int64(2)


@_vjit
def _trig_f32(x, mode):
    """sin (mode 0), cos (1) or tan (2) of a float32 x, in double. One helper for the three
    (mode is a constant in each caller, so the other two fold away): one compile on a cold
    cache. Reduction: |x| = (4k + q) pi/2 + r, r exact to ~2**-80 absolute."""
    ua = np.uint64(f32_bits(x)) & np.uint64(0x7fffffff)
    m = np.float64(bits_f32(np.uint32((ua & np.uint64(0x7fffff)) | np.uint64(0x4b000000))))
    ps = bits_f64(((ua >> np.uint64(23)) + np.uint64(873)) << np.uint64(52))   # 2**(E - 150)
    t0 = _G0 * ps
    t0 = fma(-4.0, np.floor(t0 * 0.25), t0)             # mod 4, exact
    t1 = _G1 * ps
    t1 = fma(-4.0, np.floor(t1 * 0.25), t1)
    t2 = _G2 * ps                                       # < 1/4: no multiple of 4 to drop
    t3 = _G3 * ps
    # m ti = pi + ei exactly (|pi| < 2**26); pi = ki + fi, ki an integer, |fi| <= 1/2
    p0, e0 = _two_prod(m, t0)
    p1, e1 = _two_prod(m, t1)
    p2, e2 = _two_prod(m, t2)
    p3 = m * t3                                         # < 2**-31: its rounding ~2**-84
    k0 = (p0 + _SHIFT) - _SHIFT
    k1 = (p1 + _SHIFT) - _SHIFT
    k2 = (p2 + _SHIFT) - _SHIFT
    f0 = p0 - k0
    f1 = p1 - k1
    f2 = p2 - k2
    # f0 + f1 + f2 with TwoSums, its integer part dropped; the small terms (< 2**-25) added
    a, a_lo = _two_sum(f0, f1)
    b, b_lo = _two_sum(a, f2)
    k3 = (b + _SHIFT) - _SHIFT
    b = b - k3
    y = b + ((a_lo + b_lo) + ((e0 + e1) + (e2 + p3)))
    kq = (k0 + k1) + (k2 + k3)
    return _trig_f32_finish(x, y, kq, mode)


# |x| below this: the CPU loops' block fast path (sin_short_f32 etc.; scripts/check_trig_short.py
# measures its error over every float32 below it, both signs)
TRIG_SHORT_BOUND = 1048576.0


def _pio2_f32_chunks(n):
    """pi/2 as n float32 values of 24 significant bits each, each rounded to nearest."""
    bits = 200
    rest = (1 << (2 * bits)) // _two_over_pi_fixed(bits)     # pi/2 * 2**bits
    out = []
    for _ in range(n):
        e = abs(rest).bit_length() - 24
        c = (rest + (1 << (e - 1))) >> e
        out.append(np.float32(math.ldexp(c, e - bits)))
        rest -= c << e
    return out


# The float32 short path (sin / cos): all in float32 arithmetic, twice the lanes of the double
# path per vector. Constants are float32 so that Numba keeps every operation in float32.
_PIO2F_1, _PIO2F_2, _PIO2F_3 = _pio2_f32_chunks(3)     # pi/2 - sum: ~2**-76
_TWO_OVER_PI_F = np.float32(2.0 / math.pi)
_SHIFT_F = np.float32(12582912.0)                      # 1.5 * 2**23: v + SHIFT rounds v
_HALF_F = np.float32(0.5)
_ONE_F = np.float32(1.0)
_ZERO_F = np.float32(0.0)
# sin r = r + r**3 (SF0 + SF1 r**2 + SF2 r**4 + SF3 r**6), cos r = 1 - r**2/2 + r**4 (CF0 +
# CF1 r**2 + CF2 r**4): fitted for |r| <= 0.83 (weighted to relative error, float32 coefficients
# fixed lowest order first, the rest refitted): relative error 2**-32.3 / 2**-32.1 there.
_SF0 = np.float32(-0.1666666716337204)
_SF1 = np.float32(0.008333373814821243)
_SF2 = np.float32(-0.0001985017443075776)
_SF3 = np.float32(2.7984358439425705e-06)
_CF0 = np.float32(0.04166663810610771)
_CF1 = np.float32(-0.00138869509100914)
_CF2 = np.float32(2.439222407701891e-05)


@_vjit
def _sincos_f32_short(x, mode):
    """sin (mode 0), cos (1) or tan (2) of a float32 x with |x| < TRIG_SHORT_BOUND, in
    float32. Reduction: x = q pi/2 + (h + l) (Cody-Waite, pi/2 in three float32 chunks), the
    pair h + l exact to ~2**-55 absolute; polynomials in h with l folded in to first order.
    tan: sin / cos (odd q: -cos / sin) from their unrounded parts, one reciprocal of the
    denominator and one correction of the quotient by its residual."""
    # x 2/pi rounded to an integer in one step (float32(2/pi) is 2**-24.6 off: |r| < 0.828)
    qs = fma(x, _TWO_OVER_PI_F, _SHIFT_F)
    q = qs - _SHIFT_F
    n = f32_bits(qs)                                    # low bits: q mod 4 (two's complement)
    # x - q C1 is exact: both are multiples of ulp(C1) = 2**-23 (of 2**-24 where |x| < 1)
    # and the difference is below 1; so is the Fast2Sum below (r1's grid is coarser than p2's
    # ulp, |p2| < 2**-5)
    r1 = fma(-q, _PIO2F_1, x)
    p2 = q * _PIO2F_2
    e2 = fma(q, _PIO2F_2, -p2)
    h = r1 - p2
    t = (r1 - h) - p2
    l = t - fma(q, _PIO2F_3, e2)
    z = h * h
    hh = _HALF_F * h
    w = fma(-hh, h, _ONE_F)                             # 1 - h**2/2 rounded ...
    we = fma(-hh, h, _ONE_F - w)                        # ... and its rounding error
    # sin(h + l) = h + l (1 - h**2/2) + h**3 P; cos(h + l) = 1 - h**2/2 + h**4 Q - h l
    sp = fma(z, fma(z, fma(z, _SF3, _SF2), _SF1), _SF0)
    ds = fma(l, w, (z * h) * sp)
    s = h + ds
    cq = fma(z, fma(z, _CF2, _CF1), _CF0)
    dc = fma(z * z, cq, fma(-h, l, we))
    c = w + dc
    odd = (n & np.uint32(1)) != np.uint32(0)
    if mode == 2:
        # (h + ds) / (w + dc), or -(w + dc) / (h + ds): q0 from the rounded parts, then
        # q0 + (num - q0 den) / den with the residual's large part exact by FMA
        nh = -w if odd else h
        nl = -dc if odd else ds
        dh = h if odd else w
        dl = ds if odd else dc
        rd = _ONE_F / (s if odd else c)
        q0 = (-c if odd else s) * rd
        v = fma(fma(-q0, dh, nh) + (nl - q0 * dl), rd, q0)
        return v if x != _ZERO_F else x                 # tan(-0.0) = -0.0
    if mode == 1:
        v = s if odd else c
        flip = ((n + np.uint32(1)) >> np.uint32(1)) & np.uint32(1)
    else:
        v = c if odd else s
        flip = (n >> np.uint32(1)) & np.uint32(1)
    v = bits_f32(np.uint32(f32_bits(v) ^ (flip << np.uint32(31))))  # (Numba widens uint32 ops)
    if mode == 0:
        v = v if x != _ZERO_F else x                    # sin(-0.0) = -0.0
    return v


@_vjit
def _trig_f32_finish(x, y, kq, mode):
    """sin / cos / tan of a float32 x from its reduction |x| 2/pi = kq + y (kq an integer
    valued double, |y| <= 1/2 + tiny)."""
    r = y * _PIO2_1
    q = f64_bits(kq + _SHIFT) - _SHIFT_BITS
    ux = np.uint64(f32_bits(x))
    z = r * r
    s = fma(z * r, fma(z, fma(z, fma(z, fma(z, _S5, _S4), _S3), _S2), _S1), r)
    c = fma(z * z, fma(z, fma(z, fma(z, _C4, _C3), _C2), _C1), fma(-0.5, z, 1.0))
    odd = (q & np.uint64(1)) != np.uint64(0)
    if mode == 2:
        # tan r = sin r / cos r (odd quadrants: -cos r / sin r): ~2**-48 relative
        v = _flipsign((-c / s) if odd else (s / c), ux >> np.uint64(31))
    elif mode == 1:
        v = _flipsign(s if odd else c, ((q + np.uint64(1)) >> np.uint64(1)) & np.uint64(1))
    else:
        v = _flipsign(c if odd else s, ((q >> np.uint64(1)) & np.uint64(1)) ^ (ux >> np.uint64(31)))
    xd = np.float64(x)
    # |x| < 2**-12 (denormals too): sin x and tan x round to x, cos x to 1; inf -> nan
    v = v if abs(xd) >= 0.000244140625 else (1.0 if mode == 1 else xd)
    v = v if abs(xd) < _INF else xd - xd
    return np.float32(v)


@_vjit
def sin_f32(x):
    return _trig_f32(x, _MODE0)


@_vjit
def cos_f32(x):
    return _trig_f32(x, _MODE1)


@_vjit
def sin_short_f32(x):
    return _sincos_f32_short(x, _MODE0)


@_vjit
def cos_short_f32(x):
    return _sincos_f32_short(x, _MODE1)


@_vjit
def tan_short_f32(x):
    return _sincos_f32_short(x, _MODE2)


# float64: x = m 2**(E-1075) with m < 2**53; V(E) in four 53-bit fixed-point chunks (bits
# 2**1..2**-51, 2**-52..2**-104, 2**-105..2**-157, 2**-158..2**-210), interleaved
# [G1, G2, G3, G4] per E = 0..2047. The reduced argument is exact to ~2**-150 absolute, enough
# for the closest approach of any double to a multiple of pi/2 (~2**-61, at 5.3e255).
_PH64 = np.ascontiguousarray(_ph_table(2048, 1075, [-2, 51, 104, 157, 210]).T).reshape(-1)
_MANT = np.uint64(0x000fffffffffffff)


# fdlibm k_tan.c's minimax coefficients: tan r = r + T0 r**3 + ... on |r| <= 0.6744
_T = (3.33333333333334091986e-01, 1.33333333333201242699e-01, 5.39682539762260521377e-02,
      2.18694882948595424599e-02, 8.86323982359930005737e-03, 3.59207910759131235356e-03,
      1.45620945432529025516e-03, 5.88041240820264096874e-04, 2.46463134818469906812e-04,
      7.81794442939557092300e-05, 7.14072491382608190305e-05, -1.85586374855275456654e-05,
      2.59073051863633712884e-05)
_T0, _T1, _T2, _T3, _T4, _T5, _T6, _T7, _T8, _T9, _T10, _T11, _T12 = _T
_PIO4 = 7.85398163397448278999e-01
_PIO4_LO = 3.06161699786838301793e-17


@_vjit
def _reduce_f64(x):
    """|x| = (4k + q) pi/2 + rh + rl, rh + rl a double-double (|rh| <= ~pi/4): (rh, rl, q).
    sin / cos (_sincos_f64) and tan share it; each caller has its own polynomial helper, so a
    cold first call of sin types no tan code (and the reduction compiles once for the three)."""
    ux = f64_bits(x)
    ua = ux & ~_SIGN
    e = np.intp(ua >> np.uint64(52))
    m = bits_f64((ua & _MANT) | _TWO52_BITS)           # 2**52 + mantissa: the integer m
    g1 = _PH64[4 * e]
    g2 = _PH64[4 * e + 1]
    g3 = _PH64[4 * e + 2]
    g4 = _PH64[4 * e + 3]
    # |x| 2/pi mod 4 = m V(E) mod 4 = (p1 + e1) + (p2 + e2) + (p3 + e3) + p4: products exact (fma),
    # each split into an integer (kept mod 4) and a fraction; the fractions of p1 and e1 are
    # multiples of 2**-51 in [-1/2, 1/2], so their sum is exact; TwoSum with p2's fraction.
    p1, e1 = _two_prod(m, g1)
    p2, e2 = _two_prod(m, g2)
    p3, e3 = _two_prod(m, g3)
    p4 = m * g4
    p1 = fma(-4.0, np.floor(p1 * 0.25), p1)             # p1 mod 4, exact
    n1 = (p1 + _SHIFT) - _SHIFT                         # round to nearest (|v| < 2**51)
    f1 = p1 - n1
    n2 = (e1 + _SHIFT) - _SHIFT
    f2 = e1 - n2
    n3 = (p2 + _SHIFT) - _SHIFT
    f3 = p2 - n3
    a = f1 + f2
    na = (a + _SHIFT) - _SHIFT
    a = a - na
    sm, err = _two_sum(a, f3)
    ns = (sm + _SHIFT) - _SHIFT
    h = sm - ns
    # h + err + (p3 + e2) + (e3 + p4) with TwoSums: the sum may cancel to ~2**-62
    t, t_lo = _two_sum(p3, e2)
    u, u_lo = _two_sum(t, err)
    y, y_lo = _two_sum(h, u)
    tail = y_lo + ((u_lo + t_lo) + (e3 + p4))
    yh = y + tail
    yl = tail - (yh - y)                                # y + tail = yh + yl (|tail| < |y|)
    nq = ((n1 + n2) + (n3 + na)) + ns
    q = f64_bits(nq + _SHIFT) - _SHIFT_BITS
    # r = (yh + yl) pi/2 as a double-double (rh, rl)
    rh = yh * _PIO2_1
    rl = fma(yh, _PIO2_1, -rh) + fma(yh, _PIO2_2, yl * _PIO2_1)
    return rh, rl, q


# float64 below this: the CPU loops' block fast path (sin_short_f64 etc.), a Cody-Waite
# reduction instead of Payne-Hanek's four table loads and ~40 operations. With n = round(|x|
# 2/pi) < 2**28 and pi/2 = P1 + P2 + P3 (each the double nearest the rest: ~2**-160 left),
# |x| - n P1 is exact (one FMA: both are multiples of 2**-53 once |x| >= 1/2, and the
# difference is below 1), n P2 splits exactly (TwoProd), n P3 rounds by ~2**-135: the reduced
# argument is right to ~2**-130 absolute, against ~2**-60 for the closest double to a multiple
# of pi/2 below 2**28.
TRIG_SHORT_BOUND_F64 = 268435456.0
_P1 = 1.5707963267948966
_P2 = 6.123233995736766e-17
_P3 = -1.4973849048591698e-33
_TWO_OVER_PI = 0.6366197723675814


@_vjit
def _reduce_short_f64(x):
    """_reduce_f64 for |x| < TRIG_SHORT_BOUND_F64 (Cody-Waite in three parts)."""
    a = abs(x)
    n = fma(a, _TWO_OVER_PI, _SHIFT) - _SHIFT
    r1 = fma(-n, _P1, a)                                # exact
    p, pe = _two_prod(n, _P2)                           # n P2 = p + pe exactly
    h, e = _two_sum(r1, -p)
    lo = (e - pe) - n * _P3
    rh = h + lo                                         # normalized (|lo| < |h|)
    return rh, lo - (rh - h), f64_bits(n + _SHIFT) - _SHIFT_BITS


@_vjit
def _sincos_f64(x, mode):
    """sin (mode 0) or cos (1) of x: one helper for the two (mode is a constant in each caller,
    so the other folds away), one compile on a cold cache."""
    rh, rl, q = _reduce_f64(x)
    return _sincos_f64_of(x, rh, rl, q, mode)


@_vjit
def _sincos_f64_of(x, rh, rl, q, mode):
    """sin / cos of x from its reduction |x| = (4k + q) pi/2 + rh + rl."""
    ux = f64_bits(x)
    z = rh * rh
    w = z * z
    # musl __sin(rh, rl, 1) and __cos(rh, rl)
    sr = _S2 + z * (_S3 + z * _S4) + z * w * (_S5 + z * _S6)
    v = z * rh
    s = rh - ((z * (0.5 * rl - v * sr) - rl) - v * _S1)
    cr = z * (_C1 + z * (_C2 + z * _C3)) + w * w * (_C4 + z * (_C5 + z * _C6))
    hz = 0.5 * z
    w1 = 1.0 - hz
    c = w1 + (((1.0 - w1) - hz) + (z * cr - rh * rl))
    q = q + np.uint64(1) if mode == 1 else q
    res = c if (q & np.uint64(1)) != np.uint64(0) else s
    flip = (q >> np.uint64(1)) & np.uint64(1)
    if mode != 1:
        flip = flip ^ (ux >> np.uint64(63))            # sin is odd
    res = _flipsign(res, flip)
    # |x| < 2**-26 (denormals too): sin x = x; |x| < 2**-27: cos x = 1 after rounding;
    # inf -> nan
    if mode == 1:
        res = res if abs(x) >= 7.450580596923828e-09 else 1.0
    else:
        res = res if abs(x) >= 1.4901161193847656e-08 else x
    return res if abs(x) < _INF else x - x


@_vjit
def tan_f64(x):
    """tan x: ~25% slower than libm's on a CPU whose gathers are microcoded (GDS fix) but within
    1 ulp everywhere (glibc's tan is 14 ulp off at 5.3e255)."""
    rh, rl, q = _reduce_f64(x)
    return _tan_f64_of(x, rh, rl, q)


@_vjit
def _tan_f64_of(x, rh, rl, q):
    """tan x from its reduction |x| = (4k + q) pi/2 + rh + rl."""
    ux = f64_bits(x)
    odd = (q & np.uint64(1)) != np.uint64(0)
    # |r| >= 0.6744: evaluate at u = pi/4 - |r| (double-double) and use
    # tan(pi/4 - u) = 1 - 2 tan u / (1 + tan u) (odd quadrants: -1/tan = -1 + 2 t / (t - 1))
    big = abs(rh) >= 0.6744
    al = rl if rh >= 0.0 else -rl
    ub = (_PIO4 - abs(rh)) + (_PIO4_LO - al)
    xx = ub if big else rh
    yy = 0.0 if big else rl
    z = xx * xx
    w = z * z
    r = _T1 + w * (_T3 + w * (_T5 + w * (_T7 + w * (_T9 + w * _T11))))
    v = z * (_T2 + w * (_T4 + w * (_T6 + w * (_T8 + w * (_T10 + w * _T12)))))
    s = z * xx
    r = yy + z * (s * (r + v) + yy)
    r = r + _T0 * s
    t = xx + r                                          # tan(xx + yy) = t + (r - (t - xx))
    one = -1.0 if odd else 1.0
    # one division per lane: t*t / (t + one) (big r) or a = -1/t (odd quadrant, small r)
    qd = (t * t if big else -1.0) / ((t + one) if big else t)
    tb = _flipsign(one - 2.0 * (xx - (qd - r)), f64_bits(rh) >> np.uint64(63))
    # odd quadrant, small r: -1 / (t + tl) from a = -1/t, corrected by the residual of a t
    tl = r - (t - xx)
    ea = fma(qd, t, 1.0)
    ts = fma(qd, fma(qd, tl, ea), qd) if odd else t
    res = tb if big else ts
    res = _flipsign(res, ux >> np.uint64(63))          # tan is odd
    res = res if abs(x) >= 3.725290298461914e-09 else x   # |x| < 2**-28: tan x rounds to x
    return res if abs(x) < _INF else x - x


@_vjit
def sin_f64(x):
    return _sincos_f64(x, _MODE0)


@_vjit
def cos_f64(x):
    return _sincos_f64(x, _MODE1)


@_vjit
def sin_short_f64(x):
    rh, rl, q = _reduce_short_f64(x)
    return _sincos_f64_of(x, rh, rl, q, _MODE0)


@_vjit
def cos_short_f64(x):
    rh, rl, q = _reduce_short_f64(x)
    return _sincos_f64_of(x, rh, rl, q, _MODE1)


@_vjit
def tan_short_f64(x):
    rh, rl, q = _reduce_short_f64(x)
    return _tan_f64_of(x, rh, rl, q)


@_vjit
def tan_f32(x):
    return _trig_f32(x, _MODE2)
