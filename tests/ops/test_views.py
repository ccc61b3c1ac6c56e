"""View ops against their NumPy equivalents over every layout: values, shapes, strides, aliasing
(writes through a view land in the base), view vs reshape, as_strided bounds, and errors."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tensorlib as tl
from helpers import arrays, to_numpy

# ---------------------------------------------------------------- helpers


def _estrides(a: np.ndarray):
    return tuple(s // a.itemsize for s in a.strides)


def check_view(got, want: np.ndarray, base=None, strides=True):
    """Values and shape as NumPy's; the same storage as ``base``; NumPy's strides on every
    dim of size > 1 (a size-1 dim's stride is arbitrary)."""
    assert got.shape == want.shape
    np.testing.assert_array_equal(to_numpy(got), want)
    if base is not None:
        assert got.untyped_storage() is base.untyped_storage()
    if strides and want.size > 1:
        for n, s, w in zip(want.shape, got.stride(), _estrides(want)):
            if n > 1:
                assert s == w, (got.stride(), _estrides(want))


@st.composite
def shapes_with_numel(draw, numel):
    """A random shape holding ``numel`` elements (with size-1 dims mixed in)."""
    if numel == 0:
        dims = draw(st.lists(st.integers(0, 4), min_size=1, max_size=4))
        i = draw(st.integers(0, len(dims) - 1))
        dims[i] = 0
        return tuple(dims)
    factors, n, p = [], numel, 2
    while n > 1:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    ndim = draw(st.integers(0 if numel == 1 else 1, 4))
    dims = [1] * max(ndim, 1)
    for f in factors:
        dims[draw(st.integers(0, len(dims) - 1))] *= f
    return tuple(dims) if ndim else ()


def axis(ndim):
    return st.integers(-ndim, ndim - 1)


ARR = arrays("float32", max_dims=4)
ARR_ND = arrays("int16", min_dims=1, max_dims=4)

# ---------------------------------------------------------------- view / reshape


@given(ARR, st.data())
def test_reshape_and_view_match_numpy(a, data):
    shape = data.draw(shapes_with_numel(a.size))
    if a.size and shape and data.draw(st.booleans()):
        i = data.draw(st.integers(0, len(shape) - 1))
        shape = shape[:i] + (-1,) + shape[i + 1:]
    t = tl.from_numpy(a)
    want = a.reshape(shape)
    r = tl.reshape(t, shape)
    assert r.shape == want.shape
    np.testing.assert_array_equal(to_numpy(r), want)
    try:
        viewable = a.reshape(shape, copy=False)
    except ValueError:
        viewable = None
    if viewable is not None:
        v = t.view(shape)
        check_view(v, viewable, t)
        check_view(r, viewable, t)  # reshape views when it can
    else:
        with pytest.raises(RuntimeError, match="view"):
            t.view(shape)
        assert r.untyped_storage() is not t.untyped_storage()  # reshape copied


def test_view_of_transposed_needs_reshape():
    t = tl.asarray(np.arange(12, dtype=np.float32).reshape(3, 4)).T
    with pytest.raises(RuntimeError):
        t.view((12,))
    r = t.reshape((12,))
    assert r.is_contiguous()
    assert r.tolist() == np.arange(12).reshape(3, 4).T.reshape(12).tolist()
    # splitting a dim of a non-contiguous tensor is still a view
    v = t.view((2, 2, 3))
    assert v.untyped_storage() is t.untyped_storage()
    assert v.tolist() == np.arange(12).reshape(3, 4).T.reshape(2, 2, 3).tolist()


@pytest.mark.parametrize("shape,exc", [((-1, -1), ValueError), ((-2, 3), ValueError),
                                       ((5,), ValueError), ((2, -1, 4), ValueError),
                                       ((0, -1), ValueError)])
def test_bad_shapes(shape, exc):
    t = tl.zeros((2, 3))
    with pytest.raises(exc):
        tl.reshape(t, shape)
    with pytest.raises(exc):
        t.view(shape)


def test_shape_argument_types():
    t = tl.zeros(6)
    assert tl.reshape(t, 6).shape == (6,)
    assert tl.reshape(t, [2, np.int64(3)]).shape == (2, 3)
    with pytest.raises(TypeError, match="shape"):
        tl.reshape(t, (2.0, 3))
    with pytest.raises(TypeError, match="shape"):
        tl.reshape(t, "6")


# ---------------------------------------------------------------- axis permutations


@given(ARR, st.data())
def test_transpose_matches_swapaxes(a, data):
    n = max(a.ndim, 1)
    d0, d1 = data.draw(axis(n)), data.draw(axis(n))
    t = tl.from_numpy(a)
    if a.ndim == 0:
        check_view(tl.transpose(t, 0, -1), a, t)
        return
    check_view(tl.transpose(t, d0, d1), np.swapaxes(a, d0, d1), t)
    check_view(tl.swapaxes(t, d0, d1), np.swapaxes(a, d0, d1), t)


@given(ARR, st.data())
def test_permute_matches_transpose(a, data):
    axes = data.draw(st.permutations(range(a.ndim)))
    axes = [x - a.ndim if data.draw(st.booleans()) else x for x in axes]
    t = tl.from_numpy(a)
    check_view(tl.permute(t, axes), np.transpose(a, axes), t)
    check_view(tl.permute_dims(t, axes), np.transpose(a, axes), t)
    check_view(t.T, a.T, t)


@given(ARR_ND, st.data())
def test_moveaxis_matches_numpy(a, data):
    k = data.draw(st.integers(1, a.ndim))
    src = data.draw(st.permutations(range(a.ndim)))[:k]
    dst = data.draw(st.permutations(range(a.ndim)))[:k]
    t = tl.from_numpy(a)
    check_view(tl.moveaxis(t, src, dst), np.moveaxis(a, src, dst), t)
    check_view(tl.movedim(t, src, dst), np.moveaxis(a, src, dst), t)


def test_axis_errors():
    t = tl.zeros((2, 3, 4))
    with pytest.raises(ValueError, match="duplicate"):
        tl.permute(t, (0, 0, 1))
    with pytest.raises(ValueError):
        tl.permute(t, (0, 1))
    with pytest.raises(IndexError, match="3"):
        tl.permute(t, (0, 1, 3))
    with pytest.raises(IndexError):
        tl.transpose(t, 0, 3)
    with pytest.raises(IndexError):
        tl.transpose(t, -4, 0)
    with pytest.raises(ValueError):
        tl.moveaxis(t, (0, 0), (1, 2))
    with pytest.raises(ValueError):
        tl.moveaxis(t, (0, 1), (2,))
    with pytest.raises(IndexError):
        tl.moveaxis(t, 3, 0)
    with pytest.raises(IndexError):
        tl.unsqueeze(t, 4)
    with pytest.raises(IndexError):
        tl.unsqueeze(t, -5)
    with pytest.raises(ValueError):
        tl.squeeze(tl.zeros((1, 2)), (0, 0))
    with pytest.raises(ValueError):
        tl.squeeze(t, 0)  # size 2
    with pytest.raises(IndexError):
        tl.select(t, 3, 0)
    with pytest.raises(IndexError):
        tl.diagonal(t, 0, 0, 3)
    with pytest.raises(ValueError):
        tl.diagonal(t, 0, 1, -2)
    with pytest.raises(IndexError):
        tl.flatten(t, 0, 3)
    with pytest.raises(ValueError):
        tl.flatten(t, 2, 1)
    with pytest.raises(IndexError):
        tl.transpose(tl.zeros(()), 0, 1)


# ---------------------------------------------------------------- broadcasting views


@given(ARR, st.data())
def test_broadcast_to_and_expand(a, data):
    lead = data.draw(st.lists(st.integers(0, 3), max_size=2))
    target = tuple(lead) + tuple(n if n != 1 else data.draw(st.integers(0, 3)) for n in a.shape)
    t = tl.from_numpy(a)
    want = np.broadcast_to(a, target)
    check_view(tl.broadcast_to(t, target), want, t)
    keep = tuple(lead) + tuple(-1 if n == m and data.draw(st.booleans()) else m
                               for n, m in zip(a.shape, target[len(lead):]))
    check_view(t.expand(keep), want, t)


def test_broadcast_errors():
    t = tl.zeros((2, 3))
    with pytest.raises(ValueError):
        tl.broadcast_to(t, (3, 3))
    with pytest.raises(ValueError):
        tl.broadcast_to(t, (3,))
    with pytest.raises(ValueError):
        tl.broadcast_to(t, (2, -3))
    with pytest.raises(ValueError):
        t.expand((-1, 2, 3))  # -1 for a new leading dim
    with pytest.raises(ValueError):
        t.expand((2, 4))
    with pytest.raises(ValueError):
        t.expand((3,))


# ---------------------------------------------------------------- squeeze / unsqueeze / flatten


@given(arrays("float32", max_dims=4, max_side=2), st.data())
def test_squeeze_matches_numpy(a, data):
    t = tl.from_numpy(a)
    check_view(tl.squeeze(t), np.squeeze(a), t)
    ones = [d for d in range(a.ndim) if a.shape[d] == 1]
    pick = tuple(data.draw(st.lists(st.sampled_from(ones), unique=True))) if ones else ()
    check_view(tl.squeeze(t, pick), np.squeeze(a, pick), t)


@given(ARR, st.data())
def test_unsqueeze_matches_expand_dims(a, data):
    ax = data.draw(axis(a.ndim + 1))
    t = tl.from_numpy(a)
    check_view(tl.unsqueeze(t, ax), np.expand_dims(a, ax), t)
    check_view(tl.expand_dims(t, ax), np.expand_dims(a, ax), t)
    u = tl.unsqueeze(t, ax)
    if u.ndim >= 1:  # squeezing it back gives the same layout
        assert tl.squeeze(u, (ax,)).stride() == t.stride()


@given(ARR_ND, st.data())
def test_flatten_and_unflatten(a, data):
    s = data.draw(axis(a.ndim))
    e = data.draw(axis(a.ndim))
    t = tl.from_numpy(a)
    if s % a.ndim > e % a.ndim:
        with pytest.raises(ValueError):
            tl.flatten(t, s, e)
        return
    s, e = s % a.ndim, e % a.ndim
    shape = a.shape[:s] + (math.prod(a.shape[s:e + 1]),) + a.shape[e + 1:]
    f = tl.flatten(t, s, e)
    assert f.shape == shape
    np.testing.assert_array_equal(to_numpy(f), a.reshape(shape))
    d = data.draw(st.integers(0, a.ndim - 1))
    sizes = data.draw(shapes_with_numel(a.shape[d]))
    if not sizes:
        sizes = (1,)
    want = a.reshape(a.shape[:d] + sizes + a.shape[d + 1:])
    try:
        viewable = a.reshape(want.shape, copy=False)
    except ValueError:
        viewable = None
    if viewable is not None:  # splitting one dim is always a view
        check_view(tl.unflatten(t, d, sizes), viewable, t)
    assert tl.flatten(tl.asarray(np.float32(2.0))).shape == (1,)


# ---------------------------------------------------------------- slicing views


@given(ARR_ND, st.data())
def test_narrow_select_unbind(a, data):
    t = tl.from_numpy(a)
    d = data.draw(axis(a.ndim))
    n = a.shape[d]
    start = data.draw(st.integers(0, n))
    length = data.draw(st.integers(0, n - start))
    sl = [slice(None)] * a.ndim
    sl[d] = slice(start, start + length)
    check_view(tl.narrow(t, d, start, length), a[tuple(sl)], t)
    if start < n:
        check_view(tl.narrow(t, d, start - n, length), a[tuple(sl)], t)  # negative start
    with pytest.raises(IndexError):
        tl.narrow(t, d, start, n - start + 1)
    def pick(i):  # basic indexing: a NumPy view, unlike np.take
        return a[(slice(None),) * (d % a.ndim) + (i,)]
    if n:
        i = data.draw(st.integers(-n, n - 1))
        check_view(tl.select(t, d, i), pick(i), t)
    with pytest.raises(IndexError):
        tl.select(t, d, n)
    parts = tl.unbind(t, d)
    assert len(parts) == n
    for i, p in enumerate(parts):
        check_view(p, pick(i), t)


def _split_oracle(a, spec, d):
    n = a.shape[d]
    if isinstance(spec, int):
        sizes = [min(spec, n - i) for i in range(0, n, spec)] or [0]
    else:
        sizes = list(spec)
    return np.split(a, np.cumsum(sizes)[:-1], axis=d)


@given(ARR_ND, st.data())
def test_split_and_chunk(a, data):
    t = tl.from_numpy(a)
    d = data.draw(axis(a.ndim))
    n = a.shape[d]
    step = data.draw(st.integers(1, 6))
    got = tl.split(t, step, d)
    want = _split_oracle(a, step, d)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        check_view(g, w, t)
    cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=3)))
    sections = [y - x for x, y in zip([0] + cuts, cuts + [n])]
    if len(sections) > 1:
        got = tl.split(t, sections, d)
        for g, w in zip(got, _split_oracle(a, sections, d)):
            check_view(g, w, t)
    chunks = data.draw(st.integers(1, 5))
    got = tl.chunk(t, chunks, d)
    size = max(-(-n // chunks), 1)
    want = _split_oracle(a, size, d) if n else [a]
    assert len(got) == len(want) <= chunks
    for g, w in zip(got, want):
        check_view(g, w, t)


def test_split_chunk_errors():
    t = tl.zeros((5, 2))
    with pytest.raises(ValueError):
        tl.split(t, [2, 2])
    with pytest.raises(ValueError):
        tl.split(t, [6, -1])
    with pytest.raises(ValueError):
        tl.split(t, 0)
    with pytest.raises(ValueError):
        tl.chunk(t, 0)
    assert [p.shape[0] for p in tl.chunk(t, 3)] == [2, 2, 1]
    assert [p.shape[0] for p in tl.chunk(tl.zeros(6), 4)] == [2, 2, 2]


@given(arrays("float32", min_dims=2, max_dims=4), st.data())
def test_diagonal_matches_numpy(a, data):
    d1 = data.draw(axis(a.ndim))
    d2 = data.draw(axis(a.ndim).filter(lambda x: x % a.ndim != d1 % a.ndim))
    off = data.draw(st.integers(-6, 6))
    t = tl.from_numpy(a)
    check_view(tl.diagonal(t, off, d1, d2), np.diagonal(a, off, d1, d2), t)


# ---------------------------------------------------------------- as_strided


def test_as_strided_matches_numpy_and_checks_bounds():
    buf = np.arange(10, dtype=np.float64)
    t = tl.asarray(buf, copy=True)
    st_ = np.lib.stride_tricks.as_strided
    cases = [((3, 3), (1, 1), 0), ((4,), (2,), 1), ((2, 5), (5, 1), 0), ((3, 4), (0, 1), 2),
             ((3,), (-1,), 2), ((2, 2), (-3, 1), 8), ((0, 5), (100, 100), 0), ((), (), 9)]
    for size, stride, off in cases:
        want = st_(buf[off:], size, tuple(s * 8 for s in stride)) if off < 10 else None
        got = tl.as_strided(t, size, stride, off)
        assert got.untyped_storage() is t.untyped_storage()
        assert got.shape == size and got.stride() == stride
        if want is not None:
            np.testing.assert_array_equal(to_numpy(got), want)
    assert tl.as_strided(t[2:], (2,), (1,)).tolist() == [2.0, 3.0]  # offset kept by default
    for size, stride, off in [((11,), (1,), 0), ((4,), (3,), 1), ((3,), (-1,), 1),
                              ((2,), (1,), 9), ((1,), (1,), 10)]:
        with pytest.raises(ValueError, match="storage"):
            tl.as_strided(t, size, stride, off)
    with pytest.raises(ValueError):
        tl.as_strided(t, (2,), (1,), -1)
    with pytest.raises(ValueError):
        tl.as_strided(t, (2, 2), (1,))
    with pytest.raises(ValueError):
        tl.as_strided(t, (-1,), (1,))


def test_as_strided_cannot_escape_a_borrowed_numpy_view():
    big = np.arange(100, dtype=np.float32)
    t = tl.from_numpy(big[10:20])
    with pytest.raises(ValueError):
        tl.as_strided(t, (20,), (1,), 0)
    assert tl.as_strided(t, (10,), (1,), 0).tolist() == list(range(10, 20))


def test_negative_and_zero_strides():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    t = tl.from_numpy(a[::-1, ::-2])
    assert t.stride() == (-4, -2)
    np.testing.assert_array_equal(to_numpy(t.T), a[::-1, ::-2].T)
    np.testing.assert_array_equal(to_numpy(tl.reshape(t, (-1,))), a[::-1, ::-2].reshape(-1))
    z = tl.from_numpy(np.broadcast_to(a[1], (5, 4)))
    assert z.stride() == (0, 1)
    np.testing.assert_array_equal(to_numpy(z.view((5, 2, 2))), np.broadcast_to(a[1], (5, 4))
                                  .reshape(5, 2, 2))


# ---------------------------------------------------------------- aliasing: writes land in base


def _apply_both(fn_tl, fn_np):
    base_np = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    base = tl.asarray(base_np, copy=True)
    v, w = fn_tl(base), fn_np(base_np)
    vals = (np.arange(w.size, dtype=np.float32) * -1 - 1).reshape(w.shape)
    v.copy_(tl.asarray(vals))
    w[...] = vals
    np.testing.assert_array_equal(to_numpy(base), base_np)


VIEW_WRITES = {
    "transpose": (lambda t: tl.transpose(t, 0, 2), lambda a: np.swapaxes(a, 0, 2)),
    "permute": (lambda t: tl.permute(t, (1, 2, 0)), lambda a: np.transpose(a, (1, 2, 0))),
    "view": (lambda t: t.view((6, 4)), lambda a: a.reshape(6, 4)),
    "reshape": (lambda t: tl.reshape(t, (4, 6)), lambda a: a.reshape(4, 6)),
    "flatten": (lambda t: tl.flatten(t), lambda a: a.reshape(-1)),
    "unflatten": (lambda t: tl.unflatten(t, 2, (2, 2)), lambda a: a.reshape(2, 3, 2, 2)),
    "squeeze": (lambda t: tl.squeeze(t[:1]), lambda a: np.squeeze(a[:1])),
    "unsqueeze": (lambda t: tl.unsqueeze(t, 1), lambda a: np.expand_dims(a, 1)),
    "narrow": (lambda t: tl.narrow(t, 2, 1, 2), lambda a: a[:, :, 1:3]),
    "select": (lambda t: tl.select(t, 1, -1), lambda a: a[:, -1]),
    "diagonal": (lambda t: tl.diagonal(t, 0, 0, 2), lambda a: _writable_diag(a, 0, 0, 2)),
    "unbind": (lambda t: tl.unbind(t, 2)[3], lambda a: a[:, :, 3]),
    "split": (lambda t: tl.split(t, (1, 2), 1)[1], lambda a: a[:, 1:]),
    "chunk": (lambda t: tl.chunk(t, 2, 2)[1], lambda a: a[:, :, 2:]),
    "as_strided": (lambda t: tl.as_strided(t, (3, 2), (7, 2), 1),
                   lambda a: np.lib.stride_tricks.as_strided(a.reshape(-1)[1:], (3, 2),
                                                             (28, 8))),
    "moveaxis": (lambda t: tl.moveaxis(t, 0, -1), lambda a: np.moveaxis(a, 0, -1)),
    "T": (lambda t: t.T, lambda a: a.T),
    "mT": (lambda t: t.mT, lambda a: np.swapaxes(a, -1, -2)),
    "getitem": (lambda t: t[1, ::-2, 1:], lambda a: a[1, ::-2, 1:]),
}


def _writable_diag(a, off, d1, d2):
    d = np.diagonal(a, off, d1, d2)  # read-only in NumPy: rebuild it writable
    start = (d.ctypes.data - a.ctypes.data) // a.itemsize
    return np.lib.stride_tricks.as_strided(a.reshape(-1)[start:], d.shape, d.strides)


# interleaved but disjoint strides: writable (only zero strides make an output self-overlap)
VIEW_WRITES_INTERLEAVED = {
    "diagonal_batched": (lambda t: tl.diagonal(t, 1, 1, 2), lambda a: _writable_diag(a, 1, 1, 2)),
    "as_strided_interleaved": (lambda t: tl.as_strided(t, (3, 2), (5, 3), 1),
                               lambda a: np.lib.stride_tricks.as_strided(a.reshape(-1)[1:],
                                                                         (3, 2), (20, 12))),
}


@pytest.mark.parametrize("name", sorted(VIEW_WRITES) + sorted(VIEW_WRITES_INTERLEAVED))
def test_writes_through_views_reach_the_base(name):
    _apply_both(*{**VIEW_WRITES, **VIEW_WRITES_INTERLEAVED}[name])


def test_fill_batched_diagonal():
    t = tl.zeros((2, 3, 3))
    tl.diagonal(t, 0, 1, 2).fill_(1.0)
    assert t.tolist() == [np.eye(3).tolist()] * 2


def test_view_keeps_base_storage_alive():
    import gc
    t = tl.asarray(np.arange(8, dtype=np.float32), copy=True)
    v = tl.narrow(t, 0, 2, 3)
    del t
    gc.collect()
    junk = [tl.full(8, -1.0) for _ in range(4)]
    assert v.tolist() == [2.0, 3.0, 4.0]
    del junk


def test_view_op_aliases_and_methods():
    assert tl.swapaxes is tl.transpose
    assert tl.permute_dims is tl.permute
    assert tl.movedim is tl.moveaxis
    x = tl.zeros((2, 3))
    assert tl.expand_dims(x).shape == (1, 2, 3)  # Array API: axis defaults to 0
    assert tl.expand_dims(x, axis=2).shape == tl.unsqueeze(x, 2).shape == (2, 3, 1)
    assert [u.shape for u in tl.unstack(x, axis=1)] == [(2,)] * 3
    assert [u.shape for u in tl.unstack(x)] == [u.shape for u in tl.unbind(x)] == [(3,)] * 2
    t = tl.zeros((2, 3))
    assert t.view((3, 2)).shape == (3, 2)
    assert t.expand((4, 2, 3)).shape == (4, 2, 3)
    assert t.transpose(0, 1).shape == (3, 2)
    assert len(tl.unstack(t)) == 2
