"""Data safety (issue 12): asarray converts Python data straight to the requested dtype (one
rounding, out-of-range ints raise), buffer-protocol objects keep their own dtype and share their
memory, and read-only memory gives read-only tensors that every kind of write refuses.
NumPy is the oracle."""
from __future__ import annotations

import array
import ctypes
import inspect
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from helpers import INT_DTYPES, NUMPY_DTYPES
from hypothesis import given
from hypothesis import strategies as st

import tensorlib as tl
from tensorlib.dispatch import dispatcher

RO_MSG = "argument '{arg}' is read-only"


def _values(t) -> np.ndarray:
    return np.array(t._to_host_numpy(), copy=True)


def _same_bits(got: np.ndarray, want: np.ndarray):
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.tobytes() == want.tobytes(), (got, want)


# ---- 1. Python data converts straight to the requested dtype ----------------------------------
@pytest.mark.parametrize("data, dtype, want", [
    ([1 / 3], "float64", [1 / 3]),
    ([1e40], "float64", [1e40]),
    (16777217.0, "float64", 16777217.0),
    ([2 ** 62 + 1], "int64", [2 ** 62 + 1]),
    ([2 ** 64 - 1], "uint64", [2 ** 64 - 1]),
    ([1 / 3 + 1j / 7], "complex128", [1 / 3 + 1j / 7]),
    ([[1 / 3, 2], [True, 1e-300]], "float64", [[1 / 3, 2.0], [1.0, 1e-300]]),
    ([True, 2, 2.5, 1 / 3], "float64", [1.0, 2.0, 2.5, 1 / 3]),
    ([True, 2 ** 62 + 1, np.int64(2 ** 62 + 3)], "int64", [1, 2 ** 62 + 1, 2 ** 62 + 3]),
    ([np.float64(1 / 3), np.float32(0.1), 2 ** 60 + 1], "float64",
     [1 / 3, float(np.float32(0.1)), float(2 ** 60 + 1)]),
    ([np.complex128(1 / 3 + 0.25j), 1 / 7], "complex128", [1 / 3 + 0.25j, 1 / 7]),
])
def test_python_data_is_not_rounded_through_float32(data, dtype, want):
    t = tl.asarray(data, dtype=dtype)
    assert t.dtype.name == dtype
    _same_bits(_values(t), np.asarray(data, dtype=dtype))
    assert t.tolist() == want


def test_half_types_round_once_from_the_python_float():
    # Through float32 first, 1 + 2**-11 + 2**-40 rounds to the float16 tie 1 + 2**-11 and then
    # to even (1.0); rounded once it is 1 + 2**-10.
    assert tl.asarray([1 + 2 ** -11 + 2 ** -40], dtype=tl.float16).item() == 1 + 2 ** -10
    assert tl.asarray(1 + 2 ** -8 + 2 ** -40, dtype=tl.bfloat16).item() == 1 + 2 ** -7
    assert tl.asarray([2 ** 24 + 1 + 2 ** 16], dtype=tl.bfloat16).item() == 2 ** 24 + 2 ** 17


def test_defaults_without_dtype_are_unchanged():
    assert tl.asarray([1.5, 2]).dtype is tl.float32
    assert tl.asarray(1.5).dtype is tl.float32
    assert tl.asarray([1, 2]).dtype is tl.int64
    assert tl.asarray(3).dtype is tl.int64
    assert tl.asarray([1j]).dtype is tl.complex64
    assert tl.asarray([True, False]).dtype is tl.bool
    assert tl.asarray([2 ** 63]).dtype is tl.uint64
    assert tl.asarray([1 / 3]).item() == float(np.float32(1 / 3))
    assert tl.asarray([]).dtype is tl.float32


def _bf16_reference(x) -> float:
    """x (float or int) correctly rounded to bfloat16 (8-bit significand, float32's exponent
    range, subnormals down to 2**-133), ties to even."""
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return x
    if x == 0:
        return math.copysign(0.0, x) if isinstance(x, float) else 0.0
    exact = Fraction(x)
    e = math.floor(math.log2(abs(exact)))
    while Fraction(2) ** e > abs(exact):
        e -= 1
    while Fraction(2) ** (e + 1) <= abs(exact):
        e += 1
    quantum = Fraction(2) ** max(e - 7, -133)
    r = round(exact / quantum) * quantum  # Fraction rounds half to even
    if abs(r) >= 2 ** 128:
        return math.copysign(math.inf, x)
    return math.copysign(float(r), x)  # an underflow to zero keeps the sign


_finite = st.floats(allow_nan=False, allow_infinity=False)
_any_float = st.floats(allow_nan=True, allow_infinity=True)


def _nested(elements):
    """A scalar, a flat list or a list of equal-length lists of elements."""
    return st.one_of(
        elements,
        st.lists(elements, max_size=6),
        st.integers(1, 3).flatmap(lambda n: st.lists(st.lists(elements, min_size=n, max_size=n),
                                                     min_size=1, max_size=3)))


def _elements_for(dtype: str):
    if dtype == "bool":
        return st.one_of(st.booleans(), st.integers(-5, 5), _any_float,
                         st.complex_numbers(allow_nan=False))
    if dtype in INT_DTYPES:
        info = np.iinfo(dtype)
        # floats within range truncate toward zero (NumPy); stay clear of the edges where
        # the float itself cannot hold the bound
        lo, hi = float(info.min) / 2, float(info.max) / 2
        return st.one_of(st.integers(int(info.min), int(info.max)), st.booleans(),
                         st.floats(lo, hi), st.builds(np.int8, st.integers(-128, 127)))
    if dtype.startswith("float"):
        return st.one_of(_any_float, st.integers(-(2 ** 100), 2 ** 100), st.booleans(),
                         st.builds(np.float32, st.floats(width=32)))
    return st.one_of(st.complex_numbers(), _any_float, st.integers(-(2 ** 100), 2 ** 100),
                     st.booleans())


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
@given(data=st.data())
def test_python_data_matches_numpy_asarray(dtype, data):
    obj = data.draw(_nested(_elements_for(dtype)))
    want = np.asarray(obj, dtype=dtype)
    t = tl.asarray(obj, dtype=dtype)
    assert t.dtype.name == dtype
    _same_bits(_values(t), want)


@given(obj=_nested(st.one_of(st.floats(width=64), st.integers(-(2 ** 53), 2 ** 53),
                             st.booleans())))
def test_python_data_to_bfloat16_rounds_once(obj):
    t = tl.asarray(obj, dtype=tl.bfloat16)
    want = np.vectorize(_bf16_reference, otypes=[np.float64])(np.asarray(obj, dtype=object)
                                                               if np.ndim(obj) else obj)
    got = _values(t).astype(np.float64)
    np.testing.assert_array_equal(got, np.asarray(want, dtype=np.float64))
    assert np.array_equal(np.signbit(got), np.signbit(np.asarray(want, dtype=np.float64)))


@given(obj=st.lists(st.integers(-(2 ** 63), 2 ** 63 - 1), min_size=1, max_size=8))
def test_int64_lists_to_bfloat16_round_once(obj):
    got = _values(tl.asarray(obj, dtype=tl.bfloat16)).astype(np.float64)
    np.testing.assert_array_equal(got, [_bf16_reference(v) for v in obj])


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_out_of_range_python_ints_raise(dtype):
    info = np.iinfo(dtype)
    for bad in (int(info.max) + 1, int(info.min) - 1, 2 ** 80):
        with pytest.raises(OverflowError, match=rf"asarray\(\): argument 'obj' .*{bad}"):
            tl.asarray([[1, 0], [bad, 1]], dtype=dtype)
        with pytest.raises(OverflowError, match=rf"asarray\(\).*{bad}"):
            tl.asarray(bad, dtype=dtype)
        with pytest.raises(OverflowError):
            np.asarray([bad], dtype=dtype)  # the oracle refuses too


@pytest.mark.parametrize("bad, dtype, exc", [
    ([1.0, float("nan")], "int32", ValueError),
    ([float("inf")], "int64", OverflowError),
    ([1e20], "int64", OverflowError),
    ([300.0], "int8", OverflowError),
    ([1, 2 + 1j], "float64", TypeError),
    ([2 + 1j], "int16", TypeError),
    ([1j], "bfloat16", TypeError),
    (10 ** 400, "float64", OverflowError),
])
def test_unrepresentable_values_raise_naming_the_value(bad, dtype, exc):
    with pytest.raises(exc, match=r"asarray\(\): argument 'obj'"):
        tl.asarray(bad, dtype=dtype)


def test_non_numeric_python_data_is_refused_even_with_a_dtype():
    # np.asarray(["1.5"], dtype=float) would parse the string
    with pytest.raises(TypeError, match="numeric"):
        tl.asarray(["1.5"], dtype=tl.float64)
    with pytest.raises(ValueError, match="asarray"):
        tl.asarray([[1.0], [1.0, 2.0]], dtype=tl.float64)


def test_tensor_factory_uses_the_same_conversion():
    assert tl.tensor([1 / 3], dtype=tl.float64).item() == 1 / 3
    with pytest.raises(OverflowError, match="300"):
        tl.tensor([300], dtype=tl.int8)


@pytest.mark.parametrize("obj", [2.5, 7, True, 1 + 2j, [[1.5, -0.0], [3.0, 4.0]], [],
                                 np.float32(2.5), np.int16(-3), np.bool_(True)])
@pytest.mark.parametrize("make", [tl.asarray, tl.tensor])
def test_python_data_and_numpy_scalars_land_in_writable_memory_of_their_own(obj, make):
    # (their private NumPy array is copied into tensorlib's allocator, not borrowed)
    t = make(obj)
    want = np.asarray(obj)
    if not isinstance(obj, np.generic):
        want = want.astype({"f": np.float32, "c": np.complex64, "i": np.int64,
                            "b": np.bool_}[want.dtype.kind])
    assert t.dtype.np_dtype == want.dtype and t.shape == want.shape and not t.is_readonly
    _same_bits(t.numpy(), want)
    u = make(obj)
    if t.numel():
        assert t.data_ptr() != u.data_ptr()
        t.fill_(0)
        _same_bits(u.numpy(), want)
    with pytest.raises(ValueError, match="copy=False"):
        tl.asarray(obj, copy=False) if not isinstance(obj, np.generic) else \
            tl.asarray(obj, dtype=tl.float64 if want.dtype != np.float64 else tl.float32,
                       copy=False)


# ---- buffer-protocol objects keep their own dtype ----------------------------------------------
@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_asarray_of_a_dense_array_is_from_numpy(dtype):
    """asarray(a) of a C-contiguous writeable array (its small-call path) gives what
    from_numpy gives: the same memory, shape, strides (size-1 dims included) and dtype, writes
    visible both ways, the array kept alive; read-only, strided, byte-swapped, empty and 0-d
    arrays too."""
    base = (np.arange(24) % 7).astype(dtype)
    cases = [base, base.reshape(2, 3, 4), base.reshape(1, 24)[:, :], base[:1].reshape(()),
             base[::2], base.reshape(4, 6).T, base[:0]]
    ro = base.copy()
    ro.flags.writeable = False
    cases.append(ro)
    if np.dtype(dtype).itemsize > 1:
        cases.append(base.astype(np.dtype(dtype).newbyteorder()))
    for a in cases:
        t, f = tl.asarray(a), tl.from_numpy(a) if a.dtype.isnative else None
        assert t.shape == a.shape and t.dtype == tl.dtypes.from_numpy_dtype(a.dtype)
        np.testing.assert_array_equal(t.numpy(), a)
        if f is not None:
            assert t.stride() == f.stride() and t.data_ptr() == f.data_ptr()
        if a.flags.writeable and a.dtype.isnative and a.size:
            t.reshape(-1)[0:1].fill_(1)
            assert a.reshape(-1)[0] == 1
    del base
    kept = tl.asarray(np.arange(5.0) + 1)
    assert kept.numpy().tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]


@pytest.mark.parametrize("code", list("bBhHiIlLqQfd"))
def test_array_array_keeps_its_dtype_and_shares(code):
    a = array.array(code, [1, 2, 3])
    want = np.asarray(memoryview(a))
    t = tl.asarray(a)
    assert t.dtype.name == want.dtype.name
    _same_bits(_values(t), want)
    assert not t.is_readonly
    shared = tl.asarray(a, copy=False)
    shared[1] = 7
    assert a[1] == 7
    copied = tl.asarray(a, copy=True)
    copied[0] = 9
    assert a[0] == 1


def test_buffer_dtypes():
    assert tl.asarray(array.array("d", [1 / 3])).dtype is tl.float64
    assert tl.asarray(array.array("d", [1 / 3])).item() == 1 / 3
    assert tl.asarray(array.array("b", [-1])).dtype is tl.int8
    assert tl.asarray(array.array("f", [0.5])).dtype is tl.float32
    assert tl.asarray(memoryview(array.array("i", [1, 2]))).dtype is tl.int32
    t = tl.asarray(b"\x01\xff")
    assert t.dtype is tl.uint8 and t.tolist() == [1, 255]
    assert tl.asarray(bytearray(b"\x02")).dtype is tl.uint8
    c = (ctypes.c_double * 3)(1.5, 2.5, 3.5)
    assert tl.asarray(c).dtype is tl.float64 and tl.asarray(c).tolist() == [1.5, 2.5, 3.5]
    m = memoryview(bytearray(range(6))).cast("B", (2, 3))
    t = tl.asarray(m)
    assert t.shape == (2, 3) and t.tolist() == [[0, 1, 2], [3, 4, 5]]


def test_buffer_with_dtype_converts_and_copy_false_refuses_conversion():
    a = array.array("b", [1, -2])
    t = tl.asarray(a, dtype=tl.float64)
    assert t.dtype is tl.float64 and t.tolist() == [1.0, -2.0]
    with pytest.raises(ValueError, match="copy=False"):
        tl.asarray(a, dtype=tl.float64, copy=False)


def test_byte_swapped_buffer_is_copied_or_refused():
    m = memoryview(np.array([1, 2], dtype=">i4"))
    assert tl.asarray(m).tolist() == [1, 2]
    with pytest.raises(ValueError, match="copy=False"):
        tl.asarray(m, copy=False)


class _PyBuffer:
    """A PEP 688 buffer implemented in Python."""

    def __init__(self):
        self.data = array.array("h", [4, 5, 6])

    def __buffer__(self, flags):
        return memoryview(self.data)

    def __release_buffer__(self, view):
        view.release()


def test_object_with_dunder_buffer():
    obj = _PyBuffer()
    t = tl.asarray(obj, copy=False)
    assert t.dtype is tl.int16 and t.tolist() == [4, 5, 6]
    t[0] = 40
    assert obj.data[0] == 40


def test_bytearray_shares_zero_copy():
    b = bytearray(b"abc")
    t = tl.asarray(b, copy=False)
    assert not t.is_readonly
    t[0] = ord("A")
    assert b == bytearray(b"Abc")


def test_unsupported_buffer_format_is_a_type_error():
    with pytest.raises(TypeError, match="asarray"):
        tl.asarray(memoryview(b"ab").cast("c"))


# ---- read-only memory -------------------------------------------------------------------------
def _ro_array(dtype="float64"):
    a = np.arange(6, dtype=dtype).reshape(2, 3)
    a.flags.writeable = False
    return a


RO_SOURCES = {
    "asarray(ro ndarray)": lambda: (_ro_array(), tl.asarray),
    "from_numpy(ro ndarray)": lambda: (_ro_array(), tl.from_numpy),
    "asarray(frombuffer(bytes))": lambda: (np.frombuffer(b"abcdefgh" * 6, dtype=np.float64)
                                           .reshape(2, 3), tl.asarray),
    "asarray(bytes)": lambda: (b"\x00\x01\x02\x03\x04\x05", tl.asarray),
    "asarray(memoryview(bytes))": lambda: (memoryview(b"\x00\x01\x02\x03\x04\x05"), tl.asarray),
    "asarray(ro, copy=False)": lambda: (_ro_array(), lambda a: tl.asarray(a, copy=False)),
}


def _snapshot(src) -> bytes:
    return bytes(src) if isinstance(src, (bytes, memoryview)) else src.tobytes()


@pytest.fixture(params=sorted(RO_SOURCES))
def ro(request):
    src, make = RO_SOURCES[request.param]()
    t = make(src)
    before = _snapshot(src)
    yield t
    assert _snapshot(src) == before, "a refused write changed the read-only memory"


def _raises_ro(op, arg="self"):
    return pytest.raises(ValueError, match=rf"^{op}\(\): " + RO_MSG.format(arg=arg))


def test_read_only_sources_give_read_only_tensors(ro):
    assert ro.is_readonly
    assert ro._storage.readonly is True
    flat = ro.reshape(-1)
    for v in (ro[0], flat[1:], flat[::2], ro.T if ro.ndim == 2 else flat, flat.unsqueeze(0),
              flat.reshape(ro.shape), tl.asarray(ro)):
        assert v.is_readonly


def test_setitem_is_refused(ro):
    flat = ro.reshape(-1)
    idx = tl.asarray([0, 1])
    mask = tl.asarray([True] + [False] * (flat.shape[0] - 1))
    for target, key, value in [(ro, 0, 99), (ro, ..., 1), (flat, slice(1, 3), 5),
                               (flat, idx, 7), (flat, mask, 3), (flat[1:], 0, 1),
                               (flat, 0, tl.asarray(2).astype(flat.dtype))]:
        with _raises_ro("__setitem__"):
            target[key] = value


# in-place on autograd metadata only: they write no element
_METADATA_INPLACE = {"detach_", "requires_grad_"}


def _inplace_methods():
    return sorted(n for n in dir(tl.Tensor) if n.endswith("_") and not n.endswith("__")
                  and n not in _METADATA_INPLACE)


def test_metadata_inplace_methods_leave_read_only_memory_alone(ro):
    before = ro.numpy().copy()
    if ro.dtype.kind in "fc":
        ro.requires_grad_()
    ro.detach_()
    np.testing.assert_array_equal(ro.numpy(), before)
    assert ro.is_readonly


def test_every_inplace_method_is_refused(ro):
    w = tl.ones(ro.shape, dtype=ro.dtype)
    for name in _inplace_methods():
        method = getattr(ro, name)
        params = [p for p in inspect.signature(method).parameters.values()
                  if p.default is inspect.Parameter.empty and p.kind in
                  (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        args = [w] * len(params)
        if name == "fill_":
            args = [1]
        # the op named in the message is the schema's (aliases share it)
        with pytest.raises(ValueError, match=r"_\(\): argument 'self' is read-only"):
            method(*args)


@pytest.mark.parametrize("op", ["__iadd__", "__isub__", "__imul__", "__itruediv__",
                                "__ifloordiv__", "__imod__", "__ipow__", "__iand__", "__ior__",
                                "__ixor__", "__ilshift__", "__irshift__", "__imatmul__"])
def test_inplace_operators_are_refused(op):
    a = _ro_array("int64") if op in ("__iand__", "__ior__", "__ixor__", "__ilshift__",
                                     "__irshift__") else _ro_array()
    before = a.copy()
    t = tl.asarray(a)
    with pytest.raises(ValueError, match=r"_\(\): argument 'self' is read-only"):
        getattr(t, op)(tl.asarray(a.T.copy()) if op == "__imatmul__" else 1)
    np.testing.assert_array_equal(a, before)


def test_statement_forms(ro):
    x = ro
    with _raises_ro("add_"):
        x += 1
    with _raises_ro("multiply_"):
        x *= 2
    with _raises_ro("add_"):
        x[0:1] += 1  # the view's in-place add is refused before __setitem__


def test_out_arguments_are_refused(ro):
    w = tl.ones(ro.shape, dtype=ro.dtype)
    flat = ro.reshape(-1)
    calls = [
        ("add", lambda: tl.add(w, w, out=ro)),
        ("exp", lambda: tl.exp(w.astype(tl.float64), out=ro)),
        ("where", lambda: tl.where(w > 0, w, w, out=ro)),
        ("sum", lambda: tl.sum(w, out=ro[0, 0] if ro.ndim == 2 else ro[0])),
        ("cumsum", lambda: tl.cumsum(flat, out=flat)),
        ("matmul", lambda: tl.matmul(w.reshape(-1, 1), w.reshape(1, -1)[:, :1], out=ro)),
        ("equal", lambda: tl.equal(w, w, out=ro)),
    ]
    for op, call in calls:
        with _raises_ro(op, "out"):
            call()


def test_copy_fill_and_random_fills_are_refused(ro):
    w = tl.ones(ro.shape, dtype=ro.dtype)
    with _raises_ro("copy_"):
        ro.copy_(w)
    with _raises_ro("fill_"):
        ro.fill_(0)
    with _raises_ro("uniform_"):
        ro.uniform_()
    with _raises_ro("normal_"):
        ro.normal_()
    with _raises_ro("random_"):
        ro.random_(0, 10)


def test_every_op_with_a_written_argument_checks_it():
    """The generated entry point of each op refuses a read-only tensor in each argument its
    schema marks as written, before anything else looks at the arguments."""
    t = tl.asarray(_ro_array())
    checked = 0
    for name, op in sorted(dispatcher._OPS.items()):
        written = [i for i, a in enumerate(op.schema.arguments) if a.is_write]
        for i in written:
            args = [None] * len(op.schema.arguments)
            args[i] = [t] if op.schema.arguments[i].type.is_list else t
            with _raises_ro(op.schema.name, op.schema.arguments[i].name):
                op.call(*args)
            checked += 1
    assert checked > 100  # every .out, in-place, copy_/fill_ and random fill op


def test_reading_read_only_tensors_works(ro):
    assert tl.add(ro, 1).tolist() == (_values(ro) + 1).tolist()
    c = ro.clone()
    assert not c.is_readonly
    c += 1
    w = tl.empty(ro.shape, dtype=ro.dtype)
    tl.add(ro, ro, out=w)  # read-only inputs, writable out
    w.copy_(ro)
    w[...] = ro
    w.add_(ro)
    np.testing.assert_array_equal(_values(w), _values(ro) * 2)
    assert not tl.asarray(ro, copy=True).is_readonly
    assert not tl.asarray(ro, dtype=tl.complex128).is_readonly


def test_dense_fast_path_does_not_bypass_the_check():
    from tensorlib.ops.pointwise import HOT_CALLS
    t = tl.asarray(_ro_array())
    w = tl.ones((2, 3), dtype=tl.float64)
    for _ in range(HOT_CALLS + 2):  # warm the fast path with read-only operands
        r = tl.add(t, w)
        r = tl.negative(t)
    assert not r.is_readonly
    with _raises_ro("add_"):
        t.add_(w)
    with _raises_ro("negative_"):
        t.negative_()
    with _raises_ro("add", "out"):
        tl.add(w, w, out=t)


def test_numpy_views_of_read_only_tensors_are_not_writeable(ro):
    for arr in (ro.numpy(), np.asarray(ro), ro.reshape(-1)[1:].numpy()):
        assert not arr.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            arr[...] = 0
    assert np.array(ro).flags.writeable  # np.array copies


def test_asarray_of_read_only_shares_and_copy_true_gives_writable():
    a = _ro_array()
    t = tl.asarray(a)
    assert t.data_ptr() == a.ctypes.data and t.is_readonly
    c = tl.asarray(a, copy=True)
    assert c.data_ptr() != a.ctypes.data and not c.is_readonly
    c[0, 0] = 42
    assert a[0, 0] == 0
    assert tl.from_numpy(a).data_ptr() == a.ctypes.data


def test_bytes_are_never_modified():
    b = b"\x01\x02\x03"
    t = tl.asarray(b)
    with _raises_ro("__setitem__"):
        t[0] = 99
    with _raises_ro("add_"):
        t += 1
    with _raises_ro("fill_"):
        t.fill_(0)
    assert b == b"\x01\x02\x03"
    t2 = tl.asarray(np.frombuffer(b, dtype=np.uint8))
    with _raises_ro("__setitem__"):
        t2[0] = 99
    assert b == b"\x01\x02\x03"
    c = tl.asarray(b, copy=True)
    c[0] = 99
    assert b == b"\x01\x02\x03" and c.tolist() == [99, 2, 3]


def test_read_only_empty_and_zero_d_arrays():
    a = np.empty((0, 3))
    a.flags.writeable = False
    t = tl.asarray(a)
    assert t.is_readonly
    with _raises_ro("fill_"):
        t.fill_(1)
    s = np.array(2.5)
    s.flags.writeable = False
    t = tl.asarray(s)
    with _raises_ro("__setitem__"):
        t[()] = 1
    assert s == 2.5


def test_writable_numpy_arrays_still_share_and_stay_writable():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    for t in (tl.asarray(a), tl.from_numpy(a), tl.asarray(a, copy=False)):
        assert not t.is_readonly and t.data_ptr() == a.ctypes.data
    t = tl.asarray(a)
    t[0, 0] = 5
    t += 1
    tl.add(t, t, out=t)
    assert a[0, 0] == 12 and a.flags.writeable
    assert t.numpy().flags.writeable
    t.numpy()[0, 1] = -1
    assert a[0, 1] == -1


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int16", "float16", "float32", "int64",
                                   "complex128"])
@pytest.mark.parametrize("shape", [(), (1,), (7,), (3, 5)])
def test_contiguous_arrays_share_their_block_and_keep_it_alive(dtype, shape):
    # (C-contiguous writable arrays take a byte view of themselves, no byte bounds / ctypes)
    a = (np.arange(max(1, int(np.prod(shape)))) % 3).astype(dtype).reshape(shape)
    want = a.copy()
    t = tl.asarray(a)
    assert t.data_ptr() == a.ctypes.data and t.shape == a.shape and not t.is_readonly
    assert t._storage.nbytes == a.nbytes
    del a
    import gc
    gc.collect()
    np.testing.assert_array_equal(t.numpy(), want)  # the storage keeps the array alive
    u = t + t
    np.testing.assert_array_equal(u.numpy(), want + want)
    view = np.arange(24, dtype=np.float32).reshape(4, 6)[1:3]  # contiguous, at an offset
    tv = tl.asarray(view)
    assert tv.data_ptr() == view.ctypes.data and tv.tolist() == view.tolist()


def test_fresh_tensors_are_writable():
    for t in (tl.zeros(3), tl.empty(2), tl.arange(4), tl.asarray([1, 2]), tl.ones(2) + 1):
        assert t._storage.readonly is False and not t.is_readonly


# ---- CUDA (interpret backend): the checks are device-generic ------------------------------------
@pytest.mark.usefixtures("cuda_interpret")
def test_cuda_reads_read_only_cpu_tensors_but_never_writes_them():
    a = _ro_array("float32")
    before = a.copy()
    t = tl.asarray(a)
    g = tl.asarray(a, device="cuda")
    assert g.device.type == "cuda" and not g.is_readonly
    assert not t.to("cuda").is_readonly
    g2 = tl.zeros((2, 3), dtype=tl.float32, device="cuda")
    g2.copy_(t)  # reading it is fine
    np.testing.assert_array_equal(_values(g2), a)
    with _raises_ro("copy_"):
        t.copy_(g2)  # cross-device copy into read-only memory
    with _raises_ro("add", "out"):
        tl.add(g2, g2, out=t)  # refused before the device mismatch is looked at
    g2 += 1
    assert not g2.is_readonly
    back = g2.cpu()
    assert not back.is_readonly
    np.testing.assert_array_equal(a, before)


def test_no_runtime_warning_for_plain_conversions():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tl.asarray([1 / 3, 2], dtype=tl.float64)
        tl.asarray([2 ** 62 + 1], dtype=tl.int64)
        tl.asarray(array.array("d", [1.0]))
