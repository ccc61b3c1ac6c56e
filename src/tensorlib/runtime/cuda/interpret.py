"""The interpret driver: CUDA semantics over host memory, for machines without a GPU.

Device memory is host memory (NumPy arrays, 512-byte aligned), capped per device by
``TENSORLIB_CUDA_MEMORY``. Each stream is a FIFO drained by its own worker thread, so work
enqueued on one stream runs in order and asynchronously to the caller, while different streams run
concurrently; an event is a marker in that FIFO, so ``record`` / ``query`` / ``synchronize`` /
``stream_wait_event`` / elapsed times behave as they do on a GPU.

Stream work must not call back into CUDA (the same rule as cuLaunchHostFunc), and must not own
the last reference to a CUDA tensor or Storage (dropping it frees the block from the worker):
the caller of ``mem_free`` may hold the caching allocator's lock while it waits for the device
to drain. Work items are dropped before they are counted as complete.
A failure inside stream work is sticky, as a CUDA error is: the next synchronize of that stream
raises it.
"""
from __future__ import annotations

import atexit
import ctypes
import itertools
import os
import threading
import time
from functools import partial

import numpy as np

from ..work_queue import WorkQueue
from .driver import CudaError, DeviceProperties, Driver, OutOfMemoryError

__all__ = ["InterpretDriver"]

_ALIGN = 512  # cudaMalloc returns at least 256-byte aligned pointers; 512 matches block rounding
_GREATEST_PRIORITY = -5  # what Hopper reports: priorities 0 (lowest) .. -5 (highest)


def _at_exit():
    # Past this point no new worker thread may be started: a thread started while the
    # interpreter finalizes never runs, and Thread.start() would wait for it forever (tensors
    # freed during teardown still record events on streams).
    _HostStream.exiting = True


atexit.register(_at_exit)


def _default_memory() -> int:
    try:
        phys = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        phys = 0
    return phys // 2 if phys > 0 else 8 << 30


class _HostStream(WorkQueue):
    """A FIFO of callables drained by one daemon thread, started on first use
    (runtime/work_queue.py)."""

    __slots__ = ("device",)

    def __init__(self, sid, device, priority):
        super().__init__(sid, priority)
        self.device = device

    def _execute(self, fn):
        try:
            fn()
        except BaseException as e:  # noqa: BLE001 - kept and re-raised at synchronize
            return e
        return None

    def _run_now(self, fn) -> int:
        fn()  # workers are gone, frozen or may not start: never wait on them now
        return self._submitted

    def _thread_name(self) -> str:
        return f"tensorlib-cuda{self.device}-stream{self.id}"

    def _failure(self, err):
        return (CudaError(f"interpret stream {self.id} on cuda:{self.device}: work enqueued "
                          f"on the stream failed: {type(err).__name__}: {err}"), err)

    def __repr__(self):
        return f"<interpret stream {self.id} on cuda:{self.device}>"


class _Mark:
    """One record of an event: set by the stream's worker when it reaches it."""

    __slots__ = ("done", "t")

    def __init__(self):
        self.done = threading.Event()
        self.t = 0.0

    def fire(self) -> None:
        self.t = time.perf_counter()
        self.done.set()


class _HostEvent:
    __slots__ = ("id", "device", "timing", "blocking", "mark")

    def __init__(self, eid, device, timing, blocking):
        self.id = eid
        self.device = device
        self.timing = timing
        self.blocking = blocking
        self.mark = None  # the latest record; None = never recorded

    def __repr__(self):
        return f"<interpret event {self.id} on cuda:{self.device}>"


class _DeviceState:
    __slots__ = ("index", "capacity", "used", "lock", "allocations", "default", "streams")

    def __init__(self, index, capacity):
        self.index = index
        self.capacity = capacity
        self.used = 0
        self.lock = threading.Lock()
        self.allocations = {}  # ptr -> (raw array, size)
        self.default = _HostStream(0, index, 0)
        self.streams = [self.default]


class InterpretDriver(Driver):
    name = "interpret"
    host_visible = True

    def __init__(self, memory: int | None = None, device_count: int = 1):
        if memory is None:
            memory = _default_memory()
        if isinstance(memory, bool) or not isinstance(memory, int) or memory < 0:
            raise ValueError(f"InterpretDriver(): argument 'memory' must be bytes >= 0, "
                             f"got {memory!r}")
        if isinstance(device_count, bool) or not isinstance(device_count, int) or \
                device_count < 1:
            raise ValueError(f"InterpretDriver(): argument 'device_count' must be an int >= 1, "
                             f"got {device_count!r}")
        self._devices = [_DeviceState(i, memory) for i in range(device_count)]
        self._ids = itertools.count(1)
        self._host_lock = threading.Lock()
        self._host = {}  # ptr -> raw array

    # -- devices ------------------------------------------------------------------------------
    def _dev(self, device) -> _DeviceState:
        try:
            if device < 0:
                raise IndexError
            return self._devices[device]
        except (IndexError, TypeError):
            raise CudaError(f"interpret driver: invalid device ordinal {device!r} "
                            f"(device_count() = {len(self._devices)})") from None

    def device_count(self) -> int:
        return len(self._devices)

    def get_properties(self, device: int) -> DeviceProperties:
        d = self._dev(device)
        return DeviceProperties(
            name="tensorlib interpret device (host memory)", major=9, minor=0,
            total_memory=d.capacity, multi_processor_count=os.cpu_count() or 1,
            L2_cache_size=0, warp_size=32, max_shared_memory_per_block=49152,
            is_integrated=True, backend="interpret")

    def set_current(self, device: int) -> None:
        self._dev(device)

    def device_synchronize(self, device: int) -> None:
        d = self._dev(device)
        with d.lock:
            streams = list(d.streams)
        first_error = None
        for s in streams:
            try:
                s.synchronize()
            except CudaError as e:
                first_error = first_error or e
        if first_error is not None:
            raise first_error

    def priority_range(self, device: int) -> tuple:
        self._dev(device)
        return 0, _GREATEST_PRIORITY

    # -- memory -------------------------------------------------------------------------------
    def mem_alloc(self, device: int, size: int):
        d = self._dev(device)
        with d.lock:
            if d.used + size > d.capacity:
                raise OutOfMemoryError(
                    f"interpret driver: cannot allocate {size} bytes on cuda:{device}: "
                    f"{d.used} of {d.capacity} bytes in use")
            d.used += size  # reserve before the (slow) host allocation
        try:
            raw = np.empty(size + _ALIGN, dtype=np.uint8)
        except MemoryError:
            with d.lock:
                d.used -= size
            raise OutOfMemoryError(f"interpret driver: the host has no memory for {size} "
                                   f"bytes on cuda:{device}") from None
        base = raw.ctypes.data
        off = (-base) % _ALIGN
        ptr = base + off
        with d.lock:
            d.allocations[ptr] = (raw, size)
        return ptr, raw[off:off + size]

    def mem_free(self, device: int, ptr: int) -> None:
        d = self._dev(device)
        # cudaFree waits for the device: queued copies may still touch this memory.
        try:
            self.device_synchronize(device)
        except CudaError:
            pass  # the error stays with its stream's owner; the memory is still released
        with d.lock:
            entry = d.allocations.pop(ptr, None)
            if entry is None:
                raise CudaError(f"interpret driver: mem_free(): 0x{ptr:x} is not a live "
                                f"allocation on cuda:{device}")
            d.used -= entry[1]

    def mem_get_info(self, device: int) -> tuple:
        d = self._dev(device)
        with d.lock:
            return d.capacity - d.used, d.capacity

    def host_alloc(self, size: int):
        raw = np.empty(size + 4096, dtype=np.uint8)  # page-aligned, like cuMemHostAlloc
        base = raw.ctypes.data
        off = (-base) % 4096
        ptr = base + off
        with self._host_lock:
            self._host[ptr] = raw
        return ptr, raw[off:off + size]

    def host_free(self, ptr: int) -> None:
        with self._host_lock:
            if self._host.pop(ptr, None) is None:
                raise CudaError(f"interpret driver: host_free(): 0x{ptr:x} is not pinned "
                                f"memory from host_alloc")

    # -- streams ------------------------------------------------------------------------------
    def default_stream(self, device: int):
        return self._dev(device).default

    def stream_create(self, device: int, priority: int = 0):
        d = self._dev(device)
        priority = min(0, max(_GREATEST_PRIORITY, int(priority)))  # clamped, as CUDA does
        s = _HostStream(next(self._ids), device, priority)
        with d.lock:
            d.streams.append(s)
        return s

    def stream_query(self, stream) -> bool:
        return stream.query()

    def stream_synchronize(self, stream) -> None:
        stream.synchronize()

    def stream_wait_event(self, stream, event) -> None:
        mark = event.mark  # the record current at the time of the call, as in CUDA
        if mark is not None and not mark.done.is_set():
            stream.submit(mark.done.wait)

    # -- events -------------------------------------------------------------------------------
    def event_create(self, device: int, enable_timing: bool = False, blocking: bool = False):
        self._dev(device)
        return _HostEvent(next(self._ids), device, bool(enable_timing), bool(blocking))

    def event_record(self, event, stream) -> None:
        if event.device != stream.device:
            raise CudaError(f"interpret driver: event_record(): event of cuda:{event.device} "
                            f"recorded on a stream of cuda:{stream.device}")
        mark = _Mark()
        event.mark = mark
        stream.submit(mark.fire)

    def event_query(self, event) -> bool:
        mark = event.mark
        return mark is None or mark.done.is_set()

    def event_synchronize(self, event) -> None:
        mark = event.mark
        if mark is not None:
            mark.done.wait()

    def event_elapsed_ms(self, start, end) -> float:
        for name, ev in (("start", start), ("end", end)):
            if not ev.timing:
                raise CudaError(f"elapsed_time(): the {name} event was created without "
                                f"enable_timing=True")
            if ev.mark is None:
                raise CudaError(f"elapsed_time(): the {name} event was never recorded")
            if not ev.mark.done.is_set():
                raise CudaError(f"elapsed_time(): the {name} event has not completed yet "
                                f"(CUDA_ERROR_NOT_READY); synchronize it first")
        return (end.mark.t - start.mark.t) * 1000.0

    # -- work ---------------------------------------------------------------------------------
    def memcpy_async(self, dst: int, src: int, nbytes: int, stream, kind: str) -> None:
        if nbytes:
            stream.submit(partial(ctypes.memmove, dst, src, nbytes))

    def memcpy_peer_async(self, dst, dst_device, src, src_device, nbytes, stream) -> None:
        self._dev(dst_device)
        self._dev(src_device)
        if nbytes:
            stream.submit(partial(ctypes.memmove, dst, src, nbytes))

    def memset_async(self, ptr: int, value: int, nbytes: int, stream) -> None:
        if nbytes:
            stream.submit(partial(ctypes.memset, ptr, value, nbytes))

    def launch_host_func(self, stream, fn) -> None:
        stream.submit(fn)

    def sleep(self, stream, seconds: float) -> None:
        stream.submit(partial(time.sleep, seconds))

    # -- lifetime -----------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Stop the worker threads once their queued work is done (tests swap drivers)."""
        for d in self._devices:
            with d.lock:
                streams = list(d.streams)
            for s in streams:
                s.close()
