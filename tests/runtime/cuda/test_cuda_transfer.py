"""Host <-> device <-> device copies, pinned memory and mixed-device errors (interpret backend)."""
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, strategies as st

import tensorlib as tl
import tensorlib.cuda as tc
from tensorlib.ops import transfer as T
from tensorlib.runtime.cuda import context
from tensorlib.runtime.cuda.driver import CudaUnavailableError

from helpers import NUMPY_DTYPES, arrays, assert_close


pytestmark = pytest.mark.usefixtures("cuda_interpret")  # conftest.py


def host(t):
    """Values of a tensor on any device as a NumPy array."""
    return np.array(T.cpu(t)._to_host_numpy(), copy=True)


# ---- round trips -------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
@given(data=st.data())
def test_round_trip_every_layout(dtype, data):
    arr = data.draw(arrays(dtype))
    x = tl.from_numpy(arr)
    g = T.to_device(x, "cuda")
    assert g.device == tl.Device("cuda:0") and g.shape == arr.shape and g.dtype == x.dtype
    back = T.cpu(g)
    assert back.device == tl.Device("cpu")
    assert_close(back.numpy(), arr, dtype)


@pytest.mark.parametrize("dtype", ["float32", "int16", "complex128", "bool"])
@given(data=st.data())
def test_device_views_copy_out(dtype, data):
    arr = data.draw(arrays(dtype, min_dims=2, max_dims=3))
    g = T.to_device(tl.from_numpy(np.ascontiguousarray(arr)), "cuda")
    views = [(g.T, arr.T), (g[::-1], arr[::-1]), (g[..., ::2], arr[..., ::2]),
             (g[:, 1:], arr[:, 1:])]
    for gv, av in views:
        assert_close(host(gv), av, dtype)
        # A strided device view made dense on the device (interpret: CPU kernel as stream work).
        dense = T.to_device(gv, "cuda", copy=True)
        assert dense.device == gv.device
        assert_close(host(dense), av, dtype)


def test_bfloat16_round_trip():
    x = tl.asarray(np.linspace(-3, 3, 20, dtype=np.float32)).astype(tl.bfloat16)
    g = T.to_device(x, "cuda")
    assert g.dtype == tl.bfloat16
    np.testing.assert_array_equal(host(g), x._to_host_numpy())


@pytest.mark.parametrize("src,dst", [("float32", "float64"), ("int64", "float32"),
                                     ("float64", "int32"), ("float32", "bfloat16"),
                                     ("bool", "uint8"), ("complex64", "complex128")])
def test_casts_on_every_path(src, dst):
    arr = (np.arange(24).reshape(2, 3, 4) % 5 - 2).astype(src)
    x = tl.from_numpy(arr)
    want = x.astype(tl.dtypes.to_dtype(dst))._to_host_numpy()
    h2d = T.to_device(x, "cuda", dtype=dst)                 # cast on the host, then copy
    assert h2d.dtype.name == dst
    np.testing.assert_array_equal(host(h2d), want)
    g = T.to_device(x, "cuda")
    d2h = T.to_device(g, "cpu", dtype=dst)                  # copy, then cast on the host
    np.testing.assert_array_equal(d2h._to_host_numpy(), want)
    d2d = T.to_device(g.T, "cuda", dtype=dst)               # cast on the device
    np.testing.assert_array_equal(host(d2d), want.T)
    peer = T.to_device(g, "cuda:1", dtype=dst)              # other device, then cast there
    assert peer.device == tl.Device("cuda:1")
    np.testing.assert_array_equal(host(peer), want)


def test_dense_layouts_are_kept():
    arr = np.arange(12, dtype=np.float32).reshape(3, 4)
    g = T.to_device(tl.from_numpy(arr.T), "cuda")  # transposed storage is dense: kept
    assert g.stride() == (1, 4)
    g2 = T.to_device(tl.from_numpy(arr[:, ::2]), "cuda")  # not dense: made contiguous
    assert g2.stride() == (2, 1)
    np.testing.assert_array_equal(host(g2), arr[:, ::2])


def test_zero_size_and_scalar():
    for arr in (np.zeros((0, 3), np.float32), np.array(5.5, np.float64)):
        g = T.to_device(tl.from_numpy(arr), "cuda")
        assert g.shape == arr.shape
        np.testing.assert_array_equal(host(g), arr)
        np.testing.assert_array_equal(host(T.to_device(g, "cuda:1")), arr)


def test_cross_device_copy():
    arr = np.random.default_rng(0).standard_normal((5, 6)).astype(np.float32)
    g0 = T.to_device(tl.from_numpy(arr), "cuda:0")
    g1 = T.to_device(g0[:, ::-2], "cuda:1")
    assert g1.device == tl.Device("cuda:1")
    np.testing.assert_array_equal(host(g1), arr[:, ::-2])
    back = T.to_device(g1, "cuda:0")
    np.testing.assert_array_equal(host(back), arr[:, ::-2])


# ---- to / cuda / cpu / asarray -------------------------------------------------------------------
def test_tensor_to_overloads():
    x = tl.asarray([[1.0, 2.0], [3.0, 4.0]])
    assert T.tensor_to(x, "cpu") is x
    assert T.tensor_to(x, tl.float32) is x
    assert T.tensor_to(x, "cpu", copy=True) is not x
    g = T.tensor_to(x, "cuda")
    assert g.device == tl.Device("cuda:0") and g.dtype == tl.float32
    assert T.tensor_to(g, "cuda") is g
    assert T.tensor_to(g, "cuda:0", tl.float64).dtype == tl.float64
    assert T.tensor_to(g, dtype="int32").device == g.device
    assert T.tensor_to(x, "float64").dtype == tl.float64
    like = T.tensor_to(tl.asarray([1], dtype=tl.int8), g)  # device and dtype of another tensor
    assert like.device == g.device and like.dtype == tl.float32
    assert T.tensor_to(x, 1).device == tl.Device("cuda:1")
    assert T.tensor_to(x, tl.Device("cuda:1"), tl.int64, False, True).dtype == tl.int64
    with pytest.raises(TypeError, match="too many"):
        T.tensor_to(x, "cuda", tl.float32, False, False, 1)
    with pytest.raises(TypeError, match="'gpu:0' is neither a device"):
        T.tensor_to(x, "gpu:0")
    with pytest.raises(ValueError, match="to\\(\\): argument 'device'"):
        T.tensor_to(x, "cuda:x")
    with pytest.raises(TypeError, match="dtype given twice"):
        T.tensor_to(x, tl.float32, dtype=tl.float64)


def test_cuda_and_cpu_helpers():
    x = tl.asarray([1, 2, 3])
    g = T.cuda(x)
    assert g.device == tl.Device("cuda:0")
    assert T.cuda(g) is g
    assert T.cuda(x, 1).device == tl.Device("cuda:1")
    assert T.cpu(x) is x
    np.testing.assert_array_equal(T.cpu(g).numpy(), [1, 2, 3])
    with pytest.raises(ValueError, match="CUDA device"):
        T.cuda(x, "cpu")


def test_asarray_and_tensor_with_device():
    g = tl.asarray(np.arange(6).reshape(2, 3), device="cuda")
    assert g.device == tl.Device("cuda:0")
    np.testing.assert_array_equal(host(g), np.arange(6).reshape(2, 3))
    g1 = tl.tensor([1.5, 2.5], device="cuda:1", dtype=tl.float64)
    assert g1.device == tl.Device("cuda:1") and g1.dtype == tl.float64
    assert tl.asarray(g, device="cuda") is g
    with pytest.raises(ValueError, match="copy=False is impossible"):
        tl.asarray(np.ones(3), device="cuda", copy=False)


def test_copy_between_devices():
    src = tl.asarray(np.arange(12, dtype=np.float64).reshape(3, 4))
    dst = T.to_device(tl.asarray(np.zeros((4, 3), np.float32)), "cuda")
    T.copy_between(dst.T, src)  # strided destination, cast on the way
    np.testing.assert_array_equal(host(dst), np.arange(12).reshape(3, 4).T)
    row = tl.asarray([9.0, 8.0, 7.0, 6.0])
    T.copy_between(dst.T, row)  # broadcast
    np.testing.assert_array_equal(host(dst).T, np.tile([9, 8, 7, 6], (3, 1)))
    out = tl.asarray(np.zeros((3, 4), np.int32))
    T.copy_between(out, dst.T)
    np.testing.assert_array_equal(out.numpy(), np.tile([9, 8, 7, 6], (3, 1)))
    dense = T.to_device(tl.asarray(np.zeros(4, np.float32)), "cuda")
    T.copy_between(dense, row)
    np.testing.assert_array_equal(host(dense), [9, 8, 7, 6])
    with pytest.raises(ValueError, match="cannot be broadcast"):
        T.copy_between(dense, tl.asarray(np.zeros((2, 4))))


def test_mixed_device_ops_name_both_devices():
    a = tl.asarray([1.0, 2.0])
    g = T.to_device(a, "cuda")
    with pytest.raises(RuntimeError, match="'cpu' and 'cuda:0'"):
        tl.add(a, g)
    with pytest.raises(RuntimeError, match="'cuda:0' and 'cuda:1'"):
        tl.add(g, T.to_device(a, "cuda:1"))


# ---- pinned memory and non_blocking -------------------------------------------------------------
def test_pin_memory():
    x = tl.asarray(np.arange(10, dtype=np.float32))
    assert not T.is_pinned(x)
    p = T.pin_memory(x)
    assert T.is_pinned(p) and p.device == tl.Device("cpu")
    np.testing.assert_array_equal(p.numpy(), x.numpy())
    assert T.pin_memory(p) is p
    strided = T.pin_memory(tl.from_numpy(np.arange(20.0)[::3]))
    np.testing.assert_array_equal(strided.numpy(), np.arange(20.0)[::3])
    with pytest.raises(RuntimeError, match="only CPU tensors.*'cuda:0'"):
        T.pin_memory(T.to_device(x, "cuda"))
    assert tc.host_memory_stats()["allocation.current"] >= 2


def test_factories_pin_memory():
    z = tl.zeros((2, 3), pin_memory=True)
    assert z.is_pinned() and z.tolist() == [[0.0] * 3] * 2
    assert tl.full((2,), 7, pin_memory=True).is_pinned()
    assert tl.empty(5, pin_memory=True).is_pinned() and tl.ones(3, pin_memory=True).is_pinned()
    assert not tl.zeros(2).is_pinned()
    with pytest.raises(ValueError, match=r"zeros\(\): pin_memory=True needs a CPU tensor"):
        tl.zeros(2, device="cuda", pin_memory=True)


def test_non_blocking_h2d_from_pinned_is_async_and_safe():
    s = tc.current_stream()
    arr = np.arange(4096, dtype=np.float32)
    p = T.pin_memory(tl.from_numpy(arr))
    ptr = p.data_ptr()
    tc._sleep(0.5)  # the copy queues behind this
    g = T.to_device(p, "cuda", non_blocking=True)
    assert not s.query()  # returned without waiting
    del p  # the pinned block must not be reused before the copy has read it
    q = T.pin_memory(tl.from_numpy(np.zeros(4096, np.float32)))
    assert q.data_ptr() != ptr
    s.synchronize()
    np.testing.assert_array_equal(host(g), arr)
    del q
    r = T.pin_memory(tl.from_numpy(np.zeros(4096, np.float32)))
    assert r.data_ptr() in (ptr, r.data_ptr())  # reusable again once the copy completed
    assert tc.host_memory_stats()["num_deferred_frees.current"] == 0


def test_blocking_copies_wait():
    s = tc.current_stream()
    tc._sleep(0.2)
    g = T.to_device(tl.asarray(np.ones(8, np.float32)), "cuda", non_blocking=True)  # pageable
    assert s.query()  # a pageable source is copied synchronously
    tc._sleep(0.2)
    h = T.cpu(g)
    assert s.query()
    np.testing.assert_array_equal(h.numpy(), 1.0)


def test_non_blocking_d2h_gives_pinned_result():
    arr = np.arange(100, dtype=np.int64)
    g = T.to_device(tl.from_numpy(arr), "cuda")
    s = tc.current_stream()
    tc._sleep(0.5)
    h = T.to_device(g, "cpu", non_blocking=True)
    assert T.is_pinned(h) and not s.query()
    s.synchronize()
    np.testing.assert_array_equal(h.numpy(), arr)


def test_storage_on_cuda_uses_caching_allocator():
    before = tc.memory_allocated()
    g = T.to_device(tl.asarray(np.zeros(1000, np.float32)), "cuda")
    assert tc.memory_allocated() == before + 4096
    snap = [s for s in tc.memory_snapshot() if s["device"] == 0]
    assert any(b["address"] == g.data_ptr() and b["state"] == "active_allocated"
               for s in snap for b in s["blocks"])
    del g
    assert tc.memory_allocated() == before


def test_public_allocator_api():
    p = tc.caching_allocator_alloc(1000)
    assert p and tc.memory_stats()["requested_bytes.all.current"] >= 1000
    tc.caching_allocator_delete(p)
    s = tc.Stream(device=1)
    p1 = tc.caching_allocator_alloc(5000, stream=s)
    assert any(seg["stream"] == s.cuda_stream for seg in tc.memory_snapshot())
    tc.caching_allocator_delete(p1)  # found on the other device's allocator
    assert tc.caching_allocator_alloc(0) == 0
    tc.caching_allocator_delete(0)
    with pytest.raises(ValueError, match="not allocated by caching_allocator_alloc"):
        tc.caching_allocator_delete(p1)
    with pytest.raises(TypeError, match="size"):
        tc.caching_allocator_alloc(1.5)
    with pytest.raises(ValueError, match="size.*-3"):
        tc.caching_allocator_alloc(-3)
    assert tc.memory_reserved() >= tc.memory_allocated()
    assert tc.max_memory_allocated() >= tc.memory_allocated()
    tc.reset_peak_memory_stats()
    assert tc.max_memory_allocated() == tc.memory_allocated()
    free, total = tc.mem_get_info()
    assert total == 1 << 30 and 0 <= free <= total
    summary = tc.memory_summary()
    assert "Allocated memory" in summary and "cudaMalloc retries" in summary
    tc.empty_cache()


def test_oom_through_tensors(monkeypatch):
    monkeypatch.setenv("TENSORLIB_CUDA_MEMORY", str(64 << 20))
    context.reset()
    try:
        keep = T.to_device(tl.asarray(np.zeros(10 << 20, np.uint8)), "cuda")
        with pytest.raises(tc.OutOfMemoryError, match="Tried to allocate 60.00 MiB"):
            T.to_device(tl.asarray(np.zeros(60 << 20, np.uint8)), "cuda")
        assert tc.memory_stats()["num_ooms"] == 1
        del keep
        ok = T.to_device(tl.asarray(np.zeros(60 << 20, np.uint8)), "cuda")  # retry frees cache
        assert tc.memory_stats()["num_alloc_retries"] >= 1
        del ok
    finally:
        monkeypatch.setenv("TENSORLIB_CUDA_MEMORY", str(1 << 30))
        context.reset()


# ---- no CUDA -----------------------------------------------------------------------------------
def test_unavailable_backend_raises_clear_errors(monkeypatch):
    monkeypatch.setenv("TENSORLIB_CUDA_BACKEND", "nonsense")
    context.reset()
    try:
        with pytest.warns(RuntimeWarning, match="not a known backend"):
            assert not tc.is_available()
        assert tc.device_count() == 0 and tc.backend() is None
        assert tc.memory_stats() == {} and tc.memory_allocated() == 0
        with pytest.raises(CudaUnavailableError, match="TENSORLIB_CUDA_BACKEND=interpret"):
            tc.current_device()
        with pytest.raises(CudaUnavailableError, match="CUDA is not available"):
            T.to_device(tl.asarray([1.0]), "cuda")
        with pytest.raises(CudaUnavailableError):
            tl.asarray([1.0], device="cuda")
        with pytest.raises(CudaUnavailableError):
            T.pin_memory(tl.asarray([1.0]))
        assert not T.is_pinned(tl.asarray([1.0]))
        s = tl.streams.Stream()  # device=None falls back to the CPU
        assert s.device == tl.Device("cpu")
    finally:
        monkeypatch.setenv("TENSORLIB_CUDA_BACKEND", "interpret")
        context.reset()


def test_import_is_lazy_and_safe_without_gpu():
    code = ("import sys, tensorlib, tensorlib.cuda as tc;"
            "assert 'cuda.bindings' not in sys.modules;"
            "print(tc.is_available(), tc.device_count())")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TENSORLIB_CUDA")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    from tensorlib.runtime.cuda.probe import cuda_gpu_present
    if not cuda_gpu_present():
        assert out.stdout.split() == ["False", "0"]
