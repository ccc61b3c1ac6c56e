"""Constants and small pieces shared by the complex Triton helpers (complex_math.py is the
facade kernels import; its docstring says what the helpers mirror), and the real helpers they
build on, bound from the scalar helper parts of the same mode.
"""
import triton.language as tl

from tensorlib.kernels.cuda.launch import helper_mode, helper_part, libdevice_for

_MODE, jit = helper_mode(globals())  # launch.helper_part() loads this file once per mode
libdevice = libdevice_for(_MODE)
_bits = helper_part("scalar_bits", _MODE)
fdiv_ieee = _bits.fdiv_ieee
_sqrt_ieee = _bits._sqrt_ieee
_isinf = _bits.isinf
_isfinite = _bits.isfinite
_signbit = _bits.signbit
_rint = helper_part("scalar_transcend", _MODE).round_half_even
neg = _bits.neg  # -x with the right zero sign on every Triton version

_INF = tl.constexpr(float("inf"))
_FLT_MAX = tl.constexpr(3.4028234663852886e38)
_LN2 = tl.constexpr(0.6931471805599453)


# ---------------------------------------------------------------- small pieces

@jit
def _full(x, v):
    return tl.full(x.shape, v, x.dtype)


@jit
def _nan(x):
    # from its bits: a nan constexpr global would differ from itself in Triton's global checks
    if x.dtype.is_fp64():
        return tl.full(x.shape, 0x7FF8000000000000, tl.int64).to(tl.float64, bitcast=True)
    else:
        return tl.full(x.shape, 0x7FC00000, tl.int32).to(tl.float32, bitcast=True)


@jit
def _isnan(x):
    return x != x


@jit
def _copysign(a, b):
    return libdevice.copysign(a, b)


@jit
def _limits(x):
    # (exp cutoff, tanh cutoff, max, tiny, eps) of x's float type (the CPU's _limits)
    if x.dtype.is_fp64():
        return (_full(x, 709.0), _full(x, 354.0), _full(x, 1.7976931348623157e308),
                _full(x, 2.2250738585072014e-308), _full(x, 2.220446049250313e-16))
    else:
        return (_full(x, 88.0), _full(x, 44.0), _full(x, _FLT_MAX),
                _full(x, 1.1754943508222875e-38), _full(x, 1.1920928955078125e-07))


@jit
def _sincos(y, tiny):
    # the sign of a zero / tiny y is kept; nan gives (nan, 1) as the CPU's branch does
    big = tl.abs(y) > tiny
    return tl.where(big, libdevice.sin(y), y), tl.where(big, libdevice.cos(y), _full(y, 1.0))


@jit
def _sel(c, a_re, a_im, b_re, b_im):
    return tl.where(c, a_re, b_re), tl.where(c, a_im, b_im)


@jit
def _wide(x):
    return x.to(tl.float64)


@jit
def _narrow(like, v):
    # a float64 result back to like's component type (round to nearest once)
    if like.dtype.is_fp64():
        return v
    else:
        return v.to(tl.float32)
