"""Storage: one allocation (or one borrowed foreign buffer) that tensors and views share."""
from __future__ import annotations

import ctypes
import threading

import numpy as np

from .device import CPU
from .runtime.cpu import streams as _cpu_streams
from .runtime.cpu.allocator import host_allocator

__all__ = ["Storage"]

_new = object.__new__
_char_over = ctypes.c_char.from_buffer
_addressof = ctypes.addressof
_host_allocate = host_allocator.allocate


# Inference mode (tensorlib.autograd.inference_mode) marks the storage allocated inside it.
# _INFERENCE[0]: threads inside inference mode now (while 0, allocation reads no thread-local).
_INFERENCE = [0]


class _InferenceDepth(threading.local):
    depth = 0


_inference_tls = _InferenceDepth()
_inference_lock = threading.Lock()


def set_inference_marking(delta: int) -> None:
    """Enters (+1) or leaves (-1) inference marking on this thread."""
    with _inference_lock:
        depth = _inference_tls.depth
        _inference_tls.depth = depth + delta
        if (depth == 0) != (depth + delta == 0):
            _INFERENCE[0] += 1 if delta > 0 else -1


class Storage:
    """Bytes on a device. Returns its block to the allocator when the last tensor or view dies.

    ``buffer`` is a uint8 NumPy array over the bytes when they are host-addressable (CPU, and CUDA
    under the interpret backend); kernels view it as typed 1-D arrays through :meth:`typed`.

    ``_uses`` maps CPU stream queues to the last queued item that uses these bytes (None: no
    queued use). Handing the bytes to the host (``data_ptr()``: NumPy views, printing, copies to
    a device; ``typed()`` for a kernel that runs on the host) waits for those items first.

    ``readonly``: the bytes were borrowed from a buffer that may not be written (a read-only
    NumPy array, ``bytes``...). Tensors over them are read-only: the dispatcher refuses them as
    written arguments (``Tensor(a!)`` in the schema), ``__setitem__`` refuses them, and their
    NumPy views are not writeable.
    """

    __slots__ = ("nbytes", "device", "buffer", "_ptr", "_allocator", "_block", "_owner", "_typed",
                 "_uses", "readonly", "version", "inference", "__weakref__")

    def __init__(self, nbytes, device, ptr, buffer, allocator=None, block=None, owner=None):
        self.nbytes = nbytes
        self.device = device
        self.buffer = buffer
        self._ptr = ptr
        self._allocator = allocator
        self._block = block
        self._owner = owner  # keeps a borrowed buffer (e.g. a NumPy array) alive
        self._typed = {}
        self._uses = None
        self.readonly = False
        self.version = 0  # bumped by every write through a tensor (autograd's saved-tensor check)
        self.inference = _INFERENCE[0] > 0 and _inference_tls.depth > 0

    @classmethod
    def allocate(cls, nbytes, device=CPU):
        """New storage of ``nbytes`` from the device's caching allocator."""
        if device is CPU or device.type == "cpu":
            # Every small op's output comes through here: slots are set directly (cheaper
            # than a call to __init__).
            block = _host_allocate(nbytes)
            st = _new(cls)
            st.nbytes = nbytes
            st.device = device
            st.buffer = block.buffer
            st._ptr = block.ptr
            st._allocator = host_allocator
            st._block = block
            st._owner = None
            st._typed = {}
            st._uses = None
            st.readonly = False
            st.version = 0
            st.inference = _INFERENCE[0] > 0 and _inference_tls.depth > 0
            return st
        from .runtime.cuda import device_allocator_for
        allocator = device_allocator_for(device)
        block = allocator.allocate(nbytes)
        return cls(nbytes, device, block.ptr, block.buffer, allocator, block)

    @classmethod
    def from_buffer(cls, array: np.ndarray):
        """Borrow the memory extent of a NumPy array; returns (storage, byte offset of array[0...]).
        A non-writeable array gives a read-only storage."""
        if array.size == 0:
            st = cls(0, CPU, array.ctypes.data, np.empty(0, np.uint8), owner=array)
            st.readonly = not array.flags.writeable
            return st, 0
        flags = array.flags
        if flags.c_contiguous and flags.writeable:
            # one block from the data pointer: a byte view of the array itself (no byte bounds,
            # no ctypes view: ~2 us of wrapping a small array); the pointer through a ctypes
            # object over the (writeable, non-empty) bytes: 0.7 us, array.ctypes.data 2.4 (the
            # byte view exports a buffer for every dtype, ml_dtypes' bfloat16 included)
            data = array.reshape(-1).view(np.uint8)
            return cls(array.nbytes, CPU, _addressof(_char_over(data)), data, owner=array), 0
        low, high = np.lib.array_utils.byte_bounds(array)
        nbytes = high - low
        raw = (ctypes.c_uint8 * nbytes).from_address(low)
        buffer = np.frombuffer(raw, dtype=np.uint8)
        st = cls(nbytes, CPU, low, buffer, owner=array)
        st.readonly = not array.flags.writeable
        return st, array.ctypes.data - low

    def data_ptr(self) -> int:
        """The address of the bytes; waits for queued CPU-stream work that uses them (whoever
        takes a raw pointer is not stream-ordered)."""
        if self._uses is not None:
            _cpu_streams.host_access(self)
        return self._ptr

    def typed(self, np_dtype) -> np.ndarray:
        """The whole storage as a 1-D array of ``np_dtype`` (what kernels index with element
        offsets). Unless a user CPU stream is current (the kernel is then launched on it, in
        stream order), waits for queued CPU-stream work that uses the bytes."""
        if self._uses is not None:
            _cpu_streams.host_access(self, kernel=True)
        arr = self._typed.get(np_dtype)
        if arr is None:
            itemsize = np.dtype(np_dtype).itemsize
            usable = self.nbytes - self.nbytes % itemsize
            arr = self.buffer[:usable].view(np_dtype)
            self._typed[np_dtype] = arr
        return arr

    def __del__(self):
        allocator = self._allocator
        if allocator is not None and self._block is not None:
            self._typed = None
            self.buffer = None
            allocator.free(self._block)
            self._block = None

    def __repr__(self):
        return f"Storage(nbytes={self.nbytes}, device='{self.device}', ptr=0x{self._ptr:x})"


_plain_allocate = Storage.__dict__["allocate"]
_plain_del = Storage.__del__


def set_memory_hook(hook) -> None:
    """Profiler hook for allocations (``None``: off). ``hook(storage, +1)`` after each
    ``Storage.allocate``, ``hook(storage, -1)`` when an allocated Storage is released. Swaps the
    two methods, so there is no cost while off."""
    if hook is None:
        Storage.allocate = _plain_allocate
        Storage.__del__ = _plain_del
        return
    plain = _plain_allocate.__func__

    def allocate(cls, nbytes, device=CPU):
        st = plain(cls, nbytes, device)
        hook(st, 1)
        return st

    def release(self):
        if self._block is not None and self._allocator is not None:
            try:
                hook(self, -1)
            except Exception:  # noqa: BLE001 - a finalizer must free the memory regardless
                pass
            _plain_del(self)

    Storage.allocate = classmethod(allocate)
    Storage.__del__ = release
