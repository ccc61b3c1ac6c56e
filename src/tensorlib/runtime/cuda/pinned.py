"""Pinned (page-locked) host memory with a caching allocator (PyTorch's CachingHostAllocator).

Sizes round up to a power of two (at least 512 B); freed blocks wait in per-size free lists. A
block used by an asynchronous copy gets an event recorded on the copy's stream
(:meth:`PinnedHostAllocator.record_event`); when it is freed before those events complete it is
parked, and it is reused only once they have (checked at each allocation), so a later tensor
can never overwrite bytes a queued copy has not read yet.

On the interpret backend "pinned" memory is ordinary host memory from the interpret driver; the
bookkeeping is the same, which is what makes ``non_blocking`` copies testable there.
"""
from __future__ import annotations

import threading
from collections import deque

from ..host_stats import HostAllocatorStats
from .driver import CudaError

__all__ = ["PinnedBlock", "PinnedHostAllocator"]


class PinnedBlock:
    __slots__ = ("ptr", "size", "requested", "buffer", "in_use", "events", "_owner")

    def __init__(self, owner, ptr, size, buffer):
        self.ptr = ptr
        self.size = size
        self.requested = 0
        self.buffer = buffer
        self.in_use = True
        self.events = []  # driver events of copies that used the block
        self._owner = owner

    def __repr__(self):
        return (f"PinnedBlock(ptr=0x{self.ptr:x}, size={self.size}, in_use={self.in_use}, "
                f"events={len(self.events)})")


def _round(nbytes: int) -> int:
    if nbytes <= 512:
        return 512
    return 1 << (nbytes - 1).bit_length()


class PinnedHostAllocator(HostAllocatorStats):
    def __init__(self, driver):
        self._driver = driver
        self._lock = threading.Lock()
        self._free = {}       # size -> [PinnedBlock] (LIFO)
        self._deferred = []   # freed, waiting for their events
        self._returned = deque()  # freed while the lock was busy or with events (see free())
        self._blocks = {}     # ptr -> PinnedBlock (all live raw allocations)
        self._event_pool = {}  # device -> [event]
        self._init_stats()  # runtime/host_stats.py
        self._num_host_alloc = 0
        self._num_host_free = 0

    def owns(self, ptr: int) -> bool:
        return ptr in self._blocks

    def allocate(self, nbytes: int) -> PinnedBlock:
        if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 0:
            raise ValueError(f"pin_memory(): size must be a non-negative int, got {nbytes!r}")
        size = _round(nbytes)
        with self._lock:
            self._take_returned_locked()
            lst = self._free.get(size)
            block = lst.pop() if lst else None
        if block is None:
            try:
                ptr, buf = self._driver.host_alloc(size)
            except (CudaError, MemoryError):
                self.empty_cache()
                ptr, buf = self._driver.host_alloc(size)
            block = PinnedBlock(self, ptr, size, buf)
            with self._lock:
                self._blocks[ptr] = block
                self._num_host_alloc += 1
                self._reserved += size
                self._reserved_peak = max(self._reserved_peak, self._reserved)
        with self._lock:
            block.in_use = True
            block.requested = nbytes
            self._allocated += size
            self._allocated_peak = max(self._allocated_peak, self._allocated)
            self._num_allocs += 1
            self._alloc_peak = max(self._alloc_peak, self._num_allocs - self._num_frees)
        return block

    def record_event(self, block: PinnedBlock, stream) -> None:
        """``block`` is read or written by work queued on driver stream ``stream``."""
        with self._lock:
            pool = self._event_pool.setdefault(stream.device, [])
            ev = pool.pop() if pool else None
        if ev is None:
            ev = self._driver.event_create(stream.device, False, False)
        self._driver.event_record(ev, stream)
        with self._lock:
            block.events.append(ev)

    def free(self, block: PinnedBlock) -> None:
        """Hand ``block`` back. Never waits for a lock or calls the driver: Storage.__del__
        calls this from finalizers, which may run at any bytecode (also while this thread holds
        this allocator's lock or a stream's). A block without events is taken in at once when
        the lock is free; otherwise it is queued for the next locked call."""
        if block._owner is not self or not block.in_use:
            raise RuntimeError(f"free(): {block!r} is not an allocated pinned block")
        block.in_use = False
        lock = self._lock
        if block.events or not lock.acquire(False):
            self._returned.append(block)  # atomic under the GIL
            return
        try:
            self._take_in_locked(block)
        finally:
            lock.release()

    def _take_in_locked(self, block: PinnedBlock) -> None:
        self._allocated -= block.size
        self._num_frees += 1
        if block.events:
            self._deferred.append(block)
        else:
            self._free.setdefault(block.size, []).append(block)

    def _take_returned_locked(self) -> None:
        """Take in queued frees, then reuse the deferred blocks whose events completed."""
        returned = self._returned
        while returned:
            self._take_in_locked(returned.popleft())
        if self._deferred:
            self._process_deferred()

    def _process_deferred(self) -> None:
        query = self._driver.event_query
        still = []
        for b in self._deferred:
            pending = []
            for ev in b.events:
                if query(ev):
                    self._event_pool.setdefault(ev.device, []).append(ev)
                else:
                    pending.append(ev)
            b.events = pending
            if pending:
                still.append(b)
            else:
                self._free.setdefault(b.size, []).append(b)
        self._deferred = still

    def synchronize(self) -> None:
        """Wait for the events of every parked block (then they are reusable)."""
        with self._lock:
            self._take_returned_locked()
            blocks = list(self._deferred)
        for b in blocks:
            for ev in list(b.events):
                self._driver.event_synchronize(ev)
        with self._lock:
            self._take_returned_locked()

    def empty_cache(self) -> None:
        """Free every cached (not in use, no pending copy) block."""
        with self._lock:
            self._take_returned_locked()
            old, self._free = self._free, {}
            for lst in old.values():
                for b in lst:
                    del self._blocks[b.ptr]
                    self._reserved -= b.size
                    self._num_host_free += 1
        for lst in old.values():
            for b in lst:
                b.buffer = None
                self._driver.host_free(b.ptr)

    def memory_stats(self) -> dict:
        with self._lock:
            self._take_returned_locked()
            stats = self._stats_locked()
            stats["num_host_alloc"] = self._num_host_alloc
            stats["num_host_free"] = self._num_host_free
            return stats

    def _take_returned(self) -> None:  # (reset_peak_stats, runtime/host_stats.py)
        with self._lock:
            self._take_returned_locked()
