"""``tl.cuda``: devices, streams and events, and the caching allocator's controls and statistics.

Works on any machine: without a CUDA driver and device ``is_available()`` is False (set
``TENSORLIB_CUDA_BACKEND=interpret`` to run the CUDA path on host memory). Importing this module
does not touch the driver; cuda-bindings is imported when CUDA is first queried. Names follow
``torch.cuda``.
"""
from __future__ import annotations

from .runtime.cuda import allocator_for as _allocator_for
from .runtime.cuda import context as _ctx
from .runtime.cuda.driver import (CudaError, CudaUnavailableError, DeviceProperties,
                                  KernelLaunchError, OutOfMemoryError)
from .runtime.cuda.streams import DeviceGuard as device
from .runtime.cuda.streams import (Event, Stream, StreamContext, current_handle,
                                   current_stream, default_stream, set_stream, synchronize)
from .runtime.cuda.streams import sleep as _sleep_impl

_state = _ctx.state  # both objects live for the process (reset() clears them in place)
_tls = _ctx.tls

__all__ = ["is_available", "is_initialized", "init", "device_count", "current_device",
           "set_device", "get_device_properties", "get_device_name", "get_device_capability",
           "device", "device_of", "synchronize", "Stream", "Event", "StreamContext", "stream",
           "current_stream", "default_stream", "set_stream", "memory_stats", "memory_allocated",
           "max_memory_allocated", "memory_reserved", "max_memory_reserved",
           "reset_peak_memory_stats", "reset_accumulated_memory_stats", "memory_summary",
           "memory_snapshot", "empty_cache", "caching_allocator_alloc",
           "caching_allocator_delete", "mem_get_info", "set_per_process_memory_fraction",
           "host_memory_stats", "host_empty_cache", "backend", "OutOfMemoryError", "CudaError",
           "KernelLaunchError", "CudaUnavailableError", "DeviceProperties"]


# ---- devices ---------------------------------------------------------------------------------
def is_available() -> bool:
    """True when a CUDA backend (real GPU, or the interpret backend) is usable. Never raises."""
    return _ctx.is_available()


def is_initialized() -> bool:
    return _ctx.state.initialized and _ctx.state.driver is not None


def init() -> None:
    """Choose the backend now (normally lazy); raises CudaUnavailableError if there is none."""
    _ctx.require("init")


def backend():
    """'real', 'interpret', or None when CUDA is unavailable."""
    return _ctx.backend_name()


def device_count() -> int:
    """Number of devices (0 when CUDA is unavailable). Never raises."""
    return _ctx.device_count()


def current_device() -> int:
    return _ctx.current_device()


def set_device(device) -> None:
    _ctx.set_device(device)


def get_device_properties(device=None) -> DeviceProperties:
    idx = _ctx.resolve_index(device, "get_device_properties")
    return _ctx.state.driver.get_properties(idx)


def get_device_name(device=None) -> str:
    return get_device_properties(device).name


def get_device_capability(device=None) -> tuple:
    p = get_device_properties(device)
    return p.major, p.minor


def device_of(tensor) -> device:
    """A device guard for the tensor's device (no-op for CPU tensors)."""
    dev = tensor.device
    return device(dev.index if dev.type == "cuda" else -1)


def stream(s) -> StreamContext:
    """``with tl.cuda.stream(s):`` makes ``s`` current on its device (None: no-op)."""
    return StreamContext(s)


def _sleep(seconds: float) -> None:
    """Keep the current stream busy for ``seconds`` (tests of stream ordering)."""
    _sleep_impl(seconds)


# ---- caching allocator -----------------------------------------------------------------------
def _alloc(device, op):
    return _allocator_for(_ctx.resolve_index(device, op))


def memory_stats(device=None) -> dict:
    """The caching allocator's statistics with PyTorch's key names ({} without CUDA)."""
    if not _ctx.is_available():
        return {}
    return _alloc(device, "memory_stats").memory_stats()


def memory_allocated(device=None) -> int:
    """Bytes in blocks handed out (rounded sizes), as torch.cuda.memory_allocated."""
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device=None) -> int:
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device=None) -> int:
    """Bytes in segments obtained from the driver (allocated + cached)."""
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device=None) -> int:
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def reset_peak_memory_stats(device=None) -> None:
    if _ctx.is_available():
        _alloc(device, "reset_peak_memory_stats").reset_peak_stats()


def reset_accumulated_memory_stats(device=None) -> None:
    if _ctx.is_available():
        _alloc(device, "reset_accumulated_memory_stats").reset_accumulated_stats()


def empty_cache() -> None:
    """Return the cached, wholly free segments of every device to the driver."""
    if not _ctx.is_available():
        return
    for a in list(_ctx.state.allocators.values()):
        a.empty_cache()
    if _ctx.state.pinned is not None:
        _ctx.state.pinned.empty_cache()


def memory_snapshot() -> list:
    """Every device's segments: address, total_size, stream, segment_type, allocated_size and
    blocks (size, requested_size, state)."""
    if not _ctx.is_available():
        return []
    out = []
    for idx in sorted(_ctx.state.allocators):
        out.extend(_ctx.state.allocators[idx].snapshot())
    return out


def mem_get_info(device=None) -> tuple:
    """(free, total) bytes on the device, as the driver reports them."""
    idx = _ctx.resolve_index(device, "mem_get_info")
    return _ctx.state.driver.mem_get_info(idx)


def set_per_process_memory_fraction(fraction: float, device=None) -> None:
    _alloc(device, "set_per_process_memory_fraction").set_memory_fraction(fraction)


def _record_memory_history(enabled: bool = True, max_entries: int = 100_000,
                           device=None) -> None:
    """Record every alloc/free/segment event of the device's allocator (for replay)."""
    _alloc(device, "_record_memory_history").record_history(enabled, max_entries)


def _memory_history(device=None) -> list:
    return _alloc(device, "_memory_history").history()


def caching_allocator_alloc(size, device=None, stream=None) -> int:
    """Raw device memory from the caching allocator: returns its pointer (0 for size 0).

    ``stream`` (a tl.cuda.Stream, default the current one) is the stream it will be used on.
    """
    if type(size) is not int or size <= 0:
        if isinstance(size, bool) or not isinstance(size, int):
            raise TypeError(f"caching_allocator_alloc(): argument 'size' must be an int, got "
                            f"{size!r}")
        if size < 0:
            raise ValueError(f"caching_allocator_alloc(): argument 'size' must be >= 0, got "
                             f"{size}")
        return 0
    if device is None and stream is None:
        t = _tls
        if t.gen == _state.gen:  # initialized, and this thread's state is current
            fast = t.fast
            if fast is not None:
                return fast[0].malloc(size, fast[1]).ptr
            idx = t.device
            a = _state.allocators.get(idx)
            if a is not None:
                s = t.streams.get(idx) or _state.default_streams.get(idx)
                if s is not None:
                    t.fast = (a, s._handle)  # cleared when the device or stream changes
                    return a.malloc(size, s._handle).ptr
        idx = _ctx.current_device()
        return _allocator_for(idx).malloc(size, current_handle(idx)).ptr
    if stream is not None:
        if not isinstance(stream, Stream):
            raise TypeError(f"caching_allocator_alloc(): argument 'stream' must be a "
                            f"tl.cuda.Stream, got {type(stream).__name__}")
        idx = stream._handle.device
        if device is not None and _ctx.resolve_index(device, "caching_allocator_alloc") != idx:
            raise ValueError(f"caching_allocator_alloc(): stream is on 'cuda:{idx}' but "
                             f"device is {device!r}")
        return _allocator_for(idx).malloc(size, stream._handle).ptr
    idx = _ctx.resolve_index(device, "caching_allocator_alloc")
    return _allocator_for(idx).malloc(size, current_handle(idx)).ptr


def caching_allocator_delete(ptr) -> None:
    """Free memory from :func:`caching_allocator_alloc` (0 is ignored)."""
    if not ptr:
        return
    t = _tls
    if t.gen == _state.gen:
        fast = t.fast
        a = fast[0] if fast is not None else _state.allocators.get(t.device)
        if a is not None and a.free_ptr(ptr):
            return
    for a in list(_state.allocators.values()):
        if a.free_ptr(ptr):
            return
    p = f"0x{ptr:x}" if isinstance(ptr, int) else repr(ptr)
    raise ValueError(f"caching_allocator_delete(): pointer {p} was not allocated by "
                     f"caching_allocator_alloc (or was already freed)")


def host_memory_stats() -> dict:
    """Statistics of the pinned host caching allocator ({} before first use)."""
    p = _ctx.state.pinned
    return {} if p is None else p.memory_stats()


def host_empty_cache() -> None:
    p = _ctx.state.pinned
    if p is not None:
        p.empty_cache()


def memory_summary(device=None, abbreviated: bool = False) -> str:
    """A human-readable table of :func:`memory_stats` (PyTorch's layout)."""
    if not _ctx.is_available():
        return "CUDA is not available: no memory summary.\n"
    idx = _ctx.resolve_index(device, "memory_summary")
    stats = _allocator_for(idx).memory_stats()
    from .runtime.cuda.alloc_config import format_size
    width = 75
    line = "|" + "-" * width + "|"
    dline = "|" + "=" * width + "|"
    rows = [dline,
            "|" + f"tensorlib CUDA memory summary, device ID {idx}".center(width) + "|",
            line,
            "|" + f"CUDA OOMs: {stats['num_ooms']}".center(37) + "|"
            + f"cudaMalloc retries: {stats['num_alloc_retries']}".center(37) + "|",
            dline,
            "|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |",
            line]
    metrics = (("Allocated memory", "allocated_bytes", True),
               ("Active memory", "active_bytes", True),
               ("Requested memory", "requested_bytes", True),
               ("GPU reserved memory", "reserved_bytes", True),
               ("Non-releasable memory", "inactive_split_bytes", True),
               ("Allocations", "allocation", False),
               ("Active allocs", "active", False),
               ("GPU reserved segments", "segment", False),
               ("Non-releasable allocs", "inactive_split", False))

    def cell(v, is_bytes):
        if is_bytes:
            s = format_size(v).replace("bytes", "B")
        else:
            s = str(v)
        return f" {s:>10} "

    for title, key, is_bytes in metrics:
        pools = (("all", title), ("large_pool", "      from large pool"),
                 ("small_pool", "      from small pool"))
        for pool, label in (pools[:1] if abbreviated else pools):
            vals = [stats[f"{key}.{pool}.{f}"] for f in ("current", "peak", "allocated", "freed")]
            rows.append(f"| {label:<21} |" + "|".join(cell(v, is_bytes) for v in vals) + "|")
        rows.append(line)
    for title, key in (("Oversize allocations", "oversize_allocations"),
                       ("Oversize GPU segments", "oversize_segments")):
        vals = [stats[f"{key}.{f}"] for f in ("current", "peak", "allocated", "freed")]
        rows.append(f"| {title:<21} |" + "|".join(cell(v, False) for v in vals) + "|")
    rows.append(dline)
    return "\n".join(rows) + "\n"
