"""Math Triton scalar helpers on float32 / float64: libdevice functions (their NumPy shim in
interpret mode), IEEE sqrt, and the composite ones (sigmoid, logaddexp) in the CPU helpers'
forms. scalar_math.py is the facade kernels import.
"""
import triton.language as tl

from tensorlib.kernels.cuda.launch import helper_mode, helper_part, libdevice_for

_MODE, jit = helper_mode(globals())  # launch.helper_part() loads this file once per mode
libdevice = libdevice_for(_MODE)
_bits = helper_part("scalar_bits", _MODE)  # the bit-level helpers of the same mode
fdiv_ieee, _sqrt_ieee, neg = _bits.fdiv_ieee, _bits._sqrt_ieee, _bits.neg

__all__ = [
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh",
    "tanh", "asinh", "acosh", "atanh", "sigmoid", "erf", "floor", "ceil",
    "trunc", "round_half_even", "hypot", "logaddexp",
]


# ---------------------------------------------------------------- math (float32 / float64)

@jit
def exp(a):
    return libdevice.exp(a)


@jit
def exp2(a):
    return libdevice.exp2(a)


@jit
def expm1(a):
    return libdevice.expm1(a)


@jit
def log(a):
    return libdevice.log(a)


@jit
def log2(a):
    return libdevice.log2(a)


@jit
def log10(a):
    return libdevice.log10(a)


@jit
def log1p(a):
    return libdevice.log1p(a)


@jit
def sqrt(a):
    return _sqrt_ieee(a)


@jit
def rsqrt(a):
    return fdiv_ieee(tl.full(a.shape, 1.0, a.dtype), _sqrt_ieee(a))


@jit
def sin(a):
    return libdevice.sin(a)


@jit
def cos(a):
    return libdevice.cos(a)


@jit
def tan(a):
    return libdevice.tan(a)


@jit
def asin(a):
    return libdevice.asin(a)


@jit
def acos(a):
    return libdevice.acos(a)


@jit
def atan(a):
    return libdevice.atan(a)


@jit
def atan2(a, b):
    return libdevice.atan2(a, b)


@jit
def sinh(a):
    return libdevice.sinh(a)


@jit
def cosh(a):
    return libdevice.cosh(a)


@jit
def tanh(a):
    return libdevice.tanh(a)


@jit
def asinh(a):
    return libdevice.asinh(a)


@jit
def acosh(a):
    return libdevice.acosh(a)


@jit
def atanh(a):
    return libdevice.atanh(a)


@jit
def sigmoid(a):
    # the two forms of the CPU helper, each where it cannot overflow
    one = tl.full(a.shape, 1.0, a.dtype)
    pos = fdiv_ieee(one, one + libdevice.exp(neg(a)))
    e = libdevice.exp(a)
    return tl.where(a >= 0, pos, fdiv_ieee(e, one + e))


@jit
def erf(a):
    return tl.erf(a)


@jit
def floor(a):
    if a.dtype.is_floating():
        return tl.floor(a)
    else:
        return a


@jit
def ceil(a):
    if a.dtype.is_floating():
        return tl.ceil(a)
    else:
        return a


@jit
def trunc(a):
    if a.dtype.is_floating():
        return libdevice.trunc(a)
    else:
        return a


@jit
def round_half_even(a):
    if a.dtype.is_floating():
        return libdevice.rint(a)
    else:
        return a


@jit
def hypot(a, b):
    return libdevice.hypot(a, b)


@jit
def logaddexp(a, b):
    # npy_logaddexp: equal values (also equal infinities) avoid inf - inf
    d = a - b
    r = tl.where(d > 0, a + libdevice.log1p(libdevice.exp(neg(d))),
                 tl.where(d <= 0, b + libdevice.log1p(libdevice.exp(d)), d))
    return tl.where(a == b, a + 0.6931471805599453, r)
