"""CUDA pointwise launch plans (kernels/cuda/pointwise.py ``_plans``): a repeated call reuses
the kernel, grid and size/stride arguments of its layout; pointers and scalar values are taken
per call. Interleaved layouts, dtypes and scalars must each get their own plan (interpret
backend, NumPy as the oracle)."""
from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.kernels.cuda import pointwise as P

pytestmark = pytest.mark.usefixtures("cuda_interpret")  # conftest.py

_RNG = np.random.default_rng(5)


def _host(t):
    return np.array(t.cpu()._to_host_numpy(), copy=True)


def test_interleaved_layouts_and_offsets_get_the_right_plan():
    base = _RNG.standard_normal((6, 8)).astype(np.float32)
    t = tl.asarray(base, device="cuda")
    views = [(base, t), (base[:, ::2], t[:, ::2]), (base[::-1], t[::-1]), (base.T, t.T),
             (base[1:, 3:], t[1:, 3:]), (base[2:, 1:], t[2:, 1:])]  # same layout, new offset
    for _ in range(3):  # second and third rounds hit the cached plans
        for a, x in views:
            np.testing.assert_array_equal(_host(x * 2.0 + x), a * 2.0 + a)
            np.testing.assert_array_equal(_host(tl.exp(x)), np.exp(a))


def test_a_plan_hit_does_not_reuse_a_layout():
    P._plans.clear()
    x = tl.asarray(np.arange(12, dtype=np.float32), device="cuda")
    y = x + x
    assert len(P._plans) == 1
    y = x + x
    assert len(P._plans) == 1                     # hit
    z = x[::2] + x[::2]
    assert len(P._plans) == 2                     # a new layout: a new plan
    np.testing.assert_array_equal(_host(y), np.arange(12) * 2.0)
    np.testing.assert_array_equal(_host(z), np.arange(0, 12, 2) * 2.0)
    # same shape, other strides (output layouts equal): the inputs' strides key the plan
    a = np.arange(48, dtype=np.float32).reshape(6, 8)
    b = np.arange(72, dtype=np.float32).reshape(6, 12)
    ta, tb = tl.asarray(a, device="cuda"), tl.asarray(b, device="cuda")
    np.testing.assert_array_equal(_host(ta[:, ::2] + 1.0), a[:, ::2] + 1.0)
    np.testing.assert_array_equal(_host(tb[:, ::3] + 1.0), b[:, ::3] + 1.0)
    np.testing.assert_array_equal(_host(ta[:, ::2] + tb[:, ::3]), a[:, ::2] + b[:, ::3])
    np.testing.assert_array_equal(_host(tb[:, ::3] + ta[:, ::2]), b[:, ::3] + a[:, ::2])


@pytest.mark.parametrize("dtype", ["int8", "int32", "float32", "bool"])
def test_scalar_values_and_kinds_per_call(dtype):
    a = (np.arange(10) % 3).astype(dtype)
    x = tl.asarray(a, device="cuda")
    for s in (1, 2, True, False, 0, -1) if dtype != "bool" else (True, False, 1, 0):
        got = _host(x * s)
        want = a * np.asarray(s, dtype=a.dtype) if dtype != "bool" else a & bool(s)
        np.testing.assert_array_equal(got, want.astype(got.dtype), err_msg=repr(s))
    if dtype == "float32":
        for s in (0.0, -0.0):  # floats are not remembered: -0.0 keeps its sign
            np.testing.assert_array_equal(np.signbit(_host(x * s)), np.signbit(a * s))


def test_scalar_errors_still_name_the_argument():
    x = tl.asarray(np.arange(4, dtype=np.int8), device="cuda")
    x + 1
    with pytest.raises(OverflowError, match="out of bounds for int8"):
        x + 1000
    with pytest.raises(OverflowError, match="out of bounds for int8"):
        x + 1000  # the failed value was not remembered
