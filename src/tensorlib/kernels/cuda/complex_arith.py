"""Complex arithmetic, comparison, part and logical Triton helpers on (re, im) pairs
(complex_math.py is the facade kernels import).
"""
import triton.language as tl

from tensorlib.kernels.cuda.launch import helper_mode, helper_part

_MODE, jit = helper_mode(globals())  # launch.helper_part() loads this file once per mode
_b = helper_part("complex_base", _MODE)  # constants and small pieces of the same mode
libdevice, fdiv_ieee, neg, _rint = _b.libdevice, _b.fdiv_ieee, _b.neg, _b._rint
_isnan, _isinf, _isfinite = _b._isnan, _b._isinf, _b._isfinite
_INF, _full, _nan, _sel = _b._INF, _b._full, _b._nan, _b._sel
_wide, _narrow = _b._wide, _b._narrow

__all__ = [
    "c_add", "c_sub", "c_mul", "c_eq", "c_ne", "c_truth",
    "c_div", "c_scale", "c_negative", "c_abs", "c_sign", "c_reciprocal", "c_square",
    "c_conj", "c_real", "c_imag", "c_isnan", "c_isinf", "c_isfinite",
    "c_logical_and", "c_logical_or", "c_logical_xor", "c_logical_not", "c_round",
]


# ---------------------------------------------------------------- arithmetic

@jit
def c_add(ar, ai, br, bi):
    return ar + br, ai + bi


@jit
def c_sub(ar, ai, br, bi):
    return ar - br, ai - bi


@jit
def c_mul(ar, ai, br, bi):
    # (a+bi)(c+di) = (ac - bd) + (ad + bc)i, no special-value recovery (Numba's, NumPy's)
    return ar * br - ai * bi, ar * bi + ai * br


@jit
def c_eq(ar, ai, br, bi):
    return (ar == br) & (ai == bi)


@jit
def c_ne(ar, ai, br, bi):
    return (ar != br) | (ai != bi)


@jit
def c_truth(r, i):
    """NumPy truthiness: either part non-zero (nan counts)."""
    return (r != 0) | (i != 0)


@jit
def c_scale(alr, ali, br, bi):
    # add / subtract's alpha * other: a real alpha scales each part (1 * (0+inf j) stays inf j)
    fr, fi = c_mul(alr, ali, br, bi)
    real = ali == 0
    return tl.where(real, alr * br, fr), tl.where(real, alr * bi, fi)


@jit
def _cdiv_simple(ar, ai, br, bi):
    # npymath's cdiv (npy_cpow's): Smith's algorithm, 0/0 by parts
    abr = tl.abs(br)
    abi = tl.abs(bi)
    one = _full(ar, 1.0)
    rat1 = fdiv_ieee(bi, br)
    scl1 = fdiv_ieee(one, br + bi * rat1)
    r1 = (ar + ai * rat1) * scl1
    i1 = (ai - ar * rat1) * scl1
    rat2 = fdiv_ieee(br, bi)
    scl2 = fdiv_ieee(one, bi + br * rat2)
    r2 = (ar * rat2 + ai) * scl2
    i2 = (ai * rat2 - ar) * scl2
    zr = fdiv_ieee(ar, abr)
    zi = fdiv_ieee(ai, abi)
    first = abr >= abi
    zero = first & (abr == 0) & (abi == 0)
    re, im = _sel(first, r1, i1, r2, i2)
    return _sel(zero, zr, zi, re, im)


@jit
def c_div(ar, ai, br, bi):
    """NumPy's complex divide loop (the CPU's _cdiv), nan special cases included."""
    arn = _isnan(ar)
    ain = _isnan(ai)
    brn = _isnan(br)
    bin_ = _isnan(bi)
    inf_part = ((~arn) & _isinf(ar)) | ((~ain) & _isinf(ai))
    special = ((~brn) & (~bin_) & (arn | ain)
               & ((inf_part & ((br != 0) | (bi != 0))) | (_isinf(br) & _isinf(bi))))
    nan = tl.where(arn, ar, ai)
    abr = tl.abs(br)
    abi = tl.abs(bi)
    zero = (abr >= abi) & (abr == 0) & (abi == 0)
    keep = (arn & ((ai == 0) | ain)) | ((ar == 0) & ain)  # 0/0 with a nan part: that nan
    kr = tl.where(arn, ar, ai)
    ki = tl.where(ain, ai, ar)
    re, im = _cdiv_simple(ar, ai, br, bi)
    re, im = _sel(zero & keep, kr, ki, re, im)
    return _sel(special, nan, nan, re, im)


@jit
def c_reciprocal(ar, ai):
    # Smith's method with numerator 1 (the CPU's _crecip)
    one = _full(ar, 1.0)
    r1 = fdiv_ieee(ai, ar)
    d1 = ar + ai * r1
    r2 = fdiv_ieee(ar, ai)
    d2 = ar * r2 + ai
    first = tl.abs(ai) <= tl.abs(ar)
    return _sel(first, fdiv_ieee(one, d1), fdiv_ieee(neg(r1), d1),
                fdiv_ieee(r2, d2), fdiv_ieee(neg(one), d2))


@jit
def c_square(r, i):
    return r * r - i * i, r * i + i * r


@jit
def c_negative(r, i):
    return neg(r), neg(i)


@jit
def c_conj(r, i):
    return r, neg(i)


@jit
def c_real(r, i):
    return r


@jit
def c_imag(r, i):
    return i


@jit
def c_abs(r, i):
    if r.dtype.is_fp64():
        return libdevice.hypot(r, i)
    else:  # as the CPU: float64 cannot overflow, one rounding (glibc's hypotf does the same)
        x, y = _wide(r), _wide(i)
        m = _narrow(r, libdevice.sqrt(x * x + y * y))
        return tl.where(_isinf(x) | _isinf(y), _full(r, _INF), m)


@jit
def c_sign(r, i):
    # z / |z| with NumPy 2's infinities: (+-1, 0) or (0, +-1) for one infinite part
    m = libdevice.hypot(r, i)
    nan = _nan(r)
    zero = _full(r, 0.0)
    one = _full(r, 1.0)
    re = fdiv_ieee(r, m)
    im = fdiv_ieee(i, m)
    re, im = _sel(m == 0, zero, zero, re, im)
    inf_r = tl.where(_isinf(i), nan, tl.where(r > 0, one, neg(one)))
    inf_re = tl.where(_isinf(r), inf_r, zero)
    inf_im = tl.where(_isinf(r), tl.where(_isinf(i), nan, zero), tl.where(i > 0, one, neg(one)))
    re, im = _sel(_isinf(m), inf_re, inf_im, re, im)
    return _sel(_isnan(m), nan, nan, re, im)


@jit
def c_isnan(r, i):
    return _isnan(r) | _isnan(i)


@jit
def c_isinf(r, i):
    return _isinf(r) | _isinf(i)


@jit
def c_isfinite(r, i):
    return _isfinite(r) & _isfinite(i)


@jit
def c_logical_and(ar, ai, br, bi):
    return c_truth(ar, ai) & c_truth(br, bi)


@jit
def c_logical_or(ar, ai, br, bi):
    return c_truth(ar, ai) | c_truth(br, bi)


@jit
def c_logical_xor(ar, ai, br, bi):
    return c_truth(ar, ai) != c_truth(br, bi)


@jit
def c_logical_not(r, i):
    return c_truth(r, i) == 0


@jit
def c_round(r, i):
    return _rint(r), _rint(i)
