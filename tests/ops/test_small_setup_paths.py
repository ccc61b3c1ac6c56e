"""Small-call set-up paths of the non-pointwise op families (issue 13 item 2): sort / argsort on
contiguous rows, var / std iterator templates, softmax / log_softmax plans, x.T / permute /
reshape / contiguous, take, linspace / arange with device='cpu'.

Each must give exactly what the full path gives (dtype, shape, strides, bits, the same errors)
and decline what it cannot serve. The full path is reached with a non-contiguous view of the
same values, or by the first call of a key (the plans and templates are made from it); NumPy
is the value oracle. Nothing here is timed.
"""
import gc
import threading
import weakref

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.iterator import TensorIterator
from tensorlib.ops import normalization as _norm
from tensorlib.ops import reduction as _red
from tensorlib.ops import sorting as _sorting


def _strided(t):
    """A non-contiguous view holding t's values (every small-call path declines those)."""
    base = tl.empty(t.shape + (2,), dtype=t.dtype)
    base[..., 0] = t
    return base[..., 0]


def _np(t):
    return np.ascontiguousarray(t._to_host_numpy())


def _bits_equal(a, b):
    a, b = _np(a), _np(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    if a.dtype == np.bool_:
        assert np.array_equal(a, b)
    else:
        assert np.array_equal(a.view(np.uint8), b.view(np.uint8))


def _outcome(fn):
    try:
        with np.errstate(all="ignore"):
            return "ok", fn()
    except Exception as e:  # noqa: BLE001 - compared with the other path's outcome
        return "error", (type(e), str(e))


def _same_outcome(a, b):
    assert a[0] == b[0], (a, b)
    if a[0] == "ok":
        _bits_equal(a[1], b[1])
    else:
        assert a[1] == b[1]


def _values(np_dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    dt = np.dtype(np_dtype)
    if dt.kind == "c":
        real = _values(np.float32, shape, seed)
        with np.errstate(invalid="ignore"):  # (nan * 1j)
            return (real + 1j * _values(np.float32, shape, seed + 1)).astype(dt)
    if dt.kind == "f":
        v = rng.standard_normal(n).astype(dt)
        if n >= 8:
            v[[1, 3, 5, 7]] = [np.nan, -0.0, np.inf, 0.0]
            v[6] = -np.nan
    elif dt.kind == "b":
        v = rng.random(n) < 0.5
    else:
        info = np.iinfo(dt)
        v = rng.integers(max(info.min, -1000), min(info.max, 1000), n).astype(dt)
    return v.reshape(shape)


# ---------------------------------------------------------------- sort, argsort
SORT_DTYPES = [np.float32, np.float64, np.float16, np.int8, np.int64, np.uint16, np.bool_]


@pytest.mark.parametrize("np_dtype", SORT_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(1000,), (25, 40), (1,), (3, 1, 5)], ids=str)
def test_sort_direct_matches_numpy_and_the_full_path(np_dtype, shape, monkeypatch):
    xn = _values(np_dtype, shape)
    x = tl.asarray(xn)
    full = [(tl.sort(_strided(x), descending=d), tl.argsort(_strided(x), descending=d))
            for d in (False, True)]
    # the direct path never normalizes the axis (the full path always does)
    monkeypatch.setattr(_sorting, "normalize_axis", None)
    for axis in (-1, len(shape) - 1):
        for d, (fv, fi) in zip((False, True), full):
            v = tl.sort(x, axis=axis, descending=d)
            i = tl.argsort(x, axis=axis, descending=d)
            assert v.stride() == fv.stride() and i.stride() == fi.stride()
            _bits_equal(v, fv)
            _bits_equal(i, fi)
        _bits_equal(tl.sort(x, axis=axis), tl.asarray(np.sort(xn, axis=-1, kind="stable")))
        np.testing.assert_array_equal(_np(tl.argsort(x, axis=axis)),
                                      np.argsort(xn, axis=-1, kind="stable"))


def test_sort_direct_declines_and_errors_are_the_full_paths():
    x = tl.asarray(_values(np.float32, (6, 5)))
    # another axis, a strided row, an offset view, 0-d, empty, complex: the full path serves
    np.testing.assert_array_equal(_np(tl.sort(x, axis=0)), np.sort(_np(x), axis=0))
    np.testing.assert_array_equal(_np(tl.sort(x[:, ::2])), np.sort(_np(x)[:, ::2]))
    np.testing.assert_array_equal(_np(tl.sort(x[2:])), np.sort(_np(x)[2:]))
    assert tl.sort(tl.asarray(np.float32(3))).item() == 3.0
    assert tl.argsort(tl.asarray(np.float32(3))).item() == 0
    assert tl.sort(tl.empty((3, 0))).shape == (3, 0)
    c = tl.asarray(np.array([3 + 1j, 1 - 1j, 1 + 0j], np.complex64))
    np.testing.assert_array_equal(_np(tl.sort(c)), np.sort(_np(c)))
    for bad in (2, -3, True, 1.0):
        _same_outcome(_outcome(lambda: tl.sort(x, axis=bad)),
                      _outcome(lambda: tl.sort(_strided(x), axis=bad)))
        _same_outcome(_outcome(lambda: tl.argsort(x, axis=bad)),
                      _outcome(lambda: tl.argsort(_strided(x), axis=bad)))


def test_sort_scratch_reuse_across_sizes_dtypes_and_threads():
    # consecutive sorts of other sizes / widths reuse the per-thread scratch: no leftovers
    for n, dt in [(1000, np.float32), (10, np.float64), (5000, np.int8), (3, np.uint16),
                  (1000, np.float64), (70000, np.float32), (1000, np.float32)]:
        xn = _values(dt, (n,), seed=n)
        x = tl.asarray(xn)
        _bits_equal(tl.sort(x), tl.asarray(np.sort(xn, kind="stable")))
        np.testing.assert_array_equal(_np(tl.argsort(x)), np.argsort(xn, kind="stable"))
    errors = []

    def worker(seed):
        try:
            for r in range(30):
                xn = _values(np.float32, (200 + 37 * seed + r,), seed=seed * 100 + r)
                x = tl.asarray(xn)
                assert np.array_equal(_np(tl.sort(x)).view(np.uint32),
                                      np.sort(xn, kind="stable").view(np.uint32))
                assert np.array_equal(_np(tl.argsort(x)), np.argsort(xn, kind="stable"))
        except Exception as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


# ---------------------------------------------------------------- var, std
class _Reduces:
    def __init__(self, monkeypatch):
        self.n = 0
        reduce_ = TensorIterator.reduce.__func__

        def counting(cls, *args, **kwargs):
            self.n += 1
            return reduce_(cls, *args, **kwargs)

        monkeypatch.setattr(TensorIterator, "reduce", classmethod(counting))


STD_DTYPES = [np.float32, np.float64, np.float16, np.int32, np.complex64]


@pytest.mark.parametrize("np_dtype", STD_DTYPES, ids=lambda d: np.dtype(d).name)
def test_var_std_templates_match_the_first_call(np_dtype, monkeypatch):
    base = _values(np_dtype, (25, 40))
    t = tl.asarray(base)
    inputs = [t, t.T, t[3:, ::2], t[::-1]]
    for x in inputs:
        for axis in (None, 0, 1, -1, (0, 1)):
            for keepdims in (False, True):
                for corr in (0, 1, 2.5):
                    for fn in (tl.std, tl.var):
                        first = fn(x, axis=axis, keepdims=keepdims, correction=corr)
                        counter = _Reduces(monkeypatch)
                        again = fn(x, axis=axis, keepdims=keepdims, correction=corr)
                        monkeypatch.undo()
                        assert counter.n == 0  # served by the template
                        assert again.dtype == first.dtype and again.shape == first.shape
                        assert again.stride() == first.stride()
                        _bits_equal(again, first)
    # the values against NumPy (the templates only repeat the first call)
    xn = _np(t).astype(np.complex128 if np.dtype(np_dtype).kind == "c" else np.float64)
    got = _np(tl.std(t, axis=1, correction=1)).astype(np.float64)
    np.testing.assert_allclose(got, np.std(xn, axis=1, ddof=1),
                               rtol={np.float64: 1e-10,
                                     np.float16: 2e-3}.get(np_dtype, 1e-5))


def test_var_std_templates_errors_and_declines():
    x = tl.asarray(_values(np.float32, (4, 5)))
    tl.std(x)
    for _ in range(2):  # raised on every call, before and after a template exists
        with pytest.raises(ValueError, match="correction"):
            tl.std(x, correction=-1)
        with pytest.raises(ValueError, match="correction"):
            tl.var(x, correction=True)
        with pytest.raises(IndexError):
            tl.std(x, axis=2)
    # empty reductions and empty results: never templated, still nan / empty
    e = tl.empty((0, 3))
    for _ in range(2):
        assert np.isnan(_np(tl.var(e, axis=0))).all()
        assert tl.std(e, axis=1).shape == (0,)
    # out= takes the full path
    out = tl.empty((5,))
    for _ in range(2):
        assert tl.std(x, axis=0, out=out) is out
    with np.errstate(invalid="ignore"):  # (x holds inf)
        np.testing.assert_allclose(_np(out), np.std(_np(x), axis=0), rtol=1e-5)


def test_var_std_template_keeps_no_input_alive():
    x = tl.asarray(_values(np.float64, (300,)))
    tl.std(x)
    tl.std(x)
    ref = weakref.ref(x._storage)
    del x
    gc.collect()
    assert ref() is None
    assert any(k[0] == "std" and run is not None for k, run in _red._plans.items())


# ---------------------------------------------------------------- softmax, log_softmax
@pytest.mark.parametrize("np_dtype", [np.float32, np.float64, np.float16], ids=str)
def test_softmax_plans_match_the_first_call(np_dtype):
    base = tl.asarray(_values(np_dtype, (6, 5, 4)))
    inputs = [base, base.permute((2, 0, 1)), base[1:, ::2], base[..., 0]]
    for x in inputs:
        for axis in range(-x.ndim, x.ndim):
            for fn in (tl.softmax, tl.log_softmax):
                for dtype in (None, tl.float64):
                    first = fn(x, axis=axis, dtype=dtype)
                    again = fn(x, axis=axis, dtype=dtype)
                    assert again.stride() == first.stride() and again.dtype == first.dtype
                    _bits_equal(again, first)
    x = tl.asarray(_values(np_dtype, (25, 40)))
    xn = _np(x).astype(np.float64)
    with np.errstate(invalid="ignore"):
        e = np.exp(xn - xn.max(axis=-1, keepdims=True))
        ref = e / e.sum(axis=-1, keepdims=True)
    for _ in range(2):
        got = _np(tl.softmax(x, axis=-1)).astype(np.float64)
        np.testing.assert_allclose(got, ref, rtol=5e-3 if np_dtype == np.float16 else 1e-5,
                                   atol=1e-6)


def test_softmax_plans_errors_and_declines():
    x = tl.asarray(_values(np.float32, (4, 5)))
    i = tl.asarray(np.arange(6, dtype=np.int32).reshape(2, 3))
    for _ in range(2):
        with pytest.raises(TypeError, match="floating-point"):
            tl.softmax(i)
        with pytest.raises(IndexError):
            tl.softmax(x, axis=2)
        with pytest.raises(TypeError):
            tl.softmax(x, axis=[0])
        assert tl.softmax(tl.asarray(np.float32(2.0))).item() == 1.0
        assert tl.softmax(tl.empty((0, 3))).shape == (0, 3)
    ok = tl.softmax(i, dtype=tl.float32)
    np.testing.assert_allclose(_np(ok).sum(axis=-1), 1.0, rtol=1e-6)
    # outer dims that do not fold into two: x is copied each call, never planned
    y = tl.asarray(_values(np.float32, (3, 4, 5, 6))).permute((2, 0, 3, 1))[:, ::2, :, ::3]
    key_count = len(_norm._plans)
    r1 = tl.softmax(y, axis=2)
    r2 = tl.softmax(y, axis=2)
    _bits_equal(r1, r2)
    assert len(_norm._plans) == key_count


# ---------------------------------------------------------------- views, contiguous
def test_T_permute_reshape_give_the_dispatched_views():
    t = tl.asarray(_values(np.float32, (4, 6, 5)))
    for x in (t, t[1:, ::2], t[..., 0], t[0, 0], t[::-1]):
        for v, ref in ((x.T, np.transpose(_np(x))),):
            assert v.shape == ref.shape and v._storage is x._storage
            np.testing.assert_array_equal(_np(v), ref)
        axes = tuple(range(x.ndim))[::-1]
        for _ in range(2):
            p = x.permute(axes)
            assert p.shape == x.T.shape and p.stride() == x.T.stride()
            assert p._offset == x.T._offset
    x = t[1:]
    for _ in range(2):  # cached after the first call
        p = tl.permute_dims(x, (-1, 0, 1))
        np.testing.assert_array_equal(_np(p), np.transpose(_np(x), (2, 0, 1)))
        r = x.reshape((3, 30))
        assert r._storage is x._storage and r._offset == x._offset
        np.testing.assert_array_equal(_np(r), _np(x).reshape(3, 30))
        r = tl.reshape(x, (-1, 5))
        np.testing.assert_array_equal(_np(r), _np(x).reshape(-1, 5))
        c = x.T.reshape((90,))  # not a view: copied, never cached
        assert c._storage is not x._storage
        np.testing.assert_array_equal(_np(c), _np(x).T.reshape(90))
        for bad in ((0, 0, 1), (0, 1), (0, 1, 3), (0, 1, -4)):
            with pytest.raises((ValueError, IndexError)):
                x.permute(bad)
        with pytest.raises(ValueError):
            x.reshape((7, 13))
        with pytest.raises(ValueError):
            x.reshape((-1, -1, 6))
    other = tl.asarray(_values(np.int16, (3, 6, 5)))  # same geometry as x, another storage
    r = other.reshape((3, 30))
    assert r._storage is other._storage and r.dtype == tl.int16
    np.testing.assert_array_equal(_np(r), _np(other).reshape(3, 30))


def test_T_keeps_autograd_and_the_profiler():
    w = tl.asarray(np.arange(6, dtype=np.float32).reshape(2, 3)).requires_grad_()
    (w.T * tl.asarray(np.arange(6, dtype=np.float32).reshape(3, 2))).sum().backward()
    np.testing.assert_array_equal(_np(w.grad), np.arange(6, dtype=np.float32).reshape(3, 2).T)
    x = tl.asarray(np.ones((2, 3), np.float32))
    with tl.profiler.profile() as prof:
        x.T
    assert "permute" in {r.key for r in prof.key_averages()}


@pytest.mark.parametrize("np_dtype", [np.float32, np.float16, np.bool_, np.complex64, np.int64],
                         ids=lambda d: np.dtype(d).name)
def test_contiguous_of_strided_views(np_dtype):
    base = _values(np_dtype, (40, 25))
    t = tl.asarray(base)
    for x, ref in ((t.T, base.T), (t[::-1], base[::-1]), (t[::3, 1::2], base[::3, 1::2]),
                   (t[:, 0], base[:, 0]), (t[0:0].T, base[0:0].T)):
        c = x.contiguous()
        assert c.is_contiguous() and c.dtype == t.dtype
        assert c._storage is not t._storage or not x.size  # (an empty x is contiguous)
        np.testing.assert_array_equal(_np(c), ref)
    assert t.contiguous() is t


# ---------------------------------------------------------------- take, linspace, arange
def test_take_direct_and_errors():
    xn = _values(np.float32, (1000,))
    x = tl.asarray(xn)
    idxn = np.random.default_rng(3).integers(-1000, 1000, 700)
    idx = tl.asarray(idxn)
    for axis in (None, 0, -1):
        _bits_equal(tl.take(x, idx, axis=axis), tl.asarray(np.take(xn, idxn)))
    _bits_equal(tl.take(x, tl.asarray(idxn.astype(np.int32))), tl.asarray(np.take(xn, idxn)))
    _bits_equal(tl.take(x, idx[::2]), tl.asarray(np.take(xn, idxn[::2])))
    x2 = tl.asarray(xn.reshape(40, 25))
    np.testing.assert_array_equal(_np(tl.take(x2, tl.asarray(np.array([3, 0])), axis=1)),
                                  np.take(xn.reshape(40, 25), [3, 0], axis=1))
    with pytest.raises(IndexError):
        tl.take(x, tl.asarray(np.array([0, 1000])))
    with pytest.raises(IndexError):
        tl.take(x, idx, axis=1)
    with pytest.raises(TypeError, match="integer dtype"):
        tl.take(x, tl.asarray(np.array([0.0])))
    with pytest.raises(ValueError, match="axis"):
        tl.take(x2, idx)


@pytest.mark.parametrize("dtype", [tl.float32, tl.float64, tl.int64, tl.float16], ids=str)
def test_linspace_arange_device_cpu_equal_default(dtype):
    for num in (0, 1, 7, 1000):
        a = tl.linspace(0.0, 1.0, num, dtype=dtype, device="cpu")
        b = tl.linspace(0.0, 1.0, num, dtype=dtype)
        assert a.device == b.device and a.stride() == b.stride()
        _bits_equal(a, b)
    _bits_equal(tl.arange(3, 50, 4, dtype=dtype, device="cpu"), tl.arange(3, 50, 4, dtype=dtype))
    with pytest.raises(ValueError):
        tl.linspace(0.0, 1.0, -1, dtype=dtype, device="cpu")


# ---------------------------------------------------------------- concat
@pytest.mark.parametrize("np_dtype", [np.float32, np.float16, np.bool_, np.complex128, np.int8],
                         ids=lambda d: np.dtype(d).name)
def test_concat_blocks_match_numpy(np_dtype):
    a = _values(np_dtype, (30, 4), seed=1)
    b = _values(np_dtype, (7, 4), seed=2)
    ta, tb = tl.asarray(a), tl.asarray(b)
    cases = [([ta, tb], 0, [a, b]), ([ta[5:], tb, ta[:0]], 0, [a[5:], b, a[:0]]),
             ([ta[3], tb[1], ta[0]], 0, [a[3], b[1], a[0]]),
             ([ta[None], tb[None, :4]], 1, [a[None], b[None, :4]]),
             ([ta.reshape((120,)), tb.reshape((28,))], -1, [a.ravel(), b.ravel()]),
             # along inner axes (a band of each output row per input)
             ([ta, ta[:, 1:2].contiguous(), ta[:, :0]], 1, [a, a[:, 1:2], a[:, :0]]),
             ([ta[3:9], tb[1:7]], -1, [a[3:9], b[1:7]]),
             ([ta.reshape((5, 6, 4)), ta.reshape((5, 6, 4))[:, 2:3].contiguous()], 1,
              [a.reshape(5, 6, 4), a.reshape(5, 6, 4)[:, 2:3]]),
             ([ta.reshape((5, 6, 4)), ta.reshape((5, 6, 4))[..., :1].contiguous()], 2,
              [a.reshape(5, 6, 4), a.reshape(5, 6, 4)[..., :1]]),
             ([ta[:0], ta[:0]], 1, [a[:0], a[:0]])]
    for ts, axis, ns in cases:
        got = tl.concat(ts, axis=axis)
        ref = np.concatenate(ns, axis=axis)
        assert got.shape == ref.shape and got.is_contiguous()
        _bits_equal(got, tl.asarray(ref))
    s = tl.Stream(device="cpu")  # a user stream: the copy kernels run queued, in order
    with tl.stream(s):
        u = ta.clone()
        got = tl.concat([u, tb])
    s.synchronize()
    _bits_equal(got, tl.asarray(np.concatenate([a, b])))


def test_big_joins_are_byte_copies_that_match_numpy():
    """Joins of several MiB (once the copy kernel's, now byte copies at every size): pieces at
    offsets into their storage, along the leading axis and along an inner one, and stack."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((1 << 20) + 3).astype(np.float32)
    b = rng.integers(-9, 9, (700, 1500)).astype(np.float64)
    ta, tb = tl.asarray(a), tl.asarray(b)
    for got, ref in ((tl.concat([ta[3:], ta, ta[:5]]), np.concatenate([a[3:], a, a[:5]])),
                     (tl.concat([tb[1:], tb], axis=0), np.concatenate([b[1:], b], axis=0)),
                     (tl.concat([tb, tb[:, 7:].contiguous()], axis=1),
                      np.concatenate([b, b[:, 7:]], axis=1)),
                     (tl.stack([tb, tb[::-1].contiguous()]), np.stack([b, b[::-1]]))):
        assert got.shape == ref.shape and got.is_contiguous()
        _bits_equal(got, tl.asarray(ref))


def test_concat_and_stack_along_inner_axes_keep_stream_order():
    """The row-band copies wait for work a CPU stream queued on an input; under a user stream
    the join is queued there (after the input's writer)."""
    import threading
    from helpers import gated
    s = tl.Stream(device="cpu")
    a = tl.zeros((4, 3))
    b = tl.ones((4, 2))
    with tl.stream(s):
        release = gated(s)
        a.add_(2.0)  # queued behind the gate
    threading.Timer(0.2, release.set).start()
    want = np.concatenate([np.full((4, 3), 2.0, np.float32), np.ones((4, 2), np.float32)], 1)
    np.testing.assert_array_equal(_np(tl.concat([a, b], axis=1)), want)
    with tl.stream(s):
        release = gated(s)
        a.add_(1.0)
        joined = tl.concat([a, b], axis=-1)
        stacked = tl.stack([a, a], axis=1)
    release.set()
    s.synchronize()
    want[:, :3] = 3.0
    np.testing.assert_array_equal(_np(joined), want)
    np.testing.assert_array_equal(_np(stacked), np.full((4, 2, 3), 3.0, np.float32))


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_linspace_endpoint_written_on_the_host(np_dtype):
    import warnings
    dtype = tl.float32 if np_dtype == np.float32 else tl.float64
    stops = [1e300, np.nan, np.inf, -np.inf, -0.0, 3.4028235677973366e+38,
             float(np.finfo(np.float32).max), 1 / 3, -7, 2 ** 200, 5e-324]
    for stop in stops:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # (NumPy would warn on an overflowing cast)
            t = tl.linspace(0.0, stop, 3, dtype=dtype, device="cpu")
        with np.errstate(over="ignore"):
            ref = np.array(float(stop), np.float64).astype(np_dtype)
        assert _np(t)[-1].tobytes() == ref.tobytes(), stop
    s = tl.Stream(device="cpu")  # a user stream: the element is written by the fill kernel
    with tl.stream(s):
        t = tl.linspace(0.0, 1 / 3, 4, dtype=dtype)
    s.synchronize()
    assert _np(t)[-1] == np_dtype(1 / 3)


@pytest.mark.parametrize("np_dtype", [np.float32, np.bool_, np.complex64, np.uint16],
                         ids=lambda d: np.dtype(d).name)
def test_stack_blocks_match_numpy_and_errors(np_dtype):
    a = _values(np_dtype, (6, 4), seed=1)
    b = _values(np_dtype, (6, 4), seed=2)
    ta, tb = tl.asarray(a), tl.asarray(b)
    for ts, ns, axis in (([ta, tb], [a, b], 0), ([ta, tb, ta], [a, b, a], -3),
                         ([ta[2:3], tb[0:1]], [a[2:3], b[0:1]], 1),
                         ([ta[1], tb[5]], [a[1], b[5]], 0), ([ta, tb], [a, b], 2),
                         ([ta.T, tb.T], [a.T, b.T], 0), ([ta[:0], tb[:0]], [a[:0], b[:0]], 0)):
        got = tl.stack(ts, axis=axis)
        ref = np.stack(ns, axis=axis)
        assert got.shape == ref.shape and got.is_contiguous()
        _bits_equal(got, tl.asarray(ref))
    with pytest.raises(ValueError, match="shape"):
        tl.stack([ta, tb[1:]])
    with pytest.raises(IndexError):
        tl.stack([ta, tb], axis=3)
    mixed = tl.stack([ta, tb.astype(tl.float64)])  # promoted by the general path
    assert mixed.dtype == tl.result_type(ta, tl.float64)


def test_basic_int_slice_keys_give_numpys_views_and_errors():
    xn = _values(np.float32, (5, 6, 4))
    t = tl.asarray(xn)
    item = xn.itemsize
    for x, ref in ((t, xn), (t[1:, ::-2], xn[1:, ::-2]), (t.T, xn.T)):
        for key in (3, -1, (2, 1), (slice(1, None, 2), -3), (slice(None), 1), (0, 0, 0),
                    (slice(None, None, -1),), (slice(7, 2, -2), 1), (1, slice(0, 0)), ()):
            v = x[key]
            r = ref[key]
            assert v.shape == r.shape and v._storage is t._storage, key
            assert tuple(s * item for s in v.stride()) == r.strides, key
            np.testing.assert_array_equal(_np(v), r)
    for key in (5, -6, (0, 6), (0, 0, 4), (1, 2, 3, 0)):
        with pytest.raises(IndexError) as e:
            t[key]
        assert "out of bounds" in str(e.value) or "too many indices" in str(e.value)
    with pytest.raises(ValueError):
        t[::0]
    with pytest.raises(ValueError):
        t[0, ::0]
    # not ints and slices only: the general path (bool is a 0-d mask, np.int64 an index)
    assert t[True].shape == (1, 5, 6, 4) and t[False].shape == (0, 5, 6, 4)
    np.testing.assert_array_equal(_np(t[np.int64(2), None]), xn[np.int64(2), None])
    np.testing.assert_array_equal(_np(t[..., 1]), xn[..., 1])


def test_arange_of_exact_ints_matches_numpy_and_errors():
    for args in ((1000,), (0,), (-3,), (5, 2), (2, 17, 3), (10, -7, -4), (2 ** 40, 2 ** 40 + 5)):
        t = tl.arange(*args)
        ref = np.arange(*args)
        assert t.dtype == tl.int64 and t.shape == ref.shape
        np.testing.assert_array_equal(_np(t), ref)
    np.testing.assert_array_equal(_np(tl.arange(3, 9, 2, dtype=tl.float32)),
                                  np.arange(3, 9, 2, dtype=np.float32))
    with pytest.raises(ValueError, match="step"):
        tl.arange(0, 5, 0)
    with pytest.raises(ValueError, match="finite"):
        tl.arange(0, float("inf"))
    with pytest.raises(OverflowError):
        tl.arange(-2 ** 70, 2 ** 70, 1)


# ---------------------------------------------------------------- arange / linspace: dense range
RANGE_DTYPES = [tl.float32, tl.float64, tl.float16, tl.bfloat16, tl.int64, tl.int32, tl.uint8,
                tl.int8, tl.complex64]


def _stub_range(n, dtype, start, step):
    """What the range stub kernel (launched, the full path) writes into a fresh tensor."""
    from tensorlib.kernels.cpu import creation as kc
    t = tl.empty((n,), dtype=dtype)
    kc.fill_range(t, start, step)
    return t


@pytest.mark.parametrize("dtype", RANGE_DTYPES, ids=str)
def test_arange_linspace_take_the_dense_range_fill(dtype, monkeypatch):
    from tensorlib.kernels.cpu import creation as kc
    cases = [(0, 7, 1), (3, 50, 4), (10, -7, -4), (0, 1, 0.125), (2.5, -3.0, -0.75), (0, 1000, 1),
             (5, 6, 1), (True, 4, 1)]
    expected = {}
    for start, stop, step in cases:
        n = max(int(np.ceil((stop - start) / step)), 0)
        expected[(start, stop, step)] = _stub_range(n, dtype, start, step)
    lin_expected = {}
    for start, stop, num in ((0, 1, 1000), (0.0, 1.0, 7), (-3, 5, 2), (1, 1, 1), (2.0, -8.5, 9)):
        step = (stop - start) / (num - 1) if num > 1 else 0.0
        lin_expected[(start, stop, num)] = (_stub_range(num, dtype, start, step), stop)

    def no_launch(*a, **k):
        raise AssertionError("the range stub kernel was launched")
    monkeypatch.setattr(kc, "launch", no_launch)  # the dense path never launches
    for (start, stop, step), ref in expected.items():
        t = tl.arange(start, stop, step, dtype=dtype)
        assert t.dtype == dtype and t.shape == ref.shape and t.stride() == (1,)
        _bits_equal(t, ref)
    for (start, stop, num), (ref, end) in lin_expected.items():
        refn = _np(ref)
        if num > 1:  # the end point is the stop value itself, converted as t[-1] = stop does
            end_t = tl.empty((1,), dtype=dtype)
            wrote = _outcome(lambda: end_t.__setitem__(0, end))
            got = _outcome(lambda: tl.linspace(start, stop, num, dtype=dtype, device="cpu"))
            if wrote[0] == "error":  # (e.g. -8.5 into uint8): its error, naming linspace's stop
                assert got[0] == "error" and got[1][0] is wrote[1][0]
                assert got[1][1].startswith(f"linspace(): argument 'stop' = {stop!r} ")
                continue
            refn[-1] = _np(end_t)[0]
        t = tl.linspace(start, stop, num, dtype=dtype, device="cpu")
        assert t.dtype == dtype and t.shape == ref.shape and t.stride() == (1,)
        assert np.array_equal(_np(t).view(np.uint8), refn.view(np.uint8))
    assert any(k[1] is dtype for k in kc._flats)


def test_arange_linspace_dense_range_values_and_errors():
    # against NumPy (int math for ints, float64 steps otherwise)
    for args in ((1000,), (3, 50, 4), (10, -7, -4), (2 ** 40, 2 ** 40 + 5), (-5, 5)):
        np.testing.assert_array_equal(_np(tl.arange(*args)), np.arange(*args))
    for dt in (np.float32, np.float64, np.int32):
        np.testing.assert_array_equal(_np(tl.arange(0, 1000, 3, dtype=tl.asarray(np.zeros(1, dt)).dtype)),
                                      np.arange(0, 1000, 3, dtype=dt))
    np.testing.assert_array_equal(_np(tl.linspace(0, 1, 1000)), np.linspace(0, 1, 1000, dtype=np.float32))
    np.testing.assert_array_equal(_np(tl.linspace(0, 1, 1000, dtype=tl.float64)), np.linspace(0, 1, 1000))
    # a step beyond int64 into an int tensor: the stub kernel's conversion error, unchanged
    a = _outcome(lambda: tl.arange(0, 2 ** 70, 2 ** 69, dtype=tl.int64))
    b = _outcome(lambda: _stub_range(2, tl.int64, 0, 2 ** 69))
    assert a[0] == b[0] == "error" and a[1] == b[1]
    # empty and one-element results, NumPy / tensor scalars, 0-d tensors as bounds
    assert tl.arange(0).shape == (0,) and tl.linspace(0, 1, 0).shape == (0,)
    assert tl.linspace(2.0, 3.0, 1).item() == 2.0
    np.testing.assert_array_equal(_np(tl.arange(np.int64(2), tl.asarray(np.int64(9)), 3)),
                                  np.arange(2, 9, 3))
    np.testing.assert_array_equal(_np(tl.linspace(np.float64(0.5), tl.asarray(np.float32(2)), 4)),
                                  np.linspace(0.5, 2, 4, dtype=np.float32))
    for bad, err in ((lambda: tl.arange(0, 5, 0), ValueError), (lambda: tl.arange(1j), TypeError),
                     (lambda: tl.linspace(0, 1, -1), ValueError),
                     (lambda: tl.linspace("a", 1, 3), TypeError),
                     (lambda: tl.linspace(0, 1, 3.0), TypeError),
                     (lambda: tl.linspace(0, 1, 3, device="gpu"), ValueError),
                     (lambda: tl.arange(3, dtype="float33"), TypeError)):
        with pytest.raises(err):
            bad()
    with pytest.raises(TypeError, match=r"linspace\(\): argument 'start' must be a number"):
        tl.linspace("a", 1, 3)
    with pytest.raises(ValueError, match=r"linspace\(\): argument 'device'"):
        tl.linspace(0, 1, 3, device="cpu:1")
    # an int stop is the end point as float(stop), as NumPy stores it
    for stop, dt, npdt in ((7, tl.float32, np.float32), (2 ** 60 + 1, tl.float64, np.float64),
                           (-(2 ** 70) - 3, tl.float64, np.float64)):
        t = tl.linspace(0, stop, 3, dtype=dt)
        assert _np(t)[-1].tobytes() == np.array(float(stop), npdt).tobytes()


def test_dense_range_under_a_user_stream_and_the_profiler():
    s = tl.Stream(device="cpu")
    with tl.stream(s):  # the stub kernel is queued on s, in order
        a = tl.arange(1000, dtype=tl.float32)
        b = tl.linspace(0, 1, 1000)
    s.synchronize()
    np.testing.assert_array_equal(_np(a), np.arange(1000, dtype=np.float32))
    np.testing.assert_array_equal(_np(b), np.linspace(0, 1, 1000, dtype=np.float32))
    with tl.profiler.profile() as prof:
        c = tl.arange(1000)
    np.testing.assert_array_equal(_np(c), np.arange(1000))
    assert any("fill_range" in k.name for k in prof.trace.kernels)  # recorded as the launch is


# ---------------------------------------------------------------- strided 1-D pointwise loop
STRIDED_DTYPES = [np.float32, np.float64, np.float16, "bfloat16", np.int32, np.int8, np.complex64,
                  np.bool_]


def _strided_views(t):
    n = t.shape[0]
    return [(t[::2], t[1::2]), (t[::-1], t[n // 2:n // 2 - n:-1][: n]), (t[5::3], t[-1:4:-3]),
            (t[3:4], t[::-7][:1]), (t[10:510], t[::2])]


@pytest.mark.parametrize("np_dtype", STRIDED_DTYPES, ids=lambda d: str(d) if isinstance(d, str)
                         else np.dtype(d).name)
def test_strided_raw_loop_matches_the_full_path(np_dtype):
    from tensorlib.kernels.cpu import pointwise as kp
    if np_dtype == "bfloat16":
        base = tl.asarray(_values(np.float32, (1000,))).astype(tl.bfloat16)
        other = tl.asarray(_values(np.float32, (1000,), seed=5)).astype(tl.bfloat16)
        kind = "f"
    else:
        base = tl.asarray(_values(np_dtype, (1000,)))
        other = tl.asarray(_values(np_dtype, (1000,), seed=5))
        kind = np.dtype(np_dtype).kind
    # (not add: test_dispatch_fast_path checks that x[::2] + y is not yet hot)
    binary = ([tl.multiply, tl.subtract] + ([tl.maximum] if kind != "c" else [])
              if kind != "b" else [tl.logical_xor, tl.maximum])
    unary = [tl.negative, tl.abs] if kind != "b" else [tl.logical_not]
    if kind in "fc":
        unary.append(tl.exp)
    pairs = [(a, b) for a, b in _strided_views(base) + [(x, y) for x, y in
             zip((v for v, _ in _strided_views(other)), (v for _, v in _strided_views(base)))]
             if a.shape == b.shape]
    for _ in range(2):  # the first round may make the runners hot, the second uses them
        for fn in binary:
            for a, b in pairs:
                for _ in range(34):
                    got = fn(a, b)
                ref = fn(a, b, out=tl.empty(a.shape, dtype=got.dtype))  # the full path
                assert got.stride() == (1,) and got.dtype == ref.dtype
                _bits_equal(got, ref)
        for fn in unary:
            for a, _ in pairs:
                for _ in range(34):
                    got = fn(a)
                ref = fn(a, out=tl.empty(a.shape, dtype=got.dtype))
                _bits_equal(got, ref)
    if kind != "b":
        # (add / subtract: test_fast_paths_small checks that x[::2] * 2.0 is not yet hot)
        for a, _ in pairs:
            for s in (2, 1.5):
                for _ in range(34):
                    r1, r2 = a + s, s - a
                _bits_equal(r1, tl.add(a, s, out=tl.empty(a.shape, dtype=r1.dtype)))
                _bits_equal(r2, tl.subtract(s, a, out=tl.empty(a.shape, dtype=r2.dtype)))
    dt = base.dtype
    assert ("multiply" if kind != "b" else "maximum", "TT", (dt, dt)) in \
        {k[:3] for k in kp._strideds}
    # against NumPy too
    xn, yn = _np(base), _np(other)
    if kind != "b" and np_dtype != "bfloat16":
        with np.errstate(all="ignore"):
            ref = xn[::2] * yn[::-2]
        _bits_equal(base[::2] * other[::-2], tl.asarray(ref))


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64])
def test_strided_raw_loop_block_forms(np_dtype):
    # ops with a block_fast form (sin: per block of 1024 all below the short bound; x ** 2.5)
    # on a strided operand: per block the same choice, so the same bits, as the dense loop
    # over a contiguous copy; blocks holding a huge value, nan or inf take the plain form.
    # Compute-bound ops over real floats (these) gather the operand a block at a time in the
    # strided raw loop and run the dense loop's vectorized blocks
    rng = np.random.default_rng(3)
    xn = (rng.standard_normal(9000) * 10).astype(np_dtype)
    xn[5000:5003] = [np.nan, np.inf, 1e30]
    x = tl.asarray(xn)
    for view in (x[::2], x[::-3], x[1::4]):
        dense = tl.asarray(_np(view).copy())
        for fn in (tl.sin, lambda t: t ** 2.5):
            for _ in range(40):
                got = fn(view)
            _bits_equal(got, fn(dense))
            with np.errstate(all="ignore"):
                ref = np.sin(_np(view)) if fn is tl.sin else _np(view) ** np_dtype(2.5)
            np.testing.assert_allclose(_np(got), ref, rtol=4e-7 if np_dtype == np.float32
                                       else 1e-15, equal_nan=True)
    from tensorlib.kernels.cpu import pointwise as kp
    assert any(k[0] == "sin" and k[3].name == np.dtype(np_dtype).name for k in kp._strideds)


@pytest.mark.parametrize("np_dtype", [np.float16, np.float32, np.float64],
                         ids=lambda d: np.dtype(d).name)
def test_strided_compute_bound_ops_give_the_dense_bits(np_dtype, whole_team):
    """A compute-bound op (ops.yaml wide_vectors) on strided 1-D operands, once its strided
    fast path is hot, gathers them a block at a time below the grain and copies them dense
    above it, running the dense loop's blocks either way: the bits of the same op on
    contiguous copies, for one- and two-operand ops, steps of either sign, a contiguous operand
    beside a strided one; sqrt and reciprocal (ops.yaml gathers) too."""
    rng = np.random.default_rng(9)
    ops = [tl.exp, tl.sin, tl.tanh, lambda t: t ** 2.7, lambda t: t ** 2.5,
           lambda t: tl.atan2(t, t[::-1]), lambda t: tl.atan2(t, tl.asarray(_np(t).copy())),
           tl.sqrt, tl.reciprocal]
    for n in (1000, 300_001):
        xn = rng.uniform(0.1, 4, 3 * n).astype(np_dtype)
        x = tl.asarray(xn)
        for view in (x[::3], x[-1::-3]):
            dense = tl.asarray(_np(view).copy())
            for fn in ops:
                for _ in range(34 if n == 1000 else 2):  # (hot: the fast path's runner)
                    got = fn(view)
                _bits_equal(got, fn(dense))


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_nd_strided_compute_bound_ops_gather_their_tiles(np_dtype):
    """A compute-bound op's loop nest gathers a strided input a chunk at a time and runs its
    vectorized block loop: the bits of the op on a contiguous copy (no block forms: exp,
    atan2) or, for sin (block forms, blocks from each row's start), of each row on its own;
    inner steps of 2, -3 and a transposed view's, a huge value and a nan in some blocks."""
    rng = np.random.default_rng(11)
    a = rng.uniform(-50, 50, (300, 2500)).astype(np_dtype)
    a[10, 20], a[200, 1300] = 3e30, np.nan
    t = tl.asarray(a)
    for view in (t[::2, ::2], t[::-1, ::3], t.T[::2, :150]):
        rows = _np(view)
        dense = tl.asarray(rows.copy())
        _bits_equal(tl.exp(view), tl.exp(dense))
        _bits_equal(tl.atan2(view, view), tl.atan2(dense, dense))
        got = _np(tl.sin(view))
        for i in range(0, rows.shape[0], 37):
            want = _np(tl.sin(tl.asarray(rows[i].copy())))
            assert got[i].tobytes() == want.tobytes(), i


def test_strided_raw_loop_declines():
    x = tl.asarray(_values(np.float32, (600,)))
    y = tl.asarray(_values(np.float32, (600,), seed=2))
    for _ in range(40):
        x[::2] - y[::2]
        tl.exp(x[::3])
    # empty, stride 0 (a broadcast 1-D view), a queued user-stream write, the profiler
    e = x[5:5:2]
    assert (e - e).shape == (0,) and tl.exp(e).shape == (0,)
    b = tl.broadcast_to(tl.asarray(np.float32(2.0)), (300,))
    for _ in range(40):
        got = tl.exp(b)
    _bits_equal(got, tl.exp(b, out=tl.empty((300,))))  # the full path's values
    s = tl.Stream(device="cpu")
    with tl.stream(s):
        u = x * 2.0
        v = u[::2] - y[::2]  # queued behind u's write
    s.synchronize()
    np.testing.assert_array_equal(_np(v), _np(x)[::2] * np.float32(2) - _np(y)[::2])
    with tl.stream(s):
        w = x * 3.0
    r = w[::2] - y[::2]  # the default stream waits for w's queued write
    np.testing.assert_array_equal(_np(r), _np(x)[::2] * np.float32(3) - _np(y)[::2])
    with tl.profiler.profile() as prof:
        p = x[::2] - y[::2]
    np.testing.assert_array_equal(_np(p), _np(x)[::2] - _np(y)[::2])
    assert any(k.name.startswith("subtract") for k in prof.trace.kernels)


# ---------------------------------------------------------------- strided copies (contiguous())
@pytest.mark.parametrize("np_dtype", [np.float32, np.float16, np.int64, np.bool_, np.complex128,
                                      np.uint8], ids=lambda d: np.dtype(d).name)
def test_copy_strided_buffer_views_match_numpy(np_dtype, monkeypatch):
    from tensorlib.storage import Storage
    base = _values(np_dtype, (40, 25))
    t = tl.asarray(base)
    b3 = _values(np_dtype, (4, 6, 5))
    t3 = tl.asarray(b3)
    real_typed = Storage.typed

    def no_typed_views(*a, **k):
        raise AssertionError("copy_strided went through Storage.typed()")
    from tensorlib.kernels.cpu import small_copy
    for _ in range(small_copy.HOT_CALLS):  # (this width's raw loop compiled, as in a hot
        t.T.contiguous()                   # program: before, the cold transposed route asks)
    for x, ref in ((t.T, base.T), (t[::-1], base[::-1]), (t[::3, ::-2], base[::3, ::-2]),
                   (t[:, 7], base[:, 7]), (t[5:, 3:].T, base[5:, 3:].T),
                   (t3.permute((2, 0, 1)), b3.transpose(2, 0, 1)), (t3[:, ::-2, 1:], b3[:, ::-2, 1:])):
        monkeypatch.setattr(Storage, "typed", no_typed_views)
        c = x.contiguous()
        monkeypatch.setattr(Storage, "typed", real_typed)
        assert c.is_contiguous() and c.dtype == t.dtype and c.shape == ref.shape
        assert c.stride() == tuple(s // ref.itemsize for s in np.ascontiguousarray(ref).strides)
        np.testing.assert_array_equal(_np(c), ref)
        if ref.dtype.kind == "f":
            assert np.array_equal(_np(c).view(np.uint8), np.ascontiguousarray(ref).view(np.uint8))
    # into a dense destination that is not C-contiguous (copy_ keeps its layout)
    dst = tl.empty((25, 40), dtype=t.dtype).T
    dst.copy_(t[::-1])
    np.testing.assert_array_equal(_np(dst), base[::-1])
    assert dst.stride() == (1, 40)
    monkeypatch.undo()
    # a source with a queued user-stream write: the typed views, which wait for it
    s = tl.Stream(device="cpu")
    with tl.stream(s):
        u = t.clone()
    c = u.T.contiguous()
    np.testing.assert_array_equal(_np(c), base.T)
    s.synchronize()
    assert t[0:0].T.contiguous().shape == (25, 0)


# ---------------------------------------------------------------- x[idx] above the grain
@pytest.mark.parametrize("np_dtype", [np.float32, np.float64, np.int8, np.uint16,
                                      np.complex128], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("idx_dtype", [np.int64, np.int32], ids=["int64", "int32"])
def test_big_index_gather_takes_the_direct_path(np_dtype, idx_dtype, monkeypatch):
    from tensorlib.kernels.cpu import indexing as cpu_indexing
    from tensorlib.ops import indexing as ops_indexing

    def general(*a, **k):
        raise AssertionError("the general index path ran")

    rng = np.random.default_rng(3)
    n = cpu_indexing.GRAIN + 3 * cpu_indexing.CHUNK + 7  # several chunks, a ragged last one
    xn = _values(np_dtype, (n,))
    x = tl.asarray(xn)
    cases = {"valid": rng.integers(0, n, n),
             "negatives": rng.integers(-n, n, n),           # wrapped per element
             "one block with a negative": np.where(np.arange(n) == n - 2, -1,
                                                   rng.integers(0, n, n))}
    monkeypatch.setattr(ops_indexing, "advanced_getitem", general)
    for name, idn in cases.items():
        idn = idn.astype(idx_dtype)
        got = x[tl.asarray(idn)]
        _bits_equal(got, tl.asarray(xn[idn]))
    # 2-D source: rows gathered (post > 1)
    x2n = _values(np_dtype, (n // 8, 8))
    idn = rng.integers(-(n // 8), n // 8, cpu_indexing.GRAIN // 4).astype(idx_dtype)
    _bits_equal(tl.asarray(x2n)[tl.asarray(idn)], tl.asarray(x2n[idn]))
    monkeypatch.undo()
    # an out-of-range index anywhere: the general path names the first bad one
    for pos in (0, n // 2, n - 1):
        idn = rng.integers(0, n, n).astype(idx_dtype)
        idn[pos] = n
        with pytest.raises(IndexError, match=str(n)):
            x[tl.asarray(idn)]


def test_empty_direct_path_matches_empty_strided(monkeypatch):
    from tensorlib import allocation

    calls = []
    real = allocation.empty_strided
    monkeypatch.setattr(allocation, "empty_strided", lambda *a, **k: calls.append(a) or real(*a, **k))
    for shape in [(1000,), (3, 4), (0,), (), (2, 0, 3), 7]:
        for dtype in (None, tl.int8, tl.float16, tl.complex128):
            t = tl.empty(shape, dtype=dtype)
            dims = allocation.normalize_shape(shape, "empty")
            ref = real(dims, allocation.contiguous_strides(dims), dtype)
            assert (t.shape, t.stride(), t.dtype, t.device) == \
                   (ref.shape, ref.stride(), ref.dtype, ref.device)
            assert t.is_contiguous() and t._storage.nbytes == ref._storage.nbytes
    assert calls == []  # every call above took the direct path
    tl.empty((2,), device="cpu", pin_memory=False)
    with pytest.raises(OverflowError, match="empty"):
        tl.empty((2 ** 62,))
    with pytest.raises(ValueError, match="negative"):
        tl.empty((-1, 2))


def test_var_std_plan_keeps_its_scratch_mean_alive(monkeypatch):
    # The planned var / std writes the mean into scratch memory and reads it in the second
    # kernel: the scratch's storage must stay allocated until then, else the result is handed
    # the very block the mean is still read from (or another thread is).
    from tensorlib.kernels.cpu import reduction as cpu_reduction
    from tensorlib.ops import reduction as ops_reduction
    from tensorlib.storage import Storage

    monkeypatch.setattr(cpu_reduction, "COLD", False)  # (a cold call makes no plan)
    xn = np.random.default_rng(5).standard_normal((20, 300)) + 3.0
    x = tl.asarray(xn)
    for fn in (tl.std, tl.var):
        for _ in range(3):
            fn(x, axis=1)  # (a plan is made once the kernels have run: not by a cold call)
    for op in ("std", "var"):  # (the plans these calls use)
        assert any(k[0] == op and k[3] == x._shape and run is not None
                   for k, run in ops_reduction._plans.items())
    freed = []
    real_del = Storage.__del__

    def recording_del(self):
        freed.append(self._ptr)
        real_del(self)

    monkeypatch.setattr(Storage, "__del__", recording_del)
    for fn, ref in ((tl.std, np.std), (tl.var, np.var)):
        freed.clear()
        got = fn(x, axis=1)
        assert freed, "the plan's scratch was not freed"
        assert got._storage._ptr not in freed  # the result never reuses the live scratch
        np.testing.assert_allclose(_np(got), ref(xn, axis=1), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.float16, np.float32, np.float64,
                                   np.complex64, np.complex128], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("itype", [np.int32, np.int64])
def test_small_take_on_raw_addresses(dtype, itype):
    """x[idx] / take of a 1-D source below the grain (kernels/cpu/indexing.py getitem_dense's
    raw-address gather): every element width and index type, negative indices, a stepped, a
    reversed and an offset source, an index tensor at an offset in its storage; an index out
    of range raises the general path's IndexError naming it."""
    rng = np.random.default_rng(3)
    a = (rng.standard_normal(300) * 50).astype(dtype)
    t = tl.asarray(a)
    i = rng.integers(-150, 150, 400).astype(itype)
    ti = tl.asarray(np.concatenate([np.zeros(7, itype), i]))[7:]
    for src, ref in ((t, a), (t[::2], a[::2]), (t[::-1], a[::-1]), (t[20:], a[20:])):
        assert np.array_equal(src[ti].numpy(), ref[i])
        assert np.array_equal(tl.take(src, ti).numpy(), np.take(ref, i))
    for bad in (150, -151):
        j = i.copy()
        j[123] = bad
        with pytest.raises(IndexError, match=str(bad)):
            t[::2][tl.asarray(j)]


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.float16, np.float32, np.float64,
                                   np.complex64, np.complex128], ids=lambda d: np.dtype(d).name)
def test_small_mask_on_raw_addresses(dtype):
    """x[mask] of a dense source and mask below the grain (kernels/cpu/indexing.py's raw
    count and compaction): every element width, sources and masks at offsets in their
    storages, 2-D, all-false and all-true masks; the source is left as it was."""
    rng = np.random.default_rng(4)
    a = (rng.standard_normal(500) * 50).astype(dtype)
    m = rng.random(500) > 0.4
    t = tl.asarray(np.concatenate([a[:3], a]))[3:]
    tm = tl.asarray(np.concatenate([m[:5], m]))[5:]
    for _ in range(3):
        assert np.array_equal(t[tm].numpy(), a[m])
    assert np.array_equal(t.reshape(20, 25)[tm.reshape(20, 25)].numpy(), a[m])
    for full in (np.zeros(500, bool), np.ones(500, bool)):
        got = t[tl.asarray(full)]
        assert got.shape == (int(full.sum()),) and np.array_equal(got.numpy(), a[full])
    assert np.array_equal(t.numpy(), a)


# ---- asarray / tensor of Python scalars and short flat sequences (the packed route) ---------
from hypothesis import given, settings, strategies as st  # noqa: E402

from tensorlib.ops import creation as _creation  # noqa: E402

_F32_MAX = float(np.finfo(np.float32).max)


def _general(obj, **kw):
    """What asarray gives with the packed route off (NumPy's conversion)."""
    saved = _creation._PACKABLE
    _creation._PACKABLE = frozenset()
    try:
        return tl.asarray(obj, **kw)
    finally:
        _creation._PACKABLE = saved


def _same_as_general(obj, **kw):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the packed route must not hide NumPy's warnings
        try:
            want = _general(obj, **kw)
        except Exception as e:  # the same error type, whichever route
            with pytest.raises(type(e)):
                tl.asarray(obj, **kw)
            return None
        got = tl.asarray(obj, **kw)
    assert got.dtype == want.dtype and got.shape == want.shape and got.stride() == want.stride()
    g, w = _np(got), _np(want)
    assert g.tobytes() == w.tobytes(), (obj, g, w)
    return got


@pytest.mark.parametrize("obj,dtype", [
    (2.0, None), (-0.0, None), (1.5, tl.float64), (_F32_MAX, None), (-_F32_MAX, None),
    (1e-45, None), (1e-46, None), (3.4028235e38 * (1 + 2 ** -25), None), (1e300, None),
    (float("nan"), None), (float("-inf"), None), (3, None), (-2 ** 63, None), (2 ** 63 - 1, None),
    (2 ** 63, None), (2 ** 64, None), (7, tl.int64), (True, None), (False, tl.bool),
    (1.0, tl.float16), (3, tl.float32), (2.0, tl.int32), (1 + 2j, None),
    ([1.0, 2.5, -0.0], None), ((1, 2, 3), None), ([True, False], None), ([1, 2.0], None),
    ([1.0] * 64, None), ([1.0] * 65, None), ([0.1, 0.2], tl.float64), ([], None),
    ([[1.0, 2.0]], None), ([1.0, 1e300], None), ([1.0, float("nan")], None),
    ([2 ** 63, 1], None), ([1, 2], tl.int8), ([1.0, 2.0], tl.float16)],
    ids=lambda v: repr(v)[:30])
def test_packed_python_data_is_the_general_conversion(obj, dtype):
    _same_as_general(obj, dtype=dtype)
    got = _same_as_general(obj, dtype=dtype)
    if got is not None:  # tensor() copies the same way
        assert _np(tl.tensor(obj, dtype=dtype)).tobytes() == _np(got).tobytes()


def test_packed_route_is_taken_and_owns_its_bytes():
    t = tl.asarray([1.0, 2.0])
    assert t._storage._owner is None and t._storage._block is not None  # a new allocation
    t[0] = 5.0  # writable, and nobody else's
    assert t.tolist() == [5.0, 2.0]
    assert tl.asarray(2.0, requires_grad=True).requires_grad  # declines: the general path
    with pytest.raises(ValueError, match="copy=False"):
        tl.asarray(2.0, copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        tl.asarray([1.0], copy=False)


@settings(max_examples=200, deadline=None)
@given(st.one_of(
    st.floats(allow_nan=True, allow_infinity=True), st.integers(-2 ** 70, 2 ** 70), st.booleans(),
    st.lists(st.floats(width=64), min_size=1, max_size=70),
    st.lists(st.integers(-2 ** 64, 2 ** 64), min_size=1, max_size=8),
    st.lists(st.booleans(), min_size=1, max_size=8)),
    st.sampled_from([None, tl.float32, tl.float64, tl.int64, tl.bool]))
def test_packed_python_data_property(obj, dtype):
    _same_as_general(obj, dtype=dtype)
