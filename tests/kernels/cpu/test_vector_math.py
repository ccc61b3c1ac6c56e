"""The branch-free float32 / float64 transcendental kernels (kernels/cpu/vector_math/), run
through the tensorlib ops (the generated pointwise kernels).

Accuracy: max error in ulps of the result dtype against a reference one level more precise:
float32 against NumPy's float64 function (itself < 1 ulp of float64, i.e. ~2**-29 ulp of
float32), float64 against NumPy's float128 (x87 80-bit long double: glibc's expl/logl/sinl...,
exact argument reduction) where the platform has it; erf (not in NumPy) against a
positive-term series summed in long double. Inputs: uniform samples over each
function's useful range, log-uniform magnitudes over the whole exponent range and random bit
patterns (every exponent, denormals, both signs, nan/inf).

Documented bounds (the max measured error in the comments):

    float32: <= 1 ulp for all but tanh and log2 (measured 0.50 - 0.51 for those computing
                                 in float64: correctly rounded but for a few near-halfway
                                 cases); tanh <= 1.2 (measured 1.020, every float32: it computes in float32;
                                 NumPy's: 1.37); exp and exp2 compute in float32: 0.875 over
                                 every float32 in [-104, 89] / [-150, 128]
                                 (scripts/check_exp_f32.py);
                                 log, log1p, log2, log10 compute in float32,
                                 measured exhaustively over every float32 they take
                                 (scripts/check_log_f32.py): log 0.876, log1p 0.883, log10
                                 0.892 (bound 1), log2 1.007 (bound 1.1; NumPy's float32:
                                 log 3.17, log2 1.9, log10 2.1); sin / cos below
                                 TRIG_SHORT_BOUND compute in float32 (the block fast
                                 form): sin 0.789, cos 0.787 over every float32 below the
                                 bound (scripts/check_trig_short.py; NumPy's: 1.49);
                                 atan, asin, acos compute in float32: 1.381, 1.881,
                                 1.266 over every float32 (bounds 1.4, 1.9, 1.3;
                                 scripts/check_inverse_trig_f32.py; NumPy's: 2.27, 3.12,
                                 2.10 on samples); expm1 too: 1.227 over every
                                 float32 in [-20, 89] (bound 1.25; scripts/check_exp_f32.py;
                                 NumPy's: 2.6 on samples), sinh 1.517, cosh 1.339 over
                                 every float32 below overflow (bound 1.55; NumPy's: 1.52,
                                 2.48 on samples); asinh, acosh, atanh too: 0.888, 0.853,
                                 0.885 over every float32 (bound 1;
                                 scripts/check_hyperbolic_f32.py)
    float64: exp 1, log 1, expm1 2, log1p 2, sin/cos/tan 1, tanh 3, sigmoid 3, and 1 for
             exp2, log2, log10, sinh, cosh, asinh, acosh, atanh, asin, acos
             (measured: exp 0.96, log 0.73, expm1 1.72, log1p ~1, sin 0.76, cos 0.79,
             tan 0.85, atan 0.75, tanh 2.5, erf 0.90 (Python's math.erf: 0.94); the table
             forms (where table loads are cheap: test_float64_forms) of exp, exp2, log,
             sinh, cosh 0.51, 0.52, 0.50, 0.57, 0.52 in the normal range, asinh / acosh /
             atanh 0.50;
             the arithmetic forms over
             ~800 K samples each: exp2 0.74, log2 0.72, log10 0.67, sinh 0.73, cosh 0.60,
             asinh 0.77, acosh 0.77, atanh 0.85, asin 0.63, acos 0.61 (NumPy's: 0.74,
             0.51, 0.59, 0.83, 0.75, 0.71, 0.56, 0.59, 0.81, 0.81))
    pow:     float32 <= 1 ulp (measured: the table form 0.50, the arithmetic form 0.505 over
             5e7 pairs, scripts/check_pow_f32.py; NumPy's powf: 1.0; by a half-integer in [0, 8]:
             0.50 over 2.1e8 arguments, x ** 0.5 and x ** 2 correctly rounded over every
             float32); float64 <= 1 ulp (the table form: 0.52 in the normal range over 2.8e6
             pairs with |y log x| up to 745, 0.69 among denormal results, rounded twice; the
             arithmetic form 1.14 near its log's split at sqrt 2 with |y| ~ 1000 (bound 1.25
             there), 0.83 over the 800 K pairs below; NumPy's: 0.69)
    atan2:   float32 <= 2 ulp (in float32 arithmetic, atan's polynomial: measured 1.49 over
             6e7 pairs: uniform, log-uniform and near-diagonal; NumPy's: 3.46),
             float64 <= 1 ulp (measured 0.81; NumPy's: 0.77)

Special values are compared with NumPy: nan where NumPy gives nan, and the same bits where
NumPy gives +-inf or +-0.0; sin/cos of huge arguments are exact to the bound (Payne-Hanek
reduction with a per-exponent table of 2/pi).
"""
import ast
import re
from pathlib import Path

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.kernels.cpu import scalar_math, vector_math

LD = np.longdouble
HAVE_LD = np.finfo(LD).nmant >= 63

F32_BOUND = 1.0
F32_TANH_BOUND = 1.2  # float32 tanh computes in float32 arithmetic (vector_math.tanh_f32)
F32_LOG2_BOUND = 1.1  # float32 log2 too (exhaustive max 1.007 ulp; vector_math.log2_f32)
F32_ATAN_BOUND = 1.4  # and atan (exhaustive max 1.381 ulp, scripts/check_inverse_trig_f32.py)
F32_ATAN2_BOUND = 2.0  # and atan2 (a rounded quotient into atan's polynomial: 1.49 sampled)
F32_ASIN_BOUND = 1.9  # asin and acos too (exhaustive max 1.881 / 1.266 ulp, same script)
F32_ACOS_BOUND = 1.3
F32_EXPM1_BOUND = 1.25  # expm1 too (exhaustive max 1.227 ulp, scripts/check_exp_f32.py)
F32_SINH_BOUND = 1.55  # sinh and cosh too (exhaustive max 1.517 / 1.339 ulp, same script)
F64_BOUND = {"exp": 1.0, "log": 1.0, "expm1": 2.0, "log1p": 2.0, "sin": 1.0, "cos": 1.0,
             "tan": 1.0, "atan": 1.0, "tanh": 3.0, "sigmoid": 3.0, "erf": 1.0,
             "exp2": 1.0, "log2": 1.0, "log10": 1.0, "sinh": 1.0, "cosh": 1.0, "asinh": 1.0,
             "acosh": 1.0, "atanh": 1.0, "asin": 1.0, "acos": 1.0}


def _f32_bound(name):
    return {"tanh": F32_TANH_BOUND, "log2": F32_LOG2_BOUND, "atan": F32_ATAN_BOUND,
            "asin": F32_ASIN_BOUND, "acos": F32_ACOS_BOUND, "expm1": F32_EXPM1_BOUND,
            "sinh": F32_SINH_BOUND, "cosh": F32_SINH_BOUND}.get(name, F32_BOUND)


def _sigmoid_ref(x):
    with np.errstate(over="ignore"):
        e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


_LD_PI = LD("3.14159265358979323846264338327950288")


def _erf_ref(x):
    """erf in long double (NumPy has none): 2/sqrt(pi) exp(-x*x) sum_n 2**n x**(2n+1) /
    (1 3 5 ... (2n+1)), a series of positive terms (no cancellation); in x's dtype unless x
    is already long double."""
    x = np.asarray(x)
    xl = x.astype(LD)
    a = np.minimum(np.abs(np.nan_to_num(xl)), LD(7))
    term = a.copy()
    tot = a.copy()
    for n in range(1, 140):      # 2**n a**2n / (2n+1)!! falls below 2**-70 of the sum by then
        term = term * 2 * a * a / (2 * n + 1)
        tot += term
    r = LD(2) / np.sqrt(_LD_PI) * np.exp(-a * a) * tot
    r = np.where(np.abs(xl) >= 7, LD(1), r)
    r = np.where(np.isnan(xl), xl, np.copysign(r, xl))
    return r if x.dtype == LD else r.astype(x.dtype)


REF = {"exp": np.exp, "log": np.log, "expm1": np.expm1, "log1p": np.log1p, "sin": np.sin,
       "cos": np.cos, "tan": np.tan, "atan": np.arctan, "tanh": np.tanh,
       "sigmoid": _sigmoid_ref, "erf": _erf_ref, "exp2": np.exp2, "log2": np.log2,
       "log10": np.log10, "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh,
       "acosh": np.arccosh, "atanh": np.arctanh, "asin": np.arcsin, "acos": np.arccos}
RANGE = {"exp": (-110, 100), "log": (0, 1e4), "expm1": (-50, 100), "log1p": (-1, 10),
         "sin": (-100, 100), "cos": (-100, 100), "tan": (-100, 100), "atan": (-20, 20),
         "tanh": (-12, 12), "sigmoid": (-60, 60), "erf": (-6, 6), "exp2": (-160, 130),
         "log2": (0, 1e4), "log10": (0, 1e4), "sinh": (-100, 100), "cosh": (-100, 100),
         "asinh": (-30, 30), "acosh": (1, 30), "atanh": (-1, 1), "asin": (-1, 1),
         "acos": (-1, 1)}
# float64 ranges reaching the overflow / underflow ends, and the ranges where the kernels
# switch formulas (sampled densely as well)
RANGE64 = {"exp2": (-1100, 1030), "sinh": (-720, 720), "cosh": (-720, 720)}
NEAR = {"exp2": (-2, 2), "log2": (0, 3), "log10": (0, 3), "sinh": (-2, 2), "cosh": (-2, 2),
        "asinh": (-2, 2), "acosh": (1, 3)}
NAMES = list(REF)


def _inputs(name, dt, n=60000, seed=0):
    rng = np.random.default_rng(seed)
    lo, hi = RANGE64.get(name, RANGE[name]) if dt == np.float64 else RANGE[name]
    u = rng.uniform(lo, hi, n)
    if name in NEAR:
        u = np.concatenate([u, rng.uniform(*NEAR[name], n // 2)])
    mag = rng.choice([-1.0, 1.0], n) * 10.0 ** rng.uniform(-45 if dt == np.float32 else -320,
                                                           38 if dt == np.float32 else 308, n)
    ity = np.uint32 if dt == np.float32 else np.uint64
    bits = rng.integers(0, np.iinfo(ity).max, n, dtype=ity, endpoint=True).view(dt)
    with np.errstate(over="ignore"):
        return np.concatenate([u.astype(dt), mag.astype(dt), bits])


def _run(name, x):
    return getattr(tl, name)(tl.asarray(x)).numpy()


def _elementwise(fn, nargs):
    """An njit loop applying the vector_math helper ``fn`` (of 1 - 3 arguments) over arrays:
    one form of a helper whichever form this CPU's kernels take."""
    from numba import njit
    if nargs == 1:
        def run(x):
            out = np.empty_like(x)
            for i in range(x.size):
                out[i] = fn(x[i])
            return out
    elif nargs == 2:
        def run(x, y):
            out = np.empty_like(x)
            for i in range(x.size):
                out[i] = fn(x[i], y[i])
            return out
    else:
        def run(x, y, z):
            out = np.empty_like(x)
            for i in range(x.size):
                out[i] = fn(x[i], y[i], z[i])
            return out
    return njit(error_model="numpy")(run)


def _ulp_error(got, ref_wide, dt):
    """|got - ref| in ulps of dt at the reference (inf where nan/inf patterns differ)."""
    with np.errstate(over="ignore"):
        ref = ref_wide.astype(dt)
    err = np.zeros(got.shape)
    fin = np.isfinite(ref) & np.isfinite(got)
    with np.errstate(all="ignore"):
        # ulp of the (possibly denormal) reference in dt
        sp = np.spacing(np.abs(ref[fin])).astype(LD)
        err[fin] = np.abs(got[fin].astype(LD) - ref_wide[fin].astype(LD)) / sp
    nf = ~fin
    same = (got[nf] == ref[nf]) | (np.isnan(got[nf]) & np.isnan(ref[nf]))
    err[nf] = np.where(same, 0.0, np.inf)
    return err


def _max_err(name, dt, x):
    got = _run(name, x)
    assert got.dtype == dt
    with np.errstate(all="ignore"):
        if dt == np.float32:
            ref = REF[name](x.astype(np.float64))
        else:
            ref = REF[name](x.astype(LD))
    err = _ulp_error(got, ref, dt)
    i = int(np.argmax(err))
    return err[i], x[i], got[i], ref[i]


@pytest.mark.parametrize("name", NAMES)
def test_float32_accuracy(name):
    e, x, got, ref = _max_err(name, np.float32, _inputs(name, np.float32))
    assert e <= _f32_bound(name), \
        f"{name} float32: {e:.3f} ulp at x={x!r}: got {got!r}, want {ref!r}"


def _log_family_inputs(name, n=400000, seed=11):
    """float32 inputs for the float32-internal logs: random bit patterns over every positive
    float32 (log1p: and (-1, 0)), every denormal exponent, powers of two and their
    neighbours, values near 1 (the reduction boundaries sqrt(1/2), sqrt(2) fall in between)."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(1, 0x7F800000, n, dtype=np.uint32)
    parts = [bits.view(np.float32),
             rng.integers(1, 0x00800000, n // 8, dtype=np.uint32).view(np.float32),
             np.ldexp(np.float32(1), np.arange(-149, 128)).astype(np.float32),
             (1 + rng.uniform(-2 ** -6, 2 ** -6, n // 4)).astype(np.float32),
             np.array([np.sqrt(0.5), np.sqrt(2.0)], np.float32)]
    if name == "log1p":
        neg = rng.integers(0x80000001, 0xBF800000, n // 2, dtype=np.uint32).view(np.float32)
        parts += [neg, rng.uniform(-2 ** -6, 2 ** -6, n // 4).astype(np.float32)]
    x = np.concatenate(parts)
    return np.concatenate([x, np.nextafter(x, np.float32(np.inf)),
                           np.nextafter(x, np.float32(0))])


@pytest.mark.parametrize("name", ["log", "log1p", "log2", "log10"])
def test_float32_log_family_dense(name):
    """The float32 logs compute in float32 arithmetic (vector_math.exp_log, exhaustively
    checked by scripts/check_log_f32.py): ~1.7 M inputs (log1p 2.6 M) across every exponent
    against the float64 function (measured: log 0.78, log1p 0.80, log2 0.84, log10 0.79;
    NumPy's float32: 3.05, 1.69, 1.79, 2.11)."""
    x = _log_family_inputs(name)
    x = x[np.isfinite(x) & (x > (-1 if name == "log1p" else 0))]
    e, xm, got, ref = _max_err(name, np.float32, x)
    assert e <= _f32_bound(name), \
        f"{name} float32: {e:.3f} ulp at x={xm!r}: got {got!r}, want {ref!r}"


@pytest.mark.skipif(not HAVE_LD, reason="needs an 80-bit (or wider) long double reference")
@pytest.mark.parametrize("name", NAMES)
def test_float64_accuracy(name):
    e, x, got, ref = _max_err(name, np.float64, _inputs(name, np.float64))
    assert e <= F64_BOUND[name], \
        f"{name} float64: {e:.3f} ulp at x={x!r}: got {got!r}, want {ref!r}"


def _specials(dt):
    fi = np.finfo(dt)
    tiny, dmin, big = fi.tiny, fi.smallest_subnormal, fi.max
    base = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 0.5, -0.5, 2.0,
            tiny, -tiny, dmin, -dmin, tiny / 3, -tiny / 3, big, -big, fi.eps, -fi.eps,
            np.pi / 2, -np.pi / 2, np.pi, 2 * np.pi, 1e-8, -1e-8, 1e-30, 20.0, -20.0, 40.0]
    if dt == np.float32:
        base += [88.72283, 88.72284, 89.0, -87.33655, -103.27893, -103.97208, -103.98,
                 -104.0, -150.0, 9.0, -9.0, 10.0, 16777216.0, 1e30, -1e30, 3.4e38,
                 89.41599, 89.416, 128.0, -126.0, -149.0, -149.5, -150.5, 100.0, 1000.0,
                 1e-3, 0.975, 4096.0]
    else:
        base += [709.782712893384, 709.7827128933841, 710.0, -708.3964185322641,
                 -745.1332191019411, -745.1332191019412, -745.2, -746.0, -800.0, 19.0,
                 22.0, -22.0, 2.0 ** 52, 1e22, 1e300, -1e300, 2.0 ** 1000,
                 6381956970095103.0 * 2.0 ** 797, 710.4758600739439, 710.476, 1023.0,
                 1024.0, -1022.0, -1074.0, -1074.5, -1075.0, -1076.0, 10.0, 100.0, 1000.0,
                 1e-3, 0.975, 2.0 ** 28, 1e15]
    x = np.array(base, dtype=np.float64)
    with np.errstate(over="ignore"):
        x = x.astype(dt)
        return np.concatenate([x, np.nextafter(x, dt(np.inf)), np.nextafter(x, dt(-np.inf))])


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", NAMES)
def test_special_values_match_numpy(name, dt):
    x = _specials(dt)
    got = _run(name, x)
    with np.errstate(all="ignore"):
        want = REF[name](x)
    assert got.dtype == want.dtype == dt
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan), x[np.isnan(got) != nan]
    if dt == np.float32:
        # float32: the float64 function rounded once, not NumPy's float32 value (NumPy's
        # float32 exp2 gives 0.0 for 2**-149.5, which rounds to the smallest denormal)
        with np.errstate(all="ignore"):
            want = REF[name](x.astype(np.float64)).astype(dt)
        assert np.array_equal(np.isnan(want), nan)
    exact = ~nan & (np.isinf(want) | (want == 0) | (want == 1) | (want == -1))
    gb, wb = got[exact].view(f"u{dt().itemsize}"), want[exact].view(f"u{dt().itemsize}")
    assert np.array_equal(gb, wb), list(zip(x[exact][gb != wb], got[exact][gb != wb],
                                            want[exact][gb != wb]))
    # every other special: within the accuracy bound of the wider reference (not NumPy's
    # value: NumPy's float64 cos(5.3e255) is 8 ulp off, for one)
    rest = ~nan & ~exact
    if dt == np.float64 and not HAVE_LD:
        return
    with np.errstate(all="ignore"):
        ref = REF[name](x[rest].astype(np.float64 if dt == np.float32 else LD))
    err = _ulp_error(got[rest], ref, dt)
    bound = _f32_bound(name) if dt == np.float32 else F64_BOUND[name]
    assert err.max(initial=0) <= bound, list(zip(x[rest][err > bound], got[rest][err > bound]))


@pytest.mark.skipif(not HAVE_LD, reason="needs an 80-bit (or wider) long double reference")
@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_huge_arguments(name):
    rng = np.random.default_rng(5)
    # float64: the whole exponent range, and the worst case for reduction (x within
    # ~2**-61 of a multiple of pi/2)
    x64 = np.concatenate([rng.uniform(1, 2, 4000) * 2.0 ** rng.integers(20, 1024, 4000),
                          [6381956970095103.0 * 2.0 ** 797, 5.319372648326541e255,
                           1.0e22, 2.0 ** 1023, -(2.0 ** 1023)]])
    e, x, got, ref = _max_err(name, np.float64, x64)
    assert e <= F64_BOUND[name], (e, x, got, ref)
    x32 = (rng.uniform(1, 2, 4000) * 2.0 ** rng.integers(10, 127, 4000)).astype(np.float32)
    x32 = np.concatenate([x32, np.array([1.0e38, -3.4e38, 16777217.0, 1.0e15], np.float32)])
    e, x, got, ref = _max_err(name, np.float32, x32)
    assert e <= F32_BOUND, (e, x, got, ref)


@pytest.mark.parametrize("name", NAMES)
def test_strided_empty_and_half(name):
    rng = np.random.default_rng(2)
    lo, hi = RANGE[name]
    base = rng.uniform(max(lo, -20), min(hi, 20), (40, 30))
    for dt in (np.float32, np.float64):
        a = base.astype(dt)
        t = tl.asarray(a)
        with np.errstate(all="ignore"):
            for view_t, view_a in ((t[::2, 1::3], a[::2, 1::3]), (t.mT, a.T),
                                   (t[:, ::-1], a[:, ::-1])):
                got = getattr(tl, name)(view_t).numpy()
                want = REF[name](view_a.astype(np.float64)).astype(dt)
                np.testing.assert_allclose(got, want, rtol=4 * np.finfo(dt).eps, atol=0)
        empty = getattr(tl, name)(tl.asarray(np.zeros((0, 3), dt)))
        assert empty.shape == (0, 3) and empty.dtype == getattr(tl, np.dtype(dt).name)
    # float16 computes in float32: within half-precision rounding of the float64 value
    small = base.clip(-8, 8).astype(np.float16)
    got = getattr(tl, name)(tl.asarray(small)).numpy().astype(np.float64)
    with np.errstate(all="ignore"):
        want = REF[name](small.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=2 ** -10, atol=2 ** -24)
    # bfloat16 too (float32 compute, one rounding to 8 bits)
    bf = tl.asarray(small.astype(np.float32)).astype(tl.bfloat16)
    got = getattr(tl, name)(bf[::2])
    assert got.dtype == tl.bfloat16
    with np.errstate(all="ignore"):
        want = REF[name](bf[::2].astype(tl.float32).numpy().astype(np.float64))
    np.testing.assert_allclose(got.astype(tl.float32).numpy(), want, rtol=2 ** -8,
                               atol=2 ** -126)
    # out= and in-place through the same kernels
    out = tl.empty((40, 30), dtype=tl.float32)
    getattr(tl, name)(tl.asarray(base.astype(np.float32)), out=out)
    with np.errstate(all="ignore"):
        want = REF[name](base.astype(np.float32).astype(np.float64)).astype(np.float32)
        np.testing.assert_allclose(out.numpy(), want,
                                   rtol=2 * np.finfo(np.float32).eps)


@pytest.mark.parametrize("name,dt", [("exp", "float32"), ("sin", "float64"),
                                     ("log", "float64"), ("tanh", "float32"),
                                     ("sin", "float32"), ("expm1", "float64"),
                                     ("tan", "float32"), ("tan", "float64"),
                                     ("atan", "float64"), ("power", "float32"),
                                     ("atan2", "float32"), ("atan2", "float64"),
                                     ("erf", "float32"), ("erf", "float64"),
                                     ("power", "float64")]
                         + [(n, d) for n in ("exp2", "log2", "log10", "sinh", "cosh", "asinh",
                                             "acosh", "atanh", "asin", "acos")
                            for d in ("float32", "float64")])
def test_loop_vectorizes(name, dt):
    """A contiguous loop over the scalar_math helper (what the generated kernels hold)
    compiles to vector arithmetic: the helpers inline and have no branches or calls."""
    import numba
    helper = getattr(scalar_math, name)
    if name in ("power", "atan2"):
        @numba.njit(error_model="numpy")
        def loop(a, o):
            for i in range(a.size):
                o[i] = helper(a[i], a[0])
    else:
        @numba.njit(error_model="numpy")
        def loop(a, o):
            for i in range(a.size):
                o[i] = helper(a[i])

    a = np.linspace(0.5, 2, 64).astype(dt)
    loop(a, np.empty_like(a))
    llvm = loop.inspect_llvm(loop.signatures[0])
    assert re.search(r"<\d+ x (double|float)>", llvm), "the loop did not vectorize"


def _cpu_files(parts, cpu):
    """The kernels/cpu files that importing module ``parts`` (below kernels/cpu) loads: the
    module's file and its packages' ``__init__.py``."""
    found = set()
    for i in range(1, len(parts) + 1):
        for cand in (cpu.joinpath(*parts[:i], "__init__.py"),
                     cpu.joinpath(*parts[:i - 1], parts[i - 1] + ".py")):
            if cand.is_file():
                found.add(cand.relative_to(cpu).as_posix())
    return found


def _imports_below(path, cpu):
    """The kernels/cpu files that ``path``'s imports (at any depth of the file) load."""
    package = list(path.relative_to(cpu).parts[:-1])
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            if node.level - 1 > len(package):
                continue                                        # above kernels/cpu
            mod = package[:len(package) - node.level + 1] + (node.module or "").split(".")
            mod = [m for m in mod if m]
        elif (node.module or "").startswith("tensorlib.kernels.cpu."):
            mod = node.module.split(".")[3:]
        else:
            continue
        found |= _cpu_files(mod, cpu)
        for alias in node.names:                                # from . import submodule
            found |= _cpu_files(mod + [alias.name], cpu)
    return found


def test_kernel_cache_key_covers_every_helper_file():
    """Generated CPU kernels are keyed on the bytes of scalar_math.HELPER_FILES (Numba's cache
    only watches a kernel's own file): every kernels/cpu file that a generated module's imports
    reach, directly or through another helper file, must be listed, or an edit to it would
    leave stale compiled kernels behind."""
    cpu = Path(tl.kernels.cpu.__file__).parent
    reached, todo = set(), []
    for path in cpu.parents[1].rglob("*.py"):   # generated sources' import lines, in templates
        for m in re.finditer(r"^from tensorlib\.kernels\.cpu\.([\w.]+) import",
                             path.read_text(), re.M):
            todo.extend(_cpu_files(m.group(1).split("."), cpu))
    assert {"scalar_math/__init__.py", "casting.py", "addresses.py"} <= set(todo)
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo.extend(_imports_below(cpu / name, cpu))
    listed = set(scalar_math.HELPER_FILES)
    assert reached == listed, (f"not in HELPER_FILES: {sorted(reached - listed)}; "
                               f"listed but not imported: {sorted(listed - reached)}")


def _pow_inputs(n=60000, seed=3):
    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.uniform(0, 10, n), 10.0 ** rng.uniform(-45, 38, n),
                        rng.uniform(-10, 10, n)])
    y = np.concatenate([rng.uniform(-20, 20, n), rng.uniform(-3, 3, n),
                        np.round(rng.uniform(-30, 30, n))])
    bits = rng.integers(0, 2 ** 32, (2, n), dtype=np.uint64).astype(np.uint32).view(np.float32)
    with np.errstate(over="ignore"):
        return (np.concatenate([x.astype(np.float32), bits[0]]),
                np.concatenate([y.astype(np.float32), bits[1]]))


def test_pow_float32_accuracy():
    x, y = _pow_inputs()
    got = tl.pow(tl.asarray(x), tl.asarray(y)).numpy()
    assert got.dtype == np.float32
    with np.errstate(all="ignore"):
        want = np.power(x, y)
        ref = np.power(x.astype(np.float64), y.astype(np.float64))
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan), (x[np.isnan(got) != nan], y[np.isnan(got) != nan])
    err = _ulp_error(got[~nan], ref[~nan], np.float32)
    i = int(np.argmax(err))
    assert err[i] <= F32_BOUND, (err[i], x[~nan][i], y[~nan][i], got[~nan][i], ref[~nan][i])


@pytest.mark.parametrize("form", ["pow_f32_tables", "pow_f32_arith"])
def test_pow_float32_forms_accuracy_and_special_values(form):
    """Both float32 pow forms, whichever this CPU's kernels take (vector_math.power: the table
    form where table loads are cheap, base.TABLE_LOOKUPS, else the arithmetic one): within the
    bound of the float64 reference on the accuracy inputs, and over every pair of special
    values (C99's cases) NumPy's nan pattern and its exact zeros, infinities and ones."""
    run = _elementwise(getattr(vector_math.power, form), 2)

    x, y = _pow_inputs(seed=4)
    sp = _specials(np.float32)
    X, Y = (a.ravel() for a in np.meshgrid(sp, sp))
    x, y = np.concatenate([x, X]), np.concatenate([y, Y])
    got = run(x, y)
    with np.errstate(all="ignore"):
        want = np.power(x, y)
        ref = np.power(x.astype(np.float64), y.astype(np.float64))
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan), (x[np.isnan(got) != nan], y[np.isnan(got) != nan])
    exact = ~nan & (np.isinf(want) | (want == 0) | (np.abs(want) == 1))
    bad = exact & (got.view(np.uint32) != want.view(np.uint32))
    assert not bad.any(), (x[bad][:5], y[bad][:5], got[bad][:5], want[bad][:5])
    err = _ulp_error(got[~nan], ref[~nan], np.float32)
    i = int(np.argmax(err))
    assert err[i] <= F32_BOUND, (err[i], x[~nan][i], y[~nan][i], got[~nan][i], ref[~nan][i])


@pytest.mark.parametrize("status, vendor, cost", [
    ("Not affected\n", "GenuineIntel", "fast"),
    ("Vulnerable", "GenuineIntel", "fast"),
    ("Mitigation: Microcode\n", "GenuineIntel", "slow"),
    ("Not affected\n", "AuthenticAMD", "medium"),
    (None, "AuthenticAMD", "slow"),  # no Gather Data Sampling line: the kernel does not say
    (None, "", "slow"),
])
def test_gather_cost_rule(status, vendor, cost):
    from tensorlib.kernels.cpu.vector_math import base
    assert base._gather_cost_of(status, vendor) == cost


def test_gather_cost_setting(monkeypatch):
    from tensorlib.kernels.cpu.vector_math import base
    for choice in ("fast", "Medium", " slow "):
        monkeypatch.setenv("TENSORLIB_CPU_GATHERS", choice)
        assert base._gather_cost() == choice.strip().lower()
    monkeypatch.setenv("TENSORLIB_CPU_GATHERS", "quick")
    with pytest.raises(ValueError, match="TENSORLIB_CPU_GATHERS.*fast, medium or slow.*quick"):
        base._gather_cost()
    assert base.TABLE_LOOKUPS == (base.GATHERS == "fast")
    assert base.TABLES_OVER_DIVISIONS == (base.GATHERS != "slow")


def _ordinary_pow_inputs(dt, seed):
    """Pairs for pow's ordinary form: bases over the whole positive range (denormals, 1, the
    largest) and exponents from tiny to overflowing, integers, half-integers and -0.0 / 0 among
    them; and pairs outside it (the guard's cases)."""
    rng = np.random.default_rng(seed)
    fi = np.finfo(dt)
    n = 40000
    x = np.concatenate([rng.uniform(0, 10, n), 10.0 ** rng.uniform(np.log10(float(fi.smallest_subnormal)),
                                                                 np.log10(float(fi.max)), n),
                        1 + rng.uniform(-1e-3, 1e-3, n)]).astype(dt)
    y = np.concatenate([rng.uniform(-20, 20, n), rng.uniform(-1, 1, n) * 10.0 ** rng.uniform(-8, 3, n),
                        rng.uniform(-1e6, 1e6, n)]).astype(dt)
    y[::7] = np.round(y[::7])
    y[1::7] = np.round(2 * y[1::7]) / 2
    edge_x = np.array([1.0, fi.max, fi.smallest_subnormal, fi.tiny, 2.0, 0.5, 0.0, -0.0, -1.0,
                       -2.5, np.inf, -np.inf, np.nan], dt)
    edge_y = np.array([0.0, -0.0, 1.0, -1.0, 2.0, 0.5, 2.5, -0.5, 3.0, fi.max, -fi.max, 1e-30,
                       np.inf, -np.inf, np.nan], dt)
    X, Y = (a.ravel() for a in np.meshgrid(edge_x, edge_y))
    return np.concatenate([x, X]), np.concatenate([y, Y])


@pytest.mark.parametrize("width", ["f32", "f64"])
def test_pow_ordinary_forms_give_the_general_forms_bits_where_the_guard_holds(width):
    """pow's ordinary form (ops.yaml block_fast: a positive finite base, a finite exponent
    other than 2, -1 and 1/2) skips C99's cases and the value forms: where scalar_math's
    ordinary_pow guard holds it must return exactly the general form's bits, for both forms of
    each width (tables / arithmetic), whichever this CPU's kernels take; and the guard holds
    for no pair where the general form's special handling changes the result."""
    from numba import njit
    from tensorlib.kernels.cpu import scalar_math as sm
    dt = np.float32 if width == "f32" else np.float64

    @njit(error_model="numpy")
    def guard(x, y):
        out = np.empty(x.size, np.bool_)
        for i in range(x.size):
            out[i] = sm.ordinary_pow(x[i], y[i])
        return out

    x, y = _ordinary_pow_inputs(dt, seed=11)
    ok = guard(x, y)
    with np.errstate(invalid="ignore"):
        want_ok = ((x > 0) & np.isfinite(x) & np.isfinite(y) & (y != 2) & (y != -1) & (y != 0.5))
    assert np.array_equal(ok, want_ok)
    assert ok.sum() > 100000
    for form in ("tables", "arith"):
        general = _elementwise(getattr(vector_math.power, f"pow_{width}_{form}"), 2)(x[ok], y[ok])
        ordinary = _elementwise(getattr(vector_math.power, f"pow_ordinary_{width}_{form}"), 2)(
            x[ok], y[ok])
        bits = np.uint32 if dt == np.float32 else np.uint64
        bad = ordinary.view(bits) != general.view(bits)
        assert not bad.any(), (form, x[ok][bad][:5], y[ok][bad][:5], ordinary[bad][:5])
    chosen = "tables" if (base_mod().TABLE_LOOKUPS if width == "f32"
                          else base_mod().TABLES_OVER_DIVISIONS) else "arith"
    assert getattr(vector_math, f"pow_ordinary_{width}") is getattr(
        vector_math.power, f"pow_ordinary_{width}_{chosen}")


def base_mod():
    from tensorlib.kernels.cpu.vector_math import base
    return base


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_pow_takes_each_block_form_where_it_holds(dt):
    """x ** y over blocks of 1024 (kernels/cpu/pointwise.py): blocks of ordinary pairs (the
    ordinary form), a block of half-integer exponents (that form) and blocks with one special
    pair (a negative base, a zero, an exponent of 2, -1 or 1/2, a nan, 1 ** inf: the general
    form there) give, element for element, the bits of the form that block takes (the general
    helper's for all but the half-integer block, as the ordinary form must), for a tensor
    exponent, strided operands, above the parallel grain and Python-scalar exponents."""
    width = "f32" if dt == np.float32 else "f64"
    general = _elementwise(getattr(vector_math, f"pow_{width}"), 2)
    halves = _elementwise(getattr(vector_math, f"pow_halves_{width}"), 2)
    bits = np.uint32 if dt == np.float32 else np.uint64
    rng = np.random.default_rng(12)
    n = 1024 * 10
    x = rng.uniform(0.01, 10, n).astype(dt)
    y = rng.uniform(-4, 4, n).astype(dt)
    for j, (a, b) in enumerate([(-2.0, 3.0), (0.0, 1.5), (3.0, 2.0), (np.nan, 1.0),
                                (1.0, np.inf), (2.0, -1.0), (4.0, 0.5)]):
        x[(j + 2) * 1024 + 17], y[(j + 2) * 1024 + 17] = a, b
    want = general(x, y)
    strided = (tl.asarray(x)[::2] ** tl.asarray(y)[::2]).numpy()
    assert np.array_equal(strided.view(bits), want[::2].view(bits))
    for v in (2.7, -1.3):
        one = general(x, np.full(n, v, dt))
        assert np.array_equal((tl.asarray(x) ** v).numpy().view(bits), one.view(bits))
    y[1024:2048] = np.round(rng.uniform(0, 16, 1024)) / 2          # a half-integer block
    want[1024:2048] = halves(x[1024:2048], y[1024:2048])
    want[:1024] = general(x[:1024], y[:1024])
    assert np.array_equal((tl.asarray(x) ** tl.asarray(y)).numpy().view(bits), want.view(bits))
    big = tl.asarray(np.tile(x, 40)) ** tl.asarray(np.tile(y, 40))
    assert np.array_equal(big.numpy().view(bits), np.tile(want, 40).view(bits))


@pytest.mark.parametrize("name", ["log", "log2", "log10"])
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_log_ordinary_forms_give_the_general_forms_bits_where_the_guard_holds(name, dt):
    """log / log2 / log10's ordinary forms (ops.yaml block_fast: positive normal finite
    arguments) skip the denormal scaling and the special values: where scalar_math's
    positive_normal holds they return exactly the general form's bits (float64 log: both of
    its forms, tables and arithmetic, whichever this CPU's kernels take); the guard holds for
    no other argument; and a tensor whose blocks hold a denormal, a zero, a negative, an inf or
    a nan gives, element for element, the general form's bits (the loops' per-block choice)."""
    from numba import njit
    from tensorlib.kernels.cpu import scalar_math as sm
    width = "f32" if dt == np.float32 else "f64"
    fi = np.finfo(dt)
    ubits = np.uint32 if dt == np.float32 else np.uint64
    rng = np.random.default_rng(13)
    lo_bits, hi_bits = int(np.array(fi.tiny, dt).view(ubits)), int(np.array(fi.max, dt).view(ubits))
    x = np.concatenate([rng.integers(lo_bits, hi_bits, 200000, dtype=ubits, endpoint=True).view(dt),
                        rng.uniform(0.5, 2, 50000).astype(dt), 2.0 ** np.arange(-30, 31).astype(dt),
                        np.array([fi.tiny, fi.max, 1.0, np.nextafter(dt(1), dt(2)),
                                  np.nextafter(dt(1), dt(0))], dt)])

    @njit(error_model="numpy")
    def guard(v):
        out = np.empty(v.size, np.bool_)
        for i in range(v.size):
            out[i] = sm.positive_normal(v[i])
        return out

    edges = np.array([0.0, -0.0, fi.smallest_subnormal, np.nextafter(fi.tiny, dt(0)), -1.0,
                      np.inf, -np.inf, np.nan], dt)
    assert guard(x).all() and not guard(edges).any()
    forms = [(f"{name}_{width}", f"{name}_ordinary_{width}")]
    if name == "log" and width == "f64":
        forms = [(f"log_f64_{f}", f"log_ordinary_f64_{f}") for f in ("tables", "arith")]
    module = vector_math.exp_log
    for general, ordinary in forms:
        want = _elementwise(getattr(module, general), 1)(x)
        got = _elementwise(getattr(module, ordinary), 1)(x)
        bad = got.view(ubits) != want.view(ubits)
        assert not bad.any(), (general, x[bad][:5], got[bad][:5], want[bad][:5])
    y = rng.uniform(0.01, 100, 1024 * 8).astype(dt)
    for j, v in enumerate(edges[[0, 2, 4, 5, 7]]):
        y[(j + 2) * 1024 + 100] = v
    want = _elementwise(getattr(vector_math, f"{name}_{width}"), 1)(y)
    with np.errstate(all="ignore"):
        got = getattr(tl, name)(tl.asarray(y)).numpy()
    assert np.array_equal(got.view(ubits), want.view(ubits))


def test_pow_float32_kernels_take_the_form_the_cpu_chooses():
    from tensorlib.kernels.cpu.vector_math import base
    want = "pow_f32_tables" if base.TABLE_LOOKUPS else "pow_f32_arith"
    assert vector_math.pow_f32 is getattr(vector_math.power, want)
    assert scalar_math.SOURCE_HASH.endswith(base.GATHERS[0])


@pytest.mark.skipif(not HAVE_LD, reason="needs an 80-bit (or wider) long double reference")
def test_pow_float64_accuracy():
    """float64 pow against long double powl: uniform and log-uniform bases with exponents up
    to +-1000 (results over the whole range, denormals and overflow included), negative bases
    with integer exponents and random bit patterns."""
    rng = np.random.default_rng(6)
    n = 60000
    x = np.concatenate([rng.uniform(0, 10, n), 10.0 ** rng.uniform(-300, 300, n),
                        rng.uniform(-10, 10, n), rng.uniform(0.5, 2, n)])
    y = np.concatenate([rng.uniform(-20, 20, n), rng.uniform(-1, 1, n),
                        np.round(rng.uniform(-60, 60, n)), rng.uniform(-1100, 1100, n)])
    bits = rng.integers(0, np.iinfo(np.uint64).max, (2, n), np.uint64, True).view(np.float64)
    x, y = np.concatenate([x, bits[0]]), np.concatenate([y, bits[1]])
    got = tl.pow(tl.asarray(x), tl.asarray(y)).numpy()
    assert got.dtype == np.float64
    with np.errstate(all="ignore"):
        want = np.power(x, y)
        ref = np.power(x.astype(LD), y.astype(LD))
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan), (x[np.isnan(got) != nan], y[np.isnan(got) != nan])
    err = _ulp_error(got[~nan], ref[~nan], np.float64)
    i = int(np.argmax(err))
    assert err[i] <= 1.0, (err[i], x[~nan][i], y[~nan][i], got[~nan][i], ref[~nan][i])


# measured max ulp over these inputs in the normal range (denormal results round twice: 0.67)
_POW_F64_BOUNDS = {"pow_f64_tables": 0.53, "pow_f64_arith": 1.25}


@pytest.mark.skipif(not HAVE_LD, reason="needs an 80-bit (or wider) long double reference")
@pytest.mark.parametrize("form", ["pow_f64_tables", "pow_f64_arith"])
def test_pow_float64_forms_accuracy_and_special_values(form):
    """Both float64 pow forms, whichever this CPU's kernels take (the table form where table
    loads are cheap): against long double powl over bases near 1 and near the log's interval
    edges (sqrt 2, 0.706), exponents up to 7e11 (|y log x| up to ~745, where the log's error
    counts most), results near the denormal edge; every pair of special values gives NumPy's
    nan pattern and its exact zeros, infinities and ones; no result is off the table's
    intervals (every 256th interval edge of z, both sides)."""
    run = _elementwise(getattr(vector_math.power, form), 2)

    rng = np.random.default_rng(11)
    n = 40000
    edges = (np.arange(257, dtype=np.uint64) << np.uint64(44)) + np.uint64(0x3FE6980000000000)
    e = edges.view(np.float64)
    x = np.concatenate([10.0 ** rng.uniform(-300, 300, n), rng.uniform(0.5, 2, n),
                        1 + rng.uniform(-1e-3, 1e-3, n), 1 + rng.uniform(-1e-9, 1e-9, n),
                        rng.uniform(0.7, 0.712, n), rng.uniform(1.40, 1.42, n),
                        np.exp(rng.uniform(-708, 709, n)), np.repeat(e, 4) * (1 + np.tile(
                            [-2.0 ** -52, 0.0, 2.0 ** -52, 2.0 ** -50], 257))])
    y = np.concatenate([rng.uniform(-2, 2, n), rng.uniform(-1100, 1100, n),
                        rng.uniform(-7e5, 7e5, n), rng.uniform(-7e11, 7e11, n),
                        rng.uniform(-1000, 1000, n), rng.uniform(-1000, 1000, n),
                        rng.uniform(0.5, 1.0, n), rng.uniform(-1000, 1000, 4 * 257)])
    sp = _specials(np.float64)
    X, Y = (a.ravel() for a in np.meshgrid(sp, sp))
    x, y = np.concatenate([x, X]), np.concatenate([y, Y])
    got = run(x, y)
    with np.errstate(all="ignore"):
        want = np.power(x, y)
        ref = np.power(x.astype(LD), y.astype(LD))
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan), (x[np.isnan(got) != nan], y[np.isnan(got) != nan])
    # NumPy's exact zeros and infinities, and its ones where C99 says 1 (x = +-1, y = 0: NumPy's
    # pow can miss elsewhere: (1 - 2**-53) ** -1 is 1 + 2**-52 correctly rounded, NumPy says 1)
    exact = ~nan & (np.isinf(want) | (want == 0) | (np.abs(x) == 1) | (y == 0))
    bad = exact & (got.view(np.uint64) != want.view(np.uint64))
    assert not bad.any(), (x[bad][:5], y[bad][:5], got[bad][:5], want[bad][:5])
    normal = ~nan & (np.abs(ref) >= LD(np.finfo(np.float64).tiny)) & ~exact & ~np.isinf(ref)
    err = _ulp_error(got[normal], ref[normal], np.float64)
    i = int(np.argmax(err))
    assert err[i] <= _POW_F64_BOUNDS[form], (err[i], x[normal][i], y[normal][i])
    assert _ulp_error(got[~nan], ref[~nan], np.float64).max() <= 1.25


def test_float64_tables_are_exact_rationals_rounded_once():
    """exp_log's tables (built when the module loads): 2**(+-j/128) = T_hi + T_lo and the log
    table's log c = hi + lo (hi on 2**-32, c = 1 / (1/c) exactly, 1/c of 9 bits), each part
    the correctly rounded double of the exact value less the parts before it (against
    80-digit decimals: a 28-digit step in the build had left T_lo off by up to ~5e4 ulps)."""
    from decimal import Decimal, localcontext
    el = vector_math.exp_log
    with localcontext() as ctx:
        ctx.prec = 80
        for sign, hi, lo in ((1, el._EXP_T_HI, el._EXP_T_LO), (-1, el._EXP_TI_HI, el._EXP_TI_LO)):
            for j in range(el._EXP_N):
                t = Decimal(2) ** (sign * Decimal(j) / el._EXP_N)
                assert (hi[j], lo[j]) == (float(t), float(t - Decimal(float(hi[j])))), (sign, j)
        for i, inv in enumerate(el._LOG_INVC):
            logc = -Decimal(float(inv)).ln()
            h = float(el._LOG_LOGC_HI[i])
            assert h * 2.0 ** 32 == round(h * 2.0 ** 32)
            assert abs(Decimal(h) - logc) <= Decimal(2) ** -33
            assert el._LOG_LOGC_LO[i] == float(logc - Decimal(h)), i
            m = np.frexp(inv)[0] * 512                  # 1/c has 9 bits: z / c - 1 is exact
            assert m == round(m), (i, inv)


# float64 functions with a table form (where table loads are cheap) and an arithmetic one:
# (module, NumPy function, argument range, normal-range bound of the table / arithmetic form)
_F64_FORMS = {"exp": ("exp_log", np.exp, (-746, 710), 0.52, 1.0),
              "exp2": ("exp_log", np.exp2, (-1076, 1025), 0.52, 1.0),
              "log": ("exp_log", np.log, (0, 1000), 0.51, 0.85),
              "sinh": ("hyperbolic", np.sinh, (-711, 711), 0.57, 1.0),
              "cosh": ("hyperbolic", np.cosh, (-711, 711), 0.52, 1.0)}


@pytest.mark.skipif(not HAVE_LD, reason="needs an 80-bit (or wider) long double reference")
@pytest.mark.parametrize("form", ["tables", "arith"])
@pytest.mark.parametrize("name", sorted(_F64_FORMS))
def test_float64_forms(name, form):
    """Both forms of exp and exp2 (the table ones are pow's exp, exp_log._exp_tab), log (pow's
    log table), sinh and cosh (two tables, no division), whichever this CPU's kernels take:
    within the bound of long
    double's result in the normal range, 1 ulp among denormals (rounded twice), exp2 of
    integers exact, and NumPy's bits for the special values and past the range's ends."""
    module, ref_fn, (lo, hi), bound_tab, bound_arith = _F64_FORMS[name]
    run = _elementwise(getattr(getattr(vector_math, module), f"{name}_f64_{form}"), 1)

    rng = np.random.default_rng(12)
    ints = np.arange(-1080.0, 1030.0)
    x = np.concatenate([rng.uniform(lo, hi, 200000), rng.uniform(-3, 3, 100000),
                        rng.uniform(-1e-10, 1e-10, 1000), ints, ints + 0.5, _specials(np.float64)])
    got = run(x)
    with np.errstate(all="ignore"):
        ref = ref_fn(x.astype(LD))
        want = ref_fn(x)
    normal = np.abs(ref) >= LD(np.finfo(np.float64).tiny)
    err = _ulp_error(got, ref, np.float64)
    bound = bound_tab if form == "tables" else bound_arith
    assert err[normal].max() <= bound, (err[normal].max(), x[normal][np.argmax(err[normal])])
    assert err.max() <= 1.0, (err.max(), x[np.argmax(err)])
    if name == "exp2":
        at = x.size - len(_specials(np.float64)) - 2 * ints.size
        with np.errstate(over="ignore"):
            assert np.array_equal(got[at:at + ints.size], np.exp2(ints))
    assert np.array_equal(np.isnan(got), np.isnan(want))
    edge = (~np.isfinite(want) | (want == 0) | ~np.isfinite(x)) & ~np.isnan(want)
    assert np.array_equal(got[edge].view(np.uint64), want[edge].view(np.uint64))


@pytest.mark.skipif(not HAVE_LD, reason="needs an 80-bit (or wider) long double reference")
@pytest.mark.parametrize("form,bound", [("tab", 0.51), ("arith", 0.85)])
def test_log_of_a_corrected_argument_forms(form, bound):
    """exp_log._log_uc (float64 asinh / acosh / atanh / log1p take the log of u (1 + c) through
    it) in both forms, whichever this CPU's kernels take: log(u) + c + k ln2 within the bound
    of long double's, over u near 1, over the whole exponent range and the table's interval
    edges, with corrections |c| <= 2**-53 and k in {0, 1}."""
    run = _elementwise(getattr(vector_math.exp_log, f"_log_uc_{form}"), 3)

    rng = np.random.default_rng(13)
    n = 50000
    edges = ((np.arange(257, dtype=np.uint64) << np.uint64(44)) +
             np.uint64(0x3FE6980000000000)).view(np.float64)
    u = np.concatenate([1 + rng.uniform(0, 1e-6, n), 10.0 ** rng.uniform(-300, 300, n),
                        rng.uniform(1, 3, n), np.repeat(edges, 3) * np.tile(
                            [1 - 2.0 ** -52, 1.0, 1 + 2.0 ** -52], 257)])
    c = rng.uniform(-1, 1, u.size) * 2.0 ** -53
    k = rng.integers(0, 2, u.size).astype(np.float64)
    got = run(u, c, k)
    ref = np.log(u.astype(LD)) + c.astype(LD) + k.astype(LD) * np.log(LD(2))
    nz = ref != 0
    err = _ulp_error(got[nz], ref[nz], np.float64)
    assert err.max() <= bound, (err.max(), u[nz][np.argmax(err)])


def test_float64_kernels_take_the_forms_the_cpu_chooses():
    from tensorlib.kernels.cpu.vector_math import base
    want = "pow_f64_tables" if base.TABLES_OVER_DIVISIONS else "pow_f64_arith"
    assert vector_math.pow_f64 is getattr(vector_math.power, want)
    want = "_log_uc_tab" if base.TABLE_LOOKUPS else "_log_uc_arith"
    assert vector_math.exp_log._log_uc is getattr(vector_math.exp_log, want)
    for name, (module, *_) in _F64_FORMS.items():
        form = "tables" if base.TABLE_LOOKUPS else "arith"
        assert getattr(vector_math, f"{name}_f64") is getattr(getattr(vector_math, module),
                                                             f"{name}_f64_{form}")


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=["float32", "float64"])
def test_pow_special_values_match_numpy(dt):
    """Every pair of special operands (C99 pow's cases: signed zeros and infinities, +-1, nan,
    odd / even / non-integer exponents, denormals, the largest finite values), as tensors and
    with a Python-scalar exponent."""
    fi = np.finfo(dt)
    sp = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 0.5, -0.5, 2.0, -2.0, 3.0,
                   -3.0, 2.5, -2.5, 7.0, 1e-3, fi.smallest_subnormal, -fi.smallest_subnormal,
                   fi.tiny, fi.max, -fi.max, 1e30, -1e30, 1e-30, 2.0 ** 24, 2.0 ** 24 + 2,
                   -(2.0 ** 24) - 2], np.float64)
    with np.errstate(over="ignore"):
        sp = sp.astype(dt)
    X, Y = (a.ravel() for a in np.meshgrid(sp, sp))
    got = tl.pow(tl.asarray(X), tl.asarray(Y)).numpy()
    with np.errstate(all="ignore"):
        want = np.power(X, Y)
    assert np.array_equal(np.isnan(got), np.isnan(want)), list(zip(X, Y, got, want))
    fin = ~np.isnan(want)
    exact = fin & (np.isinf(want) | (want == 0) | (np.abs(want) == 1))
    gb = got[exact].view(f"u{dt().itemsize}")
    wb = want[exact].view(f"u{dt().itemsize}")
    assert np.array_equal(gb, wb), list(zip(X[exact][gb != wb], Y[exact][gb != wb],
                                            got[exact][gb != wb], want[exact][gb != wb]))
    np.testing.assert_allclose(got[fin], want[fin], rtol=2 * fi.eps, atol=fi.smallest_subnormal)
    # Python-scalar exponent (x ** 2.5); not 0.5: NumPy's power takes sqrt's signed zero and
    # nan at -inf there, C's pow (and tensorlib) gives +0.0 and +inf
    for e in (2.5, -3.0, 2.0, 7.0):
        got = (tl.asarray(sp) ** e).numpy()
        with np.errstate(all="ignore"):
            want = np.power(sp, dt(e))
        assert got.dtype == dt
        np.testing.assert_allclose(got, want, rtol=2 * fi.eps, atol=fi.smallest_subnormal,
                                   equal_nan=True)


_HALVES = np.arange(0, 17, dtype=np.float32) / np.float32(2)   # 0, 0.5, ..., 8


def _c99_power(x, y):
    """NumPy's x ** y by arrays (C99's pow) with pow(x, +-0) = 1 for every x, signaling NaNs
    included (C99 F.9.4.4), as tensorlib gives it: libm's pow returns NaN for a signaling NaN
    there (NumPy on an AVX2-only Zen 3), NumPy's AVX-512 loops 1."""
    y = np.full_like(x, y)
    want = np.power(x, y)
    return np.where(y == 0, x.dtype.type(1), want)


def _f32_samples(n, seed):
    """n random float32 bit patterns (every exponent, denormals, both signs, nan / inf) and the
    special values of C99 pow."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    fi = np.finfo(np.float32)
    special = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 0.5, -0.5, 2.0, -2.0,
                        fi.smallest_subnormal, -fi.smallest_subnormal, fi.tiny, fi.max, -fi.max,
                        2.0 ** -64, 2.0 ** -65, 1 - 2.0 ** -24, 1 + 2.0 ** -23], np.float32)
    return np.concatenate([special, bits, rng.uniform(0, 4, n).astype(np.float32)])


def test_small_halves_python_twin_matches_the_compiled_guard():
    """pow's values-only block guard is decided in Python (kernels/cpu/pointwise.py
    _python_guard) by small_halves.value_py: the compiled guard's answer on every value tried,
    float32 and float64 (half-integers in and out of [0, 8], -0.0, nan, infinities, denormals,
    huge)."""
    from numba import njit
    from tensorlib.kernels.cpu import pointwise

    @njit
    def compiled(b):
        return scalar_math.small_halves(b)

    rng = np.random.default_rng(14)
    vals = np.concatenate([np.arange(-4, 40) / 2.0, [-0.0, np.nan, np.inf, -np.inf, 1e-45, 8.0,
                                                      8.5, 7.999999, 2.0 ** 23 + 1, 3e38],
                           rng.uniform(-1, 10, 200)])
    for dt in (np.float32, np.float64):
        for v in vals.astype(dt):
            assert scalar_math.small_halves.value_py(v) == bool(compiled(v)), (dt, v)
    guard = pointwise._python_guard("small_halves(exponent)", ["exponent"])
    assert guard(np.float32(2.5)) and not guard(np.float32(2.7)) and guard(np.float64(2.5))
    assert not guard(np.float64(8.5)) and not guard(2.5)  # a Python float: not a kernel value
    assert pointwise._python_guard("trig_short(self)", ["self"]) is None  # no twin: compiled


def test_pow_float32_by_small_half_integers():
    """float32 x ** y for y = 0, 0.5, ..., 8 (the block form, vector_math.pow_halves_f32,
    over dense blocks whose exponents are all such): within 0.5 + 2**-20 ulp of the float64
    reference (measured over 2.1e8 arguments: 0.5), C99's nan pattern and exact zeros,
    infinities and ones, as a Python scalar and as a tensor exponent."""
    x = _f32_samples(1 << 16, 21)
    for y in _HALVES:
        for got in ((tl.asarray(x) ** float(y)).numpy(),
                    tl.pow(tl.asarray(x), tl.asarray(np.full_like(x, y))).numpy()):
            with np.errstate(all="ignore"):
                # (an array exponent: with a scalar 0.5 NumPy takes sqrt's -0.0 and nan at -inf)
                want = _c99_power(x, y)
                ref = np.power(x.astype(np.float64), np.full(x.shape, y, np.float64))
            nan = np.isnan(want)
            assert np.array_equal(np.isnan(got), nan), (y, x[np.isnan(got) != nan][:5])
            # (+-1 where the exact power is: libm's pow, NumPy's loop on an AVX2-only CPU, rounds
            # sqrt(1 - 2**-53) to 1.0)
            exact = ~nan & (np.isinf(want) | (want == 0) | (np.abs(ref) == 1))
            bad = exact & (got.view(np.uint32) != want.view(np.uint32))
            assert not bad.any(), (y, x[bad][:5], got[bad][:5], want[bad][:5])
            err = _ulp_error(got[~nan], ref[~nan], np.float32)
            i = int(np.argmax(err))
            assert err[i] <= 0.5 + 2.0 ** -20, (y, err[i], x[~nan][i], got[~nan][i])


def _f64_pow_samples(n, seed):
    """float64 bases for pow's half-integer form: random bit patterns, log-uniform magnitudes
    of both signs over the whole range (results near overflow, underflow and the denormals),
    [0, 4], and C99's special values."""
    rng = np.random.default_rng(seed)
    fi = np.finfo(np.float64)
    special = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 0.5, -0.5, 2.0, -2.0,
                        fi.smallest_subnormal, -fi.smallest_subnormal, fi.tiny, fi.max, -fi.max,
                        2.0 ** -100, 2.0 ** -101, 1 - 2.0 ** -53, 1 + 2.0 ** -52])
    return np.concatenate([special,
                           rng.integers(0, 2 ** 63, n, dtype=np.uint64).view(np.float64),
                           rng.choice([-1.0, 1.0], n) * np.exp(rng.uniform(-745, 709, n)),
                           rng.uniform(0, 4, n)])


@pytest.mark.skipif(not HAVE_LD, reason="needs an 80-bit (or wider) long double reference")
def test_pow_float64_by_small_half_integers():
    """float64 x ** y for y = 0, 0.5, ..., 8 (the block form, vector_math.pow_halves_f64):
    correctly rounded for normal results but within ~2**-50 ulp of a halfway case (bound
    0.5 + 2**-40), denormal ones within 0.75 (rounded twice, as NumPy's); C99's nan pattern
    and exact zeros, infinities and ones; as a Python scalar and as a tensor exponent."""
    x = _f64_pow_samples(1 << 15, 24)
    for y in _HALVES.astype(np.float64):
        for got in ((tl.asarray(x) ** float(y)).numpy(),
                    tl.pow(tl.asarray(x), tl.asarray(np.full_like(x, y))).numpy()):
            with np.errstate(all="ignore"):
                want = _c99_power(x, y)   # (an array exponent: C99's pow)
                ref = np.power(x.astype(LD), LD(y))
            nan = np.isnan(want)
            assert np.array_equal(np.isnan(got), nan), (y, x[np.isnan(got) != nan][:5])
            # (+-1 where the exact power is: libm's pow, NumPy's loop on an AVX2-only CPU, rounds
            # sqrt(1 - 2**-53) to 1.0)
            exact = ~nan & (np.isinf(want) | (want == 0) | (np.abs(ref) == 1))
            bad = exact & (got.view(np.uint64) != want.view(np.uint64))
            assert not bad.any(), (y, x[bad][:5], got[bad][:5], want[bad][:5])
            err = _ulp_error(got[~nan], ref[~nan], np.float64)
            normal = np.abs(ref[~nan]) >= LD(np.finfo(np.float64).tiny)
            i = int(np.argmax(np.where(normal, err, 0)))
            assert err[i] <= 0.5 + 2.0 ** -40, (y, err[i], x[~nan][i], got[~nan][i])
            assert err[~normal].max(initial=0) <= 0.75, y


def test_pow_float64_squares_and_square_roots_round_correctly():
    """float64 x ** 2 is x * x and x ** 0.5 of x >= 0 is sqrt(x), to the bit, also in the
    half-integer block form (a tensor exponent: no value form), denormal squares included."""
    x = np.abs(_f64_pow_samples(1 << 14, 25))
    for y, want in ((2.0, x * x), (0.5, np.sqrt(x))):
        with np.errstate(all="ignore"):
            got = tl.pow(tl.asarray(x), tl.asarray(np.full_like(x, y))).numpy()
        same = (got.view(np.uint64) == want.view(np.uint64)) | (np.isnan(got) & np.isnan(want))
        assert same.all(), (y, x[~same][:5], got[~same][:5], want[~same][:5])


def test_pow_float32_squares_and_square_roots_round_correctly():
    """x ** 2 is the correctly rounded x * x (the double product is exact) and x ** 0.5 of
    x >= 0 is sqrt(x) to the bit (scripts/check_pow_halves_f32.py checks both over every
    non-negative float32: no difference). The general exp(y log|x|) form misses a few squares
    (2.180555e13 ** 2); a first-order square-root correction misses the float32 nearest
    below powers of 4 (0.99999994 ** 0.5)."""
    x = np.concatenate([_f32_samples(1 << 16, 22),
                        np.float32([2.180555e13, 296256.0, 0.99999994, 4.701977e-38])])
    with np.errstate(all="ignore"):
        xd = x.astype(np.float64)
        for y, want in ((2, (xd * xd).astype(np.float32)), (0.5, np.sqrt(x))):
            got = (tl.asarray(x) ** y).numpy()
            same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
            same |= (y == 0.5) & ((x < 0) | (x == -np.inf) | (np.signbit(x) & (x == 0)))  # C99
            assert same.all(), (y, x[~same][:5], got[~same][:5], want[~same][:5])


def test_pow_float32_block_form_only_where_every_exponent_allows_it():
    """A tensor exponent mixing half-integers and others: blocks holding any other exponent
    compute with the general form, within the bound either way (the non-half 0.3 and the
    half 2.5 in neighbouring elements, the 9.0 beyond POW_HALVES_MAX, the -2.0 below 0)."""
    rng = np.random.default_rng(23)
    x = rng.uniform(0, 3, 5000).astype(np.float32)
    y = np.where(rng.random(x.size) < 0.999, np.float32(2.5), np.float32(0.3))
    y[4096:] = np.float32(9.0)
    y[2048:3072] = np.float32(-2.0)
    got = tl.pow(tl.asarray(x), tl.asarray(y)).numpy()
    ref = np.power(x.astype(np.float64), y.astype(np.float64))
    assert _ulp_error(got, ref, np.float32).max() <= F32_BOUND


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=["float32", "float64"])
def test_atan2_accuracy_and_special_values(dt):
    """Random pairs (uniform, log-uniform magnitudes of both signs, random bit patterns) within
    the bound of the wider reference; every pair of special values (signed zeros, infinities,
    nan, denormals, extremes) with NumPy's nan pattern and its exact zeros / infinities."""
    if dt == np.float64 and not HAVE_LD:
        pytest.skip("needs an 80-bit (or wider) long double reference")
    rng = np.random.default_rng(4)
    n = 40000
    ity = np.uint32 if dt == np.float32 else np.uint64
    top = 38 if dt == np.float32 else 300

    def draw():
        return np.concatenate([rng.uniform(-10, 10, n),
                               rng.choice([-1.0, 1.0], n) * 10.0 ** rng.uniform(-top, top, n)])
    with np.errstate(over="ignore"):
        y, x = draw().astype(dt), draw().astype(dt)
    sp = _specials(dt)
    Y, X = (a.ravel() for a in np.meshgrid(sp, sp))
    y = np.concatenate([y, rng.integers(0, np.iinfo(ity).max, n, ity, True).view(dt), Y])
    x = np.concatenate([x, rng.integers(0, np.iinfo(ity).max, n, ity, True).view(dt), X])
    got = tl.atan2(tl.asarray(y), tl.asarray(x)).numpy()
    assert got.dtype == dt
    wide = np.float64 if dt == np.float32 else LD
    with np.errstate(all="ignore"):
        want = np.arctan2(y, x)
        ref = np.arctan2(y.astype(wide), x.astype(wide))
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    exact = ~nan & ((want == 0) | np.isinf(want))
    u = f"u{dt().itemsize}"
    assert np.array_equal(got[exact].view(u), want[exact].view(u))
    err = _ulp_error(got[~nan], ref[~nan], dt)
    i = int(np.argmax(err))
    assert err[i] <= (F32_ATAN2_BOUND if dt == np.float32 else 1.0), \
        (err[i], y[~nan][i], x[~nan][i], got[~nan][i], ref[~nan][i])


def _check_short_form(name, short, plain, ref, x, tiny, bound, wide):
    """A block fast form's helper ``short`` against the plain one over x: the plain bits where
    ``tiny``, and within ``bound`` ulp of ``ref`` computed in the ``wide`` dtype."""
    from numba import njit

    @njit(error_model="numpy")
    def both(x, a, b):
        for i in range(x.size):
            a[i] = short(x[i])
            b[i] = plain(x[i])

    got, want = np.empty_like(x), np.empty_like(x)
    both(x, got, want)
    u = f"u{x.itemsize}"
    same = got.view(u) == want.view(u)
    assert np.all(same[tiny]), (name, x[tiny & ~same][:5])
    err = _ulp_error(got, ref(x.astype(wide)), x.dtype.type)
    i = int(np.argmax(err))
    assert err[i] <= bound, (name, err[i], x[i], got[i])
    return got, want


def test_trig_short_path_is_within_one_ulp():
    """float32 sin / cos / tan block fast path (vector_math sin_short_f32 etc., run over blocks
    of elements below TRIG_SHORT_BOUND): within 1 ulp (tan: 1.1) of the float64 function on
    2**21 random float32 below the bound (both signs), the float32 nearest to k pi/4 for k up
    to 2**20 and the bound's neighbours; +-0.0 and tiny x give the plain path's bits
    (scripts/check_trig_short.py measures every float32 below the bound: sin 0.789, cos
    0.788, tan 1.058 ulp; NumPy's float32 tan: 3.62 on samples)."""
    from tensorlib.kernels.cpu import vector_math as vm

    rng = np.random.default_rng(11)
    bound = np.float32(vm.TRIG_SHORT_BOUND)
    bits = rng.integers(0, int(bound.view(np.uint32)), 1 << 21, dtype=np.uint32)
    k = np.arange(1, 1 << 20, 37, dtype=np.float64)
    near = (k * (np.pi / 4)).astype(np.float32)
    edge = np.nextafter(bound, np.float32(0)) - np.arange(8, dtype=np.float32) * np.float32(0.125)
    special = np.float32([0.0, 1e-45, 1e-40, 1e-30, 2.0 ** -13, 2.0 ** -12 * 0.999])
    x = np.concatenate([bits.view(np.float32), near, edge, special])
    x = np.concatenate([x, -x]).astype(np.float32)
    assert np.all(np.abs(x) < bound)
    tiny = np.abs(x) < 2.0 ** -12
    for name, short, plain, ref in (("sin", vm.sin_short_f32, vm.sin_f32, np.sin),
                                    ("cos", vm.cos_short_f32, vm.cos_f32, np.cos),
                                    ("tan", vm.tan_short_f32, vm.tan_f32, np.tan)):
        _check_short_form(name, short, plain, ref, x, tiny, 1.1 if name == "tan" else 1.0,
                          np.float64)


@pytest.mark.skipif(not HAVE_LD, reason="needs an 80-bit (or wider) long double reference")
def test_trig_short_path_float64_is_within_one_ulp():
    """float64 sin / cos / tan block fast path (vector_math sin_short_f64 etc.: a three-part
    Cody-Waite reduction, run over blocks of elements below TRIG_SHORT_BOUND_F64): within 1 ulp
    of long double sinl / cosl / tanl on log-uniform magnitudes up to the bound, the doubles
    nearest to k pi/2 for k up to 2**27 (where the reduced argument cancels) and their
    neighbours, and the bound's neighbours; within an ulp of the plain (Payne-Hanek) path, the
    same bits for +-0.0 and tiny x."""
    from tensorlib.kernels.cpu import vector_math as vm

    rng = np.random.default_rng(12)
    bound = vm.TRIG_SHORT_BOUND_F64
    k = np.unique(np.concatenate([np.arange(1, 4096), rng.integers(1, 1 << 27, 40000)]))
    near = (k.astype(LD) * (_LD_PI / 2)).astype(np.float64)
    near = np.concatenate([near, np.nextafter(near, 0), np.nextafter(near, np.inf)])
    edge = np.nextafter(bound, 0) - np.arange(8) * 2.0 ** -24
    special = np.array([0.0, 5e-324, 1e-310, 1e-20, 2.0 ** -27, 2.0 ** -26 * 0.999])
    x = np.concatenate([10.0 ** rng.uniform(-8, np.log10(bound), 200000), near, edge, special])
    x = np.concatenate([x, -x])
    assert np.all(np.abs(x) < bound)
    tiny = np.abs(x) < 2.0 ** -27
    for name, short, plain, ref in (("sin", vm.sin_short_f64, vm.sin_f64, np.sin),
                                    ("cos", vm.cos_short_f64, vm.cos_f64, np.cos),
                                    ("tan", vm.tan_short_f64, vm.tan_f64, np.tan)):
        got, want = _check_short_form(name, short, plain, ref, x, tiny, 1.0, LD)
        assert np.all(_ulp_error(got, want.astype(LD), np.float64) <= 1.0), name


def test_helpers_run_inside_kernels_only():
    """The helpers are compiled without a CPython wrapper (they are only ever inlined into
    kernels): a call from Python is a clear TypeError naming the helper, not a crash; from
    an @njit function they work."""
    from numba import njit
    from tensorlib.kernels.cpu import vector_math as vm
    with pytest.raises(TypeError, match=r"vector_math\.sin_f64\(\) runs inside jitted kernels"):
        vm.sin_f64(0.5)

    @njit(error_model="numpy")
    def call(x):
        return vm.sin_f64(x)
    assert abs(call(0.5) - np.sin(0.5)) <= np.spacing(np.sin(0.5))
