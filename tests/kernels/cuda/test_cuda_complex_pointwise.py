"""Complex dtypes in the generated CUDA (Triton) pointwise kernels, on the interpret backend.

Every ops.yaml pointwise op that accepts complex runs on device="cuda" for complex64 and
complex128 against NumPy: random values plus the C99 special-value grid of
test_special_cases.py (same tolerances: exact for arithmetic / predicates, 8 ulps of the
larger part for libm-based functions). Then the dtype mixes the CPU allows (complex with
float16 / bfloat16 / int / bool / float64 tensors, Python complex scalars, add's alpha, real
and bool outputs, out= of another precision, real computations stored into complex outputs),
strided / negative-stride / broadcast layouts and 64-bit index selection. The Triton
interpreter is slow per launch: one launch per (op, dtype) holds every value.
"""
from __future__ import annotations

import os

import numpy as np
import pytest
import yaml

import tensorlib as tl
from tensorlib import dtypes as _dt
from tensorlib.dispatch.stub import UnsupportedKernelError
from tensorlib.kernels.cuda import pointwise as P
from test_special_cases import (COMPLEX_BINARY, COMPLEX_UNARY, _COMPLEX_EXACT, _complex_equal,
                                complex_specials, oracle, standard_complex)

pytestmark = pytest.mark.usefixtures("cuda_interpret")  # conftest.py

_YAML = os.path.join(os.path.dirname(tl.__file__), "ops.yaml")
_COMPLEX_CLASSES = ("all", "numeric", "float_complex")
with open(_YAML) as _f:
    COMPLEX_OPS = sorted(e["func"].split(".")[0] for e in yaml.safe_load(_f)
                         if "pointwise" in e and e.get("dtypes", "all") in _COMPLEX_CLASSES)
_ORACLES = {"logical_and": np.logical_and, "logical_or": np.logical_or,
            "logical_xor": np.logical_xor, "logical_not": np.logical_not,
            "where": lambda c, x, y: np.where(c, x, y), "exp2": np.exp2,
            "rsqrt": lambda v: np.reciprocal(np.sqrt(v))}  # the CPU's: Smith's 1 / sqrt
_RNG = np.random.default_rng(20251105)


def dev(a):
    return tl.asarray(np.ascontiguousarray(a), device="cuda")


def host(t):
    return np.array(t.cpu().numpy(), copy=True)


def huge(dtype):
    """Parts near the largest finite value: the overflow-avoiding (scaled) branches."""
    m = np.finfo(np.empty(0, dtype).real.dtype).max
    parts = np.array([m, -m / 2, m / 3, 1.0, -0.0], np.empty(0, dtype).real.dtype)
    z = np.empty((5, 5), dtype)
    z.real, z.imag = parts[:, None], parts[None, :]
    return z.ravel()


def crandom(n, dtype, lo=0.1, hi=3.0):
    """Random complex values with parts of magnitude in [lo, hi] and random signs."""
    parts = _RNG.uniform(lo, hi, (2, n)) * _RNG.choice([-1.0, 1.0], (2, n))
    return (parts[0] + 1j * parts[1]).astype(dtype)


def _mismatch_report(args, got, want, ok):
    bad = np.argwhere(~np.asarray(ok))[:4]
    return [(tuple(a[tuple(i)] for a in args), got[tuple(i)], want[tuple(i)]) for i in bad]


def check(name, args, got, want, ulps):
    assert got.dtype == want.dtype, f"{name}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{name}: shape {got.shape} != {want.shape}"
    ok = _complex_equal(got, want, ulps)
    if name in ("multiply", "divide", "reciprocal", "square", "pow", "rsqrt"):
        # with an infinite or nan part, C99 fixes only whether the result is infinite / nan
        odd = ~np.isfinite(want) | ~np.isfinite(got)
        same = np.isinf(got) == np.isinf(want)
        if name == "divide":  # NumPy's nan special cases (ported) fix which parts are nan too
            same &= (np.isnan(got.real) == np.isnan(want.real)) & (
                np.isnan(got.imag) == np.isnan(want.imag))
        ok |= odd & same
    assert np.all(ok), (f"{name} {got.dtype}: (operands, got, want) "
                        f"{_mismatch_report(args, got, want, ok)}")


# ---- every complex op: random values + the special-value grid ------------------------------
def test_every_complex_op_is_covered():
    """The lists below (and test_special_cases') cover every ops.yaml op that takes complex."""
    covered = (set(COMPLEX_UNARY) | set(COMPLEX_BINARY) | set(_EXTRA_UNARY)
               | set(_EXTRA_BINARY) | {"where"})  # where: test_mixed_operands_...
    assert set(COMPLEX_OPS) - covered == set()


_EXTRA_UNARY = ["exp2", "rsqrt", "logical_not"]           # not in the Array API grid
_EXTRA_BINARY = ["pow", "logical_and", "logical_or", "logical_xor"]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_unary_ops_match_numpy(dtype):
    grid = complex_specials(dtype)
    x = np.concatenate([grid, huge(dtype), crandom(24, dtype)])
    t = dev(x)
    for name in COMPLEX_UNARY + _EXTRA_UNARY:
        fn = _ORACLES.get(name) or oracle(name)
        with np.errstate(all="ignore"):
            want = standard_complex(name, x, np.asarray(fn(x)))
        got = host(getattr(tl, name)(t))
        ulps = 0 if name in _COMPLEX_EXACT | {"logical_not"} else 8
        check(name, [x], got, want, ulps)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_binary_ops_match_numpy(dtype):
    grid = complex_specials(dtype)
    a, b = (g.ravel() for g in np.meshgrid(grid, grid, indexing="ij"))
    ra, rb = crandom(32, dtype), crandom(32, dtype)
    a, b = np.concatenate([a, ra]), np.concatenate([b, rb])
    ta, tb = dev(a), dev(b)
    for name in COMPLEX_BINARY + _EXTRA_BINARY:
        fn = _ORACLES.get(name) or oracle(name)
        x, y, tx, ty = a, b, ta, tb
        if name == "pow":  # the random pairs only: NumPy's cpow special values are not C99's
            x, y, tx, ty = ra, rb, dev(ra), dev(rb)
        with np.errstate(all="ignore"):
            want = np.asarray(fn(x, y))
        got = host(getattr(tl, name)(tx, ty))
        ulps = 0 if name in _COMPLEX_EXACT | set(_EXTRA_BINARY) - {"pow"} else 8
        if name == "pow":
            ulps = 64  # exp(b log a): NumPy's cpow loses as many bits on random operands
        check(name, [x, y], got, want, ulps)


def test_integer_powers_are_exact_products():
    """npy_cpow's repeated multiplication for integer exponents |n| < 100 (and 1 / that for
    negative n): the same products NumPy forms, so results agree to the last bit or two."""
    z = crandom(16, np.complex128, 0.5, 1.5)
    t = dev(z)
    for n in (0, 1, 2, 3, 4, 7, -1, -2, -5, 99, 2.5, 100):
        got = host(t ** n)
        want = z ** n
        # exp(n log z) otherwise: the rounding of log z grows n-fold (as in the CPU kernels)
        check(f"pow n={n}", [z], got, want, 4 if isinstance(n, int) and abs(n) < 100 else 2048)
    zero = host(dev(np.zeros(2, np.complex64)) ** dev(np.array([2 + 0j, -1 + 0j], np.complex64)))
    assert zero[0] == 0 and np.isnan(zero[1].real) and np.isnan(zero[1].imag)


# ---- dtype mixes, scalars, outputs ---------------------------------------------------------
def test_mixed_operands_scalars_and_outputs():
    z = crandom(12, np.complex64).reshape(3, 4)
    w = crandom(12, np.complex128).reshape(3, 4)
    f16 = _RNG.uniform(-3, 3, (3, 4)).astype(np.float16)
    f64 = _RNG.uniform(-3, 3, 4)
    i8 = _RNG.integers(-5, 6, (3, 4)).astype(np.int8)
    b = _RNG.random((3, 4)) > 0.5
    tz, tw, tf16, tf64, ti8, tb = dev(z), dev(w), dev(f16), dev(f64), dev(i8), dev(b)
    f32 = f16.astype(np.float32)
    bf16 = tf16.astype(tl.float32).astype(tl.bfloat16)  # rounded: compare with its values
    bf16_vals = host(bf16.astype(tl.float32))
    empty = lambda dt: tl.empty((3, 4), dtype=dt, device="cuda")  # noqa: E731
    with np.errstate(all="ignore"):
        cases = [
            ("complex64 + complex128", tz + tw, z + w, 0),
            ("complex64 * float16", tz * tf16, z * f16, 2),
            ("complex64 / int8", tz / ti8, z / i8, 0),
            ("complex64 - bool", tz - tb, z - b, 0),
            ("complex64 ** float64 (broadcast)", tz ** tf64, z ** f64, 64),
            ("bfloat16 * complex64", bf16 * tz, bf16_vals * z, 2),
            ("float16 * python complex", tf16 * 2.5j, f16 * np.complex64(2.5j), 2),
            ("python complex - complex128", (1 - 2j) - tw, (1 - 2j) - w, 0),
            ("int8 tensor + python complex", ti8 + (0.5 + 1j), i8 + np.complex64(0.5 + 1j), 0),
            ("add alpha complex", tl.add(tz, tz, alpha=1 - 2j), z + np.complex64(1 - 2j) * z, 2),
            ("add alpha real (per part)", tl.add(tz, tz, alpha=3), z + 3 * z, 0),
            ("subtract alpha int", tl.subtract(tw, tz, alpha=2), w - 2 * z.astype(w.dtype), 0),
            ("where complex / float64", tl.where(tb, tz, tf64), np.where(b, z, f64), 0),
            ("where complex condition", tl.where(tz * tb, tf64, 0.0),
             np.where((z * b) != 0, f64, 0.0), 0),
            ("logical_and complex, int8", tl.logical_and(tz * tb, ti8),
             np.logical_and(z * b, i8), 0),
            ("equal complex, float32", tz == dev(z.real.copy()), z == z.real, 0),
            ("not_equal complex, python complex", tz != complex(z[0, 0]), z != z[0, 0], 0),
            ("abs complex128 -> float64", tl.abs(tw), np.abs(w), 2),
            ("real complex64 -> float32", tl.real(tz), z.real, 0),
            ("imag complex128 -> float64", tl.imag(tw), w.imag, 0),
            ("isfinite -> bool", tl.isfinite(tz / 0), np.isfinite(z / np.complex64(0)), 0),
            # computed in complex64, widened when stored; NumPy's SIMD complex multiply (FMA)
            # differs from the plain formula (the CPU kernels') by an ulp
            ("complex64 result, complex128 out", host(tl.multiply(
                tz, tz, out=empty(tl.complex128))).astype(np.complex64), z * z, 2),
            ("complex128 result, complex64 out", tl.add(tw, tw, out=empty(tl.complex64)),
             (w + w).astype(np.complex64), 0),
            ("abs into a float64 out", host(tl.abs(tz, out=empty(tl.float64))).astype(
                np.float32), np.abs(z), 2),  # hypot: NumPy's abs may differ by 1-2 ulp
            ("float32 add into a complex64 out", tl.add(dev(f32), 1.5, out=empty(tl.complex64)),
             (f32 + np.float32(1.5)).astype(np.complex64), 0),
            ("bool equal into a complex128 out", tl.equal(tf16, tf16, out=empty(tl.complex128)),
             np.ones((3, 4), np.complex128), 0),
            ("in-place multiply by python complex", dev(z).mul_(2j), z * np.complex64(2j), 2),
        ]
    for label, got, want, ulps in cases:
        got = got if isinstance(got, np.ndarray) else host(got)
        check(label, [], got, np.asarray(want), ulps)


def test_python_complex_scalar_into_a_real_op_is_a_type_error():
    with pytest.raises(TypeError, match=r"floor_divide|complex"):
        tl.floor_divide(dev(np.ones(3, np.float32)), 1j)


# ---- layouts ---------------------------------------------------------------------------------
def test_strided_negative_and_broadcast_layouts():
    base = crandom(4 * 6, np.complex64).reshape(4, 6)
    other = crandom(6, np.complex128)
    t = dev(base)
    views = [
        (t[::-1, ::2], base[::-1, ::2]),                  # negative and step-2 strides
        (t.T, base.T),                                    # transposed
        (t[1:3, ::-3], base[1:3, ::-3]),                  # offset, negative stride
    ]
    for tv, nv in views:
        check("exp (strided)", [nv], host(tl.exp(tv)), np.exp(nv), 8)
        check("divide (strided)", [nv], host(tv / tv[::-1]), nv / nv[::-1], 0)
    # stride-0 broadcast of a complex128 row against strided complex64 rows
    got = host(t[::-1] * dev(other))
    check("multiply (broadcast)", [], got, base[::-1] * other, 2)  # NumPy's FMA: 1 ulp
    # a strided complex output: every other column of a wider tensor, written in place
    wide = dev(np.zeros((4, 12), np.complex64))
    tl.sqrt(t, out=wide[:, ::2])
    out = host(wide)
    check("sqrt into a strided out", [base], out[:, ::2], np.sqrt(base), 8)
    assert np.all(out[:, 1::2] == 0), "sqrt wrote between the strided output's elements"
    # 0-d and empty
    zero_d = tl.asarray(np.array(0.5 - 2j), device="cuda")
    check("0-d", [], host(tl.tanh(zero_d)), np.asarray(np.tanh(np.complex128(0.5 - 2j))), 8)
    assert host(tl.exp(dev(np.zeros((0, 3), np.complex64)))).shape == (0, 3)


def test_complex_index_width():
    """Complex operands are addressed in components (offset * 2 + 1): they switch to 64-bit
    indexing at half the element count a real operand does."""
    n = 2 ** 30 + 1
    real = P._Operand(None, _dt.float32, (1,))
    cplx = P._Operand(None, _dt.complex64, (1,))
    assert P._fits_32bit((n,), [real])
    assert not P._fits_32bit((n,), [cplx])
    assert not P._fits_32bit((3, 2), [P._Operand(None, _dt.complex128, (2 ** 30, 1))])
    assert P._fits_32bit((3, 2), [P._Operand(None, _dt.float64, (2 ** 29, 1))])


def test_unsupported_complex_helper_names_the_op():
    spec = P.ElementwiseSpec("maximum", "maximum(self, other)",
                             [("self", "T", _dt.complex64, _dt.complex64),
                              ("other", "T", _dt.complex64, _dt.complex64)],
                             [], _dt.complex64, _dt.complex64, _dt.complex64, 0)
    with pytest.raises(UnsupportedKernelError, match=r"maximum\(\).*maximum"):
        P.kernel_source(spec, "interpret")


def test_generated_source_is_straight_line_pairs():
    """add with alpha on complex64: loads of both components, the scaled pair, two stores."""
    spec = P.ElementwiseSpec("add", "self + scale(alpha, other)",
                             [("self", "T", _dt.complex64, _dt.complex64),
                              ("other", "T", _dt.float16, _dt.complex64)],
                             [("alpha", _dt.complex64)], _dt.complex64, _dt.complex64,
                             _dt.complex64, 0)
    src = P.kernel_source(spec, "compiled")
    assert "tl.load(p_self + lin * 2 + 1, mask=mask)" in src
    assert "c_scale(v_alpha_re, v_alpha_im, v_other_re, v_other_im)" in src
    assert "tl.store(p_out + lin * 2 + 1" in src
    assert "alpha_re_lo" in src and "alpha_im_hi" in src
