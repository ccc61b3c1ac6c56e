"""The TensorIterator plan cache and the small-call paths of issue 13 item 2 (strided / broadcast
calls, slices, take, contiguous, zero fills): a cached plan must give exactly what a fresh
build gives (NumPy as the oracle: dtype, shape, strides, values bit for bit), a hit must never
serve a plan made for another layout, and every error must still be raised. Nothing is timed.
"""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib import iterator as _it
from tensorlib.iterator import TensorIterator
from tensorlib.ops import copy as _copy


def _np(t):
    return np.array(t.numpy(), copy=True)


def _bits_equal(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.view(np.uint8) if a.size else a,
                                  b.view(np.uint8) if b.size else b)


@pytest.fixture
def fresh_plans():
    _it.clear_plan_cache()
    yield
    _it.clear_plan_cache()


def _values(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.dtype(dtype).kind in "iu":
        return rng.integers(1, 50, size=shape).astype(dtype)
    return (rng.random(shape) + 0.5).astype(dtype)


# Views of one NumPy base and the same view in tensorlib: (name, make(x) for both libraries).
_VIEWS = [
    ("contiguous", lambda x: x),
    ("step 2", lambda x: x[::2]),
    ("negative step", lambda x: x[::-1]),
    ("negative step 3", lambda x: x[-2::-3]),
    ("transposed", lambda x: x.T),
    ("column", lambda x: x[:, 1]),
    ("offset slice", lambda x: x[1:, 2:]),
    ("transposed reversed", lambda x: x.T[::-1]),
]


def _tl_view(name, t):
    return dict(_VIEWS)[name](t)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.bool_,
                                   np.complex64])
@pytest.mark.parametrize("view", [v[0] for v in _VIEWS])
def test_cached_plan_matches_fresh_and_numpy(fresh_plans, dtype, view):
    base_a = _values((7, 5), dtype, 1)
    base_b = _values((7, 5), dtype, 2)
    make = dict(_VIEWS)[view]
    a_np, b_np = make(base_a), make(base_b)
    a, b = make(tl.asarray(base_a)), make(tl.asarray(base_b))
    op_tl, op_np = ((tl.logical_xor, np.logical_xor) if dtype == np.bool_
                    else (tl.multiply, np.multiply))
    expected = op_np(a_np, b_np)
    results = []
    for _ in range(3):  # a miss (fresh build), then hits
        r = op_tl(a, b)
        results.append(r)
        _bits_equal(_np(r), expected)
    assert results[0]._strides == results[1]._strides == results[2]._strides
    # every hit allocates its own output
    assert len({id(r._storage) for r in results}) == 3
    _it.clear_plan_cache()
    fresh = op_tl(a, b)
    assert fresh._strides == results[2]._strides and fresh.dtype == results[2].dtype


@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.float64])
def test_broadcast_and_zero_strides(fresh_plans, dtype):
    base = _values((6, 4), dtype, 3)
    row = _values((4,), dtype, 4)
    col = _values((6, 1), dtype, 5)
    t, r, c = tl.asarray(base), tl.asarray(row), tl.asarray(col)
    for _ in range(2):
        _bits_equal(_np(t + r), base + row)
        _bits_equal(_np(t[::-1] - c), base[::-1] - col)
        _bits_equal(_np(r + c), row + col)
        # an expanded (zero-stride) operand
        e = tl.broadcast_to(r, (6, 4))
        _bits_equal(_np(e * t.T.T), np.broadcast_to(row, (6, 4)) * base)
        _bits_equal(_np(tl.broadcast_to(c, (6, 4)) + t[:, ::-1]),
                    np.broadcast_to(col, (6, 4)) + base[:, ::-1])


def test_hit_is_keyed_by_layout_not_just_shape(fresh_plans):
    """Same op, shape and dtype, different strides / offsets / dtypes / scalar kinds: each gets
    its own answer (a stale plan would mix strides or dtypes up)."""
    base = np.arange(40, dtype=np.float32).reshape(8, 5)
    t = tl.asarray(base)
    # (4, 5) three ways: rows 0..3, every other row, the last rows reversed
    views = [(t[:4], base[:4]), (t[::2], base[::2]), (t[:3:-1], base[:3:-1]),
             (t[4:], base[4:])]
    for _ in range(2):
        for x, xn in views:
            for y, yn in views:
                _bits_equal(_np(x - y), xn - yn)
    # a (5, 4) transposed view vs a contiguous (5, 4) tensor: same shape, other strides
    tt, ct = t[:4].T, tl.asarray(np.ascontiguousarray(base[:4].T))
    for _ in range(2):
        r1 = tt + 1.0
        r2 = ct + 1.0
        _bits_equal(_np(r1), base[:4].T + 1)
        _bits_equal(_np(r2), base[:4].T + 1)
        assert r2._strides == (4, 1)
    # same layout, other dtypes / scalar kinds
    i8 = tl.asarray(np.arange(10, dtype=np.int8))[::2]
    f64 = tl.asarray(np.arange(10, dtype=np.float64))[::2]
    for _ in range(2):
        assert (i8 + 1).dtype == tl.int8
        assert (i8 + 1.5).dtype == tl.float32
        assert (i8 + True).dtype == tl.int8
        assert (f64 + 1).dtype == tl.float64
        np.testing.assert_array_equal(_np(i8 + 1.5), np.arange(10, dtype=np.int8)[::2] + 1.5)


def test_scalar_subclasses_are_not_keyed_as_python_scalars(fresh_plans):
    """np.float64 subclasses float: it is never keyed as a Python float, so whatever the fresh
    path makes of it is what it gets, before and after a plan for ``x + 1.0`` exists."""
    x = tl.asarray(np.arange(8, dtype=np.float32))[::2]
    before = (x + np.float64(1.0)).dtype
    for _ in range(2):
        assert (x + 1.0).dtype == tl.float32
    assert (x + np.float64(1.0)).dtype == before


def test_out_and_in_place_with_cached_plan(fresh_plans):
    base = np.arange(24, dtype=np.float64).reshape(4, 6)
    for _ in range(3):
        t = tl.asarray(base.copy())
        out = tl.empty((4, 3), dtype=tl.float64)
        r = tl.add(t[:, ::2], t[:, 1::2], out=out)
        assert r is out
        _bits_equal(_np(out), base[:, ::2] + base[:, 1::2])
        # in place on a strided view (exact aliasing: no copy)
        v = t[:, ::2]
        v += t[:, 1::2]
        expected = base.copy()
        expected[:, ::2] += base[:, 1::2]
        _bits_equal(_np(t), expected)


def test_partial_overlap_with_out_is_read_from_a_copy(fresh_plans):
    """The overlap copy depends on the storages and offsets, not on the key: a plan cached
    for disjoint operands must still copy an overlapping input."""
    base = np.arange(12, dtype=np.float32)
    for _ in range(2):  # a plan for (view of 5, view of 5) -> out view of 5
        src = tl.asarray(base.copy())
        other = tl.asarray(base.copy())
        tl.add(src[0:10:2], src[1:11:2], out=other[2:12:2])
        exp = base.copy()
        exp[2:12:2] = base[0:10:2] + base[1:11:2]
        _bits_equal(_np(other), exp)
    for _ in range(2):  # the same layout key, now out overlaps the inputs
        t = tl.asarray(base.copy())
        tl.add(t[0:10:2], t[1:11:2], out=t[2:12:2])
        exp = base.copy()
        exp[2:12:2] = base[0:10:2] + base[1:11:2]  # NumPy reads before writing here too
        _bits_equal(_np(t), exp)


def test_errors_still_raised_after_a_cached_plan(fresh_plans):
    x = tl.asarray(np.arange(10, dtype=np.float32))[::2]
    y = tl.asarray(np.arange(10, dtype=np.float32))[1::2]
    for _ in range(2):
        x * y
    with pytest.raises(ValueError, match="cannot be broadcast"):
        x * tl.asarray(np.arange(4, dtype=np.float32))
    with pytest.raises(ValueError, match="doesn't match"):
        tl.multiply(x, y, out=tl.empty((4,), dtype=tl.float32))
    with pytest.raises(TypeError, match="can't be cast"):
        tl.multiply(x, y, out=tl.empty((5,), dtype=tl.int32))
    ro = np.zeros(10, np.float32)
    ro.flags.writeable = False
    r = tl.asarray(ro)[::2]
    with pytest.raises(ValueError, match="read-only"):
        tl.multiply(x, y, out=r)
    with pytest.raises(ValueError, match="read-only"):
        r.add_(x)
    expanded = tl.broadcast_to(tl.asarray(np.zeros(1, np.float32)), (5,))
    with pytest.raises(RuntimeError, match="share memory"):
        tl.multiply(x, y, out=expanded)


def test_plan_cache_is_bounded(fresh_plans, monkeypatch):
    monkeypatch.setattr(_it, "PLAN_CACHE_SIZE", 8)
    base = tl.asarray(np.arange(200, dtype=np.float32))
    for step in range(2, 30):
        v = base[::step]
        _bits_equal(_np(v * v), np.arange(200, dtype=np.float32)[::step] ** 2)
    assert len(_it._PLANS) <= 8


def test_iterator_hit_layout_equals_fresh_layout(fresh_plans):
    """The Layout a hit returns is the one a fresh build computes (offsets per call)."""
    base = tl.asarray(np.arange(60, dtype=np.float32).reshape(6, 10))
    cases = [([base[:, ::3], base[::-1, ::3]]), ([base.T[::2], 2.0]),
             ([base[1:, :], tl.broadcast_to(base[0], (5, 10))])]
    for inputs in cases:
        first = TensorIterator.build("add", [None], inputs)
        hit = TensorIterator.build("add", [None], inputs)
        lay_first, lay_hit = first.layout(), hit.layout()
        assert (lay_hit.shape, lay_hit.strides) == (lay_first.shape, lay_first.strides)
        assert lay_hit.offsets[1:] == lay_first.offsets[1:]
        assert hit.output()._strides == first.output()._strides
        assert hit.common_dtype is first.common_dtype
        # a hit on operands with other offsets, same strides
        shifted = [x[1:] if isinstance(x, tl.Tensor) and x.shape[0] > 1 else x
                   for x in inputs]
        if all(not isinstance(x, tl.Tensor) or x.shape == shifted[0].shape for x in shifted):
            a = TensorIterator.build("add", [None], shifted)
            _it.clear_plan_cache()
            b = TensorIterator.build("add", [None], shifted)
            assert a.layout().offsets[1:] == b.layout().offsets[1:]


# ---- slices, take, contiguous, zero fills -------------------------------------------------
@pytest.mark.parametrize("key", [slice(None), slice(None, None, 2), slice(None, None, -1),
                                 slice(1, -1, 3), slice(-2, 0, -2), slice(5, 2), slice(100),
                                 slice(-100, 3), slice(3, None, -4)])
@pytest.mark.parametrize("shape", [(7,), (7, 3), (0, 2), (1, 4)])
def test_slice_fast_path_matches_basic_indexing(key, shape):
    base = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    t = tl.asarray(base)
    v = t[key]
    general = t[(key, Ellipsis)]  # the general basic-indexing path
    assert (v.shape, v._strides, v._offset) == (general.shape, general._strides, general._offset)
    np.testing.assert_array_equal(_np(v), base[key])
    assert v.is_contiguous() == general.is_contiguous()


def test_slice_fast_path_errors():
    t = tl.asarray(np.arange(5))
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        t[::0]
    with pytest.raises(IndexError, match="too many indices"):
        tl.asarray(np.float32(1.0))[1:]


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_])
def test_take_and_tuple_index(dtype):
    base = _values((50,), dtype, 7)
    idx = np.random.default_rng(0).integers(-50, 50, size=40)
    t, it = tl.asarray(base), tl.asarray(idx)
    for _ in range(2):
        np.testing.assert_array_equal(_np(tl.take(t, it)), np.take(base, idx))
        np.testing.assert_array_equal(_np(t[(it,)]), base[(idx,)])
    with pytest.raises(IndexError, match="out of bounds"):
        tl.take(t, tl.asarray(np.array([0, 50])))
    with pytest.raises(IndexError, match="out of bounds"):
        t[(tl.asarray(np.array([-51])),)]


@pytest.mark.parametrize("make", [lambda x: x.T, lambda x: x[::-1], lambda x: x[:, ::-2],
                                  lambda x: tl.broadcast_to(x[:1], x.shape)
                                  if isinstance(x, tl.Tensor) else np.broadcast_to(x[:1], x.shape)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.complex128])
def test_contiguous_of_views(make, dtype):
    base = _values((6, 5), dtype, 9)
    t = tl.asarray(base)
    for _ in range(2):
        c = make(t).contiguous()
        assert c.is_contiguous() and c.dtype == t.dtype and c._offset == 0
        _bits_equal(_np(c), np.ascontiguousarray(make(base)))
    assert t.contiguous() is t


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "uint16", "bool", "float16",
                                   "bfloat16", "complex64"])
@pytest.mark.parametrize("n", [1000, 50_000, 300_000])
def test_zeros_and_zero_fills(dtype, n):
    dt = getattr(tl, dtype)
    for _ in range(3):  # reused (dirty) blocks from the caching allocator
        junk = tl.ones((n,), dtype=dt)
        del junk
        z = tl.zeros((n,), dtype=dt)
        assert z.dtype is dt and z.shape == (n,)
        zz = z.astype(tl.float32) if dtype == "bfloat16" else z
        assert not np.any(_np(zz))
    # a zero fill of a contiguous slice writes only its range
    t = tl.ones((n,), dtype=dt)
    t[n // 4: n // 2].fill_(0)
    tt = _np(t.astype(tl.float32) if dtype == "bfloat16" else t)
    assert not np.any(tt[n // 4: n // 2])
    assert np.all(tt[: n // 4] == 1) and np.all(tt[n // 2:] == 1)
    t.fill_(False)
    assert not np.any(_np(t.astype(tl.float32) if dtype == "bfloat16" else t))


def test_zero_fill_keeps_fill_errors():
    b = tl.ones((50_000,), dtype=tl.bool_)
    with pytest.raises(TypeError):
        b.fill_(0.0)  # a float into bool is refused whatever its value
    ro = np.ones(50_000, np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        tl.asarray(ro).fill_(0)


def test_zero_fill_memset_declines_under_cpu_streams():
    n = 50_000
    s = tl.Stream(device="cpu")
    with tl.stream(s):
        z = tl.zeros((n,), dtype=tl.float32)
        t = tl.ones((n,), dtype=tl.float32)
        t.fill_(0)
    s.synchronize()
    assert not np.any(_np(z)) and not np.any(_np(t))


def test_zero_fill_by_the_kernel_where_memset_declines(monkeypatch):
    monkeypatch.setattr(_copy, "zero_bytes", lambda t: False)  # the kernel path only
    t = tl.ones((50_000,), dtype=tl.int32)
    t.fill_(0)
    assert not np.any(_np(t))


@pytest.mark.parametrize("make", [lambda x: x, lambda x: x.T, lambda x: x[::-1], lambda x: x[:, ::2],
                                  lambda x: tl.broadcast_to(x[:1], x.shape), lambda x: x[:0]])
def test_empty_like_layout_cache_matches_fresh(make, monkeypatch):
    from tensorlib import allocation as F
    t = make(tl.asarray(np.arange(24, dtype=np.float32).reshape(4, 6)))
    monkeypatch.setattr(F, "_like_strides", {})
    fresh = F._empty_like(t, None, None)
    for dt in (None, tl.float64, tl.int8, None):
        e = tl.empty_like(t, dtype=dt)
        assert e.shape == fresh.shape and e._strides == fresh._strides and e._offset == 0
        assert e.dtype == (t.dtype if dt is None else dt)
        assert e.is_contiguous() == fresh.is_contiguous()
        a = t.astype(tl.float64)
        np.testing.assert_array_equal(_np(a), _np(t).astype(np.float64))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.float16])
def test_reduction_plans_serve_aligned_and_borrowed_odd_inputs(dtype):
    """A reduction plan (kernels/cpu/reduce_plan.py) calls its kernel's compiled entry point
    for inputs like the first call's, and the dispatcher for an input in borrowed memory at an
    address that is not a multiple of the itemsize (the same plan key, another array type):
    both give NumPy's values (value, arg and var / std plans), the result a fresh tensor."""
    import tensorlib.ops.reduction as reduction
    from tensorlib.kernels.cpu import reduce_plan
    n = 999
    vals = _values((n,), dtype, 3)
    item = np.dtype(dtype).itemsize
    raw = np.zeros(item * n + 1, np.uint8)
    odd = raw[1:].view(dtype)
    odd[:] = vals
    assert not odd.flags.aligned
    x, y = tl.asarray(vals.copy()), tl.asarray(odd)
    assert y._storage._ptr % item
    calls = [(tl.max, np.max), (tl.argmax, np.argmax), (tl.sum, None)]
    if np.dtype(dtype).kind == "f":
        calls.append((tl.std, None))
    seen = []
    orig = reduce_plan._entry

    def entry(fn, args):
        ep = orig(fn, args)
        seen.append(ep is not fn)
        return ep
    reduce_plan._entry = entry
    try:
        reduction._plans.clear()
        for _ in range(3):
            for t in (x, y, x):
                for f, ref in calls:
                    got, want = f(t), f(x)
                    _bits_equal(_np(got), _np(want))
                    if ref is not None:
                        np.testing.assert_array_equal(_np(got), ref(vals))
    finally:
        reduce_plan._entry = orig
    assert seen and all(seen)  # an entry point was found for every plan made


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_reduction_plans_serve_views_at_other_offsets(dtype, monkeypatch):
    """Reduction plans are keyed without the input's offset: one made for a view serves the
    views of its layout at other offsets (``x[k:k + 25].sum(1)`` over k; value, arg, scan and
    var / std plans), each reading its own elements (the full path's bits for that view,
    NumPy's values; the plan's meta not changed for the first view), with the plans of the
    first view kept."""
    import tensorlib.ops.reduction as reduction
    src = _values((60, 41), dtype, 7)
    t = tl.asarray(src)
    calls = [(lambda v: tl.sum(v, axis=1), lambda v: np.sum(v, axis=1)),
             (lambda v: tl.argmax(v, axis=1), lambda v: np.argmax(v, axis=1)),
             (lambda v: tl.max(v), np.max),
             (lambda v: tl.cumsum(v, axis=1), lambda v: np.cumsum(v, axis=1))]
    if np.dtype(dtype).kind == "f":
        calls.append((lambda v: tl.std(v, axis=1), None))
    reduction._plans.clear()
    for f, _ in calls:
        f(t[0:25])  # the plans, made at offset 0
    planned = dict(reduction._plans)
    assert all(planned.values())
    real_key = reduction._plan_key
    for k in (9, 0, 30, 1, 0):
        for f, ref in calls:
            got = f(t[k:k + 25])
            if ref is not None:
                np.testing.assert_allclose(_np(got), ref(src[k:k + 25]), rtol=1e-5)
            monkeypatch.setattr(reduction, "_plan_key", lambda *a: None)  # the full path
            _bits_equal(_np(got), _np(f(t[k:k + 25])))
            monkeypatch.setattr(reduction, "_plan_key", real_key)
    assert reduction._plans.keys() >= planned.keys()
    assert all(reduction._plans[key] is run for key, run in planned.items())


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_flat_argmax_of_strided_views_takes_a_plan(dtype, monkeypatch):
    """argmax / argmin without an axis index the flattened C order: a strided view is copied
    contiguous first, and the copy's layout holds a plan (no iterator once warm; the view's
    own full path built one every call), giving NumPy's index, keepdims' shape too."""
    src = _values((30, 47), dtype, 3)
    t = tl.asarray(src)
    views = [(t.T, src.T), (t[::-1], src[::-1]), (t[:, 1:-1], src[:, 1:-1]),
             (t[::2, ::3], src[::2, ::3])]
    for v, vn in views:
        for op in ("argmax", "argmin"):
            for _ in range(3):
                getattr(tl, op)(v)
                getattr(tl, op)(v, keepdims=True)
            builds = []
            real = TensorIterator.reduce.__func__
            monkeypatch.setattr(TensorIterator, "reduce", classmethod(
                lambda cls, *a, **k: builds.append(1) or real(cls, *a, **k)))
            got = getattr(tl, op)(v)
            kept = getattr(tl, op)(v, keepdims=True)
            monkeypatch.undo()
            assert not builds, op
            assert int(got) == getattr(np, op)(vn)
            assert kept.shape == (1, 1) and int(kept.reshape(())) == getattr(np, op)(vn)
