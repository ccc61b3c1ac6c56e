"""The pointwise layout runners (issue 13 item 2): broadcast shapes, transposed or N-D strided
views and mixed dtypes, once a layout is hot, skip the TensorIterator and run the full path's
own loop on its own meta. Each must give exactly the full path's result (dtype, shape, strides,
bits) and must actually be taken. Nothing here is timed."""
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlib as tl
from tensorlib.dispatch import dispatcher
from tensorlib.iterator import TensorIterator
from tensorlib.ops.pointwise import HOT_CALLS, LAYOUT_KEYS
from helpers import assert_same_tensor, pointwise_layouts, tensor_bits


def _builds(monkeypatch):
    calls = []
    real = TensorIterator.build.__func__
    monkeypatch.setattr(TensorIterator, "build",
                        classmethod(lambda cls, *a, **k: calls.append(1) or real(cls, *a, **k)))
    return calls


def _arr(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    vals = rng.standard_normal(shape) * 3
    if dtype.kind in "iu":
        vals = rng.integers(1, 50, shape)
    elif dtype.kind == "b":
        vals = rng.integers(0, 2, shape).astype(bool)
    if dtype.kind == "f" and dtype.itemsize == 2:
        return tl.asarray(vals.astype(np.float32)).astype(dtype)
    return tl.asarray(np.asarray(vals).astype(dtype.np_dtype))


def _views(dtype):
    """(name, operands) of layouts the dense and 1-D runners leave to the full path."""
    return pointwise_layouts(lambda shape, seed: _arr(shape, dtype, seed))


def _warm(fn, *args):
    first = fn(*args)
    for _ in range(HOT_CALLS + 1):
        fn(*args)
    return first


@pytest.mark.parametrize("dtype", [tl.float32, tl.float64, tl.int32, tl.int64, tl.uint8,
                                   tl.float16, tl.bfloat16, tl.complex64, tl.bool],
                         ids=str)
@pytest.mark.parametrize("op", ["add", "sub alpha", "multiply", "maximum", "less",
                                "scalar", "exp"])
def test_hot_layouts_give_the_full_paths_result_and_skip_the_iterator(op, dtype, monkeypatch):
    fns = {
        "add": lambda a, b: a + b,
        "sub alpha": lambda a, b: tl.subtract(a, b, alpha=2),
        "multiply": lambda a, b: a * b,
        "maximum": tl.maximum,
        "less": lambda a, b: a < b,
        "scalar": lambda a, b: a * 3,
        "exp": lambda a, b: tl.exp(a),
    }
    fn = fns[op]
    if dtype is tl.bool and op in ("sub alpha", "exp", "add"):
        pytest.skip("not defined for bool")
    if dtype.kind == "c" and op in ("maximum", "less"):
        pytest.skip("not defined for complex")
    if dtype.kind in "iub" and op == "exp":
        pytest.skip("int -> float ops on integers: the runner declines (default float dtype)")
    for name, (a, b) in _views(dtype).items():
        with np.errstate(all="ignore"):
            first = _warm(fn, a, b)  # full path, then hot
            calls = _builds(monkeypatch)
            got = fn(a, b)
        assert not calls, f"{op} {dtype} {name}: the full path ran"
        assert_same_tensor(got, first)
        monkeypatch.undo()


def test_int_to_float_on_integers_stays_on_the_full_path(monkeypatch):
    a = _arr((6, 7), tl.int32)
    b = _arr((7,), tl.int32)
    first = _warm(tl.divide, a, b)  # int / int: the default float dtype decides
    calls = _builds(monkeypatch)
    assert_same_tensor(tl.divide(a, b), first)
    assert calls


@pytest.mark.parametrize("dtype", [tl.float32, tl.float64, tl.int64, tl.float16], ids=str)
def test_one_dense_block_per_operand_runs_the_flat_loop(dtype, monkeypatch):
    # operands dense in one permuted order coalesce to one dim: the flat loop on raw
    # addresses, as the full path runs it (same bits), also in place and at an offset
    base = _arr((4, 6, 8), dtype)
    x = base[1].T
    y = _arr((6, 8), dtype, 1).T
    fns = [lambda: x + y, lambda: x * 3, lambda: tl.maximum(x, y)]
    if dtype.kind == "f":
        fns.append(lambda: tl.exp(x))
    for fn in fns:
        first = _warm(fn)
        calls = _builds(monkeypatch)
        got = fn()
        assert not calls
        assert_same_tensor(got, first)
        monkeypatch.undo()
    acc = _arr((6, 8), dtype, 2).T
    want = acc.numpy() + y.numpy()
    for _ in range(HOT_CALLS + 2):
        acc_copy = tl.asarray(acc.numpy().T.copy()).T  # (a fresh block in acc's order)
        acc_copy += y
    np.testing.assert_array_equal(acc_copy.numpy(), want)


def test_mixed_dtypes_promote_as_the_full_path():
    a = _arr((5, 4), tl.float32)
    for b in (_arr((4,), tl.float64), _arr((5, 4), tl.int64), _arr((5, 1), tl.float16)):
        first = _warm(tl.add, a, b)
        got = a + b
        assert_same_tensor(got, first)
        np.testing.assert_allclose(got.numpy(), np.add(a.numpy(), b.astype(tl.float64).numpy()
                                                       if b.dtype is tl.float16
                                                       else b.numpy()), rtol=1e-6)


def test_results_are_fresh_and_inputs_untouched():
    a = _arr((6, 7), tl.float32)
    b = _arr((7,), tl.float32)
    keep_a, keep_b = a.numpy().copy(), b.numpy().copy()
    outs = [a + b for _ in range(HOT_CALLS + 4)]
    assert len({o.data_ptr() for o in outs}) == len(outs)
    for o in outs:
        np.testing.assert_array_equal(o.numpy(), keep_a + keep_b)
    np.testing.assert_array_equal(a.numpy(), keep_a)
    np.testing.assert_array_equal(b.numpy(), keep_b)


def test_many_distinct_layouts_keep_a_bounded_table():
    base = tl.asarray(np.arange(4 * (LAYOUT_KEYS + 40), dtype=np.float32))
    row = tl.asarray(np.ones(2, np.float32))
    for off in range(LAYOUT_KEYS + 40):  # a sliding window: a new offset each time
        v = base[off:off + 4].reshape((2, 2))
        for _ in range(HOT_CALLS + 1):
            got = v + row
        np.testing.assert_array_equal(got.numpy(), base.numpy()[off:off + 4].reshape(2, 2) + 1)
    tables = [k.layouts for k in dispatcher.get_op("add").kernels.values()
              if hasattr(k, "layouts")]
    assert tables and all(0 < len(t) <= LAYOUT_KEYS for t in tables)


def test_user_stream_and_profiler_go_the_full_way():
    a = _arr((6, 7), tl.float32)
    b = _arr((7,), tl.float32)
    want = a.numpy() + b.numpy()
    _warm(tl.add, a, b)
    s = tl.Stream(device="cpu")
    with tl.stream(s):
        x = a + b  # queued on s: the runner declines
        y = x + b
    s.synchronize()
    np.testing.assert_array_equal(y.numpy(), want + b.numpy())
    with tl.profiler.profile() as prof:
        for _ in range(3):
            out = a + b
    np.testing.assert_array_equal(out.numpy(), want)
    assert {r.key: r.count for r in prof.key_averages()}["add"] == 3


_DTYPES = [tl.float32, tl.float64, tl.int16, tl.int64, tl.float16]


@st.composite
def _broadcast_pair(draw):
    nd = draw(st.integers(2, 3))
    shape = tuple(draw(st.integers(1, 5)) for _ in range(nd))
    ones = draw(st.lists(st.booleans(), min_size=nd, max_size=nd))
    bshape = tuple(1 if o else n for o, n in zip(ones, shape))
    bshape = bshape[draw(st.integers(0, nd - 1)):]
    flips = draw(st.lists(st.sampled_from([1, 2, -1, -2]), min_size=nd, max_size=nd))
    da, db = draw(st.sampled_from(_DTYPES)), draw(st.sampled_from(_DTYPES))
    transpose = draw(st.booleans())
    return shape, bshape, flips, da, db, transpose


@settings(max_examples=40, deadline=None)
@given(_broadcast_pair())
def test_property_broadcast_strided_and_mixed_layouts_match_numpy(case):
    shape, bshape, steps, da, db, transpose = case
    big = tuple(n * abs(s) for n, s in zip(shape, steps))
    a = _arr(big, da)[tuple(slice(None, None, s) for s in steps)]
    if transpose and len(bshape) >= 2:
        b = _arr(bshape[::-1], db, 1).T
    else:
        b = _arr(bshape, db, 1)
    first = _warm(tl.add, a, b)
    got = a + b
    assert_same_tensor(got, first)
    want = a.astype(tl.float64).numpy() + b.astype(tl.float64).numpy()
    np.testing.assert_allclose(got.astype(tl.float64).numpy(), want, rtol=2e-3, atol=1e-6)


def _np_copy(t):
    return np.array(t.numpy(), copy=True)


@pytest.mark.parametrize("dtype", [tl.float32, tl.float64, tl.int32], ids=str)
def test_in_place_layouts(dtype, monkeypatch):
    # h += bias, a strided or transposed self, x *= 3 on a 2-D slice, x.neg_() transposed:
    # bit for bit NumPy's (add / multiply / negative round once, as NumPy's do)
    cases = [
        ("h += bias", lambda: (_arr((6, 7), dtype), _arr((7,), dtype, 1)),
         lambda x, y: x.__iadd__(y), lambda x, y: np.add(x, y, out=x)),
        ("transposed self", lambda: (_arr((7, 6), dtype).T, _arr((6, 1), dtype, 1)),
         lambda x, y: x.__imul__(y), lambda x, y: np.multiply(x, y, out=x)),
        ("2-D slice *= 3", lambda: (_arr((12, 14), dtype)[::2, 1::2], None),
         lambda x, y: x.__imul__(3), lambda x, y: np.multiply(x, 3, out=x)),
        ("negative_ on a 2-D slice", lambda: (_arr((10, 9), dtype)[::2, 1::3], None),
         lambda x, y: x.neg_(), lambda x, y: np.negative(x, out=x)),
    ]
    for name, make, op, ref in cases:
        x, y = make()
        want = _np_copy(x)
        yn = None if y is None else _np_copy(y)
        for i in range(HOT_CALLS + 3):
            if i == HOT_CALLS + 2:
                calls = _builds(monkeypatch)
            got = op(x, y)
            ref(want, yn)
            assert got is x
        assert not calls, name
        monkeypatch.undo()
        np.testing.assert_array_equal(x.numpy(), want, err_msg=name)


def test_in_place_with_an_overlapping_operand_goes_the_full_way():
    a = _arr((5, 5), tl.float64)
    want = _np_copy(a)
    for _ in range(HOT_CALLS + 3):
        a += a.T  # the full path copies a.T first
        want += want.T.copy()
    np.testing.assert_array_equal(a.numpy(), want)


@pytest.mark.parametrize("out_dtype", [tl.float32, tl.float64], ids=str)
def test_out_layouts(out_dtype, monkeypatch):
    a = _arr((6, 7), tl.float32)
    b = _arr((7,), tl.float32, 1)
    outs = {"C order": tl.empty((6, 7), dtype=out_dtype),
            "transposed": tl.empty((7, 6), dtype=out_dtype).T,
            "slice of a bigger one": tl.empty((8, 9), dtype=out_dtype)[1:7, 2:9]}
    want = (a.numpy() + b.numpy()).astype(out_dtype.np_dtype)
    for name, d in outs.items():
        for i in range(HOT_CALLS + 3):
            d.fill_(0)
            if i == HOT_CALLS + 2:
                calls = _builds(monkeypatch)
            got = tl.add(a, b, out=d)
            assert got is d
            np.testing.assert_array_equal(d.numpy(), want, err_msg=name)
        assert not calls, name
        monkeypatch.undo()
    big = tl.zeros((8, 9), dtype=out_dtype)
    for _ in range(HOT_CALLS + 3):
        tl.add(a, b, out=big[1:7, 2:9])
    around = big.numpy().copy()
    around[1:7, 2:9] = 0
    assert not around.any()  # nothing written outside the view


def test_where_with_broadcast_operands(monkeypatch):
    cond = tl.asarray(np.arange(7) % 2 == 0)
    x = _arr((6, 7), tl.float32)
    y = _arr((6, 1), tl.float64, 1)
    first = _warm(tl.where, cond, x, y)
    calls = _builds(monkeypatch)
    got = tl.where(cond, x, y)
    assert not calls
    assert_same_tensor(got, first)
    np.testing.assert_array_equal(got.numpy(), np.where(cond.numpy(), x.numpy(), y.numpy()))


def _counting_rows(monkeypatch):
    """A list that grows by one per call of a rows loop entry point made from now on."""
    from tensorlib.kernels.cpu import pointwise_fast
    taken = []
    real = pointwise_fast.rows_entry

    def counting(*args):
        fn = real(*args)
        return lambda *a: taken.append(1) or fn(*a)

    monkeypatch.setattr(pointwise_fast, "rows_entry", counting)
    return taken


def _nest(fn):
    """fn() through the full path's loop nest (no rows loop): one call, which does not make a
    layout hot."""
    from tensorlib.kernels.cpu import pointwise
    with mock.patch.object(pointwise, "rows_plan", lambda *a: None):
        return fn()


@pytest.mark.parametrize("dtype", [tl.float32, tl.float64, tl.int32, tl.int64, tl.uint8,
                                   tl.float16, tl.bfloat16, tl.complex64, tl.bool],
                         ids=str)
def test_two_dim_layouts_run_the_rows_loop(dtype, monkeypatch):
    """Layouts of two dims after coalescing (rows of 8+ elements: broadcast rows and columns,
    transposed and negative-stride views, a Python-scalar operand, three operands, mixed dtypes,
    in place) run the rows loop on raw addresses, with the loop nest's bits."""
    taken = _counting_rows(monkeypatch)
    # (shapes no other test here uses: a runner another test made would not count)
    a, big = _arr((5, 9), dtype), _arr((11, 19), dtype, 1)
    row, col, m = _arr((9,), dtype, 2), _arr((5, 1), dtype, 3), _arr((5, 9), tl.bool, 4)
    cases = {
        "row": lambda: a * row, "column": lambda: a * col, "transposed": lambda: a * big[:9, :5].T,
        "negative": lambda: big[::-2, ::-2][:5, :9] * a, "scalar": lambda: big[::2, 1::2] * 3,
        "where": lambda: tl.where(m, a, col)}
    # bool results over rows every operand reads contiguously (at row offsets, in reverse):
    # the rows loop's loop over row slices
    cases["equal rows"] = lambda: big[2:7, 3:12] == a[::-1]
    if dtype.kind != "c":
        cases["maximum"] = lambda: tl.maximum(a, row)
        cases["less"] = lambda: a < col
        cases["less rows"] = lambda: a[::-1] < row
        cases["less stepped rows"] = lambda: big[::2, ::2][:5, :9] < a[::-1]
    if dtype.kind == "f":
        cases["mixed"] = lambda: a + _arr((9,), tl.float64, 6)
    with np.errstate(all="ignore"):
        for name, fn in cases.items():
            want = _nest(fn)
            before = len(taken)
            assert_same_tensor(_warm(fn), want)  # full path (its rows loop), then hot
            assert len(taken) > before, name
            assert_same_tensor(fn(), want)
        if dtype is not tl.bool:
            acc = a.clone()
            want = _nest(lambda: acc.clone().add_(row))
            _warm(lambda: acc.clone().add_(row))
            before = len(taken)
            acc += row
            assert len(taken) > before
            assert_same_tensor(acc, want)


def test_which_layouts_take_the_rows_loop(monkeypatch):
    """Above ROWS_MAX elements only layouts whose rows every operand reads contiguously, below
    the parallel grain; never rows under ROWS_MIN_INNER elements, ops with block forms, or a
    compute-bound op (wide_vectors) over an operand of other steps (the nest gathers it)."""
    from tensorlib.kernels.cpu.pointwise import ROWS_MAX, ROWS_MIN_INNER
    taken = _counting_rows(monkeypatch)
    f32 = tl.float32
    x, bias, col = _arr((80, 61), f32), _arr((61,), f32, 1), _arr((80, 1), f32, 2)
    assert 80 * 61 > ROWS_MAX
    short, short_row = _arr((600, ROWS_MIN_INNER - 1), f32, 3), _arr((ROWS_MIN_INNER - 1,), f32, 4)
    big = _arr((11, 19), f32, 5)
    for fn, runs in ((lambda: x + bias, True), (lambda: x * col, False),
                     (lambda: short + short_row, False),
                     (lambda: tl.sin(big[::2, ::2]), False),  # (float32 sin: block forms)
                     (lambda: tl.exp(big[:, ::2]), False), (lambda: tl.exp(big[::3]), True),
                     (lambda: tl.exp(big[:10, :18].reshape(6, 30)[:, ::2]), False)):
        before = len(taken)
        first = _warm(fn)
        assert (len(taken) > before) == runs
        assert_same_tensor(fn(), first)


@pytest.mark.parametrize("route", ["rows", "nest", "one block", "where"])
def test_a_runner_serves_views_at_other_offsets(route, monkeypatch):
    """Runners into new results are keyed without the operands' offsets: a sliding window's
    views (``x[i] * col`` over i) share one runner, which reads each call's offsets (the rows
    loop, the flat loop over one-block layouts, and the loop nest, whose meta it copies with
    them); no iterator is built for the other offsets and each result is NumPy's."""
    f32 = tl.float32
    if route == "rows":  # (shapes no other test here uses)
        src, other = _arr((70, 41), f32, 1), _arr((23, 1), f32, 2)

        def fn(k, s, o):
            return s[k:k + 23] * o
    elif route == "nest":  # three dims after coalescing
        src, other = _arr((30, 5, 41), f32, 3), _arr((5, 1), f32, 4)

        def fn(k, s, o):
            return s[k:k + 3] * o
    elif route == "one block":  # x.T + y.T: one dense block per operand, transposed
        src, other = _arr((70, 29), f32, 5), _arr((21, 29), f32, 6)

        def fn(k, s, o):
            return s[k:k + 21].T + o.T
    else:  # three tensor operands, two of them windows of one source
        src, other = _arr((70, 37), f32, 8), _arr((19, 1), f32, 9)

        def fn(k, s, o):
            return (tl if isinstance(s, tl.Tensor) else np).where(
                s[k + 1:k + 20] > s[k:k + 19], s[k:k + 19], o)
    src_np, other_np = src.numpy(), other.numpy()
    _warm(fn, 0, src, other)
    calls = _builds(monkeypatch)
    for k in (5, 0, 2, 7, 0):
        got = fn(k, src, other)
        np.testing.assert_array_equal(got.numpy(), fn(k, src_np, other_np))
        assert got.shape == fn(k, src_np, other_np).shape
    assert not calls


@pytest.mark.parametrize("route", ["rows", "nest", "one block"])
@pytest.mark.parametrize("form", ["in place", "out="])
def test_runners_write_into_views_at_other_offsets(route, form, monkeypatch):
    """In place and out= keys leave offsets out too (they say which operands are the written
    tensor itself): a runner made for one view writes into views of its layout at other
    offsets (``frames[i] -= mean`` over i), reading operands and output at theirs; no iterator
    is built for them, each result is NumPy's and nothing outside the view is written."""
    f32 = tl.float32
    if route == "rows":
        shape, other, view = (70, 41), _arr((23, 1), f32, 2), lambda t, k: t[k:k + 23]
    elif route == "nest":
        shape, other, view = (30, 5, 41), _arr((5, 1), f32, 4), lambda t, k: t[k:k + 3]
    else:
        shape, other, view = (70, 29), _arr((29, 21), f32, 6), lambda t, k: t[k:k + 21].T
    other_np = other.numpy()
    src = _arr(shape, f32, 7)

    def call(k, acc, dst):
        if form == "in place":
            v = view(acc, k)
            v *= other
        else:
            tl.multiply(view(src, k), other, out=view(dst, k))

    acc, dst = src.clone(), tl.zeros(shape, dtype=f32)
    for _ in range(HOT_CALLS + 1):
        call(0, acc.clone(), dst)
    calls = _builds(monkeypatch)
    for k in (5, 0, 2, 7):
        acc, dst = src.clone(), tl.zeros(shape, dtype=f32)
        want_acc, want_dst = src.numpy().copy(), np.zeros(shape, np.float32)
        call(k, acc, dst)
        if form == "in place":
            v = view(want_acc, k)
            v *= other_np
        else:
            np.multiply(view(src.numpy(), k), other_np, out=view(want_dst, k))
        np.testing.assert_array_equal(acc.numpy(), want_acc)
        np.testing.assert_array_equal(dst.numpy(), want_dst)
    assert not calls


def test_no_runner_from_a_call_that_read_a_copy():
    """out= into a tensor a strided operand partly overlaps: the full path reads that operand
    from a dense copy, so a runner made from such a call would hold the copy's layout; later
    calls of the key (the same layouts, no overlap) must get NumPy's values."""
    rng = np.random.default_rng(12)
    base = tl.asarray(rng.random((10, 10)).astype(np.float32))
    b = tl.asarray(rng.random((5, 10)).astype(np.float32))
    for _ in range(HOT_CALLS + 2):
        x = base.clone()
        tl.add(x.T[0:5], b, out=x[1:6])  # (x.T[0:5] partly overlaps x[1:6])
        want = base.numpy().copy()
        want[1:6] = base.numpy().T[0:5] + b.numpy()
        np.testing.assert_array_equal(x.numpy(), want)
    for _ in range(HOT_CALLS + 2):
        src, dst = base.clone(), tl.zeros((10, 10))
        tl.add(src.T[0:5], b, out=dst[1:6])
        np.testing.assert_array_equal(dst.numpy()[1:6], base.numpy().T[0:5] + b.numpy())


def test_one_dim_strided_layouts_run_the_rows_loop_as_one_row(monkeypatch):
    """Views that coalesce to one dim of steps other than 1 (``x2[:, ::2] * 2.0`` of a
    contiguous x2) run the rows loop as one row, in the full path and from their runner, with
    the nest's bits; one dense block per operand (``x.T + y.T``) keeps the flat loop."""
    f32 = tl.float32
    taken = _counting_rows(monkeypatch)
    x2, y2 = _arr((13, 42), f32, 1), _arr((13, 42), f32, 2)  # (shapes no other test uses)
    for fn in (lambda: x2[:, ::2] * 2.0, lambda: x2[:, ::2] + y2[:, 1::2],
               lambda: tl.maximum(x2[:, 1::2], y2[:, ::2]), lambda: x2[:, ::3] < 0.5):
        want = _nest(fn)
        before = len(taken)
        assert_same_tensor(_warm(fn), want)
        assert len(taken) > before
        assert_same_tensor(fn(), want)
    a, b = _arr((42, 13), f32, 3), _arr((42, 13), f32, 4)
    before = len(taken)
    np.testing.assert_array_equal(_warm(lambda: a.T + b.T).numpy(), a.numpy().T + b.numpy().T)
    assert len(taken) == before


_CASTS = [(tl.float32, tl.float64), (tl.float64, tl.float32), (tl.float32, tl.int32),
          (tl.int64, tl.float32), (tl.float32, tl.bool), (tl.bool, tl.float32),
          (tl.float16, tl.float64), (tl.int32, tl.int8), (tl.float32, tl.complex64)]


@pytest.mark.parametrize("src_dtype,dst_dtype", _CASTS, ids=str)
def test_casts_from_strided_layouts_skip_the_iterator(src_dtype, dst_dtype, monkeypatch):
    """A cast from a strided, broadcast or reversed source (``x[:, ::2].astype(float64)``,
    ``out.copy_(row)``) is learned per layout as the pointwise ops are: once hot, no iterator
    is built, and the result is NumPy's cast, bit for bit (int8 from int32 wraps as NumPy's)."""
    def cast_np(v):
        with np.errstate(all="ignore"):
            return v.astype(dst_dtype.np_dtype)

    base = _arr((9, 16), src_dtype, 3)
    views = {**{name: a for name, (a, b) in _views(src_dtype).items()},
             "one-dim steps": base[:, ::2], "reversed": base.reshape(-1)[::-3]}
    for name, v in views.items():
        first = _warm(lambda: v.astype(dst_dtype))
        calls = _builds(monkeypatch)
        got = v.astype(dst_dtype)
        assert not calls, f"{name}: the full path ran"
        assert_same_tensor(got, first)
        want = cast_np(v.numpy())
        assert got.numpy().dtype == want.dtype
        np.testing.assert_array_equal(tensor_bits(got), tensor_bits(tl.asarray(want)))
        monkeypatch.undo()
    # a broadcast source into an existing tensor
    row, dst = _arr((16,), src_dtype, 4), tl.zeros((9, 16), dtype=dst_dtype)
    _warm(lambda: dst.copy_(row))
    calls = _builds(monkeypatch)
    dst.fill_(0)
    dst.copy_(row)
    assert not calls
    want = np.broadcast_to(row.numpy(), (9, 16))
    np.testing.assert_array_equal(dst.numpy(), cast_np(want))


def test_cast_runners_serve_windows_and_out_views_at_other_offsets(monkeypatch):
    """A cast runner reads each call's offsets, the source's and the destination's: a sliding
    window cast into views of a bigger tensor writes NumPy's values there and nothing else."""
    src = _arr((40, 30), tl.float32, 5)
    dst = tl.zeros((40, 15), dtype=tl.float64)
    _warm(lambda: dst[0:7].copy_(src[0:7, ::2]))
    calls = _builds(monkeypatch)
    for k in (5, 0, 3, 20):
        dst.fill_(0)
        dst[k:k + 7].copy_(src[k + 1:k + 8, ::2])
        want = np.zeros((40, 15))
        want[k:k + 7] = src.numpy()[k + 1:k + 8, ::2]
        np.testing.assert_array_equal(dst.numpy(), want)
        np.testing.assert_array_equal(src[k:k + 7, 1::2].astype(tl.float64).numpy(),
                                      src.numpy()[k:k + 7, 1::2].astype(np.float64))
    assert not calls


def test_a_cast_between_views_of_one_storage_goes_the_full_way():
    """A source in the destination's own memory (another dtype's view of it) is no runner's:
    the full path reads it from a copy first, so the cast sees the values before the write."""
    from tensorlib.tensor import Tensor
    st = tl.zeros(64, dtype=tl.float64)._storage
    src = Tensor._make(st, (8, 8), (8, 1), 0, tl.float32)  # float32 view of the first half
    dst = Tensor._make(st, (8, 4), (4, 1), 4, tl.float64)  # its row 0 over src's row 1
    other_src = _arr((8, 8), tl.float32, 6)
    other_dst = tl.zeros((8, 4), dtype=tl.float64)
    for _ in range(HOT_CALLS + 2):  # the layout hot without overlap
        other_dst.copy_(other_src[:, ::2])
    np.testing.assert_array_equal(other_dst.numpy(), other_src.numpy()[:, ::2])
    src.copy_(other_src)  # fills the float32 view (and so most of dst's bytes)
    want = src.numpy()[:, ::2].astype(np.float64)
    dst.copy_(src[:, ::2])
    np.testing.assert_array_equal(dst.numpy(), want)


@pytest.mark.parametrize("dtype", [tl.float32, tl.float64], ids=str)
def test_one_dim_strided_layouts_of_nest_ops_get_a_runner(dtype, monkeypatch):
    """Views coalescing to one dim of other steps under ops the rows loop leaves to the loop
    nest (block forms: log, sin; compute-bound: exp, whose nest gathers the operand and runs
    vectorized) are served by a runner over the nest: no iterator once hot (the full path ran
    every call), the full path's bits."""
    x2 = _arr((14, 38), dtype, 3)  # (shapes no other test uses)
    pos = tl.abs(x2) + 0.5
    cases = [(tl.exp, np.exp, (x2[:, ::2],)), (tl.sin, np.sin, (x2[:, 1::2],)),
             (tl.log, np.log, (pos[:, ::2],)), (tl.atan2, np.arctan2, (x2[:, ::2], pos[:, ::2]))]
    for fn, np_fn, operands in cases:
        want = fn(*operands)
        _warm(fn, *operands)
        calls = _builds(monkeypatch)
        got = fn(*operands)
        assert not calls, fn.__name__
        monkeypatch.undo()
        assert_same_tensor(got, want)
        np.testing.assert_allclose(got.numpy(), np_fn(*[t.numpy() for t in operands]),
                                   rtol=2e-6 if dtype is tl.float32 else 1e-14)


@settings(max_examples=60, deadline=None)
@given(op=st.sampled_from(["exp", "sqrt", "sin", "log", "tanh", "reciprocal"]),
       dtype=st.sampled_from([tl.float32, tl.float64]), n=st.integers(1, 2600),
       step=st.sampled_from([-3, -2, -1, 2, 3, 7]), start=st.integers(0, 5),
       shape=st.sampled_from(["1-D", "rows", "out"]))
def test_one_dim_views_of_gathering_ops_give_the_dense_bits(op, dtype, n, step, start, shape):
    """One-dim layouts of ops that gather (a 1-D view, rows of a 2-D view coalescing to one
    strided dim, into a dense out= view at an offset), whose full path and runners run the
    gathering strided loop (blocks of 1024 gathered from the first element): the same bits as
    the op over a contiguous copy, at every length, step, offset; nan, inf, -0.0, negatives."""
    fn = getattr(tl, op)
    rng = np.random.default_rng(n * 31 + start)
    span = start + n * abs(step) + 1
    vals = rng.uniform(-4, 40, span)
    vals[rng.integers(0, span, 4)] = [np.nan, np.inf, -0.0, -np.inf]
    base = tl.asarray(vals.astype(dtype.np_dtype))
    view = base[start::step] if step > 0 else base[start:][::-1][::-step]
    view = view[:n]
    want = fn(view.contiguous())
    with np.errstate(all="ignore"):
        if shape == "rows" and n % 2 == 0 and step > 0:
            # (n // 2 rows of 2 elements of step `step`: coalesce to one dim)
            grid = base[start:start + n * step].reshape((n // 2, 2 * step))[:, ::step]
            got = fn(grid).reshape(-1)
        elif shape == "out":
            buf = tl.zeros(n + 3, dtype=dtype)
            got = fn(view, out=buf[2:2 + n])
            assert not buf.numpy()[:2].any() and not buf.numpy()[2 + n:].any()
        else:
            got = fn(view)
    np.testing.assert_array_equal(tensor_bits(got), tensor_bits(want))


@settings(max_examples=60, deadline=None)
@given(op=st.sampled_from(["abs", "negative", "floor", "scale", "shift", "isnan"]),
       dtype=st.sampled_from([tl.float32, tl.float64, tl.int32, tl.float16]),
       n=st.integers(1, 3000), step=st.sampled_from([-3, -2, -1, 2, 3]),
       start=st.integers(0, 5), rows=st.sampled_from([None, 2, 3]))
def test_one_operand_strided_loops_give_the_dense_bits(op, dtype, n, step, start, rows):
    """Views of one operand under cheap ops, 1-D (the strided runner's loop) or 2-D (rows of
    the rows loop, every other row: a layout that does not coalesce), whose element steps 2
    and -1 are spelled as constants: the same bits as the op over a contiguous copy, once the
    runners serve too (HOT_CALLS calls of a key)."""
    if op == "floor" and dtype.kind == "i":
        return
    fn = {"abs": tl.abs, "negative": tl.negative, "floor": tl.floor, "scale": lambda t: t * 3,
          "shift": lambda t: t + 1, "isnan": tl.isnan}[op]
    rng = np.random.default_rng(n * 7 + start)
    span = start + n * abs(step) + 1
    vals = rng.uniform(-50, 50, span)
    if dtype.kind == "f":
        vals[rng.integers(0, span, 3)] = [np.nan, -np.inf, -0.0]
    base = tl.asarray(vals.astype(np.float32)).astype(dtype)
    view = (base[start::step] if step > 0 else base[start:][::step])[:n]
    if rows is not None and n >= 2 * rows:  # (the view's 2 * rows rows of n // (2 * rows))
        view = view[:n - n % (2 * rows)].reshape((2 * rows, -1))[::2]
    want = fn(view.contiguous())
    for _ in range(HOT_CALLS + 1):  # (the full path, then the runner)
        got = fn(view)
        np.testing.assert_array_equal(tensor_bits(got), tensor_bits(want))
