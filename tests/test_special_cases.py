"""Special cases of every Array API elementwise function.

1. Against NumPy (which follows the standard's special cases almost everywhere): every function
   on float32 / float64 special values (nan, +-inf, +-0, +-1, halves for rounding, the largest
   finite, the smallest normal and subnormal, and their negatives) as one operand or all pairs;
   integer functions on every int8 / uint8 value (all pairs for binary ones) and on the edges of
   int32 / int64 (min, max and their neighbours: overflow wraps, division by zero gives 0,
   floor_divide / remainder sign rules).
2. Against the standard itself: a table of its special cases (signed zeros, infinities, nan),
   written out by hand from the specification's text, exact to the bit for zeros.

Where the standard and NumPy differ, the comment at the case says which is followed and why.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import tensorlib as tl

# ---------------------------------------------------------------- the functions and oracles
FLOAT_UNARY = """abs acos acosh asin asinh atan atanh ceil conj cos cosh exp expm1 floor imag
isfinite isinf isnan log log1p log2 log10 logical_not negative positive real reciprocal round
sign signbit sin sinh square sqrt tan tanh trunc""".split()
FLOAT_BINARY = """add atan2 copysign divide equal floor_divide greater greater_equal hypot less
less_equal logaddexp logical_and logical_or logical_xor maximum minimum multiply nextafter
not_equal pow remainder subtract""".split()

# Every integer function runs on the int32 edges. The 8-bit types run exhaustively (all pairs)
# and int64 on its edges, for the functions where width or signedness changes the rules
# (wrap-around, INT_MIN // -1, |INT_MIN|, shifts by >= the width, unsigned negation); each
# (function, dtype) is a kernel compile on a fresh machine, so the lists stay short.
INT_UNARY = "abs bitwise_invert ceil floor negative positive round sign square trunc".split()
INT_BINARY = """add bitwise_and bitwise_left_shift bitwise_or bitwise_right_shift bitwise_xor
equal floor_divide greater greater_equal less less_equal maximum minimum multiply not_equal pow
remainder subtract""".split()
WIDTH_OPS = {
    "int8": """abs negative sign square bitwise_invert add subtract multiply floor_divide
    remainder pow bitwise_left_shift bitwise_right_shift""".split(),
    "uint8": """negative add subtract multiply floor_divide remainder pow bitwise_left_shift
    bitwise_right_shift""".split(),
    "int64": """abs negative square add subtract multiply floor_divide remainder pow
    bitwise_left_shift bitwise_right_shift""".split(),
}

_NUMPY_NAMES = {"acos": "arccos", "acosh": "arccosh", "asin": "arcsin", "asinh": "arcsinh",
                "atan": "arctan", "atan2": "arctan2", "atanh": "arctanh",
                "bitwise_invert": "invert", "bitwise_left_shift": "left_shift",
                "bitwise_right_shift": "right_shift", "pow": "power"}


def oracle(name):
    return getattr(np, _NUMPY_NAMES.get(name, name))


def float_specials(dtype):
    fi = np.finfo(dtype)
    v = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 2.0,
         -3.0, 0.1, 1e10, -1e10, fi.max, -fi.max, fi.smallest_normal, -fi.smallest_normal,
         fi.smallest_subnormal, -fi.smallest_subnormal]
    return np.array(v, dtype)


def int_values(dtype):
    ii = np.iinfo(dtype)
    if ii.bits == 8:
        return np.arange(ii.min, ii.max + 1).astype(dtype)
    edges = {ii.min, ii.min + 1, ii.min // 2, -7, -2, -1, 0, 1, 2, 3, 7, 31, 32, 33, 63, 64,
             ii.max // 2, ii.max - 1, ii.max}
    return np.array(sorted(x for x in edges if ii.min <= x <= ii.max), dtype)


def _operands(name, v, unary):
    if unary:
        return [v]
    a, b = np.meshgrid(v, v, indexing="ij")
    if name == "pow" and v.dtype.kind == "i":
        b = np.where(b < 0, 0, b).astype(v.dtype)  # NumPy refuses negative integer powers
    return [a, b]


def _run(name, args):
    got = getattr(tl, name)(*[tl.asarray(a) for a in args])
    return np.array(got.numpy(), copy=True)


def _mismatches(args, got, want, ok):
    """The first few failing (operands, got, want)."""
    return [(tuple(a[tuple(i)] for a in args), got[tuple(i)], want[tuple(i)])
            for i in np.argwhere(~ok)[:5]]


def _equal(got, want, ulps=0):
    """Elementwise: nan where nan, equal infinities and zero signs; finite values within
    ``ulps`` units in the last place (transcendental results differ by libm)."""
    if got.dtype.kind != "f":
        return got == want
    return _float_equal(got, want, ulps)


@np.errstate(invalid="ignore", over="ignore")
def _float_equal(got, want, ulps):
    same = (got == want) & (np.signbit(got) == np.signbit(want))
    same |= np.isnan(got) & np.isnan(want)
    if ulps:
        fin = np.isfinite(got) & np.isfinite(want) & (want != 0)
        tol = ulps * np.spacing(np.abs(want).astype(want.dtype))
        same |= fin & (np.abs(got - want) <= tol)
    return same


# exact results expected: arithmetic, rounding, comparisons, bit ops; libm functions get ulps
_EXACT = {"abs", "add", "ceil", "conj", "copysign", "divide", "equal", "floor", "floor_divide",
          "greater", "greater_equal", "imag", "isfinite", "isinf", "isnan", "less",
          "less_equal", "logical_and", "logical_not", "logical_or", "logical_xor", "maximum",
          "minimum", "multiply", "negative", "nextafter", "not_equal", "positive", "real",
          "reciprocal", "remainder", "round", "sign", "signbit", "sqrt", "square", "subtract",
          "trunc"}


# ---------------------------------------------------------------- 1. against NumPy
FLOAT_CASES = [(n, d) for n in FLOAT_UNARY + FLOAT_BINARY for d in ("float32", "float64")]


@pytest.mark.parametrize("name,dtype", FLOAT_CASES, ids=[f"{n}-{d}" for n, d in FLOAT_CASES])
def test_float_special_values_match_numpy(name, dtype):
    args = _operands(name, float_specials(dtype), name in FLOAT_UNARY)
    got = _run(name, args)
    with np.errstate(all="ignore"):
        want = np.asarray(oracle(name)(*args))
        if name == "floor_divide":  # an inf / nan operand: the standard's floor(a / b)
            odd = ~(np.isfinite(args[0]) & np.isfinite(args[1]))
            want = np.where(odd, np.floor(args[0] / args[1]), want)
    assert got.dtype == want.dtype, f"{name}: dtype {got.dtype} != {want.dtype}"
    ok = _equal(got, want, ulps=0 if name in _EXACT else 4)
    if name in ("maximum", "minimum"):
        # +-0 ties: the standard leaves the sign of the zero returned unspecified
        ok |= (got == 0) & (want == 0)
    assert ok.all(), f"{name} {dtype}: {_mismatches(args, got, want, ok)}"


INT_CASES = ([(n, "int32") for n in INT_UNARY + INT_BINARY]
             + [(n, d) for d, names in WIDTH_OPS.items() for n in names])


@pytest.mark.parametrize("name,dtype", INT_CASES, ids=[f"{n}-{d}" for n, d in INT_CASES])
def test_integer_edges_match_numpy(name, dtype):
    """Wrap-around on overflow (as NumPy; the standard leaves it unspecified), x // 0 == x % 0
    == 0 (NumPy's; unspecified in the standard), floor_divide rounding toward -inf and remainder
    taking the divisor's sign (the standard's rules), shifts by >= the width giving 0 / -1."""
    args = _operands(name, int_values(dtype), name in INT_UNARY)
    got = _run(name, args)
    with np.errstate(all="ignore"):
        want = np.asarray(oracle(name)(*args))
    assert got.dtype == want.dtype, f"{name}: dtype {got.dtype} != {want.dtype}"
    ok = got == want
    assert ok.all(), f"{name} {dtype}: {_mismatches(args, got, want, ok)}"


# Complex: every function the standard defines on complex operands, on a grid of components
# (the standard's complex special cases are C99 Annex G's, which NumPy's glibc calls follow).
COMPLEX_UNARY = """abs acos acosh asin asinh atan atanh conj cos cosh exp expm1 imag isfinite
isinf isnan log log1p log2 log10 negative positive real reciprocal round sign sin sinh square
sqrt tan tanh""".split()
COMPLEX_BINARY = "add divide equal multiply not_equal subtract".split()
_COMPLEX_EXACT = {"conj", "imag", "isfinite", "isinf", "isnan", "negative", "positive",
                  "real", "round", "add", "equal", "not_equal", "subtract"}


def complex_specials(dtype):
    fi = np.finfo(np.empty(0, dtype).real.dtype)
    parts = np.array([0.0, -0.0, 1.0, -2.5, 0.5, np.inf, -np.inf, np.nan, 1e30, fi.max / 4],
                     fi.dtype)
    z = np.empty((parts.size, parts.size), dtype)
    z.real, z.imag = parts[:, None], parts[None, :]  # re + 1j * im would turn inf into nan
    return z.ravel()


@np.errstate(invalid="ignore", over="ignore")
def _complex_equal(got, want, ulps):
    if got.dtype.kind != "c":
        return _equal(got, want, ulps)
    # finite parts within ulps of the larger part: libm and glibc round differently
    mag = np.maximum(np.abs(want.real), np.abs(want.imag)).astype(want.real.dtype)
    ok = np.ones(got.shape, bool)
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        same = _float_equal(g, w, 0)
        if ulps:
            fin = np.isfinite(g) & np.isfinite(w)
            same |= fin & (np.abs(g - w) <= ulps * np.spacing(mag))
        ok &= same
    return ok


COMPLEX_CASES = [(n, d) for n in COMPLEX_UNARY + COMPLEX_BINARY
                 for d in ("complex64", "complex128")]


@np.errstate(all="ignore")
def standard_complex(name, z, want):
    """NumPy's results ``want`` of ``name(z)`` with the standard's values where tensorlib
    follows it instead (issue 17; tests/test_array_api_gaps.py checks them one by one)."""
    if name == "expm1":
        # an inf / nan part: exp(z) - 1 (NumPy gives nan parts); a zero imaginary part stays
        # itself (NumPy's exp(x) * sin(0) is nan once exp(x) overflows)
        odd = ~(np.isfinite(z.real) & np.isfinite(z.imag))
        real_axis = np.empty_like(z)
        real_axis.real, real_axis.imag = np.expm1(z.real), z.imag
        want = np.where(~odd & (z.imag == 0), real_axis, want)
        return np.where(odd, np.exp(z) - 1, want)
    if name == "tanh":  # tanh(+-inf + iy) = +-1 + 0j signed as y (glibc signs sin 2y)
        fix = np.empty_like(z)
        fix.real, fix.imag = np.copysign(1, z.real), np.copysign(0, z.imag)
        return np.where(np.isinf(z.real), fix, want)
    return want


@pytest.mark.parametrize("name,dtype", COMPLEX_CASES, ids=[f"{n}-{d}" for n, d in COMPLEX_CASES])
def test_complex_special_values_match_numpy(name, dtype):
    args = _operands(name, complex_specials(dtype), name in COMPLEX_UNARY)
    got = _run(name, args)
    with np.errstate(all="ignore"):
        want = np.asarray(oracle(name)(*args))
        want = standard_complex(name, args[0], want)
    assert got.dtype == want.dtype, f"{name}: dtype {got.dtype} != {want.dtype}"
    ok = _complex_equal(got, want, 0 if name in _COMPLEX_EXACT else 8)
    if name in ("multiply", "divide", "reciprocal", "square"):
        # with an infinite or nan part, C99 only fixes whether the result is infinite / nan
        # (the parts' signs and which part is nan follow the algorithm)
        odd = ~np.isfinite(want) | ~np.isfinite(got)
        ok |= odd & (np.isinf(got) == np.isinf(want))
    assert ok.all(), f"{name} {dtype}: {_mismatches(args, got, want, ok)}"


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_sqrt_and_log_near_overflow(dtype):
    """Parts near the largest finite value: sqrt must scale both parts, and log|z| must not
    overflow where |z| does."""
    top = np.finfo(np.empty(0, dtype).real.dtype).max
    z = np.array([complex(top, top), complex(top / 2, 3), complex(-top, 1e-30),
                  complex(1, -top), complex(top / 3, -top / 5), complex(-top, -top)], dtype)
    for name in ("sqrt", "log", "log2", "log10"):
        got = _run(name, [z])
        want = getattr(np, name)(z)
        ok = _complex_equal(got, want, 8)
        assert ok.all(), f"{name} {dtype}: {_mismatches([z], got, want, ok)}"


# ---------------------------------------------------------------- 2. against the standard
INF, NAN = math.inf, math.nan
PI = math.pi
_Z, _NZ = 0.0, -0.0

# (function, operands, result) from the specification's special-case lists
STANDARD = [
    ("abs", (_NZ,), _Z), ("abs", (-INF,), INF), ("abs", (NAN,), NAN),
    ("acos", (1.0,), _Z), ("acos", (1.5,), NAN), ("acos", (NAN,), NAN),
    ("acosh", (1.0,), _Z), ("acosh", (0.5,), NAN), ("acosh", (INF,), INF),
    ("asin", (_NZ,), _NZ), ("asin", (-1.5,), NAN), ("asinh", (_NZ,), _NZ),
    ("asinh", (-INF,), -INF), ("atan", (_NZ,), _NZ), ("atan", (-INF,), -PI / 2),
    ("atanh", (_NZ,), _NZ), ("atanh", (-1.0,), -INF), ("atanh", (1.0,), INF),
    ("atanh", (2.0,), NAN),
    ("add", (INF, -INF), NAN), ("add", (_NZ, _NZ), _NZ), ("add", (_NZ, _Z), _Z),
    ("add", (-INF, 5.0), -INF), ("add", (1.0, -1.0), _Z),
    ("atan2", (_Z, _Z), _Z), ("atan2", (_Z, _NZ), PI), ("atan2", (_NZ, _Z), _NZ),
    ("atan2", (_NZ, _NZ), -PI), ("atan2", (_Z, -1.0), PI), ("atan2", (_NZ, -1.0), -PI),
    ("atan2", (1.0, _NZ), PI / 2), ("atan2", (-1.0, _Z), -PI / 2),
    ("atan2", (INF, INF), PI / 4), ("atan2", (INF, -INF), 3 * PI / 4),
    ("atan2", (-INF, INF), -PI / 4), ("atan2", (-INF, -INF), -3 * PI / 4),
    ("atan2", (1.0, -INF), PI), ("atan2", (-1.0, -INF), -PI), ("atan2", (-1.0, INF), _NZ),
    ("ceil", (-0.5,), _NZ), ("ceil", (_NZ,), _NZ), ("ceil", (-INF,), -INF),
    ("copysign", (1.0, _NZ), -1.0), ("copysign", (-INF, _Z), INF),
    ("cos", (_NZ,), 1.0), ("cos", (INF,), NAN), ("cosh", (-INF,), INF), ("cosh", (_NZ,), 1.0),
    ("divide", (_Z, _NZ), NAN), ("divide", (INF, -INF), NAN), ("divide", (1.0, _NZ), -INF),
    ("divide", (-1.0, _NZ), INF), ("divide", (_NZ, 2.0), _NZ), ("divide", (_Z, -2.0), _NZ),
    ("divide", (-INF, 2.0), -INF), ("divide", (1.0, -INF), _NZ),
    ("equal", (NAN, NAN), False), ("equal", (_NZ, _Z), True), ("not_equal", (NAN, NAN), True),
    ("less", (_NZ, _Z), False), ("less_equal", (NAN, INF), False),
    ("greater", (INF, NAN), False), ("greater_equal", (-INF, -INF), True),
    ("exp", (-INF,), _Z), ("exp", (_NZ,), 1.0), ("exp", (INF,), INF),
    ("expm1", (_NZ,), _NZ), ("expm1", (-INF,), -1.0), ("expm1", (INF,), INF),
    ("floor", (0.5,), _Z), ("floor", (_NZ,), _NZ), ("floor", (-0.5,), -1.0),
    ("floor_divide", (7.0, 2.0), 3.0), ("floor_divide", (-7.0, 2.0), -4.0),
    ("floor_divide", (_Z, -1.0), _NZ), ("floor_divide", (_NZ, 1.0), _NZ),
    ("floor_divide", (1.0, _NZ), -INF), ("floor_divide", (_Z, _Z), NAN),
    ("floor_divide", (INF, INF), NAN),
    # The standard's floor(a / b) values with an infinite operand (issue 17; NumPy returns
    # Python's divmod pairing instead: NaN for +-inf // finite, -1 for 1 // -inf)
    ("floor_divide", (INF, 2.0), INF), ("floor_divide", (-INF, -2.0), INF),
    ("floor_divide", (-INF, 2.0), -INF), ("floor_divide", (-1.0, INF), _NZ),
    ("floor_divide", (1.0, -INF), _NZ), ("floor_divide", (-1.0, -INF), _Z),
    ("floor_divide", (1.0, INF), _Z),
    ("floor_divide", (1.0, INF), _Z),
    ("hypot", (INF, NAN), INF), ("hypot", (NAN, -INF), INF), ("hypot", (NAN, 1.0), NAN),
    ("hypot", (_NZ, _NZ), _Z), ("hypot", (-3.0, 4.0), 5.0),
    ("isfinite", (NAN,), False), ("isinf", (-INF,), True), ("isnan", (NAN,), True),
    ("log", (_NZ,), -INF), ("log", (_Z,), -INF), ("log", (-1.0,), NAN), ("log", (1.0,), _Z),
    ("log", (INF,), INF), ("log1p", (-1.0,), -INF), ("log1p", (_NZ,), _NZ),
    ("log1p", (-2.0,), NAN), ("log2", (1.0,), _Z), ("log2", (_NZ,), -INF),
    ("log10", (1.0,), _Z), ("log10", (-INF,), NAN),
    ("logaddexp", (INF, 1.0), INF), ("logaddexp", (INF, -INF), INF),
    ("logaddexp", (-INF, -INF), -INF), ("logaddexp", (NAN, INF), NAN),
    ("logical_and", (NAN, 1.0), True), ("logical_or", (_NZ, _Z), False),
    ("logical_not", (NAN,), False), ("logical_xor", (INF, _NZ), True),
    ("maximum", (NAN, 1.0), NAN), ("maximum", (1.0, NAN), NAN), ("minimum", (-INF, NAN), NAN),
    ("maximum", (-INF, 1.0), 1.0), ("minimum", (INF, -1.0), -1.0),
    ("multiply", (INF, _Z), NAN), ("multiply", (_NZ, 1.0), _NZ), ("multiply", (-INF, -1.0), INF),
    ("multiply", (_NZ, _NZ), _Z),
    ("negative", (_Z,), _NZ), ("negative", (-INF,), INF), ("positive", (_NZ,), _NZ),
    ("nextafter", (1.0, 1.0), 1.0), ("nextafter", (NAN, 1.0), NAN),
    ("nextafter", (_NZ, _Z), _Z), ("nextafter", (_Z, _NZ), _NZ),
    ("pow", (NAN, _Z), 1.0), ("pow", (NAN, _NZ), 1.0), ("pow", (1.0, NAN), 1.0),
    ("pow", (NAN, 1.0), NAN), ("pow", (-INF, 0.5), INF), ("pow", (-INF, 3.0), -INF),
    ("pow", (-INF, -3.0), _NZ), ("pow", (-INF, -0.5), _Z), ("pow", (_NZ, 3.0), _NZ),
    ("pow", (_NZ, 0.5), _Z), ("pow", (_NZ, -3.0), -INF), ("pow", (_NZ, -0.5), INF),
    ("pow", (_Z, -1.0), INF), ("pow", (-2.0, 0.5), NAN), ("pow", (2.0, INF), INF),
    ("pow", (0.5, INF), _Z), ("pow", (2.0, -INF), _Z), ("pow", (-0.5, -INF), INF),
    ("pow", (-1.0, INF), 1.0), ("pow", (-1.0, -INF), 1.0), ("pow", (INF, -1.0), _Z),
    ("remainder", (1.0, _Z), NAN), ("remainder", (INF, 2.0), NAN), ("remainder", (NAN, 1.0), NAN),
    ("remainder", (_Z, 1.0), _Z), ("remainder", (_NZ, 1.0), _Z), ("remainder", (_Z, -1.0), _NZ),
    ("remainder", (_NZ, -1.0), _NZ), ("remainder", (1.0, INF), 1.0),
    ("remainder", (-1.0, INF), INF), ("remainder", (1.0, -INF), -INF),
    ("remainder", (-1.0, -INF), -1.0), ("remainder", (5.5, -2.0), -0.5),
    ("remainder", (-5.5, 2.0), 0.5),
    ("round", (0.5,), _Z), ("round", (-0.5,), _NZ), ("round", (2.5,), 2.0),
    ("round", (-1.5,), -2.0), ("round", (-INF,), -INF),
    ("sign", (-INF,), -1.0), ("sign", (NAN,), NAN), ("sign", (-2.5,), -1.0),
    ("signbit", (_NZ,), True), ("signbit", (_Z,), False), ("signbit", (-NAN,), True),
    ("signbit", (-INF,), True),
    ("sin", (_NZ,), _NZ), ("sin", (-INF,), NAN), ("sinh", (_NZ,), _NZ), ("sinh", (-INF,), -INF),
    ("sqrt", (_NZ,), _NZ), ("sqrt", (-1.0,), NAN), ("sqrt", (INF,), INF),
    ("square", (_NZ,), _Z), ("square", (-INF,), INF),
    ("subtract", (INF, INF), NAN), ("subtract", (_NZ, _Z), _NZ), ("subtract", (_Z, _Z), _Z),
    ("tan", (_NZ,), _NZ), ("tan", (INF,), NAN), ("tanh", (-INF,), -1.0), ("tanh", (_NZ,), _NZ),
    ("trunc", (-0.5,), _NZ), ("trunc", (INF,), INF),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_standards_special_cases(dtype):
    """All cases of one function in one call (one kernel per function and dtype)."""
    by_fn = {}
    for name, args, want in STANDARD:
        by_fn.setdefault(name, []).append((args, want))
    failures = []
    for name, cases in by_fn.items():
        cols = [np.array([c[0][i] for c in cases], dtype) for i in range(len(cases[0][0]))]
        got = _run(name, cols)
        want = np.array([c[1] for c in cases])
        want = want.astype(dtype) if want.dtype.kind == "f" else want
        ok = _equal(got, want, ulps=1)
        failures += [(name, args, g, w) for (args, w), g, k in zip(cases, got, ok) if not k]
    assert not failures, failures


def test_special_case_table_covers_every_float_function():
    covered = {name for name, _, _ in STANDARD}
    missing = set(FLOAT_UNARY + FLOAT_BINARY) - covered - {"conj", "real", "imag",
                                                           "reciprocal"}
    assert not missing, sorted(missing)


def test_integer_sign_rules_and_division_by_zero():
    # the standard's rules for floor_divide / remainder on integers (with NumPy's x // 0 == 0)
    a = tl.asarray(np.array([7, -7, 7, -7, 0, -128, -128, 5], np.int8))
    b = tl.asarray(np.array([2, 2, -2, -2, -3, -1, 1, 0], np.int8))
    assert tl.floor_divide(a, b).tolist() == [3, -4, -4, 3, 0, -128, -128, 0]
    assert tl.remainder(a, b).tolist() == [1, 1, -1, -1, 0, 0, 0, 0]
    # tensor operands only: the same kernels as the sweeps above (no new compiles)
    u = tl.asarray(np.array([0, 1, 255], np.uint8))
    assert tl.negative(u).tolist() == [0, 255, 1]
    assert tl.add(u, tl.ones_like(u)).tolist() == [1, 2, 0]
    i64 = tl.asarray(np.array([-(2 ** 63), 2 ** 63 - 1], np.int64))
    assert tl.abs(i64).tolist() == [-(2 ** 63), 2 ** 63 - 1]  # |INT_MIN| wraps, as NumPy
    assert tl.multiply(i64, tl.full_like(i64, 2)).tolist() == [0, -2]
