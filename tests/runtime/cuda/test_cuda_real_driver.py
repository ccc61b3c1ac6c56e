"""The real driver's code paths against a fake ``cuda.bindings.driver`` (no GPU needed).

The fake keeps cuda-bindings' calling convention (every call returns a tuple starting with a
CUresult; handles are the bindings' own CUdeviceptr / CUstream / CUevent types) and checks the
argument types real.py passes, but runs everything synchronously over host memory. This is no
substitute for test_cuda_gpu.py; it catches wrong call shapes and exercises the paths a real
device takes (device memory not host-visible: strided copies staged through the host).
"""
import ctypes
import itertools
import time

import numpy as np
import pytest

cu_real = pytest.importorskip("cuda.bindings.driver")

import tensorlib as tl  # noqa: E402
import tensorlib.cuda as tc  # noqa: E402
from tensorlib.ops import transfer as T  # noqa: E402
from tensorlib.runtime.cuda import context, real  # noqa: E402
from tensorlib.runtime.cuda.driver import CudaError, OutOfMemoryError  # noqa: E402

OK = cu_real.CUresult.CUDA_SUCCESS


class FakeCu:
    """Synchronous stand-in for cuda.bindings.driver (one device, 256 MiB)."""

    def __init__(self, memory=256 << 20):
        for name in ("CUresult", "CUdeviceptr", "CUstream", "CUevent_flags", "CUstream_flags",
                     "CUdevice_attribute", "CU_MEMHOSTALLOC_PORTABLE", "CUcontext"):
            setattr(self, name, getattr(cu_real, name))
        self.memory = memory
        self.used = 0
        self.mem = {}
        self.ids = itertools.count(0x1000)
        self.calls = []
        self.current = None
        self.events = {}
        self.launches = []

    def _log(self, name):
        self.calls.append(name)

    # init / devices
    def cuInit(self, flags):
        return (OK,)

    def cuDeviceGetCount(self):
        return OK, 1

    def cuDeviceGet(self, i):
        assert i == 0
        return OK, cu_real.CUdevice(0)

    def cuDevicePrimaryCtxRetain(self, dev):
        assert isinstance(dev, cu_real.CUdevice)
        return OK, cu_real.CUcontext(0xC0)

    def cuCtxSetCurrent(self, ctx):
        assert isinstance(ctx, cu_real.CUcontext)
        self.current = ctx
        return (OK,)

    def cuCtxSynchronize(self):
        assert self.current is not None
        return (OK,)

    def cuCtxGetStreamPriorityRange(self):
        return OK, 0, -5

    def cuDeviceGetName(self, n, dev):
        return OK, b"Fake GPU\x00\x00"

    def cuDeviceTotalMem(self, dev):
        return OK, self.memory

    def cuDeviceGetAttribute(self, attr, dev):
        assert isinstance(attr, cu_real.CUdevice_attribute)
        return OK, {75: 9, 76: 0, 16: 132, 38: 50 << 20, 10: 32}.get(int(attr), 1)

    def cuGetErrorName(self, err):
        return OK, err.name.encode()

    # memory
    def cuMemAlloc(self, size):
        assert self.current is not None, "no current context"
        if self.used + size > self.memory:
            return cu_real.CUresult.CUDA_ERROR_OUT_OF_MEMORY, cu_real.CUdeviceptr(0)
        raw = np.empty(size + 256, np.uint8)
        ptr = raw.ctypes.data + (-raw.ctypes.data) % 256
        self.mem[ptr] = (raw, size)
        self.used += size
        return OK, cu_real.CUdeviceptr(ptr)

    def cuMemFree(self, dptr):
        assert isinstance(dptr, cu_real.CUdeviceptr)
        raw, size = self.mem.pop(int(dptr))
        self.used -= size
        return (OK,)

    def cuMemGetInfo(self):
        return OK, self.memory - self.used, self.memory

    def cuMemHostAlloc(self, size, flags):
        assert flags == self.CU_MEMHOSTALLOC_PORTABLE
        raw = np.empty(size + 4096, np.uint8)
        ptr = raw.ctypes.data + (-raw.ctypes.data) % 4096
        self.mem[ptr] = (raw, 0)
        return OK, ptr

    def cuMemFreeHost(self, ptr):
        assert isinstance(ptr, int)
        self.mem.pop(ptr)
        return (OK,)

    # streams and events
    def cuStreamCreateWithPriority(self, flags, priority):
        assert flags == int(cu_real.CUstream_flags.CU_STREAM_NON_BLOCKING)
        return OK, cu_real.CUstream(next(self.ids))

    def cuStreamQuery(self, s):
        assert isinstance(s, cu_real.CUstream)
        return (OK,)

    def cuStreamSynchronize(self, s):
        assert isinstance(s, cu_real.CUstream)
        return (OK,)

    def cuStreamWaitEvent(self, s, e, flags):
        assert isinstance(s, cu_real.CUstream) and isinstance(e, cu_real.CUevent)
        return (OK,)

    def cuEventCreate(self, flags):
        e = cu_real.CUevent(next(self.ids))
        self.events[int(e)] = [flags, None]
        return OK, e

    def cuEventRecord(self, e, s):
        assert isinstance(e, cu_real.CUevent) and isinstance(s, cu_real.CUstream)
        self.events[int(e)][1] = time.perf_counter()
        return (OK,)

    def cuEventQuery(self, e):
        return (OK,)

    def cuEventSynchronize(self, e):
        return (OK,)

    def cuEventElapsedTime(self, a, b):
        fa, ta = self.events[int(a)]
        fb, tb = self.events[int(b)]
        if (fa | fb) & int(cu_real.CUevent_flags.CU_EVENT_DISABLE_TIMING):
            return cu_real.CUresult.CUDA_ERROR_INVALID_HANDLE, 0.0
        return OK, (tb - ta) * 1000.0

    def cuEventDestroy(self, e):
        self.events.pop(int(e), None)
        return (OK,)

    # copies
    def _copy(self, dst, src, n):
        ctypes.memmove(int(dst), int(src), n)
        return (OK,)

    def cuMemcpyHtoDAsync(self, dst, src, n, s):
        assert isinstance(dst, cu_real.CUdeviceptr) and isinstance(src, int)
        self._log("h2d")
        return self._copy(dst, src, n)

    def cuMemcpyDtoHAsync(self, dst, src, n, s):
        assert isinstance(dst, int) and isinstance(src, cu_real.CUdeviceptr)
        self._log("d2h")
        return self._copy(dst, src, n)

    def cuMemcpyDtoDAsync(self, dst, src, n, s):
        assert isinstance(dst, cu_real.CUdeviceptr) and isinstance(src, cu_real.CUdeviceptr)
        self._log("d2d")
        return self._copy(dst, src, n)

    def cuMemsetD8Async(self, ptr, value, n, s):
        ctypes.memset(int(ptr), value, n)
        return (OK,)

    # modules
    def cuModuleLoadData(self, image):
        assert image.rstrip(b"\x00").strip().startswith(b".version")
        assert image.endswith(b"\x00")
        return OK, "module"

    def cuModuleGetFunction(self, module, name):
        assert isinstance(name, bytes)
        return OK, ("fn", name)

    def cuLaunchKernel(self, f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra):
        values, types = params
        assert types == (ctypes.c_uint64,) and isinstance(values[0], int)
        self.launches.append((f, values[0], int(stream)))
        return (OK,)


@pytest.fixture
def fake():
    return FakeCu()


def test_try_create_without_driver_reports_reason():
    drv, reason = real.try_create()
    from tensorlib.runtime.cuda.probe import cuda_gpu_present
    if not cuda_gpu_present():
        assert drv is None and reason  # e.g. "no CUDA driver library (...)"


def test_real_driver_call_shapes(fake):
    d = real.RealDriver(fake, 1)
    p = d.get_properties(0)
    assert (p.name, p.major, p.minor, p.multi_processor_count) == ("Fake GPU", 9, 0, 132)
    assert d.priority_range(0) == (0, -5)
    ptr, buf = d.mem_alloc(0, 1024)
    assert buf is None and ptr in fake.mem
    s = d.stream_create(0, -1)
    assert s.priority == -1 and s.id >= 0x1000
    host = np.arange(256, dtype=np.uint32)
    back = np.zeros_like(host)
    d.memcpy_async(ptr, host.ctypes.data, 1024, s, "h2d")
    d.memcpy_async(ptr + 1024 // 2, ptr, 512, s, "d2d")
    d.memcpy_async(back.ctypes.data, ptr, 1024, s, "d2h")
    np.testing.assert_array_equal(back, np.concatenate([host[:128], host[:128]]))
    with pytest.raises(ValueError, match="kind"):
        d.memcpy_async(ptr, ptr, 8, s, "sideways")
    e1, e2 = d.event_create(0, True), d.event_create(0, True)
    d.event_record(e1, s)
    d.sleep(s, 0.001)
    d.event_record(e2, s)
    assert d.event_query(e2)
    assert d.event_elapsed_ms(e1, e2) >= 0
    assert fake.launches and fake.launches[0][1] == 1_000_000
    plain = d.event_create(0)
    d.event_record(plain, d.default_stream(0))
    with pytest.raises(CudaError, match="CUDA_ERROR_INVALID_HANDLE"):
        d.event_elapsed_ms(e1, plain)
    d.mem_free(0, ptr)
    with pytest.raises(OutOfMemoryError):
        d.mem_alloc(0, 1 << 30)
    with pytest.raises(CudaError, match="invalid device ordinal 2"):
        d.mem_alloc(2, 10)
    hp, hbuf = d.host_alloc(4096)
    hbuf[:] = 3
    d.host_free(hp)
    d.device_synchronize(0)


@pytest.fixture
def fake_backend(monkeypatch, fake):
    monkeypatch.setenv("TENSORLIB_CUDA_BACKEND", "real")
    monkeypatch.delenv("TENSORLIB_CUDA_ALLOC_CONF", raising=False)
    monkeypatch.setattr(real, "try_create", lambda: (real.RealDriver(fake, 1), None))
    # The fake's memory is host memory: on a machine with a GPU, Triton must not launch on
    # it (as on one without, where Triton finds no device and the staged paths run)
    from tensorlib.dispatch.stub import UnsupportedKernelError
    from tensorlib.kernels.cuda import launch

    def no_triton():
        raise UnsupportedKernelError("CUDA kernels: the fake driver has no device for Triton")
    monkeypatch.setattr(launch, "_install_stream_hooks", no_triton)
    context.reset()
    yield fake
    context.reset()


def test_tensors_through_the_real_driver(fake_backend):
    fake = fake_backend
    assert tc.backend() == "real" and tc.get_device_name() == "Fake GPU"
    arr = np.arange(48, dtype=np.float32).reshape(6, 8)
    g = T.to_device(tl.from_numpy(arr), "cuda")
    assert g._storage.buffer is None  # device memory is not host-visible
    np.testing.assert_array_equal(T.cpu(g).numpy(), arr)
    np.testing.assert_array_equal(T.cpu(g.T).numpy(), arr.T)
    # Strided device views: no CUDA copy kernel yet, so staged through host memory.
    np.testing.assert_array_equal(T.cpu(g[::-2, 1::3]).numpy(), arr[::-2, 1::3])
    cast = T.to_device(g[:, ::2], "cuda", dtype=tl.int16)
    np.testing.assert_array_equal(T.cpu(cast).numpy(), arr[:, ::2].astype(np.int16))
    clone = T.to_device(g, "cuda", copy=True)
    assert "d2d" in fake.calls
    np.testing.assert_array_equal(T.cpu(clone).numpy(), arr)
    dst = T.to_device(tl.from_numpy(np.zeros((8, 6), np.float32)), "cuda")
    T.copy_between(dst.T, tl.from_numpy(arr))
    np.testing.assert_array_equal(T.cpu(dst).numpy(), arr.T)
    p = T.pin_memory(tl.from_numpy(arr))
    assert T.is_pinned(p)
    g2 = T.to_device(p, "cuda", non_blocking=True)
    h2 = T.to_device(g2, "cpu", non_blocking=True)
    tc.synchronize()
    np.testing.assert_array_equal(h2.numpy(), arr)
    start, end = tc.Event(enable_timing=True), tc.Event(enable_timing=True)
    start.record()
    tc._sleep(0.01)
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) >= 0
    stats = tc.memory_stats()
    assert stats["allocated_bytes.all.current"] > 0
    del g, g2, cast, clone, dst
    tc.empty_cache()
    assert tc.memory_stats()["segment.all.current"] <= 1
