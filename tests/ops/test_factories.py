"""Factories against NumPy: empty/zeros/ones/full, *_like, arange, linspace, eye; dtype defaults,
bad sizes / dtypes / devices, and allocator reuse."""
from __future__ import annotations

import gc
import math

import numpy as np
import pytest
from hypothesis import given

import tensorlib as tl
from helpers import arrays, assert_close, to_numpy

SHAPES = [(), 0, 3, (2, 3), (0, 4), (1, 1, 5), [2, 2]]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_zeros_ones_full_empty_match_numpy(shape):
    np_shape = tuple(shape) if isinstance(shape, list) else shape
    for fn, want in [(tl.zeros, np.zeros(np_shape, np.float32)),
                     (tl.ones, np.ones(np_shape, np.float32))]:
        t = fn(shape)
        assert t.dtype is tl.float32 and t.is_contiguous()
        np.testing.assert_array_equal(to_numpy(t), want)
    t = tl.full(shape, 2.5)
    assert t.dtype is tl.float32
    np.testing.assert_array_equal(to_numpy(t), np.full(np_shape, 2.5, np.float32))
    e = tl.empty(shape)
    assert e.shape == np.empty(np_shape).shape and e.dtype is tl.float32
    assert e.stride() == tuple(s // 8 for s in np.empty(np_shape).strides) or e.numel() == 0


# NumPy scalars count as the Python scalar of their kind, like everywhere a Scalar is taken
@pytest.mark.parametrize("value,dtype", [(2, tl.int64), (2.0, tl.float32), (True, tl.bool),
                                         (1j, tl.complex64), (np.float64(1.5), tl.float32),
                                         (np.int8(3), tl.int64), (np.complex128(1j),
                                                                  tl.complex64)])
def test_full_infers_dtype_from_fill_value(value, dtype):
    t = tl.full((2,), value)
    assert t.dtype is dtype
    assert t.tolist() == [value] * 2


@pytest.mark.parametrize("dtype", ["int8", "uint16", "float16", "bfloat16", "complex128", "bool"])
def test_factories_with_explicit_dtype(dtype):
    d = tl.dtypes.to_dtype(dtype)
    for fn, v in [(tl.zeros, 0), (tl.ones, 1)]:
        t = fn((2, 2), dtype=dtype)
        assert t.dtype is d and t.tolist() == [[v, v], [v, v]]
    assert tl.full(3, 1, dtype=d).tolist() == [1, 1, 1]
    assert tl.empty(3, dtype=dtype).dtype is d


def test_full_rounds_python_floats_once_into_half_types():
    # 1 + 2**-11 is a float16 tie; the extra 2**-40 must round it up (no float32 detour)
    h = tl.full(2, 1 + 2 ** -11 + 2 ** -40, dtype=tl.float16)
    assert to_numpy(h).tolist() == [1 + 2 ** -10] * 2
    b = tl.full(2, 1 + 2 ** -8 + 2 ** -40, dtype=tl.bfloat16)
    assert b.tolist() == [1 + 2 ** -7] * 2
    z = tl.zeros(3, dtype=tl.bfloat16)
    z[1] = 1 + 2 ** -8  # an exact tie goes to even
    assert z.tolist() == [0.0, 1.0, 0.0]


def test_full_value_errors():
    with pytest.raises(OverflowError):
        tl.full(2, 300, dtype=tl.int8)
    with pytest.raises(OverflowError):
        tl.full(2, 2 ** 70)
    with pytest.raises(TypeError, match="fill_value"):
        tl.full(2, "x")
    with pytest.raises(TypeError):
        tl.full(2, 1.5, dtype=tl.int32)  # no silent truncation
    with pytest.raises(TypeError):
        tl.full(2, 1j, dtype=tl.float32)
    assert tl.full(2, tl.asarray(3)).tolist() == [3, 3]  # a one-element tensor is a number


# ---------------------------------------------------------------- *_like

@given(arrays("float64", max_dims=3))
def test_like_factories_follow_the_input(a):
    t = tl.from_numpy(a)
    for fn, fill in [(tl.zeros_like, 0.0), (tl.ones_like, 1.0)]:
        r = fn(t)
        assert r.dtype is tl.float64 and r.shape == a.shape
        assert r.untyped_storage() is not t.untyped_storage()
        np.testing.assert_array_equal(to_numpy(r), np.full(a.shape, fill))
    r = tl.full_like(t, 7)
    np.testing.assert_array_equal(to_numpy(r), np.full(a.shape, 7.0))
    e = tl.empty_like(t, dtype=tl.int16)
    assert e.shape == a.shape and e.dtype is tl.int16
    # the result never aliases itself, whatever the input's strides
    assert len({s for n, s in zip(e.shape, e.stride()) if n > 1}) == sum(n > 1 for n in e.shape)


def test_like_factories_keep_a_dense_memory_order():
    t = tl.zeros((2, 3)).T
    assert tl.empty_like(t).stride() == t.stride()
    assert tl.zeros_like(t).stride() == t.stride()
    s = tl.zeros((4, 6))[::2, ::3]  # not dense: plain C order
    assert tl.empty_like(s).stride() == (2, 1)
    assert tl.empty_like(tl.zeros((6, 4))[::3, ::2].T).stride() == (2, 1)
    assert tl.empty_like(tl.zeros((3, 4))[::-1].T).stride() == (1, 4)  # reversed is dense
    e = tl.asarray([1.0, 2.0, 3.0]).expand((2, 3))  # broadcast dim: not innermost
    assert tl.empty_like(e).stride() == (3, 1)
    c = tl.clone(e)
    assert c.stride() == (3, 1) and c.tolist() == [[1.0, 2.0, 3.0]] * 2
    assert tl.ones_like(tl.zeros(2), dtype="int8").tolist() == [1, 1]
    assert tl.full_like(tl.zeros(2, dtype=tl.int32), 4).dtype is tl.int32
    with pytest.raises(TypeError):
        tl.zeros_like([1, 2])


# ---------------------------------------------------------------- arange / linspace / eye

@pytest.mark.parametrize("args,dtype", [
    ((5,), "int64"), ((2, 9), "int64"), ((2, 9, 3), "int64"), ((9, 2, -2), "int64"),
    ((0,), "int64"), ((5, 5), "int64"), ((5, 0), "int64"), ((0, 1, 0.1), "float32"),
    ((0.5,), "float32"), ((-1.5, 2.5, 0.5), "float32"), ((10, 0, -0.75), "float32"),
    ((0, 0.3, 0.1), "float32"),
])
def test_arange_matches_numpy(args, dtype):
    t = tl.arange(*args)
    assert t.dtype.name == dtype
    want = np.arange(*args, dtype=np.float64).astype(dtype)
    assert t.shape == want.shape
    assert_close(to_numpy(t), want, dtype)


@pytest.mark.parametrize("dtype", ["float64", "int32", "uint8", "float16", "bfloat16"])
def test_arange_with_dtype(dtype):
    t = tl.arange(1, 10, 3, dtype=dtype)
    assert t.dtype.name == dtype
    assert t.tolist() == [1, 4, 7]
    assert tl.arange(0, 1, 0.25, dtype="float64").tolist() == [0, 0.25, 0.5, 0.75]


def test_arange_errors():
    with pytest.raises(ValueError, match="step"):
        tl.arange(0, 5, 0)
    with pytest.raises(ValueError):
        tl.arange(0, float("nan"))
    with pytest.raises(ValueError):
        tl.arange(float("inf"))
    with pytest.raises(TypeError):
        tl.arange(0, 1j)
    with pytest.raises(TypeError):
        tl.arange("5")
    with pytest.raises((OverflowError, MemoryError)):
        tl.arange(0, 1e300, 1e-300)
    with pytest.raises((OverflowError, MemoryError)):
        tl.arange(2 ** 62)


@pytest.mark.parametrize("start,stop,num,endpoint", [
    (0, 1, 5, True), (0, 1, 5, False), (2, 3, 1, True), (2, 3, 0, True), (-1.5, 7.25, 13, True),
    (5, -5, 7, False), (0, 1, 1, False), (1e-3, 1e3, 50, True),
])
def test_linspace_matches_numpy(start, stop, num, endpoint):
    t = tl.linspace(start, stop, num, endpoint=endpoint)
    assert t.dtype is tl.float32
    want = np.linspace(start, stop, num, endpoint=endpoint).astype(np.float32)
    assert t.shape == want.shape
    assert_close(to_numpy(t), want, "float32")
    if endpoint and num > 1:
        assert to_numpy(t)[-1] == np.float32(stop)  # exact end point
    t64 = tl.linspace(start, stop, num, endpoint=endpoint, dtype=tl.float64)
    assert_close(to_numpy(t64), np.linspace(start, stop, num, endpoint=endpoint), "float64")


def test_linspace_other_dtypes_and_errors():
    assert tl.linspace(0, 10, 4, dtype="int64").tolist() == np.linspace(0, 10, 4).astype(
        np.int64).tolist()
    c = tl.linspace(0, 1j, 3)
    assert c.dtype is tl.complex64 and c.tolist() == [0j, 0.5j, 1j]
    with pytest.raises(ValueError, match="num"):
        tl.linspace(0, 1, -1)
    with pytest.raises(TypeError, match="num"):
        tl.linspace(0, 1, 2.5)


def test_linspace_end_point_errors_name_stop(device):
    """An end point the dtype cannot hold is refused naming linspace and 'stop' (it named
    __setitem__, which the user never called)."""
    for stop, dtype, err in ((1e30, "int64", OverflowError), (300, "uint8", OverflowError),
                             (math.nan, "int32", ValueError),
                             (2 ** 70, "int64", OverflowError)):
        with pytest.raises(err, match=r"linspace\(\): argument 'stop' = "):
            tl.linspace(0, stop, 3, dtype=dtype, device=device)
    with pytest.raises(OverflowError, match=r"linspace\(\): arguments 'start' = 0 and 'stop'"):
        tl.linspace(0, 2 ** 2000, 3, dtype="float32", device=device)
    np.testing.assert_array_equal(to_numpy(tl.linspace(0, 255, 4, dtype="uint8",
                                                       device=device)),
                                  np.linspace(0, 255, 4).astype(np.uint8))


@pytest.mark.parametrize("n,m,k", [(3, None, 0), (3, 4, 1), (4, 3, -1), (3, 3, 5), (3, 3, -3),
                                   (0, None, 0), (1, 5, 2), (5, 1, -4)])
def test_eye_matches_numpy(n, m, k):
    t = tl.eye(n, m, k=k)
    assert t.dtype is tl.float32
    np.testing.assert_array_equal(to_numpy(t), np.eye(n, m, k, dtype=np.float32))
    assert tl.eye(n, m, k=k, dtype=tl.int32).tolist() == np.eye(n, m, k, dtype=int).tolist()


def test_eye_errors():
    with pytest.raises(ValueError, match="eye"):
        tl.eye(-1)
    with pytest.raises(ValueError, match="eye"):
        tl.eye(2, -3)
    with pytest.raises(TypeError, match="n_rows"):
        tl.eye(2.5)


# ---------------------------------------------------------------- bad sizes, dtypes, devices

@pytest.mark.parametrize("fn", [tl.empty, tl.zeros, tl.ones, lambda s, **kw: tl.full(s, 1, **kw)],
                         ids=["empty", "zeros", "ones", "full"])
def test_bad_sizes_dtypes_devices(fn):
    with pytest.raises(ValueError, match="-1"):
        fn(-1)
    with pytest.raises(ValueError, match="-2"):
        fn((3, -2))
    with pytest.raises((OverflowError, MemoryError)):
        fn((2 ** 40, 2 ** 40))
    with pytest.raises((OverflowError, MemoryError)):
        fn(2 ** 62)
    with pytest.raises(TypeError, match="shape"):
        fn(2.0)
    with pytest.raises(TypeError, match="shape"):
        fn((2, "3"))
    with pytest.raises(TypeError, match="'float33'"):
        fn(2, dtype="float33")
    with pytest.raises(TypeError, match="dtype"):
        fn(2, dtype=object)
    with pytest.raises(ValueError, match="'tpu'"):
        fn(2, device="tpu")
    with pytest.raises(ValueError, match="'cpu:1'"):
        fn(2, device="cpu:1")
    with pytest.raises(TypeError, match="device"):
        fn(2, device=1.5)


def test_huge_size_that_fits_the_address_space_is_memory_error():
    with pytest.raises((MemoryError, OverflowError)):
        tl.empty(2 ** 45)  # 128 TiB: allocator refuses, no crash


def test_bad_size_names_the_called_function():
    with pytest.raises(ValueError, match="zeros"):
        tl.zeros(-1)
    with pytest.raises(OverflowError, match="ones"):
        tl.ones((2 ** 40, 2 ** 40))


def test_size_spellings():
    # a bare int, a NumPy integer, a bool (an int), a sequence, a 1-D integer array: one shape
    for size in (3, np.int64(3), [3], (3,), np.array([3])):
        assert tl.zeros(size).shape == (3,) and tl.empty(size).shape == (3,)
    assert tl.zeros(True).shape == (1,)
    for bad in (3.0, "3", None, [3.0]):
        with pytest.raises(TypeError, match="zeros.*shape"):
            tl.zeros(bad)


def test_device_spellings():
    for dev in ("cpu", tl.Device("cpu"), None):
        assert tl.zeros(1, device=dev).device == "cpu"
    assert repr(tl.Device("cpu")) == "device(type='cpu')"
    assert tl.Device("cuda:1").index == 1 and str(tl.Device("cuda:1")) == "cuda:1"
    with pytest.raises(ValueError):
        tl.Device("cuda:-1")
    with pytest.raises(TypeError):
        tl.Device(3.0)
    with pytest.raises(AttributeError):
        tl.Device("cpu").type = "cuda"


# ---------------------------------------------------------------- allocator reuse

@pytest.fixture
def no_auto_gc():
    """Stops a collection of unrelated garbage from freeing blocks mid-test."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def test_freed_factory_memory_is_reused(no_auto_gc):
    a = tl.zeros(4096)
    ptr = a.data_ptr()
    before = tl.cpu.memory_stats()
    del a
    gc.collect()
    freed = tl.cpu.memory_stats()
    assert freed["allocated_bytes.current"] < before["allocated_bytes.current"]
    assert freed["num_frees"] == before["num_frees"] + 1
    b = tl.ones(4096)  # same size class: served from the cache
    after = tl.cpu.memory_stats()
    assert after["num_cache_hits"] == freed["num_cache_hits"] + 1
    assert after["reserved_bytes.current"] == freed["reserved_bytes.current"]
    assert b.data_ptr() == ptr
    assert b[4095].item() == 1.0


def test_zero_size_tensors_allocate_nothing():
    gc.collect()
    before = tl.cpu.memory_stats()["allocated_bytes.current"]
    ts = [tl.zeros((0, 5)) for _ in range(10)]
    assert tl.cpu.memory_stats()["allocated_bytes.current"] == before
    assert all(t.numel() == 0 for t in ts)


def test_full_after_linspace_in_a_fresh_process():
    """full's fills are found at its own first call, whatever other factory ran first (the
    bench ran linspace before zeros, and zeros of 1e5 elements then called None)."""
    import subprocess
    import sys
    code = (
        "import numpy as np, tensorlib as tl\n"
        "tl.linspace(0.0, 1.0, 7)\n"
        "for n in (5, 100_000, 3_000_000):\n"
        "    for f, v in ((tl.zeros, 0), (tl.ones, 1)):\n"
        "        t = f((n,), dtype=tl.float32)\n"
        "        assert np.array_equal(t.numpy(), np.full(n, v, np.float32)), (f, n)\n"
        "    assert np.array_equal(tl.full((n,), 0).numpy(), np.zeros(n, np.int64))\n"
        "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int16", "int64", "float16", "bfloat16",
                                   "float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("n,m,k", [(4, 4, 0), (3, 6, 2), (6, 3, -2), (2, 5, 5), (5, 2, -5)])
def test_eye_every_dtype_and_off_diagonals(dtype, n, m, k):
    # the direct strided store (NumPy dtypes) and the diagonal view's fill_ (bfloat16) alike
    t = tl.eye(n, m, k=k, dtype=getattr(tl, dtype))
    assert t.dtype is getattr(tl, dtype) and t.shape == (n, m)
    np.testing.assert_array_equal(to_numpy(t.astype(tl.float64)), np.eye(n, m, k))


def test_eye_on_a_cpu_stream_matches():
    # with a user stream current the fill kernels run in stream order, not by direct stores
    side = tl.Stream(device="cpu")
    with tl.stream(side):
        t = tl.eye(5, 7, k=1, dtype=tl.int32)
    side.synchronize()
    assert t.tolist() == np.eye(5, 7, 1, dtype=np.int32).tolist()


@pytest.mark.parametrize("device", [None, "cpu", tl.Device("cpu")])
def test_creation_with_every_cpu_spelling(device):
    x = tl.arange(6, dtype=tl.float32).reshape(2, 3).T  # a transposed layout to keep
    for t in (tl.zeros((2, 3), device=device), tl.empty_like(x, device=device),
              tl.zeros_like(x, device=device), tl.linspace(0, 1, 5, device=device),
              tl.arange(5, device=device), tl.eye(3, device=device)):
        assert t.device == tl.Device("cpu")
    e = tl.empty_like(x, device=device)
    assert e.shape == (3, 2) and e.stride() == x.stride()
    assert to_numpy(tl.zeros_like(x, device=device)).tolist() == [[0, 0]] * 3


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float16", "bfloat16",
                                   "float32", "float64", "complex64", "complex128"])
def test_zeros_on_reused_dirty_memory_every_dtype(dtype):
    """zeros' one-memset path: the block the allocator hands back held other bytes; every
    element is a zero of its dtype (+0.0, not -0.0), small to big (a memset at every size)."""
    dt = getattr(tl, dtype)
    for n in (1, 7, 1000, (4 << 20) // dt.itemsize + 1, (9 << 20) // dt.itemsize - 3):
        dirty = tl.full((n,), 1, dtype=dt)  # its block comes back to the next zeros
        del dirty
        t = tl.zeros((n,), dtype=dt)
        assert t.dtype is dt and t.shape == (n,) and t.is_contiguous()
        assert not np.frombuffer(to_numpy(t).tobytes(), np.uint8).any()
        assert tl.zeros(n, dtype=dt).shape == (n,)


def test_zeros_under_a_cpu_stream_and_the_profiler():
    """With a user CPU stream current or the profiler on, zeros fills through the kernel (in
    stream order, recorded): the same zeros."""
    s = tl.Stream(device="cpu")
    with tl.stream(s):
        t = tl.zeros((5000,))
    s.synchronize()
    np.testing.assert_array_equal(to_numpy(t), np.zeros(5000, np.float32))
    with tl.profiler.profile() as prof:
        t = tl.zeros((300,), dtype=tl.int32)
    np.testing.assert_array_equal(to_numpy(t), np.zeros(300, np.int32))
    assert any("fill" in str(getattr(e, "name", e)) for e in prof.events())
