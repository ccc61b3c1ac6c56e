"""Small sorts along any axis by NumPy's sorts (kernels/cpu/sort_small.py) against NumPy's
stable sort, bit for bit: every axis of 1- to 3-D tensors, both orders, every real dtype (those
the route declines go to the kernel's route: same bits), ties, inf, nan payloads and -0.0 (the
route declines them: the kernel's route restores the input's bits), C-order results, the
size limits, and stream order."""
from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.kernels.cpu import sort_small, sorting
from helpers import assert_bits, to_numpy

REAL_DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
               "float16", "float32", "float64"]
SHAPES = [(31, 31), (8, 125), (125, 8), (3, 4, 5), (7,), (1, 9), (9, 1), (2, 1, 3)]


def np_argsort_along(x, axis, desc):
    """Stable argsort along ``axis``; descending: ties in input order, nan first."""
    if not desc:
        return np.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    return n - 1 - np.flip(np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)


def sample(rng, dtype, shape, ties):
    if dtype == "bool":
        return rng.random(shape) < 0.5
    d = np.dtype(dtype)
    if d.kind == "f":
        x = rng.integers(-3, 4, shape).astype(d) if ties else rng.standard_normal(shape).astype(d)
        flat = x.reshape(-1)
        flat[::5] = np.inf
        flat[2::7] = -np.inf
        return x
    info = np.iinfo(d)
    if ties:
        return rng.integers(max(info.min, -3), 4, shape).astype(d)
    return rng.integers(info.min, info.max, shape, dtype=d, endpoint=True)


def check(x, axis, desc):
    t = tl.asarray(x)
    order = np_argsort_along(x, axis, desc)
    got_v, got_i = tl.sort(t, axis=axis, descending=desc), tl.argsort(t, axis=axis, descending=desc)
    assert_bits(to_numpy(got_v), np.take_along_axis(x, order, axis))
    np.testing.assert_array_equal(to_numpy(got_i), order)
    assert got_i.dtype == tl.int64 and got_v.dtype == t.dtype


@pytest.mark.parametrize("dtype", REAL_DTYPES)
def test_every_axis_and_order_matches_numpys_stable_sort(dtype):
    rng = np.random.default_rng(len(dtype))
    for shape in SHAPES:
        for ties in (False, True):
            x = sample(rng, dtype, shape, ties)
            for axis in range(-len(shape), len(shape)):
                for desc in (False, True):
                    check(x, axis, desc)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nan_payloads_and_signed_zeros_keep_the_inputs_bits(dtype):
    """The quicksort would lose nan payloads and the order of -0.0 / +0.0: such tensors go to
    the kernel's route, which keeps them (checked here along every axis)."""
    d = np.dtype(dtype)
    u = f"u{d.itemsize}"
    nans = np.array([0x7FC00001, 0xFFC00000, 0x7F800001] if d.itemsize == 4 else
                    [0x7FF8000000000001, 0xFFF8000000000000, 0x7FF0000000000001], u).view(d)
    rng = np.random.default_rng(3)
    for special in (nans, np.array([-0.0, 0.0, -0.0], d),
                    np.concatenate([nans, np.array([-0.0], d)])):
        x = rng.standard_normal((6, 7)).astype(d)
        flat = x.reshape(-1)
        flat[rng.choice(flat.size, special.size * 3, replace=False)] = np.tile(special, 3)
        for axis in (0, 1):
            for desc in (False, True):
                check(x, axis, desc)
        t = tl.asarray(x)
        assert sort_small.sort_along_axis(t, 0, False, False, lambda: True) is None


def test_route_gives_c_order_results_and_declines_what_it_does_not_serve():
    x = np.random.default_rng(0).standard_normal((31, 31)).astype(np.float32)
    t = tl.asarray(x)
    fast = lambda: True  # noqa: E731
    for ax, want_indices in ((0, False), (0, True), (1, False)):
        r = sort_small.sort_along_axis(t, ax, False, want_indices, fast)
        assert r is not None and r.is_contiguous()
        want = np.argsort(x, axis=ax, kind="stable")
        got = to_numpy(r)
        if want_indices:
            np.testing.assert_array_equal(got, want)
        else:
            assert_bits(got, np.take_along_axis(x, want, ax))
    # argsorts along the last dim and one row of values: the kernel's rows route (no
    # transposed copy there either, and fewer steps)
    assert sort_small.sort_along_axis(t, 1, False, True, fast) is None
    assert sort_small.sort_along_axis(t[0], 0, False, False, fast) is None
    assert sort_small.sort_along_axis(t[:1], 1, False, False, fast) is None
    assert sort_small.sort_along_axis(t[:, :1], 0, False, False, fast) is not None
    # the half types and 1-byte values: the kernel's routes
    for dtype in (tl.float16, tl.bfloat16, tl.int8, tl.bool):
        assert sort_small.sort_along_axis(t.astype(dtype), 0, False, False, fast) is None
    assert sort_small.sort_along_axis(t.astype(tl.float16), 0, False, True, fast) is None
    # sizes: argsorts above SMALL_INDICES, value sorts above SMALL_VALUES, and (where NumPy's
    # sort is the scalar one) lanes from SCALAR_LANE_MAX
    big = tl.asarray(np.zeros((sort_small.SMALL_INDICES, 2), np.float32))
    assert sort_small.sort_along_axis(big, 0, False, True, fast) is None
    assert sort_small.sort_along_axis(big, 0, False, False, fast) is not None
    huge = tl.asarray(np.zeros((sort_small.SMALL_VALUES + 1, 1), np.float32))
    assert sort_small.sort_along_axis(huge, 0, False, False, fast) is None
    lane = tl.asarray(np.zeros((sort_small.SCALAR_LANE_MAX, 2), np.float32))
    assert sort_small.sort_along_axis(lane, 0, False, False, lambda: False) is None
    assert sort_small.sort_along_axis(lane, 0, False, False, fast) is not None
    # many rows shorter than NETWORK_ROW along the last dim: the kernel's network (one such
    # row, or such lanes along another dim, stay here)
    rows = tl.asarray(np.zeros((50, sort_small.NETWORK_ROW - 1), np.float32))
    assert sort_small.sort_along_axis(rows, 1, False, False, fast) is None
    assert sort_small.sort_along_axis(rows, 0, False, False, fast) is not None
    assert sort_small.sort_along_axis(rows, 0, False, True, fast) is not None


def test_public_sorts_take_the_route(monkeypatch):
    """tl.sort of small contiguous tensors along any axis, and tl.argsort along the other
    axes, run no kernel."""
    def no_kernel(*args):
        raise AssertionError("the sort kernel ran")
    x = np.random.default_rng(1).integers(-5, 5, (12, 20)).astype(np.int32)
    t = tl.asarray(x)
    monkeypatch.setattr(sorting, "_numpy_value_sort", no_kernel)
    monkeypatch.setattr(sorting, "_numpy_argsort", no_kernel)
    for axis in (0, 1, -1):
        for desc in (False, True):
            order = np_argsort_along(x, axis, desc)
            assert_bits(to_numpy(tl.sort(t, axis=axis, descending=desc)),
                        np.take_along_axis(x, order, axis))
    for desc in (False, True):
        check(x, 0, desc)


def test_bigger_sorts_keep_the_kernels_routes():
    """Past the limits (and along the last axis) the kernel's routes serve: same results."""
    rng = np.random.default_rng(2)
    for shape, axis in (((3, sort_small.SMALL_INDICES), 1), ((sort_small.SMALL_INDICES + 1, 2), 0)):
        x = rng.standard_normal(shape).astype(np.float32)
        for desc in (False, True):
            check(x, axis, desc)


def test_sort_waits_for_queued_writers():
    """A sort from the default stream reads the input after work a CPU stream has queued on
    it."""
    import threading
    from helpers import gated
    s = tl.Stream(device="cpu")
    x = tl.zeros((5, 6))
    with tl.stream(s):
        release = gated(s)
        x.copy_(tl.asarray(np.arange(30, 0, -1, dtype=np.float32).reshape(5, 6)))
    threading.Timer(0.2, release.set).start()
    got = tl.sort(x, axis=0)
    want = np.sort(np.arange(30, 0, -1, dtype=np.float32).reshape(5, 6), axis=0)
    np.testing.assert_array_equal(to_numpy(got), want)
