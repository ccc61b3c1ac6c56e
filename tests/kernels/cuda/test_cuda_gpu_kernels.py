"""Compiled Triton kernels on a real GPU against NumPy: what the interpreter cannot show
(pointer types as the GPU sees them, tensor-core dot inputs, the grid of a split reduction,
Triton's own reductions). Skipped without a GPU (conftest)."""
from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cuda_real")]

_RNG = np.random.default_rng(3)


def _bf16(x):
    """float32 -> nearest-even bfloat16 value as float32."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return (((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint32) << 16).view(np.float32)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int8",
                                   "int32", "int64", "complex64", "bool"])
@pytest.mark.parametrize("mnk", [(64, 48, 32), (257, 129, 70), (1024, 1024, 1024)])
def test_matmul_every_dtype_class(dtype, mnk):
    m, n, k = mnk
    if dtype == "bool":
        a, b = _RNG.random((m, k)) > 0.7, _RNG.random((k, n)) > 0.7
    elif dtype.startswith("int"):
        a, b = (_RNG.integers(-4, 5, s).astype(dtype) for s in ((m, k), (k, n)))
    elif dtype == "complex64":
        a, b = ((_RNG.standard_normal(s) + 1j * _RNG.standard_normal(s)).astype(dtype)
                for s in ((m, k), (k, n)))
    else:
        a, b = (_RNG.uniform(-1, 1, s).astype(np.float32) for s in ((m, k), (k, n)))
        if dtype == "bfloat16":
            a, b = _bf16(a), _bf16(b)
        elif dtype != "float32":
            a, b = a.astype(dtype), b.astype(dtype)
    if dtype == "bfloat16":
        ta, tb = (tl.asarray(x, device="cuda").astype(tl.bfloat16) for x in (a, b))
        got = (ta @ tb).astype(tl.float32).cpu().numpy()
    else:
        got = (tl.asarray(a, device="cuda") @ tl.asarray(b, device="cuda")).cpu().numpy()
    wide = np.complex128 if dtype == "complex64" else np.float64
    want = a.astype(wide) @ b.astype(wide)
    if dtype == "bool":
        np.testing.assert_array_equal(got, want != 0)
    elif dtype.startswith("int"):
        np.testing.assert_array_equal(got, want.astype(dtype))
    else:
        tol = {"float16": 2e-3, "bfloat16": 1e-2, "float32": 1e-4, "float64": 1e-12,
               "complex64": 1e-4}[dtype]
        scale = np.max(np.abs(want)) or 1.0
        assert np.max(np.abs(got.astype(wide) - want)) / scale < tol


@pytest.mark.parametrize("n", [1, 1000, 4097, 1 << 22, (1 << 24) + 3])
@pytest.mark.parametrize("op", ["sum", "mean", "max", "min", "var", "argmax"])
def test_full_reductions_long(op, n):
    a = _RNG.standard_normal(n).astype(np.float32)
    a[n // 3] = 50.0
    got = np.asarray(getattr(tl, op)(tl.asarray(a, device="cuda")).cpu().numpy())
    want = getattr(np, op)(a.astype(np.float64))
    if op == "argmax":
        assert int(got) == int(want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("shape,axis", [((7, 300000), 1), ((300000, 7), 0), ((4096, 512), 1),
                                        ((512, 4096), 0), ((3, 5, 70000), (0, 2))])
def test_axis_reductions_exact_integers(shape, axis):
    a = _RNG.integers(-100, 100, shape).astype(np.int32)
    got = tl.sum(tl.asarray(a, device="cuda"), axis=axis).cpu().numpy()
    np.testing.assert_array_equal(got, a.astype(np.int64).sum(axis=axis))
    b = _RNG.integers(-100, 100, shape).astype(np.float32)
    np.testing.assert_array_equal(tl.max(tl.asarray(b, device="cuda"), axis=axis).cpu().numpy(),
                                  b.max(axis=axis))


@pytest.mark.parametrize("layout", ["row_row", "row_kmajor", "mmajor_row", "batched"])
def test_tf32_matmul_layouts(layout):
    # tf32 stages M-/N-major operands K-major (matmul._k_major_copy) above 256 rows/columns
    from tensorlib.kernels.cuda import flags
    shape_a, shape_b = ((2, 300, 96), (2, 96, 520)) if layout == "batched" else \
        ((300, 96), (96, 520))
    a = _RNG.uniform(-1, 1, shape_a).astype(np.float32)
    b = _RNG.uniform(-1, 1, shape_b).astype(np.float32)
    ta, tb = tl.asarray(a, device="cuda"), tl.asarray(b, device="cuda")
    if layout == "row_kmajor":
        tb = tl.asarray(np.ascontiguousarray(b.T), device="cuda").mT
    elif layout == "mmajor_row":
        ta = tl.asarray(np.ascontiguousarray(a.T), device="cuda").mT
    flags.backends.matmul.allow_tf32 = True
    try:
        got = (ta @ tb).cpu().numpy()
    finally:
        flags.backends.matmul.allow_tf32 = False
    want = a.astype(np.float64) @ b.astype(np.float64)
    assert np.max(np.abs(got - want)) / np.max(np.abs(want)) < 5e-3


def test_negation_and_branch_cuts_keep_the_sign_of_zero():
    # Triton before 3.7 compiles -x as 0 - x: kernels use scalar_math.neg instead
    x = np.array([0.0, -0.0, 1.0, np.inf], np.float32)
    got = tl.negative(tl.asarray(x, device="cuda")).cpu().numpy()
    np.testing.assert_array_equal(np.signbit(got), np.signbit(-x))
    z = np.array([2 + 0j, complex(2, -0.0), -2 + 0j, 0.5 + 0j, 1 + 2j], np.complex128)
    for dt in (np.complex64, np.complex128):
        for op in ("asin", "acos", "acosh", "atanh", "asinh", "sqrt", "log", "negative"):
            got = getattr(tl, op)(tl.asarray(z.astype(dt), device="cuda")).cpu().numpy()
            want = getattr(tl, op)(tl.asarray(z.astype(dt))).numpy()  # the CPU kernels
            np.testing.assert_allclose(got, want, rtol=1e-5, err_msg=f"{op} {dt}")
            np.testing.assert_array_equal(np.signbit(got.imag), np.signbit(want.imag),
                                          err_msg=f"{op} {dt}")
