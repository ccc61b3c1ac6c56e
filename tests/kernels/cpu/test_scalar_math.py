"""Tests for tensorlib.kernels.cpu.scalar_math against the NumPy 2 ufuncs.

Each (helper, dtype) pair compiles one small cached njit loop (the harness),
so warm runs only load from Numba's cache.
"""

import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numba import njit, typeof
from numba.core.errors import TypingError
from numba.np.numpy_support import from_dtype

import tensorlib.kernels.cpu.scalar_math as sm

INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
FLOATS = [np.float32, np.float64]
COMPLEXES = [np.complex64, np.complex128]
BOOL = [np.bool_]
ALL = BOOL + INTS + FLOATS + COMPLEXES

# ulp tolerances vs NumPy: NumPy's SIMD float32 loops are up to 3 ulp off the
# correctly rounded result (tan), its float64 SVML loops up to 4; the helpers
# call the system libm.  Measured max distance to NumPy here: 3 ulp (float32),
# 3 ulp (float64).  Float32 is also checked against the float64 result
# rounded to float32 (F32_VS_F64).
ULP32 = 4
ULP64 = 4
F32_VS_F64 = 2
CRTOL = {np.dtype(np.complex64): 2e-6, np.dtype(np.complex128): 4e-15}

# --------------------------------------------------------------------------
# harness: one cached njit loop per (helper, input types)
# --------------------------------------------------------------------------

_JITKW = dict(cache=True, nogil=True, error_model="numpy", fastmath=False)
# Numba's cache only watches this file; the closure cell below puts the helper
# module's digest into the cache key so edits there recompile the harness.
_SALT = sm.SOURCE_HASH


def _make1(f, salt=_SALT):
    @njit(**_JITKW)
    def run(x, out):
        salt
        for i in range(x.shape[0]):
            out[i] = f(x[i])
        return f(x[0])
    return run


def _make2(f, salt=_SALT):
    @njit(**_JITKW)
    def run(x, y, out):
        salt
        for i in range(x.shape[0]):
            out[i] = f(x[i], y[i])
        return f(x[0], y[0])
    return run


def _make3(f, salt=_SALT):
    @njit(**_JITKW)
    def run(x, y, z, out):
        salt
        for i in range(x.shape[0]):
            out[i] = f(x[i], y[i], z[i])
        return f(x[0], y[0], z[0])
    return run


_MAKERS = {1: _make1, 2: _make2, 3: _make3}
_RUNNERS = {}


def run_helper(name, out_dtype, *arrays):
    """Apply helper ``name`` elementwise; returns (result, numba return type)."""
    key = (name, len(arrays))
    runner = _RUNNERS.get(key)
    if runner is None:
        runner = _RUNNERS[key] = _MAKERS[len(arrays)](getattr(sm, name))
    arrays = [np.ascontiguousarray(a) for a in arrays]
    out = np.empty(arrays[0].shape, dtype=out_dtype)
    runner(*arrays, out)
    argtys = tuple(typeof(a) for a in arrays) + (typeof(out),)
    (sig,) = [s for s in runner.nopython_signatures if s.args == argtys]
    return out, sig.return_type


# --------------------------------------------------------------------------
# inputs
# --------------------------------------------------------------------------

def edge_values(dt):
    dt = np.dtype(dt)
    if dt.kind == "b":
        return np.array([False, True])
    if dt.kind in "iu":
        info = np.iinfo(dt)
        bits = dt.itemsize * 8
        cand = [0, 1, 2, 3, 5, 7, 8, 100, bits - 1, bits, bits + 1, 63, 64, 65,
                info.max, info.max - 1, info.max // 2, info.min, info.min + 1,
                -1, -2, -3, -7, -8, -100, -bits, -(bits + 1)]
        return np.array(sorted({v for v in cand if info.min <= v <= info.max}), dtype=dt)
    if dt.kind == "f":
        fi = np.finfo(dt)
        vals = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 1.5,
                -1.5, 2.5, -2.5, 2.0, -2.0, 3.0, -3.0, 7.0, -7.0, 0.1, -0.1, 1e3,
                -1e3, 1e30, -1e30, float(fi.max), -float(fi.max), float(fi.tiny),
                -float(fi.tiny), float(fi.smallest_subnormal),
                -float(fi.smallest_subnormal), float(fi.eps), 1.0 - float(fi.epsneg),
                math.pi, 88.7, -88.7, 710.0, -745.0, 0.9999, -0.9999]
        with np.errstate(over="ignore"):
            return np.array(vals, dtype=dt)
    if dt.kind == "c":
        parts = np.array([0.0, -0.0, 1.0, -1.5, 2.5, np.inf, -np.inf, np.nan, 1e30],
                         dtype=np.finfo(dt).dtype)
        re, im = np.meshgrid(parts, parts)
        out = np.empty(re.size, dtype=dt)
        out.real, out.imag = re.ravel(), im.ravel()
        return out
    raise AssertionError(dt)


def random_values(dt, n, rng):
    dt = np.dtype(dt)
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        wide = rng.integers(info.min, info.max, n, endpoint=True, dtype=dt)
        small = rng.integers(max(info.min, -20), 21, n).astype(dt)
        return np.where(rng.random(n) < 0.5, wide, small)
    if dt.kind == "f":
        mag = 10.0 ** rng.uniform(-8, 8, n)
        vals = rng.standard_normal(n) * mag
        vals[: n // 4] = rng.uniform(-4, 4, n // 4)
        return vals.astype(dt)
    if dt.kind == "c":
        fdt = np.finfo(dt).dtype
        out = np.empty(n, dtype=dt)
        out.real = random_values(fdt, n, rng)
        out.imag = random_values(fdt, n, rng)[::-1]
        return out
    raise AssertionError(dt)


def unary_inputs(dt, n=400, seed=0):
    rng = np.random.default_rng(seed)
    return np.concatenate([edge_values(dt), random_values(dt, n, rng)])


def binary_inputs(dt, n=400, seed=1):
    rng = np.random.default_rng(seed)
    e = edge_values(dt)
    a, b = np.meshgrid(e, e)
    x = np.concatenate([a.ravel(), random_values(dt, n, rng)])
    y = np.concatenate([b.ravel(), random_values(dt, n, rng)])
    return x, y


# --------------------------------------------------------------------------
# comparisons
# --------------------------------------------------------------------------

def _fail(msg, bad, inputs, got, exp):
    idx = np.flatnonzero(bad)[:8]
    rows = [f"  in={[inp[i] for inp in inputs]} got={got[i]!r} exp={exp[i]!r}" for i in idx]
    pytest.fail(f"{msg}: {int(np.sum(bad))} mismatches\n" + "\n".join(rows))


def _parts(a):
    return [a.real, a.imag] if a.dtype.kind == "c" else [a]


def assert_exact(got, exp, inputs, zero_sign=True):
    assert got.dtype == exp.dtype, (got.dtype, exp.dtype)
    if got.dtype.kind not in "fc":
        bad = got != exp
        if bad.any():
            _fail("exact", bad, inputs, got, exp)
        return
    bad = np.zeros(got.shape, bool)
    for g, e in zip(_parts(got), _parts(exp)):
        gn, en = np.isnan(g), np.isnan(e)
        with np.errstate(invalid="ignore"):
            b = (gn != en) | (~en & (g != e))
            if zero_sign:
                b |= ~en & (e == 0) & (np.signbit(g) != np.signbit(e))
        bad |= b
    if bad.any():
        _fail("exact", bad, inputs, got, exp)


def _ordered(a):
    # float bits -> integers ordered like the floats (as Python ints: no overflow)
    ib = a.view(np.int32 if a.dtype.itemsize == 4 else np.int64).astype(object)
    mask = (1 << (8 * a.dtype.itemsize - 1)) - 1
    return np.array([v if v >= 0 else -(v & mask) for v in ib], dtype=object)


def assert_ulp(got, exp, inputs, ulps=None):
    assert got.dtype == exp.dtype, (got.dtype, exp.dtype)
    if ulps is None:
        ulps = ULP32 if got.dtype == np.float32 else ULP64
    gn, en = np.isnan(got), np.isnan(exp)
    bad = gn != en
    both = ~gn & ~en
    inf = both & (np.isinf(got) | np.isinf(exp))
    bad |= inf & (got != exp)
    fin = both & ~inf
    dist = np.zeros(got.shape, dtype=object)
    dist[fin] = np.abs(_ordered(got[fin]) - _ordered(exp[fin]))
    bad |= fin & (dist > ulps)
    if bad.any():
        _fail(f"> {ulps} ulp", bad, inputs, got, exp)


def assert_complex_close(got, exp, inputs, rtol=None, specials=True):
    """Finite results within rtol*|exp|; inf/nan patterns equal if ``specials``."""
    assert got.dtype == exp.dtype, (got.dtype, exp.dtype)
    rtol = CRTOL[got.dtype] if rtol is None else rtol
    fin_e = np.isfinite(exp.real) & np.isfinite(exp.imag)
    fin_g = np.isfinite(got.real) & np.isfinite(got.imag)
    with np.errstate(all="ignore"):
        err = np.abs(got.astype(np.complex128) - exp.astype(np.complex128))
        scale = np.abs(exp.astype(np.complex128))
        tiny = np.finfo(got.real.dtype).tiny
        bad = fin_e & ~(err <= rtol * scale + tiny)
    if specials:
        bad |= ~fin_e & ~fin_g & ((np.isnan(got.real) != np.isnan(exp.real))
                                  | (np.isnan(got.imag) != np.isnan(exp.imag)))
        bad |= fin_e != fin_g
    if bad.any():
        _fail("complex close", bad, inputs, got, exp)


def oracle(fn, *arrays):
    with np.errstate(all="ignore"):
        return fn(*arrays)


def check_type(name, ret, exp_dtype):
    assert ret == from_dtype(np.dtype(exp_dtype)), (name, ret, exp_dtype)


# --------------------------------------------------------------------------
# 16-bit float conversions
# --------------------------------------------------------------------------

ALL_U16 = np.arange(65536, dtype=np.uint32).astype(np.uint16)


def _f32_patterns():
    rng = np.random.default_rng(7)
    rnd = rng.integers(0, 2**32, 200_000, dtype=np.uint64).astype(np.uint32)
    # dense coverage of the half range, including every rounding boundary
    halves = ALL_U16.view(np.float16).astype(np.float32).view(np.uint32)
    near = np.concatenate([halves - np.uint32(1), halves, halves + np.uint32(1),
                           halves + np.uint32(1 << 12)])
    edges = np.array([0x7F800000, 0xFF800000, 0x7F800001, 0x7FC00000, 0x7FFFFFFF,
                      0x7F801FFF, 0x7F802000, 0x477FF000, 0x477FEFFF, 0x477FE000,
                      0x38800000, 0x387FFFFF, 0x33000000, 0x33000001, 0x32FFFFFF,
                      0x33800000, 0x7F7FFFFF, 0x7F7F8000, 0x7F7F7FFF, 0x3F808000,
                      0x3F818000, 0x00000001, 0x80000000], dtype=np.uint32)
    return np.concatenate([edges, rnd, near])


def _bf16_reference(bits):
    b = bits.astype(np.uint64)
    nan = (b & 0x7FFFFFFF) > 0x7F800000
    rne = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
    quiet = ((b >> 16) & 0x8000) | 0x7FC0
    return np.where(nan, quiet, rne).astype(np.uint16)


def test_f16_to_f32_exhaustive():
    got, ret = run_helper("f16_to_f32", np.float32, ALL_U16)
    check_type("f16_to_f32", ret, np.float32)
    exp = ALL_U16.view(np.float16).astype(np.float32)
    np.testing.assert_array_equal(got.view(np.uint32), exp.view(np.uint32))


def test_bf16_to_f32_exhaustive():
    got, ret = run_helper("bf16_to_f32", np.float32, ALL_U16)
    check_type("bf16_to_f32", ret, np.float32)
    exp = (ALL_U16.astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_array_equal(got.view(np.uint32), exp.view(np.uint32))


def test_f32_to_f16():
    bits = _f32_patterns()
    x = bits.view(np.float32)
    got, ret = run_helper("f32_to_f16", np.uint16, x)
    check_type("f32_to_f16", ret, np.uint16)
    with np.errstate(all="ignore"):
        exp = x.astype(np.float16).view(np.uint16)
    # NumPy's software conversion also keeps the nan payload's top bits
    bad = got != exp
    if bad.any():
        _fail("f32_to_f16", bad, [bits], got, exp)
    assert np.isnan(got.view(np.float16)[np.isnan(x)]).all()


def test_f32_to_bf16():
    bits = _f32_patterns()
    got, ret = run_helper("f32_to_bf16", np.uint16, bits.view(np.float32))
    check_type("f32_to_bf16", ret, np.uint16)
    exp = _bf16_reference(bits)
    bad = got != exp
    if bad.any():
        _fail("f32_to_bf16", bad, [bits], got, exp)


def test_bf16_reference_sanity():
    # the reference itself: ties to even, overflow to inf, quiet nan with sign
    b = np.array([0x3F808000, 0x3F818000, 0x7F7FFFFF, 0xFF800001, 0x3F80FFFF], np.uint32)
    assert _bf16_reference(b).tolist() == [0x3F80, 0x3F82, 0x7F80, 0xFFC0, 0x3F81]


# --------------------------------------------------------------------------
# binary helpers with exact NumPy semantics
# --------------------------------------------------------------------------

def _ids(cases):
    return [f"{c[0]}-{np.dtype(c[2]).name}" for c in cases]


def _expand(entries):
    # (helper, oracle, dtypes, options) -> one case per dtype
    return [(name, fn, dt, opts) for name, fn, dts, opts in entries for dt in dts]


def _floor_divide_standard(a, b):
    """np.floor_divide, with the Array API's floor(a / b) where an operand is inf / nan
    (issue 17: inf // 2 = inf, 1 // -inf = -0.0; NumPy gives nan and -1.0)."""
    r = np.floor_divide(a, b)
    if a.dtype.kind != "f":
        return r
    return np.where(np.isfinite(a) & np.isfinite(b), r, np.floor(a / b)).astype(r.dtype)


BINARY_EXACT = _expand([
    ("floordiv", _floor_divide_standard, INTS + FLOATS, {}),
    ("remainder", np.remainder, INTS + FLOATS, {}),
    ("fmod_", np.fmod, INTS + FLOATS, {}),
    ("true_div", np.true_divide, FLOATS + COMPLEXES, {}),
    ("maximum", np.maximum, ALL, {"zero_sign": False}),
    ("minimum", np.minimum, ALL, {"zero_sign": False}),
    ("copysign", np.copysign, FLOATS, {}),
    ("nextafter", np.nextafter, FLOATS, {}),
    ("bit_and", np.bitwise_and, BOOL + INTS, {}),
    ("bit_or", np.bitwise_or, BOOL + INTS, {}),
    ("bit_xor", np.bitwise_xor, BOOL + INTS, {}),
    ("left_shift", np.left_shift, INTS, {}),
    ("right_shift", np.right_shift, INTS, {}),
    ("logical_and", np.logical_and, ALL, {}),
    ("logical_or", np.logical_or, ALL, {}),
    ("logical_xor", np.logical_xor, ALL, {}),
])


@pytest.mark.parametrize("name,fn,dt,opts", BINARY_EXACT, ids=_ids(BINARY_EXACT))
def test_binary_exact(name, fn, dt, opts):
    x, y = binary_inputs(dt)
    exp = oracle(fn, x, y)
    got, ret = run_helper(name, exp.dtype, x, y)
    check_type(name, ret, exp.dtype)
    assert_exact(got, exp, [x, y], zero_sign=opts.get("zero_sign", True))


def test_maximum_signed_zero_order():
    # equal operands return the second one, as NumPy's x86 loops do
    z = np.array([-0.0, 0.0], np.float32)
    got, _ = run_helper("maximum", np.float32, z, z[::-1])
    assert np.signbit(got).tolist() == [False, True]
    got, _ = run_helper("minimum", np.float32, z, z[::-1])
    assert np.signbit(got).tolist() == [False, True]


@pytest.mark.parametrize("dt", INTS, ids=[np.dtype(d).name for d in INTS])
def test_true_div_int(dt):
    x, y = binary_inputs(dt)
    exp = oracle(np.true_divide, x, y)
    got, ret = run_helper("true_div", np.float64, x, y)
    check_type("true_div", ret, np.float64)
    assert_exact(got, exp, [x, y])


def _int_power_oracle(a, b):
    if a.dtype.kind == "u":
        return oracle(np.power, a, b)
    # NumPy raises for negative exponents; the helper follows PyTorch
    neg = b < 0
    r = oracle(np.power, a, np.where(neg, 0, b).astype(b.dtype))
    r[neg] = 0
    r[neg & (a == 1)] = 1
    r[neg & (a == -1)] = np.where((b[neg & (a == -1)] & 1) == 1, -1, 1)
    return r


@pytest.mark.parametrize("dt", INTS, ids=[np.dtype(d).name for d in INTS])
def test_power_int(dt):
    x, y = binary_inputs(dt)
    exp = _int_power_oracle(x, y)
    got, ret = run_helper("power", dt, x, y)
    check_type("power", ret, dt)
    assert_exact(got, exp, [x, y])


@pytest.mark.parametrize("dt", FLOATS, ids=["float32", "float64"])
def test_power_float(dt):
    x, y = binary_inputs(dt)
    exp = oracle(np.power, x, y)
    got, ret = run_helper("power", dt, x, y)
    check_type("power", ret, dt)
    assert_ulp(got, exp, [x, y])


@pytest.mark.parametrize("dt", COMPLEXES, ids=["complex64", "complex128"])
def test_power_complex(dt):
    rng = np.random.default_rng(3)
    x, y = binary_inputs(dt, n=0)
    # small integer exponents take NumPy's exact repeated-multiplication path
    ints = np.arange(-6, 7).astype(dt)
    xs = np.concatenate([x, np.repeat(random_values(dt, 20, rng), ints.size)])
    ys = np.concatenate([y, np.tile(ints, 20)])
    gen = random_values(dt, 300, rng) * 1e-3
    xs = np.concatenate([xs, random_values(dt, 300, rng) * 1e-2])
    ys = np.concatenate([ys, gen])
    exp = oracle(np.power, xs, ys)
    got, ret = run_helper("power", dt, xs, ys)
    check_type("power", ret, dt)
    # libm cpow and exp(b*log(a)) differ at overflow edges: compare finite ones
    both = (np.isfinite(exp.real) & np.isfinite(exp.imag)
            & np.isfinite(got.real) & np.isfinite(got.imag))
    assert both.sum() > 500
    rtol = 1e-5 if dt == np.complex64 else 1e-13
    assert_complex_close(got[both], exp[both], [xs[both], ys[both]], rtol=rtol)
    # integer exponents: repeated multiplication, like NumPy (nan/inf included)
    sel = (ys.imag == 0) & (ys.real == np.round(ys.real)) & (np.abs(ys.real) < 100)
    sel &= ~((xs == 0) & (ys.real < 0))  # 0**-n: nan+nanj in both, checked below
    assert_complex_close(got[sel], exp[sel], [xs[sel], ys[sel]], rtol=CRTOL[np.dtype(dt)])
    z = np.zeros(3, dt)
    g, _ = run_helper("power", dt, z, np.array([1 + 1j, -1, 1j], dt))
    assert g[0] == 0 and np.isnan(g[1].real) and np.isnan(g[2].imag)


# --------------------------------------------------------------------------
# unary helpers with exact NumPy semantics
# --------------------------------------------------------------------------

def _int_reciprocal(a):
    nz = np.where(a == 0, 1, a)
    return np.where(a == 0, 0, oracle(np.reciprocal, nz)).astype(a.dtype)


UNARY_EXACT = _expand([
    ("reciprocal", np.reciprocal, FLOATS + COMPLEXES, {}),
    ("reciprocal", _int_reciprocal, INTS, {}),
    ("square", np.square, INTS + FLOATS, {}),
    ("negative", np.negative, INTS + FLOATS + COMPLEXES, {}),
    ("absolute", np.absolute, BOOL + INTS + FLOATS, {}),
    ("absolute", lambda a: np.hypot(a.real, a.imag), COMPLEXES, {}),
    ("sign", np.sign, INTS + FLOATS + COMPLEXES, {}),
    ("signbit", np.signbit, FLOATS, {}),
    ("signbit", lambda a: np.signbit(a.astype(np.float64)), BOOL + INTS, {}),
    ("isnan", np.isnan, ALL, {}),
    ("isinf", np.isinf, ALL, {}),
    ("isfinite", np.isfinite, ALL, {}),
    ("floor", np.floor, BOOL + INTS + FLOATS, {}),
    ("ceil", np.ceil, BOOL + INTS + FLOATS, {}),
    ("trunc", np.trunc, BOOL + INTS + FLOATS, {}),
    ("round_half_even", np.rint, FLOATS + COMPLEXES, {}),
    ("round_half_even", lambda a: a, BOOL + INTS, {}),
    ("rsqrt", lambda a: np.reciprocal(np.sqrt(a)), FLOATS, {}),
    ("bit_not", np.invert, BOOL + INTS, {}),
    ("logical_not", np.logical_not, ALL, {}),
])


@pytest.mark.parametrize("name,fn,dt,opts", UNARY_EXACT, ids=_ids(UNARY_EXACT))
def test_unary_exact(name, fn, dt, opts):
    x = unary_inputs(dt)
    exp = oracle(fn, x)
    got, ret = run_helper(name, exp.dtype, x)
    check_type(name, ret, exp.dtype)
    assert_exact(got, exp, [x], zero_sign=opts.get("zero_sign", True))


# --------------------------------------------------------------------------
# math: float32 / float64 within a few ulp, complex relative to |result|
# --------------------------------------------------------------------------

MATH1 = [
    ("exp", np.exp), ("exp2", np.exp2), ("expm1", np.expm1), ("log", np.log),
    ("log2", np.log2), ("log10", np.log10), ("log1p", np.log1p), ("sqrt", np.sqrt),
    ("sin", np.sin), ("cos", np.cos), ("tan", np.tan), ("asin", np.arcsin),
    ("acos", np.arccos), ("atan", np.arctan), ("sinh", np.sinh), ("cosh", np.cosh),
    ("tanh", np.tanh), ("asinh", np.arcsinh), ("acosh", np.arccosh),
    ("atanh", np.arctanh),
]
MATH1_CASES = [(n, f, dt) for n, f in MATH1 for dt in FLOATS]


def _math_inputs(dt):
    rng = np.random.default_rng(5)
    unit = rng.uniform(-1, 1, 200).astype(dt)  # asin/acos/atanh domain
    near1 = (1 + rng.uniform(0, 3, 100)).astype(dt)  # acosh
    return np.concatenate([unary_inputs(dt), unit, near1])


@pytest.mark.parametrize("name,fn,dt", MATH1_CASES,
                         ids=[f"{n}-{np.dtype(d).name}" for n, _, d in MATH1_CASES])
def test_math_float(name, fn, dt):
    x = _math_inputs(dt)
    exp = oracle(fn, x)
    got, ret = run_helper(name, dt, x)
    check_type(name, ret, dt)
    assert_ulp(got, exp, [x])
    if dt == np.float32:
        ref = oracle(lambda v: fn(v.astype(np.float64)).astype(np.float32), x)
        assert_ulp(got, ref, [x], ulps=F32_VS_F64)


MATH1_COMPLEX = [(n, f, dt) for n, f in MATH1 for dt in COMPLEXES]


@pytest.mark.parametrize("name,fn,dt", MATH1_COMPLEX,
                         ids=[f"{n}-{np.dtype(d).name}" for n, _, d in MATH1_COMPLEX])
def test_math_complex(name, fn, dt):
    rng = np.random.default_rng(9)
    x = np.empty(600, dt)
    x.real = rng.uniform(-3, 3, 600)
    x.imag = rng.uniform(-3, 3, 600)
    fdt = np.finfo(dt).dtype
    parts = np.array([0.0, -0.0, 1.0, -1.5, 2.5, 50.0, -50.0, 1e30, -1e30, np.inf,
                      -np.inf, np.nan], fdt)
    re, im = np.meshgrid(parts, parts)
    grid = np.empty(re.size, dt)
    grid.real, grid.imag = re.ravel(), im.ravel()  # signed zeros / nans exact
    x = np.concatenate([x, grid])
    from test_special_cases import standard_complex  # the standard's values (issue 17)
    exp = standard_complex(name, x, oracle(fn, x))
    got, ret = run_helper(name, dt, x)
    check_type(name, ret, dt)
    # values to rounding, and the C99 inf/nan pattern of glibc (NumPy's libm)
    rtol = 8e-6 if dt == np.complex64 else 1e-14
    assert_complex_close(got, exp, [x], rtol=rtol)
    for g, e in ((got.real, exp.real), (got.imag, exp.imag)):
        bad = (np.isinf(g) != np.isinf(e)) | (np.isnan(g) != np.isnan(e))
        if bad.any():
            _fail("inf/nan pattern", bad, [x], got, exp)


def test_complex_regressions():
    # Numba's own complex functions get these wrong; the ports must not
    c64 = np.array([50 + 0j, 1e30 + 0j], np.complex64)
    got, _ = run_helper("tanh", np.complex64, c64)
    assert got.tolist() == [1 + 0j, 1 + 0j]
    got, _ = run_helper("exp", np.complex64, c64[1:])
    assert got[0].real == np.inf and got[0].imag == 0
    z = np.array([complex(-1.5, -0.0)])
    got, _ = run_helper("acosh", np.complex128, z)
    assert got[0].real > 0 and got[0].imag < 0


@pytest.mark.parametrize("dt", COMPLEXES, ids=["complex64", "complex128"])
def test_square_absolute_complex_vs_simd(dt):
    # NumPy's SIMD loops use FMA (square) and their own hypot (absolute); the
    # helpers compute the plain formula / libm hypot: equal to rounding
    x = unary_inputs(dt)
    fin = np.isfinite(x.real) & np.isfinite(x.imag) & (np.abs(x) < 1e15)
    x = x[fin]
    got, ret = run_helper("square", dt, x)
    check_type("square", ret, dt)
    assert_complex_close(got, oracle(np.square, x), [x], rtol=4 * np.finfo(dt).eps)
    plain = np.empty_like(x)
    plain.real = x.real * x.real - x.imag * x.imag
    plain.imag = x.real * x.imag + x.imag * x.real
    assert_exact(got, plain, [x])
    got, ret = run_helper("absolute", np.finfo(dt).dtype, x)
    assert_ulp(got, oracle(np.absolute, x), [x], ulps=2)


@pytest.mark.parametrize("dt", COMPLEXES, ids=["complex64", "complex128"])
def test_rsqrt_complex(dt):
    x = unary_inputs(dt)
    x = x[np.isfinite(x.real) & np.isfinite(x.imag) & (x != 0) & (np.abs(x) < 1e20)]
    exp = oracle(lambda a: np.reciprocal(np.sqrt(a)), x)
    got, ret = run_helper("rsqrt", dt, x)
    check_type("rsqrt", ret, dt)
    assert_complex_close(got, exp, [x], rtol=CRTOL[np.dtype(dt)])


MATH2 = [("atan2", np.arctan2), ("hypot", np.hypot), ("logaddexp", np.logaddexp)]
MATH2_CASES = [(n, f, dt) for n, f in MATH2 for dt in FLOATS]


@pytest.mark.parametrize("name,fn,dt", MATH2_CASES,
                         ids=[f"{n}-{np.dtype(d).name}" for n, _, d in MATH2_CASES])
def test_math2_float(name, fn, dt):
    x, y = binary_inputs(dt)
    exp = oracle(fn, x, y)
    got, ret = run_helper(name, dt, x, y)
    check_type(name, ret, dt)
    assert_ulp(got, exp, [x, y])


def _sigmoid_ref(x):
    xl = x.astype(np.longdouble)
    with np.errstate(all="ignore"):
        return (1 / (1 + np.exp(-xl))).astype(x.dtype)


@pytest.mark.parametrize("dt", FLOATS, ids=["float32", "float64"])
def test_sigmoid(dt):
    x = _math_inputs(dt)
    x = np.concatenate([x, np.array([-1e4, -100, -88, -30, 30, 100, 1e4], dt)])
    got, ret = run_helper("sigmoid", dt, x)
    check_type("sigmoid", ret, dt)
    assert_ulp(got, _sigmoid_ref(x), [x])
    assert got[x == -np.inf][0] == 0 and got[x == np.inf][0] == 1


@pytest.mark.parametrize("dt", FLOATS, ids=["float32", "float64"])
def test_erf(dt):
    x = _math_inputs(dt)
    exp = np.array([math.erf(float(v)) for v in x]).astype(dt)
    got, ret = run_helper("erf", dt, x)
    check_type("erf", ret, dt)
    assert_ulp(got, exp, [x])


@pytest.mark.parametrize("dt", FLOATS, ids=["float32", "float64"])
def test_clip_float(dt):
    rng = np.random.default_rng(11)
    e = edge_values(dt)
    x = np.concatenate([np.repeat(e, 4), random_values(dt, 200, rng)])
    lo = rng.choice(np.array([-1.0, 0.0, -0.0, np.nan, -np.inf, 2.0], dt), x.size)
    hi = rng.choice(np.array([1.0, 0.0, np.nan, np.inf, 3.0], dt), x.size)
    exp = oracle(lambda a, b, c: np.minimum(np.maximum(a, b), c), x, lo, hi)
    got, ret = run_helper("clip", dt, x, lo, hi)
    check_type("clip", ret, dt)
    assert_exact(got, exp, [x, lo, hi], zero_sign=False)
    ok = ~(lo > hi)  # np.clip's own loop agrees unless the bounds are crossed
    assert_exact(got[ok], oracle(np.clip, x, lo, hi)[ok], [x[ok]], zero_sign=False)


@pytest.mark.parametrize("dt", [np.int8, np.uint64, np.bool_, np.complex128],
                         ids=["int8", "uint64", "bool", "complex128"])
def test_clip_other(dt):
    x, lo = binary_inputs(dt)
    hi = lo[::-1].copy()
    exp = oracle(lambda a, b, c: np.minimum(np.maximum(a, b), c), x, lo, hi)
    got, ret = run_helper("clip", dt, x, lo, hi)
    check_type("clip", ret, dt)
    assert_exact(got, exp, [x, lo, hi], zero_sign=False)


# --------------------------------------------------------------------------
# typing: promotion, weak literals, unsupported types, Python-level calls
# --------------------------------------------------------------------------

@njit(nogil=True, error_model="numpy")
def _mixed(xf, xi, xb):
    return (sm.maximum(xf, 0), sm.power(xi, 2), sm.clip(xf, 0, 6),
            sm.floordiv(xi, np.int64(3)), sm.logical_and(xb, xf),
            sm.left_shift(xi, 1), sm.maximum(xb, True), sm.exp(xf))


def test_promotion_and_weak_literals():
    _mixed(np.float32(-1.5), np.int8(100), True)
    (sig,) = _mixed.nopython_signatures
    names = [str(t) for t in sig.return_type]
    assert names == ["float32", "int8", "float32", "int64", "bool", "int8", "bool",
                     "float32"]
    res = _mixed(np.float32(-1.5), np.int8(100), True)
    assert res[1] == 16 and res[5] == -56  # 100**2 and 100 << 1 wrap in int8


@pytest.mark.parametrize("name,arg", [("negative", True), ("sqrt", 4), ("copysign", 3),
                                      ("left_shift", 1.5), ("floordiv", 1j),
                                      ("sigmoid", 1j)])
def test_unsupported_types_fail_typing(name, arg):
    f = getattr(sm, name)
    nargs = 2 if name in ("copysign", "left_shift", "floordiv") else 1
    g = njit((lambda a: f(a)) if nargs == 1 else (lambda a: f(a, a)))
    with pytest.raises(TypingError):
        g(arg)


def test_python_level_call():
    assert sm.floordiv(np.int8(-7), np.int8(2)) == -4
    assert sm.f32_to_bf16(np.float32(1.0)) == 0x3F80
    assert sm.isnan(np.float32("nan"))


def test_all_exports_exist():
    assert len(sm.__all__) == len(set(sm.__all__))
    for name in sm.__all__:
        assert callable(getattr(sm, name))


# --------------------------------------------------------------------------
# a generated-style kernel module: cached njit, reloaded from the cache
# --------------------------------------------------------------------------

_GENERATED = '''
import numpy as np
from numba import njit
from tensorlib.kernels.cpu.scalar_math import *

@njit(cache=True, nogil=True, error_model='numpy', fastmath=False)
def kernel(a, b, out_f, out_i, out_h):
    for i in range(a.shape[0]):
        x = f16_to_f32(a[i])
        y = bf16_to_f32(b[i])
        out_f[i] = logaddexp(x, y) + sigmoid(x) + floordiv(x, y) + true_div(x, y)
        out_i[i] = power(np.int32(i), np.int32(3)) + floordiv(np.int32(i), np.int32(0))
        out_h[i] = f32_to_f16(maximum(x, y))
'''

_DRIVER = '''
import sys, numpy as np
sys.path.insert(0, sys.argv[1])
import gen_kernel
a = np.array([0x3C00, 0x4000, 0x0000, 0x7C00], np.uint16)
b = np.array([0x4000, 0x3F80, 0x0000, 0x3F80], np.uint16)
of = np.empty(4, np.float32); oi = np.empty(4, np.int32); oh = np.empty(4, np.uint16)
gen_kernel.kernel(a, b, of, oi, oh)
st = gen_kernel.kernel.stats
print(sum(st.cache_hits.values()), sum(st.cache_misses.values()))
print(of.tolist(), oi.tolist(), oh.tolist())
'''


def test_generated_kernel_cache(tmp_path):
    (tmp_path / "gen_kernel.py").write_text(textwrap.dedent(_GENERATED))
    (tmp_path / "driver.py").write_text(_DRIVER)
    src_root = Path(sys.modules["tensorlib"].__file__).resolve().parents[1]
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(src_root), os.environ.get("PYTHONPATH", "")]))
    outs = []
    for _ in range(2):
        p = subprocess.run([sys.executable, str(tmp_path / "driver.py"), str(tmp_path)],
                           env=env, capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        outs.append(p.stdout.splitlines())
    assert outs[0][0] == "0 1"  # compiled and saved
    assert outs[1][0] == "1 0"  # loaded from the cache, no recompilation
    assert outs[0][1] == outs[1][1]
    assert "nan" not in outs[0][1].split("]")[1]  # ints came out as ints


# --------------------------------------------------------------------------
# hypothesis: random values through the already-compiled harnesses
# --------------------------------------------------------------------------

HYP = settings(max_examples=60, deadline=None, derandomize=True,
               suppress_health_check=[HealthCheck.too_slow])

INT_BIN = [c for c in BINARY_EXACT if np.dtype(c[2]).kind in "iu"]
FLOAT_BIN = [c for c in BINARY_EXACT if np.dtype(c[2]).kind == "f"]


@HYP
@given(st.data())
def test_hypothesis_int_binary(data):
    name, fn, dt, opts = data.draw(st.sampled_from(INT_BIN))
    info = np.iinfo(dt)
    ints = st.integers(int(info.min), int(info.max))
    pairs = data.draw(st.lists(st.tuples(ints, ints), min_size=1, max_size=16))
    x = np.array([p[0] for p in pairs], dt)
    y = np.array([p[1] for p in pairs], dt)
    exp = oracle(fn, x, y)
    got, _ = run_helper(name, exp.dtype, x, y)
    assert_exact(got, exp, [x, y], zero_sign=opts.get("zero_sign", True))


@HYP
@given(st.data())
def test_hypothesis_float_binary(data):
    name, fn, dt, opts = data.draw(st.sampled_from(FLOAT_BIN))
    fl = st.floats(width=np.dtype(dt).itemsize * 8)
    pairs = data.draw(st.lists(st.tuples(fl, fl), min_size=1, max_size=16))
    x = np.array([p[0] for p in pairs], dt)
    y = np.array([p[1] for p in pairs], dt)
    exp = oracle(fn, x, y)
    got, _ = run_helper(name, exp.dtype, x, y)
    assert_exact(got, exp, [x, y], zero_sign=opts.get("zero_sign", True))


@HYP
@given(st.data())
def test_hypothesis_float_math(data):
    name, fn, dt = data.draw(st.sampled_from(MATH1_CASES))
    fl = st.floats(width=np.dtype(dt).itemsize * 8)
    x = np.array(data.draw(st.lists(fl, min_size=1, max_size=16)), dt)
    exp = oracle(fn, x)
    got, _ = run_helper(name, dt, x)
    assert_ulp(got, exp, [x])


@HYP
@given(st.lists(st.floats(width=32), min_size=1, max_size=32))
def test_hypothesis_f16_roundtrip(vals):
    x = np.array(vals, np.float32)
    h, _ = run_helper("f32_to_f16", np.uint16, x)
    with np.errstate(all="ignore"):
        exp = x.astype(np.float16)
    assert (h == exp.view(np.uint16)).all()
    back, _ = run_helper("f16_to_f32", np.float32, h)
    np.testing.assert_array_equal(back, exp.astype(np.float32))
