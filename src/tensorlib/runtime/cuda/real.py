"""The real driver: a thin layer over ``cuda.bindings.driver`` (the CUDA driver API).

One primary context per device, retained on first use and made current per thread before the
calls that need one. Streams are created non-blocking (they never serialize with the legacy
default stream, as in PyTorch), events without timing unless asked. ``cuda.bindings`` is imported
only by :func:`try_create`, i.e. when CUDA is first queried.

cuda-bindings calls return tuples ``(CUresult, *values)``; :meth:`RealDriver._check` turns a
failure into :class:`CudaError` naming the call and the driver's error name.
"""
from __future__ import annotations

import ctypes
import threading

import numpy as np

from .driver import CudaError, DeviceProperties, Driver, OutOfMemoryError

__all__ = ["RealDriver", "try_create"]

# A one-thread kernel that spins on the global nanosecond timer: _sleep() without a compiler.
# Plain PTX (checked with ptxas for sm_80/sm_90); the driver JIT-compiles it for the device.
_SPIN_PTX = b"""
.version 7.0
.target sm_70
.address_size 64

.visible .entry tensorlib_spin(.param .u64 tensorlib_spin_ns)
{
    .reg .pred %p<2>;
    .reg .b64 %rd<5>;

    ld.param.u64 %rd1, [tensorlib_spin_ns];
    mov.u64 %rd2, %globaltimer;
    add.s64 %rd3, %rd2, %rd1;
$L_spin:
    mov.u64 %rd4, %globaltimer;
    setp.lt.u64 %p1, %rd4, %rd3;
    @%p1 bra $L_spin;
    ret;
}
\x00"""


def try_create():
    """(RealDriver, None) when a driver and a device exist, else (None, reason). Never raises."""
    try:
        from cuda.bindings import driver as cu
    except Exception as e:  # noqa: BLE001 - any import problem means "no CUDA"
        return None, f"cuda-bindings is not importable ({type(e).__name__}: {e})"
    try:
        err, = cu.cuInit(0)
    except Exception as e:  # noqa: BLE001 - no libcuda.so raises from the loader
        return None, f"no CUDA driver library ({type(e).__name__}: {str(e).splitlines()[0]})"
    if err != cu.CUresult.CUDA_SUCCESS:
        return None, f"cuInit(0) failed: {_error_name(cu, err)}"
    try:
        err, count = cu.cuDeviceGetCount()
    except Exception as e:  # noqa: BLE001
        return None, f"cuDeviceGetCount() raised {type(e).__name__}: {e}"
    if err != cu.CUresult.CUDA_SUCCESS:
        return None, f"cuDeviceGetCount() failed: {_error_name(cu, err)}"
    if count < 1:
        return None, "the CUDA driver reports no device"
    return RealDriver(cu, count), None


def _error_name(cu, err) -> str:
    try:
        e2, name = cu.cuGetErrorName(err)
        if e2 == cu.CUresult.CUDA_SUCCESS and name:
            return name.decode() if isinstance(name, bytes) else str(name)
    except Exception:  # noqa: BLE001
        pass
    return str(err)


class _Stream:
    __slots__ = ("handle", "id", "device", "priority", "__weakref__")

    def __init__(self, handle, device, priority):
        self.handle = handle
        self.id = int(handle)
        self.device = device
        self.priority = priority

    def __repr__(self):
        return f"<CUstream 0x{self.id:x} on cuda:{self.device}>"


class _Event:
    __slots__ = ("handle", "id", "device", "timing", "blocking", "_destroy")

    def __init__(self, handle, device, timing, blocking, destroy):
        self.handle = handle
        self.id = int(handle)
        self.device = device
        self.timing = timing
        self.blocking = blocking
        self._destroy = destroy

    def __del__(self):
        try:
            self._destroy(self.handle)
        except Exception:  # noqa: BLE001 - at interpreter exit the module may be gone
            pass


class RealDriver(Driver):
    name = "real"
    host_visible = False

    def __init__(self, cu, count: int):
        self._cu = cu
        self._ok = cu.CUresult.CUDA_SUCCESS
        self._not_ready = cu.CUresult.CUDA_ERROR_NOT_READY
        self._count = count
        self._lock = threading.Lock()
        self._devices = [None] * count  # CUdevice, filled lazily
        self._ctx = [None] * count  # retained primary contexts
        self._default = [None] * count
        self._spin = [None] * count  # (module, function) of the spin kernel
        self._tls = threading.local()

    # -- helpers ------------------------------------------------------------------------------
    def _check(self, result, call):
        err = result[0]
        if err != self._ok:
            raise CudaError(f"{call} failed: {_error_name(self._cu, err)}")
        return result[1] if len(result) == 2 else result[1:]

    def _index(self, device) -> int:
        if isinstance(device, bool) or not isinstance(device, int) or \
                not 0 <= device < self._count:
            raise CudaError(f"invalid device ordinal {device!r} (device_count() = "
                            f"{self._count})")
        return device

    def _device(self, device):
        d = self._devices[self._index(device)]
        if d is None:
            d = self._check(self._cu.cuDeviceGet(device), f"cuDeviceGet({device})")
            self._devices[device] = d
        return d

    def _context(self, device):
        ctx = self._ctx[device]
        if ctx is None:
            with self._lock:
                ctx = self._ctx[device]
                if ctx is None:
                    ctx = self._check(self._cu.cuDevicePrimaryCtxRetain(self._device(device)),
                                      f"cuDevicePrimaryCtxRetain({device})")
                    self._ctx[device] = ctx
        return ctx

    def _use(self, device) -> None:
        """Make ``device``'s primary context current on this thread (cached per thread)."""
        if getattr(self._tls, "device", None) != device:
            ctx = self._context(self._index(device))
            self._check(self._cu.cuCtxSetCurrent(ctx), f"cuCtxSetCurrent(cuda:{device})")
            self._tls.device = device

    # -- devices ------------------------------------------------------------------------------
    def device_count(self) -> int:
        return self._count

    def get_properties(self, device: int) -> DeviceProperties:
        cu = self._cu
        dev = self._device(device)
        name = self._check(cu.cuDeviceGetName(256, dev), "cuDeviceGetName")
        name = name.split(b"\x00", 1)[0].decode(errors="replace")
        total = self._check(cu.cuDeviceTotalMem(dev), "cuDeviceTotalMem")
        A = cu.CUdevice_attribute

        def attr(a):
            return self._check(cu.cuDeviceGetAttribute(a, dev), f"cuDeviceGetAttribute({a})")

        return DeviceProperties(
            name=name,
            major=attr(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
            minor=attr(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
            total_memory=total,
            multi_processor_count=attr(A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
            L2_cache_size=attr(A.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE),
            warp_size=attr(A.CU_DEVICE_ATTRIBUTE_WARP_SIZE),
            max_shared_memory_per_block=attr(A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK),
            is_integrated=bool(attr(A.CU_DEVICE_ATTRIBUTE_INTEGRATED)),
            clock_rate_khz=attr(A.CU_DEVICE_ATTRIBUTE_CLOCK_RATE),
            backend="real")

    def set_current(self, device: int) -> None:
        self._use(device)

    def device_synchronize(self, device: int) -> None:
        self._use(device)
        self._check(self._cu.cuCtxSynchronize(), f"cuCtxSynchronize(cuda:{device})")

    def priority_range(self, device: int) -> tuple:
        self._use(device)
        least, greatest = self._check(self._cu.cuCtxGetStreamPriorityRange(),
                                      "cuCtxGetStreamPriorityRange")
        return least, greatest

    # -- memory -------------------------------------------------------------------------------
    def mem_alloc(self, device: int, size: int):
        self._use(device)
        err, dptr = self._cu.cuMemAlloc(size)
        if err == self._cu.CUresult.CUDA_ERROR_OUT_OF_MEMORY:
            raise OutOfMemoryError(f"cuMemAlloc({size}) on cuda:{device}: out of memory")
        if err != self._ok:
            raise CudaError(f"cuMemAlloc({size}) on cuda:{device} failed: "
                            f"{_error_name(self._cu, err)}")
        return int(dptr), None

    def mem_free(self, device: int, ptr: int) -> None:
        self._use(device)
        self._check(self._cu.cuMemFree(self._cu.CUdeviceptr(ptr)), f"cuMemFree(0x{ptr:x})")

    def mem_get_info(self, device: int) -> tuple:
        self._use(device)
        free, total = self._check(self._cu.cuMemGetInfo(), "cuMemGetInfo")
        return free, total

    def host_alloc(self, size: int):
        if getattr(self._tls, "device", None) is None:
            self._use(0)  # pinned memory needs some context; PORTABLE makes it valid in all
        ptr = self._check(self._cu.cuMemHostAlloc(size, self._cu.CU_MEMHOSTALLOC_PORTABLE),
                          f"cuMemHostAlloc({size})")
        ptr = int(ptr)
        buf = np.frombuffer((ctypes.c_uint8 * size).from_address(ptr), dtype=np.uint8)
        return ptr, buf

    def host_free(self, ptr: int) -> None:
        self._check(self._cu.cuMemFreeHost(ptr), f"cuMemFreeHost(0x{ptr:x})")

    # -- streams ------------------------------------------------------------------------------
    def default_stream(self, device: int):
        s = self._default[self._index(device)]
        if s is None:
            # The legacy NULL stream; its handle is 0 in every context.
            s = self._default[device] = _Stream(self._cu.CUstream(0), device, 0)
        return s

    def stream_create(self, device: int, priority: int = 0):
        self._use(device)
        flags = int(self._cu.CUstream_flags.CU_STREAM_NON_BLOCKING)
        handle = self._check(self._cu.cuStreamCreateWithPriority(flags, int(priority)),
                             "cuStreamCreateWithPriority")
        return _Stream(handle, device, int(priority))

    def stream_query(self, stream) -> bool:
        self._use(stream.device)
        err, = self._cu.cuStreamQuery(stream.handle)
        if err == self._not_ready:
            return False
        if err != self._ok:
            raise CudaError(f"cuStreamQuery failed: {_error_name(self._cu, err)}")
        return True

    def stream_synchronize(self, stream) -> None:
        self._use(stream.device)
        self._check(self._cu.cuStreamSynchronize(stream.handle), "cuStreamSynchronize")

    def stream_wait_event(self, stream, event) -> None:
        self._use(stream.device)
        self._check(self._cu.cuStreamWaitEvent(stream.handle, event.handle, 0),
                    "cuStreamWaitEvent")

    # -- events -------------------------------------------------------------------------------
    def event_create(self, device: int, enable_timing: bool = False, blocking: bool = False):
        self._use(device)
        F = self._cu.CUevent_flags
        flags = 0 if enable_timing else int(F.CU_EVENT_DISABLE_TIMING)
        if blocking:
            flags |= int(F.CU_EVENT_BLOCKING_SYNC)
        handle = self._check(self._cu.cuEventCreate(flags), "cuEventCreate")
        return _Event(handle, device, bool(enable_timing), bool(blocking),
                      self._cu.cuEventDestroy)

    def event_record(self, event, stream) -> None:
        self._use(stream.device)
        self._check(self._cu.cuEventRecord(event.handle, stream.handle), "cuEventRecord")

    def event_query(self, event) -> bool:
        err, = self._cu.cuEventQuery(event.handle)
        if err == self._not_ready:
            return False
        if err != self._ok:
            raise CudaError(f"cuEventQuery failed: {_error_name(self._cu, err)}")
        return True

    def event_synchronize(self, event) -> None:
        self._check(self._cu.cuEventSynchronize(event.handle), "cuEventSynchronize")

    def event_elapsed_ms(self, start, end) -> float:
        ms = self._check(self._cu.cuEventElapsedTime(start.handle, end.handle),
                         "elapsed_time(): cuEventElapsedTime")
        return float(ms)

    # -- work ---------------------------------------------------------------------------------
    def memcpy_async(self, dst: int, src: int, nbytes: int, stream, kind: str) -> None:
        if not nbytes:
            return
        cu = self._cu
        self._use(stream.device)
        if kind == "h2d":
            r = cu.cuMemcpyHtoDAsync(cu.CUdeviceptr(dst), src, nbytes, stream.handle)
        elif kind == "d2h":
            r = cu.cuMemcpyDtoHAsync(dst, cu.CUdeviceptr(src), nbytes, stream.handle)
        elif kind == "d2d":
            r = cu.cuMemcpyDtoDAsync(cu.CUdeviceptr(dst), cu.CUdeviceptr(src), nbytes,
                                     stream.handle)
        elif kind == "h2h":  # unified addressing: the driver infers both sides
            r = cu.cuMemcpyAsync(cu.CUdeviceptr(dst), cu.CUdeviceptr(src), nbytes,
                                 stream.handle)
        else:
            raise ValueError(f"memcpy_async(): argument 'kind' must be 'h2d', 'd2h', 'd2d' or "
                             f"'h2h', got {kind!r}")
        self._check(r, f"memcpy_async({kind}, {nbytes} bytes)")

    def memcpy_peer_async(self, dst, dst_device, src, src_device, nbytes, stream) -> None:
        if not nbytes:
            return
        cu = self._cu
        self._use(stream.device)
        self._check(cu.cuMemcpyPeerAsync(cu.CUdeviceptr(dst), self._context(dst_device),
                                         cu.CUdeviceptr(src), self._context(src_device),
                                         nbytes, stream.handle), "cuMemcpyPeerAsync")

    def memset_async(self, ptr: int, value: int, nbytes: int, stream) -> None:
        if not nbytes:
            return
        self._use(stream.device)
        self._check(self._cu.cuMemsetD8Async(self._cu.CUdeviceptr(ptr), value & 0xFF, nbytes,
                                             stream.handle), "cuMemsetD8Async")

    def sleep(self, stream, seconds: float) -> None:
        cu = self._cu
        device = stream.device
        self._use(device)
        spin = self._spin[device]
        if spin is None:
            module = self._check(cu.cuModuleLoadData(_SPIN_PTX), "cuModuleLoadData(spin)")
            fn = self._check(cu.cuModuleGetFunction(module, b"tensorlib_spin"),
                             "cuModuleGetFunction(tensorlib_spin)")
            spin = self._spin[device] = (module, fn)
        ns = max(0, int(seconds * 1e9))
        params = ((ns,), (ctypes.c_uint64,))
        self._check(cu.cuLaunchKernel(spin[1], 1, 1, 1, 1, 1, 1, 0, stream.handle, params, 0),
                    "cuLaunchKernel(tensorlib_spin)")
