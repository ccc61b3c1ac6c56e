"""Raw allocation (allocation.py, tensor layer) apart from the creation ops (ops/creation.py) and
device crossings (ops/transfer.py): one object per name wherever it is imported from, and the
allocation paths keep their checks and messages."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib import allocation, factories
from tensorlib import iterator
from tensorlib.ops import creation, transfer


def test_one_object_per_name():
    for name in ("empty", "empty_strided", "empty_like", "normalize_shape"):
        assert getattr(factories, name) is getattr(allocation, name)
    for name in creation.__all__:
        assert getattr(factories, name) is getattr(creation, name)
    assert set(factories.__all__) == set(creation.__all__) | {"empty", "empty_strided",
                                                              "empty_like", "normalize_shape"}
    assert iterator.empty_strided_like_order is allocation.empty_strided_like_order
    assert transfer.empty_pinned is allocation.empty_pinned
    assert tl.asarray is creation.asarray and tl.from_numpy is creation.from_numpy
    # the generated functions call the moved implementations
    assert tl.empty(3).shape == (3,) and tl.empty_like(tl.ones((2, 3))).shape == (2, 3)


def test_old_transfer_module_is_gone():
    with pytest.raises(ImportError):
        __import__("tensorlib.runtime.transfer")


def test_allocation_checks_and_messages():
    with pytest.raises(ValueError, match=r"empty\(\): argument 'shape' has a negative dimension"):
        tl.empty(-1)
    with pytest.raises(OverflowError, match=r"empty\(\): shape .* more than can be addressed"):
        tl.empty((2 ** 40, 2 ** 40))
    with pytest.raises(OverflowError, match=r"op_x\(\): shape"):
        allocation.checked_nbytes((2 ** 40, 2 ** 40), (2 ** 40, 1), tl.float32, "op_x")
    assert allocation.checked_nbytes((0, 5), (5, 1), tl.float64, "x") == 0
    assert allocation.checked_nbytes((2, 3), (1, 2), tl.float64, "x") == 6 * 8
    with pytest.raises(ValueError, match="pin_memory=True needs a CPU tensor"):
        allocation.empty_strided((2,), (1,), tl.float32, tl.Device("cuda", 0), "empty", True)


def test_dense_helpers():
    t = allocation.new_dense_cpu((2, 3), tl.int32)
    assert t.shape == (2, 3) and t.stride() == (3, 1) and t.dtype == tl.int32
    assert t.is_contiguous() and t.device == tl.Device("cpu")
    assert allocation.new_dense_cpu((2 ** 40, 2 ** 40), tl.float32) is None
    assert allocation.empty_1d(5, tl.float64, None).shape == (5,)
    with pytest.raises(ValueError, match="negative dimension"):
        allocation.empty_1d(-1, tl.float64, None)


def test_empty_strided_like_order_follows_a_dense_input():
    x = tl.asarray(np.zeros((3, 4), np.float32)).T  # (4, 3), strides (1, 4)
    out = allocation.empty_strided_like_order((4, 3), tl.float64, x.device, x)
    assert out.stride() == (1, 4) and out.dtype == tl.float64
    assert allocation.empty_strided_like_order((4, 3), tl.float64, x.device, None).stride() == \
        (3, 1)
