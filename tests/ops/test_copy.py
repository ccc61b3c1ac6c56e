"""Copies, casts and fills (ops/copy.py; the kernels: kernels/cpu/pointwise.py and
kernels/cuda/pointwise.py), one body on every device (the ``device`` fixture: CPU and CUDA on
the interpret backend), against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from helpers import ALL_DTYPES, bf16_exact, host, on_device


def test_float_to_int_special_values(device):
    """nan / inf / out of range -> INT64_MIN (then wrapped to narrower types), as x86's
    cvttsd2si gives NumPy; uint64 takes values >= 2**63 exactly."""
    x = on_device(np.array([np.nan, np.inf, -np.inf, 1e30, 2.0**63, 1.5e19, -3.0]), device)
    np.testing.assert_array_equal(host(x.astype(tl.int64), device), [-2**63] * 5 + [-2**63, -3])
    np.testing.assert_array_equal(host(x.astype(tl.uint64), device),
                                  np.array([2**63, 2**63, 2**63, 2**63, 2**63,
                                            15000000000000000000, 2**64 - 3], np.uint64))
    np.testing.assert_array_equal(host(x.astype(tl.int16), device), [0, 0, 0, 0, 0, 0, -3])


def test_copy_broadcast_and_strided_destination(device):
    src = np.arange(4, dtype=np.int16)
    dst = tl.zeros((3, 8), dtype=tl.float64, device=device)
    view = dst[:, ::2]
    view.copy_(on_device(src, device))
    want = np.zeros((3, 8))
    want[:, ::2] = src
    np.testing.assert_array_equal(host(dst, device), want)
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    g = on_device(a, device)
    np.testing.assert_array_equal(host(g.T.contiguous(), device), a.T)
    np.testing.assert_array_equal(host(g.T.clone(), device), a.T)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_fill(dtype, device):
    value = {"bool": True, "complex64": 1.5 - 2j, "complex128": -0.25 + 3j}.get(
        dtype, 1 + 2**-11 + 2**-40 if np.dtype(dtype if dtype != "bfloat16" else "f4").kind
        == "f" else 7)
    t = tl.full((2, 3), value, dtype=dtype, device=device)
    if dtype == "bfloat16":
        want = np.full((2, 3), bf16_exact(value), np.float32)
    else:
        want = np.full((2, 3), value, dtype=dtype)  # NumPy rounds once, from the Python float
    np.testing.assert_array_equal(host(t, device), want)
    z = tl.zeros((4,), dtype=dtype, device=device)
    np.testing.assert_array_equal(host(z, device), np.zeros(4, np.float32 if dtype == "bfloat16"
                                                            else dtype))


def test_fill_errors_name_the_value(device):
    t = tl.empty((3,), dtype=tl.int8, device=device)
    with pytest.raises(OverflowError, match="300"):
        t.fill_(300)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int8", "bool",
                                   "complex128"])
@pytest.mark.parametrize("layout", ["transpose", "flip", "step", "broadcast", "offset_3d"])
def test_small_strided_copies_give_every_element(dtype, layout, monkeypatch):
    """contiguous() / clone() / copy_ of a strided source of the destination's dtype below the
    parallel grain take the CPU kernel's strided copy (NumPy's over the storages' bytes); the
    result equals the source element for element, and the full path is not entered."""
    from tensorlib.iterator import TensorIterator
    dt = getattr(tl, dtype)
    rng = np.random.default_rng(5)
    host = rng.standard_normal((6, 7, 5)) * 10
    base = tl.asarray(host).astype(dt)
    src = {"transpose": lambda b: tl.permute(b, (2, 0, 1)),
           "flip": lambda b: tl.flip(b, axis=1),
           "step": lambda b: b[::2, 1::3, ::-2],
           "broadcast": lambda b: tl.broadcast_to(b[:, :1, :], (6, 7, 5)),
           "offset_3d": lambda b: b[1:5, 2:6, 1:4]}[layout](base)
    assert not src.is_contiguous()
    wide = tl.complex128 if dtype == "complex128" else tl.float64
    expected = src.astype(wide).numpy()  # each element read through the source's strides

    def no_iterator(*args, **kwargs):
        raise AssertionError("TensorIterator.build was called")
    monkeypatch.setattr(TensorIterator, "build", classmethod(no_iterator))
    outs = [src.contiguous(), src.clone()]
    dst = tl.empty(src.shape, dtype=dt)
    outs.append(dst.copy_(src))
    monkeypatch.undo()
    assert outs[0].is_contiguous() and outs[2].is_contiguous()  # clone keeps a dense order
    for out in outs:
        assert out.dtype == dt and out.shape == src.shape
        np.testing.assert_array_equal(out.astype(wide).numpy(), expected)
    assert base.astype(wide).numpy().tolist() == tl.asarray(host).astype(dt).astype(
        wide).numpy().tolist()  # the source's storage unchanged
