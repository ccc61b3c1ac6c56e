"""Branch-free float32 / float64 transcendental kernels that LLVM vectorizes.

Numba lowers ``np.exp`` & co. on a float to one scalar libm call per element, which keeps the
generated pointwise loops (kernels/cpu/pointwise.py) from vectorizing. The helpers here are
plain arithmetic instead: range reduction, a polynomial, and special values (nan, +-inf,
+-0.0, overflow, underflow, denormals) resolved with selects, so a loop calling them becomes
SIMD code (``<4 x double>`` / ``<8 x float>`` on AVX2). ``scalar_math`` routes the real
float cases of exp, exp2, expm1, log, log2, log10, log1p, sin, cos, tan, asin, acos, atan,
atan2, sinh, cosh, tanh, asinh, acosh, atanh, sigmoid, erf and power here; complex types
keep their helpers there.

float32 computes internally in float64 (one conversion each way, exact), except tanh, the
logs (log, log1p, log2, log10), asinh / acosh / atanh and the block fast path of sin / cos
(|x| < 2**20: Cody-Waite reduction to a float32 pair, trig.py), whose float64 versions cost
2-4x NumPy's SIMD loops: they compute
in float32 (16 lanes per 512-bit register instead of 8, no double division) with error-free
steps (Fast2Sum, fma residuals) where the sum would round twice. The double-precision
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
multiple of pi/2, 2**-61 at 5.3e255, is right to the last bit). A Cody-Waite reduction is
cheaper but needs a fallback for large arguments, and a fallback branch (or a libm call) in the
loop body stops vectorization (an if-converted branch runs both sides): the dense CPU loops run
it per block whose elements are all below a bound instead (ops.yaml ``block_fast``: float32
below 2**20, float64 below 2**28, where it is 2.3-2.5x faster: 1e5 float64 sin 539 -> 211 us,
tan 740 -> 310 us per core).

float32 pow has two forms of its double core (power.py): small tables (1/c and log2 c per
interval of the mantissa, 2**(j/32)) where per-lane table loads are cheap, and the table-free
series elsewhere (``base.GATHERS``: ``fast`` on Intel CPUs the Gather Data Sampling fix leaves
alone, ``medium`` on AMD, ``slow`` where the fix microcodes gathers; ``base.TABLE_LOOKUPS`` is
``fast`` alone); so have float64 pow (log|x| as a double-double from 256 intervals, exp from
2**(j/128) as double-doubles: no division, ~0.51 ulp; its tables replace divisions, so it takes
them at ``medium`` too, ``base.TABLES_OVER_DIVISIONS``), exp and exp2 (that exp), log (that
log table), sinh / cosh (two 2**(+-j/128) tables: e**a and e**-a without a division), and the
log of a corrected argument u (1 + c) that float64 asinh / acosh / atanh / log1p end with
(``exp_log._log_uc``: pow's log table, one rounding: ~0.50 ulp); each pair is tested on every
machine. pow by a half-integer in [0, 8] has a block form of its own in both widths
(``pow_halves_f32`` / ``pow_halves_f64``: products and a corrected square root, no log or
exp; float64's as double-doubles rounded once, 0.500 ulp sampled), and where the base is
positive and finite and the exponent finite and none of the value forms' (2, -1, 1/2), pow has
an ordinary block form (``pow_ordinary_f32`` / ``_f64``): the general form's exp step alone,
the same bits without C99's cases (1e5 per core on Zen 4: float32 x ** y 258 -> 211 us, float64
500 -> 445); so have log, log2 and log10 for positive normal arguments (``log_ordinary_f32``
& co.: no denormal scaling or special values). The tables are
exact rationals rounded once when the module loads (~1.7 ms; test_vector_math checks every
entry). Those four also divide only once or not at all: their correction terms (relative size <=
2**-52) take 1/x from a float32 division refined by one Newton step (``base._rcp_corr``), as the
shared divider was their bottleneck (acosh: two square roots and five double divisions per
element; 1e5 per core 470 -> 327 us); so do float64 asin / acos (their square root's correction,
and R = P / Q from a reciprocal refined twice, ``base._rcp2``, whose error their result damps by
<= 0.07: 1e5 per core 209 -> 146 us).

Everything here is compiled on its own (once per signature, cached on disk) by ``_vjit``, with
LLVM's ``alwaysinline`` on the compiled function: a kernel calling it links that code and LLVM
inlines it there (its cost model alone refuses bodies this large, and the call left behind
keeps the loop scalar), then vectorizes the loop. Inlining in Numba's IR instead re-types the
whole body inside every kernel: 2-8 s of compile time per kernel. No helper branches or
calls out; ``fastmath`` stays off (results do not depend on compiler reassociation).
Generated kernels are keyed on the bytes of these files (scalar_math.HELPER_FILES lists them;
tests/kernels/cpu/test_vector_math.py checks the list is complete).

The parts: base.py (``_vjit``, ``fma``, bit casts, constants, exact 2**k / sign / TwoSum
steps), exp_log.py (exp, expm1, exp2, log, log1p, log2, log10), hyperbolic.py (tanh, sigmoid,
sinh, cosh, asinh, acosh, atanh), trig.py (sin, cos, tan), inverse_trig.py (atan, atan2, asin,
acos), power.py (pow), erf.py (erf); this module re-exports their kernels.

Measured (tests/kernels/cpu/test_vector_math.py, max over ~180 K samples per function incl.
random bit patterns; the newer ones over ~800 K): float32 <= 0.51 ulp for all functions but
tanh and the logs (pow, atan2 included; NumPy's powf: 1.0, arctan2: 3.1; NumPy's float32 exp2
2.5, sinh 1.5, cosh 2.0, arcsin 3.0, arccos 2.0), float32 tanh 1.067 ulp (every float32, NumPy's: 1.37);
float32 log 0.876, log1p 0.883, log10 0.892, log2 1.007 ulp, exhaustive over every float32
argument with a finite result (scripts/check_log_f32.py; NumPy's float32 log: 3.17, log2 1.9,
log10 2.1); float64 exp 0.96, log 0.73, expm1 1.72, log1p ~1, sin 0.76, cos 0.79, tan 0.85,
atan 0.75, atan2 0.81 (NumPy's: 0.77), erf 0.90, tanh 2.5 ulp, pow 0.83 (NumPy's: 0.69);
exp2 0.74, log2 0.72, log10 0.67, sinh 0.73, cosh 0.60, asinh 0.77, acosh 0.77, atanh 0.85,
asin 0.63, acos 0.61 (NumPy's: 0.74, 0.51, 0.59, 0.83, 0.75, 0.71, 0.56, 0.59, 0.81, 0.81); the
table forms: pow 0.52 (|y log x| up to 745), exp 0.51, exp2 0.52, log 0.50, sinh 0.56, cosh
0.51, asinh / acosh 0.50, atanh 0.50 (sampled, normal results).
"""

from .base import bits_f32, bits_f64, f32_bits, f64_bits, fma
from .exp_log import (exp2_f32, exp2_f64, exp_f32, exp_f64, expm1_f32, expm1_f64, log10_f32,
    log10_f64, log10_ordinary_f32, log10_ordinary_f64, log1p_f32, log1p_f64, log2_f32, log2_f64,
    log2_ordinary_f32, log2_ordinary_f64, log_f32, log_f64, log_ordinary_f32, log_ordinary_f64)
from .hyperbolic import (acosh_f32, acosh_f64, asinh_f32, asinh_f64, atanh_f32, atanh_f64,
    cosh_f32, cosh_f64, sigmoid_f32, sigmoid_f64, sinh_f32, sinh_f64, tanh_f32, tanh_f64)
from .trig import (TRIG_SHORT_BOUND, TRIG_SHORT_BOUND_F64, cos_f32, cos_f64, cos_short_f32,
    cos_short_f64, sin_f32, sin_f64, sin_short_f32, sin_short_f64, tan_f32, tan_f64,
    tan_short_f32, tan_short_f64)
from .inverse_trig import (acos_f32, acos_f64, asin_f32, asin_f64, atan2_f32, atan2_f64, atan_f32,
    atan_f64)
from .power import (POW_HALVES_MAX, pow_f32, pow_f64, pow_halves_f32, pow_halves_f64,
    pow_ordinary_f32, pow_ordinary_f64)
from .erf import erf_f32, erf_f64
