"""Fast paths for small tensors (issue 13 item 2): each must give exactly what the full path
gives (dtype, shape, values bit for bit, the same errors) and must actually be taken.

The full path is reached with a non-contiguous view of the same values (every fast path
declines those) or before a combination is hot; "taken" is checked by counting
TensorIterator.build calls. Nothing here is timed.
"""
import math

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.iterator import TensorIterator
from tensorlib.runtime.cpu import streams as _cpu_streams
from tensorlib.dispatch.registration import POINTWISE
from tensorlib.ops.pointwise import HOT_CALLS


class _Builds:
    """Counts TensorIterator.build (and .reduce) calls while installed."""

    def __init__(self, monkeypatch):
        self.n = 0
        build = TensorIterator.build.__func__
        reduce_ = TensorIterator.reduce.__func__

        def counting_build(cls, *args, **kwargs):
            self.n += 1
            return build(cls, *args, **kwargs)

        def counting_reduce(cls, *args, **kwargs):
            self.n += 1
            return reduce_(cls, *args, **kwargs)

        monkeypatch.setattr(TensorIterator, "build", classmethod(counting_build))
        monkeypatch.setattr(TensorIterator, "reduce", classmethod(counting_reduce))


def _strided(t):
    """A non-contiguous view holding t's values (the full path's input); a 0-d t gives a
    strided 1-d view of two copies (see _full_0d)."""
    if t.ndim == 0:
        base = tl.empty((2, 2), dtype=t.dtype)
        base[:, 0] = t
        return base[:, 0]
    base = tl.empty(t.shape + (2,), dtype=t.dtype)
    base[..., 0] = t
    view = base[..., 0]
    assert not view.is_contiguous() or t.size <= 1
    return view


def _full_0d(result):
    """The full path's answer for a 0-d operand, from its 2-element strided stand-in."""
    return result[0:1].reshape(()) if isinstance(result, tl.Tensor) else result


def _bits(arr):
    return arr.view(np.uint8) if arr.dtype != np.bool_ and arr.size else arr


def _same(got, ref):
    """Bit-equal, except that a NaN only has to be a NaN: IEEE 754 leaves the sign and payload
    of a NaN an operation produces unspecified, and LLVM's code for the flat and strided loops
    (which differs between CPUs: AVX2, AVX-512) may give (nan+0j) * inf either sign."""
    assert got.dtype == ref.dtype and got.shape == ref.shape
    a = np.ascontiguousarray(got._to_host_numpy())
    b = np.ascontiguousarray(ref._to_host_numpy())
    if a.dtype.kind in "fc" and a.size and a.dtype.itemsize > 2:
        a = a.view(a.real.dtype).copy()  # complex: each component on its own
        b = b.view(b.real.dtype).copy()
        nan = np.isnan(a)
        assert np.array_equal(nan, np.isnan(b))
        a[nan] = b[nan] = 0
    assert np.array_equal(_bits(a), _bits(b))


def _outcome(fn, *args):
    try:
        with np.errstate(all="ignore"):
            return "ok", fn(*args)
    except Exception as e:  # noqa: BLE001 - compared with the other path's outcome
        return "error", (type(e), str(e))


def _check_same_outcome(fast, full):
    assert fast[0] == full[0], (fast, full)
    if fast[0] == "ok":
        _same(fast[1], full[1])
    else:
        assert fast[1] == full[1]


# ---------------------------------------------------------------- Python-scalar operands
_VALUES = {
    "f": [np.nan, -np.inf, -0.0, 0.5, 3.0, 1e30, -2.5, 0.0, 7.25, 1e-30],
    "i": [-3, 0, 7, 2, -128, 5, 1, 100, 9, -1],
    "u": [3, 0, 7, 2, 128, 5, 1, 100, 9, 255],
    "b": [True, False, True, False, True, True, False, False, True, False],
    "c": [1 + 2j, -0.0 - 1j, np.nan, 3.5, 0j, -2 + 0.5j, 1e30j, 1, 2, 3],
}

SCALARS = [0, 1, -1, 3, 255, 2 ** 31, 2 ** 63, 2 ** 70, -2 ** 70, True, False, 2.5, -0.0, 0.0,
           math.nan, math.inf, -math.inf, 1e300, 3.0, 1 + 2j, -0.0j]

# (op, dtype) pairs: every op's flat loop comes from one generator, and each (op, dtype,
# scalar type, position) compiles a loop on a cold cache, so the pairs cover the kinds of
# expression (arithmetic, comparison, bitwise, int -> float, real-only) and every dtype.
CASES = [("add", tl.float32), ("add", tl.int8), ("add", tl.uint64), ("add", tl.bool),
         ("multiply", tl.float16), ("multiply", tl.bfloat16), ("multiply", tl.complex64),
         ("subtract", tl.float64), ("subtract", tl.uint8), ("divide", tl.float32),
         ("divide", tl.int32), ("floor_divide", tl.int64), ("remainder", tl.float32),
         ("pow", tl.float32), ("pow", tl.int16), ("maximum", tl.float64), ("less", tl.float32),
         ("equal", tl.complex128), ("greater_equal", tl.uint32), ("bitwise_and", tl.int32),
         ("bitwise_left_shift", tl.uint8), ("logical_or", tl.bool), ("atan2", tl.float64),
         ("copysign", tl.float32)]

_WARM = {bool: True, int: 1, float: 1.0, complex: 1j}


def _tensor(dtype, n=10):
    kind = dtype.kind
    vals = _VALUES[kind][:n]
    if dtype.kind == "f" and dtype.itemsize == 2:
        return tl.asarray(np.array(vals, np.float32)).astype(dtype)
    return tl.asarray(np.array(vals, dtype.np_dtype))


def _warm_scalar(fn, t, scalar, first):
    """Makes (t's dtype, type(scalar), position) hot; False when the full path refuses it."""
    warm = _WARM[type(scalar)]
    for _ in range(HOT_CALLS + 1):
        try:
            with np.errstate(all="ignore"):
                fn(warm, t) if first else fn(t, warm)
        except Exception:  # noqa: BLE001 - the combination is invalid for this op
            return False
    return True


@pytest.mark.parametrize("name, dtype", CASES, ids=lambda x: str(x))
def test_python_scalar_operand_matches_the_full_path(name, dtype, monkeypatch):
    if name not in POINTWISE:
        pytest.skip(f"{name} is not a pointwise op here")
    fn = getattr(tl, name)
    t = _tensor(dtype)
    s_view = _strided(t)
    for first in (False, True):
        for scalar in SCALARS:
            if not _warm_scalar(fn, t, scalar, first):
                continue
            args = (scalar, t) if first else (t, scalar)
            ref_args = (scalar, s_view) if first else (s_view, scalar)
            full = _outcome(fn, *ref_args)
            if t.ndim == 0 and full[0] == "ok":
                full = ("ok", _full_0d(full[1]))
            builds = _Builds(monkeypatch)
            fast = _outcome(fn, *args)
            monkeypatch.undo()
            _check_same_outcome(fast, full)
            declined = fast[0] == "ok" and (
                POINTWISE[name].int_to_float and tl.result_type(dtype, scalar).kind in "biu"
                # a comparison answers an int outside its integer dtype through the iterator
                or POINTWISE[name].compares and type(scalar) is int and dtype.kind in "iu"
                and not tl.iinfo(dtype).min <= scalar <= tl.iinfo(dtype).max)
            assert builds.n == int(declined), f"{name}({args}): the full path ran"


@pytest.mark.parametrize("shape", [(), (0,), (3, 0), (1,), (2, 3)])
def test_python_scalar_zero_dim_and_empty(shape, monkeypatch):
    base = tl.asarray(np.arange(math.prod(shape), dtype=np.float32).reshape(shape))
    _warm_scalar(tl.multiply, base, 2.5, False)
    _warm_scalar(tl.subtract, base, 2.5, True)
    for fn, args in ((tl.multiply, (base, 2.5)), (tl.subtract, (2.5, base))):
        ref = fn(*[_strided(a) if isinstance(a, tl.Tensor) else a for a in args])
        if base.ndim == 0:
            ref = _full_0d(ref)
        builds = _Builds(monkeypatch)
        got = fn(*args)
        monkeypatch.undo()
        _same(got, ref)
        assert builds.n == (0 if base.size else 1)  # empty tensors take the full path


def test_python_scalar_errors_match(monkeypatch):
    a = tl.asarray(np.array([1, 2, 3], np.int8))
    _warm_scalar(tl.add, a, 1, False)
    _warm_scalar(tl.add, a, 1.0, False)
    for bad in (2 ** 70, 300, -129):
        with pytest.raises(OverflowError, match="out of bounds for int8"):
            tl.add(a, bad)
    # a float scalar promotes an int tensor to float32: fine, on the fast path
    builds = _Builds(monkeypatch)
    assert tl.add(a, 0.5).tolist() == [1.5, 2.5, 3.5]
    assert builds.n == 0
    monkeypatch.undo()
    with pytest.raises(TypeError, match="alpha"):
        tl.add(a, 1, alpha=1.5)
    b = tl.asarray(np.array([True, False]))
    _warm_scalar(tl.logical_and, b, True, False)
    with pytest.raises(TypeError):
        tl.bitwise_and(b, 2.5)


def test_python_scalar_with_alpha_and_default(monkeypatch):
    a = tl.asarray(np.array([1.5, -2.0, 4.0], np.float32))
    _warm_scalar(tl.add, a, 2.0, False)
    builds = _Builds(monkeypatch)
    r1 = tl.add(a, 2.0, alpha=3)
    r2 = tl.add(a, 2.0)
    r3 = tl.subtract(a, 1.0, alpha=2) if False else None
    assert builds.n == 0
    monkeypatch.undo()
    assert r1.tolist() == [7.5, 4.0, 10.0] and r2.tolist() == [3.5, 0.0, 6.0] and r3 is None


def test_python_scalar_declines_strided_and_numpy_scalars(monkeypatch):
    a = tl.asarray(np.arange(8, dtype=np.float32))
    _warm_scalar(tl.multiply, a, 2.0, False)
    builds = _Builds(monkeypatch)
    tl.multiply(a[::2], 2.0)
    assert builds.n == 1
    r = tl.multiply(a, np.float64(2.0))  # NumPy scalars become Python ones in the binding
    assert r.dtype == tl.float32 and builds.n == 1


def test_python_scalar_on_a_user_stream_and_under_the_profiler(monkeypatch):
    a = tl.asarray(np.arange(6, dtype=np.float32))
    _warm_scalar(tl.multiply, a, 3.0, False)
    s = tl.Stream(device="cpu")
    with tl.stream(s):
        x = a * 3.0  # queued: full path
        y = x * 2.0
    s.synchronize()
    np.testing.assert_array_equal(y.numpy(), np.arange(6, dtype=np.float32) * 6)
    with tl.profiler.profile() as prof:
        for _ in range(4):
            out = a * 3.0
    np.testing.assert_array_equal(out.numpy(), np.arange(6, dtype=np.float32) * 3)
    rows = {r.key: r.count for r in prof.key_averages()}
    assert rows["multiply"] == 4


# ---------------------------------------------------------------- fill_, full, zeros, ones
FILL_VALUES = [0, 1, -1, 7, 2 ** 70, True, False, 2.5, -0.0, math.nan, math.inf, -math.inf,
               1e300, 1 + 1e-11, 1 + 2j, 255, -129]
ALL_DTYPES = [tl.bool, tl.int8, tl.int16, tl.int32, tl.int64, tl.uint8, tl.uint16, tl.uint32,
              tl.uint64, tl.float16, tl.bfloat16, tl.float32, tl.float64, tl.complex64,
              tl.complex128]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_fill_and_full_match_the_full_path(dtype, monkeypatch):
    for value in FILL_VALUES:
        ref_t = _strided(tl.empty((5,), dtype=dtype))
        full = _outcome(lambda: ref_t.fill_(value).contiguous())
        fast_t = tl.empty((5,), dtype=dtype)
        builds = _Builds(monkeypatch)
        fast = _outcome(lambda: fast_t.fill_(value))
        made = _outcome(lambda: tl.full((5,), value, dtype=dtype))
        monkeypatch.undo()
        _check_same_outcome(fast, full)
        _check_same_outcome(made, full)
        assert builds.n == 0


def test_full_zeros_ones_defaults_shapes_and_errors(monkeypatch):
    builds = _Builds(monkeypatch)
    assert tl.full((2, 3), 2.5).dtype == tl.float32
    assert tl.full((2,), 3).dtype == tl.int64 and tl.full((2,), True).dtype == tl.bool
    assert tl.full((2,), 1j).dtype == tl.complex64
    z = tl.zeros((2, 0, 3))
    assert z.shape == (2, 0, 3)
    assert tl.zeros(()).shape == () and tl.zeros(()).item() == 0.0
    o = tl.ones((3, 1, 2), dtype=tl.int16)
    assert o.stride() == (2, 2, 1) and o.tolist() == [[[1, 1]], [[1, 1]], [[1, 1]]]
    assert builds.n == 0
    monkeypatch.undo()
    assert tl.zeros((2, 0, 3)).stride() == tl.empty((2, 0, 3)).stride()
    with pytest.raises(OverflowError, match="out of bounds for uint8"):
        tl.full((3,), 256, dtype=tl.uint8)
    with pytest.raises(TypeError):
        tl.full((3,), 2.5, dtype=tl.int32)
    with pytest.raises(ValueError, match="negative dimension"):
        tl.zeros((2, -1))
    with pytest.raises(OverflowError):
        tl.zeros((2 ** 40, 2 ** 40))


def test_full_under_the_profiler_and_on_a_stream():
    with tl.profiler.profile() as prof:
        t = tl.zeros((4,))
    assert t.tolist() == [0.0] * 4
    keys = {r.key for r in prof.key_averages()}
    assert "zeros" in keys and "fill_" in keys
    s = tl.Stream(device="cpu")
    with tl.stream(s):
        u = tl.full((4,), 3.0)
        v = u * 2.0
    s.synchronize()
    assert v.tolist() == [6.0] * 4


# ---------------------------------------------------------------- astype, copy_, clone
@pytest.mark.parametrize("src", [tl.float32, tl.float16, tl.bfloat16, tl.float64, tl.int8,
                                 tl.uint64, tl.bool, tl.complex64], ids=str)
def test_astype_and_copy_match_the_full_path(src, monkeypatch):
    vals = {"f": _VALUES["f"], "i": _VALUES["i"], "u": _VALUES["u"], "b": _VALUES["b"],
            "c": _VALUES["c"]}[src.kind]
    x = tl.asarray(np.array(vals, np.float64 if src.kind == "f" else None)) if src.kind != "f" \
        else tl.asarray(np.array(vals, np.float64)).astype(src)
    x = x.astype(src)
    xs = _strided(x)
    for dst in ALL_DTYPES:
        if src.kind == "c" and dst.kind != "c":
            continue
        full = _outcome(lambda: xs.astype(dst))
        builds = _Builds(monkeypatch)
        fast = _outcome(lambda: x.astype(dst))
        into = tl.empty((x.size,), dtype=dst)
        copied = _outcome(lambda: into.copy_(x))
        monkeypatch.undo()
        _check_same_outcome(fast, full)
        _check_same_outcome(copied, full)
        assert fast[1].is_contiguous() and fast[1].stride() == (1,)
        assert builds.n == 0


def test_astype_shapes_views_and_declines(monkeypatch):
    base = tl.asarray(np.arange(24, dtype=np.float32)).reshape((2, 3, 4))
    view = base[1]  # contiguous, at an offset
    builds = _Builds(monkeypatch)
    a = view.astype(tl.int64)
    z = tl.asarray(np.float32(2.5)).astype(tl.float64)
    same = view.astype(tl.float32, copy=False)
    assert builds.n == 0
    t = base.permute((2, 0, 1)).astype(tl.float64)  # one dense block, another dim order
    assert builds.n == 0
    f = base[::-1].astype(tl.float64)  # dense but flipped: the block starts below x[0]
    e = base[:, :0].astype(tl.int8)  # empty: full path
    s = base[:, :, ::2].astype(tl.float64)  # not dense: full path
    monkeypatch.undo()
    assert builds.n == 3
    np.testing.assert_array_equal(f.numpy(), np.arange(24.0).reshape(2, 3, 4)[::-1])
    np.testing.assert_array_equal(s.numpy(), np.arange(24.0).reshape(2, 3, 4)[:, :, ::2])
    assert a.tolist() == np.arange(12, 24).reshape(3, 4).tolist() and a.stride() == (4, 1)
    assert z.shape == () and z.item() == 2.5 and same is view
    assert e.shape == (2, 0, 4) and t.stride() == (1, 12, 4)  # the source's memory order
    np.testing.assert_array_equal(t.numpy(), np.arange(24, dtype=np.float64).reshape(2, 3, 4)
                                  .transpose(2, 0, 1))
    c = view.clone()
    c[0, 0] = 100.0
    assert view[0, 0].item() == 12.0


def test_copy_declines_overlap_readonly_and_profiler():
    a = tl.asarray(np.arange(6, dtype=np.float32))
    a[1:4].copy_(a[0:3])  # same storage: the full path (copies the overlapping source first)
    assert a.tolist() == [0.0, 0.0, 1.0, 2.0, 4.0, 5.0]
    ro = tl.asarray(np.frombuffer(np.arange(3, dtype=np.float32).tobytes(), np.float32))
    with pytest.raises(ValueError, match="read-only"):
        ro.copy_(tl.zeros((3,)))
    with pytest.raises(ValueError, match="read-only"):
        ro.fill_(1.0)
    with tl.profiler.profile() as prof:
        b = a.astype(tl.float64)
    assert b.tolist() == [0.0, 0.0, 1.0, 2.0, 4.0, 5.0]
    assert any("copy" in r.key for r in prof.key_averages())


# ---------------------------------------------------------------- reductions (plans)
import tensorlib.ops.reduction as _red  # noqa: E402

RED_OPS = ["sum", "prod", "mean", "max", "min", "argmax", "argmin", "any", "all"]
RED_DTYPES = [tl.float32, tl.float64, tl.float16, tl.int32, tl.uint8, tl.bool, tl.complex64]


def _red_inputs(dtype):
    rng = np.random.default_rng(3)
    vals = rng.standard_normal(24) * 10
    vals[5] = np.nan if dtype.kind in "fc" else vals[5]
    base = tl.asarray(vals.astype(np.float64)).astype(dtype)
    cube = base.reshape((2, 3, 4))
    return {"1d": base, "0d": base[3], "cube": cube, "offset": cube[1],
            "transposed": cube.permute((2, 0, 1)), "empty": base[:0],
            "empty_rows": cube[:, :0]}


_AXES = [None, 0, -1, (0, 1)]


def _red_call(name, x, axis, keepdims):
    fn = getattr(tl, name)
    if name in ("argmax", "argmin") and isinstance(axis, tuple):
        axis = axis[0]
    return fn(x, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("name", RED_OPS)
@pytest.mark.parametrize("dtype", RED_DTYPES, ids=str)
def test_reduction_plans_match_the_full_path(name, dtype, monkeypatch):
    for xname, x in _red_inputs(dtype).items():
        for axis in _AXES:
            for keepdims in (False, True):
                monkeypatch.setattr(_red, "_plans", {})
                full = _outcome(_red_call, name, x, axis, keepdims)  # makes the plan
                planned = bool(_red._plans) and next(iter(_red._plans.values())) is not None
                builds = _Builds(monkeypatch)
                fast = _outcome(_red_call, name, x, axis, keepdims)
                n = builds.n
                monkeypatch.undo()
                _check_same_outcome(fast, full)
                # argmax/argmin(axis=None) of a non-contiguous tensor reduce a flattened copy:
                # no plan (declined), the full path every time
                copied = name.startswith("arg") and axis is None and not x.is_contiguous()
                if full[0] == "ok" and full[1].size and x.size and not copied:
                    assert planned and n == 0, (name, xname, axis, keepdims)


def test_reduction_plans_decline_streams_profiler_and_out(monkeypatch):
    x = tl.asarray(np.arange(10, dtype=np.float32))
    monkeypatch.setattr(_red, "_plans", {})
    ref = tl.sum(x)
    with tl.profiler.profile() as prof:
        assert tl.sum(x).item() == ref.item() == 45.0
    keys = {r.key for r in prof.key_averages()}
    assert "sum" in keys and any(k != "sum" and "sum" in k for k in keys)  # the kernel row
    o = tl.empty(())
    builds = _Builds(monkeypatch)
    tl.sum(x, out=o)
    assert builds.n == 1 and o.item() == 45.0
    s = tl.Stream(device="cpu")
    with tl.stream(s):
        y = x * 2.0
        z = tl.sum(y)  # queued after the multiply
        builds.n = 0
        tl.sum(x)
        assert builds.n == 1  # a user stream is current: the full path (it enqueues)
    s.synchronize()
    assert z.item() == 90.0
    with tl.stream(s):
        _cpu_streams.sleep(0.05)
        w = x * 3.0  # queued behind the sleep
    builds.n = 0
    assert tl.sum(w).item() == 135.0  # default stream again: the plan, after w's writer
    assert builds.n == 0


def test_reduction_plan_results_are_fresh(monkeypatch):
    x = tl.asarray(np.arange(12, dtype=np.int32)).reshape((3, 4))
    monkeypatch.setattr(_red, "_plans", {})
    a = tl.sum(x, axis=1)
    b = tl.sum(x, axis=1)
    b[0] = 100
    assert a.tolist() == [6, 22, 38] and b.tolist() == [100, 22, 38]
    assert b.dtype == tl.int64 and b.stride() == a.stride() and b.is_contiguous()


# ---------------------------------------------------------------- where (three tensor operands)
@pytest.mark.parametrize("dtypes", [(tl.bool, tl.float32, tl.float32),
                                    (tl.bool, tl.int8, tl.float64),
                                    (tl.bool, tl.float16, tl.bool),
                                    (tl.uint8, tl.complex64, tl.int32)], ids=str)
def test_where_matches_the_full_path(dtypes, monkeypatch):
    dc, da, db = dtypes
    rng = np.random.default_rng(1)
    c = tl.asarray(rng.integers(0, 2, 12)).astype(dc).reshape((3, 4))
    a = tl.asarray(rng.standard_normal(12) * 50).astype(da).reshape((3, 4))
    b = tl.asarray(rng.standard_normal(12) * 50).astype(db).reshape((3, 4))
    full = _outcome(tl.where, _strided(c), _strided(a), _strided(b))
    for _ in range(HOT_CALLS + 1):
        _outcome(tl.where, c, a, b)
    builds = _Builds(monkeypatch)
    fast = _outcome(tl.where, c, a, b)
    monkeypatch.undo()
    _check_same_outcome(fast, full)
    if full[0] == "ok":
        assert builds.n == 0 and fast[1].stride() == (4, 1)


def test_where_declines_broadcast_operands_and_strides(monkeypatch):
    c = tl.asarray(np.array([True, False, True]))
    a = tl.asarray(np.array([1.0, 2.0, 3.0], np.float32))
    for _ in range(HOT_CALLS + 1):
        tl.where(c, a, a)
    builds = _Builds(monkeypatch)
    assert tl.where(c, a, a[:1]).tolist() == [1.0, 1.0, 3.0]
    assert builds.n == 1  # a broadcast tensor operand takes the full path
    # (a Python scalar operand has a fast path of its own once its combination is hot, so
    # whether this call builds an iterator depends on earlier calls: only its value is checked)
    assert tl.where(c, a, 0.0).tolist() == [1.0, 0.0, 3.0]
    # contiguous with an odd stride on a size-1 dim: the result is still C order
    col = a[:, None]
    cc = c[:, None]
    ref = tl.where(_strided(cc), _strided(col), _strided(col))
    for _ in range(HOT_CALLS + 1):
        got = tl.where(cc, col, col)
    monkeypatch.undo()
    assert got.stride() == ref.stride() and got.tolist() == ref.tolist()


def test_scalar_operand_result_is_c_order_on_odd_size1_strides():
    a = tl.asarray(np.array([1.0, 2.0, 3.0], np.float32))[:, None]
    for _ in range(HOT_CALLS + 1):
        got = a * 2.0
    assert got.stride() == (1, 1) and got.tolist() == [[2.0], [4.0], [6.0]]


# ---------------------------------------------------------------- x[idx], x[mask]
import tensorlib.ops.indexing as _adv  # noqa: E402

@pytest.mark.parametrize("dtype", [tl.float32, tl.int64, tl.bool, tl.float16, tl.complex128,
                                   tl.uint8], ids=str)
def test_getitem_index_and_mask_match_the_full_path(dtype, monkeypatch):
    rng = np.random.default_rng(2)
    base = tl.asarray(rng.standard_normal(60) * 100).astype(dtype)
    cases = [base, base.reshape((12, 5)), base.reshape((3, 4, 5)), base[10:40]]
    for x in cases:
        n0 = x.shape[0]
        idxs = [tl.asarray(rng.integers(-n0, n0, 7)), tl.asarray(np.array([0], np.int32)),
                tl.asarray(rng.integers(0, n0, 9).astype(np.int32))]
        mask = tl.asarray(rng.integers(0, 2, x.shape).astype(bool))
        for key in idxs + [mask, tl.asarray(np.zeros(x.shape, bool))]:
            full = _outcome(lambda: _strided(x)[key].contiguous())
            plans = []
            real_plan = _adv._plan
            monkeypatch.setattr(_adv, "_plan", lambda *a: plans.append(1) or real_plan(*a))
            fast = _outcome(lambda: x[key])
            monkeypatch.undo()
            assert not plans  # served without parsing/planning the key
            _check_same_outcome(fast, full)
            xn = x.astype(tl.complex128 if dtype.kind == "c" else tl.float64).numpy()
            np.testing.assert_array_equal(
                fast[1].astype(tl.complex128 if dtype.kind == "c" else tl.float64).numpy(),
                xn[key.numpy()])
            assert fast[1].is_contiguous() and fast[1].stride() == tl.empty(fast[1].shape).stride()


def test_getitem_fast_errors_and_declines():
    x = tl.asarray(np.arange(10, dtype=np.float32))
    with pytest.raises(IndexError, match="index 10 is out of bounds for dimension 0 with size 10"):
        x[tl.asarray(np.array([1, 10]))]
    with pytest.raises(IndexError, match="index -11 is out of bounds"):
        x[tl.asarray(np.array([-11]))]
    with pytest.raises(IndexError):
        x[tl.asarray(np.ones(4, bool))]  # mask shape mismatch
    assert x[tl.asarray(np.array([], np.int64))].shape == (0,)
    assert x[tl.asarray(np.array(3))].item() == 3.0  # 0-d index: a view, basic indexing
    assert x[tl.asarray(np.array([[1, 2], [3, 4]]))].shape == (2, 2)
    assert x[tl.asarray(np.array(True))].shape == (1, 10)
    s = tl.Stream(device="cpu")
    with tl.stream(s):
        y = x * 2.0
        z = y[tl.asarray(np.array([9, 0]))]  # must see the queued multiply
    s.synchronize()
    assert z.tolist() == [18.0, 0.0]


# ---------------------------------------------------------------- concat
def test_concat_matches_the_full_path(monkeypatch):
    rng = np.random.default_rng(4)
    for dtype in (tl.float32, tl.int16, tl.bool, tl.complex64):
        a = tl.asarray(rng.standard_normal((2, 3)) * 10).astype(dtype)
        b = tl.asarray(rng.standard_normal((4, 3)) * 10).astype(dtype)
        e = a[:0]
        c = tl.asarray(rng.standard_normal((2, 3, 4)) * 10).astype(dtype)
        for arrays, axis in (([a, b], 0), ([a, e, b], -2), ([a[0], b[1]], 0),
                             ([a[None], b[None, :2]], 1), ([a], 0),
                             # inner axes: each input a band of every output row
                             ([a, a[:, :1].contiguous(), a[:, :0]], 1), ([b, b], -1),
                             ([c, c[:, :1].contiguous()], 1), ([c, c[..., :3].contiguous()], 2),
                             ([e, e], 1), ([c[:, :, :0], c[:, :, :0]], 2)):
            full = _outcome(lambda: tl.concat([_strided(t) for t in arrays], axis=axis))
            builds = _Builds(monkeypatch)
            fast = _outcome(lambda: tl.concat(arrays, axis=axis))
            monkeypatch.undo()
            _check_same_outcome(fast, full)
            assert fast[1].stride() == full[1].stride()
            assert builds.n == 0
    a = tl.asarray(np.arange(6, dtype=np.float32)).reshape((2, 3))
    with pytest.raises(ValueError, match="does not match"):
        tl.concat([a, a.reshape((3, 2))])
    with pytest.raises(ValueError, match="0-d"):
        tl.concat([a[0, 0], a[0, 0]])
    assert tl.concat([a, a.astype(tl.float64)]).dtype == tl.float64  # mixed: general path
    assert tl.concat([a, a], axis=1).tolist() == [[0, 1, 2, 0, 1, 2], [3, 4, 5, 3, 4, 5]]
    with tl.profiler.profile() as prof:
        tl.concat([a, a])
    assert "copy_" in {r.key for r in prof.key_averages()}  # dispatched as before


# ---------------------------------------------------------------- cumsum / cumprod (plans)
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", [tl.float32, tl.float16, tl.int32, tl.bool, tl.complex64],
                         ids=str)
def test_scan_plans_match_the_full_path(name, dtype, monkeypatch):
    fn = getattr(tl, name)
    for xname, x in _red_inputs(dtype).items():
        for axis in (None, 0, -1, 5):
            for out_dtype in (None, tl.float64):
                if out_dtype is not None and dtype.kind == "c":
                    continue
                monkeypatch.setattr(_red, "_plans", {})
                full = _outcome(lambda: fn(x, axis=axis, dtype=out_dtype))
                builds = _Builds(monkeypatch)
                fast = _outcome(lambda: fn(x, axis=axis, dtype=out_dtype))
                n = builds.n
                monkeypatch.undo()
                _check_same_outcome(fast, full)
                if full[0] == "ok":
                    assert fast[1].stride() == full[1].stride()
                copied = axis is None and not x.is_contiguous()
                if full[0] == "ok" and x.size and not copied:
                    assert n == 0, (name, xname, axis)


def test_scan_plans_with_out_and_cumulative_sum_take_the_full_path(monkeypatch):
    x = tl.asarray(np.arange(1, 6, dtype=np.float32))
    monkeypatch.setattr(_red, "_plans", {})
    tl.cumsum(x)
    o = tl.empty((5,))
    builds = _Builds(monkeypatch)
    tl.cumsum(x, out=o)
    r = tl.cumulative_sum(x, include_initial=True)
    assert builds.n == 2
    monkeypatch.undo()
    assert o.tolist() == [1, 3, 6, 10, 15] and r.tolist() == [0, 1, 3, 6, 10, 15]


# ---------------------------------------------------------------- linspace, arange
@pytest.mark.parametrize("dtype", [None, tl.float32, tl.float64, tl.float16, tl.int32,
                                   tl.uint8, tl.complex64], ids=str)
def test_linspace_and_arange_match_the_general_path(dtype):
    for start, stop, num in ((0, 1, 1000), (-3.5, 7.25, 13), (0, 10, 5), (2, 2, 1), (0, 1, 0),
                             (1e-3, 255, 7)):
        got = tl.linspace(start, stop, num, dtype=dtype)
        # the general path: empty + range fill + the end point through __setitem__
        d = got.dtype
        ref = tl.empty((num,), dtype=d)
        step = (stop - start) / (num - 1) if num > 1 else 0.0
        ref._fill_range(start, step)
        if num > 1:
            ref[num - 1] = stop
        _same(got, ref)
        with tl.profiler.profile():  # a dispatch key set: the general path itself
            again = tl.linspace(start, stop, num, dtype=dtype)
        _same(again, ref)
    a = tl.arange(2, 30, 3, dtype=dtype)
    assert a.shape == (10,) and a.stride() == (1,)
    np.testing.assert_array_equal(a.astype(tl.float64).numpy(), np.arange(2, 30, 3))
    with pytest.raises(ValueError, match="non-negative"):
        tl.linspace(0, 1, -1)
    with pytest.raises(ValueError, match="nonzero"):
        tl.arange(0, 1, 0)


# ---------------------------------------------------------------- property test (hypothesis)
from hypothesis import given, settings, strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

_H_OPS = [("add", "float32"), ("multiply", "int32"), ("less", "float64"),
          ("subtract", "uint8"), ("divide", "int16")]


@settings(max_examples=60, deadline=None)
@given(case=st.sampled_from(_H_OPS), first=st.booleans(), data=st.data(),
       scalar=st.one_of(st.integers(-2 ** 70, 2 ** 70), st.floats(allow_nan=True),
                        st.booleans(), st.complex_numbers(max_magnitude=1e10)))
def test_scalar_operand_property(case, first, data, scalar):
    name, dtype_name = case
    arr = data.draw(hnp.arrays(np.dtype(dtype_name), st.integers(1, 40)))
    fn = getattr(tl, name)
    t = tl.asarray(arr)
    if not _warm_scalar(fn, t, scalar, first):
        return
    s_view = _strided(t)
    args = (scalar, t) if first else (t, scalar)
    full = _outcome(fn, *((scalar, s_view) if first else (s_view, scalar)))
    calls = []
    real = TensorIterator.build.__func__
    TensorIterator.build = classmethod(lambda cls, *a, **k: calls.append(1) or real(cls, *a, **k))
    try:
        fast = _outcome(fn, *args)
    finally:
        TensorIterator.build = classmethod(real)
    _check_same_outcome(fast, full)
    declined = (POINTWISE[name].int_to_float and fast[0] == "ok"
                and tl.result_type(t.dtype, scalar).kind in "biu")
    assert len(calls) == int(declined)


def test_reduction_first_seen_on_a_user_stream_is_planned_later(monkeypatch):
    x = tl.asarray(np.arange(7, dtype=np.float32))
    monkeypatch.setattr(_red, "_plans", {})
    s = tl.Stream(device="cpu")
    with tl.stream(s):
        r = tl.max(x)
    s.synchronize()
    assert r.item() == 6.0 and not _red._plans
    tl.max(x)
    builds = _Builds(monkeypatch)
    assert tl.max(x).item() == 6.0 and builds.n == 0


# ---------------------------------------------------------------- one-element tensor operands
def _one_element(t, value, how):
    """A tensor holding ``value`` (t's dtype) as a 0-d tensor, a (1, 1) tensor, or broadcast
    to t's shape with stride 0 (what a reduction's gradient looks like)."""
    s = tl.asarray(np.array(value, t.dtype.np_dtype if t.dtype.itemsize != 2 else np.float32)
                   ).astype(t.dtype)
    if how == "0d":
        return s
    if how == "1x1":
        return tl.reshape(s, (1,) * min(t.ndim, 2))
    return tl.broadcast_to(s, t.shape)


@pytest.mark.parametrize("how", ["0d", "1x1", "expanded"])
@pytest.mark.parametrize("name, dtype", CASES, ids=lambda x: str(x))
def test_one_element_tensor_operand_matches_the_full_path(name, dtype, how, monkeypatch):
    # x * s with s a one-element tensor of x's dtype is served as x * s.item(); the answer
    # must be the full path's bit for bit (the same operand with a second, strided element
    # forces the full path) and no TensorIterator may be built once the combination is hot
    if name not in POINTWISE:
        pytest.skip(f"{name} is not a pointwise op here")
    fn = getattr(tl, name)
    t = _tensor(dtype)
    for value in _VALUES[dtype.kind][:4]:
        s = _one_element(t, value, how)
        for first in (False, True):
            args = (s, t) if first else (t, s)
            ok = True
            for _ in range(HOT_CALLS + 1):
                try:
                    with np.errstate(all="ignore"):
                        fn(*args)
                except Exception:  # noqa: BLE001 - invalid for this op: both paths refuse
                    ok = False
                    break
            pair = tl.empty((2,), dtype=dtype)
            pair[0] = s.reshape(()) if how != "expanded" else s[0]
            pair[1] = pair[0]
            wide = tl.broadcast_to(pair[0:1], t.shape) if how != "0d" else pair[0:1]
            ref_args = (wide, _strided(t)) if first else (_strided(t), wide)
            full = _outcome(fn, *ref_args)
            builds = _Builds(monkeypatch)
            fast = _outcome(fn, *args)
            monkeypatch.undo()
            _check_same_outcome(fast, full)
            if ok and dtype.itemsize != 2 and not POINTWISE[name].int_to_float:
                assert builds.n == 0, f"{name}({how}, first={first}): the full path ran"


def test_one_element_operand_with_requires_grad_keeps_the_fast_path(monkeypatch):
    # below the Autograd key only the backend counts: a grad-requiring operand beside a plain
    # one (a backward formula's grad * saved input) must not fall to the full path
    x = tl.asarray(np.linspace(-1, 1, 1000, dtype=np.float32)).requires_grad_()
    g = tl.asarray(np.linspace(0, 1, 1000, dtype=np.float32))
    with tl.no_grad():
        for _ in range(HOT_CALLS + 1):
            g * x
        builds = _Builds(monkeypatch)
        out = g * x
        monkeypatch.undo()
    assert builds.n == 0
    np.testing.assert_array_equal(out.numpy(), g.numpy() * x.detach().numpy())


def test_one_element_operand_waits_for_its_stream():
    # the value is read on the host: under a user CPU stream the full path (stream-ordered)
    # must run instead, so a value written by queued work is seen
    t = tl.asarray(np.ones(1000, np.float32))
    s = tl.asarray(np.float32(1.0))
    for _ in range(HOT_CALLS + 1):
        t * s
    stream = tl.Stream(device="cpu")
    with tl.stream(stream):
        s.fill_(3.0)
        out = t * s
    stream.synchronize()
    np.testing.assert_array_equal(out.numpy(), np.full(1000, 3.0, np.float32))


def test_one_element_operand_after_streams_were_used(monkeypatch):
    # once any CPU stream was used the process launches through the slow path for good; on the
    # default stream the one-element operand still skips the TensorIterator, and its value is
    # read after the queued write that produced it
    stream = tl.Stream(device="cpu")
    s = tl.asarray(np.float32(1.0))
    with tl.stream(stream):
        s.fill_(4.0)
    t = tl.asarray(np.ones(1000, np.float32))
    for _ in range(HOT_CALLS + 1):
        t * tl.asarray(np.float32(1.0))
    assert _cpu_streams._slow
    builds = _Builds(monkeypatch)
    out = t * s  # no synchronize: typed() waits for the queued fill
    monkeypatch.undo()
    assert builds.n == 0
    np.testing.assert_array_equal(out.numpy(), np.full(1000, 4.0, np.float32))


# ---------------------------------------------------------------- x[mask]: both small routes
import tensorlib.kernels.cpu.indexing as _kidx  # noqa: E402


@pytest.mark.parametrize("route", ["compress", "compact", "raw"])
def test_small_mask_routes_match_numpy(route, monkeypatch):
    # Below the grain a dense x[mask] runs NumPy's compress until compact_serial is compiled
    # for the word size, then that kernel (into n + 1 slots), and once its raw-address
    # wrappers are compiled too, those (count_raw, compact_<word>): all move the same bits.
    compiled = route != "compress"
    monkeypatch.setattr(_kidx, "_compact_words", set())
    monkeypatch.setattr(_kidx, "_compact_raws", {})
    monkeypatch.setattr(_kidx, "kernel_ready", lambda *a: compiled)
    if route == "compact":
        monkeypatch.setattr(_kidx, "_compact_raw", lambda item, work: None)
    rng = np.random.default_rng(7)
    for dtype in (tl.float32, tl.float16, tl.int64, tl.bool, tl.uint8, tl.complex128):
        base = tl.asarray(rng.standard_normal(90) * 100).astype(dtype)
        for x in (base, base[13:73].reshape((6, 10)), base[:1]):
            xn = x.numpy()
            for mn in (rng.integers(0, 2, x.shape).astype(bool), np.zeros(x.shape, bool),
                       np.ones(x.shape, bool)):
                got = x[tl.asarray(mn)]
                want = xn[mn]
                assert got.dtype == dtype and got.shape == want.shape
                assert got.stride() == (1,)
                np.testing.assert_array_equal(_bits(got.numpy()), _bits(want))
    words = {np.uint8, np.uint16, np.uint32, np.uint64, np.complex128}
    assert _kidx._compact_words == (words if route == "compact" else set())
    assert set(_kidx._compact_raws) == ({1, 2, 4, 8, 16} if route == "raw" else set())


def test_small_mask_on_a_user_stream_sees_queued_writes():
    x = tl.asarray(np.arange(10, dtype=np.float32))
    m = tl.asarray(np.arange(10) % 3 == 0)
    s = tl.Stream(device="cpu")
    with tl.stream(s):
        y = x * 2.0
        z = y[m]  # must see the queued multiply
    s.synchronize()
    assert z.tolist() == [0.0, 6.0, 12.0, 18.0]


def test_small_take_matches_numpy_for_offsets_and_rows():
    rng = np.random.default_rng(8)
    base = tl.asarray(rng.standard_normal(200).astype(np.float32))
    for x in (base, base[17:117], base[5:105].reshape((20, 5))):
        xn = x.numpy()
        for ixn in (rng.integers(-x.shape[0], x.shape[0], 33), np.array([], np.int64),
                    rng.integers(0, x.shape[0], 5).astype(np.int32)):
            ix = tl.asarray(ixn)
            got = x[ix]
            np.testing.assert_array_equal(got.numpy(), xn[ixn])
            assert got.is_contiguous()
            if x.ndim == 1 and ixn.dtype == np.int64:
                np.testing.assert_array_equal(tl.take(x, ix).numpy(), np.take(xn, ixn))



# ---------------------------------------------------------------- sort: the zero-run fix-up
@pytest.mark.usefixtures("kernel_sort_routes")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_small_sort_zero_and_nan_runs_keep_input_bits(dtype):
    # One row: the fix-up is skipped when the sorted row cannot hold a zero (smallest > 0 or
    # largest < 0); every other row still gets its nan and zero runs in input order.
    rng = np.random.default_rng(9)
    nan2 = np.array([np.nan], dtype).view(np.uint32 if dtype == np.float32 else np.uint64)
    nan2 = (nan2 | 1).view(dtype)  # a nan with its own payload
    pos = rng.random(50).astype(dtype) + dtype(0.5)
    rows = [pos, -pos, np.concatenate([pos, [dtype(0.0), dtype(-0.0), dtype(0.0)]]),
            np.concatenate([-pos, [dtype(-0.0), dtype(0.0)], nan2, [np.nan]]),
            np.concatenate([pos, nan2]), np.concatenate([[np.nan], -pos]),
            np.array([dtype(-0.0)]), np.array([np.nan], dtype)]
    for xn in rows:
        xn = rng.permutation(xn.astype(dtype))
        x = tl.asarray(xn)
        for desc in (False, True):
            want = np.sort(xn, kind="stable")
            if desc:
                # the exact reverse of the ascending order, equal elements in input order
                want = np.sort(xn[::-1], kind="stable")[::-1]
            got = tl.sort(x, descending=desc).numpy()
            np.testing.assert_array_equal(_bits(got), _bits(np.ascontiguousarray(want)))
            order = tl.argsort(x, descending=desc).numpy()
            np.testing.assert_array_equal(_bits(xn[order]), _bits(got))
