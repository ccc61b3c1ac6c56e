"""The K-major staging copy of tf32 matmul operands (kernels/cuda/matmul.py ``_k_major_copy``),
on the interpret backend: same shape and values as the operand, k the contiguous dim."""
from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.kernels.cuda import matmul as MM

pytestmark = pytest.mark.usefixtures("cuda_interpret")  # conftest.py

_RNG = np.random.default_rng(11)


def _host(t):
    return np.array(t.cpu()._to_host_numpy(), copy=True)


@pytest.mark.parametrize("is_b", [False, True])
@pytest.mark.parametrize("layout", ["row", "transposed", "stepped", "batched"])
def test_k_major_copy(is_b, layout):
    base = _RNG.standard_normal((3, 12, 10)).astype(np.float32)
    t = tl.asarray(base, device="cuda")
    view, t = {"row": (base[0], t[0]), "transposed": (base[0].T, t[0].mT),
               "stepped": (base[1, ::2, ::-3], t[1, ::2, ::-3]),
               "batched": (base.transpose(0, 2, 1), t.mT)}[layout]
    got = MM._k_major_copy(t, is_b)
    assert got.shape == t.shape and got.dtype == t.dtype
    assert got._strides[-2 if is_b else -1] == 1  # k is the contiguous dim
    np.testing.assert_array_equal(_host(got), view)
