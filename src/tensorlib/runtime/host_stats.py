"""The statistics both host-memory caches keep, in PyTorch's ``memory_stats`` names: the CPU
tensor allocator (runtime/cpu/allocator.py ``HostCachingAllocator``) and the pinned-memory
cache of the CUDA runtime (runtime/cuda/pinned.py ``PinnedHostAllocator``).

The counters are plain attributes that each allocator updates inside its own locked code (the
hot paths inline them); this base holds their meaning, their initial values and the parts of
``memory_stats()`` / ``reset_peak_stats()`` that are the same for both.
"""
from __future__ import annotations

__all__ = ["HostAllocatorStats"]


class HostAllocatorStats:
    """Subclasses have ``_lock``, ``_deferred`` (freed blocks waiting for events) and
    ``_take_returned()``, which takes in the frees queued by finalizers (see their ``free``)."""

    def _init_stats(self) -> None:
        self._allocated = 0       # bytes of blocks in use (deferred frees included)
        self._allocated_peak = 0
        self._reserved = 0        # bytes held from the system: in use + cached + deferred
        self._reserved_peak = 0
        self._num_allocs = 0
        self._num_frees = 0
        self._alloc_peak = 0      # most blocks in use at once

    def _take_returned(self) -> None:
        raise NotImplementedError

    def _stats_locked(self) -> dict:
        """The shared entries of memory_stats() (call with the lock held)."""
        return {
            "allocated_bytes.current": self._allocated,
            "allocated_bytes.peak": self._allocated_peak,
            "reserved_bytes.current": self._reserved,
            "reserved_bytes.peak": self._reserved_peak,
            "allocation.current": self._num_allocs - self._num_frees,
            "allocation.peak": self._alloc_peak,
            "num_allocs": self._num_allocs,
            "num_frees": self._num_frees,
            "num_deferred_frees.current": len(self._deferred),
        }

    def reset_peak_stats(self) -> None:
        """Peaks restart from the current values."""
        self._take_returned()
        with self._lock:
            self._allocated_peak = self._allocated
            self._reserved_peak = self._reserved
            self._alloc_peak = self._num_allocs - self._num_frees
