"""The slow path of the CUDA caching allocator (``allocator.py``): where segments come from and
how cached ones go back to the driver.

When no cached free block fits a request, :meth:`SegmentCache._malloc_slow` first runs the
garbage collector (``garbage_collection_threshold``), then asks the driver for a new segment;
failing that it frees cached oversize segments of the stream (``max_split_size``), then every
wholly free segment after synchronizing outstanding events (counted as an alloc retry), and
tries once more before raising :class:`OutOfMemoryError` with the figures PyTorch gives.

:class:`SegmentCache` is a base class of ``CUDACachingAllocator``, split off to keep each file
about one thing; it has no state of its own. Its methods run with the allocator's lock held and
use the allocator's ``_driver``, ``device``, ``_cfg``, ``_max_split``, ``_gc_on``,
``_gc_clock``, ``_fraction_limit``, ``_total``, ``_pools``, ``_segments``, ``_outstanding``,
``_history``, ``_stats`` and ``_synchronize_and_free_events()``.
"""
from __future__ import annotations

import time
from bisect import bisect_left

from .alloc_blocks import _KEY_SHIFT, Block, Segment, _FreeList
from .alloc_config import _NO_LIMIT, ENV_ALLOC_CONF, LARGE_BUFFER, allocation_size, format_size
from .alloc_stats import _OS, _POS, _PS, _PSB, _S, _SB, _TOS, _TS, _TSB
from .driver import CudaError, OutOfMemoryError

__all__ = ["SegmentCache"]


class SegmentCache:
    """New segments, releasing cached ones, and the OOM report (see the module docstring)."""

    __slots__ = ()

    def _oversize_refused(self, rsize, bsize) -> bool:
        # Never hand an oversize block to a small request, nor a much larger oversize block to
        # an oversize request (oversize blocks are never split).
        ms = self._max_split
        return (rsize < ms and bsize >= ms) or (rsize >= ms and bsize >= rsize + LARGE_BUFFER)

    def _free_list_remove(self, block) -> None:
        fl = self._pools[1 if block.small else 2][block.stream]
        key = block.size << _KEY_SHIFT | block.ptr
        keys = fl.keys
        i = bisect_left(keys, key)
        if i == len(keys) or keys[i] != key:  # pragma: no cover - would be a logic error
            raise AssertionError(f"caching allocator: {block!r} missing from its free list")
        del keys[i]
        del fl.blocks[i]

    def _malloc_slow(self, size, rsize, stream, pool) -> Block:
        if self._gc_on:
            self._garbage_collect()
        block = self._alloc_block(rsize, stream, pool)
        if block is None and self._release_available_cached_blocks(rsize, stream.id, pool):
            block = self._alloc_block(rsize, stream, pool)
        if block is None:
            self._stats.num_alloc_retries += 1
            self._release_cached_blocks()
            # Blocks whose events just completed may fit without a new segment.
            block = self._take_free_block(rsize, stream.id, pool)
            if block is None:
                block = self._alloc_block(rsize, stream, pool)
        if block is None:
            self._stats.num_ooms += 1
            if self._history is not None:
                self._history.append(("oom", 0, rsize, size, stream.id, time.perf_counter()))
            raise OutOfMemoryError(self._oom_message(size, rsize))
        return block

    def _take_free_block(self, rsize, sid, pool):
        fl = self._pools[pool].get(sid)
        if fl is None:
            return None
        i = bisect_left(fl.keys, rsize << _KEY_SHIFT)
        if i == len(fl.keys):
            return None
        block = fl.blocks[i]
        if pool == 2 and self._max_split < _NO_LIMIT and self._oversize_refused(rsize,
                                                                                block.size):
            return None
        del fl.keys[i]
        del fl.blocks[i]
        return block

    def _alloc_block(self, rsize, stream, pool):
        """A new segment for the request, as one block (not in a free list)."""
        seg_size = allocation_size(rsize)
        limit = self._fraction_limit
        stats = self._stats
        if limit is not None and stats.reserved_bytes() + seg_size > limit:
            return None
        try:
            ptr, buf = self._driver.mem_alloc(self.device, seg_size)
        except OutOfMemoryError:
            return None
        small = pool == 1
        seg = Segment(ptr, seg_size, stream, small, buf)
        self._segments[ptr] = seg
        block = Block(ptr, seg_size, stream.id, small, seg)
        seg.head = block
        fls = self._pools[pool]
        if stream.id not in fls:
            fls[stream.id] = _FreeList()
        P = stats.pools[pool]
        stats.bump(P, _S, _TS, _PS, 1)
        stats.bump(P, _SB, _TSB, _PSB, seg_size)
        if seg_size >= self._max_split:
            stats.bump(P, _OS, _TOS, _POS, 1)
        stats.num_device_alloc += 1
        if self._history is not None:
            self._history.append(("segment_alloc", ptr, seg_size, 0, stream.id,
                                  time.perf_counter()))
        return block

    def _release_block(self, block) -> None:
        """Give a wholly free segment back to the driver (block already off its free list)."""
        seg = self._segments.pop(block.ptr)
        self._driver.mem_free(self.device, seg.ptr)
        stats = self._stats
        P = stats.pools[1 if seg.small else 2]
        P[_S] -= 1
        P[_SB] -= seg.size
        if seg.size >= self._max_split:
            P[_OS] -= 1
        stats.num_device_free += 1
        seg.buffer = None
        seg.head = None
        block.segment = None
        if self._history is not None:
            self._history.append(("segment_free", seg.ptr, seg.size, 0, block.stream,
                                  time.perf_counter()))

    def _release_available_cached_blocks(self, rsize, sid, pool) -> bool:
        """With max_split_size set: free oversize cached blocks of this stream to make room."""
        if pool == 1 or self._max_split >= _NO_LIMIT:
            return False
        fl = self._pools[2].get(sid)
        if fl is None:
            return False
        # Oversize blocks are never split, so each is a whole segment.
        candidates = [b for b in fl.blocks if b.size >= self._max_split
                      and b.prev is None and b.next is None]
        if not candidates:
            return False
        fit = [b for b in candidates if b.size >= rsize]
        victims = [min(fit, key=lambda b: b.size)] if fit else []
        if not victims:  # free the largest ones until enough has been released
            total = 0
            for b in sorted(candidates, key=lambda b: -b.size):
                victims.append(b)
                total += b.size
                if total >= rsize:
                    break
            if total < rsize:
                return False
        for b in victims:
            self._free_list_remove(b)
            self._release_block(b)
        return True

    def _release_cached_blocks(self) -> None:
        """Synchronize outstanding events, then free every wholly free segment."""
        if self._outstanding:
            self._synchronize_and_free_events()
        for fls in self._pools[1:]:
            for fl in fls.values():
                keep_k, keep_b, release = [], [], []
                for k, b in zip(fl.keys, fl.blocks):
                    if b.prev is None and b.next is None:
                        release.append(b)
                    else:
                        keep_k.append(k)
                        keep_b.append(b)
                fl.keys, fl.blocks = keep_k, keep_b
                for b in release:
                    self._release_block(b)

    def _garbage_collect(self) -> None:
        """Free old unused cached segments once reserved memory passes the GC threshold."""
        limit = self._fraction_limit if self._fraction_limit is not None else self._total
        threshold = int(self._cfg.garbage_collection_threshold * limit)
        reserved = self._stats.reserved_bytes()
        if reserved <= threshold:
            return
        target = reserved - threshold
        clock = self._gc_clock
        candidates = [b for fls in self._pools[1:] for fl in fls.values() for b in fl.blocks
                      if b.prev is None and b.next is None]
        if not candidates:
            return
        reclaimed = 0
        # Oldest first, but only those at least as old as the average (PyTorch's policy).
        ages = [clock - b.gc_base for b in candidates]
        average = sum(ages) / len(ages)
        for age, b in sorted(zip(ages, candidates), key=lambda t: -t[0]):
            if reclaimed >= target or age < average:
                break
            self._free_list_remove(b)
            reclaimed += b.size
            self._release_block(b)

    def _oom_message(self, size, rsize) -> str:
        try:
            free, total = self._driver.mem_get_info(self.device)
        except CudaError:
            free, total = 0, self._total
        allocated = self._stats.allocated_bytes()
        reserved = self._stats.reserved_bytes()
        unalloc = reserved - allocated
        msg = (f"CUDA out of memory. Tried to allocate {format_size(size)} ({size} bytes, "
               f"rounded to {rsize}). GPU {self.device} has a total capacity of "
               f"{format_size(total)} ({total} bytes) of which {format_size(free)} ({free} "
               f"bytes) is free. Of the allocated memory {format_size(allocated)} ({allocated} "
               f"bytes) is allocated by tensorlib, and {format_size(unalloc)} ({unalloc} bytes) "
               f"is reserved by tensorlib but unallocated.")
        if self._fraction_limit is not None:
            msg += (f" This process is limited to {format_size(self._fraction_limit)} "
                    f"({self._fraction_limit} bytes) by set_per_process_memory_fraction().")
        if self._driver.name == "interpret":
            msg += " (Interpret backend: the capacity is TENSORLIB_CUDA_MEMORY.)"
        if unalloc > 0 and unalloc >= allocated // 4:
            msg += (f" If reserved but unallocated memory is large try setting "
                    f"max_split_size_mb in {ENV_ALLOC_CONF} to avoid fragmentation.")
        return msg
