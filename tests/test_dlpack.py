"""DLPack: zero-copy exchange with NumPy both ways (legacy and versioned capsules, every dtype,
strided / negative-stride / 0-d / empty views), lifetimes (the producer's deleter runs exactly
when the last user is gone), copy= and device= handling, read-only memory and errors."""
from __future__ import annotations

import gc
import sys

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import dlpack
from helpers import to_numpy


@pytest.fixture(autouse=True)
def dlpack_methods(monkeypatch):
    # Until tensor.py binds them itself.
    monkeypatch.setattr(tl.Tensor, "__dlpack__", dlpack.tensor_dlpack, raising=False)
    monkeypatch.setattr(tl.Tensor, "__dlpack_device__", dlpack.tensor_dlpack_device,
                        raising=False)
    yield
    gc.collect()


class Producer:
    """A foreign producer: hands over a capsule made elsewhere (legacy protocol, no kwargs)."""

    def __init__(self, capsule, device=(1, 0)):
        self.capsule, self.device = capsule, device

    def __dlpack__(self, stream=None):
        return self.capsule

    def __dlpack_device__(self):
        return self.device


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int32", "int64", "uint64",
                                   "float16", "float32", "float64", "complex64", "complex128"])
def test_numpy_round_trip_is_zero_copy(dtype):
    a = np.arange(24).reshape(2, 3, 4).astype(dtype)
    t = dlpack.from_dlpack(a)
    assert t.dtype.name == dtype and t.shape == a.shape and t.data_ptr() == a.ctypes.data
    b = np.from_dlpack(t)
    assert b.dtype == a.dtype and b.ctypes.data == a.ctypes.data
    np.testing.assert_array_equal(b, a)


@pytest.mark.parametrize("index", [(slice(None), slice(None, None, -2)), (1,), (Ellipsis, 0),
                                   (slice(0, 0),)], ids=["neg-stride", "row", "column", "empty"])
def test_strided_views_both_ways(index):
    a = np.arange(20, dtype=np.float32).reshape(4, 5)
    v = a[index]
    t = dlpack.from_dlpack(v)
    assert t.shape == v.shape
    np.testing.assert_array_equal(to_numpy(t), v)
    back = np.from_dlpack(t)
    assert back.strides == v.strides or v.size == 0
    np.testing.assert_array_equal(back, v)
    if v.size:
        t[(0,) * t.ndim] = -7  # writes are shared
        assert v[(0,) * v.ndim] == -7


def test_zero_d_and_writes_through():
    t = tl.asarray(np.float64(2.5))
    b = np.from_dlpack(t)
    assert b.shape == () and b[()] == 2.5
    x = tl.zeros(4)
    np.from_dlpack(x)[1] = 3
    assert x.tolist() == [0, 3, 0, 0]


def test_lifetimes_exporting():
    t = tl.arange(6.0)
    before = len(dlpack._live)
    b = np.from_dlpack(t)
    assert len(dlpack._live) == before + 1
    del t
    gc.collect()
    np.testing.assert_array_equal(b, np.arange(6.0, dtype=np.float32))  # kept alive by b
    del b
    gc.collect()
    assert len(dlpack._live) == before
    # capsules never consumed release the tensor too
    t = tl.arange(3)
    for mv in (None, (1, 0)):
        cap = t.__dlpack__(max_version=mv)
        assert type(cap).__name__ == "PyCapsule"
        del cap
        gc.collect()
        assert len(dlpack._live) == before


def test_lifetimes_importing():
    a = np.arange(10.0)
    refs = sys.getrefcount(a)
    t = dlpack.from_dlpack(a)
    assert sys.getrefcount(a) > refs  # NumPy's export holds the array
    view = t[2:5]
    del t
    gc.collect()
    assert sys.getrefcount(a) > refs
    del view
    gc.collect()
    assert sys.getrefcount(a) == refs


def test_versioned_and_legacy_capsules():
    t = tl.arange(4, dtype=tl.int16)
    for mv in (None, (0, 8), (1, 0), (1, 5)):
        got = dlpack.from_dlpack(Producer(t.__dlpack__(max_version=mv)))
        assert got.data_ptr() == t.data_ptr() and got.tolist() == [0, 1, 2, 3]
    # bfloat16 has a DLPack type code even though NumPy cannot take it
    h = tl.asarray(np.array([1.5, -2.0], np.float32)).astype(tl.bfloat16)
    got = dlpack.from_dlpack(Producer(h.__dlpack__(max_version=(1, 0))))
    assert got.dtype is tl.bfloat16 and got.tolist() == [1.5, -2.0]
    with pytest.raises(ValueError, match="consumed"):
        cap = t.__dlpack__()
        dlpack.from_dlpack(Producer(cap))
        dlpack.from_dlpack(Producer(cap))


def test_copy_and_device_arguments():
    a = np.arange(5.0)
    c = dlpack.from_dlpack(a, copy=True)
    assert c.data_ptr() != a.ctypes.data and c.tolist() == a.tolist()
    assert dlpack.from_dlpack(a, copy=False).data_ptr() == a.ctypes.data
    assert dlpack.from_dlpack(a, device="cpu").data_ptr() == a.ctypes.data
    t = tl.arange(3.0)
    assert np.from_dlpack(t, copy=True).ctypes.data != t.data_ptr()
    assert np.from_dlpack(t, device="cpu").ctypes.data == t.data_ptr()
    assert dlpack.from_dlpack(t) is t or dlpack.from_dlpack(t).data_ptr() == t.data_ptr()
    ro = np.arange(3.0)
    ro.flags.writeable = False
    shared = dlpack.from_dlpack(ro, copy=False)  # read-only: shared as a read-only tensor
    assert shared.data_ptr() == ro.ctypes.data and shared.is_readonly
    assert dlpack.from_dlpack(ro).is_readonly
    with pytest.raises(ValueError, match="read-only"):
        shared += 1
    with pytest.raises(ValueError, match="read-only"):
        shared[0] = 5.0
    assert ro.tolist() == [0.0, 1.0, 2.0]
    c = dlpack.from_dlpack(ro, copy=True)
    assert not c.is_readonly and c.data_ptr() != ro.ctypes.data
    c[0] = 7.0
    assert ro[0] == 0.0


def test_device_reporting_and_errors():
    t = tl.zeros(2)
    assert t.__dlpack_device__() == (dlpack.DLDeviceType.kDLCPU, 0)
    with pytest.raises(BufferError, match="kDLCUDA"):
        t.__dlpack__(dl_device=(dlpack.DLDeviceType.kDLCUDA, 0))
    with pytest.raises(TypeError, match="stream"):
        t.__dlpack__(stream="s")
    with pytest.raises(TypeError, match="__dlpack__"):
        dlpack.from_dlpack([1, 2])

    class OnMetal:
        def __dlpack_device__(self):
            return (dlpack.DLDeviceType.kDLMetal, 0)

        def __dlpack__(self, **kw):
            cap = tl.zeros(2).__dlpack__()
            # rewrite the device field of the (legacy) struct the capsule points to
            ptr = dlpack._capsule_get_pointer(cap, b"dltensor")
            dlpack.DLManagedTensor.from_address(ptr).dl_tensor.device.device_type = 8
            return cap

    with pytest.raises(BufferError, match="kDLMetal"):
        dlpack.from_dlpack(OnMetal())
