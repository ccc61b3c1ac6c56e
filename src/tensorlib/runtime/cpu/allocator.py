"""Caching host (CPU) allocator for tensorlib storage.

Freed blocks are kept in per-size-class free lists and handed out again, so
allocating ops reuse already-faulted pages instead of paying NumPy's page-fault
cost on fresh memory every time.

Size classes (see ``round_size``):
  * 0 bytes            -> 0 (blocks share one static, 64-aligned empty buffer)
  * 1 .. 2048 bytes    -> next multiple of 64 (waste < 64 bytes)
  * n > 2048 bytes     -> next multiple of 2**(k-3), where 2**k <= n < 2**(k+1),
                          i.e. 1/8 of the next lower power of two
                          (waste < n/8, i.e. < 12.5%; always a multiple of 256)
So for every n: size >= n and size - n < max(64, n / 8).

Only the standard library and NumPy are imported so the module works standalone.
"""

from __future__ import annotations

import itertools
import os
import threading
import warnings
from collections import deque

import numpy as np

from ..host_stats import HostAllocatorStats

__all__ = [
    "Block",
    "HostCachingAllocator",
    "host_allocator",
    "round_size",
    "memory_stats",
    "empty_cache",
    "reset_peak_stats",
]

ALIGNMENT = 64
SMALL_LIMIT = 2048  # up to here: multiples of 64; above: 8 classes per power of two
# Freed blocks up to this size are queued without the lock (see free()); bigger ones are taken
# in at once, so that memory over the cache cap goes back to the system when it is freed.
QUEUED_FREE_MAX = 1 << 21
_ENV_CACHE_LIMIT = "TENSORLIB_CPU_CACHE_LIMIT"
_DEFAULT_CACHE_CAP = 8 << 30


def round_size(nbytes: int) -> int:
    """Rounded (reserved) size for a request of ``nbytes`` bytes."""
    nbytes = _check_nbytes(nbytes)
    if nbytes > SMALL_LIMIT:
        step = 1 << (nbytes.bit_length() - 4)
        return (nbytes + step - 1) & -step
    return (nbytes + 63) & -64


def _check_nbytes(nbytes) -> int:
    # bool is an int subclass but almost certainly a bug here.
    if isinstance(nbytes, bool) or not isinstance(nbytes, (int, np.integer)):
        raise TypeError(
            f"nbytes must be a non-negative int, got {nbytes!r} "
            f"(type {type(nbytes).__name__})"
        )
    nbytes = int(nbytes)
    if nbytes < 0:
        raise ValueError(f"nbytes must be a non-negative int, got {nbytes!r}")
    return nbytes


def _fmt_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n} B" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024.0
    return f"{n} B"  # unreachable


# Blocks from this size start half a page into a page. A copy or loop whose destination lies
# a small distance past its source modulo 4096 stalls on 4K aliasing (a load matches the low
# address bits of a store still in flight): glibc's memmove of 400 KB took 1.25-1.5x as long
# 48 bytes past, 15x at 16 bytes (concat of two NumPy-born 1e5 float32 halves 6-9x NumPy's
# time), on a Zen 3 VM. NumPy's large arrays sit 16 bytes into a page (glibc's mmap chunk
# header): half a page from them is safe both ways, and blocks among themselves are whole
# pages apart.
HALF_PAGE_MIN = 1 << 16
_PAGE = 4096


def _alloc_raw(size: int):
    """Fresh 64-aligned memory (from HALF_PAGE_MIN bytes: starting half a page into a page):
    returns (raw_array, ptr, buffer).

    Module-level so tests can substitute it to simulate out-of-memory.
    """
    align, phase = (ALIGNMENT, 0) if size < HALF_PAGE_MIN else (_PAGE, _PAGE // 2)
    raw = np.empty(size + align + phase, dtype=np.uint8)
    addr = raw.ctypes.data
    off = ((-addr) & (align - 1)) + phase
    return raw, addr + off, raw[off:off + size]


# Shared backing for all zero-size blocks: ptr must be a valid, non-zero,
# 64-aligned address even though no bytes are addressable.
_EMPTY_RAW, _EMPTY_PTR, _EMPTY_BUF = _alloc_raw(0)


def _default_cache_cap() -> int:
    try:
        phys = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return _DEFAULT_CACHE_CAP
    if phys <= 0:
        return _DEFAULT_CACHE_CAP
    return min(phys // 4, _DEFAULT_CACHE_CAP)


def _cache_cap_from_env():
    val = os.environ.get(_ENV_CACHE_LIMIT)
    if val is None or not val.strip():
        return None
    try:
        cap = int(float(val)) if any(c in val for c in ".eE") else int(val, 0)
        if cap < 0:
            raise ValueError
        return cap
    except ValueError:
        # A bad env var must not make `import tensorlib` fail.
        warnings.warn(
            f"ignoring invalid {_ENV_CACHE_LIMIT}={val!r} (expected bytes >= 0)",
            RuntimeWarning,
            stacklevel=3,
        )
        return None


def _drop(blocks) -> None:
    """Give the memory of blocks evicted from the cache back to the system."""
    for b in blocks:
        b.buffer = None
        b._raw = None


class Block:
    """A piece of host memory handed out by ``HostCachingAllocator``.

    ``buffer`` is a 1-D uint8 array viewing exactly [ptr, ptr + size).
    ``pending`` holds event-like objects (``.query() -> bool``); while any is
    incomplete a freed block is deferred instead of being reused.
    """

    __slots__ = ("ptr", "size", "requested", "buffer", "in_use", "pending",
                 "_raw", "_owner")

    def __init__(self, owner, raw, ptr, size, requested, buffer):
        self.ptr = ptr
        self.size = size
        self.requested = requested
        self.buffer = buffer
        self.in_use = True
        self.pending = []
        self._raw = raw  # keeps the over-allocated array alive
        self._owner = owner

    def __repr__(self):
        return (f"Block(ptr=0x{self.ptr:x}, size={self.size}, "
                f"requested={self.requested}, in_use={self.in_use})")


class HostCachingAllocator(HostAllocatorStats):
    """Thread-safe caching allocator for CPU tensor storage."""

    def __init__(self, max_cached_bytes: int | None = None):
        if max_cached_bytes is None:
            max_cached_bytes = _cache_cap_from_env()
        if max_cached_bytes is None:
            max_cached_bytes = _default_cache_cap()
        self._max_cached = _check_nbytes(max_cached_bytes)
        self._lock = threading.Lock()
        self._pool: dict[int, list[Block]] = {}  # size -> LIFO free list
        self._deferred: list[Block] = []  # freed but with pending events
        self._returned: deque[Block] = deque()  # freed, not taken in yet (see free())
        # (an attribute, not the global: finalizers run at interpreter exit after module
        # globals may have been cleared)
        self._queued_free_max = QUEUED_FREE_MAX
        # allocate()'s lock-free hand-backs of a queued block: counted by an atomic next(),
        # added to the counts by _take_returned_locked
        self._handoffs = itertools.count()
        self._handoff_reads = 0
        self._handoffs_counted = 0
        # Stats (runtime/host_stats.py; cached = reserved - allocated).
        self._init_stats()
        self._requested = 0
        self._misses = 0
        self._empties = 0  # zero-byte allocations: neither hits nor misses
        self._num_empty_cache = 0

    # -- configuration ---------------------------------------------------
    @property
    def max_cached_bytes(self) -> int:
        return self._max_cached

    @max_cached_bytes.setter
    def max_cached_bytes(self, value: int) -> None:
        value = _check_nbytes(value)
        self._drain_returned()
        with self._lock:
            self._max_cached = value
            dropped = self._trim_locked(value)
        del dropped  # memory returned outside the lock

    # -- hot path ----------------------------------------------------------
    def allocate(self, nbytes: int) -> Block:
        if type(nbytes) is not int or nbytes < 0:
            nbytes = _check_nbytes(nbytes)
        if not nbytes:
            return self._allocate_empty()
        returned = self._returned
        if returned:
            try:
                block = returned.pop()  # the newest free (cache-hot)
            except IndexError:  # another thread took it
                block = None
            if block is not None and (block.requested != nbytes or block.pending):
                # The one before it: an op's temporary and its result are freed in turn and
                # asked for again in turn (x - x.mean(1, keepdims=True) in a loop). Pops and
                # appends are atomic; a block another thread pushed meanwhile only changes
                # the order of free blocks.
                newest = block
                try:
                    block = returned.pop()
                except IndexError:
                    block = None
                if block is not None and (block.requested != nbytes or block.pending):
                    returned.append(block)
                    block = None
                returned.append(newest)
            if block is not None:
                # Freed and asked for again at once (an op's result dropped before the next
                # op's: the common case). No lock: the queued free was never counted, so
                # allocated and requested bytes, blocks in use and the peaks stand as they
                # are; the count (one free, one allocation) is an atomic next().
                block.in_use = True
                next(self._handoffs)
                return block
        # Inlined round_size(): a function call is a noticeable share of the
        # hot path's budget.
        if nbytes > SMALL_LIMIT:
            step = 1 << (nbytes.bit_length() - 4)
            size = (nbytes + step - 1) & -step
        else:
            size = (nbytes + 63) & -64
        if self._deferred:  # (a racy read is fine: a hint to look)
            self._process_deferred()
        # acquire/release rather than `with`: measurably cheaper on this hot path. Cache hits
        # and cached bytes are derived (num_allocs - misses - empties, reserved - allocated).
        lock = self._lock
        lock.acquire()
        try:
            dropped = self._take_returned_locked() if returned else None
            lst = self._pool.get(size)
            if lst:
                block = lst.pop()  # LIFO: most recently freed is cache-hot
                block.requested = nbytes
                block.in_use = True
                self._requested += nbytes
                a = self._allocated + size
                self._allocated = a
                if a > self._allocated_peak:
                    self._allocated_peak = a
                n = self._num_allocs + 1
                self._num_allocs = n
                n -= self._num_frees
                if n > self._alloc_peak:
                    self._alloc_peak = n
            else:
                block = None
        finally:
            lock.release()
        if dropped:
            _drop(dropped)  # outside the lock: munmap is slow
        if block is not None:
            return block  # reserved is unchanged on a hit
        return self._allocate_fresh(nbytes, size)

    def free(self, block: Block) -> None:
        """Hand ``block`` back. Never waits for a lock: Storage.__del__ calls this from
        finalizers, which the cyclic GC (or a tracer, a signal) may run at any bytecode, also
        while this very thread holds the lock inside :meth:`allocate`. A block of at most
        QUEUED_FREE_MAX bytes without pending events is queued and the next locked call takes
        it in; a bigger one is taken in at once when the lock is free, else queued too."""
        if block._owner is not self:
            raise ValueError("free(): block was not allocated by this allocator")
        if not block.in_use:
            raise RuntimeError(f"free(): double free of {block!r}")
        block.in_use = False  # not in any free list yet: no locked code reads it
        pending = block.pending
        if pending:
            if all(e.query() for e in pending):  # lock-free queries (Mark.query)
                pending.clear()  # done: don't re-query when the block is reused
        elif block.size <= self._queued_free_max:
            # No lock and no bookkeeping here (a large share of a small op's cost): the next
            # allocation takes the block in, or hands it out again at once when it asks for
            # its size; every statistic and cache call takes the queue in first.
            self._returned.append(block)  # atomic under the GIL
            return
        lock = self._lock
        if not lock.acquire(False):  # held by another thread, or by this one under a finalizer
            self._returned.append(block)  # atomic under the GIL
            return
        try:
            dropped = self._take_returned_locked() if self._returned else None
            if block.pending:
                self._deferred.append(block)
                return
            if self._release_locked(block):
                return
        finally:
            lock.release()
            if dropped:
                _drop(dropped)  # outside the lock: munmap is slow
        _drop((block,))  # over the cache cap

    def _take_in_locked(self, block: Block) -> bool:
        """A freed block joins the deferred list (pending events) or the cache; False when it
        is over the cache cap and the caller must drop its memory."""
        if block.pending:
            self._deferred.append(block)
            return True
        return self._release_locked(block)

    def _drain_returned(self) -> None:
        """Take in queued frees (every public locked call starts with this, so statistics
        never lag behind a free)."""
        with self._lock:
            dropped = self._take_returned_locked()
        _drop(dropped)

    def _take_returned_locked(self) -> list:
        """Take in the blocks that :meth:`free` queued; returns those to drop. Counts the
        lock-free hand-backs of :meth:`allocate` first (each is one free and one allocation)."""
        # _handoffs has been advanced once per hand-back and once per call here
        n = next(self._handoffs) - self._handoff_reads
        self._handoff_reads += 1
        if n != self._handoffs_counted:
            new = n - self._handoffs_counted
            self._handoffs_counted = n
            self._num_allocs += new
            self._num_frees += new
        dropped = []
        returned = self._returned
        while True:
            # (allocate's lock-free hand-back pops from the other end meanwhile: the queue
            # can empty between a test and a pop, so the pop itself is the test)
            try:
                block = returned.popleft()
            except IndexError:
                break
            if not self._take_in_locked(block):
                dropped.append(block)
        return dropped

    # -- slow paths --------------------------------------------------------
    def _allocate_empty(self) -> Block:
        block = Block(self, _EMPTY_RAW, _EMPTY_PTR, 0, 0, _EMPTY_BUF)
        with self._lock:
            # queued frees first (here and in _allocate_fresh): the peaks must not count a
            # block that is already free
            dropped = self._take_returned_locked() if self._returned else None
            self._empties += 1
            n = self._num_allocs + 1
            self._num_allocs = n
            n -= self._num_frees
            if n > self._alloc_peak:
                self._alloc_peak = n
        if dropped:
            _drop(dropped)
        return block

    def _allocate_fresh(self, nbytes: int, size: int) -> Block:
        try:
            raw, ptr, buf = _alloc_raw(size)
        except MemoryError:
            self.empty_cache()
            try:
                raw, ptr, buf = _alloc_raw(size)
            except MemoryError:
                with self._lock:
                    allocated = self._allocated
                    reserved = self._reserved
                raise MemoryError(
                    f"HostCachingAllocator: out of memory trying to allocate "
                    f"{nbytes} bytes ({_fmt_bytes(nbytes)}; rounded to "
                    f"{_fmt_bytes(size)}); currently allocated "
                    f"{allocated} bytes ({_fmt_bytes(allocated)}), reserved "
                    f"{reserved} bytes ({_fmt_bytes(reserved)})"
                ) from None
        block = Block(self, raw, ptr, size, nbytes, buf)
        with self._lock:
            dropped = self._take_returned_locked() if self._returned else None
            self._misses += 1
            self._requested += nbytes
            a = self._allocated + size
            self._allocated = a
            if a > self._allocated_peak:
                self._allocated_peak = a
            r = self._reserved + size
            self._reserved = r
            if r > self._reserved_peak:
                self._reserved_peak = r
            n = self._num_allocs + 1
            self._num_allocs = n
            n -= self._num_frees
            if n > self._alloc_peak:
                self._alloc_peak = n
        if dropped:
            _drop(dropped)
        return block

    def _release_locked(self, block: Block) -> bool:
        """Account a block as freed; cache it if under the cap.

        Returns False when the caller must drop the block's memory.
        """
        size = block.size
        self._allocated -= size
        self._requested -= block.requested
        self._num_frees += 1
        if size == 0:
            return True  # shared static buffer: nothing to cache or drop
        if self._reserved - self._allocated <= self._max_cached:  # cached, with this block
            lst = self._pool.get(size)
            if lst is None:
                self._pool[size] = [block]
            else:
                lst.append(block)
            return True
        self._reserved -= size
        return False

    def _process_deferred(self) -> None:
        with self._lock:
            waiting, self._deferred = self._deferred, []
        if not waiting:
            return
        ready, still = [], []
        for b in waiting:
            (ready if all(e.query() for e in b.pending) else still).append(b)
        dropped = []
        with self._lock:
            self._deferred.extend(still)
            for b in ready:
                b.pending = []
                if not self._release_locked(b):
                    dropped.append(b)
        _drop(dropped)

    def _trim_locked(self, cap: int) -> list:
        """Evict cached blocks (largest sizes, oldest first) until cached <= cap."""
        dropped = []
        cached = self._cached_locked()
        if cached <= cap:
            return dropped
        for size in sorted(self._pool, reverse=True):  # biggest first
            lst = self._pool[size]
            while lst and cached > cap:
                dropped.append(lst.pop(0))
                cached -= size
                self._reserved -= size
            if not lst:
                del self._pool[size]
            if cached <= cap:
                break
        return dropped

    def _cached_locked(self) -> int:
        """Bytes in free cached blocks (deferred blocks count as allocated)."""
        return self._reserved - self._allocated

    # -- maintenance / introspection ----------------------------------------
    def empty_cache(self) -> None:
        """Release every cached free block (and completed deferred ones)."""
        self._drain_returned()
        if self._deferred:
            self._process_deferred()
        with self._lock:
            old, self._pool = self._pool, {}
            self._reserved = self._allocated
            self._num_empty_cache += 1
        for lst in old.values():
            _drop(lst)
        del old

    def memory_stats(self) -> dict:
        self._drain_returned()
        with self._lock:
            stats = self._stats_locked()
            stats.update({
                "requested_bytes.current": self._requested,
                "num_cache_hits": self._num_allocs - self._misses - self._empties,
                "num_cache_misses": self._misses,
                "cached_bytes.current": self._cached_locked(),
                "num_empty_cache": self._num_empty_cache,
            })
            return stats

    def _take_returned(self) -> None:  # (reset_peak_stats, runtime/host_stats.py)
        self._drain_returned()


host_allocator = HostCachingAllocator()


def memory_stats() -> dict:
    return host_allocator.memory_stats()


def empty_cache() -> None:
    host_allocator.empty_cache()


def reset_peak_stats() -> None:
    host_allocator.reset_peak_stats()
