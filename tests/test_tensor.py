"""Tensor basics: metadata, NumPy interop (zero-copy, lifetimes), Python conversions, repr,
asarray/tensor, and astype over every dtype pair (NumPy's astype as the oracle)."""
from __future__ import annotations

import gc
import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tensorlib as tl
from helpers import ALL_DTYPES, arrays, assert_close, to_numpy


# ---------------------------------------------------------------- metadata

@given(arrays("float32", max_dims=4))
def test_metadata_matches_numpy_float32(a):
    _check_metadata(a)


@given(st.sampled_from(["int8", "int64", "complex128", "bool", "uint16"]).flatmap(
    lambda d: arrays(d, max_dims=3)))
def test_metadata_matches_numpy_other_dtypes(a):
    _check_metadata(a)


def _check_metadata(a):
    t = tl.from_numpy(a)
    item = a.itemsize
    assert t.shape == a.shape
    assert t.ndim == a.ndim == t.dim()
    assert t.size == a.size == t.numel()
    assert t.stride() == tuple(s // item for s in a.strides)
    for d in range(a.ndim):
        assert t.stride(d) == a.strides[d] // item
        assert t.stride(d - a.ndim) == a.strides[d] // item
    assert t.itemsize == item == t.element_size()
    assert t.nbytes == a.nbytes
    assert t.data_ptr() == a.ctypes.data
    assert t.is_contiguous() == a.flags.c_contiguous
    base = t.data_ptr() - t.storage_offset() * item
    assert base == t.untyped_storage().data_ptr()
    assert t.T.shape == a.T.shape and t.T.stride() == tuple(s // item for s in a.T.strides)
    np.testing.assert_array_equal(to_numpy(t.T), a.T)
    if a.ndim >= 2:
        mt = np.swapaxes(a, -1, -2)
        assert t.mT.shape == mt.shape
        np.testing.assert_array_equal(to_numpy(t.mT), mt)
    else:
        with pytest.raises(ValueError):
            t.mT
    assert t.device == tl.Device("cpu") and t.device == "cpu" and not t.is_cuda


def test_stride_dim_out_of_range():
    t = tl.zeros((2, 3))
    with pytest.raises(IndexError):
        t.stride(2)
    with pytest.raises(IndexError):
        t.stride(-3)


def test_storage_offset_of_views():
    t = tl.zeros((4, 5))
    assert t.storage_offset() == 0
    assert t[1].storage_offset() == 5
    assert t[1:, 2:].storage_offset() == 7
    assert t[::-1].storage_offset() == 15
    assert t[1:, 2:].data_ptr() == t.data_ptr() + 7 * 4


def test_is_contiguous_edge_cases():
    assert tl.zeros(()).is_contiguous()
    assert tl.zeros((0, 3)).T.is_contiguous()  # no elements: any strides
    assert tl.zeros((3, 1)).T.is_contiguous()  # size-1 dims don't count
    assert not tl.zeros((3, 4)).T.is_contiguous()
    assert not tl.zeros(1).expand((3,)).is_contiguous()
    assert not tl.zeros(6)[::2].is_contiguous()


def test_tensor_cannot_be_constructed_directly():
    with pytest.raises(TypeError):
        tl.Tensor()


# ---------------------------------------------------------------- NumPy interop

def test_numpy_is_zero_copy_both_ways():
    t = tl.zeros((2, 3))
    n = t.numpy()
    assert n.dtype == np.float32 and n.shape == (2, 3)
    assert n.ctypes.data == t.data_ptr()
    n[0, 1] = 5.0
    assert t[0, 1].item() == 5.0
    t[1, 2] = 7.0
    assert n[1, 2] == 7.0
    # a strided view keeps its strides
    v = t.T.numpy()
    assert v.strides == (4, 12)
    assert np.shares_memory(v, n)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "uint16", "int64", "bool",
                                   "float16", "complex64"])
def test_numpy_views_of_every_layout(dtype):
    """numpy() and np.asarray() of views of every layout (transposed, negative steps, offsets,
    0-d, empty, size-1 dims, contiguous with odd strides on a size-1 dim): the same values,
    the tensor's data pointer, NumPy's strides for it; writes go through."""
    base = np.arange(2 * 3 * 4).reshape(2, 3, 4).astype(dtype)
    t = tl.asarray(base.copy())
    views = [(t, base), (t.T, base.T), (t[:, ::-1, 1::2], base[:, ::-1, 1::2]),
             (t[1], base[1]), (t[1, 2, 3], base[1, 2, 3]), (t[:, 1:1], base[:, 1:1]),
             (t[:1, 2:3], base[:1, 2:3]), (t.reshape((24,))[5:], base.reshape(24)[5:])]
    for v, want in views:
        for got in (v.numpy(), np.asarray(v)):
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want)
            if want.size:
                assert got.ctypes.data == v.data_ptr()
                assert got.strides == tuple(s * v.dtype.itemsize for s in v.stride()) or \
                    want.size == 1 or got.flags.c_contiguous
    w = t[:, ::-1].numpy()
    w[0, 0, 0] = base[1, 1, 1]
    assert t[0, 2, 0].item() == base[1, 1, 1].item()


def test_from_numpy_is_zero_copy_both_ways():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)[:, ::-1]
    t = tl.from_numpy(a)
    a[0, 0] = 100
    assert t[0, 0].item() == 100
    t.fill_(3)
    assert (a == 3).all()


def test_from_numpy_keeps_the_array_alive():
    a = np.arange(1000, dtype=np.float64)
    t = tl.from_numpy(a[::3])
    del a
    gc.collect()
    junk = [np.full(1000, -1.0) for _ in range(50)]  # would reuse freed memory
    assert to_numpy(t).tolist() == list(np.arange(0, 1000, 3, dtype=np.float64))
    del junk


def test_numpy_view_keeps_storage_alive():
    t = tl.arange(100, dtype=tl.int64)
    n = t.numpy()
    del t
    gc.collect()
    others = [tl.full(100, -1, dtype=tl.int64) for _ in range(5)]  # would reuse the block
    assert n.tolist() == list(range(100))
    del others


def test_from_numpy_rejects_bad_input():
    with pytest.raises(TypeError):
        tl.from_numpy([1, 2])
    with pytest.raises(TypeError):
        tl.from_numpy(np.array(["a"]))
    with pytest.raises(TypeError):
        tl.from_numpy(np.arange(3, dtype=">i4"))
    with pytest.raises(TypeError):
        tl.from_numpy(np.array([object()]))


@pytest.fixture
def no_auto_gc():
    """Stops a collection of unrelated garbage from freeing blocks mid-test."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def test_storage_freed_and_reused_when_last_view_dies(no_auto_gc):
    s0 = tl.cpu.memory_stats()
    t = tl.empty(1000)
    ptr = t.data_ptr()
    v = t[10:20]
    s1 = tl.cpu.memory_stats()
    assert s1["allocation.current"] == s0["allocation.current"] + 1
    assert s1["allocated_bytes.current"] >= s0["allocated_bytes.current"] + 4000
    del t
    gc.collect()
    assert tl.cpu.memory_stats()["allocation.current"] == s1["allocation.current"]  # v holds it
    del v
    gc.collect()
    s2 = tl.cpu.memory_stats()
    assert s2["allocation.current"] == s0["allocation.current"]
    assert s2["allocated_bytes.current"] == s0["allocated_bytes.current"]
    hits = s2["num_cache_hits"]
    again = tl.empty(1000)
    s3 = tl.cpu.memory_stats()
    assert s3["num_cache_hits"] == hits + 1
    assert again.data_ptr() == ptr  # most recently freed block of that size
    del again


def test_array_protocols():
    t = tl.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    iface = t.T.__array_interface__
    assert iface["shape"] == (3, 2) and iface["typestr"] == "<f4"
    assert iface["strides"] == (4, 12) and iface["data"][0] == t.data_ptr()
    a = np.asarray(t)
    assert np.shares_memory(a, t.numpy())
    b = np.array(t)  # copies
    assert not np.shares_memory(b, t.numpy())
    np.testing.assert_array_equal(b, a)
    c = np.asarray(t, dtype=np.float64)
    assert c.dtype == np.float64 and c.tolist() == a.tolist()
    with pytest.raises(ValueError):
        np.array(t, dtype=np.float64, copy=False)
    assert np.array(t, copy=False).ctypes.data == t.data_ptr()


def test_bfloat16_has_no_numpy_view_but_converts():
    t = tl.asarray([1.5, -2.0]).astype(tl.bfloat16)
    with pytest.raises(TypeError, match="bfloat16"):
        t.numpy()
    a = np.asarray(t)
    assert a.dtype == np.float32 and a.tolist() == [1.5, -2.0]
    with pytest.raises(ValueError):
        np.array(t, copy=False)


def test_array_namespace():
    t = tl.zeros(1)
    assert t.__array_namespace__() is tl
    with pytest.raises(ValueError):
        t.__array_namespace__(api_version="1999.01")


# ---------------------------------------------------------------- Python conversions

@pytest.mark.parametrize("dtype,value,pytype", [
    ("float32", 1.5, float), ("float64", -2.25, float), ("int8", -7, int), ("uint64", 2 ** 63,
                                                                             int),
    ("bool", True, bool), ("complex64", 1 + 2j, complex), ("bfloat16", 1.5, float),
    ("float16", 0.5, float),
])
def test_item(dtype, value, pytype):
    if dtype == "bfloat16":
        t = tl.asarray(np.array([value], np.float32)).astype(dtype)
    else:
        t = tl.from_numpy(np.array([value], dtype))
    got = t.item()
    assert type(got) is pytype and got == value
    assert t.reshape(()).item() == value
    assert t.tolist() == [value]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "uint16", "int64", "uint64",
                                   "bool", "complex128", "float16"])
def test_item_reads_the_element_at_its_offset(dtype):
    """item() / float() / int() / bool() read the one element from the storage's bytes: at
    an offset into a tensor, into a view, into memory borrowed from a strided NumPy array,
    and after an in-place write."""
    a = (np.arange(24) * 3 - 30).reshape(4, 6).astype(dtype)
    t = tl.from_numpy(a)
    for i, j in ((0, 0), (2, 5), (3, 1)):
        assert t[i, j].item() == a[i, j].item()
        assert t.T[j, i].item() == a[i, j].item()
        assert bool(t[i, j]) == bool(a[i, j])
    borrowed = tl.asarray(a[1::2, ::-3])       # a strided NumPy array's memory
    assert borrowed[1, 1].item() == a[1::2, ::-3][1, 1].item()
    u = t[2, 3]
    u.fill_(1)
    assert u.item() == 1 and a[2, 3] == 1
    if dtype not in ("bool", "complex128"):
        assert int(t[3, 2]) == int(a[3, 2]) and float(t[0, 4]) == float(a[0, 4])


def test_item_errors():
    with pytest.raises(ValueError):
        tl.zeros(2).item()
    with pytest.raises(ValueError):
        tl.zeros(0).item()


def test_tolist():
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    t = tl.from_numpy(a).T
    assert t.tolist() == a.T.tolist()
    assert tl.asarray(3.0).tolist() == 3.0
    assert tl.zeros((2, 0)).tolist() == [[], []]
    assert tl.asarray([1.0, 2.0]).astype(tl.bfloat16).tolist() == [1.0, 2.0]


def test_bool_int_float_complex_index():
    assert bool(tl.asarray([0.5])) is True
    assert bool(tl.asarray(0)) is False
    with pytest.raises(ValueError):
        bool(tl.zeros(2))
    with pytest.raises(ValueError):
        bool(tl.zeros(0))
    assert int(tl.asarray([[7.9]])) == 7
    assert int(tl.asarray(-7.9)) == -7
    with pytest.raises(TypeError):
        int(tl.zeros(3))
    assert float(tl.asarray(3)) == 3.0
    with pytest.raises(TypeError):
        float(tl.asarray(1 + 1j))
    with pytest.raises(TypeError):
        float(tl.zeros(2))
    assert complex(tl.asarray(2.0)) == 2 + 0j
    assert [10, 20, 30][tl.asarray(2)] == 30
    assert range(10)[tl.asarray(np.array([3], np.uint8))] == 3
    with pytest.raises(TypeError):
        [1, 2][tl.asarray(1.0)]
    with pytest.raises(TypeError):
        [1, 2][tl.asarray([0, 1])]
    with pytest.raises(TypeError):
        [1, 2][tl.asarray(True)]


def test_len_and_iter():
    t = tl.asarray(np.arange(6, dtype=np.float32).reshape(3, 2))
    assert len(t) == 3
    rows = list(t)
    assert len(rows) == 3 and all(r.shape == (2,) for r in rows)
    assert rows[1].tolist() == [2.0, 3.0]
    rows[2].fill_(-1.0)  # rows are views
    assert t[2].tolist() == [-1.0, -1.0]
    assert len(tl.zeros((0, 4))) == 0 and list(tl.zeros((0, 4))) == []
    with pytest.raises(TypeError):
        len(tl.asarray(1.0))
    with pytest.raises(TypeError):
        iter(tl.asarray(1.0))


def test_repr():
    assert repr(tl.asarray([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(tl.asarray([1, 2])) == "tensor([1, 2])"
    assert repr(tl.asarray([True, False])) == "tensor([ True, False])"
    assert repr(tl.asarray(3.5)) == "tensor(3.5000)" or repr(tl.asarray(3.5)) == "tensor(3.5)"
    assert "dtype=tensorlib.float64" in repr(tl.asarray(np.array([1.0])))
    assert "dtype=tensorlib.int8" in repr(tl.asarray(np.array([1], np.int8)))
    assert "dtype=tensorlib.bfloat16" in repr(tl.asarray([1.5]).astype(tl.bfloat16))
    assert repr(tl.zeros(0)) == "tensor([])"
    assert repr(tl.zeros((2, 0))) == "tensor([], size=(2, 0))"
    assert "dtype=tensorlib.int64" in repr(tl.zeros(0, dtype=tl.int64))
    assert str(tl.asarray([1.0])) == repr(tl.asarray([1.0]))
    t = tl.asarray(np.arange(6, dtype=np.float32).reshape(2, 3)).T  # non-contiguous
    assert repr(t) == "tensor([[0., 3.],\n        [1., 4.],\n        [2., 5.]])"
    big = repr(tl.arange(5000))
    assert "..." in big and len(big) < 200


# ---------------------------------------------------------------- asarray / tensor

def test_asarray_infers_dtypes_from_python_data():
    assert tl.asarray([1.0, 2]).dtype is tl.float32
    assert tl.asarray(1.5).dtype is tl.float32
    assert tl.asarray([1, 2]).dtype is tl.int64
    assert tl.asarray(7).dtype is tl.int64
    assert tl.asarray([True, False]).dtype is tl.bool
    assert tl.asarray([1j, 2]).dtype is tl.complex64
    assert tl.asarray([[1, 2], [3, 4]]).shape == (2, 2)
    assert tl.asarray([]).shape == (0,) and tl.asarray([]).dtype is tl.float32
    # NumPy scalars and arrays keep their own dtype
    assert tl.asarray(np.float64(1.0)).dtype is tl.float64
    assert tl.asarray(np.arange(3, dtype=np.uint16)).dtype is tl.uint16
    assert tl.asarray([1, 2], dtype=tl.float64).dtype is tl.float64
    assert tl.asarray([1, 2], dtype="int8").tolist() == [1, 2]


def test_asarray_python_ints_beyond_int64():
    # NumPy would give float64 (lists) or object (scalars); never a lossy float here
    assert tl.asarray(2 ** 63).dtype is tl.uint64
    t = tl.asarray([[1, 2], [3, 2 ** 63]])
    assert t.dtype is tl.uint64 and t.tolist() == [[1, 2], [3, 2 ** 63]]
    for bad in ([-1, 2 ** 63], 2 ** 64, [2 ** 70]):
        with pytest.raises(OverflowError):
            tl.asarray(bad)
    assert tl.asarray([1.5, 2 ** 63]).dtype is tl.float32  # a float in the data: float
    assert tl.asarray([[], []]).dtype is tl.float32


def test_asarray_bad_data():
    with pytest.raises(ValueError):
        tl.asarray([[1, 2], [3]])
    with pytest.raises(TypeError):
        tl.asarray("abc")
    with pytest.raises(TypeError):
        tl.asarray(["a", "b"])
    with pytest.raises(TypeError):
        tl.asarray([object()])
    with pytest.raises(TypeError):
        tl.asarray(np.array(["x"]))
    with pytest.raises(TypeError):
        tl.asarray({"a": 1})
    with pytest.raises(OverflowError):
        tl.asarray(2 ** 70)
    with pytest.raises(TypeError, match="dtype"):
        tl.asarray([1], dtype="nope")


def test_asarray_copy_semantics_numpy():
    a = np.arange(4, dtype=np.float32)
    shared = tl.asarray(a)  # copy=None: no copy when none is needed
    assert shared.data_ptr() == a.ctypes.data
    forced = tl.asarray(a, copy=True)
    assert forced.data_ptr() != a.ctypes.data
    a[0] = 9.0
    assert shared[0].item() == 9.0 and forced[0].item() == 0.0
    assert tl.asarray(a, copy=False).data_ptr() == a.ctypes.data
    converted = tl.asarray(a, dtype=tl.float64)  # copy=None: copies to convert
    assert converted.dtype is tl.float64 and converted.tolist() == a.tolist()
    with pytest.raises(ValueError):
        tl.asarray(a, dtype=tl.float64, copy=False)
    with pytest.raises(ValueError):
        tl.asarray([1.0, 2.0], copy=False)


def test_asarray_copy_semantics_tensor():
    t = tl.zeros(3)
    assert tl.asarray(t) is t or tl.asarray(t).data_ptr() == t.data_ptr()
    assert tl.asarray(t, dtype=tl.float32, copy=False).data_ptr() == t.data_ptr()
    c = tl.asarray(t, copy=True)
    assert c.data_ptr() != t.data_ptr()
    c.fill_(1.0)
    assert t.tolist() == [0.0] * 3
    with pytest.raises(ValueError):
        tl.asarray(t, dtype=tl.int32, copy=False)
    assert tl.asarray(t, device="cpu").data_ptr() == t.data_ptr()


def test_asarray_non_native_and_misaligned_numpy():
    swapped = np.arange(4, dtype=">i4")
    t = tl.asarray(swapped)
    assert t.dtype is tl.int32 and t.tolist() == [0, 1, 2, 3]
    raw = np.zeros(9, np.uint8)
    odd = raw[1:].view(np.int16)  # fine
    assert tl.asarray(odd).shape == (4,)
    rec = np.zeros(3, dtype=[("a", "i4"), ("b", "i2")])["a"]  # strides 6: not a multiple of 4
    t2 = tl.asarray(rec)
    assert t2.tolist() == [0, 0, 0]


def test_tensor_always_copies():
    a = np.arange(3, dtype=np.int32)
    t = tl.tensor(a)
    assert t.data_ptr() != a.ctypes.data and t.dtype is tl.int32
    t2 = tl.tensor(t)
    assert t2.data_ptr() != t.data_ptr() and t2.tolist() == [0, 1, 2]
    assert tl.tensor([1.0, 2.0]).dtype is tl.float32
    assert tl.tensor(3, dtype=tl.float64).dtype is tl.float64
    with pytest.raises(TypeError):
        tl.tensor("x")


# ---------------------------------------------------------------- astype, every pair

def _source_values(dtype):
    d = np.dtype("float32" if dtype == "bfloat16" else dtype)
    if d.kind == "b":
        return np.array([True, False, True, True])
    if d.kind in "iu":
        vals = [0, 1, 2, 100, 127, 200, 255, 1000, 2000, -1, -100, -128, -2000]
        info = np.iinfo(d)
        return np.array([v for v in vals if info.min <= v <= info.max], d)
    if d.kind == "f":  # values exact in bfloat16 and float16
        return np.array([0.0, -0.0, 1.5, -2.25, 100.0, 0.5, -1.0, 1000.0, 255.0], d)
    return np.array([1 + 2j, -1.5 + 0j, 0j, 100 - 3j, 2.5 + 0.5j], d)


def _in_range_for(src, dst_dtype):
    """Float (or complex) -> int: only values whose truncation fits the destination."""
    dst = np.dtype(dst_dtype)
    if src.dtype.kind not in "fc" or dst.kind not in "iu":
        return src
    r = np.trunc(src.real.astype(np.float64))
    info = np.iinfo(dst)
    return src[(r >= info.min) & (r <= info.max)]


def _make(values, dtype):
    if dtype == "bfloat16":
        return tl.from_numpy(values.astype(np.float32)).astype(tl.bfloat16)
    return tl.from_numpy(values)


@pytest.mark.parametrize("src,dst", list(itertools.product(ALL_DTYPES, ALL_DTYPES)))
def test_astype_all_pairs(src, dst):
    vals = _in_range_for(_source_values(src), "float32" if dst == "bfloat16" else dst)
    t = _make(vals, src)
    got = t.astype(dst)
    assert got.dtype.name == dst and got.shape == vals.shape
    assert got.data_ptr() != t.data_ptr() or vals.size == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # complex -> real drops the imaginary part
        want = vals.astype(np.float32 if dst == "bfloat16" else dst)
    assert_close(to_numpy(got), want, dst)


def test_astype_strided_source_and_copy_flag():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)[::-1, ::2]
    t = tl.from_numpy(a)
    f = t.astype(tl.float64)
    np.testing.assert_array_equal(to_numpy(f), a.astype(np.float64))
    assert t.astype(tl.int32, copy=False) is t
    same = t.astype(tl.int32)  # copy=True by default
    assert same.data_ptr() != t.data_ptr()
    np.testing.assert_array_equal(to_numpy(same), a)
    assert tl.astype(t, "float64").dtype is tl.float64
    with pytest.raises(TypeError, match="dtype"):
        t.astype("bogus")


def test_astype_nan_and_inf_to_int_does_not_crash():
    t = tl.asarray(np.array([np.nan, np.inf, -np.inf, 1e30, -1e30], np.float64))
    for d in ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool"]:
        got = t.astype(d)
        assert got.dtype.name == d and got.shape == (5,)
    assert t.astype(tl.bool).tolist() == [True] * 5


def test_astype_special_floats_between_float_types():
    vals = np.array([np.nan, np.inf, -np.inf, -0.0, 65504.0, 65520.0, 1e-8, 6e-8, 1e300])
    for d in ("float16", "float32"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = vals.astype(d)
        got = to_numpy(tl.from_numpy(vals).astype(d))
        np.testing.assert_array_equal(got.view(f"u{got.itemsize}"),
                                      np.where(np.isnan(want), got, want).view(
                                          f"u{got.itemsize}"))
        assert np.isnan(got[0])


# ---------------------------------------------------------------- rounding to half types

def _bf16_bits(t):
    return to_numpy(t).view(np.uint32) >> 16


def _rne_bf16_bits_exact(values):
    """Correctly rounded bfloat16 bit patterns of float64/int values (Python's exact ints)."""
    from fractions import Fraction
    out = []
    for v in values:
        f = Fraction(v)
        sign = 0x8000 if f < 0 else 0
        f = abs(f)
        if f == 0:
            out.append(sign)
            continue
        e = f.numerator.bit_length() - f.denominator.bit_length()
        if Fraction(2) ** e > f:
            e -= 1
        m = f / Fraction(2) ** e * 128  # 8 significant bits: [128, 256)
        q, r = divmod(m.numerator, m.denominator)
        rem = Fraction(r, m.denominator)
        if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and q & 1):
            q += 1
        if q == 256:
            q, e = 128, e + 1
        out.append(sign | ((e + 127) << 7) | (q - 128))
    return np.array(out, np.uint32)


def test_bfloat16_round_to_nearest_even_from_float32():
    one = 0x3F800000
    bits = np.array([one, one + 0x7FFF, one + 0x8000, one + 0x8001, one + 0x18000,
                     one + 0x17FFF, 0x7F7FFFFF, 0xFF7FFFFF, 0x00008000, 0x80018000], np.uint32)
    x = bits.view(np.float32)
    got = _bf16_bits(tl.from_numpy(x).astype(tl.bfloat16))
    # tie 0x8000 goes to even (down); 0x18000 is a tie from odd (up); max float -> inf
    want = [0x3F80, 0x3F80, 0x3F80, 0x3F81, 0x3F82, 0x3F81, 0x7F80, 0xFF80, 0x0000, 0x8002]
    assert got.tolist() == want
    nan = _bf16_bits(tl.asarray([np.nan]).astype(tl.bfloat16))[0]
    assert (nan & 0x7F80) == 0x7F80 and (nan & 0x7F) != 0


def test_bfloat16_round_trip_and_arithmetic_rounding():
    vals = np.array([1.0, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 3.140625, -2.0 ** -130], np.float32)
    b = tl.from_numpy(vals).astype(tl.bfloat16)
    assert b.astype(tl.float32).tolist() == [1.0, 1.0, 1 + 2 ** -6, 3.140625, -2.0 ** -130]


def test_half_types_round_correctly_from_float64_and_int64():
    """No double rounding through float32: ties created by the float32 step must not count."""
    f64 = [1 + 2 ** -8 + 2 ** -40, 1 + 2 ** -8 - 2 ** -40, -(3 + 2 ** -7 + 2 ** -35), 2.0 ** 100]
    got = _bf16_bits(tl.from_numpy(np.array(f64)).astype(tl.bfloat16))
    assert got.tolist() == _rne_bf16_bits_exact(f64).tolist()
    ints = [(1 << 30) + (1 << 22) + 1, (1 << 40) + (1 << 32) + 3, -((1 << 62) + (1 << 54) + 1)]
    got = _bf16_bits(tl.from_numpy(np.array(ints, np.int64)).astype(tl.bfloat16))
    assert got.tolist() == _rne_bf16_bits_exact(ints).tolist()
    h = np.array([1 + 2 ** -11 + 2 ** -40, 1 + 2 ** -11, 2049 + 2 ** -30, 1e-7 + 1e-20])
    got16 = to_numpy(tl.from_numpy(h).astype(tl.float16))
    np.testing.assert_array_equal(got16.view(np.uint16), h.astype(np.float16).view(np.uint16))


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e5, max_value=1e5)
                | st.integers(-2 ** 17, 2 ** 17).map(lambda i: 1 + i * 2.0 ** -18),
                min_size=1, max_size=20))
def test_float64_to_float16_is_correctly_rounded(vals):
    h = np.array(vals, np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = h.astype(np.float16)
    got = to_numpy(tl.from_numpy(h).astype(tl.float16))
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


@given(st.lists(st.floats(min_value=1e-30, max_value=1e30) | st.floats(-1e30, -1e-30)
                | st.integers(-2 ** 20, 2 ** 20).map(lambda i: 1 + i * 2.0 ** -20),
                min_size=1, max_size=20),
       st.lists(st.integers(-2 ** 63, 2 ** 63 - 1), min_size=1, max_size=20))
def test_float64_and_int64_to_bfloat16_are_correctly_rounded(floats, ints):
    got = _bf16_bits(tl.from_numpy(np.array(floats)).astype(tl.bfloat16))
    assert got.tolist() == _rne_bf16_bits_exact(floats).tolist()
    got = _bf16_bits(tl.from_numpy(np.array(ints, np.int64)).astype(tl.bfloat16))
    assert got.tolist() == _rne_bf16_bits_exact(ints).tolist()
