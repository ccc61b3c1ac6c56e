"""Math helpers: the real float32 / float64 cases of the transcendental functions go to
vector_math's branch-free kernels, complex types to complex_math, the rest to NumPy / libm."""
import math

import numpy as np
from numba import types

from .. import vector_math as _vm
from .plumbing import _define, _kind, _like
from .complex_math import (_c_acos, _c_acosh, _c_asin, _c_asinh, _c_atan, _c_atanh, _c_cos,
    _c_cosh, _c_exp, _c_exp2, _c_expm1, _c_log, _c_log10, _c_log2, _c_sin, _c_sinh, _c_sqrt,
    _c_tan, _c_tanh, _crecip, _mk_cfunc)


# --------------------------------------------------------------------------
# math (float32 stays float32: Numba maps np.* on float32 to the libm f-variants)
# --------------------------------------------------------------------------

# exp, exp2, expm1, log, log2, log10, log1p, sin, cos, tan, asin, acos, atan, atan2, sinh,
# cosh, tanh, asinh, acosh, atanh, sigmoid, erf and power on float32 / float64 use
# the branch-free kernels of vector_math (the loops calling them vectorize; libm calls do
# not). Complex types keep complex_math's helpers.

def _mk_vfunc(f32, f64, complex_fn):
    def make(t):
        if t == types.float32:
            return lambda a: f32(a)
        if t == types.float64:
            return lambda a: f64(a)
        if _kind(t) == "c" and complex_fn is not None:
            return complex_fn
        return None
    return make


def _mk_ufunc1(fn, complex_ok=True):
    def make(t):
        k = _kind(t)
        if k == "f" or (k == "c" and complex_ok):
            return lambda a: fn(a)
        return None
    return make


def _mk_ufunc2(fn):
    def make(t):
        if _kind(t) == "f":
            return lambda a, b: fn(a, b)
        return None
    return make


def _mk_rounding(fn, complex_ok=False):
    def make(t):
        k = _kind(t)
        if k in ("b", "i", "u"):
            return lambda a: a  # integers are already integral
        if k == "f" or (k == "c" and complex_ok):
            return lambda a: fn(a)
        return None
    return make


def _mk_rsqrt(t):
    k = _kind(t)
    if k == "f":
        return lambda a: _like(a, 1.0) / np.sqrt(a)
    if k == "c":
        return lambda a: _crecip(_c_sqrt(a))
    return None


def _mk_sigmoid(t):
    if t == types.float32:
        return lambda a: _vm.sigmoid_f32(a)
    if t == types.float64:
        return lambda a: _vm.sigmoid_f64(a)
    if _kind(t) != "f":
        return None

    def impl(a):
        one = _like(a, 1.0)
        if a >= 0:
            return one / (one + np.exp(-a))
        e = np.exp(a)  # a < 0 (or nan): no overflow
        return e / (one + e)
    return impl


def _mk_atan2(t):
    if t == types.float32:
        return lambda a, b: _vm.atan2_f32(a, b)
    if t == types.float64:
        return lambda a, b: _vm.atan2_f64(a, b)
    if _kind(t) == "f":
        return lambda a, b: np.arctan2(a, b)
    return None


def _mk_erf(t):
    if t == types.float32:
        return lambda a: _vm.erf_f32(a)
    if t == types.float64:
        return lambda a: _vm.erf_f64(a)
    if _kind(t) == "f":
        return lambda a: math.erf(a)
    return None


def _mk_logaddexp(t):
    if _kind(t) != "f":
        return None

    def impl(a, b):
        # npy_logaddexp
        if a == b:  # also equal infinities, without inf - inf
            return a + _like(a, 0.6931471805599453)
        d = a - b
        if d > 0:
            return a + np.log1p(np.exp(-d))
        if d <= 0:
            return b + np.log1p(np.exp(d))
        return d  # nan
    return impl


exp = _define("exp", 1, _mk_vfunc(_vm.exp_f32, _vm.exp_f64, _c_exp), inline="always")
exp2 = _define("exp2", 1, _mk_vfunc(_vm.exp2_f32, _vm.exp2_f64, _c_exp2), inline="always")
expm1 = _define("expm1", 1, _mk_vfunc(_vm.expm1_f32, _vm.expm1_f64, _c_expm1), inline="always")
log = _define("log", 1, _mk_vfunc(_vm.log_f32, _vm.log_f64, _c_log), inline="always")
log2 = _define("log2", 1, _mk_vfunc(_vm.log2_f32, _vm.log2_f64, _c_log2), inline="always")
log10 = _define("log10", 1, _mk_vfunc(_vm.log10_f32, _vm.log10_f64, _c_log10), inline="always")
log1p = _define("log1p", 1, _mk_vfunc(_vm.log1p_f32, _vm.log1p_f64, lambda a: np.log1p(a)), inline="always")
# Block fast forms of log / log2 / log10 (ops.yaml block_fast) for positive normal finite
# arguments: the same steps without the denormal scaling and the special values (the same bits).


def _mk_positive_normal(t):
    if t in (types.float32, types.float64):
        npt = np.float32 if t == types.float32 else np.float64
        tiny, inf = npt(np.finfo(npt).tiny), npt(np.inf)
        return lambda a: (a >= tiny) & (a < inf)  # False for nan
    return lambda a: False


positive_normal = _define("positive_normal", 1, _mk_positive_normal)
# where it can hold (kernels/cpu/pointwise.py)
positive_normal.block_dtypes = frozenset(("float32", "float64"))
log_ordinary = _define("log_ordinary", 1, _mk_vfunc(_vm.log_ordinary_f32, _vm.log_ordinary_f64,
                                                    _c_log), inline="always")
log2_ordinary = _define("log2_ordinary", 1, _mk_vfunc(_vm.log2_ordinary_f32,
                                                      _vm.log2_ordinary_f64, _c_log2),
                        inline="always")
log10_ordinary = _define("log10_ordinary", 1, _mk_vfunc(_vm.log10_ordinary_f32,
                                                        _vm.log10_ordinary_f64, _c_log10),
                         inline="always")
sqrt = _define("sqrt", 1, _mk_cfunc(np.sqrt, _c_sqrt))
rsqrt = _define("rsqrt", 1, _mk_rsqrt)
sin = _define("sin", 1, _mk_vfunc(_vm.sin_f32, _vm.sin_f64, _c_sin), inline="always")
cos = _define("cos", 1, _mk_vfunc(_vm.cos_f32, _vm.cos_f64, _c_cos), inline="always")
tan = _define("tan", 1, _mk_vfunc(_vm.tan_f32, _vm.tan_f64, _c_tan), inline="always")
# Block fast forms of sin / cos / tan (ops.yaml block_fast) for arguments below
# vector_math.TRIG_SHORT_BOUND (float32) / TRIG_SHORT_BOUND_F64: float32 sin / cos in float32
# arithmetic (within 1 ulp, not always the plain path's bits), float32 tan and float64 sin / cos
# / tan with a cheaper reduction (Cody-Waite; the same polynomials).


def _mk_trig_short(t):
    if t == types.float32:
        bound = np.float32(_vm.TRIG_SHORT_BOUND)
        return lambda a: abs(a) < bound  # False for nan and inf
    if t == types.float64:
        bound64 = _vm.TRIG_SHORT_BOUND_F64
        return lambda a: abs(a) < bound64
    return lambda a: False


trig_short = _define("trig_short", 1, _mk_trig_short)
# where it can hold (kernels/cpu/pointwise.py)
trig_short.block_dtypes = frozenset(("float32", "float64"))
sin_short = _define("sin_short", 1, _mk_vfunc(_vm.sin_short_f32, _vm.sin_short_f64, _c_sin),
                    inline="always")
cos_short = _define("cos_short", 1, _mk_vfunc(_vm.cos_short_f32, _vm.cos_short_f64, _c_cos),
                    inline="always")
tan_short = _define("tan_short", 1, _mk_vfunc(_vm.tan_short_f32, _vm.tan_short_f64, _c_tan),
                    inline="always")
asin = _define("asin", 1, _mk_vfunc(_vm.asin_f32, _vm.asin_f64, _c_asin), inline="always")
acos = _define("acos", 1, _mk_vfunc(_vm.acos_f32, _vm.acos_f64, _c_acos), inline="always")
atan = _define("atan", 1, _mk_vfunc(_vm.atan_f32, _vm.atan_f64, _c_atan), inline="always")
atan2 = _define("atan2", 2, _mk_atan2, inline="always")
sinh = _define("sinh", 1, _mk_vfunc(_vm.sinh_f32, _vm.sinh_f64, _c_sinh), inline="always")
cosh = _define("cosh", 1, _mk_vfunc(_vm.cosh_f32, _vm.cosh_f64, _c_cosh), inline="always")
tanh = _define("tanh", 1, _mk_vfunc(_vm.tanh_f32, _vm.tanh_f64, _c_tanh), inline="always")
asinh = _define("asinh", 1, _mk_vfunc(_vm.asinh_f32, _vm.asinh_f64, _c_asinh), inline="always")
acosh = _define("acosh", 1, _mk_vfunc(_vm.acosh_f32, _vm.acosh_f64, _c_acosh), inline="always")
atanh = _define("atanh", 1, _mk_vfunc(_vm.atanh_f32, _vm.atanh_f64, _c_atanh), inline="always")
sigmoid = _define("sigmoid", 1, _mk_sigmoid, inline="always")
erf = _define("erf", 1, _mk_erf, inline="always")
floor = _define("floor", 1, _mk_rounding(np.floor))
ceil = _define("ceil", 1, _mk_rounding(np.ceil))
trunc = _define("trunc", 1, _mk_rounding(np.trunc))
round_half_even = _define("round_half_even", 1, _mk_rounding(np.rint, complex_ok=True))
hypot = _define("hypot", 2, _mk_ufunc2(np.hypot))
logaddexp = _define("logaddexp", 2, _mk_logaddexp)
