"""The dense fast path of pointwise ops (ops/pointwise.py, kernels/cpu/pointwise.dense_runner).

Once a combination is hot, its results must be bit-identical to the full path's (the out=
overload, which builds a TensorIterator until its own combination is hot: see the out= tests
below), and it must step aside for everything it does not handle: strided, broadcast or mixed-dtype operands, Python scalar subclasses, CPU
streams and (above the parallel grain) the profiler. Above the grain it runs the parallel loop
or, while that is not ready or one thread would run it, the flat loop.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlib as tl
from tensorlib.iterator import TensorIterator
from tensorlib.dispatch.registration import POINTWISE
from tensorlib.kernels.cpu.pointwise import GRAIN
from tensorlib.ops.pointwise import HOT_CALLS

# One op per shape of generated loop (unary / binary, same / bool / real output, int -> float,
# a Scalar argument, integer-only, bool-only): every op's `flat` loop comes from the same
# generator as these, and each combination costs a compile on a cold cache.
OPS = ["add", "subtract", "divide", "floor_divide", "remainder", "pow", "atan2", "exp",
       "sqrt", "abs", "sign", "isnan", "equal", "less", "bitwise_left_shift", "bitwise_xor",
       "logical_and", "logaddexp", "maximum", "hypot"]

_VALUES = {
    "f": ([np.nan, -np.inf, -0.0, 0.5, 3.0, 1e30, -2.5, 0.0],
          [1.0, 2.0, np.inf, -0.0, -1.5, 1e-30, 7.0, np.nan]),
    "i": ([-3, 0, 7, 2, -128, 5, 1, 100], [2, 3, -1, 1, 4, 6, 5, 3]),
    "b": ([True, False, True, False, True, True, False, False],
          [True, True, False, False, True, False, True, False]),
}


def _dtype_for(info):
    kinds = "f" if info.int_to_float else info.kinds
    for kind, dtype in (("f", tl.float32), ("i", tl.int32), ("b", tl.bool)):
        if kind in kinds:
            return kind, dtype
    pytest.skip(f"{info.name}: no real dtype")


def _warm(fn, *args):
    for _ in range(HOT_CALLS + 1):
        fn(*args)


def _bits(t):
    arr = t.numpy()
    return arr.view(np.uint8) if arr.dtype != np.bool_ else arr


class _NoIterator:
    """Makes TensorIterator.build raise: a call that still returns took the fast path."""

    def __init__(self, monkeypatch):
        def build(*args, **kwargs):
            raise AssertionError("TensorIterator.build was called")
        monkeypatch.setattr(TensorIterator, "build", classmethod(build))


@pytest.mark.parametrize("name", OPS)
def test_hot_op_matches_the_full_path_bit_for_bit(name, monkeypatch):
    info = POINTWISE[name]
    kind, dtype = _dtype_for(info)
    fn = getattr(tl, name)
    xs = [tl.asarray(np.array(v, dtype=dtype.np_dtype)) for v in _VALUES[kind]]
    args = xs[:len(info.tensor_args)]
    with np.errstate(all="ignore"):
        _warm(fn, *args)
        expected = fn(*args)
        ref = tl.empty(expected.shape, dtype=expected.dtype)
        fn(*args, out=ref)
        _NoIterator(monkeypatch)
        got = fn(*args)
        monkeypatch.undo()
    assert got.dtype == ref.dtype and got.shape == ref.shape and got.is_contiguous()
    assert np.array_equal(_bits(got), _bits(ref))


@pytest.mark.parametrize("dtype", [tl.float16, tl.bfloat16, tl.float64, tl.int8, tl.uint64,
                                   tl.complex64])
def test_every_dtype_and_views_with_offsets(dtype, monkeypatch):
    base = tl.arange(12).astype(dtype)
    a, b = base[1:6], base[6:11]  # contiguous views at storage offsets 1 and 6
    _warm(tl.multiply, a, b)
    ref = tl.empty((5,), dtype=dtype)
    tl.multiply(a, b, out=ref)
    _NoIterator(monkeypatch)
    got = tl.multiply(a, b)
    monkeypatch.undo()
    assert got.dtype == dtype
    wide = tl.complex128 if dtype.kind == "c" else tl.float64  # exact for these values
    assert got.astype(wide).tolist() == ref.astype(wide).tolist()


def test_zero_dim_and_result_is_a_new_tensor(monkeypatch):
    a, b = tl.asarray(np.float32(2.0)), tl.asarray(np.float32(5.0))
    _warm(tl.subtract, a, b)
    _NoIterator(monkeypatch)
    c = tl.subtract(a, b)
    monkeypatch.undo()
    assert c.shape == () and c.item() == -3.0
    c += 10  # the result owns its memory
    assert c.item() == 7.0 and a.item() == 2.0 and b.item() == 5.0


def test_scalar_arguments_are_converted_and_checked_when_hot(monkeypatch):
    a = tl.asarray(np.array([1, 2, 3], np.int32))
    _warm(tl.add, a, a)
    _NoIterator(monkeypatch)
    r3, r1 = tl.add(a, a, alpha=3), tl.add(a, a)  # r1: the cached default, after another
    monkeypatch.undo()
    assert r3.tolist() == [4, 8, 12] and r1.tolist() == [2, 4, 6]
    with pytest.raises(TypeError, match="alpha"):
        tl.add(a, a, alpha=1.5)
    with pytest.raises(OverflowError, match="out of bounds"):
        tl.add(a, a, alpha=2 ** 40)


@pytest.mark.parametrize("case", ["strided", "broadcast", "mixed_dtype", "scalar_subclass"])
def test_declines_what_it_does_not_handle(case, monkeypatch):
    a = tl.asarray(np.arange(8, dtype=np.float32))
    _warm(tl.add, a, a)
    if case == "strided":
        args = (tl.asarray(np.arange(16, dtype=np.float32))[::2], a)
    elif case == "broadcast":  # (a one-element operand is served as a value: test_fast_paths_small)
        args = (a, tl.asarray(np.ones((2, 8), np.float32)))
    elif case == "mixed_dtype":
        args = (a, a.astype(tl.float64))
    else:
        # Python scalars of the exact types are served (tests/test_fast_paths_small.py);
        # subclasses go the full way.
        class Two(float):
            pass
        for _ in range(HOT_CALLS + 1):
            tl.add(a, Two(2.0))
        args = (a, Two(2.0))
    _NoIterator(monkeypatch)
    with pytest.raises(AssertionError, match="TensorIterator.build"):
        tl.add(*args)


@pytest.mark.parametrize("variant", ["parallel", "flat"])
@pytest.mark.parametrize("case", ["unary", "binary", "alpha", "python_scalar", "where",
                                  "float16"])
def test_above_the_grain_matches_the_full_path(case, variant, monkeypatch):
    """Dense operands of GRAIN elements and more (at storage offsets, an odd count that ends
    inside the last tile) skip the TensorIterator and give the full path's bits."""
    from tensorlib.runtime.cpu import cores
    if variant == "flat":  # what a busy machine (one-thread cool-down) runs
        monkeypatch.setattr(cores, "threads", lambda own=False: 1)
    n = GRAIN + 1001
    rng = np.random.default_rng(7)
    dtype = tl.float16 if case == "float16" else tl.float32
    base = tl.asarray(rng.standard_normal(2 * n + 3).astype(dtype.np_dtype))
    a, b = base[1:n + 1], base[n + 3:]
    cond = tl.asarray(rng.random(n) < 0.5)
    fn, args, kwargs = {
        "unary": (tl.exp, (a,), {}),
        "binary": (tl.multiply, (a, b), {}),
        "alpha": (tl.add, (a, b), {"alpha": 3}),
        "python_scalar": (tl.multiply, (a, 2.5), {}),
        "where": (tl.where, (cond, a, b), {}),
        "float16": (tl.subtract, (a, b), {}),
    }[case]
    ref = fn(*args, **kwargs, out=tl.empty((n,), dtype=dtype))
    _warm(lambda *xs: fn(*xs, **kwargs), *args)
    _NoIterator(monkeypatch)
    got = fn(*args, **kwargs)
    monkeypatch.undo()
    assert got.dtype == dtype and got.shape == (n,) and got.is_contiguous()
    assert np.array_equal(_bits(got), _bits(ref))


@pytest.mark.parametrize("case", ["sin", "exp", "less", "python_scalar", "float16", "alpha"])
def test_team_loop_gives_the_one_thread_bits(case, team_launches, monkeypatch):
    """Above the grain the team runs the flat loop's parallel twin (raw addresses, tiles over
    the threads), on the fast path and the full path alike: bit for bit the one-thread loop,
    also for an odd count ending inside a tile, storage offsets and a block_fast op (sin)."""
    from tensorlib.runtime.cpu import cores
    n = GRAIN + 1001
    rng = np.random.default_rng(11)
    dtype = tl.float16 if case == "float16" else tl.float32
    base = tl.asarray((rng.standard_normal(2 * n + 3) * 4).astype(dtype.np_dtype))
    a, b = base[1:n + 1], base[n + 3:]
    fn, args, kwargs = {
        "sin": (tl.sin, (a,), {}), "exp": (tl.exp, (a,), {}), "less": (tl.less, (a, b), {}),
        "python_scalar": (tl.multiply, (a, 2.5), {}), "float16": (tl.add, (a, b), {}),
        "alpha": (tl.add, (a, b), {"alpha": 3}),
    }[case]
    team_launches.clear()
    got = [fn(*args, **kwargs) for _ in range(HOT_CALLS + 2)]  # full path, then fast path
    assert team_launches.count("flat_parallel") == len(got)
    monkeypatch.setattr(cores, "threads", lambda own=False: 1)  # the one-thread flat loop
    ref = fn(*args, **kwargs)
    for g in got:
        assert np.array_equal(_bits(g), _bits(ref))


def test_errors_still_raise_for_hot_dtypes():
    a = tl.asarray(np.arange(4, dtype=np.float32))
    _warm(tl.add, a, a)
    with pytest.raises(TypeError, match="bitwise_and"):
        tl.bitwise_and(a, a)  # never hot: float is not an integral dtype
    c = tl.asarray(np.arange(4, dtype=np.float32)).reshape((2, 2))
    with pytest.raises(ValueError):
        tl.add(a, c)  # shapes differ: the full path names both


def test_declines_on_a_user_cpu_stream_and_keeps_stream_order(monkeypatch):
    a = tl.asarray(np.arange(6, dtype=np.float32))
    _warm(tl.add, a, a)
    s = tl.Stream(device="cpu")
    with tl.stream(s):
        x = a * 3  # queued
        y = x + x  # must read x after the queued multiply, not before
    s.synchronize()
    np.testing.assert_array_equal(y.numpy(), np.arange(6, dtype=np.float32) * 6)
    _NoIterator(monkeypatch)
    z = tl.add(a, a)  # back on the default stream: fast again, streams used or not
    monkeypatch.undo()
    np.testing.assert_array_equal(z.numpy(), np.arange(6, dtype=np.float32) * 2)


def test_profiler_sees_hot_ops_and_their_kernels(monkeypatch):
    a = tl.asarray(np.arange(3, dtype=np.float32))
    full = tl.add(a, a)  # the full path's rows, to compare with
    with tl.profiler.profile() as ref:
        tl.add(a.astype(tl.float64), a.astype(tl.float64))  # a cold dtype: full path
    _warm(tl.add, a, a)
    _NoIterator(monkeypatch)
    with tl.profiler.profile() as prof:
        for _ in range(5):
            out = tl.add(a, a)  # still the fast path
    monkeypatch.undo()
    np.testing.assert_array_equal(out.numpy(), full.numpy())
    rows = {r.key: r.count for r in prof.key_averages()}
    ref_rows = {r.key for r in ref.key_averages()}
    assert rows["add"] == 5
    kernel_rows = [k for k in ref_rows if k != "add" and "add" in k]
    assert kernel_rows and all(rows.get(k) == 5 for k in kernel_rows)


def test_above_the_grain_with_streams_in_use(monkeypatch):
    """Once CPU streams were used, big dense calls on the default stream still skip the
    TensorIterator (and wait for work queued on their operands); on a user stream they are
    queued by the full path, in stream order."""
    n = GRAIN + 7
    a = tl.asarray(np.arange(n, dtype=np.float32))
    _warm(tl.add, a, a)
    s = tl.Stream(device="cpu")
    with tl.stream(s):
        x = a * 3  # queued
        y = x + x  # queued after it (the fast path declines on a user stream)
    z = y + x  # default stream: waits for both
    s.synchronize()
    np.testing.assert_array_equal(z.numpy(), np.arange(n, dtype=np.float32) * 9)
    _NoIterator(monkeypatch)
    w = tl.add(a, a)
    monkeypatch.undo()
    np.testing.assert_array_equal(w.numpy(), np.arange(n, dtype=np.float32) * 2)


@pytest.mark.parametrize("case", ["add_alpha", "mul_scalar", "exp_", "sub_self", "float16",
                                  "int_scalar", "div_int"])
def test_hot_inplace_matches_the_full_path(case, monkeypatch):
    """x op= y without a TensorIterator once hot: the full path's bits, written into x's own
    memory (at a storage offset; the elements around it untouched), the version counted."""
    rng = np.random.default_rng(11)
    dtype = {"float16": tl.float16, "int_scalar": tl.int32, "div_int": tl.int32}.get(
        case, tl.float32)
    n = 1001

    def fresh():
        host = (rng.integers(-100, 100, n + 4) if dtype is tl.int32
                else rng.standard_normal(n + 4))
        base = tl.asarray(host).astype(dtype)
        return base, base[2:n + 2]
    other = fresh()[1].clone()
    call = {
        "add_alpha": lambda x: x.add_(other, alpha=3),
        "mul_scalar": lambda x: x.mul_(2.5),
        "exp_": lambda x: x.exp_(),
        "sub_self": lambda x: x.sub_(x),
        "float16": lambda x: x.mul_(other),
        "int_scalar": lambda x: x.add_(7),
        "div_int": lambda x: x.remainder_(5),
    }[case]
    for _ in range(HOT_CALLS + 1):
        call(fresh()[1])
    base_ref, ref = fresh()
    base_got = base_ref.clone()
    got = base_got[2:n + 2]
    full = {"add_alpha": lambda x, y: tl.add(y, other, alpha=3, out=x),
            "mul_scalar": lambda x, y: tl.multiply(y, 2.5, out=x),
            "exp_": lambda x, y: tl.exp(y, out=x),
            "sub_self": lambda x, y: tl.subtract(y, y, out=x),
            "float16": lambda x, y: tl.multiply(y, other, out=x),
            "int_scalar": lambda x, y: tl.add(y, 7, out=x),
            "div_int": lambda x, y: tl.remainder(y, 5, out=x)}[case]
    want = got.clone()
    full(want, got.clone())
    v0 = got._version
    _NoIterator(monkeypatch)
    res = call(got)
    monkeypatch.undo()
    assert res is got and got._version > v0
    wide = tl.float64
    np.testing.assert_array_equal(got.astype(wide).numpy(), want.astype(wide).numpy())
    np.testing.assert_array_equal(base_got.astype(wide).numpy()[[0, 1, n + 2, n + 3]],
                                  base_ref.astype(wide).numpy()[[0, 1, n + 2, n + 3]])


def test_hot_inplace_still_raises_and_declines_overlap(monkeypatch):
    a = tl.asarray(np.arange(10, dtype=np.int8))
    for _ in range(HOT_CALLS + 1):
        a.add_(1)
    with pytest.raises(TypeError):
        a.add_(2.5)  # float into int8: the full path's cast error
    with pytest.raises(OverflowError):
        a.add_(300)  # an int8 scalar out of bounds
    x = tl.asarray(np.arange(12, dtype=np.float32))
    for _ in range(HOT_CALLS + 1):
        x[:6].add_(x[6:].clone())
    _NoIterator(monkeypatch)
    with pytest.raises(AssertionError, match="TensorIterator.build"):
        x[:6].add_(x[3:9])  # overlaps self without being it: the full path decides
    monkeypatch.undo()
    ro = np.arange(4, dtype=np.float32)
    ro.flags.writeable = False
    t = tl.asarray(ro)
    with pytest.raises((ValueError, RuntimeError, TypeError), match="read-only"):
        t.mul_(2.0)


_OUT_CASES = ["exp", "exp_f64_out", "add_alpha", "mul_scalar", "less", "int_remainder",
              "float16", "out_is_self", "out_is_other"]


@pytest.mark.parametrize("size", ["small", "big_parallel", "big_flat"])
@pytest.mark.parametrize("case", _OUT_CASES)
def test_hot_out_matches_the_functional_result(case, size, monkeypatch):
    """op(..., out=d) without a TensorIterator once hot: the functional result's bits (cast to
    d's dtype where d is wider, as the full path's loop casts), written into d at a storage
    offset with the elements around it untouched, d returned, its version counted. Above the
    parallel grain too: the parallel tile loop, or the flat loop when one thread would run
    (a stall cool-down, other Python threads in kernels, NUMBA_NUM_THREADS=1)."""
    from tensorlib.runtime.cpu import cores
    if size == "big_flat":
        monkeypatch.setattr(cores, "threads", lambda own=False: 1)
    elif size == "big_parallel":
        monkeypatch.setattr(cores, "_until", 0.0)  # no cool-down: the team runs it
        monkeypatch.setattr(cores, "STALL_S", float("inf"))
    rng = np.random.default_rng(13)
    n = 1003 if size == "small" else GRAIN + 1001
    dt = {"int_remainder": tl.int32, "float16": tl.float16}.get(case, tl.float32)
    host = rng.integers(-100, 100, n) if dt is tl.int32 else rng.standard_normal(n) * 3
    a = tl.asarray(host).astype(dt)
    b = tl.asarray(rng.standard_normal(n) * 3).astype(dt)
    fn, args = {
        "exp": (tl.exp, (a,)), "exp_f64_out": (tl.exp, (a,)),
        "add_alpha": (lambda x, y, out: tl.add(x, y, alpha=3, out=out), (a, b)),
        "mul_scalar": (tl.multiply, (a, 2.5)), "less": (tl.less, (a, b)),
        "int_remainder": (tl.remainder, (a, 7)), "float16": (tl.multiply, (a, b)),
        "out_is_self": (tl.subtract, (a, b)), "out_is_other": (tl.subtract, (a, b)),
    }[case]
    want = {"add_alpha": lambda: tl.add(a, b, alpha=3)}.get(case, lambda: fn(*args))()
    out_dt = {"exp_f64_out": tl.float64}.get(case, want.dtype)
    want = want.astype(out_dt)

    def fresh():
        base = tl.asarray(rng.standard_normal(n + 4)).astype(out_dt)
        return base, base[2:n + 2]
    for _ in range(HOT_CALLS + 1):
        fn(*args, out=fresh()[1])
    if case in ("out_is_self", "out_is_other"):
        x, y = a.clone(), b.clone()
        d = x if case == "out_is_self" else y
        v0 = d._version
        with monkeypatch.context() as m:
            _NoIterator(m)
            res = fn(x, y, out=d)
        assert res is d and d._version > v0
        np.testing.assert_array_equal(_bits(d), _bits(want))
        return
    base, d = fresh()
    around = base.numpy()[[0, 1, n + 2, n + 3]].copy()
    v0 = d._version
    with monkeypatch.context() as m:
        _NoIterator(m)
        res = fn(*args, out=d)
    assert res is d and d._version > v0
    np.testing.assert_array_equal(_bits(d), _bits(want))
    np.testing.assert_array_equal(base.numpy()[[0, 1, n + 2, n + 3]], around)


def test_hot_out_still_raises_and_declines(monkeypatch):
    """Once out= is hot for a combination: other out dtypes and shapes still meet the full
    path's errors, an out partly overlapping an operand is left to the full path (which reads
    a copy: the out-of-place values), non-contiguous outs and user streams too."""
    x = tl.asarray(np.linspace(-2, 2, 600).astype(np.float32))
    o = tl.empty_like(x)
    for _ in range(HOT_CALLS + 1):
        tl.exp(x, out=o)
        tl.multiply(x, 2.0, out=o)
    with pytest.raises(TypeError):
        tl.exp(x, out=tl.empty((600,), dtype=tl.int32))  # float result into int32
    with pytest.raises(Exception, match="shape|broadcast"):
        tl.exp(x, out=tl.empty((599,)))
    base = tl.asarray(np.arange(20, dtype=np.float32))
    want = (base[2:12] * 2.0).numpy()
    for _ in range(HOT_CALLS + 1):
        tl.multiply(base[2:12].clone(), 2.0, out=tl.empty((10,)))
    _NoIterator(monkeypatch)
    with pytest.raises(AssertionError, match="TensorIterator.build"):
        tl.multiply(base[2:12], 2.0, out=base[0:10])  # partial overlap: the full path
    monkeypatch.undo()
    tl.multiply(base[2:12], 2.0, out=base[0:10])
    np.testing.assert_array_equal(base.numpy()[0:10], want)
    wide = tl.empty((1200,))
    tl.exp(x, out=wide[::2])  # non-contiguous out: the full path
    np.testing.assert_array_equal(wide.numpy()[::2], tl.exp(x).numpy())
    s = tl.Stream(device="cpu")
    with tl.stream(s):
        q = x * 3.0  # queued
        tl.exp(q, out=o)  # declined on a user stream: queued after q
    s.synchronize()
    np.testing.assert_array_equal(o.numpy(), tl.exp(x * 3.0).numpy())


@pytest.mark.parametrize("case", ["binary", "unary", "scalar_right", "scalar_left", "alpha",
                                  "float16", "int_wrap", "big"])
@pytest.mark.parametrize("steps", [(2, 3), (-1, 2), (-3, -2)])
def test_hot_1d_strided_matches_the_full_path(case, steps, monkeypatch):
    """1-D operands with steps (negative too), at storage offsets, once hot: the tile loop with
    a meta packed by the runner, no TensorIterator; the full path's bits in a contiguous result."""
    dtype = {"float16": tl.float16, "int_wrap": tl.int8}.get(case, tl.float32)
    n = GRAIN + 3 if case == "big" else 301
    rng = np.random.default_rng(abs(steps[0]) * 10 + abs(steps[1]))
    host = (rng.integers(-128, 128, 4 * n + 8) if dtype is tl.int8
            else rng.standard_normal(4 * n + 8) * 3)
    base = tl.asarray(host).astype(dtype)
    s0, s1 = steps
    a = base[5::s0][:n] if s0 > 0 else base[::s0][3:n + 3]
    b = base[1::s1][:n] if s1 > 0 else base[::s1][2:n + 2]
    assert a.shape == b.shape == (n,) and not a.is_contiguous()
    fn, args, kwargs = {
        "binary": (tl.multiply, (a, b), {}),
        "unary": (tl.exp, (a,), {}),
        "scalar_right": (tl.subtract, (a, 1.5), {}),
        "scalar_left": (tl.subtract, (1.5, a), {}),
        "alpha": (tl.add, (a, b), {"alpha": 2}),
        "float16": (tl.add, (a, b), {}),
        "int_wrap": (tl.multiply, (a, b), {}),
        "big": (tl.maximum, (a, b), {}),
    }[case]
    ref = fn(*args, **kwargs, out=tl.empty((n,), dtype=dtype))
    _warm(lambda *xs: fn(*xs, **kwargs), *args)
    _NoIterator(monkeypatch)
    got = fn(*args, **kwargs)
    monkeypatch.undo()
    assert got.dtype == dtype and got.shape == (n,) and got.stride() == (1,)
    assert np.array_equal(_bits(got), _bits(ref))


@given(data=st.data())
@settings(max_examples=40, deadline=None)
def test_strided_1d_property_against_numpy(data):
    """Any steps (negative, zero via broadcast), offsets, lengths and dtypes of 1-D operands:
    the fast path's result equals NumPy's on the same views (exact ops) once hot."""
    dt = data.draw(st.sampled_from([np.float32, np.float64, np.int16, np.int64, np.uint8]))
    n = data.draw(st.integers(1, 200))
    steps = [data.draw(st.sampled_from([-4, -3, -2, -1, 0, 2, 3, 4])) for _ in range(2)]
    op = data.draw(st.sampled_from(["add", "multiply", "maximum", "subtract"]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    views = []
    for step in steps:
        host = (rng.standard_normal(4 * n + 10) * 50).astype(dt)
        base = tl.asarray(host)
        if step == 0:  # a broadcast operand: stride 0
            off = data.draw(st.integers(0, 9))
            views.append((tl.broadcast_to(base[off:off + 1], (n,)),
                           np.broadcast_to(host[off:off + 1], (n,))))
            continue
        off = data.draw(st.integers(0, 9))
        t, h = (base[off:], host[off:]) if step > 0 else (base[::-1][off:], host[::-1][off:])
        views.append((t[::abs(step)][:n], h[::abs(step)][:n]))
    (a, an), (b, bn) = views
    fn = getattr(tl, op)
    with np.errstate(all="ignore"):
        for _ in range(HOT_CALLS + 1):
            fn(a, b)
        got = fn(a, b)
        want = getattr(np, op)(an, bn)
    assert got.shape == (n,) and got.dtype.np_dtype == want.dtype
    np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("case", ["zero_left", "float_right", "int_scalar_float_tensor",
                                  "float_scalar_int_tensor", "float16", "big"])
def test_hot_where_with_a_python_scalar(case, monkeypatch):
    """where(cond, scalar, x) / where(cond, x, scalar) once hot: the full path's dtype and bits,
    no TensorIterator; an out-of-range scalar still raises the full path's error."""
    n = GRAIN + 11 if case == "big" else 777
    rng = np.random.default_rng(len(case))
    dtype = {"float_scalar_int_tensor": tl.int32, "float16": tl.float16}.get(case, tl.float32)
    x = tl.asarray(rng.standard_normal(n + 3) * 9).astype(dtype)[3:]
    cond = tl.asarray(rng.random(n) < 0.5)
    args = {"zero_left": (cond, 0, x), "float_right": (cond, x, 2.5),
            "int_scalar_float_tensor": (cond, -3, x), "float_scalar_int_tensor": (cond, 0.5, x),
            "float16": (cond, x, -0.0), "big": (cond, 0, x)}[case]
    ref = tl.where(*args)  # cold: the full path
    _warm(tl.where, *args)
    _NoIterator(monkeypatch)
    got = tl.where(*args)
    monkeypatch.undo()
    assert got.dtype == ref.dtype and got.shape == (n,) and got.is_contiguous()
    assert np.array_equal(_bits(got), _bits(ref))
    if case == "float_scalar_int_tensor":
        assert got.dtype.kind == "f"


def test_hot_where_scalar_errors_match_the_full_path():
    x = tl.asarray(np.arange(10, dtype=np.int8))
    cond = tl.asarray(np.arange(10) % 2 == 0)
    _warm(tl.where, cond, 1, x)
    with pytest.raises(OverflowError):
        tl.where(cond, 300, x)


@pytest.mark.parametrize("op, team", [(tl.exp, True), (tl.sqrt, False), (tl.add, False)])
def test_threads_start_at_the_grain_of_the_ops_cost(op, team, team_launches):
    """Between WIDE_GRAIN and GRAIN elements a compute-bound op (ops.yaml tag wide_vectors: exp)
    runs on the team and a memory-bound one (sqrt, add) on the calling thread, on the fast path
    and the full path alike; both give the same bits as the out= overload."""
    from tensorlib.kernels.cpu.pointwise import WIDE_GRAIN
    assert WIDE_GRAIN < GRAIN
    n = WIDE_GRAIN + 9
    x = tl.asarray(np.random.default_rng(3).standard_normal(n).astype(np.float32))
    args = (x,) if op is not tl.add else (x, x)
    ref = op(*args, out=tl.empty((n,), dtype=tl.float32))
    team_launches.clear()
    for _ in range(HOT_CALLS + 2):  # the full path's calls, then the fast path's
        got = op(*args)
        assert np.array_equal(_bits(got), _bits(ref))
    assert bool(team_launches) == team


def test_a_costly_ops_grain_follows_its_time_per_element(monkeypatch):
    """The dense runner of a compute-bound op lowers its grain to where its flat loop would
    take TEAM_PAYS_S on one thread, by the cheapest time per element it has seen (within
    MIN_GRAIN and the op's grain); a memory-bound op keeps its grain and is not timed."""
    from tensorlib.dispatch.registration import POINTWISE
    from tensorlib.kernels.cpu import pointwise_fast as pf
    from tensorlib.kernels.cpu.pointwise import WIDE_GRAIN
    clock = [0.0]
    monkeypatch.setattr(pf, "_perf", lambda: clock[0])
    costs = []

    def flat(n, *addresses):
        clock[0] += n * costs.pop(0)
    state, timed = pf._grain_probe(POINTWISE["pow"], flat)
    assert state[0] == WIDE_GRAIN
    costs[:] = [2e-9, 4e-9, 1e-9, 1e-11]
    timed(50000)                        # 2 ns an element: TEAM_PAYS_S at 12,500 elements
    assert abs(state[0] - pf.TEAM_PAYS_S / 2e-9) < 2
    timed(50000)                        # a slower call changes nothing
    assert abs(state[0] - pf.TEAM_PAYS_S / 2e-9) < 2
    timed(50000)                        # cheaper: a higher grain
    assert abs(state[0] - pf.TEAM_PAYS_S / 1e-9) < 2
    timed(50000)                        # never above the op's own grain
    assert state[0] == WIDE_GRAIN
    costs[:] = [1e-6]
    state, timed = pf._grain_probe(POINTWISE["pow"], flat)
    timed(50000)
    assert state[0] == pf.MIN_GRAIN     # nor below MIN_GRAIN
    state, plain = pf._grain_probe(POINTWISE["add"], flat)
    assert plain is flat and state[0] == GRAIN


def test_a_costly_op_runs_on_the_team_below_its_grain(team_launches, monkeypatch):
    """float64 pow over 50,000 elements (a few ns an element on one core: far below
    TEAM_PAYS_S's worth of elements) moves to the team after its first timed call, bit for
    bit the one-thread result."""
    from tensorlib.kernels.cpu.pointwise import WIDE_GRAIN
    from tensorlib.runtime.cpu import streams
    # (no stream queues work here; an earlier test's streams leave the runners on their
    # recording calls, which are not timed)
    monkeypatch.setattr(streams, "_slow", False)
    n = 50000
    assert n < WIDE_GRAIN
    rng = np.random.default_rng(5)
    x = tl.asarray(rng.random(n) + 0.5)
    y = tl.asarray(rng.random(n) * 3)
    ref = tl.pow(x, y, out=tl.empty((n,), dtype=tl.float64))
    team_launches.clear()
    got = [tl.pow(x, y) for _ in range(HOT_CALLS + 3)]
    assert "flat_parallel" in team_launches
    for g in got:
        assert np.array_equal(_bits(g), _bits(ref))
    team_launches.clear()
    out = tl.empty((n,), dtype=tl.float64)
    for _ in range(HOT_CALLS + 3):  # the out= runner: the same rule
        tl.pow(x, y, out=out)
    assert "flat_parallel" in team_launches
    assert np.array_equal(_bits(out), _bits(ref))
