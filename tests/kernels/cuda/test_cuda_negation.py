"""scalar_math.neg on the interpret backend: the sign bit flipped for every float dtype,
zeros and nan included (kernels use it instead of Triton's unary minus, which old Triton
versions compile as 0 - x)."""
from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl

pytestmark = pytest.mark.usefixtures("cuda_interpret")  # conftest.py


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_negative_flips_the_sign_bit(dtype):
    x = np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan], np.float32)
    t = tl.asarray(x, device="cuda").astype(getattr(tl, dtype))
    got = tl.negative(t).astype(tl.float64).cpu().numpy()
    np.testing.assert_array_equal(np.signbit(got), ~np.signbit(x))
    np.testing.assert_array_equal(got[~np.isnan(x)], -x[~np.isnan(x)].astype(np.float64))


def test_complex_branch_cut_on_the_real_axis():
    z = np.array([2 + 0j, complex(2, -0.0), -2 + 0j], np.complex128)
    got = tl.asin(tl.asarray(z, device="cuda")).cpu().numpy()
    np.testing.assert_allclose(got, np.arcsin(z))
    np.testing.assert_array_equal(np.signbit(got.imag), np.signbit(np.arcsin(z).imag))
