"""CUDA runtime: driver layer (real / interpret), caching allocator, streams and events, pinned
host memory. See ``tensorlib.cuda`` for the public namespace.

Files: ``driver.py`` (interface, errors, backend selection), ``real.py`` / ``interpret.py`` (the
two drivers), ``context.py`` (lazy process state, current device), ``allocator.py`` (caching
allocator; its policy and config in ``alloc_config.py``, blocks and free lists in
``alloc_blocks.py``, statistics in ``alloc_stats.py``, the slow path in ``alloc_segments.py``,
history / snapshots / replay in ``alloc_history.py``), ``streams.py`` (Stream, Event, current
stream, DeviceGuard), ``pinned.py`` (pinned host caching allocator). Importing this package
never touches the driver.
"""
from __future__ import annotations

from .context import (backend_name, check_index, current_device, device_count, get_driver,
                      is_available, require, reset, resolve_index, set_device, state,
                      unavailable_reason)
from .driver import CudaError, CudaUnavailableError, DeviceProperties, OutOfMemoryError

__all__ = ["device_allocator_for", "allocator_for", "pinned_allocator", "current_device",
           "set_device", "device_count", "is_available", "get_driver", "require", "reset",
           "resolve_index", "check_index", "backend_name", "unavailable_reason", "CudaError",
           "CudaUnavailableError", "OutOfMemoryError", "DeviceProperties"]


def allocator_for(index: int):
    """The caching allocator of device ``index`` (created on first use)."""
    a = state.allocators.get(index)
    if a is None:
        driver = require("allocate")
        index = check_index(index, "allocate")
        with state.lock:
            a = state.allocators.get(index)
            if a is None:
                from .allocator import CUDACachingAllocator
                from .streams import current_handle
                a = CUDACachingAllocator(driver, index,
                                         current_stream=lambda i=index: current_handle(i))
                state.allocators[index] = a
    return a


def device_allocator_for(device):
    """What ``Storage.allocate`` uses for a CUDA Device (index None = the current device)."""
    idx = device.index
    if idx is None:
        idx = current_device()
    a = state.allocators.get(idx)
    return a if a is not None else allocator_for(idx)


def pinned_allocator():
    """The process's pinned host caching allocator."""
    p = state.pinned
    if p is None:
        driver = require("pin_memory")
        with state.lock:
            if state.pinned is None:
                from .pinned import PinnedHostAllocator
                state.pinned = PinnedHostAllocator(driver)
            p = state.pinned
    return p
