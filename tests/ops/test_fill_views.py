"""Fills of views and scalar assignments through basic keys (ops/copy.py fill_, ops/indexing.py
setitem; the CPU kernels' fill_strided / fill_dense and setitem_dense): every element of the
view gets the element a contiguous fill stores, nothing outside it changes, NumPy agrees; one
body on every device."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlib as tl
from helpers import ALL_DTYPES, arrays, bf16_exact, host, on_device

_VALUES = {
    "b": [True, False, 1],
    "i": [7, -3, 0],
    "u": [7, 0],
    "f": [1 + 2 ** -11 + 2 ** -40, float("nan"), -0.0, float("inf"), -5, 1e300],
    "c": [1.5 - 2j, complex(float("nan"), -0.0)],
}

_VIEWS = {
    "step": lambda b: b[::2, 1::3, ::-2],
    "column": lambda b: b[:, 3, 1],
    "window": lambda b: b[1:5, 2:6, 1:4],
    "diagonal": lambda b: b[:, :5, 0].diagonal(),
    "reversed": lambda b: b[::-1],
    "transposed": lambda b: tl.permute(b, (2, 0, 1)),
    "flipped_transposed": lambda b: tl.permute(b[:, ::-1, :], (1, 2, 0)),
}


def _kind(dtype):
    return "f" if dtype == "bfloat16" else np.dtype(dtype).kind


def _base(dtype, device, shape=(6, 7, 5)):
    rng = np.random.default_rng(3)
    x = rng.integers(1, 100, shape)
    return on_device(x if dtype != "bool" else x % 2 == 0, device, dtype)


def _dense_element(value, dtype, device):
    """The element a contiguous fill of ``value`` stores (its bits, as the host holds them)."""
    return host(tl.full((1,), value, dtype=getattr(tl, dtype), device=device))


def _assert_filled(base, before, mask, element):
    got = host(base)
    assert got.shape == before.shape
    # every element of the view: the dense fill's bits; every other: as it was
    np.testing.assert_array_equal(got[mask].view(np.uint8).reshape(-1, got.itemsize),
                                  np.broadcast_to(element.view(np.uint8),
                                                  (int(mask.sum()), got.itemsize)))
    assert got[~mask].tobytes() == before[~mask].tobytes()


def _view_mask(base, make_view):
    """Which elements of ``base`` the view made by ``make_view`` covers (found by filling the
    same view of an int64 tensor of positions)."""
    pos = tl.arange(base.numel(), dtype=tl.int64).reshape(base.shape)
    covered = host(make_view(pos)).ravel()
    mask = np.zeros(base.numel(), bool)
    mask[covered] = True
    return mask.reshape(base.shape)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("view", list(_VIEWS))
def test_fill_of_views_writes_the_dense_element(dtype, view, device, monkeypatch):
    """x[::2].fill_(v), a column's, a diagonal's, a reversed or transposed view's: each element
    of the view holds what a contiguous fill stores (nan, -0.0, inf, overflow to inf, a value
    that rounds once), the rest of the tensor is untouched; on the CPU no TensorIterator is
    built for these small views."""
    from tensorlib.iterator import TensorIterator
    make = _VIEWS[view]
    for value in _VALUES[_kind(dtype)]:
        base = _base(dtype, device)
        before = host(base)
        mask = _view_mask(base, make)
        element = _dense_element(value, dtype, device)
        target = make(base)
        assert not target.is_contiguous()
        if device == "cpu":
            def no_iterator(*args, **kwargs):
                raise AssertionError("TensorIterator.build was called")
            monkeypatch.setattr(TensorIterator, "build", classmethod(no_iterator))
        assert target.fill_(value) is target
        monkeypatch.undo()
        _assert_filled(base, before, mask, element)


@pytest.mark.parametrize("dtype", ["float32", "int8", "float16", "bfloat16"])
@pytest.mark.parametrize("view", ["step", "reversed"])
def test_fill_of_big_views(dtype, view):
    """Views above the parallel grain: a strided one (the full path's kernel) and a reversed
    one (filled as the contiguous block it occupies)."""
    n = 600_000
    base = on_device(np.arange(n) % 50, "cpu", dtype)
    before = host(base)
    make = (lambda b: b[1::2]) if view == "step" else (lambda b: b[::-1][: n - 3])
    mask = np.zeros(n, bool)
    mask[slice(1, None, 2) if view == "step" else slice(3, None)] = True
    element = _dense_element(-5, dtype, "cpu")
    make(base).fill_(-5)
    _assert_filled(base, before, mask, element)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), dtype=st.sampled_from(["float32", "int16", "complex64", "bool",
                                               "float16", "uint8"]))
def test_fill_of_numpy_layouts_matches_numpy(data, dtype):
    """fill_ of a tensor over NumPy memory in a drawn layout (transposed, reversed, every other
    element, 0-d, empty) equals NumPy's fill of the same layout; a broadcast layout (NumPy's
    broadcast arrays are read-only) is refused with nothing written."""
    arr = data.draw(arrays(dtype, max_side=6))
    value = data.draw(st.sampled_from(_VALUES[np.dtype(dtype).kind]))
    t = tl.asarray(arr)
    assert np.shares_memory(t.numpy(), arr) or arr.size == 0
    want = arr.copy()
    with np.errstate(all="ignore"):
        want[...] = value
    if not arr.flags.writeable:
        before = arr.copy()
        with pytest.raises(ValueError, match="read-only"):
            t.fill_(value)
        assert arr.tobytes() == before.tobytes()
        return
    t.fill_(value)
    np.testing.assert_array_equal(arr, want)
    if arr.dtype.kind == "f":
        assert np.signbit(arr).tolist() == np.signbit(want).tolist()


def test_fill_of_a_broadcast_view_is_refused(device):
    """Elements shared through a zero stride: an error naming the layout, nothing written."""
    x = on_device(np.arange(3.0), device)
    with pytest.raises(RuntimeError, match="share memory"):
        tl.broadcast_to(x, (4, 3)).fill_(1.0)
    with pytest.raises(RuntimeError, match="share memory"):
        tl.broadcast_to(x[::2], (4, 2)).fill_(1.0)
    assert host(x).tolist() == [0.0, 1.0, 2.0]


def test_fill_of_views_refuses_bad_values_writing_nothing(device):
    base = _base("uint8", device, (4, 6))
    before = host(base)
    with pytest.raises(OverflowError, match="-1"):
        base[:, ::2].fill_(-1)
    with pytest.raises(TypeError, match="2.5"):
        base[::-1, 1].fill_(2.5)
    assert host(base).tobytes() == before.tobytes()


def test_fill_of_read_only_views_raises():
    arr = np.arange(12.0).reshape(3, 4)
    arr.flags.writeable = False
    t = tl.asarray(arr)
    with pytest.raises(ValueError, match="read-only"):
        t[:, 1].fill_(0)
    with pytest.raises(ValueError, match="read-only"):
        t[:, 1] = 0
    assert arr[:, 1].tolist() == [1.0, 5.0, 9.0]


def test_fill_of_a_view_on_a_cpu_stream_is_stream_ordered():
    """With a user CPU stream current the fill is queued on it (the full path), after work
    already queued there."""
    from helpers import gated
    s = tl.Stream(device="cpu")
    x = tl.zeros((8, 8))
    with tl.stream(s):
        release = gated(s)
        x[:, 2].fill_(3.0)
        view = x[1::2, :]
        view.fill_(1.0)
    release.set()
    s.synchronize()
    want = np.zeros((8, 8), np.float32)
    want[:, 2] = 3
    want[1::2] = 1
    np.testing.assert_array_equal(x.numpy(), want)


def test_fill_of_a_view_waits_for_queued_writers():
    """A fill of a view from the default stream waits for work a CPU stream has queued on the
    same memory (else that work would land after the fill and overwrite it)."""
    import threading
    from helpers import gated
    s = tl.Stream(device="cpu")
    x = tl.zeros((6, 6))
    with tl.stream(s):
        release = gated(s)
        x.add_(1.0)  # queued behind the gate
    threading.Timer(0.2, release.set).start()
    x[:, 1].fill_(5.0)
    x[::2, ::-3].fill_(7.0)
    want = np.ones((6, 6), np.float32)
    want[:, 1] = 5
    want[::2, ::-3] = 7
    np.testing.assert_array_equal(x.numpy(), want)


# ---- scalar assignment through basic keys --------------------------------------------------
_KEYS_2D = [(slice(None), 0), (1, slice(None)), (slice(1, 3), slice(None, None, 2)), (-1, -2),
            (slice(None, None, -1), 1), (0,), (slice(2, 2), 0), (slice(1, -1),),
            slice(1, -1), slice(2, 4), slice(None, None, 2)]
_KEYS_3D = [(1, slice(None), slice(1, None, 3)), (slice(None), 0), (slice(None), -1, 2),
            (slice(1, 3),), slice(1, 2)]


def _np_expected(before, key, value, dtype):
    want = before.copy()
    with np.errstate(all="ignore"):
        want[key] = bf16_exact(value) if dtype == "bfloat16" and not isinstance(value, bool) \
            else value
    return want


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_scalar_setitem_through_basic_keys_matches_numpy(dtype, device):
    """x[:, 0] = v, x[1:3, ::2] = v, x[-1, -2] = v, x[1:-1] = v (whole rows), on 2-D and 3-D
    tensors: NumPy's result (its rounding of a Python float, once; bfloat16: the exact
    rounding), for every dtype and its special values."""
    for shape, keys in (((5, 6), _KEYS_2D), ((3, 4, 5), _KEYS_3D)):
        for key in keys:
            for value in _VALUES[_kind(dtype)]:
                if dtype != "bfloat16" and np.dtype(dtype).kind in "iu" and isinstance(
                        value, float):
                    continue
                t = _base(dtype, device, shape)
                before = host(t)
                t[key] = value
                got = host(t)
                want = _np_expected(before, key, value, dtype)
                np.testing.assert_array_equal(got, want, err_msg=f"{key} = {value!r}")
                if got.dtype.kind == "f":
                    assert np.signbit(got).tolist() == np.signbit(want).tolist()


@pytest.mark.parametrize("dtype", ["float32", "int64", "float16", "complex128", "bool"])
@pytest.mark.parametrize("rows", [(10, 390), (0, 999)])
def test_scalar_setitem_of_many_rows(dtype, rows):
    """x[a:b] = v over whole rows below and above the parallel grain (1000 x 300 elements)."""
    t = _base(dtype, "cpu", (1000, 300))
    before = host(t)
    key = slice(*rows)
    value = _VALUES[_kind(dtype)][0]
    t[key] = value
    np.testing.assert_array_equal(host(t), _np_expected(before, key, value, dtype))


def test_scalar_setitem_bad_keys_and_values_write_nothing(device):
    t = _base("int8", device, (5, 6))
    before = host(t)
    with pytest.raises(IndexError):
        t[5, 0] = 1
    with pytest.raises(IndexError):
        t[0, -7] = 1
    with pytest.raises(IndexError):
        t[0, 0, 0] = 1
    with pytest.raises(OverflowError, match="300"):
        t[:, 0] = 300
    with pytest.raises(OverflowError, match="300"):
        t[1:3] = 300
    assert host(t).tobytes() == before.tobytes()


def test_scalar_setitem_through_basic_keys_of_a_view():
    """The target is itself a strided view (x[:, ::2][1:3, 0] = v): the write lands in the
    base's memory at NumPy's positions."""
    a = np.arange(48, dtype=np.float64).reshape(6, 8)
    t = tl.asarray(a.copy())
    v = t[:, ::2]
    v[1:3, 0] = -1.0
    v[::-1][0] = 7.0
    w = a.copy()
    w[:, ::2][1:3, 0] = -1.0
    w[:, ::2][::-1][0] = 7.0
    np.testing.assert_array_equal(t.numpy(), w)


def test_scalar_conversion_is_silent_and_overflows_to_inf():
    """scalar_to_compute: in-range values convert without a warning, out-of-range floats become
    inf without one (NumPy would warn), complex parts near the float range too (abs() of such a
    complex raises in Python)."""
    from tensorlib.dtype_scalars import scalar_to_compute
    cases = [(1.5, tl.float32, np.float32(1.5)), (70000.0, tl.float16, np.float16(np.inf)),
             (-1e300, tl.float32, np.float32(-np.inf)), (10 ** 40, tl.float32, np.float32(np.inf)),
             (complex(1.7e308, -1.7e308), tl.complex64, np.complex64(complex(np.inf, -np.inf))),
             (float("nan"), tl.float16, np.float16(np.nan)), (True, tl.float64, np.float64(1)),
             (3, tl.int8, np.int8(3))]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for value, dtype, want in cases:
            got = scalar_to_compute(value, dtype, "op", "arg")
            assert type(got) is type(want)
            np.testing.assert_array_equal(got, want)
