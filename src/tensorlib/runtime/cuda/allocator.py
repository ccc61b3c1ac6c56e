"""CUDA caching allocator with PyTorch CUDACachingAllocator semantics.

* Requests round up to 512 B (optionally to power-of-two divisions, ``roundup_power2_divisions``).
* Requests <= 1 MiB come from the small pool, whose segments are 2 MiB. Larger ones come from the
  large pool: 20 MiB segments for requests below 10 MiB, otherwise a segment of the request
  rounded up to 2 MiB.
* Free blocks are kept per pool in per-stream lists ordered by (size, address); a request takes
  the best fit on its own stream. A block larger than needed is split (small pool: when the rest
  is >= 512 B; large pool: when the rest is > 1 MiB and the request is below
  ``max_split_size``), and a freed block merges with free neighbours of its segment.
* A block is reused only on the stream it was allocated on. ``record_stream`` adds other streams;
  freeing such a block records an event on each of them and the block returns to the pool only
  when those events have completed (polled at each malloc).
* When the device is full: free the cached segments that are wholly free (after synchronizing
  the outstanding events) and retry once, then raise :class:`OutOfMemoryError` giving what was
  asked for, what is allocated, what is reserved but unallocated, and the device's capacity.

Thread-safe: one lock per device allocator. This file holds the allocator class: its hot
``malloc`` / ``free`` paths, the merge of freed blocks, ``record_stream`` events and the public
methods. The rest, one thing a file: ``alloc_config.py`` (size constants,
``TENSORLIB_CUDA_ALLOC_CONF``, rounding rules), ``alloc_blocks.py`` (Segment, Block, free
lists), ``alloc_stats.py`` (statistics in PyTorch's key names, the consistency check),
``alloc_segments.py`` (the slow path: new segments, releasing cached ones, GC, the OOM report;
a base class of the allocator) and ``alloc_history.py`` (history, traces, snapshots). The
public names of the first three and of the history are re-exported here.
"""
from __future__ import annotations

import threading
import time
from bisect import bisect_left
from collections import deque

import numpy as np

from .alloc_blocks import (_ALLOCATED, _FREE, _KEY_SHIFT, _MAX_SPARE, _PENDING, Block, Segment,
                           _ZeroBlock)
from .alloc_config import (_NO_LIMIT, ENV_ALLOC_CONF, LARGE_BUFFER, MIN_BLOCK_SIZE,
                           MIN_LARGE_ALLOC, ROUND_LARGE, SMALL_BUFFER, SMALL_SIZE,
                           AllocatorConfig, allocation_size, format_size, round_size)
from .alloc_history import history_to_trace, new_history, replay_trace, segment_snapshot
from .alloc_segments import SegmentCache
from .alloc_stats import (_I, _IB, _N, _NB, _NR, _OA, _PI, _PIB, _PN, _PNB, _PNR, _POA, _Q, _QB,
                          _TI, _TIB, _TN, _TNB, _TNR, _TOA, AllocatorStats, check_invariants)
from .driver import CudaError

__all__ = ["CUDACachingAllocator", "AllocatorConfig", "Block", "Segment", "round_size",
           "allocation_size", "format_size", "history_to_trace", "replay_trace",
           "ENV_ALLOC_CONF", "MIN_BLOCK_SIZE", "SMALL_SIZE", "SMALL_BUFFER", "LARGE_BUFFER",
           "MIN_LARGE_ALLOC", "ROUND_LARGE"]


def _check_size(size, op):
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
        raise TypeError(f"{op}(): argument 'size' must be a non-negative int, got {size!r}")
    size = int(size)
    if size < 0:
        raise ValueError(f"{op}(): argument 'size' must be a non-negative int, got {size}")
    return size


class CUDACachingAllocator(SegmentCache):
    """The caching allocator of one device.

    ``current_stream()`` returns the driver handle of the calling thread's current stream (used
    by :meth:`allocate`, Storage's entry point). :meth:`malloc` / :meth:`free` are the raw pair.
    Block objects are recycled after a merge: a block must be freed exactly once (Storage and
    ``caching_allocator_delete`` guarantee that).
    """

    def __init__(self, driver, device: int = 0, config: AllocatorConfig | None = None,
                 current_stream=None):
        self._driver = driver
        self.device = device
        self._cfg = AllocatorConfig.from_env() if config is None else config
        self._max_split = self._cfg.max_split_size
        self._divisions = self._cfg.roundup_power2_divisions
        self._gc_on = self._cfg.garbage_collection_threshold > 0
        self._current_stream = current_stream or (lambda: driver.default_stream(device))
        self._host_visible = driver.host_visible
        self._lock = threading.Lock()
        self._pools = (None, {}, {})  # [1] small, [2] large: stream id -> _FreeList
        self._allocated = {}          # ptr -> Block handed out
        self._segments = {}           # segment ptr -> Segment
        self._outstanding = deque()   # (event, block) awaiting completion
        self._returned = deque()      # blocks free() queued for the next locked call
        self._event_pool = []
        self._spare = []              # recycled Block objects
        self._gc_clock = 0
        self._fraction_limit = None
        self._stats = stats = AllocatorStats(self._max_split)
        self._ps = stats.pools        # the hot paths update these lists in place
        self._stat_rows = stats.rows
        self._pending = 0             # blocks waiting for events (both pools)
        self._history = None
        # True when any rarely-used feature is on (events pending, history, max_split_size,
        # GC, power-of-two rounding): the hot paths test this one flag instead of five.
        self._extra = False
        self._update_extra()
        self._zero = _ZeroBlock(np.empty(0, np.uint8) if self._host_visible else None)
        try:
            self._total = driver.mem_get_info(device)[1]
        except CudaError:
            self._total = 0

    def _update_extra(self) -> None:
        self._extra = bool(self._pending or self._outstanding or self._history is not None
                           or self._max_split < _NO_LIMIT or self._gc_on or self._divisions)

    # ---- configuration ----------------------------------------------------------------------
    @property
    def config(self) -> AllocatorConfig:
        return self._cfg

    def set_memory_fraction(self, fraction: float) -> None:
        """Cap this process's reserved memory at ``fraction`` of the device's capacity."""
        if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or \
                not 0.0 <= fraction <= 1.0:
            raise ValueError(f"set_per_process_memory_fraction(): argument 'fraction' must be "
                             f"in [0, 1], got {fraction!r}")
        with self._lock:
            self._fraction_limit = int(fraction * self._total)

    # ---- hot paths --------------------------------------------------------------------------
    def malloc(self, size: int, stream) -> Block:
        """A block of at least ``size`` (> 0) bytes for use on driver stream ``stream``."""
        lock = self._lock
        lock.acquire()
        try:
            if self._returned:
                self._take_returned_locked()
            extra = self._extra
            if extra and self._outstanding:
                self._process_events()
            if size <= MIN_BLOCK_SIZE:
                rsize = MIN_BLOCK_SIZE
            elif extra and self._divisions:
                rsize = round_size(size, self._divisions)
            else:
                rsize = (size + 511) & -512
            pool = 1 if rsize <= SMALL_SIZE else 2
            fl = self._pools[pool].get(stream.id)
            block = None
            if fl is not None:
                keys = fl.keys
                i = bisect_left(keys, rsize << _KEY_SHIFT)
                if i < len(keys):
                    block = fl.blocks[i]
                    if extra and pool == 2 and self._max_split < _NO_LIMIT and \
                            self._oversize_refused(rsize, block.size):
                        block = None
                    else:
                        del keys[i]
                        del fl.blocks[i]
                if extra and self._gc_on:
                    self._gc_clock += 1
            if block is None:
                block = self._malloc_slow(size, rsize, stream, pool)
            # -- hand out `block`, splitting off the rest when it is big enough (inlined: this
            # is the hot path) --
            bsize = block.size
            remaining = bsize - rsize
            P, O, A = self._stat_rows[pool]  # this pool's, the other pool's, the "all" peaks
            was_split = block.prev is not None or block.next is not None
            if (remaining >= MIN_BLOCK_SIZE) if pool == 1 else \
                    (remaining > SMALL_SIZE and rsize < self._max_split):
                # The rest becomes a free block right after this one.
                rptr = block.ptr + rsize
                spare = self._spare
                if spare:  # a block object freed by a merge: free, no uses, no events
                    rem = spare.pop()
                    rem.ptr = rptr
                    rem.size = remaining
                    rem.stream = block.stream
                    rem.small = block.small
                    rem.segment = block.segment
                    rem.gc_base = self._gc_clock
                else:
                    rem = Block(rptr, remaining, block.stream, block.small, block.segment)
                    rem.gc_base = self._gc_clock
                rem.prev = block
                nxt = block.next
                rem.next = nxt
                if nxt is not None:
                    nxt.prev = rem
                block.next = rem
                block.size = rsize
                if fl is None:  # a new segment: its stream's free list was just made
                    fl = self._pools[pool][block.stream]
                key = remaining << _KEY_SHIFT | rptr
                keys = fl.keys
                i = bisect_left(keys, key)
                keys.insert(i, key)
                fl.blocks.insert(i, rem)
                # inactive_split: the free split piece was `block` (if split); now it is `rem`.
                if was_split:
                    P[_IB] -= rsize
                else:
                    c = P[_I] + 1
                    P[_I] = c
                    P[_TI] += 1
                    if c > P[_PI]:
                        P[_PI] = c
                    c += O[_I]
                    if c > A[_PI]:
                        A[_PI] = c
                    c = P[_IB] + remaining
                    P[_IB] = c
                    P[_TIB] += remaining
                    if c > P[_PIB]:
                        P[_PIB] = c
                    c += O[_IB]
                    if c > A[_PIB]:
                        A[_PIB] = c
                bsize = rsize
            elif was_split:
                P[_I] -= 1
                P[_IB] -= bsize
            block.state = _ALLOCATED
            block.requested = size
            self._allocated[block.ptr] = block
            # allocation / allocated_bytes / requested_bytes: current, total, pool and all peaks.
            c = P[_N] + 1
            P[_N] = c
            P[_TN] += 1
            if c > P[_PN]:
                P[_PN] = c
            c += O[_N]
            if c > A[_PN]:
                A[_PN] = c
            c = P[_NB] + bsize
            P[_NB] = c
            P[_TNB] += bsize
            if c > P[_PNB]:
                P[_PNB] = c
            c += O[_NB]
            if c > A[_PNB]:
                A[_PNB] = c
            c = P[_NR] + size
            P[_NR] = c
            P[_TNR] += size
            if c > P[_PNR]:
                P[_PNR] = c
            c += O[_NR]
            if c > A[_PNR]:
                A[_PNR] = c
            if extra:
                if self._pending:
                    self._stats.active_peaks()
                if bsize >= self._max_split:
                    self._stats.bump(P, _OA, _TOA, _POA, 1)
                if self._history is not None:
                    self._history.append(("alloc", block.ptr, bsize, size, block.stream,
                                          time.perf_counter()))
            return block
        finally:
            lock.release()

    def free(self, block) -> None:
        """Return a block from :meth:`malloc` / :meth:`allocate`. Never waits for a lock:
        Storage.__del__ calls this from finalizers, which the cyclic GC (or a tracer, a signal)
        may run at any bytecode, also while this thread holds the lock inside :meth:`malloc` or
        holds a stream's lock. A block is taken in at once when the lock is free and it needs
        no driver call; otherwise (lock busy, or events to record for ``record_stream`` uses)
        it is queued and the next locked call takes it in."""
        if block.state != _ALLOCATED or self._allocated.get(block.ptr) is not block or \
                block in self._returned:
            if block.size == 0:
                return  # the zero-size block
            raise RuntimeError(f"free(): {block!r} is not allocated by the caching "
                               f"allocator of cuda:{self.device} (double free?)")
        lock = self._lock
        if block.stream_uses or not lock.acquire(False):
            self._returned.append(block)  # atomic under the GIL
            return
        try:
            if self._returned:
                self._take_returned_locked()
            self._free_locked(block)
        finally:
            lock.release()

    def free_ptr(self, ptr: int) -> bool:
        """Free the block at ``ptr``; False when this allocator did not hand it out."""
        with self._lock:
            if self._returned:
                self._take_returned_locked()
            block = self._allocated.get(ptr)
            if block is None:
                return False
            self._free_locked(block)
            return True

    def _take_returned_locked(self) -> None:
        """Take in the blocks :meth:`free` queued (recording their stream-use events)."""
        returned = self._returned
        while returned:
            self._free_locked(returned.popleft())

    def _take_returned(self) -> None:
        if self._returned:
            with self._lock:
                self._take_returned_locked()

    def _free_locked(self, block) -> None:
        """Account a handed-out block as freed: it pends on its stream-use events or merges
        into its stream's free list."""
        self._allocated.pop(block.ptr)
        size = block.size
        P = self._ps[1 if block.small else 2]
        P[_N] -= 1
        P[_NB] -= size
        P[_NR] -= block.requested
        block.buffer = None
        if self._extra:
            if size >= self._max_split:
                P[_OA] -= 1
            if self._history is not None:
                self._history.append(("free", block.ptr, size, block.requested, block.stream,
                                      time.perf_counter()))
        if block.stream_uses:
            self._insert_events(block)
            return
        self._free_block(block)

    def allocate(self, nbytes: int):
        """Storage's entry point: a block on the current stream, with a host ``buffer`` over
        its bytes on the interpret backend."""
        if nbytes <= 0:
            if nbytes == 0:
                return self._zero
            _check_size(nbytes, "allocate")
        block = self.malloc(nbytes, self._current_stream())
        if self._host_visible:
            seg = block.segment
            off = block.ptr - seg.ptr
            block.buffer = seg.buffer[off:off + block.size]
        return block

    # ---- the merge (lock held) --------------------------------------------------------------
    def _free_block(self, block) -> None:
        """Return a no-longer-used block to its pool, merging with free neighbours. The one
        merge: free() comes here directly, a pending block once its events complete."""
        P = self._ps[1 if block.small else 2]
        if block.state == _PENDING:  # its record_stream events have completed
            P[_Q] -= 1
            P[_QB] -= block.size
            self._pending -= 1
            self._update_extra()
        fl = self._pools[1 if block.small else 2][block.stream]
        keys = fl.keys
        blocks = fl.blocks
        spare = self._spare
        merged = merged_bytes = 0
        p = block.prev
        if p is not None and p.state == _FREE:
            i = bisect_left(keys, p.size << _KEY_SHIFT | p.ptr)
            del keys[i]
            del blocks[i]
            merged = 1
            merged_bytes = p.size
            block.ptr = p.ptr
            block.size += merged_bytes
            pp = p.prev
            block.prev = pp
            if pp is not None:
                pp.next = block
            else:
                block.segment.head = block
            p.prev = p.next = p.segment = None
            if len(spare) < _MAX_SPARE:
                spare.append(p)
        n = block.next
        if n is not None and n.state == _FREE:
            i = bisect_left(keys, n.size << _KEY_SHIFT | n.ptr)
            del keys[i]
            del blocks[i]
            merged += 1
            merged_bytes += n.size
            block.size += n.size
            nn = n.next
            block.next = nn
            if nn is not None:
                nn.prev = block
            n.prev = n.next = n.segment = None
            if len(spare) < _MAX_SPARE:
                spare.append(n)
        if block.prev is not None or block.next is not None:
            if merged != 1:
                self._stats.bump(P, _I, _TI, _PI, 1 - merged)
            self._stats.bump(P, _IB, _TIB, _PIB, block.size - merged_bytes)
        elif merged:
            P[_I] -= merged
            P[_IB] -= merged_bytes
        block.state = _FREE
        block.stream_uses = None
        block.gc_base = self._gc_clock
        key = block.size << _KEY_SHIFT | block.ptr
        i = bisect_left(keys, key)
        keys.insert(i, key)
        blocks.insert(i, block)

    # ---- record_stream and events -----------------------------------------------------------
    def record_stream(self, block, stream) -> None:
        """Mark ``block`` as used by driver stream ``stream`` as well as its own."""
        if block.size == 0:
            return
        if stream.device != self.device:
            raise RuntimeError(f"record_stream(): memory on 'cuda:{self.device}' cannot be "
                               f"recorded on a stream of 'cuda:{stream.device}'")
        with self._lock:
            if block.state != _ALLOCATED:
                raise RuntimeError(f"record_stream(): {block!r} is not allocated")
            if stream.id == block.stream:
                return
            if block.stream_uses is None:
                block.stream_uses = {}
            block.stream_uses[stream.id] = stream

    def _insert_events(self, block) -> None:
        driver = self._driver
        uses, block.stream_uses = block.stream_uses, None
        block.state = _PENDING  # never merged into by neighbours until its events complete
        P = self._ps[1 if block.small else 2]
        P[_Q] += 1
        P[_QB] += block.size
        self._pending += 1
        self._extra = True
        for handle in uses.values():
            ev = self._event_pool.pop() if self._event_pool else \
                driver.event_create(self.device, False, False)
            driver.event_record(ev, handle)
            block.event_count += 1
            self._outstanding.append((ev, block))

    def _process_events(self) -> None:
        query = self._driver.event_query
        still = deque()
        out = self._outstanding
        while out:
            ev, block = out.popleft()
            if query(ev):
                self._event_pool.append(ev)
                block.event_count -= 1
                if block.event_count == 0:
                    self._free_block(block)
            else:
                still.append((ev, block))
        self._outstanding = still
        self._update_extra()

    def _synchronize_and_free_events(self) -> None:
        sync = self._driver.event_synchronize
        out, self._outstanding = self._outstanding, deque()
        self._stats.num_sync_all_streams += 1
        for ev, block in out:
            sync(ev)
            self._event_pool.append(ev)
            block.event_count -= 1
            if block.event_count == 0:
                self._free_block(block)
        self._update_extra()

    # ---- public maintenance -----------------------------------------------------------------
    def empty_cache(self) -> None:
        """Return every wholly free cached segment to the driver."""
        with self._lock:
            if self._returned:
                self._take_returned_locked()
            self._release_cached_blocks()

    def block_for_ptr(self, ptr):
        return self._allocated.get(ptr)

    def record_history(self, enabled: bool = True, max_entries: int = 100_000) -> None:
        """Record (action, ptr, size, requested, stream id, time) tuples of every alloc, free,
        segment alloc/free and OOM for replay (see :func:`history_to_trace`)."""
        with self._lock:
            if self._returned:
                self._take_returned_locked()
            self._history = new_history(enabled, max_entries)
            self._update_extra()

    def history(self) -> list:
        with self._lock:
            if self._returned:
                self._take_returned_locked()
            return [] if self._history is None else list(self._history)

    # ---- introspection ----------------------------------------------------------------------
    def memory_stats(self) -> dict:
        """Flat dict with PyTorch's keys (``allocated_bytes.all.current`` ...)."""
        with self._lock:
            if self._returned:
                self._take_returned_locked()
            if self._outstanding:
                self._process_events()
            return self._stats.as_dict()

    def reset_peak_stats(self) -> None:
        with self._lock:
            if self._returned:
                self._take_returned_locked()
            self._stats.reset_peaks()

    def reset_accumulated_stats(self) -> None:
        """Zero the cumulative figures (``*.allocated``, ``*.freed``, the num_* counters)."""
        with self._lock:
            if self._returned:
                self._take_returned_locked()
            self._stats.reset_accumulated()

    def allocated_bytes(self) -> int:
        self._take_returned()
        return self._stats.allocated_bytes()

    def reserved_bytes(self) -> int:
        self._take_returned()
        return self._stats.reserved_bytes()

    def snapshot(self) -> list:
        """One dict per segment (PyTorch's memory_snapshot() layout)."""
        with self._lock:
            if self._returned:
                self._take_returned_locked()
            if self._outstanding:
                self._process_events()
            return segment_snapshot(self._segments.values(), self.device)

    def check_invariants(self) -> None:
        """Consistency check of segments, free lists and stats (tests call it)."""
        with self._lock:
            if self._returned:
                self._take_returned_locked()
            check_invariants(self._segments.values(), self._pools, self._allocated, self._stats)
