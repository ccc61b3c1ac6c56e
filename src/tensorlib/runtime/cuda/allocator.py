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

Statistics use PyTorch's key names (``allocated_bytes.all.current`` ...). Thread-safe: one lock
per device allocator. The size constants, ``TENSORLIB_CUDA_ALLOC_CONF`` parsing and rounding
rules are in ``alloc_config.py``; history, traces and snapshots in ``alloc_history.py`` (both
re-exported here).
"""
from __future__ import annotations

import threading
import time
from bisect import bisect_left
from collections import deque

import numpy as np

from .alloc_config import (_NO_LIMIT, ENV_ALLOC_CONF, LARGE_BUFFER, MIN_BLOCK_SIZE,
                           MIN_LARGE_ALLOC, ROUND_LARGE, SMALL_BUFFER, SMALL_SIZE,
                           AllocatorConfig, allocation_size, format_size, round_size)
from .alloc_history import history_to_trace, new_history, replay_trace, segment_snapshot
from .driver import CudaError, OutOfMemoryError

__all__ = ["CUDACachingAllocator", "AllocatorConfig", "Block", "Segment", "round_size",
           "allocation_size", "format_size", "history_to_trace", "replay_trace",
           "ENV_ALLOC_CONF", "MIN_BLOCK_SIZE", "SMALL_SIZE", "SMALL_BUFFER", "LARGE_BUFFER",
           "MIN_LARGE_ALLOC", "ROUND_LARGE"]

_KEY_SHIFT = 64                 # free-list key = size << 64 | ptr: one int orders (size, address)

# Block states (alloc_history.SNAPSHOT_STATES names them in snapshots)
_FREE, _ALLOCATED, _PENDING = 0, 1, 2

# Statistics. Each pool (1 = small, 2 = large) keeps one flat list of ints indexed by the
# constants below; "all" figures are sums of the two pools, except peaks, which a second list
# tracks. Cumulative "freed" figures are derived (total increases - current), so a free only
# lowers current values. Active = allocated + pending (freed, waiting for record_stream events);
# its own peaks are tracked only while something is pending (otherwise active == allocated).
(_N, _NB, _NR, _TN, _TNB, _TNR, _PN, _PNB, _PNR,          # allocations / bytes / requested
 _S, _SB, _TS, _TSB, _PS, _PSB,                           # segments / reserved bytes
 _Q, _QB, _PA, _PAB,                                      # pending, active peaks
 _I, _IB, _TI, _TIB, _PI, _PIB,                           # inactive split blocks / bytes
 _OA, _TOA, _POA, _OS, _TOS, _POS) = range(31)            # oversize allocations / segments
_NSTATS = 31
_POOL_NAMES = ("all", "small_pool", "large_pool")
_MAX_SPARE = 4096  # recycled Block objects kept for splits


class Segment:
    """One device allocation (cudaMalloc) carved into blocks."""

    __slots__ = ("ptr", "size", "stream", "small", "buffer", "head")

    def __init__(self, ptr, size, stream, small, buffer):
        self.ptr = ptr
        self.size = size
        self.stream = stream  # driver stream handle it belongs to
        self.small = small
        self.buffer = buffer  # host view of the bytes (interpret) or None
        self.head = None      # lowest-address block


class Block:
    """A piece of a segment. ``buffer`` (interpret backend) views exactly its bytes while it is
    handed out through :meth:`CUDACachingAllocator.allocate`."""

    __slots__ = ("ptr", "size", "requested", "stream", "small", "state", "prev", "next",
                 "segment", "stream_uses", "event_count", "gc_base", "buffer")

    def __init__(self, ptr, size, stream, small, segment):
        self.ptr = ptr
        self.size = size
        self.requested = 0
        self.stream = stream  # stream id
        self.small = small
        self.state = _FREE
        self.prev = None
        self.next = None
        self.segment = segment
        self.stream_uses = None  # {stream id: handle} from record_stream
        self.event_count = 0
        self.gc_base = 0
        self.buffer = None

    @property
    def allocated(self) -> bool:
        return self.state == _ALLOCATED

    def __repr__(self):
        state = ("free", "allocated", "pending_free")[self.state]
        return (f"Block(ptr=0x{self.ptr:x}, size={self.size}, requested={self.requested}, "
                f"stream={self.stream}, {state})")


class _FreeList:
    """Free blocks of one (pool, stream), sorted by key = size << 64 | ptr."""

    __slots__ = ("keys", "blocks")

    def __init__(self):
        self.keys = []
        self.blocks = []


class _ZeroBlock:
    """What a 0-byte request gets: no memory, pointer 0 (as cudaMalloc(0) in PyTorch)."""

    __slots__ = ("ptr", "size", "requested", "buffer", "stream", "state")

    def __init__(self, buffer):
        self.state = -1  # never "allocated": free() recognises it by size 0
        self.ptr = 0
        self.size = 0
        self.requested = 0
        self.buffer = buffer
        self.stream = 0


def _check_size(size, op):
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
        raise TypeError(f"{op}(): argument 'size' must be a non-negative int, got {size!r}")
    size = int(size)
    if size < 0:
        raise ValueError(f"{op}(): argument 'size' must be a non-negative int, got {size}")
    return size


class CUDACachingAllocator:
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
        self._ps = (None, [0] * _NSTATS, [0] * _NSTATS)
        self._all = [0] * _NSTATS     # peaks of the "all" figures
        self._stat_rows = (None, (self._ps[1], self._ps[2], self._all),
                           (self._ps[2], self._ps[1], self._all))
        self._pending = 0             # blocks waiting for events (both pools)
        self._base = {}               # baselines of cumulative stats after a reset
        self._num_alloc_retries = 0
        self._num_ooms = 0
        self._num_sync_all_streams = 0
        self._num_device_alloc = 0
        self._num_device_free = 0
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
                    self._active_peaks()
                if bsize >= self._max_split:
                    self._bump(P, _OA, _TOA, _POA, 1)
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

    # ---- block management (lock held) -------------------------------------------------------
    def _oversize_refused(self, rsize, bsize) -> bool:
        # Never hand an oversize block to a small request, nor a much larger oversize block to
        # an oversize request (oversize blocks are never split).
        ms = self._max_split
        return (rsize < ms and bsize >= ms) or (rsize >= ms and bsize >= rsize + LARGE_BUFFER)

    def _active_peaks(self) -> None:
        """Active = allocated + pending; its peaks need tracking only while blocks pend."""
        A = self._all
        na = nb = 0
        for P in self._ps[1:]:
            n = P[_N] + P[_Q]
            b = P[_NB] + P[_QB]
            if n > P[_PA]:
                P[_PA] = n
            if b > P[_PAB]:
                P[_PAB] = b
            na += n
            nb += b
        if na > A[_PA]:
            A[_PA] = na
        if nb > A[_PAB]:
            A[_PAB] = nb

    def _bump(self, P, cur, tot, peak, n) -> None:
        """Add ``n`` to a pool statistic, keeping its total and both peaks."""
        c = P[cur] + n
        P[cur] = c
        if n > 0:
            P[tot] += n
            if c > P[peak]:
                P[peak] = c
            c += self._ps[2 if P is self._ps[1] else 1][cur]
            if c > self._all[peak]:
                self._all[peak] = c

    def _free_list_remove(self, block) -> None:
        fl = self._pools[1 if block.small else 2][block.stream]
        key = block.size << _KEY_SHIFT | block.ptr
        keys = fl.keys
        i = bisect_left(keys, key)
        if i == len(keys) or keys[i] != key:  # pragma: no cover - would be a logic error
            raise AssertionError(f"caching allocator: {block!r} missing from its free list")
        del keys[i]
        del fl.blocks[i]

    def _free_block(self, block) -> None:
        """Return a no-longer-used block to its pool, merging with free neighbours."""
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
                self._bump(P, _I, _TI, _PI, 1 - merged)
            self._bump(P, _IB, _TIB, _PIB, block.size - merged_bytes)
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
        self._num_sync_all_streams += 1
        for ev, block in out:
            sync(ev)
            self._event_pool.append(ev)
            block.event_count -= 1
            if block.event_count == 0:
                self._free_block(block)
        self._update_extra()

    # ---- slow path: new segments, releasing, OOM --------------------------------------------
    def _malloc_slow(self, size, rsize, stream, pool) -> Block:
        if self._gc_on:
            self._garbage_collect()
        block = self._alloc_block(rsize, stream, pool)
        if block is None and self._release_available_cached_blocks(rsize, stream.id, pool):
            block = self._alloc_block(rsize, stream, pool)
        if block is None:
            self._num_alloc_retries += 1
            self._release_cached_blocks()
            # Blocks whose events just completed may fit without a new segment.
            block = self._take_free_block(rsize, stream.id, pool)
            if block is None:
                block = self._alloc_block(rsize, stream, pool)
        if block is None:
            self._num_ooms += 1
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

    def _reserved(self) -> int:
        return self._ps[1][_SB] + self._ps[2][_SB]

    def _alloc_block(self, rsize, stream, pool):
        """A new segment for the request, as one block (not in a free list)."""
        seg_size = allocation_size(rsize)
        limit = self._fraction_limit
        if limit is not None and self._reserved() + seg_size > limit:
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
        P = self._ps[pool]
        self._bump(P, _S, _TS, _PS, 1)
        self._bump(P, _SB, _TSB, _PSB, seg_size)
        if seg_size >= self._max_split:
            self._bump(P, _OS, _TOS, _POS, 1)
        self._num_device_alloc += 1
        if self._history is not None:
            self._history.append(("segment_alloc", ptr, seg_size, 0, stream.id,
                                  time.perf_counter()))
        return block

    def _release_block(self, block) -> None:
        """Give a wholly free segment back to the driver (block already off its free list)."""
        seg = self._segments.pop(block.ptr)
        self._driver.mem_free(self.device, seg.ptr)
        P = self._ps[1 if seg.small else 2]
        P[_S] -= 1
        P[_SB] -= seg.size
        if seg.size >= self._max_split:
            P[_OS] -= 1
        self._num_device_free += 1
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
        reserved = self._reserved()
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
        allocated = self._ps[1][_NB] + self._ps[2][_NB]
        reserved = self._reserved()
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
    def _raw_stats(self) -> dict:
        """All statistics (lock held), cumulative ones not yet adjusted for a reset."""
        out = {}
        pools = self._ps[1:]
        A = self._all

        def put(name, curs, tots, peaks, all_peak):
            rows = (("all", sum(curs), max(all_peak, sum(curs)), sum(tots)),
                    ("small_pool", curs[0], peaks[0], tots[0]),
                    ("large_pool", curs[1], peaks[1], tots[1]))
            for pname, c, pk, t in rows:
                prefix = f"{name}.{pname}."
                out[prefix + "current"] = c
                out[prefix + "peak"] = pk
                out[prefix + "allocated"] = t
                out[prefix + "freed"] = t - c

        def simple(name, cur_i, tot_i, peak_i):
            put(name, [P[cur_i] for P in pools], [P[tot_i] for P in pools],
                [P[peak_i] for P in pools], A[peak_i])

        simple("allocation", _N, _TN, _PN)
        simple("allocated_bytes", _NB, _TNB, _PNB)
        simple("requested_bytes", _NR, _TNR, _PNR)
        # Active = allocated + pending; its peak is at least the allocated peak.
        put("active", [P[_N] + P[_Q] for P in pools], [P[_TN] for P in pools],
            [max(P[_PA], P[_PN]) for P in pools], max(A[_PA], A[_PN]))
        put("active_bytes", [P[_NB] + P[_QB] for P in pools], [P[_TNB] for P in pools],
            [max(P[_PAB], P[_PNB]) for P in pools], max(A[_PAB], A[_PNB]))
        simple("segment", _S, _TS, _PS)
        simple("reserved_bytes", _SB, _TSB, _PSB)
        simple("inactive_split", _I, _TI, _PI)
        simple("inactive_split_bytes", _IB, _TIB, _PIB)
        for name, cur_i, tot_i, peak_i in (("oversize_allocations", _OA, _TOA, _POA),
                                           ("oversize_segments", _OS, _TOS, _POS)):
            c = sum(P[cur_i] for P in pools)
            t = sum(P[tot_i] for P in pools)
            out[name + ".current"] = c
            out[name + ".peak"] = max(A[peak_i], c)
            out[name + ".allocated"] = t
            out[name + ".freed"] = t - c
        out["num_alloc_retries"] = self._num_alloc_retries
        out["num_ooms"] = self._num_ooms
        out["num_sync_all_streams"] = self._num_sync_all_streams
        out["num_device_alloc"] = self._num_device_alloc
        out["num_device_free"] = self._num_device_free
        out["max_split_size"] = -1 if self._max_split >= _NO_LIMIT else self._max_split
        return out

    def memory_stats(self) -> dict:
        """Flat dict with PyTorch's keys (``allocated_bytes.all.current`` ...)."""
        with self._lock:
            if self._returned:
                self._take_returned_locked()
            if self._outstanding:
                self._process_events()
            out = self._raw_stats()
            for k, v in self._base.items():
                out[k] -= v
            return dict(sorted(out.items()))

    def reset_peak_stats(self) -> None:
        with self._lock:
            if self._returned:
                self._take_returned_locked()
            for P in self._ps[1:]:
                for cur, peak in ((_N, _PN), (_NB, _PNB), (_NR, _PNR), (_S, _PS), (_SB, _PSB),
                                  (_I, _PI), (_IB, _PIB), (_OA, _POA), (_OS, _POS)):
                    P[peak] = P[cur]
                P[_PA] = P[_N] + P[_Q]
                P[_PAB] = P[_NB] + P[_QB]
            A = self._all
            P1, P2 = self._ps[1], self._ps[2]
            for cur, peak in ((_N, _PN), (_NB, _PNB), (_NR, _PNR), (_S, _PS), (_SB, _PSB),
                              (_I, _PI), (_IB, _PIB), (_OA, _POA), (_OS, _POS)):
                A[peak] = P1[cur] + P2[cur]
            A[_PA] = P1[_N] + P1[_Q] + P2[_N] + P2[_Q]
            A[_PAB] = P1[_NB] + P1[_QB] + P2[_NB] + P2[_QB]

    def reset_accumulated_stats(self) -> None:
        """Zero the cumulative figures (``*.allocated``, ``*.freed``, the num_* counters)."""
        with self._lock:
            if self._returned:
                self._take_returned_locked()
            raw = self._raw_stats()
            self._base = {k: v for k, v in raw.items()
                          if k.endswith(".allocated") or k.endswith(".freed")}
            self._num_alloc_retries = 0
            self._num_ooms = 0
            self._num_sync_all_streams = 0
            self._num_device_alloc = 0
            self._num_device_free = 0

    def allocated_bytes(self) -> int:
        self._take_returned()
        return self._ps[1][_NB] + self._ps[2][_NB]

    def reserved_bytes(self) -> int:
        self._take_returned()
        return self._reserved()

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
            seg_bytes = {1: 0, 2: 0}
            alloc_bytes = {1: 0, 2: 0}
            split_free = {1: [0, 0], 2: [0, 0]}
            free_ptrs = set()
            for pool in (1, 2):
                for sid, fl in self._pools[pool].items():
                    assert fl.keys == sorted(fl.keys), "free list out of order"
                    assert len(fl.keys) == len(fl.blocks)
                    for k, b in zip(fl.keys, fl.blocks):
                        assert k == (b.size << _KEY_SHIFT | b.ptr), "stale free-list key"
                        assert b.state == _FREE and b.stream == sid
                        assert b.small == (pool == 1)
                        free_ptrs.add(b.ptr)
            for seg in self._segments.values():
                pool = 1 if seg.small else 2
                seg_bytes[pool] += seg.size
                b = seg.head
                assert b.prev is None and b.ptr == seg.ptr, "segment head is wrong"
                end = seg.ptr
                prev_free = False
                while b is not None:
                    assert b.ptr == end, "gap or overlap between blocks"
                    assert b.segment is seg
                    end += b.size
                    if b.state == _FREE:
                        assert not prev_free, "two adjacent free blocks were not merged"
                        assert b.ptr in free_ptrs, "free block missing from its free list"
                        if b.prev is not None or b.next is not None:
                            split_free[pool][0] += 1
                            split_free[pool][1] += b.size
                    elif b.state == _ALLOCATED:
                        alloc_bytes[pool] += b.size
                        assert self._allocated.get(b.ptr) is b
                    prev_free = b.state == _FREE
                    if b.next is not None:
                        assert b.next.prev is b
                    b = b.next
                assert end == seg.ptr + seg.size, "blocks do not cover the segment"
            for pool in (1, 2):
                P = self._ps[pool]
                assert P[_SB] == seg_bytes[pool], (P[_SB], seg_bytes[pool])
                assert P[_NB] == alloc_bytes[pool], (P[_NB], alloc_bytes[pool])
                assert [P[_I], P[_IB]] == split_free[pool], ([P[_I], P[_IB]], split_free[pool])
