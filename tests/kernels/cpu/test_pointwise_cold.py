"""First calls of pointwise ops over strided / broadcast operands while their loop nest is not
compiled (kernels/cpu/pointwise_cold.py: dense copies and the flat loop): bit for bit the loop
nest's results (dtype, shape, strides) for every layout kind and dtype family, in place and
into strided out= views; the route is taken (no loop nest launched) and declined where it
must be (block_fast forms, CPU streams). Tests compile kernels at once, so the route is forced
here by reporting the nest as not ready (``nest_not_ready``)."""
from __future__ import annotations

import contextlib
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, strategies as st

import tensorlib as tl
from tensorlib.kernels.cpu import cold_route, pointwise, pointwise_cold, pointwise_fast
from helpers import assert_same_tensor, pointwise_layouts

DTYPES = ["float32", "float64", "int64", "int8", "bool", "float16", "bfloat16", "complex64"]


def _arr(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return tl.asarray(rng.integers(0, 2, shape).astype(bool))
    if dtype.startswith("int"):
        return tl.asarray(rng.integers(-50, 50, shape).astype(dtype))
    vals = rng.standard_normal(shape) * 3
    if dtype == "complex64":
        return tl.asarray((vals + 1j * rng.standard_normal(shape)).astype(np.complex64))
    if dtype in ("float16", "bfloat16"):
        return tl.asarray(vals.astype(np.float32)).astype(getattr(tl, dtype))
    t = tl.asarray(vals.astype(dtype))
    t[0] = float("nan") if t.ndim == 1 else t[0]
    return t


def _layouts(dtype):
    return pointwise_layouts(lambda shape, seed: _arr(shape, dtype, seed))


@contextlib.contextmanager
def nest_not_ready():
    """Inside it every loop nest and rows loop is reported not ready (to the full path and its
    cold route and to the hot layout runners, which then hand the call back), and launching a
    nest fails."""
    def no_nest(*args, **kwargs):
        raise AssertionError("a loop nest was launched")

    def not_ready(*args):
        return False
    with mock.patch.object(pointwise_cold, "ready_every", not_ready), \
            mock.patch.object(pointwise, "ready_every", not_ready), \
            mock.patch.object(pointwise_fast, "ready_every", not_ready), \
            mock.patch.object(cold_route, "READY", set()), \
            mock.patch.object(pointwise, "_launch_pair", no_nest):
        yield


def _ops(dtype):
    ops = {"add": lambda x, y: x + y, "multiply": lambda x, y: x * y,
           "where": lambda x, y: tl.where(x == y, x, y), "scalar": lambda x, y: x * 2 + y}
    if dtype != "complex64":
        ops.update(maximum=tl.maximum, less=lambda x, y: x < y)
    if dtype != "bool":
        ops["subtract alpha"] = lambda x, y: tl.subtract(x, y, alpha=3)
    if dtype not in ("bool", "complex64"):
        ops["divide"] = lambda x, y: x / y  # (integers: a float result)
    return ops


@pytest.mark.parametrize("dtype", DTYPES)
def test_cold_calls_give_the_loop_nests_bits(dtype):
    for name, (x, y) in _layouts(dtype).items():
        for op_name, op in _ops(dtype).items():
            want = op(x, y)  # the loop nest (compiled at once in tests)
            with nest_not_ready():
                got = op(x, y)
            assert_same_tensor(got, want)


@pytest.mark.parametrize("dtype", ["float32", "int64", "float16", "complex64"])
def test_cold_calls_in_place_and_into_strided_out(dtype):
    base = _arr((12, 15), dtype, 9)
    col = _arr((6, 1), dtype, 10)
    for view in (lambda t: t[::2, 1::2], lambda t: t.T[::-3, ::2], lambda t: t[2:8, :7]):
        want_t, got_t = base.clone(), base.clone()
        w, g = view(want_t), view(got_t)
        other = col if w.shape[0] == 6 else _arr((w.shape[0], 1), dtype, 11)
        w.add_(other)
        tl.multiply(w, other, out=w)
        with nest_not_ready():
            g.add_(other)
            tl.multiply(g, other, out=g)
        assert_same_tensor(got_t, want_t)  # (and nothing outside the view was written)
        x = view(base)
        want = tl.subtract(x, x.T.T * 2)  # the input itself, read twice
        with nest_not_ready():
            got = tl.subtract(x, x.T.T * 2)
        assert_same_tensor(got, want)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", ["sin", "log", "pow"])
def test_cold_calls_of_block_form_ops(op, dtype, monkeypatch):
    """Ops with block_fast forms take the cold route over one-dim layouts (1-D views, a 2-D
    view coalescing to one strided dim) and, a flat loop call per innermost row, over more
    dims (strided, transposed, 3-D, rows longer than a tile): the blocks are the nest's (from
    each row's start; TILE is a multiple of BLOCK), so each block picks the same form,
    including blocks whose guard fails and blocks past a row's first tile: the nest's bits."""
    served = []
    real = pointwise_cold.run_dense_copies
    monkeypatch.setattr(pointwise, "run_dense_copies",
                        lambda *args: served.append(real(*args)) or served[-1])
    n = 50_000  # (three tiles and a part)
    assert 3 * pointwise.TILE < n < 4 * pointwise.TILE
    rng = np.random.default_rng(30)
    vals = rng.uniform(0.5, 40, 2 * n)
    vals[2 * 1500] = 3e9 if op == "sin" else -1.0  # a block the guard fails for (2nd block)
    vals[2 * (pointwise.TILE + 7)] = float("nan")  # and one in the second tile
    x = tl.asarray(vals.astype(dtype))
    e = tl.asarray(rng.choice([0.5, 1.5, 2.5], 2 * n).astype(dtype))  # (pow's exponents)
    fn = {"sin": lambda t, u: tl.sin(t), "log": lambda t, u: tl.log(t), "pow": tl.pow}[op]
    # (the grid's rows of 50: [:, ::2] coalesces to one dim of step 2)
    for view in (lambda t: t[::2], lambda t: t[::-3], lambda t: t.reshape((-1, 50))[:, ::2],
                 lambda t: t.reshape((-1, 50))[::2, ::3], lambda t: t.reshape((250, 400)).T[::2],
                 lambda t: t.reshape((10, 50, 200))[::3, ::-2, 1::2],
                 lambda t: t.reshape((2, -1))[:, 1:-1:2]):  # (rows of 24,999: 2 tiles)
        with np.errstate(all="ignore"):
            want = fn(view(x), view(e))  # the loop nest (compiled at once in tests)
            served.clear()
            with nest_not_ready():
                got = fn(view(x), view(e))
        assert served == [True]
        assert_same_tensor(got, want)


def test_route_declines_many_rows_of_block_forms_streams_and_big_calls(monkeypatch):
    calls = []
    real = pointwise_cold.run_dense_copies

    def spy(*args):
        served = real(*args)
        calls.append(served)
        return served
    monkeypatch.setattr(pointwise, "run_dense_copies", spy)
    monkeypatch.setattr(pointwise_cold, "ready_every", lambda *args: False)
    # (a layout made hot by an earlier test would otherwise run the nest from its runner)
    monkeypatch.setattr(pointwise_fast, "ready_every", lambda *args: False)
    monkeypatch.setattr(cold_route, "READY", set())  # (nests an earlier test found ready)
    x = _arr((6, 7), "float32", 12)
    col = _arr((6, 1), "float32", 13)
    np.testing.assert_allclose(tl.sin(x[::2, ::3]).numpy(), np.sin(x.numpy()[::2, ::3]), rtol=1e-6)
    assert calls == [True]  # sin has block_fast forms: a flat loop call per row
    tall = _arr((pointwise_cold.COLD_ROWS_MAX + 1, 2), "float32", 14)
    np.testing.assert_allclose(tl.sin(tall[:, ::-1]).numpy(), np.sin(tall.numpy()[:, ::-1]),
                               rtol=1e-6)
    assert calls[-1] is False  # more rows than that: its loop nest ran
    monkeypatch.setattr(pointwise_cold, "COLD_MAX", 10)
    np.testing.assert_array_equal((x - col).numpy(), x.numpy() - col.numpy())
    assert calls[-1] is False
    monkeypatch.setattr(pointwise_cold, "COLD_MAX", 1 << 24)
    np.testing.assert_array_equal((x - col).numpy(), x.numpy() - col.numpy())
    assert calls[-1] is True
    # a user CPU stream current: its launch path (queued in stream order)
    from helpers import gated
    s = tl.Stream(device="cpu")
    with tl.stream(s):
        release = gated(s)
        y = x - col
    assert calls[-1] is False
    release.set()
    s.synchronize()
    np.testing.assert_array_equal(y.numpy(), x.numpy() - col.numpy())
    # from the default stream, after work queued on the operands: waited for
    z = tl.zeros((6, 7))
    with tl.stream(s):
        release = gated(s)
        z.add_(x)
    import threading
    threading.Timer(0.2, release.set).start()
    got = z - col
    assert calls[-1] is True
    np.testing.assert_array_equal(got.numpy(), x.numpy() - col.numpy())


def test_hot_layouts_keep_the_cold_route_until_the_nest_is_ready(monkeypatch):
    """The layout runners (ops/pointwise.py: a layout called HOT_CALLS times skips the
    TensorIterator) run the loop nest (or the rows loop) directly: while it is not ready they
    hand the call back to the full path, whose cold route serves it (a runner compiling the
    nest in the foreground stalled a loop of calls for ~0.5 s)."""
    from tensorlib.ops.pointwise import HOT_CALLS
    served = []
    real = pointwise_cold.run_dense_copies
    monkeypatch.setattr(pointwise, "run_dense_copies",
                        lambda *args: served.append(real(*args)) or served[-1])
    for module in (pointwise_cold, pointwise, pointwise_fast):
        monkeypatch.setattr(module, "ready_every", lambda *args: False)
    monkeypatch.setattr(cold_route, "READY", set())  # (nests an earlier test found ready)
    calls = HOT_CALLS + 10
    # a small two-dim layout (the rows loop's) and one of three dims (the nest's)
    for x, col in ((_arr((40, 30), "float32", 14), _arr((40, 1), "float32", 15)),
                   (_arr((3, 40, 30), "float32", 16), _arr((40, 1), "float32", 17))):
        served.clear()
        for _ in range(calls):
            np.testing.assert_array_equal((x - col).numpy(), x.numpy() - col.numpy())
        assert served == [True] * calls


def test_small_two_dim_layouts_wait_for_the_rows_loop_not_the_nest(monkeypatch):
    """A small two-dim layout (pointwise.rows_plan's) in the full path: while its rows loop is
    not ready the cold route serves it and only the rows loop is asked for (its loop nest is
    never compiled); once ready, the rows loop runs, with the nest's bits."""
    # (shapes no other test uses: no layout runner of another test serves these calls)
    x, col = _arr((19, 43), "float32", 18), _arr((19, 1), "float32", 19)
    with mock.patch.object(pointwise, "rows_plan", lambda *a: None):
        want = tl.multiply(x, col)  # the loop nest
    asked = []
    monkeypatch.setattr(cold_route, "READY", set())
    monkeypatch.setattr(pointwise, "ready_every", lambda key, *a: asked.append(key))
    monkeypatch.setattr(pointwise_cold, "ready_every", lambda key, *a: asked.append(key))
    monkeypatch.setattr(pointwise, "_launch_pair", mock.Mock(side_effect=AssertionError))
    assert_same_tensor(tl.multiply(x, col), want)  # the cold route
    assert len(asked) == 1 and hasattr(asked[0], "rows") and not hasattr(asked[0], "serial")
    monkeypatch.setattr(pointwise, "ready_every", cold_route.ready_every)
    taken = []
    real = pointwise.rows_entry
    monkeypatch.setattr(pointwise, "rows_entry",
                        lambda *a: (lambda *args: taken.append(1) or real(*a)(*args)))
    assert_same_tensor(tl.multiply(x, col), want)
    assert taken == [1]
    # into a dense out= view at an offset, and in place (read through the output)
    buf = tl.zeros((21 * 43,))
    o = buf[43:20 * 43].reshape((19, 43))
    tl.multiply(x, col, out=o)
    assert taken == [1, 1]
    assert_same_tensor(o.clone(), want)
    assert not buf.numpy()[:43].any() and not buf.numpy()[20 * 43:].any()
    x_in = x.clone()
    x_in *= col
    assert taken == [1, 1, 1]
    assert_same_tensor(x_in, want)


@st.composite
def _broadcast_pair(draw):
    """Two operands of 1-3 dims that broadcast (size-1 dims, missing leading dims), each C
    order, transposed, reversed or stepped."""
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 6), min_size=ndim, max_size=ndim)))
    dtype = draw(st.sampled_from(["float32", "int64", "float16", "bool"]))

    def operand(seed):
        shp = [1 if draw(st.booleans()) else n for n in shape]
        shp = shp[draw(st.integers(0, len(shp) - 1)):]
        layout = draw(st.sampled_from(["c", "transposed", "reversed", "stepped"]))
        if layout == "stepped":
            t = _arr(tuple(n * 2 for n in shp), dtype, seed)[tuple(slice(None, None, 2)
                                                                   for _ in shp)]
        else:
            t = _arr(tuple(shp), dtype, seed)
            if layout == "transposed":
                t = t.T.contiguous().T
            elif layout == "reversed":
                t = t[tuple(slice(None, None, -1) for _ in shp)]
        return t
    return operand(20), operand(21)


@given(pair=_broadcast_pair(), op=st.sampled_from(["add", "multiply", "maximum", "less"]))
def test_cold_calls_match_the_nest_on_random_layouts(pair, op):
    x, y = pair
    fn = {"add": lambda a, b: a + b, "multiply": lambda a, b: a * b, "maximum": tl.maximum,
          "less": lambda a, b: a < b}[op]
    want = fn(x, y)
    with nest_not_ready():
        got = fn(x, y)
    assert_same_tensor(got, want)


_STRIDED_LOOP_PENDING = r"""
import numpy as np
import tensorlib as tl
from tensorlib.iterator import TensorIterator
from tensorlib.kernels.cpu import pointwise, pointwise_cold, pointwise_fast as pf
from tensorlib.ops.pointwise import HOT_CALLS

asked, made, dense, builds = [], [], [], []
strided_loop_ready = [False]


def ready(key, n, make):
    asked.append(make()[0])  # (the strided loop's dispatcher and its sample arguments)
    return strided_loop_ready[0]


# the strided loop compiling in the background: the full path's cold route serves first calls
pointwise.ready_every = pointwise_cold.ready_every = pf.ready_every = ready
real_entry, real_dense = pf.strided_entry, pf._via_dense_copies
pf.strided_entry = lambda *args: made.append(args[0].name) or real_entry(*args)
pf._via_dense_copies = lambda *args: dense.append(1) or real_dense(*args)
real_build = TensorIterator.build.__func__
TensorIterator.build = classmethod(lambda cls, *a, **k:
                                   builds.append(1) or real_build(cls, *a, **k))
xn = np.linspace(0.1, 3, 4001).astype(np.float32)
x = tl.asarray(xn)
views = (lambda t: t[::2], lambda t: t[::-3], lambda t: t[1::4])
gather = {"exp": tl.exp, "sqrt": tl.sqrt, "sin": tl.sin}  # ops whose strided loop gathers
ops = {**gather, "multiply": lambda t: t * 2.5, "add": lambda t: tl.add(t, t)}
got = {}
for name, op in ops.items():
    for k, view in enumerate(views):
        got[name, k] = [op(view(x)) for _ in range(HOT_CALLS + 1)]
        before, dense_before = len(builds), len(dense)
        got[name, k] += [op(view(x)) for _ in range(3)]
        assert len(builds) == before, (name, k)  # hot: the runner served, not the full path
        # (the flat loop over dense copies, which the full path's cold route built)
        assert (len(dense) > dense_before) == (name in gather), (name, k)
assert sorted(set(made)) == ["add", "multiply"], made  # no gathering loop in the foreground
assert asked and all(hasattr(d, "overloads") for d in asked)
strided_loop_ready[0] = True  # compiled: the runners take it
for (name, k), results in got.items():
    results.append(ops[name](views[k](x)))
assert sorted(set(made)) == sorted(ops), made
for (name, k), results in got.items():
    want = ops[name](tl.asarray(views[k](xn).copy())).numpy()  # the dense path's bits
    for r in results:
        assert r.is_contiguous()
        np.testing.assert_array_equal(r.numpy().view(np.uint8), want.view(np.uint8))
"""


def test_strided_runner_compiles_its_loop_in_the_background():
    """A 1-D strided view's runner (pointwise_fast.strided_runner) of an op that gathers asks
    cold_route for its strided loop and, while that compiles, serves calls without compiling
    anything (dense copies and the flat loop the full path's cold route built), with the
    dense path's bits; once the loop is ready it runs it. A cheap op's strided loop compiles
    at once. In a fresh process: the runners of this one are made already."""
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-c", _STRIDED_LOOP_PENDING], capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]


_ONE_DIM_GATHERS = r"""
import numpy as np
import tensorlib as tl
from tensorlib.kernels.cpu import pointwise, pointwise_fast as pf
from tensorlib.ops.pointwise import HOT_CALLS
from tensorlib.runtime.cpu import cores

cores.DEFER_PARALLEL_COMPILE = False  # (compiles at once: the loops each route takes)
nests, loops = [], []
real_pair, real_full, real_fast = (pointwise._launch_pair, pointwise.strided_entry,
                                   pf.strided_entry)
pointwise._launch_pair = lambda *args: nests.append(1) or real_pair(*args)
pointwise.strided_entry = lambda *args: loops.append("full") or real_full(*args)
pf.strided_entry = lambda *args: loops.append("runner") or real_fast(*args)
xn = np.linspace(0.1, 3, 8000).astype(np.float32)
x = tl.asarray(xn)
grid = x.reshape((80, 100))
cases = {"exp x[::2]": (lambda: tl.exp(x[::2]), lambda: xn[::2]),
         "sqrt x[::-3]": (lambda: tl.sqrt(x[::-3]), lambda: xn[::-3]),
         "sin grid[:, ::2]": (lambda: tl.sin(grid[:, ::2]), lambda: xn.reshape(80, 100)[:, ::2]),
         "exp into": (lambda: tl.exp(x[1::2], out=tl.empty(4000)), lambda: xn[1::2])}
ops = {"exp x[::2]": tl.exp, "sqrt x[::-3]": tl.sqrt, "sin grid[:, ::2]": tl.sin,
       "exp into": tl.exp}
for name, (call, src) in cases.items():
    loops.clear()
    results = [call() for _ in range(HOT_CALLS + 3)]
    assert loops[0] == "full" and "runner" in loops, (name, loops)  # full path, then runner
    want = ops[name](tl.asarray(np.ascontiguousarray(src()))).numpy()  # the dense path
    for r in results:
        np.testing.assert_array_equal(r.numpy().view(np.uint8), want.view(np.uint8))
assert not nests  # no loop nest compiled or launched for these layouts
"""


def test_one_dim_layouts_of_ops_that_gather_run_the_strided_loop():
    """A one-dim layout (a 1-D view, a 2-D view coalescing to one strided dim, into a dense
    out=) of an op that gathers, below the grain: the full path and then the runner (strided
    or layout runner) run the same gathering strided loop, never the loop nest (one kernel to
    compile), with the dense path's bits. In a fresh process (runners of this one are made)."""
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-c", _ONE_DIM_GATHERS], capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
