"""Manipulation functions against NumPy: concat, stack, flip, roll, repeat, tile, tril, triu,
meshgrid, broadcast_arrays, take, take_along_axis, diff (shapes, dtypes, layouts, errors)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import tensorlib as tl
from tensorlib.ops import manipulation
from helpers import arrays, to_numpy


def t(a):
    return tl.from_numpy(np.asarray(a))


def same(got, want):
    got = got if isinstance(got, np.ndarray) else to_numpy(got)
    assert got.dtype == want.dtype, f"{got.dtype} != {want.dtype}"
    np.testing.assert_array_equal(got, want)


A = np.arange(24, dtype=np.int64).reshape(2, 3, 4)
F = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_concat(axis):
    b = A[:, :, ::-1] + 100
    same(tl.concat([t(A), t(b), t(A[:, :, :0] if axis in (-1, None) else A)], axis=axis),
         np.concat([A, b, A[:, :, :0] if axis in (-1, None) else A], axis=axis))


def test_concat_promotes_and_checks():
    i32 = A[0, :, :1].astype(np.int32)
    want_dt = tl.result_type(tl.float32, tl.int32).name  # tensorlib's mixed-kind rule
    same(tl.concat([t(F[:, :2]), t(i32)], axis=1),
         np.concat([F[:, :2], i32], axis=1).astype(want_dt))
    with pytest.raises(ValueError, match="shape"):
        tl.concat([t(F), t(A[0, :2])], axis=1)
    with pytest.raises((ValueError, RuntimeError)):  # no tensor: nothing to dispatch on
        tl.concat([])


@pytest.mark.parametrize("axis", [0, 2, -1])
def test_stack(axis):
    same(tl.stack([t(A[0]), t(A[1]), t(A[0].T.copy().T)], axis=axis),
         np.stack([A[0], A[1], A[0]], axis=axis))
    with pytest.raises(ValueError, match="shape"):
        tl.stack([t(A[0]), t(A[0, :2])])


@given(x=arrays("float32", min_dims=1, max_dims=3), data=st.data())
def test_flip_roll_match_numpy(x, data):
    axis = data.draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1),
                               st.just(tuple(range(x.ndim)))))
    same(tl.flip(t(x), axis=axis), np.flip(x, axis=axis))
    shift = data.draw(st.integers(-7, 7))
    if isinstance(axis, tuple):
        shift = (shift,) * len(axis)
    same(tl.roll(t(x), shift, axis=axis), np.roll(x, shift, axis=axis))


@pytest.mark.parametrize("shape", [(1000,), (10, 100), (7, 3, 5), (1,), (0,), (4, 0)])
@pytest.mark.parametrize("shift", [7, -3, 0, 10**6 + 3, -(10**6 + 3)])
def test_roll_flattened_is_a_fresh_copy(shape, shift):
    """roll without an axis (contiguous inputs take concat's byte copies of two views, others
    the general path): NumPy's values, a result that shares no memory with x, and x's
    gradient rolled back."""
    x = np.arange(math.prod(shape), dtype=np.float64).reshape(shape)
    for src, ref in ((t(x), x), (t(x).T, x.T)):
        got = tl.roll(src, shift)
        same(got, np.roll(ref, shift))
        if got.size:
            got.reshape((-1,))[0] = -1.0
            same(src, ref)  # untouched
    g = t(x)
    g.requires_grad_(True)
    w = np.arange(x.size, dtype=np.float64).reshape(shape) + 1
    (tl.roll(g, shift) * t(w)).sum().backward()
    same(g.grad, np.roll(w, -shift))


def test_flip_is_a_view():
    x = tl.zeros(4)
    tl.flip(x)[0] = 1
    assert x.tolist() == [0, 0, 0, 1]


@pytest.mark.parametrize("repeats,axis", [(2, None), (3, 1), ([1, 0, 2, 1], 1),
                                          ([2, 1, 0], 0), (0, -1)])
def test_repeat(repeats, axis):
    same(tl.repeat(t(A[0]), repeats, axis=axis), np.repeat(A[0], repeats, axis=axis))


def test_repeat_tensor_counts_and_errors():
    got = manipulation.repeat(t(A[0]), t(np.array([2, 0, 1, 3])), axis=1)
    same(got, np.repeat(A[0], [2, 0, 1, 3], axis=1))
    with pytest.raises(ValueError, match="repeats"):
        tl.repeat(t(A[0]), [1, 2], axis=1)
    with pytest.raises(ValueError, match="non-negative"):
        tl.repeat(t(A[0]), -1)


@pytest.mark.parametrize("reps", [(2,), (1, 2), (2, 1, 3), (0, 2)])
def test_tile(reps):
    same(tl.tile(t(A[0]), reps), np.tile(A[0], reps))


@pytest.mark.parametrize("k", [-1, 0, 2])
def test_tril_triu(k):
    same(tl.tril(t(A), k=k), np.tril(A, k))
    same(tl.triu(t(F), k=k), np.triu(F, k))
    with pytest.raises(ValueError, match="2 dimensions"):
        tl.tril(t(A[0, 0]))


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid_and_broadcast_arrays(indexing):
    xs = [np.arange(3), np.arange(2) * 10, np.arange(4) * 100]
    got = tl.meshgrid(*[t(v) for v in xs], indexing=indexing)
    for g, w in zip(got, np.meshgrid(*xs, indexing=indexing)):
        same(g, w)
    got = manipulation.meshgrid_varargs(t(xs[0]), t(xs[1]), indexing=indexing)
    for g, w in zip(got, np.meshgrid(xs[0], xs[1], indexing=indexing)):
        same(g, w)
    for g, w in zip(tl.broadcast_arrays(t(A), t(A[0, 0]), t(np.int64(5))),
                    np.broadcast_arrays(A, A[0, 0], np.int64(5))):
        same(g, w)


def test_take():
    idx = np.array([2, 0, -1, 2])
    same(tl.take(t(A), t(idx), axis=1), np.take(A, idx, axis=1))
    same(tl.take(t(F[0]), t(idx)), np.take(F[0], idx))
    # an index view into a bigger buffer
    big = np.array([9, 1, 0, 3, 9])
    same(tl.take(t(A), t(big)[1:4], axis=2), np.take(A, big[1:4], axis=2))
    with pytest.raises(ValueError, match="axis"):
        tl.take(t(A), t(idx))
    # an index out of bounds names take and its argument (the indexing it runs on raised as
    # __getitem__, which the user did not call): 1-D direct route, int32 / other-axis route
    for x, ix, axis in ((t(A), np.array([5]), 1), (t(F[0]), np.array([0, -99]), None),
                        (t(A), np.array([0, 9], np.int32), 2)):
        with pytest.raises(IndexError, match=r"take\(\): argument 'indices': index -?\d+ is "
                                             r"out of bounds for dimension"):
            tl.take(x, t(ix), axis=axis)
    with pytest.raises(IndexError, match=r"^__getitem__\(\): index 7 is out of bounds"):
        t(F[0])[t(np.array([7]))]  # (indexing itself names itself)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_take_along_axis(axis):
    idx = np.argsort(-F, axis=axis, kind="stable")
    same(tl.take_along_axis(t(F), t(idx), axis=axis), np.take_along_axis(F, idx, axis=axis))
    first = np.zeros([1 if d == axis % 2 else n for d, n in enumerate(F.shape)], np.int64)
    same(tl.take_along_axis(t(F), t(first), axis=axis), np.take_along_axis(F, first, axis))


@pytest.mark.parametrize("n,axis", [(1, -1), (2, 0), (0, 1), (3, -1)])
def test_diff(n, axis):
    same(tl.diff(t(A), axis=axis, n=n), np.diff(A, n=n, axis=axis))
    pre = A[:, :, :1] if axis == -1 else (A[:1] if axis == 0 else A[:, :1])
    same(tl.diff(t(A), axis=axis, n=n, prepend=t(pre), append=t(pre)),
         np.diff(A, n=n, axis=axis, prepend=pre, append=pre))


def test_diff_bool():
    b = np.array([True, True, False, True])
    same(tl.diff(t(b)), np.diff(b))


def test_varargs_spellings():
    assert manipulation.meshgrid_varargs() == []
    a, b = manipulation.broadcast_arrays_varargs(t(A[0]), t(A[0, :1]))
    same(b, np.broadcast_to(A[0, :1], A[0].shape))
    with pytest.raises(TypeError, match="arrays"):
        manipulation.meshgrid_varargs(t(A[0, 0]), [1, 2])


def test_joins_along_inner_axes_of_big_tensors():
    """Outputs of several MiB (above the leading-axis byte copies' limit): concat / stack of
    contiguous inputs along an inner axis give NumPy's result."""
    rng = np.random.default_rng(8)
    a = rng.standard_normal((1100, 600)).astype(np.float32)
    b = rng.standard_normal((1100, 400)).astype(np.float32)
    same(tl.concat([t(a), t(b)], axis=1), np.concatenate([a, b], axis=1))
    c = rng.standard_normal((700, 800))
    same(tl.stack([t(c), t(c[::-1].copy())], axis=1), np.stack([c, c[::-1]], axis=1))


def _take_along_general(x, idx, axis):
    """take_along_axis with the small CPU route off (the aranges and x[key] path)."""
    from tensorlib.kernels.cpu import indexing
    manipulation._take_along_small = lambda *a: None
    try:
        return tl.take_along_axis(x, idx, axis=axis)
    finally:
        manipulation._take_along_small = indexing.take_along_small


TAKE_ALONG_DTYPES = ["bool", "int8", "uint16", "int32", "int64", "float16", "bfloat16",
                     "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("dtype", TAKE_ALONG_DTYPES)
def test_take_along_axis_small_route_is_the_general_path(dtype):
    """The small CPU route (NumPy's indexing of the raw words) gives the general path's
    tensor bit for bit: every dtype, int32 / int64, negative indices, broadcasting either
    way on the other dims, strided sources and indices, 1-3 dims, every axis."""
    from tensorlib.kernels.cpu import indexing
    served = []

    def counted(*args):
        out = indexing.take_along_small(*args)
        served.append(out is not None)
        return out
    rng = np.random.default_rng(len(dtype))
    dt = getattr(tl, dtype)
    manipulation._take_along_small = counted
    for shape in [(7,), (5, 6), (3, 4, 5), (1, 6), (4, 1)]:
        base = rng.standard_normal(shape + (2,)) * 5
        x = tl.asarray(base).astype(dt)[..., 0]  # a strided source
        nd = len(shape)
        for axis in range(-nd, nd):
            ax = axis % nd
            n = shape[ax]
            for ishape in ([k if d != ax else 3 for d, k in enumerate(shape)],
                           [1 if d != ax else 2 for d in range(nd)]):
                for it in (np.int64, np.int32):
                    ix = rng.integers(-n, n, ishape).astype(it)
                    for idx in (tl.asarray(ix), tl.flip(tl.asarray(np.flip(ix, ax).copy()), axis=ax)):
                        manipulation._take_along_small = counted
                        got = tl.take_along_axis(x, idx, axis=axis)
                        want = _take_along_general(x, idx, axis)
                        assert got.dtype is want.dtype and got.shape == want.shape
                        assert got.stride() == want.stride()
                        assert to_numpy(got).tobytes() == to_numpy(want).tobytes()
    # x broadcast against a bigger index (size-1 dims of x)
    x = tl.asarray(rng.standard_normal((1, 5))).astype(dt)
    idx = tl.asarray(rng.integers(0, 5, (4, 2)))
    assert to_numpy(tl.take_along_axis(x, idx, axis=1)).tobytes() == \
        to_numpy(_take_along_general(x, idx, 1)).tobytes()
    assert served and all(served)  # every call above took the small route


def test_take_along_axis_small_route_errors_and_declines():
    x = tl.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    with pytest.raises(IndexError, match=r"take_along_axis\(\): argument 'indices': index 4 "):
        tl.take_along_axis(x, tl.asarray(np.full((3, 1), 4)), axis=1)
    with pytest.raises(IndexError, match=r"take_along_axis\(\): argument 'indices': index -5 "):
        tl.take_along_axis(x, tl.asarray(np.full((3, 1), -5)), axis=1)
    with pytest.raises(IndexError):  # shapes that do not broadcast
        tl.take_along_axis(x, tl.asarray(np.zeros((2, 1), np.int64)), axis=1)
    with pytest.raises(ValueError, match="dimensions"):
        tl.take_along_axis(x, tl.asarray(np.zeros(3, np.int64)), axis=1)
    with pytest.raises(TypeError, match="integer"):
        tl.take_along_axis(x, tl.asarray(np.zeros((3, 1), np.float32)), axis=1)
    with pytest.raises(IndexError):
        tl.take_along_axis(x, tl.asarray(np.zeros((3, 1), np.int64)), axis=2)
    # uint8 indices and autograd take the general path (same values; a gradient)
    got = tl.take_along_axis(x, tl.asarray(np.array([[3], [0], [1]], np.uint8)), axis=1)
    np.testing.assert_array_equal(to_numpy(got), [[3.0], [4.0], [9.0]])
    w = x.clone().requires_grad_()
    y = tl.take_along_axis(w, tl.asarray(np.array([[3], [0], [1]])), axis=1)
    y.sum().backward()
    assert to_numpy(w.grad).sum() == 3.0
    # big results: the general path's gather
    big = tl.asarray(np.arange(40000, dtype=np.float32).reshape(200, 200))
    idx = tl.asarray(np.tile(np.arange(200)[::-1], (200, 1)))
    np.testing.assert_array_equal(to_numpy(tl.take_along_axis(big, idx, axis=1)),
                                  np.arange(40000, dtype=np.float32).reshape(200, 200)[:, ::-1])
