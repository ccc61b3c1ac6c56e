"""scalar_math.neg on the interpret backend: the sign bit flipped for every float dtype,
zeros and nan included (kernels use it instead of Triton's unary minus, which old Triton
versions compile as 0 - x), and the helper files' place in the generated modules' cache key."""
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


def test_helper_digest_covers_every_helper_file():
    """Generated modules are keyed on the helper files' bytes (launch.HELPER_FILES): every
    file a helper facade loads, in either mode, must be in that list, or editing it would
    leave stale compiled kernels behind."""
    import os
    import sys
    from tensorlib.kernels.cuda import launch
    loaded = set()
    for mode in ("compiled", "interpret"):
        launch.helpers(mode)
        launch.complex_helpers(mode)
    for name, mod in list(sys.modules.items()):
        if name.startswith("tensorlib.kernels.cuda.") and getattr(mod, "_MODE", None):
            loaded.add(os.path.basename(mod.__file__))
    assert {"scalar_math.py", "scalar_bits.py", "complex_math.py", "complex_base.py"} <= loaded
    assert loaded <= set(launch.HELPER_FILES), loaded - set(launch.HELPER_FILES)
