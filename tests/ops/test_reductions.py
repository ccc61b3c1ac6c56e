"""Reductions and scans against NumPy: every dtype for sum, fewer for the rest (each dtype x op
is a kernel compile), every layout from helpers.arrays, axis combinations, keepdims, nan/inf,
empty reductions, out=, the parallel paths, and every error case."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tensorlib as tl
from helpers import ALL_DTYPES, arrays, host, on_device, to_numpy

_HALF = ("float16", "bfloat16")
_EPS = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 2.0 ** -23,
        "float64": 2.0 ** -52, "complex64": 2.0 ** -23, "complex128": 2.0 ** -52}


# ---------------------------------------------------------------- strategies and oracles
def _elements(dtype, bound=100.0, nan=False):
    """Bounded values for float/complex dtypes (so sums cannot overflow); None = all values."""
    if dtype in ("float16", "bfloat16", "float32", "float64"):
        width = {"float16": 16, "float64": 64}.get(dtype, 32)
        if nan:
            return st.floats(width=width, allow_nan=True, allow_infinity=True)
        return st.floats(-bound, bound, width=width)
    if dtype in ("complex64", "complex128"):
        return st.complex_numbers(max_magnitude=bound, width=64 if dtype == "complex64" else 128)
    return None


def _array(dtype, **kw):
    # bfloat16 is drawn as float32 values and converted (NumPy has no bfloat16).
    return arrays("float32" if dtype == "bfloat16" else dtype, **kw)


def _tensor(a, dtype):
    t = tl.from_numpy(a)
    return t.astype(tl.bfloat16) if dtype == "bfloat16" else t


def _values(t, a):
    """The exact input values as NumPy (bfloat16 rounded once, widened to float32)."""
    return to_numpy(t) if t.dtype is tl.bfloat16 else a


@st.composite
def _axis(draw, ndim, allow_tuple=True):
    """None, an int (negative allowed) or a tuple of distinct ints in any order."""
    kinds = ["none", "int"] + (["tuple"] if allow_tuple else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "none":
        return None
    if ndim == 0:
        return draw(st.sampled_from([0, -1])) if kind == "int" else ()
    if kind == "int":
        return draw(st.integers(-ndim, ndim - 1))
    dims = draw(st.permutations(range(ndim)))
    k = draw(st.integers(0, ndim))
    return tuple(d - ndim if draw(st.booleans()) else d for d in dims[:k])


def _np_axis(axis, ndim):
    # NumPy's mean/var reject an axis on 0-d arrays; reducing a 0-d tensor over 0 is a no-op.
    return None if ndim == 0 else axis


def _count(shape, axis):
    if axis is None:
        return math.prod(shape)
    axes = (axis,) if isinstance(axis, int) else axis
    return math.prod(shape[a] for a in axes) if shape else 1


def _np_result(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(fn(*args, **kw))


def _check_dtype_shape(got, expected_shape, dtype):
    assert got.dtype.name == dtype, f"dtype {got.dtype.name} != {dtype}"
    assert got.shape == tuple(expected_shape), f"shape {got.shape} != {expected_shape}"


def _assert_sum_close(got, expected, abs_sum, n, out_dtype, acc_dtype):
    """|got - expected| within what two summation orders may differ by: 2 n eps sum|x|, plus
    one rounding of the result to its dtype."""
    g = to_numpy(got).astype(np.complex128)
    e = np.asarray(expected).astype(np.complex128)
    tol = (2 * max(n, 1) * _EPS[acc_dtype] * abs_sum
           + 2 * _EPS.get(out_dtype, 0.0) * np.abs(e) + 1e-300)
    bad = ~(np.abs(g - e) <= tol) & ~(np.isnan(g) & np.isnan(e)) & ~(g == e)
    tol = np.broadcast_to(tol, bad.shape)
    assert not bad.any(), f"got {g[bad]}, expected {e[bad]} (tolerance {tol[bad]})"


# ---------------------------------------------------------------- sum (every dtype)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@given(data=st.data())
def test_sum_all_dtypes(dtype, data):
    a = data.draw(_array(dtype, elements=_elements(dtype)))
    axis = data.draw(_axis(a.ndim))
    keepdims = data.draw(st.booleans())
    t = _tensor(a, dtype)
    v = _values(t, a)
    got = tl.sum(t, axis=axis, keepdims=keepdims)
    if dtype in _HALF:
        expected = _np_result(np.sum, v.astype(np.float32), axis=axis, keepdims=keepdims)
        want, acc = dtype, "float32"
    else:
        expected = _np_result(np.sum, v, axis=axis, keepdims=keepdims)
        want, acc = expected.dtype.name, dtype
    _check_dtype_shape(got, expected.shape, want)
    if expected.dtype.kind in "biu":
        np.testing.assert_array_equal(to_numpy(got), expected)
    else:
        abs_sum = _np_result(np.sum, np.abs(v.astype(np.complex128)), axis=axis,
                             keepdims=keepdims)
        _assert_sum_close(got, expected, abs_sum, _count(a.shape, axis), want, acc)


@pytest.mark.parametrize("dtype,arg,expected", [
    ("int8", "float32", "float32"), ("float32", "int64", "int64"), ("bool", "bool", "bool")])
def test_sum_dtype_argument(dtype, arg, expected):
    a = (np.arange(24) % 7 - 2).reshape(2, 3, 4).astype(dtype) * (1.5 if dtype[0] == "f" else 1)
    got = tl.sum(tl.from_numpy(a), axis=1, dtype=arg)
    want = np.sum(a, axis=1, dtype=arg)
    _check_dtype_shape(got, want.shape, expected)
    np.testing.assert_allclose(to_numpy(got).astype(np.float64), want.astype(np.float64))


def test_sum_precision_long_rows():
    # Blocked partial sums: a million float32 values stay close to the float64 sum.
    rng = np.random.default_rng(0)
    a = (rng.random(1_000_003, dtype=np.float32) + 1).astype(np.float32)
    exact = a.astype(np.float64).sum()
    assert abs(float(tl.sum(tl.from_numpy(a))) - exact) / exact < 1e-6
    b = a[:1_000_000].reshape(100, 10_000)
    got = to_numpy(tl.sum(tl.from_numpy(b), axis=1)).astype(np.float64)
    np.testing.assert_allclose(got, b.astype(np.float64).sum(axis=1), rtol=1e-6)


def test_sum_nan_inf():
    a = np.array([[1.0, np.inf, 2.0], [np.inf, -np.inf, 0.0], [np.nan, 1.0, 1.0]], np.float32)
    for axis in (None, 0, 1):
        np.testing.assert_array_equal(to_numpy(tl.sum(tl.from_numpy(a), axis=axis)),
                                      np.sum(a, axis=axis))


# ---------------------------------------------------------------- prod
@pytest.mark.parametrize("dtype", ["int32", "uint8", "float32", "complex64"])
@given(data=st.data())
def test_prod(dtype, data):
    elements = None
    if dtype == "float32":
        elements = st.floats(0.5, 1.5, width=32) | st.floats(-1.5, -0.5, width=32)
    elif dtype == "complex64":
        elements = st.sampled_from([1 + 0j, -1j, 0.5 + 0.5j, 1.25 - 0.25j, -1 + 0.5j])
    a = data.draw(arrays(dtype, max_side=4, elements=elements))
    axis = data.draw(_axis(a.ndim))
    keepdims = data.draw(st.booleans())
    got = tl.prod(tl.from_numpy(a), axis=axis, keepdims=keepdims)
    expected = _np_result(np.prod, a, axis=axis, keepdims=keepdims)
    _check_dtype_shape(got, expected.shape, expected.dtype.name)
    if expected.dtype.kind in "iu":
        np.testing.assert_array_equal(to_numpy(got), expected)
    else:
        n = max(_count(a.shape, axis), 1)
        np.testing.assert_allclose(to_numpy(got), expected, rtol=4 * n * _EPS[dtype], atol=0)


# ---------------------------------------------------------------- mean
@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "float16", "complex64"])
@given(data=st.data())
def test_mean(dtype, data):
    a = data.draw(arrays(dtype, elements=_elements(dtype)))
    axis = data.draw(_axis(a.ndim))
    keepdims = data.draw(st.booleans())
    got = tl.mean(tl.from_numpy(a), axis=axis, keepdims=keepdims)
    npax = _np_axis(axis, a.ndim)
    src = a.astype(np.float64) if dtype == "int16" else a
    expected = _np_result(np.mean, src, axis=npax, keepdims=keepdims)
    want = {"int16": "float32"}.get(dtype, dtype)
    _check_dtype_shape(got, expected.shape, want)
    n = _count(a.shape, npax)
    abs_sum = _np_result(np.sum, np.abs(a.astype(np.complex128)), axis=npax, keepdims=keepdims)
    acc = "float32" if want in _HALF else want
    _assert_sum_close(got, expected, abs_sum / max(n, 1), n, want, acc)


def test_mean_of_large_integers():
    # Integers are averaged in float64 and only the result is rounded to float32.
    a = np.array([2 ** 40 + 1, -(2 ** 40), 5], np.int64)
    got = tl.mean(tl.from_numpy(a))
    assert got.dtype is tl.float32 and got.item() == 2.0


# ---------------------------------------------------------------- max / min
@pytest.mark.parametrize("op,dtype", [
    ("max", "bool"), ("max", "int8"), ("max", "uint64"), ("max", "float16"),
    ("max", "bfloat16"), ("max", "float32"), ("min", "int32"), ("min", "float64"),
    ("min", "bool")])
@given(data=st.data())
def test_max_min(op, dtype, data):
    a = data.draw(_array(dtype, elements=_elements(dtype, nan=True)))
    axis = data.draw(_axis(a.ndim))
    keepdims = data.draw(st.booleans())
    t = _tensor(a, dtype)
    v = _values(t, a)
    fn = getattr(tl, op)
    try:
        expected = _np_result(getattr(np, op), v, axis=axis, keepdims=keepdims)
    except ValueError:
        with pytest.raises(ValueError, match=op):
            fn(t, axis=axis, keepdims=keepdims)
        return
    got = fn(t, axis=axis, keepdims=keepdims)
    _check_dtype_shape(got, expected.shape, dtype)
    np.testing.assert_array_equal(to_numpy(got), expected)  # exact, nan in the same places


def test_max_min_nan_and_aliases():
    a = np.array([[1.0, np.nan, 3.0], [-np.inf, 2.0, 0.5]], np.float32)
    t = tl.from_numpy(a)
    np.testing.assert_array_equal(to_numpy(tl.max(t, axis=1)), [np.nan, 2.0])
    np.testing.assert_array_equal(to_numpy(tl.amin(t.astype(tl.float64), axis=0)),
                                  [-np.inf, np.nan, 0.5])
    np.testing.assert_array_equal(to_numpy(t.amax(axis=0)), np.max(a, axis=0))
    assert math.isnan(t.max().item())


# ---------------------------------------------------------------- argmax / argmin
@pytest.mark.parametrize("op,dtype", [
    ("argmax", "float32"), ("argmax", "int16"), ("argmax", "bool"), ("argmin", "float64"),
    ("argmin", "uint8")])
@given(data=st.data())
def test_argmax_argmin(op, dtype, data):
    elements = (st.sampled_from([0.0, 1.0, -1.0, 2.0, np.nan, np.inf, -np.inf])
                if dtype.startswith("float") else None)
    a = data.draw(arrays(dtype, elements=elements))
    axis = data.draw(_axis(a.ndim, allow_tuple=False))
    keepdims = data.draw(st.booleans())
    t = tl.from_numpy(a)
    fn = getattr(tl, op)
    try:
        expected = _np_result(getattr(np, op), a, axis=_np_axis(axis, a.ndim),
                              keepdims=keepdims)
    except ValueError:
        with pytest.raises(ValueError, match=op):
            fn(t, axis=axis, keepdims=keepdims)
        return
    got = fn(t, axis=axis, keepdims=keepdims)
    _check_dtype_shape(got, expected.shape, "int64")
    np.testing.assert_array_equal(to_numpy(got), expected)


def test_argmax_first_occurrence_nan_ties_and_extremes(device):
    # one body on every device (the CUDA kernels: kernels/cuda/reduction.py)
    a = np.array([[3, 1, 3, 0], [2, 2, 2, 2]], np.float32)
    t = on_device(a, device)
    np.testing.assert_array_equal(host(tl.argmax(t, axis=1), device), [0, 0])
    np.testing.assert_array_equal(host(t.argmin(axis=1), device), [3, 0])
    assert tl.argmax(t).item() == 0 and tl.argmin(t).item() == 3
    b = np.array([1.0, np.nan, 5.0, np.nan], np.float32)
    assert tl.argmax(on_device(b, device)).item() == 1
    assert tl.argmin(on_device(b, device)).item() == 1
    # Flat index in C order whatever the memory layout (c in Fortran order).
    c = on_device(np.arange(12, dtype=np.float32).reshape(4, 3), device).T
    assert tl.argmax(c).item() == 11
    assert tl.argmax(c, keepdims=True).shape == (1, 1)
    f = np.array([[1.0, np.nan, 5.0, np.nan], [2.0, 7.0, 7.0, 1.0],
                  [-np.inf, -np.inf, -np.inf, -np.inf], [np.inf, np.inf, 0.0, np.inf]],
                 np.float32)
    g = on_device(f, device)
    np.testing.assert_array_equal(host(tl.argmax(g, axis=1), device), [1, 1, 0, 0])
    np.testing.assert_array_equal(host(tl.argmin(g, axis=1), device), [1, 3, 0, 2])
    assert tl.argmax(g).item() == 1
    assert tl.argmin(g.T).item() == np.argmin(f.T) == 4  # flat C-order index of g.T
    i64 = np.iinfo(np.int64)
    big = on_device(np.array([[i64.min, i64.min], [i64.max, i64.max]], np.int64), device)
    np.testing.assert_array_equal(host(tl.argmax(big, axis=1), device), [0, 0])
    np.testing.assert_array_equal(host(tl.argmin(big, axis=1), device), [0, 0])
    np.testing.assert_array_equal(host(tl.argmax(big, axis=0), device), [1, 1])
    z = on_device(np.zeros((3, 6), bool), device)
    np.testing.assert_array_equal(host(tl.argmax(z, axis=1), device), [0, 0, 0])


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32", "int64", "uint64", "bool"])
@pytest.mark.parametrize("n", [1, 1023, 1024, 1025, 4097, 9000])
def test_argmax_argmin_integer_rows_by_blocks(dtype, n):
    """Integer / bool rows go by blocks of 4 KiB, at least 1024 elements (the block extremes,
    then the first index in the first block holding the overall one): ties across and inside
    blocks, extremes at block edges and the type's limits give NumPy's first index, for flat
    and row calls."""
    rng = np.random.default_rng(n)
    info = None if dtype == "bool" else np.iinfo(dtype)
    block = max(1024, 4096 // np.dtype(dtype).itemsize)
    lo, hi = (0, 2) if info is None else (max(info.min, -50), min(info.max, 50))
    a = rng.integers(lo, hi, (3, n)).astype(dtype)
    if info is not None and n > 3:
        a[0, [n - 1, n // 2]] = info.max            # a tie: the earlier block's index wins
        a[1, [(block - 1) % n, n - 1]] = info.min    # at a block edge, and last
        a[2, :] = a[2, 0]                            # all equal: index 0
    t = tl.asarray(a)
    for op in ("argmax", "argmin"):
        fn, ref = getattr(tl, op), getattr(np, op)
        np.testing.assert_array_equal(to_numpy(fn(t, axis=1)), ref(a, axis=1))
        for row in range(3):
            assert fn(t[row]).item() == ref(a[row])
        assert fn(t).item() == ref(a)


@pytest.mark.parametrize("n", [1, 63, 64, 65, 4200, 9000])
def test_argmax_argmin_bool_rows_first_block_of_64(n):
    """bool rows are scanned from a first block of 64 elements, then 4096-blocks: the one
    True (False for argmin) at each block edge, last, or nowhere gives NumPy's index, in
    every row of a 2-D call, in a flat call and reversed."""
    spots = sorted({p for p in (0, 62, 63, 64, 65, 4159, 4160, 4161, 8255, 8256, n - 1)
                    if p < n})
    a = np.zeros((len(spots) + 1, n), bool)
    for row, p in enumerate(spots):
        a[row, p] = True
    for arr in (a, ~a):
        t = tl.asarray(arr)
        for op in ("argmax", "argmin"):
            fn, ref = getattr(tl, op), getattr(np, op)
            np.testing.assert_array_equal(to_numpy(fn(t, axis=1)), ref(arr, axis=1))
            np.testing.assert_array_equal(to_numpy(fn(t[:, ::-1], axis=1)),
                                          ref(arr[:, ::-1], axis=1))
            for row in range(len(spots) + 1):
                assert fn(t[row]).item() == ref(arr[row])


@pytest.mark.parametrize("cold", [False, "always"])
@pytest.mark.parametrize("shape", [(7,), (3000,), (40, 1100), (1100, 3)])
def test_bool_reductions_read_bytes(shape, cold, monkeypatch):
    """Reductions and scans of bool read its bytes (reduction.input_array), any nonzero byte
    True: every reduction and cumsum, on the kernels and on the cold routes, gives NumPy's
    answer, also for bool bytes other than 0 / 1 (a view of other bytes)."""
    from tensorlib.kernels.cpu import reduction
    monkeypatch.setattr(reduction, "COLD", cold)
    rng = np.random.default_rng(shape[0])
    raw = rng.integers(0, 4, shape).astype(np.uint8) * rng.integers(0, 2, shape).astype(np.uint8)
    raw.flat[-1] = 200
    a = raw.view(np.bool_)
    t = tl.asarray(a.copy())
    for axis in (None, 0, -1):
        for name in ("max", "min", "argmax", "argmin", "sum", "any", "all", "count_nonzero"):
            got = getattr(tl, name)(t, axis=axis)
            np.testing.assert_array_equal(to_numpy(got), getattr(np, name)(a, axis=axis))
        np.testing.assert_allclose(to_numpy(tl.mean(t, axis=axis)), np.mean(a, axis=axis),
                                   rtol=1e-6)
        ax = 0 if axis is None else axis
        flat = t.reshape((-1,)) if axis is None else t
        want = np.cumsum(a.reshape(-1) if axis is None else a, axis=ax)
        np.testing.assert_array_equal(to_numpy(tl.cumsum(flat, axis=ax)), want)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int64"])
def test_reductions_stop_at_the_absorbing_value(dtype):
    """any / all / max / min over contiguous blocks end a row's scan at the first 4th block
    holding the combination's absorbing value (True for any, the type's largest for max...):
    that value placed in the first, a middle, the last block and the last element of a
    row, in the first or a later reduced row, never changes the answer, whole, along each
    axis, strided and reversed, in the parallel kernels too (1e6 elements)."""
    if dtype == "bool":
        low, high = False, True
    else:
        info = np.iinfo(dtype)
        low, high = info.min, info.max
    for shape in ((5000,), (3, 5000), (200, 5000)):
        n = shape[-1]
        for pos in (0, 1500, 4095, 4096, n - 1):
            for row in sorted({0, shape[0] - 1}) if len(shape) == 2 else (None,):
                for fill, spot in ((low, high), (high, low)):
                    a = np.full(shape, fill, dtype)
                    a[(pos,) if row is None else (row, pos)] = spot
                    if dtype != "bool":
                        a.reshape(-1)[1::7] = (int(low) + int(high)) // 2  # between the extremes
                    t = tl.asarray(a)
                    for view_t, view_a in ((t, a), (t[..., ::-1], a[..., ::-1]),
                                           (t[..., ::2], a[..., ::2])):
                        for axis in [None] + list(range(a.ndim)):
                            for name in ("any", "all", "max", "min"):
                                np.testing.assert_array_equal(
                                    to_numpy(getattr(tl, name)(view_t, axis=axis)),
                                    getattr(np, name)(view_a, axis=axis),
                                    err_msg=f"{name} {shape} pos={pos} row={row} axis={axis}")


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "bool"])
def test_narrow_integer_sums_at_the_extremes(dtype):
    """Sums of 8- and 16-bit elements add each block in int32 lanes: blocks full of the
    type's extreme values (the largest block total) sum exactly, contiguous and strided,
    whole and along either axis."""
    if dtype == "bool":
        a = np.ones((3, 5000), bool)
    else:
        info = np.iinfo(dtype)
        a = np.full((3, 5000), info.max, dtype)
        a[1] = info.min
    t = tl.asarray(a)
    for view_t, view_a in ((t, a), (t[:, ::3], a[:, ::3]), (t[:, ::-1], a[:, ::-1])):
        for axis in (None, 0, 1):
            np.testing.assert_array_equal(to_numpy(tl.sum(view_t, axis=axis)),
                                          np.sum(view_a, axis=axis))


@pytest.mark.parametrize("cold", [False, "always"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int16", "uint8", "int64",
                                   "complex64"])
def test_count_nonzero_in_one_pass(dtype, cold, monkeypatch):
    """count_nonzero of a non-bool tensor is one reduction on the CPU (a sum of x != 0, int16
    lanes per block for 1- and 2-byte inputs, int32 for wider ones; the cold route: NumPy's
    count_nonzero): nan counts, -0.0 does not, every
    axis, keepdims, strided and empty inputs; NumPy's int64 answer."""
    from tensorlib.kernels.cpu import reduction
    monkeypatch.setattr(reduction, "COLD", cold)
    rng = np.random.default_rng(4)
    for shape in ((7,), (3000,), (40, 1100), (1100, 3), (0,), (3, 0), ()):
        a = rng.integers(-2, 3, shape).astype(dtype)
        if a.dtype.kind == "f" and a.size > 4:
            a.flat[:4] = [np.nan, -0.0, 0.0, np.inf]
        views = [(tl.asarray(a), a)]
        if a.ndim == 2 and a.size:
            views.append((tl.asarray(a)[::2, ::-3], a[::2, ::-3]))
        for t, ref in views:
            for axis in [None] + list(range(-ref.ndim, ref.ndim)):
                for keepdims in (False, True):
                    got = tl.count_nonzero(t, axis=axis, keepdims=keepdims)
                    want = np.count_nonzero(ref, axis=axis, keepdims=keepdims)
                    assert got.dtype is tl.int64
                    np.testing.assert_array_equal(to_numpy(got), want)


# ---------------------------------------------------------------- var / std
@pytest.mark.parametrize("op,dtype", [("var", "float32"), ("var", "float64"),
                                      ("std", "float32")])
@given(data=st.data())
def test_var_std(op, dtype, data):
    a = data.draw(arrays(dtype, elements=_elements(dtype)))
    axis = data.draw(_axis(a.ndim))
    keepdims = data.draw(st.booleans())
    correction = data.draw(st.sampled_from([0, 1, 2.5, 0.0]))
    got = getattr(tl, op)(tl.from_numpy(a), axis=axis, keepdims=keepdims,
                          correction=correction)
    npax = _np_axis(axis, a.ndim)
    expected = _np_result(getattr(np, op), a, axis=npax, keepdims=keepdims, ddof=correction)
    _check_dtype_shape(got, expected.shape, dtype)
    n = max(_count(a.shape, npax), 1)
    eps = _EPS[dtype]
    big = _np_result(np.max, np.abs(a), axis=npax, keepdims=keepdims, initial=0.0)
    # Relative rounding of n squared terms, plus the mean's own rounding (eps * max|x|)^2 and,
    # for std, its square root.
    slack = eps * big ** 2 if op == "var" else np.sqrt(eps) * big
    _within(to_numpy(got), expected, 8 * n * eps, slack)


def _within(got, expected, rtol, atol):
    got, expected = np.asarray(got, np.float64), np.asarray(expected, np.float64)
    ok = (np.abs(got - expected) <= rtol * np.abs(expected) + atol) | (
        np.isnan(got) & np.isnan(expected)) | (got == expected)
    assert ok.all(), f"got {got[~ok]}, expected {expected[~ok]}"


@pytest.mark.parametrize("dtype,want", [("int16", "float32"), ("complex64", "float32"),
                                        ("float16", "float16"), ("float64", "float64")])
def test_var_dtypes(dtype, want):
    a = ((np.arange(30) % 7) * 1.5 - 4).reshape(5, 6)
    a = (a + 1j * a[::-1]).astype(dtype) if dtype.startswith("complex") else a.astype(dtype)
    for axis in (0, (0, 1)):
        got = tl.var(tl.from_numpy(a), axis=axis, correction=1)
        expected = np.var(a.astype(np.complex128 if dtype.startswith("c") else np.float64),
                          axis=axis, ddof=1)
        _check_dtype_shape(got, expected.shape, want)
        np.testing.assert_allclose(to_numpy(got), expected, rtol=2e-3 if want == "float16"
                                   else 1e-6)
    r = a.real.astype(np.float32)
    got = tl.std(tl.from_numpy(r), axis=1)
    np.testing.assert_allclose(to_numpy(got), np.std(r.astype(np.float64), axis=1), rtol=1e-6)


def test_var_is_stable_for_large_offsets():
    # Two passes: a large common offset must not swamp the variance (the naive
    # E[x^2] - E[x]^2 formula loses every digit here).
    rng = np.random.default_rng(1)
    a = (1e4 + rng.standard_normal(10_000)).astype(np.float32)
    exact = a.astype(np.float64).var()
    assert abs(tl.var(tl.from_numpy(a)).item() - exact) / exact < 1e-3
    assert abs(tl.std(tl.from_numpy(a), correction=1).item() - a.astype(np.float64).std(ddof=1)
               ) < 1e-3


def test_var_correction_at_least_n():
    a = tl.from_numpy(np.array([[1.0, 2.0], [3.0, 3.0]]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for corr in (2, 3, 2.0):
            np.testing.assert_array_equal(to_numpy(tl.var(a, axis=1, correction=corr)),
                                          np.var(a.numpy(), axis=1, ddof=corr))
    np.testing.assert_array_equal(to_numpy(tl.std(a, axis=1, correction=5)), [np.inf, np.nan])


# ---------------------------------------------------------------- any / all
@pytest.mark.parametrize("op,dtype", [("any", "bool"), ("all", "bool"), ("all", "int8"),
                                      ("any", "float32"), ("any", "complex64")])
@given(data=st.data())
def test_any_all(op, dtype, data):
    elements = {"float32": st.sampled_from([0.0, -0.0, 1.0, np.nan, np.inf]),
                "int8": st.sampled_from([0, 0, 0, 1, -128]),
                "complex64": st.sampled_from([0j, 1j, 0j, 2 + 0j])}.get(dtype)
    a = data.draw(arrays(dtype, elements=elements))
    axis = data.draw(_axis(a.ndim))
    keepdims = data.draw(st.booleans())
    got = getattr(tl, op)(tl.from_numpy(a), axis=axis, keepdims=keepdims)
    expected = _np_result(getattr(np, op), a, axis=axis, keepdims=keepdims)
    _check_dtype_shape(got, expected.shape, "bool")
    np.testing.assert_array_equal(to_numpy(got), expected)


# ---------------------------------------------------------------- cumsum / cumprod
@pytest.mark.parametrize("op,dtype", [("cumsum", "bool"), ("cumsum", "int8"),
                                      ("cumsum", "uint32"), ("cumsum", "float32"),
                                      ("cumsum", "float16"), ("cumprod", "int8"),
                                      ("cumprod", "float32")])
@given(data=st.data())
def test_cumsum_cumprod(op, dtype, data):
    elements = (st.floats(-2, 2, width=32) if op == "cumprod" and dtype == "float32"
                else _elements(dtype))
    a = data.draw(arrays(dtype, max_dims=3, elements=elements))
    axis = data.draw(st.none() | st.integers(-max(a.ndim, 1), max(a.ndim, 1) - 1))
    t = tl.from_numpy(a)
    got = getattr(tl, op)(t, axis=axis)
    src = a.astype(np.float32) if dtype == "float16" else a
    if a.ndim == 0 and axis is not None:
        expected = src.astype(np.int64 if dtype in ("bool", "int8") else src.dtype)
        expected = expected.astype(np.uint64) if dtype == "uint32" else expected
    else:
        expected = _np_result(getattr(np, op), src, axis=axis)
    if dtype == "float16":
        expected = expected.astype(np.float16)
    _check_dtype_shape(got, expected.shape, expected.dtype.name)
    rtol = {"float16": 1e-3, "float32": 1e-6 if op == "cumprod" else 0}.get(dtype, 0)
    np.testing.assert_allclose(to_numpy(got), expected, rtol=rtol)


@pytest.mark.parametrize("include_initial", [False, True])
def test_cumulative_sum_prod(include_initial, device):
    # one body on every device (the CUDA scans: kernels/cuda/scan.py)
    a = (np.arange(24) % 5 + 1).reshape(2, 3, 4).astype(np.int8)
    t = on_device(a, device)
    for axis in (0, 1, -1):
        for op in ("cumulative_sum", "cumulative_prod"):
            got = getattr(tl, op)(t, axis=axis, include_initial=include_initial)
            expected = getattr(np, op)(a, axis=axis, include_initial=include_initial)
            _check_dtype_shape(got, expected.shape, expected.dtype.name)
            np.testing.assert_array_equal(host(got, device), expected)
    for v in (a[0, 0].astype(np.float32), np.array([0.5, 1.5, -2.0], np.float32)):
        got = tl.cumulative_sum(on_device(v, device), include_initial=include_initial,
                                dtype=tl.float64)
        np.testing.assert_array_equal(
            host(got, device), np.cumulative_sum(v, include_initial=include_initial,
                                                 dtype=np.float64))
        assert got.dtype is tl.float64
    got = tl.cumulative_sum(on_device(np.array(3.0, np.float32), device),
                            include_initial=include_initial)
    assert got.shape == ((2,) if include_initial else (1,))
    empty = tl.cumulative_sum(on_device(np.zeros((0,), np.float32), device),
                              include_initial=include_initial)
    assert empty.shape == ((1,) if include_initial else (0,))
    if include_initial:
        return
    # out= (also strided), an empty scan axis' neighbours, a 0-d input flattened
    out = tl.empty((2, 3, 4), dtype=tl.float32, device=device)
    assert tl.cumsum(t, axis=1, out=out) is out
    np.testing.assert_array_equal(host(out, device), np.cumsum(a, axis=1).astype(np.float32))
    col = tl.empty((4, 2), dtype=tl.int64, device=device).T  # a strided out
    tl.cumprod(on_device(a[:, 0, :], device), axis=1, out=col)
    np.testing.assert_array_equal(host(col, device), np.cumprod(a[:, 0, :], axis=1))
    assert tl.cumsum(on_device(np.zeros((0, 3), np.float32), device), axis=1).shape == (0, 3)
    assert host(tl.cumsum(on_device(np.array(2.5, np.float32), device)),
                device).tolist() == [2.5]


def test_cumsum_layouts_and_methods():
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    for view in (a, a.transpose(2, 0, 1), a[::-1, :, ::2]):
        t = tl.from_numpy(view)
        for axis in (0, 1, 2, None):
            np.testing.assert_array_equal(to_numpy(t.cumsum(axis=axis)),
                                          np.cumsum(view, axis=axis))
    assert tl.cumsum(tl.from_numpy(np.array(2.0, np.float32)), axis=0).shape == ()
    assert tl.cumsum(tl.from_numpy(np.array(2.0, np.float32))).shape == (1,)


# ---------------------------------------------------------------- 0-d, empty, methods
def test_zero_dim_inputs():
    t = tl.from_numpy(np.array(2.5, np.float32))
    for axis in (None, 0, -1, ()):
        assert tl.sum(t, axis=axis).item() == 2.5
        assert tl.max(t, axis=axis).shape == ()
        assert tl.mean(t, axis=axis, keepdims=True).shape == ()
    assert tl.argmax(t).item() == 0
    assert tl.argmax(t, axis=0).shape == ()
    assert tl.var(t).item() == 0.0
    with pytest.raises(IndexError, match="sum"):
        tl.sum(t, axis=1)


def test_empty_reductions():
    z = tl.from_numpy(np.zeros((0, 3), np.int16))
    f = tl.from_numpy(np.zeros((2, 0), np.float32))
    assert tl.sum(z).item() == 0 and tl.sum(z).dtype is tl.int64
    np.testing.assert_array_equal(to_numpy(tl.sum(z, axis=0)), [0, 0, 0])
    assert tl.sum(z, axis=1).shape == (0,)
    np.testing.assert_array_equal(to_numpy(tl.prod(f, axis=1)), [1.0, 1.0])
    assert math.isnan(tl.mean(f).item())
    np.testing.assert_array_equal(to_numpy(tl.var(f, axis=1)), [np.nan, np.nan])
    assert tl.any(f).item() is False and tl.all(f).item() is True
    assert tl.max(f, axis=0).shape == (0,)  # nothing to reduce per output, and no outputs
    for fn in (tl.max, tl.min, tl.argmax, tl.argmin):
        with pytest.raises(ValueError, match=fn.__name__):
            fn(f)
        with pytest.raises(ValueError, match=fn.__name__):
            fn(f, axis=1)


def test_methods_and_positional_axis():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = tl.from_numpy(a)
    assert t.sum().item() == 66.0
    np.testing.assert_array_equal(to_numpy(t.sum(0)), a.sum(0))
    np.testing.assert_array_equal(to_numpy(tl.sum(t, 1, True)), a.sum(1, keepdims=True))
    np.testing.assert_array_equal(to_numpy(t.prod(axis=[0])), a.prod(0))
    np.testing.assert_allclose(to_numpy(t.mean(axis=(-1, 0))), a.mean())
    np.testing.assert_allclose(to_numpy(t.std(axis=0, correction=1)), a.std(0, ddof=1),
                               rtol=1e-6)
    assert t.any().item() is True
    assert tl.from_numpy(a > 0).all().item() is False
    assert t.argmax().item() == 11 and t.max().item() == 11.0 and t.min().item() == 0.0
    np.testing.assert_array_equal(to_numpy(t.cumprod(axis=1)), np.cumprod(a, axis=1))
    np.testing.assert_array_equal(to_numpy(t.cumulative_sum(axis=0)), np.cumsum(a, axis=0))


# ---------------------------------------------------------------- out=
def test_out_argument():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = tl.from_numpy(a)
    out = tl.empty((4,), dtype=tl.float64)
    assert tl.sum(t, axis=0, out=out) is out
    np.testing.assert_array_equal(out.numpy(), a.sum(0))
    out = tl.empty((3, 1), dtype=tl.float32)
    tl.max(t, axis=1, keepdims=True, out=out)
    np.testing.assert_array_equal(out.numpy(), a.max(1, keepdims=True))
    strided = tl.zeros((3, 2), dtype=tl.float32)[:, 1]
    tl.mean(t, axis=1, out=strided)
    np.testing.assert_allclose(strided.numpy(), a.mean(1))
    idx = tl.empty((4,), dtype=tl.int32)
    tl.argmin(t, axis=0, out=idx)
    np.testing.assert_array_equal(idx.numpy(), a.argmin(0))
    flat = tl.empty((1, 1), dtype=tl.int64)
    assert tl.argmax(t, keepdims=True, out=flat) is flat and flat.item() == 11
    cs = tl.empty((3, 4), dtype=tl.float32)
    tl.cumsum(t, axis=1, out=cs)
    np.testing.assert_array_equal(cs.numpy(), np.cumsum(a, axis=1))
    b = tl.empty((), dtype=tl.bool)
    tl.any(t, out=b)
    assert b.item() is True


def test_out_overlapping_input():
    # The output is the input's first row: the result must be the out-of-place one.
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = tl.from_numpy(a.copy())
    tl.sum(t, axis=0, out=t[0])
    np.testing.assert_array_equal(t.numpy()[0], a.sum(0))
    t = tl.from_numpy(a.copy())
    tl.cumsum(t, axis=0, out=t)
    np.testing.assert_array_equal(t.numpy(), np.cumsum(a, axis=0))
    t = tl.from_numpy(a.copy())
    tl.var(t, axis=0, out=t[1])
    np.testing.assert_allclose(t.numpy()[1], a.var(0), rtol=1e-6)


# ---------------------------------------------------------------- errors
def test_errors():
    t = tl.from_numpy(np.ones((2, 3), np.float32))
    with pytest.raises(IndexError, match=r"sum\(\).*axis.*2"):
        tl.sum(t, axis=2)
    with pytest.raises(IndexError, match=r"mean\(\).*-3"):
        tl.mean(t, axis=(0, -3))
    with pytest.raises(ValueError, match=r"prod\(\).*duplicate"):
        tl.prod(t, axis=(1, -1))
    with pytest.raises(TypeError, match=r"argmax\(\).*axis"):
        tl.argmax(t, axis=(0, 1))
    with pytest.raises(TypeError, match=r"sum\(\).*axis"):
        tl.sum(t, axis=1.0)
    with pytest.raises(TypeError, match=r"any\(\).*keepdims"):
        tl.any(t, keepdims=1)
    with pytest.raises(TypeError, match=r"sum\(\).*'x'"):
        tl.sum([1.0, 1.0, 1.0])  # (a NumPy array is an operand since issue 17)
    c = tl.from_numpy(np.ones(3, np.complex64))
    for name in ("max", "min", "argmax", "argmin"):
        with pytest.raises(TypeError, match=rf"{name}\(\).*'x'.*complex64"):
            getattr(tl, name)(c)
    with pytest.raises(TypeError, match=r"sum\(\).*dtype"):
        tl.sum(c, dtype=tl.float32)
    for bad in (-1, -0.5, float("nan"), 1j):
        with pytest.raises(ValueError, match=r"var\(\).*correction"):
            tl.var(t, correction=bad)
        with pytest.raises(ValueError, match=r"std\(\).*correction"):
            tl.std(t, correction=bad)
    with pytest.raises(ValueError, match=r"sum\(\).*'out'.*\(2,\).*\(3,\)"):
        tl.sum(t, axis=0, out=tl.empty((2,)))
    with pytest.raises(ValueError, match=r"sum\(\).*shape"):
        tl.sum(t, axis=0, keepdims=True, out=tl.empty((3,)))
    with pytest.raises(TypeError, match=r"mean\(\).*float32.*int64.*'out'"):
        tl.mean(t, out=tl.empty((), dtype=tl.int64))
    with pytest.raises(TypeError, match=r"sum\(\).*'out'"):
        tl.sum(t, out=np.zeros(()))
    with pytest.raises(RuntimeError, match=r"max\(\).*'out'.*share memory"):
        tl.max(t, axis=0, out=tl.empty((1,)).expand((3,)))
    with pytest.raises(ValueError, match=r"argmax\(\).*shape"):
        tl.argmax(t, out=tl.empty((1,), dtype=tl.int64))
    with pytest.raises(ValueError, match=r"cumulative_sum\(\).*axis"):
        tl.cumulative_sum(t)
    with pytest.raises(IndexError, match=r"cumsum\(\).*axis"):
        tl.cumsum(t, axis=2)
    with pytest.raises(ValueError, match=r"cumsum\(\).*shape"):
        tl.cumsum(t, axis=1, out=tl.empty((3, 2)))
    with pytest.raises(TypeError, match=r"cumprod\(\).*int64"):
        tl.cumprod(tl.from_numpy(np.ones(3, np.int8)), out=tl.empty((3,), dtype=tl.bool))


# ---------------------------------------------------------------- parallel paths
@pytest.fixture
def four_threads(monkeypatch):
    """Plan work for 4 threads (column tiles, row splits) whatever the machine has; the results
    must not depend on the split."""
    from tensorlib.kernels.cpu import reduction
    monkeypatch.setattr(reduction, "_threads", lambda: 4)
    # these cases are smaller than the machine's parallel grain: lower it so they run split
    monkeypatch.setattr(reduction, "PAR_GRAIN", 1 << 16)


def test_parallel_sum(four_threads):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((300, 700)).astype(np.float32)
    cases = [(a, 0), (a, 1), (a, None), (a, (0, 1)), (a.T, 0), (a.T, 1), (a[::-1, ::3], 0),
             (a.reshape(-1, 3)[:, :], 0), (a.reshape(3, -1), 1), (a.reshape(2, 3, -1), (0, 2))]
    for x, axis in cases:
        got = to_numpy(tl.sum(tl.from_numpy(x), axis=axis)).astype(np.float64)
        expected = x.astype(np.float64).sum(axis=axis)
        scale = np.abs(x.astype(np.float64)).sum(axis=axis)
        assert np.all(np.abs(got - expected) <= 1e-6 * scale + 1e-6), (x.shape, axis)


def test_parallel_argmax_cumsum(four_threads):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((260, 300)).astype(np.float32)
    a[5, 7] = np.nan
    for x in (a, a.T):
        for axis in (0, 1, None):
            np.testing.assert_array_equal(to_numpy(tl.argmax(tl.from_numpy(x), axis=axis)),
                                          np.argmax(x, axis=axis))
            np.testing.assert_array_equal(to_numpy(tl.cumsum(tl.from_numpy(x), axis=axis)),
                                          np.cumsum(x, axis=axis))


def test_parallel_var(four_threads):
    rng = np.random.default_rng(4)
    a = 5 + rng.standard_normal((70_000, 3))
    for axis in (0, 1, None):
        np.testing.assert_allclose(to_numpy(tl.var(tl.from_numpy(a), axis=axis)),
                                   a.var(axis=axis), rtol=1e-10)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_sum_with_infinite_part_keeps_finite_imaginary(dtype):
    # (inf + 4j) is a complex sum's exact result; dividing it by (1 + 0j) would make 4j nan
    x = np.array([[1 + 1j, complex(np.inf, 0.0), 2 + 3j], [1j, 2, 3]], dtype)
    for axis in (None, 0, 1):
        got = tl.sum(tl.asarray(x), axis=axis).numpy()
        np.testing.assert_array_equal(got, np.sum(x, axis=axis))


@pytest.mark.parametrize("dtype", [tl.float32, tl.float64, tl.float16, tl.int8, tl.bool],
                         ids=str)
@pytest.mark.parametrize("view", ["x[::2]", "x[::-3]", "x2[:, ::2] rows", "x2[:, ::2] all",
                                  "x2[::-1, 1::3] rows"])
def test_strided_sums_give_the_contiguous_copys_bits(view, dtype):
    """A sum or mean over elements of other steps gathers each block and runs the contiguous
    block's vectorized loop: the same bits as the sum of a contiguous copy (one dependent
    chain along the steps took 3x NumPy's time and rounded otherwise), and NumPy's value."""
    rng = np.random.default_rng(21)
    vals = rng.standard_normal(6000) * 100
    if dtype.kind in "iu":
        vals = rng.integers(-100, 100, 6000)
    elif dtype.kind == "b":
        vals = rng.integers(0, 2, 6000).astype(bool)
    x = tl.asarray(np.asarray(vals).astype(dtype.np_dtype))
    x2 = x.reshape(40, 150)
    pick = {"x[::2]": lambda: (x[::2], None), "x[::-3]": lambda: (x[::-3], None),
            "x2[:, ::2] rows": lambda: (x2[:, ::2], 1),
            "x2[:, ::2] all": lambda: (x2[:, ::2], None),
            "x2[::-1, 1::3] rows": lambda: (x2[::-1, 1::3], 1)}
    v, axis = pick[view]()
    dense = v.contiguous()
    assert v.stride() != dense.stride()
    for fn in (lambda t: t.sum(axis=axis), lambda t: t.mean(axis=axis)):
        got, want = fn(v), fn(dense)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_allclose(v.sum(axis=axis).numpy().astype(np.float64),
                               v.numpy().astype(np.float64).sum(axis=axis), rtol=2e-3)


_FLOAT_CASES = ["plain", "tie across chunks", "nan late", "two nans", "signed zeros", "all -inf"]


@pytest.mark.parametrize("case,dtype", [(c, d) for d in (tl.float32, tl.float64)
                                        for c in _FLOAT_CASES]
                         + [("plain", d) for d in (tl.int32, tl.uint8, tl.bool)], ids=str)
def test_strided_max_and_argmax_match_the_contiguous_copy(case, dtype):
    """max / min / argmax / argmin over elements of other steps gather chunks of the row and
    scan each as a contiguous one: a contiguous copy's values (a nan wins, canonical) and
    indices (the first extreme, the first nan), also when the extreme or a nan sits in a later
    chunk; NumPy's answer. (The sign of a zero extreme is not held to: within a chunk -0.0 and
    +0.0 go as IEEE maximum / minimum, between chunks, as between blocks, the earlier wins a
    tie; NumPy's own depends on the order.)"""
    rng = np.random.default_rng(5)
    n = 6000  # x[::2] is 3000 elements: three chunks of 1024
    vals = rng.standard_normal(n) * 10
    if dtype.kind == "f":
        if case == "tie across chunks":
            vals[2 * 100] = vals[2 * 2500] = 1e6
            vals[2 * 1800] = -1e6
        elif case == "nan late":
            vals[2 * 2100] = np.nan
        elif case == "two nans":
            vals[2 * 1500] = vals[2 * 2900] = np.nan
        elif case == "signed zeros":
            vals[:] = 0.0
            vals[2 * 1200::2] = -0.0
        elif case == "all -inf":
            vals[:] = -np.inf
    if dtype.kind in "iu":
        vals = rng.integers(0, 100, n)
    elif dtype.kind == "b":
        vals = rng.integers(0, 2, n) == 1
    x = tl.asarray(np.asarray(vals).astype(dtype.np_dtype))
    x2 = x.reshape(20, 300)
    for v, axis in ((x[::2], None), (x[::-3], None), (x[1::2], 0), (x2[:, ::2], 1),
                    (x2[::-1, 1::3], 1)):
        dense = v.contiguous()
        want_np = v.numpy()
        for op in ("max", "min", "argmax", "argmin"):
            got, want = getattr(v, op)(axis=axis), getattr(dense, op)(axis=axis)
            assert got.dtype == want.dtype
            if op.startswith("arg"):
                np.testing.assert_array_equal(got.numpy(), want.numpy())
                np.testing.assert_array_equal(got.numpy(), getattr(np, op)(want_np, axis=axis))
            else:
                g, w = got.numpy(), want.numpy()
                if case != "signed zeros":
                    assert np.asarray(g).tobytes() == np.asarray(w).tobytes(), op
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    np.testing.assert_array_equal(g, getattr(np, op)(want_np, axis=axis))
