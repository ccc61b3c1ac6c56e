"""The CUDA driver layer: one interface, two implementations.

``real`` (``real.py``) is a thin layer over ``cuda.bindings.driver``; ``interpret``
(``interpret.py``) hands out host memory and runs every stream as a FIFO on its own worker
thread, so stream order, events and waits behave as on a GPU without one. Everything above this
layer (caching allocator, streams, copies) talks to a :class:`Driver` only.

Handles: streams and events are opaque objects made by the driver; each has ``.id`` (an int,
unique per device; the default stream's is 0) and ``.device`` (the device index). Pointers are
plain ints.

Selection (:func:`create_driver`): ``TENSORLIB_CUDA_BACKEND=interpret`` picks the interpret
driver; ``real`` or unset picks the real one when cuda-bindings imports, ``cuInit`` succeeds and a
device exists. Any failure leaves CUDA *unavailable* with a reason; nothing raises at import.
"""
from __future__ import annotations

import os
import warnings

__all__ = ["CudaError", "CudaUnavailableError", "OutOfMemoryError", "DeviceProperties", "Driver",
           "create_driver", "parse_bytes", "ENV_BACKEND", "ENV_MEMORY", "ENV_DEVICE_COUNT"]

ENV_BACKEND = "TENSORLIB_CUDA_BACKEND"
ENV_MEMORY = "TENSORLIB_CUDA_MEMORY"
ENV_DEVICE_COUNT = "TENSORLIB_CUDA_DEVICE_COUNT"


class CudaError(RuntimeError):
    """A CUDA driver call failed (the message names the call and the driver's error)."""


class CudaUnavailableError(CudaError):
    """CUDA was asked for but no backend is usable (no driver, no device, or a bad setting)."""


class KernelLaunchError(CudaError):
    """A kernel failed to compile or launch (the message names the kernel, its grid and
    arguments, and the underlying error)."""


class OutOfMemoryError(RuntimeError, MemoryError):
    """Device memory is exhausted (PyTorch's torch.cuda.OutOfMemoryError)."""


class DeviceProperties:
    """What ``get_device_properties(i)`` returns (PyTorch's attribute names)."""

    __slots__ = ("name", "major", "minor", "total_memory", "multi_processor_count",
                 "L2_cache_size", "warp_size", "max_shared_memory_per_block", "is_integrated",
                 "clock_rate_khz", "backend")

    def __init__(self, name, major, minor, total_memory, multi_processor_count, L2_cache_size=0,
                 warp_size=32, max_shared_memory_per_block=49152, is_integrated=False,
                 clock_rate_khz=0, backend="real"):
        self.name = name
        self.major = major
        self.minor = minor
        self.total_memory = total_memory
        self.multi_processor_count = multi_processor_count
        self.L2_cache_size = L2_cache_size
        self.warp_size = warp_size
        self.max_shared_memory_per_block = max_shared_memory_per_block
        self.is_integrated = is_integrated
        self.clock_rate_khz = clock_rate_khz
        self.backend = backend

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory >> 20}MB, "
                f"multi_processor_count={self.multi_processor_count}, "
                f"L2_cache_size={self.L2_cache_size >> 20}MB, backend='{self.backend}')")


class Driver:
    """The interface both backends implement. Every method may raise :class:`CudaError`."""

    name = "abstract"
    #: True when device pointers are host addresses (interpret): blocks then carry a NumPy
    #: ``buffer`` over their bytes and host code may read them once the stream is synchronized.
    host_visible = False

    # -- devices ------------------------------------------------------------------------------
    def device_count(self) -> int:
        raise NotImplementedError

    def get_properties(self, device: int) -> DeviceProperties:
        raise NotImplementedError

    def set_current(self, device: int) -> None:
        """Make ``device`` the calling thread's current device (real: its primary context)."""
        raise NotImplementedError

    def device_synchronize(self, device: int) -> None:
        raise NotImplementedError

    def priority_range(self, device: int) -> tuple:
        """(least, greatest) stream priority; lower numbers are higher priorities."""
        raise NotImplementedError

    # -- memory -------------------------------------------------------------------------------
    def mem_alloc(self, device: int, size: int):
        """New device memory: returns (ptr, host_buffer or None); OutOfMemoryError when full."""
        raise NotImplementedError

    def mem_free(self, device: int, ptr: int) -> None:
        """Release memory from :meth:`mem_alloc`; waits for the device's work first (cudaFree)."""
        raise NotImplementedError

    def mem_get_info(self, device: int) -> tuple:
        """(free, total) bytes."""
        raise NotImplementedError

    def host_alloc(self, size: int):
        """Pinned host memory: returns (ptr, uint8 NumPy array over it)."""
        raise NotImplementedError

    def host_free(self, ptr: int) -> None:
        raise NotImplementedError

    # -- streams ------------------------------------------------------------------------------
    def default_stream(self, device: int):
        raise NotImplementedError

    def stream_create(self, device: int, priority: int = 0):
        raise NotImplementedError

    def stream_query(self, stream) -> bool:
        raise NotImplementedError

    def stream_synchronize(self, stream) -> None:
        raise NotImplementedError

    def stream_wait_event(self, stream, event) -> None:
        raise NotImplementedError

    # -- events -------------------------------------------------------------------------------
    def event_create(self, device: int, enable_timing: bool = False, blocking: bool = False):
        raise NotImplementedError

    def event_record(self, event, stream) -> None:
        raise NotImplementedError

    def event_query(self, event) -> bool:
        raise NotImplementedError

    def event_synchronize(self, event) -> None:
        raise NotImplementedError

    def event_elapsed_ms(self, start, end) -> float:
        raise NotImplementedError

    # -- work ---------------------------------------------------------------------------------
    def memcpy_async(self, dst: int, src: int, nbytes: int, stream, kind: str) -> None:
        """kind: 'h2d', 'd2h', 'd2d' (same device) or 'h2h'."""
        raise NotImplementedError

    def memcpy_peer_async(self, dst: int, dst_device: int, src: int, src_device: int,
                          nbytes: int, stream) -> None:
        raise NotImplementedError

    def memset_async(self, ptr: int, value: int, nbytes: int, stream) -> None:
        raise NotImplementedError

    def launch_host_func(self, stream, fn) -> None:
        """Run ``fn()`` in stream order. Interpret only (the real driver raises): it is how
        host-memory kernels run as stream work. ``fn`` must not call into CUDA (as with
        cuLaunchHostFunc)."""
        raise NotImplementedError(f"{self.name} driver: launch_host_func is not supported")

    def sleep(self, stream, seconds: float) -> None:
        """Keep ``stream`` busy for ``seconds`` (for tests of ordering)."""
        raise NotImplementedError


def parse_bytes(text: str, what: str) -> int:
    """'1073741824', '1e9', '512MiB', '2G' -> bytes; ValueError naming ``what`` otherwise."""
    s = text.strip().replace("_", "")
    units = {"": 1, "b": 1, "k": 1 << 10, "kb": 1000, "kib": 1 << 10, "m": 1 << 20,
             "mb": 1000 ** 2, "mib": 1 << 20, "g": 1 << 30, "gb": 1000 ** 3, "gib": 1 << 30,
             "t": 1 << 40, "tb": 1000 ** 4, "tib": 1 << 40}
    i = len(s)
    while i and s[i - 1].isalpha():
        i -= 1
    num, unit = s[:i].strip(), s[i:].lower()
    try:
        if unit not in units:
            raise ValueError
        value = float(num) if any(c in num for c in ".eE") else int(num, 0)
        n = int(value * units[unit])
        if n < 0:
            raise ValueError
    except ValueError:
        raise ValueError(f"{what}: expected a byte count such as 1073741824 or 512MiB, "
                         f"got {text!r}") from None
    return n


def create_driver():
    """(driver, None) or (None, reason): reads the environment, never raises."""
    choice = os.environ.get(ENV_BACKEND, "").strip().lower()
    if choice in ("", "auto", "real", "cuda"):
        from . import real
        return real.try_create()
    if choice in ("interpret", "host"):
        try:
            memory = os.environ.get(ENV_MEMORY)
            memory = None if memory is None or not memory.strip() else \
                parse_bytes(memory, ENV_MEMORY)
            count = os.environ.get(ENV_DEVICE_COUNT, "1").strip() or "1"
            try:
                count = int(count)
                if count < 1:
                    raise ValueError
            except ValueError:
                raise ValueError(f"{ENV_DEVICE_COUNT}: expected a positive int, "
                                 f"got {count!r}") from None
        except ValueError as e:
            warnings.warn(f"CUDA interpret backend not started: {e}", RuntimeWarning,
                          stacklevel=3)
            return None, str(e)
        from .interpret import InterpretDriver
        return InterpretDriver(memory=memory, device_count=count), None
    reason = (f"{ENV_BACKEND}={choice!r} is not a known backend; expected 'interpret' or "
              f"'real'")
    warnings.warn(reason, RuntimeWarning, stacklevel=3)
    return None, reason
