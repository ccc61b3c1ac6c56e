"""Branch-free float32 / float64 transcendental kernels that LLVM vectorizes.

Numba lowers ``np.exp`` & co. on a float to one scalar libm call per element, which keeps the
generated pointwise loops (kernels/cpu/pointwise.py) from vectorizing. The helpers here are
plain arithmetic instead: range reduction, a polynomial, and special values (nan, +-inf,
+-0.0, overflow, underflow, denormals) resolved with selects, so a loop calling them becomes
SIMD code (``<4 x double>`` / ``<8 x float>`` on AVX2). ``scalar_math.py`` routes the real
float cases of exp, exp2, expm1, log, log2, log10, log1p, sin, cos, tan, asin, acos, atan,
atan2, sinh, cosh, tanh, asinh, acosh, atanh, sigmoid, erf and power here; complex types
keep their helpers there.

float32 computes internally in float64 (one conversion each way, exact; tanh, whose float64
version cost 3x a copy of its data, computes in float32 with error-free steps): the double-precision
intermediate is accurate to ~2**-30 or better, so the float32 result is the correctly rounded
one except within ~2**-6 ulp of a rounding boundary (measured max error <= 0.51 ulp; see
tests/kernels/cpu/test_vector_math.py). float64 follows fdlibm/musl formulas (Cody-Waite
reduction, the fdlibm minimax polynomials), evaluated with fused multiply-adds (``llvm.fma``),
and carries the sums that would cancel or round twice as double-doubles (TwoSum / Fast2Sum,
fma products): exp2's r ln2, sinh / cosh's exp(|x|) and its reciprocal, log2 / log10's
log(1 + f) times 1/ln2, the arguments of the logs in asinh / acosh / atanh (log(u) plus u's
relative error c, as log1p does) and the square root in asin / acos. Each function evaluates
all of its ranges and selects per lane.

Argument reduction for sin/cos/tan is Payne-Hanek for every input, branch-free, products split
exactly with fma, fractions summed with TwoSums. float64 reads a table of 2**e * 2/pi mod 4 per
exponent (fixed-point chunks; the per-lane table loads, gathers, are the only memory access);
float32 needs no table: (2/pi in four 53-bit chunks) * 2**e mod 4 is exact arithmetic. Gathers
are microcoded (~30 cycles each) on Intel CPUs with the Gather Data Sampling fix, which makes the
float64 reduction cost ~15 ns per element there. Exact to ~2**-80 (float32) / ~2**-150
(float64) absolute for all finite inputs, huge ones included (float64's closest approach to a
multiple of pi/2, 2**-61 at 5.3e255, is right to the last bit). A Cody-Waite reduction would be
cheaper but needs a fallback above ~2**50, and a fallback branch (or a libm call) in the loop
body stops vectorization (an if-converted branch runs both sides).

Everything here is compiled on its own (once per signature, cached on disk) by ``_vjit``, with
LLVM's ``alwaysinline`` on the compiled function: a kernel calling it links that code and LLVM
inlines it there (its cost model alone refuses bodies this large, and the call left behind
keeps the loop scalar), then vectorizes the loop. Inlining in Numba's IR instead re-types the
whole body inside every kernel: 2-8 s of compile time per kernel. No helper branches or
calls out; ``fastmath`` stays off (results do not depend on compiler reassociation).
scalar_math.VECTOR_MATH_DIGEST must be updated after an edit here
(tests/kernels/cpu/test_vector_math.py checks it): generated kernels are keyed on
scalar_math.py's text.

Measured (tests/kernels/cpu/test_vector_math.py, max over ~180 K samples per function incl.
random bit patterns; the newer ones over ~800 K): float32 <= 0.51 ulp for all functions but
tanh (pow, atan2 included; NumPy's powf: 1.0, arctan2: 3.1; NumPy's float32 exp2 2.5, log2
1.9, log10 2.1, sinh 1.5, cosh 2.0, arcsin 3.0, arccos 2.0), float32 tanh 1.09 ulp (NumPy's:
1.37); float64 exp 0.96, log 0.73, expm1 1.72, log1p ~1, sin 0.76, cos 0.79, tan 0.85,
atan 0.75, atan2 0.81 (NumPy's: 0.77), erf 0.90, tanh 2.5 ulp, pow 0.83 (NumPy's: 0.69);
exp2 0.74, log2 0.72, log10 0.67, sinh 0.73, cosh 0.60, asinh 0.77, acosh 0.77, atanh 0.85,
asin 0.63, acos 0.61 (NumPy's: 0.74, 0.51, 0.59, 0.83, 0.75, 0.71, 0.56, 0.59, 0.81, 0.81).
"""
import math

import numpy as np
from llvmlite import ir
from numba import types
from numba.core.registry import CPUDispatcher
from numba.extending import intrinsic

_JIT = {"error_model": "numpy", "fastmath": False}


class _AlwaysInline(CPUDispatcher):
    """A Numba dispatcher whose compiled functions LLVM always inlines into their callers.

    Each helper compiles once per signature (and is cached on disk) on its own; a kernel that
    calls it links the helper's LLVM module, in which the function carries LLVM's
    ``alwaysinline`` attribute, so the caller's optimizer inlines it (LLVM's cost model would
    refuse bodies this large and leave a call that keeps the loop scalar) and vectorizes the
    loop. Numba's own ``inline='always'`` would splice the helper's IR into every caller and
    type it again there: seconds of compile time per kernel for sin/cos."""

    def add_overload(self, cres):
        # Runs for fresh compiles (before the cache saves the library: the attribute is in the
        # cached linking module too) and for loads from the disk cache.
        if not cres.objectmode:
            mod = cres.library._get_module_for_linking()
            fn = mod.get_function(cres.fndesc.mangled_name)
            if not any(b"alwaysinline" in a for a in fn.attributes):
                fn.add_function_attribute("alwaysinline")
        super().add_overload(cres)


def _vjit(fn):
    disp = _AlwaysInline(py_func=fn, locals={},
                         targetoptions={"nopython": True, "nogil": True, **_JIT})
    disp.enable_caching()
    return disp


# --------------------------------------------------------------------------
# primitives
# --------------------------------------------------------------------------

@intrinsic
def fma(typingctx, a, b, c):
    """a * b + c with one rounding (llvm.fma: the FMA instruction on x86-64 with FMA3)."""
    if not (isinstance(a, types.Float) and a == b == c):
        return None

    def codegen(context, builder, sig, args):
        t = args[0].type
        fn = builder.module.declare_intrinsic("llvm.fma", [t], ir.FunctionType(t, [t, t, t]))
        return builder.call(fn, args)

    return a(a, b, c), codegen


def _bitcast(src, dst, lty):
    @intrinsic
    def cast(typingctx, x):
        if x != src:
            return None

        def codegen(context, builder, sig, args):
            return builder.bitcast(args[0], lty)

        return dst(src), codegen

    return cast


f64_bits = _bitcast(types.float64, types.uint64, ir.IntType(64))
bits_f64 = _bitcast(types.uint64, types.float64, ir.DoubleType())
f32_bits = _bitcast(types.float32, types.uint32, ir.IntType(32))
bits_f32 = _bitcast(types.uint32, types.float32, ir.FloatType())

_SHIFT = 6755399441055744.0          # 1.5 * 2**52: x + SHIFT rounds x to an integer
_SHIFT_BITS = np.uint64(0x4338000000000000)
_SIGN = np.uint64(0x8000000000000000)
_TWO52 = 4503599627370496.0
_TWO52_BITS = np.uint64(0x4330000000000000)
_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01   # fdlibm split: k * LN2_HI exact for |k| < 2**11
_LN2_LO = 1.90821492927058770002e-10
_LN2 = 0.6931471805599453
_LN2_LO53 = 2.3190468138462996e-17     # ln2 - float64(ln2)
_INF = math.inf
_NAN = math.nan


@_vjit
def _pow2(kd):
    """2**k for an integer-valued double k in [-1022, 1023] (no float->int conversion)."""
    u = f64_bits(kd + _SHIFT) + np.uint64(1023)
    return bits_f64(u << np.uint64(52))


@_vjit
def _copysign(mag, sgn):
    return bits_f64((f64_bits(mag) & ~_SIGN) | (f64_bits(sgn) & _SIGN))


@_vjit
def _flipsign(v, flip):
    """v with its sign bit xor'ed by flip's lowest bit (flip: uint64)."""
    return bits_f64(f64_bits(v) ^ (flip << np.uint64(63)))


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
def exp_f64(x):
    xc = min(max(x, -746.0), 710.0)
    t = fma(xc, _LOG2E, _SHIFT)
    k = t - _SHIFT                          # round(x / ln2)
    r = fma(-k, _LN2, xc)                   # exact (|r| <= ln2/2, k has <= 11 bits)
    r = fma(-k, _LN2_LO53, r)
    p = fma(r * r, _exp_poly13(r), r) + 1.0
    k1 = np.floor(k * 0.5)                  # 2**k as two factors: each stays normal
    res = p * _pow2(k1) * _pow2(k - k1)
    return res if x == x else x


@_vjit
def exp_f32(x):
    xd = np.float64(x)
    xc = min(max(xd, -104.0), 90.0)
    t = fma(xc, _LOG2E, _SHIFT)
    k = t - _SHIFT
    r = fma(-k, _LN2, xc)
    # degree 8 Taylor on |r| <= ln2/2: truncation ~2**-32
    p = 1.0 / 40320.0
    p = fma(p, r, 1.0 / 5040.0)
    p = fma(p, r, 1.0 / 720.0)
    p = fma(p, r, 1.0 / 120.0)
    p = fma(p, r, 1.0 / 24.0)
    p = fma(p, r, 1.0 / 6.0)
    p = fma(p, r, 0.5)
    p = fma(p, r, 1.0)
    p = fma(p, r, 1.0)
    res = np.float32(p * _pow2(k))
    return res if x == x else x


@_vjit
def _exp_f32d(a):
    """exp(a) for a double a in [-100, 100] to ~2**-32 relative."""
    t = fma(a, _LOG2E, _SHIFT)
    k = t - _SHIFT
    r = fma(-k, _LN2, a)
    p = 1.0 / 40320.0
    p = fma(p, r, 1.0 / 5040.0)
    p = fma(p, r, 1.0 / 720.0)
    p = fma(p, r, 1.0 / 120.0)
    p = fma(p, r, 1.0 / 24.0)
    p = fma(p, r, 1.0 / 6.0)
    p = fma(p, r, 0.5)
    p = fma(p, r, 1.0)
    p = fma(p, r, 1.0)
    return p * _pow2(k)


@_vjit
def _expm1_core(x, lo):
    """expm1 for x already clamped to [lo, 710] (lo <= -40), not nan."""
    t = fma(x, _LOG2E, _SHIFT)
    k = t - _SHIFT
    r = fma(-k, _LN2, x)
    r = fma(-k, _LN2_LO53, r)
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
def _log_specials(x, res):
    res = res if x != _INF else x
    res = res if x != 0.0 else -_INF
    res = res if not (x < 0.0) else _NAN
    return res if x == x else x


@_vjit
def log_f64(x):
    sub = x < 2.2250738585072014e-308
    xs = x * 18014398509481984.0 if sub else x             # denormals: scale by 2**54
    k, z = _split(f64_bits(xs))
    k = k - 54.0 if sub else k
    # fdlibm e_log.c: log(1+f) = f - (hfsq - s (hfsq + R(s*s)))
    f = z - 1.0
    s = f / (2.0 + f)
    z2 = s * s
    w = z2 * z2
    t1 = w * fma(w, fma(w, _LG6, _LG4), _LG2)
    t2 = z2 * fma(w, fma(w, fma(w, _LG7, _LG5), _LG3), _LG1)
    R = t2 + t1
    hfsq = 0.5 * f * f
    res = k * _LN2_HI - ((hfsq - (s * (hfsq + R) + k * _LN2_LO)) - f)
    return _log_specials(x, res)


@_vjit
def _log_f32core(xd):
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
    ls = fma(2.0 * s * z2, p, 2.0 * s)
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
    f = z - 1.0
    s = f / (2.0 + f)
    z2 = s * s
    w = z2 * z2
    t1 = w * fma(w, fma(w, _LG6, _LG4), _LG2)
    t2 = z2 * fma(w, fma(w, fma(w, _LG7, _LG5), _LG3), _LG1)
    R = t2 + t1
    hfsq = 0.5 * f * f
    res = k * _LN2_HI - ((hfsq - (s * (hfsq + R) + (k * _LN2_LO + c))) - f)
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
# and bounded fused GELU). |x| < 0.75: x + x^3 P(x^2), a degree-7 least-squares fit on [0, 1]
# (fit error ~0.007 ulp). Above: 1 - 2 / (exp(2|x|) + 1) (Cody-Waite reduction, degree-7
# Taylor for exp(r) - 1, 2**k + 1 + 2**k (exp(r) - 1) summed in that order). Measured max
# 1.09 ulp over 20.4M samples incl. every float32 in [0.5, 1) (NumPy's float32 tanh: 1.37). A
# Fast2Sum of the denominator and a Newton step on the quotient took it to 0.92 ulp for 18%
# more time per element (the loop is throughput-bound: ~45 vector operations per 16 lanes).
_TANH_P = tuple(np.float32(c) for c in (
    -0.3333332962008116, 0.13333206743860568, -0.053953559267116605, 0.021786371070369417,
    -0.008598314075908773, 0.0030820854636486165, -0.000843138501088451,
    0.00012194032750672302))
_TH0, _TH1, _TH2, _TH3, _TH4, _TH5, _TH6, _TH7 = _TANH_P
_F32_SHIFT = np.float32(12582912.0)     # 1.5 * 2**23: y + SHIFT rounds y to an integer
_F32_SHIFT_BITS = np.uint32(0x4B400000)
_F32_LOG2E = np.float32(1.4426950408889634)
_F32_LN2_HI = np.float32(0.693145751953125)        # 16 bits: k * LN2_HI exact for k < 2**8
_F32_LN2_LO = np.float32(1.428606765330187045e-06)
_F32_SIGN = np.uint32(0x80000000)
_E7, _E6, _E5, _E4, _E3, _E2 = (np.float32(1 / 40320), np.float32(1 / 5040),
                                np.float32(1 / 720), np.float32(1 / 120), np.float32(1 / 24),
                                np.float32(1 / 6))


@_vjit
def tanh_f32(x):
    one = np.float32(1.0)
    a = min(abs(x), np.float32(9.5))   # tanh(9.5) rounds to 1 in float32
    z = a * a
    p = fma(_TH7, z, _TH6)
    p = fma(p, z, _TH5)
    p = fma(p, z, _TH4)
    p = fma(p, z, _TH3)
    p = fma(p, z, _TH2)
    p = fma(p, z, _TH1)
    p = fma(p, z, _TH0)
    small = fma(a * z, p, a)
    y = a + a
    t = fma(y, _F32_LOG2E, _F32_SHIFT)
    k = t - _F32_SHIFT
    r = fma(-k, _F32_LN2_HI, y)
    r = fma(-k, _F32_LN2_LO, r)
    w = fma(_E7, r, _E6)
    w = fma(w, r, _E5)
    w = fma(w, r, _E4)
    w = fma(w, r, _E3)
    w = fma(w, r, _E2)
    w = fma(w, r, np.float32(0.5))
    w = fma(w, r, one)
    w = w * r                                        # exp(r) - 1
    scale = bits_f32(np.uint32((f32_bits(t) - _F32_SHIFT_BITS + np.uint32(127))
                               << np.uint32(23)))    # 2**k, k in [0, 28]
    s1 = scale + one                # exact for k <= 23; beyond, q is far below 1's half ulp
    hw = scale * w                  # exact
    d = s1 + hw
    q = np.float32(2.0) / d
    res = small if a < np.float32(0.75) else one - q
    res = bits_f32(np.uint32((f32_bits(res) & ~_F32_SIGN) | (f32_bits(x) & _F32_SIGN)))
    return res if x == x else x


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
    t = fma(-xd, _LOG2E, _SHIFT)
    k = t - _SHIFT
    r = fma(k, _LN2, xd)       # -x - k ln2, negated
    p = 1.0 / 40320.0
    p = fma(p, -r, 1.0 / 5040.0)
    p = fma(p, -r, 1.0 / 720.0)
    p = fma(p, -r, 1.0 / 120.0)
    p = fma(p, -r, 1.0 / 24.0)
    p = fma(p, -r, 1.0 / 6.0)
    p = fma(p, -r, 0.5)
    p = fma(p, -r, 1.0)
    p = fma(p, -r, 1.0)
    e = p * _pow2(k)           # exp(-x), finite for |x| <= 110
    res = np.float32(1.0 / (1.0 + e))
    return res if x == x else x


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
    p0 = m * t0
    e0 = fma(m, t0, -p0)
    p1 = m * t1
    e1 = fma(m, t1, -p1)
    p2 = m * t2
    e2 = fma(m, t2, -p2)
    p3 = m * t3                                         # < 2**-31: its rounding ~2**-84
    k0 = (p0 + _SHIFT) - _SHIFT
    k1 = (p1 + _SHIFT) - _SHIFT
    k2 = (p2 + _SHIFT) - _SHIFT
    f0 = p0 - k0
    f1 = p1 - k1
    f2 = p2 - k2
    # f0 + f1 + f2 with TwoSums, its integer part dropped; the small terms (< 2**-25) added
    a = f0 + f1
    ab = a - f0
    a_lo = (f0 - (a - ab)) + (f1 - ab)
    b = a + f2
    bb = b - a
    b_lo = (a - (b - bb)) + (f2 - bb)
    k3 = (b + _SHIFT) - _SHIFT
    b = b - k3
    y = b + ((a_lo + b_lo) + ((e0 + e1) + (e2 + p3)))
    kq = (k0 + k1) + (k2 + k3)
    return _trig_f32_finish(x, y, kq, mode)


# |x| below this: _trig_f32_short's reduction (scripts/check_trig_short.py compares it with
# _trig_f32's over every float32 below it, both signs: no result differs)
TRIG_SHORT_BOUND = 1048576.0


@_vjit
def _trig_f32_short(x, mode):
    """_trig_f32 for |x| < TRIG_SHORT_BOUND with a two-term reduction (~4x fewer operations):
    |x| 2/pi = p + p_lo + |x| G1 (p_lo exact by FMA, |x| G1 < 2**-33; the next chunk,
    |x| G2 < 2**-86, is below both reductions' error), so y and the quadrant are those of
    the full reduction up to ~2**-85 absolute: the same float32 results."""
    xd = abs(np.float64(x))
    p = xd * _G0
    p_lo = fma(xd, _G0, -p)
    k = (p + _SHIFT) - _SHIFT
    y = (p - k) + fma(xd, _G1, p_lo)    # p - k is exact: p < 2**20, its ulp >= 2**-33
    return _trig_f32_finish(x, y, k, mode)


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
    return _trig_f32(x, 0)


@_vjit
def cos_f32(x):
    return _trig_f32(x, 1)


@_vjit
def sin_short_f32(x):
    return _trig_f32_short(x, 0)


@_vjit
def cos_short_f32(x):
    return _trig_f32_short(x, 1)


@_vjit
def tan_short_f32(x):
    return _trig_f32_short(x, 2)


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
def _trig_f64(x, mode):
    """sin (mode 0), cos (1) or tan (2) of x: one helper for the three (mode is a constant in
    each caller, so the other two fold away), one compile on a cold cache. Reduction:
    |x| = (4k + q) pi/2 + rh + rl, rh + rl a double-double (|rh| <= ~pi/4). tan: ~25% slower
    than libm's on a CPU whose gathers are microcoded (GDS fix) but within 1 ulp everywhere
    (glibc's tan is 14 ulp off at 5.3e255)."""
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
    p1 = m * g1
    e1 = fma(m, g1, -p1)
    p2 = m * g2
    e2 = fma(m, g2, -p2)
    p3 = m * g3
    e3 = fma(m, g3, -p3)
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
    sm = a + f3
    bb = sm - a
    err = (a - (sm - bb)) + (f3 - bb)
    ns = (sm + _SHIFT) - _SHIFT
    h = sm - ns
    # h + err + (p3 + e2) + (e3 + p4) with TwoSums: the sum may cancel to ~2**-62
    t = p3 + e2
    tb = t - p3
    t_lo = (p3 - (t - tb)) + (e2 - tb)
    u = t + err
    ub = u - t
    u_lo = (t - (u - ub)) + (err - ub)
    y = h + u
    yb = y - h
    y_lo = (h - (y - yb)) + (u - yb)
    tail = y_lo + ((u_lo + t_lo) + (e3 + p4))
    yh = y + tail
    yl = tail - (yh - y)                                # y + tail = yh + yl (|tail| < |y|)
    nq = ((n1 + n2) + (n3 + na)) + ns
    q = f64_bits(nq + _SHIFT) - _SHIFT_BITS
    # r = (yh + yl) pi/2 as a double-double (rh, rl)
    rh = yh * _PIO2_1
    rl = fma(yh, _PIO2_1, -rh) + fma(yh, _PIO2_2, yl * _PIO2_1)
    if mode == 2:
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
def sin_f64(x):
    return _trig_f64(x, 0)


@_vjit
def cos_f64(x):
    return _trig_f64(x, 1)


@_vjit
def tan_f64(x):
    return _trig_f64(x, 2)


@_vjit
def tan_f32(x):
    return _trig_f32(x, 2)


# --------------------------------------------------------------------------
# pow
# --------------------------------------------------------------------------

@_vjit
def _odd_integer(y):
    """y (a double) is an odd integer (|y| < 2**53: larger doubles are even)."""
    h = y * 0.5
    return (np.floor(y) == y) & (np.floor(h) != h)


@_vjit
def pow_f32(x, y):
    # |x|**y = exp(y ln|x|) in double: ln|x| to ~2**-50 relative (atanh series), its product
    # with y rounded once, exp to ~2**-42: the float32 result is correctly rounded but within
    # ~2**-18 ulp of a halfway case (and for float32-denormal results)
    xd = np.float64(x)
    yd = np.float64(y)
    a = abs(xd)
    k, z = _split(f64_bits(max(a, 1e-300)))           # float32 values are normal doubles
    f = z - 1.0
    s = f / (2.0 + f)
    z2 = s * s
    # 2 atanh(s) = 2s (1 + z2/3 + ... + z2**8/17): truncation (z2 <= 0.0295) ~2**-48
    p = fma(z2, 1.0 / 17.0, 1.0 / 15.0)
    p = fma(p, z2, 1.0 / 13.0)
    p = fma(p, z2, 1.0 / 11.0)
    p = fma(p, z2, 1.0 / 9.0)
    p = fma(p, z2, 1.0 / 7.0)
    p = fma(p, z2, 1.0 / 5.0)
    p = fma(p, z2, 1.0 / 3.0)
    ls = fma(2.0 * s * z2, p, 2.0 * s)
    lhi = k * _LN2_HI                                   # exact (|k| < 2**11)
    lg = lhi + (fma(k, _LN2_LO, ls))
    lg = lg if a != 0.0 else -_INF
    lg = lg if a != _INF else _INF
    lg = lg if a == a else a                            # nan x
    t = yd * lg
    tc = min(max(t, -160.0), 160.0)
    kk = fma(tc, _LOG2E, _SHIFT) - _SHIFT
    r = fma(-kk, _LN2, tc)
    r = fma(-kk, _LN2_LO53, r)
    # degree 11 Taylor on |r| <= ln2/2: truncation ~2**-48
    e = 1.0 / 39916800.0
    e = fma(e, r, 1.0 / 3628800.0)
    e = fma(e, r, 1.0 / 362880.0)
    e = fma(e, r, 1.0 / 40320.0)
    e = fma(e, r, 1.0 / 5040.0)
    e = fma(e, r, 1.0 / 720.0)
    e = fma(e, r, 1.0 / 120.0)
    e = fma(e, r, 1.0 / 24.0)
    e = fma(e, r, 1.0 / 6.0)
    e = fma(e, r, 0.5)
    e = fma(e, r * r, r) + 1.0
    res = e * _pow2(kk)                                 # |kk| <= 231: 2**kk is normal
    res = res if t == t else t                          # nan x or y (t nan: y ln|x| = 0 * inf too)
    # x < 0: (-1)**y |x|**y for integer y, nan for other finite y
    neg = xd < 0.0
    odd = _odd_integer(yd)
    res = -res if (neg & odd) else res
    res = _NAN if (neg & (np.floor(yd) != yd) & (abs(yd) < _INF) & (a < _INF)) else res
    # -0.0 ** odd y keeps the sign (neg misses -0.0)
    res = _copysign(res, xd) if (odd & (xd == 0.0)) else res
    res = 1.0 if (xd == 1.0) | (yd == 0.0) else res     # even for a nan y / x
    res = 1.0 if (xd == -1.0) & (abs(yd) == _INF) else res
    return np.float32(res)


# float64 pow: log|x| as a double-double to ~2**-68 relative (2 atanh(s) with s = (z - 1) /
# (z + 1) and its first two terms carried as double-doubles, the rest a Taylor sum in s*s),
# y log|x| as a double-double, then exp of it (_exp_dd) scaled by 2**k once.
_TWO3_HI = 0.6666666666666666
_TWO3_LO = 3.700743415417188e-17        # 2/3 - float64(2/3)


@_vjit
def _log_dd(a):
    """(hi, lo): log(a) = hi + lo to ~2**-68 relative, for a positive finite a."""
    sub = a < 2.2250738585072014e-308
    xs = a * 18014398509481984.0 if sub else a
    k, z = _split(f64_bits(xs))
    k = k - 54.0 if sub else k
    f = z - 1.0                                 # exact
    dh = 2.0 + f                                # z + 1 = dh + dl
    dl = (2.0 - dh) + f
    rd = 1.0 / dh
    sh = f * rd                                 # s = f / (z + 1) = sh + sl (sl: sh's residual)
    sl = (fma(-sh, dh, f) - sh * dl) * rd
    s2 = sh * sh
    s2l = fma(sh, sh, -s2)
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
    u = kh + t
    ub = u - kh
    e1 = (kh - (u - ub)) + (t - ub)
    v = u + c
    vb = v - u
    e2 = (u - (v - vb)) + (c - vb)
    lo = (e1 + e2) + ((k * _LN2_LO + (sl + sl)) + (cl + rest))
    hi = v + lo
    return hi, (v - hi) + lo


@_vjit
def pow_f64(x, y):
    a = abs(x)
    lh, ll = _log_dd(min(max(a, 5e-324), 1.7976931348623157e308))
    th = y * lh                                 # y log|x| = th + tl
    tl = fma(y, lh, -th) + y * ll
    inr = abs(th) < 760.0
    tl = tl if inr else 0.0
    thc = min(max(th, -760.0), 760.0)
    k = (fma(thc, _LOG2E, _SHIFT) - _SHIFT)
    hi, lo = _exp_dd(fma(-k, _LN2, thc), fma(-k, _LN2_LO53, tl))
    k = min(max(k, -1100.0), 1100.0)
    k1 = np.floor(k * 0.5)
    res = (hi + lo) * _pow2(k1) * _pow2(k - k1)
    # x = 0 / inf, y = +-inf: the limits (C99 pow's table) from the sign of y log|x|
    lg = -_INF if a == 0.0 else (_INF if a == _INF else lh)
    lg = lg if a == a else a
    ts = y * lg
    res = res if ts == ts else ts
    res = (_INF if ts > 0.0 else 0.0) if abs(ts) == _INF else res
    # x < 0: (-1)**y |x|**y for integer y, nan for other finite y
    neg = x < 0.0
    odd = _odd_integer(y)
    res = -res if (neg & odd) else res
    res = _NAN if (neg & (np.floor(y) != y) & (abs(y) < _INF) & (a < _INF)) else res
    res = _copysign(res, x) if (odd & (x == 0.0)) else res
    res = 1.0 if (x == 1.0) | (y == 0.0) else res
    res = 1.0 if (x == -1.0) & (abs(y) == _INF) else res
    return res


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


@_vjit
def atan_f32(x):
    xd = np.float64(x)
    return np.float32(_copysign(_atan_pos(abs(xd), 0.0), xd))


@_vjit
def _atan2_d(y, x, exact_quotient):
    """atan2 in double: z = atan(|y| / |x|), placed in the quadrant of (x, y) (C99's zero,
    infinity and nan cases included)."""
    ay = abs(y)
    ax = abs(x)
    t = ay / ax
    tl = 0.0
    if not exact_quotient:
        tl = fma(-t, ax, ay) / ax                       # ay / ax = t + tl (to ~2**-106)
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
    return _atan2_d(y, x, False)


@_vjit
def atan2_f32(y, x):
    # the double quotient of two floats is accurate to 2**-53: no correction needed
    return np.float32(_atan2_d(np.float64(y), np.float64(x), True))


# --------------------------------------------------------------------------
# erf
# --------------------------------------------------------------------------

# fdlibm s_erf.c's rational approximations: |x| < 0.84375: erf = x + x P(x*x) / Q(x*x);
# [0.84375, 1.25): erx + P(|x| - 1) / Q(|x| - 1); [1.25, 1/0.35) and [1/0.35, 6):
# erfc = exp(-z*z - 0.5625 + (z - |x|)(z + |x|) + R(1/x*x) / S(1/x*x)) / |x|, z = |x| with
# its low 32 bits cleared (z*z exact). The three outer regions share one rational of degree
# (7, 8) whose coefficients are selected per lane; one exp of the sum of the exponents.
_ERX = 8.45062911510467529297e-01
_EFX8 = 1.02703333676410069053e+00
_ERF_PP = (1.28379167095512558561e-01, -3.25042107247001499370e-01, -2.84817495755985104766e-02,
           -5.77027029648944159157e-03, -2.37630166566501626084e-05)
_ERF_QQ = (3.97917223959155352819e-01, 6.50222499887672944485e-02, 5.08130628187576562776e-03,
           1.32494738004321644526e-04, -3.96022827877536812320e-06)
# numerators (degree 7) and denominators (1 + degree 8) of the three outer regions, padded
_ERF_PA = (-2.36211856075265944077e-03, 4.14856118683748331666e-01, -3.72207876035701323847e-01,
           3.18346619901161753674e-01, -1.10894694282396677476e-01, 3.54783043256182359371e-02,
           -2.16637559486879084300e-03, 0.0)
_ERF_QA = (1.06420880400844228286e-01, 5.40397917702171048937e-01, 7.18286544141962662868e-02,
           1.26171219808761642112e-01, 1.36370839120290507362e-02, 1.19844998467991074170e-02,
           0.0, 0.0)
_ERF_RA = (-9.86494403484714822705e-03, -6.93858572707181764372e-01, -1.05586262253232909814e+01,
           -6.23753324503260060396e+01, -1.62396669462573470355e+02, -1.84605092906711035994e+02,
           -8.12874355063065934246e+01, -9.81432934416914548592e+00)
_ERF_SA = (1.96512716674392571292e+01, 1.37657754143519042600e+02, 4.34565877475229228821e+02,
           6.45387271733267880336e+02, 4.29008140027567833386e+02, 1.08635005541779435134e+02,
           6.57024977031928170135e+00, -6.04244152148580987438e-02)
_ERF_RB = (-9.86494292470009928597e-03, -7.99283237680523006574e-01, -1.77579549177547519889e+01,
           -1.60636384855821916062e+02, -6.37566443368389627722e+02, -1.02509513161107724954e+03,
           -4.83519191608651397019e+02, 0.0)
_ERF_SB = (3.03380607434824582924e+01, 3.25792512996573918826e+02, 1.53672958608443695994e+03,
           3.19985821950859553908e+03, 2.55305040643316442583e+03, 4.74528541206955367215e+02,
           -2.24409524465858183362e+01, 0.0)
(_PP0, _PP1, _PP2, _PP3, _PP4) = _ERF_PP
(_QQ1, _QQ2, _QQ3, _QQ4, _QQ5) = _ERF_QQ
(_PA0, _PA1, _PA2, _PA3, _PA4, _PA5, _PA6, _PA7) = _ERF_PA
(_QA1, _QA2, _QA3, _QA4, _QA5, _QA6, _QA7, _QA8) = _ERF_QA
(_RA0, _RA1, _RA2, _RA3, _RA4, _RA5, _RA6, _RA7) = _ERF_RA
(_SA1, _SA2, _SA3, _SA4, _SA5, _SA6, _SA7, _SA8) = _ERF_SA
(_RB0, _RB1, _RB2, _RB3, _RB4, _RB5, _RB6, _RB7) = _ERF_RB
(_SB1, _SB2, _SB3, _SB4, _SB5, _SB6, _SB7, _SB8) = _ERF_SB


@_vjit
def _pick(rb, rc, pb, pc, pd):
    """The coefficient of the lane's region: pb (|x| < 1.25), pc (< 1/0.35) or pd."""
    return pb if rb else (pc if rc else pd)


@_vjit
def _exp_core(t):
    """exp(t) for t in [-700, 700] (no special values), ~0.5 ulp."""
    k = fma(t, _LOG2E, _SHIFT) - _SHIFT
    r = fma(-k, _LN2, t)
    r = fma(-k, _LN2_LO53, r)
    return (fma(r * r, _exp_poly13(r), r) + 1.0) * _pow2(k)


@_vjit
def erf_f64(x):
    a = abs(x)
    # |x| < 0.84375
    z = x * x
    pr = fma(z, fma(z, fma(z, fma(z, _PP4, _PP3), _PP2), _PP1), _PP0)
    qr = fma(z, fma(z, fma(z, fma(z, fma(z, _QQ5, _QQ4), _QQ3), _QQ2), _QQ1), 1.0)
    small = x + x * (pr / qr)
    small = small if a >= 3.725290298461914e-09 else 0.125 * (8.0 * x + _EFX8 * x)  # < 2**-28
    # 0.84375 <= |x| < 6 (beyond, erfc(6) ~ 2e-17 rounds 1 - erfc to 1)
    ac = min(a, 6.0)
    rb = ac < 1.25
    rc = ac < 2.857142857142857
    s = (ac - 1.0) if rb else 1.0 / (ac * ac)
    num = _pick(rb, rc, _PA7, _RA7, _RB7)
    num = fma(num, s, _pick(rb, rc, _PA6, _RA6, _RB6))
    num = fma(num, s, _pick(rb, rc, _PA5, _RA5, _RB5))
    num = fma(num, s, _pick(rb, rc, _PA4, _RA4, _RB4))
    num = fma(num, s, _pick(rb, rc, _PA3, _RA3, _RB3))
    num = fma(num, s, _pick(rb, rc, _PA2, _RA2, _RB2))
    num = fma(num, s, _pick(rb, rc, _PA1, _RA1, _RB1))
    num = fma(num, s, _pick(rb, rc, _PA0, _RA0, _RB0))
    den = _pick(rb, rc, _QA8, _SA8, _SB8)
    den = fma(den, s, _pick(rb, rc, _QA7, _SA7, _SB7))
    den = fma(den, s, _pick(rb, rc, _QA6, _SA6, _SB6))
    den = fma(den, s, _pick(rb, rc, _QA5, _SA5, _SB5))
    den = fma(den, s, _pick(rb, rc, _QA4, _SA4, _SB4))
    den = fma(den, s, _pick(rb, rc, _QA3, _SA3, _SB3))
    den = fma(den, s, _pick(rb, rc, _QA2, _SA2, _SB2))
    den = fma(den, s, _pick(rb, rc, _QA1, _SA1, _SB1))
    den = fma(den, s, 1.0)
    ratio = num / den
    zt = bits_f64(f64_bits(ac) & np.uint64(0xffffffff00000000))
    erfc = _exp_core((-zt * zt - 0.5625) + ((zt - ac) * (zt + ac) + ratio)) / ac
    big = (_ERX + ratio) if rb else 1.0 - erfc
    res = _copysign(big, x) if a >= 0.84375 else small
    return res if x == x else x


# float32 erf in double without divisions: erf(x) / x as a polynomial in x*x on [0, 2] and
# erfc(x) exp(x*x) as one in x - 2.96 on [2, 3.92] (beyond, erf rounds to +-1): weighted
# least-squares fits on Chebyshev nodes (numpy.polynomial.chebyshev.chebfit, degrees 11 and 8),
# errors 2**-34 and 2**-33 relative to erf.
_ERF32_A = (1.128379167076186, -0.3761263866080235, 0.11283788511681882, -0.026866017787027435,
            0.005223600469891116, -0.0008542839240880986, 0.00012004395106930932,
            -1.461044818968987e-05, 1.5132320274112885e-06, -1.2514986903037993e-07,
            7.1901976863288e-09, -2.0844691602279549e-10)
_ERF32_B = (0.18120174569543196, -0.05566479127555132, 0.016433871632034382,
            -0.004680954076267141, 0.00128990512336359, -0.00034278405176451553,
            8.941381813327248e-05, -2.572646715426493e-05, 6.189817745556125e-06)
(_EA0, _EA1, _EA2, _EA3, _EA4, _EA5, _EA6, _EA7, _EA8, _EA9, _EA10, _EA11) = _ERF32_A
(_EB0, _EB1, _EB2, _EB3, _EB4, _EB5, _EB6, _EB7, _EB8) = _ERF32_B


@_vjit
def erf_f32(x):
    xd = np.float64(x)
    a = abs(xd)
    z = xd * xd
    p = fma(z, _EA11, _EA10)
    p = fma(p, z, _EA9)
    p = fma(p, z, _EA8)
    p = fma(p, z, _EA7)
    p = fma(p, z, _EA6)
    p = fma(p, z, _EA5)
    p = fma(p, z, _EA4)
    p = fma(p, z, _EA3)
    p = fma(p, z, _EA2)
    p = fma(p, z, _EA1)
    p = fma(p, z, _EA0)
    small = xd * p
    ac = min(a, 3.92)
    t = ac - 2.96
    q = fma(t, _EB8, _EB7)
    q = fma(q, t, _EB6)
    q = fma(q, t, _EB5)
    q = fma(q, t, _EB4)
    q = fma(q, t, _EB3)
    q = fma(q, t, _EB2)
    q = fma(q, t, _EB1)
    q = fma(q, t, _EB0)
    big = _copysign(fma(-_exp_f32d(-ac * ac), q, 1.0), xd)
    res = small if a < 2.0 else big
    return np.float32(res if x == x else xd)


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
    k1 = np.floor(k * 0.5)                  # 2**k as two normal factors: one rounding
    res = (hi + lo) * _pow2(k1) * _pow2(k - k1)
    return res if x == x else x


@_vjit
def exp2_f32(x):
    xd = np.float64(x)
    xc = min(max(xd, -160.0), 130.0)
    k = (xc + _SHIFT) - _SHIFT
    r = (xc - k) * _LN2
    # degree 8 Taylor on |r| <= ln2/2: truncation ~2**-32
    p = 1.0 / 40320.0
    p = fma(p, r, 1.0 / 5040.0)
    p = fma(p, r, 1.0 / 720.0)
    p = fma(p, r, 1.0 / 120.0)
    p = fma(p, r, 1.0 / 24.0)
    p = fma(p, r, 1.0 / 6.0)
    p = fma(p, r, 0.5)
    p = fma(p, r, 1.0)
    p = fma(p, r, 1.0)
    res = np.float32(p * _pow2(k))
    return res if x == x else x


@_vjit
def _log_parts(x):
    """(k, hi, lo): log(x) = k ln2 + hi + lo (hi + lo to ~2**-60 relative) for a positive
    finite x, denormals included (fdlibm e_log2.c's split of log(1 + f), with an exact
    Fast2Sum for f - f*f/2 instead of clearing low bits)."""
    sub = x < 2.2250738585072014e-308
    xs = x * 18014398509481984.0 if sub else x
    k, z = _split(f64_bits(xs))
    k = k - 54.0 if sub else k
    f = z - 1.0
    s = f / (2.0 + f)
    z2 = s * s
    w = z2 * z2
    t1 = w * fma(w, fma(w, _LG6, _LG4), _LG2)
    t2 = z2 * fma(w, fma(w, fma(w, _LG7, _LG5), _LG3), _LG1)
    R = t2 + t1
    hfsq = 0.5 * f * f
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
    w = kh + vh                             # TwoSum: either may be the larger
    wb = w - kh
    e = (kh - (w - wb)) + (vh - wb)
    return _log_specials(x, w + (e + (kl + vl)))


@_vjit
def _log_f32parts(xd):
    """(k, ln z) for a positive double xd = 2**k z, ln z to ~2**-35 relative."""
    k, z = _split(f64_bits(xd))
    f = z - 1.0
    s = f / (2.0 + f)
    z2 = s * s
    p = fma(z2, 1.0 / 13.0, 1.0 / 11.0)
    p = fma(p, z2, 1.0 / 9.0)
    p = fma(p, z2, 1.0 / 7.0)
    p = fma(p, z2, 1.0 / 5.0)
    p = fma(p, z2, 1.0 / 3.0)
    return k, fma(2.0 * s * z2, p, 2.0 * s)


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
    s = hi + md
    sb = s - hi
    e = (hi - (s - sb)) + (md - sb)
    s = s + (e + (lo + m * dl))
    km = k - 1.0
    k1 = np.floor(km * 0.5)
    return s * _pow2(k1) * _pow2(km - k1)


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
    f = z - 1.0
    s = f / (2.0 + f)
    z2 = s * s
    w = z2 * z2
    t1 = w * fma(w, fma(w, _LG6, _LG4), _LG2)
    t2 = z2 * fma(w, fma(w, fma(w, _LG7, _LG5), _LG3), _LG1)
    R = t2 + t1
    hfsq = 0.5 * f * f
    return k * _LN2_HI - ((hfsq - (s * (hfsq + R) + (k * _LN2_LO + c))) - f)


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
    zh = ac * ac
    zl = fma(ac, ac, -zh)
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
    ph = t * t
    pl = fma(t, t, -ph)
    y = (t + t) + ph
    yl = (((t + t) - y) + ph) + pl
    sh = np.sqrt(y)
    sl = (fma(-sh, sh, y) + yl) / (sh + sh)
    sl = sl if y > 0.0 else 0.0
    w = sh + t
    u1, c1 = _onep(w, ((sh - w) + t) + sl)
    # 2 <= x < 2**28: log(x + sqrt(x*x - 1))
    xc = min(max(x, 2.0), 268435456.0)
    qh = xc * xc
    ql = fma(xc, xc, -qh)
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
    k, ls = _log_f32parts(u)
    return fma(k, _LN2, ls) + (w - (u - 1.0)) / u


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
    R = p / q
    s = np.sqrt(t)
    sl = fma(-s, s, t) / (s + s)
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


@_vjit
def asin_f32(x):
    return np.float32(asin_f64(np.float64(x)))


@_vjit
def acos_f32(x):
    return np.float32(acos_f64(np.float64(x)))
