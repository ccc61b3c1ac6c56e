import random
import sys
import threading

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tensorlib.runtime.cpu import allocator as alloc_mod
from tensorlib.runtime.cpu.allocator import (
    Block,
    HostCachingAllocator,
    round_size,
)

MiB = 1 << 20


@pytest.fixture
def a():
    return HostCachingAllocator(max_cached_bytes=1 << 30)


def _addr(arr):
    return arr.__array_interface__["data"][0]


@pytest.mark.parametrize("n", [1, 63, 64, 65, 1000, 4096, 12345, 3 * MiB + 7])
def test_alignment_and_buffer(a, n):
    b = a.allocate(n)
    assert isinstance(b, Block)
    assert b.ptr % 64 == 0 and b.ptr != 0
    assert b.buffer.dtype == np.uint8 and b.buffer.ndim == 1
    assert b.buffer.ctypes.data == b.ptr
    assert b.buffer.size == b.size >= n == b.requested
    b.buffer[:] = 7  # writable, exactly size bytes
    a.free(b)


def test_big_blocks_start_half_a_page_in(a):
    """From HALF_PAGE_MIN bytes a block starts 2048 bytes into a page: away from NumPy's large
    arrays (16 bytes into theirs) in both directions, where glibc's memmove stalls on 4K
    aliasing (a destination 16 bytes past its source modulo 4096 copied 400 KB 15x slower)."""
    from tensorlib.runtime.cpu.allocator import HALF_PAGE_MIN
    blocks = [a.allocate(n) for n in (HALF_PAGE_MIN - 4096, HALF_PAGE_MIN, 400_000,
                                      3 * MiB + 7)]
    assert blocks[0].ptr % 4096 in range(0, 4096, 64)      # small: 64-aligned only
    for b in blocks[1:]:
        assert b.ptr % 4096 == 2048
        assert b.buffer.size == b.size and b.buffer.ctypes.data == b.ptr
        b.buffer[-1] = 1  # the whole block is addressable
    for b in blocks:
        a.free(b)


def test_reuse_same_ptr_and_hit(a):
    b = a.allocate(4096)
    ptr = b.ptr
    a.free(b)
    s = a.memory_stats()
    assert s["num_cache_misses"] == 1 and s["num_cache_hits"] == 0
    b2 = a.allocate(4000)  # same size class as 4096
    assert b2.ptr == ptr and b2 is b and b2.requested == 4000
    s = a.memory_stats()
    assert s["num_cache_hits"] == 1 and s["num_cache_misses"] == 1
    a.free(b2)


def test_lifo_reuse(a):
    x, y = a.allocate(1024), a.allocate(1024)
    a.free(x)
    a.free(y)
    assert a.allocate(1024) is y
    assert a.allocate(1024) is x


def test_different_size_class_not_reused(a):
    b = a.allocate(64)
    a.free(b)
    b2 = a.allocate(128)
    assert b2 is not b
    assert a.memory_stats()["num_cache_misses"] == 2


def test_stats_arithmetic(a):
    x = a.allocate(100)  # -> 128
    y = a.allocate(5000)  # -> 5120 (step 512)
    assert (x.size, y.size) == (128, 5120)
    s = a.memory_stats()
    assert s["allocated_bytes.current"] == 5248
    assert s["allocated_bytes.peak"] == 5248
    assert s["reserved_bytes.current"] == 5248
    assert s["requested_bytes.current"] == 5100
    assert s["allocation.current"] == 2 and s["allocation.peak"] == 2
    a.free(y)
    s = a.memory_stats()
    assert s["allocated_bytes.current"] == 128
    assert s["allocated_bytes.peak"] == 5248
    assert s["cached_bytes.current"] == 5120
    assert s["reserved_bytes.current"] == 5248
    assert s["requested_bytes.current"] == 100
    assert s["allocation.current"] == 1 and s["allocation.peak"] == 2
    assert s["num_allocs"] == 2 and s["num_frees"] == 1
    y2 = a.allocate(5100)  # hit: reserved unchanged
    s = a.memory_stats()
    assert s["reserved_bytes.current"] == s["reserved_bytes.peak"] == 5248
    assert s["cached_bytes.current"] == 0
    a.free(x)
    a.free(y2)
    a.reset_peak_stats()
    s = a.memory_stats()
    assert s["allocated_bytes.peak"] == 0
    assert s["allocation.peak"] == 0
    assert s["reserved_bytes.peak"] == 5248  # cached blocks still reserved
    a.empty_cache()
    s = a.memory_stats()
    assert s["reserved_bytes.current"] == 0 and s["num_empty_cache"] == 1
    a.reset_peak_stats()
    assert a.memory_stats()["reserved_bytes.peak"] == 0


def _waste_ok(n, size):
    return size >= n and size - n < max(64, n / 8) and (n == 0 or size % 64 == 0)


@settings(max_examples=2000, deadline=None)
@given(st.integers(min_value=0, max_value=2**28))
def test_size_class_waste_bound(n):
    size = round_size(n)
    assert _waste_ok(n, size)
    assert round_size(size) == size  # classes are fixed points


@pytest.mark.parametrize("n", [0, 1, 64, 2048, 2049, 4096, 4097, MiB, MiB + 1,
                               2**28 - 1, 2**28, 2**40 + 3])
def test_size_class_edges(n):
    assert _waste_ok(n, round_size(n))


def test_allocated_size_matches_round_size(a):
    for n in [1, 777, 2049, 70000, 3 * MiB + 1]:
        b = a.allocate(n)
        assert b.size == round_size(n)
        a.free(b)


def test_zero_size(a):
    b = a.allocate(0)
    c = a.allocate(0)
    for blk in (b, c):
        assert blk.size == 0 and blk.requested == 0
        assert blk.ptr != 0 and blk.ptr % 64 == 0
        # No byte is addressable, so where NumPy puts an empty buffer's pointer is moot.
        assert blk.buffer.size == 0 and blk.buffer.dtype == np.uint8
    assert a.memory_stats()["allocation.current"] == 2
    a.free(b)
    with pytest.raises(RuntimeError):
        a.free(b)
    a.free(c)
    s = a.memory_stats()
    assert s["allocation.current"] == 0 and s["reserved_bytes.current"] == 0


def test_double_free_raises(a):
    b = a.allocate(1000)
    a.free(b)
    with pytest.raises(RuntimeError, match="double free"):
        a.free(b)
    s = a.memory_stats()
    assert s["num_frees"] == 1 and s["cached_bytes.current"] == b.size
    # pool not corrupted: only one copy of the block is handed out
    b1 = a.allocate(1000)
    b2 = a.allocate(1000)
    assert b1 is b and b2 is not b
    a.free(b1)
    a.free(b2)


def test_free_foreign_block_rejected(a):
    other = HostCachingAllocator(max_cached_bytes=1 << 20)
    b = other.allocate(100)
    with pytest.raises(ValueError):
        a.free(b)
    other.free(b)


def test_cache_cap_constructor():
    a = HostCachingAllocator(max_cached_bytes=8192)
    assert a.max_cached_bytes == 8192
    small = a.allocate(4096)
    big = a.allocate(MiB)
    a.free(small)  # fits under the cap: cached
    assert a.memory_stats()["cached_bytes.current"] == 4096
    a.free(big)  # would exceed the cap: released
    s = a.memory_stats()
    assert s["cached_bytes.current"] == 4096
    assert s["reserved_bytes.current"] == 4096
    assert s["allocated_bytes.current"] == 0
    assert big.buffer is None  # references dropped
    b2 = a.allocate(MiB)
    assert a.memory_stats()["num_cache_misses"] == 3
    a.free(b2)


def test_cache_cap_setter_trims():
    a = HostCachingAllocator(max_cached_bytes=1 << 30)
    bs = [a.allocate(4096) for _ in range(4)]
    for b in bs:
        a.free(b)
    assert a.memory_stats()["cached_bytes.current"] == 4 * 4096
    a.max_cached_bytes = 4096
    assert a.memory_stats()["cached_bytes.current"] == 4096


def test_cache_cap_env(monkeypatch):
    monkeypatch.setenv("TENSORLIB_CPU_CACHE_LIMIT", "12345")
    assert HostCachingAllocator().max_cached_bytes == 12345
    assert HostCachingAllocator(max_cached_bytes=7).max_cached_bytes == 7
    monkeypatch.setenv("TENSORLIB_CPU_CACHE_LIMIT", "garbage")
    with pytest.warns(RuntimeWarning):
        cap = HostCachingAllocator().max_cached_bytes
    assert 0 < cap <= 8 << 30
    monkeypatch.delenv("TENSORLIB_CPU_CACHE_LIMIT")
    assert 0 < HostCachingAllocator().max_cached_bytes <= 8 << 30


def test_empty_cache(a):
    bs = [a.allocate(n) for n in (100, 5000, MiB)]
    for b in bs:
        a.free(b)
    s = a.memory_stats()
    assert s["cached_bytes.current"] == sum(b.size for b in bs)
    a.empty_cache()
    s = a.memory_stats()
    assert s["cached_bytes.current"] == 0
    assert s["reserved_bytes.current"] == 0
    assert s["num_empty_cache"] == 1
    b = a.allocate(100)
    assert b not in bs
    assert a.memory_stats()["num_cache_misses"] == 4
    a.free(b)


class FakeEvent:
    def __init__(self):
        self.done = False
        self.queries = 0

    def query(self):
        self.queries += 1
        return self.done


def test_deferred_free(a):
    b = a.allocate(4096)
    ev = FakeEvent()
    b.pending.append(ev)
    a.free(b)
    s = a.memory_stats()
    assert s["num_deferred_frees.current"] == 1
    assert s["cached_bytes.current"] == 0
    assert s["allocated_bytes.current"] == 4096  # still in use by the "stream"
    with pytest.raises(RuntimeError):
        a.free(b)  # double free detected while deferred
    b2 = a.allocate(4096)  # event incomplete: must not hand out b
    assert b2 is not b
    assert a.memory_stats()["num_deferred_frees.current"] == 1
    ev.done = True
    b3 = a.allocate(4096)  # deferred list re-examined first -> reuse b
    assert b3 is b and b.pending == []
    s = a.memory_stats()
    assert s["num_deferred_frees.current"] == 0
    n = ev.queries
    a.free(b3)
    a.free(b2)
    assert ev.queries == n  # pending cleared, not re-queried
    assert a.memory_stats()["allocated_bytes.current"] == 0


def test_free_with_completed_event_goes_straight_to_cache(a):
    b = a.allocate(256)
    ev = FakeEvent()
    ev.done = True
    b.pending.append(ev)
    a.free(b)
    s = a.memory_stats()
    assert s["num_deferred_frees.current"] == 0
    assert s["cached_bytes.current"] == 256
    assert b.pending == []


def test_empty_cache_processes_deferred(a):
    b = a.allocate(256)
    ev = FakeEvent()
    b.pending.append(ev)
    a.free(b)
    ev.done = True
    a.empty_cache()
    s = a.memory_stats()
    assert s["allocated_bytes.current"] == 0 and s["reserved_bytes.current"] == 0


@pytest.mark.parametrize("sizes", ["random", "repeated"])
def test_threads_no_leak(sizes):
    """Eight threads allocating and freeing at once, thread switches forced mid-operation:
    random sizes, and a few repeated ones (frees handed back to the next request without the
    lock, taken in by other threads' locked calls meanwhile)."""
    a = HostCachingAllocator(max_cached_bytes=64 * MiB)
    errors = []

    def worker(seed):
        rng = random.Random(seed)
        live = []
        try:
            for _ in range(2000):
                if live and rng.random() < 0.5:
                    b = live.pop(rng.randrange(len(live)))
                    assert b.in_use
                    if b.size:
                        assert b.buffer[0] == seed and b.buffer[-1] == seed
                    a.free(b)
                else:
                    n = (rng.choice([0, 4000, 4000, 100, 5 * MiB]) if sizes == "repeated" else
                         rng.choice([0, rng.randrange(1, 4096), rng.randrange(4096, 1 << 18)]))
                    b = a.allocate(n)
                    if n:
                        # detects two threads receiving the same block
                        b.buffer[0] = b.buffer[-1] = seed
                    live.append(b)
            for b in live:
                a.free(b)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=worker, args=(i + 1,)) for i in range(8)]
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # force frequent thread switches mid-operation
    try:
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert not errors, errors
    s = a.memory_stats()
    assert s["allocated_bytes.current"] == 0
    assert s["requested_bytes.current"] == 0
    assert s["allocation.current"] == 0
    assert s["num_allocs"] == s["num_frees"]
    assert s["num_cache_hits"] + s["num_cache_misses"] <= s["num_allocs"]
    assert s["reserved_bytes.current"] == s["cached_bytes.current"] <= 64 * MiB
    a.empty_cache()
    assert a.memory_stats()["reserved_bytes.current"] == 0


@pytest.mark.parametrize("bad", [1.0, "10", None, [1], True, 2.5])
def test_bad_nbytes_type(a, bad):
    with pytest.raises(TypeError, match="nbytes"):
        a.allocate(bad)


@pytest.mark.parametrize("bad", [-1, -(2**40), np.int64(-5)])
def test_bad_nbytes_value(a, bad):
    with pytest.raises(ValueError, match=str(int(bad))):
        a.allocate(bad)


def test_numpy_integer_nbytes_accepted(a):
    b = a.allocate(np.int64(100))
    assert b.requested == 100 and type(b.requested) is int
    a.free(b)


def test_oom_empties_cache_then_raises(a, monkeypatch):
    cached = a.allocate(MiB)
    a.free(cached)
    calls = []
    real = alloc_mod._alloc_raw

    def failing(size):
        calls.append(size)
        raise MemoryError

    monkeypatch.setattr(alloc_mod, "_alloc_raw", failing)
    with pytest.raises(MemoryError, match=r"5000000 bytes.*MiB"):
        a.allocate(5_000_000)
    assert len(calls) == 2  # retried once after empty_cache
    s = a.memory_stats()
    assert s["num_empty_cache"] == 1 and s["cached_bytes.current"] == 0

    # succeeds on the retry after emptying the cache
    state = {"n": 0}

    def fail_once(size):
        state["n"] += 1
        if state["n"] == 1:
            raise MemoryError
        return real(size)

    monkeypatch.setattr(alloc_mod, "_alloc_raw", fail_once)
    b = a.allocate(5_000_000)
    assert b.size >= 5_000_000 and a.memory_stats()["num_empty_cache"] == 2
    a.free(b)


def test_module_level_functions():
    s = alloc_mod.memory_stats()
    for key in ["allocated_bytes.current", "allocated_bytes.peak",
                "reserved_bytes.current", "reserved_bytes.peak",
                "requested_bytes.current", "allocation.current",
                "allocation.peak", "num_allocs", "num_frees",
                "num_cache_hits", "num_cache_misses",
                "cached_bytes.current", "num_empty_cache"]:
        assert key in s
    b = alloc_mod.host_allocator.allocate(1000)
    alloc_mod.host_allocator.free(b)
    alloc_mod.empty_cache()
    alloc_mod.reset_peak_stats()
    assert alloc_mod.memory_stats()["cached_bytes.current"] == 0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("aaffs"), st.sampled_from([0, 1, 100, 4000, 4096,
                                                                    5000, 3 * MiB])),
                max_size=40))
def test_stats_match_a_model_of_live_blocks(ops):
    """Every statistic equals what the live blocks say, whichever way a free went (queued and
    taken in later, handed out again to the next same-size request, or taken in at once).
    Statistics are read only at "s" steps: reading them takes the queued frees in."""
    a = HostCachingAllocator(max_cached_bytes=1 << 30)
    live, peak_bytes, peak_count, n_allocs, n_frees = [], 0, 0, 0, 0
    for kind, n in ops:
        if kind == "a" or (kind == "f" and not live):
            live.append(a.allocate(n))
            n_allocs += 1
        elif kind == "f":
            a.free(live.pop(n % len(live)))
            n_frees += 1
        assert len({b.ptr for b in live if b.size}) == len([b for b in live if b.size])
        peak_bytes = max(peak_bytes, sum(b.size for b in live))
        peak_count = max(peak_count, len(live))
        if kind != "s":
            continue
        s = a.memory_stats()
        assert s["allocated_bytes.current"] == sum(b.size for b in live)
        assert s["requested_bytes.current"] == sum(b.requested for b in live)
        assert s["allocated_bytes.peak"] == peak_bytes
        assert s["allocation.current"] == len(live) and s["allocation.peak"] == peak_count
        assert (s["num_allocs"], s["num_frees"]) == (n_allocs, n_frees)
        assert s["reserved_bytes.current"] == s["allocated_bytes.current"] + s["cached_bytes.current"]


def test_queued_free_is_handed_to_the_next_same_request(a):
    x = a.allocate(4000)
    for _ in range(3):
        a.free(x)
        assert a.allocate(4000) is x and x.in_use  # handed back without the lock
    s = a.memory_stats()
    assert (s["num_allocs"], s["num_frees"], s["num_cache_hits"]) == (4, 3, 3)
    assert s["allocation.current"] == 1 and s["allocation.peak"] == 1
    assert s["allocated_bytes.peak"] == s["allocated_bytes.current"] == x.size
    assert s["requested_bytes.current"] == 4000 and s["cached_bytes.current"] == 0
    a.free(x)
    assert a.memory_stats()["num_frees"] == 4  # and the counts go on from there


def test_a_temporary_and_a_result_freed_in_turn_are_both_handed_back(a):
    # x - x.mean(...) in a loop: the temporary (100 B) then the result (4000 B) are freed and
    # asked for again in that order: the one before the newest is handed back too
    t, r = a.allocate(100), a.allocate(4000)
    lock = a._lock
    acquired = []

    class Counting:  # the allocator's lock, counting who takes it
        def acquire(self, *args):
            acquired.append(1)
            return lock.acquire(*args)

        def release(self):
            lock.release()

        def __enter__(self):
            self.acquire()

        def __exit__(self, *exc):
            self.release()

    a._lock = Counting()
    for _ in range(3):
        a.free(t)
        a.free(r)
        assert a.allocate(100) is t and a.allocate(4000) is r
    assert not acquired  # handed back, not taken in under the lock and found in the cache
    a._lock = lock
    s = a.memory_stats()
    assert (s["num_allocs"], s["num_frees"], s["num_cache_hits"]) == (8, 6, 6)
    assert s["allocation.current"] == 2 and s["allocation.peak"] == 2
    a.free(r)
    a.free(t)
    z = a.allocate(64)  # neither of the two newest: both stay queued, in order
    assert z is not t and z is not r
    assert a.allocate(4000) is r  # (taken in by z's locked allocation: a cache hit now)
    assert a.memory_stats()["allocation.current"] == 2


def test_queued_free_is_reused_by_the_next_same_size_request(a):
    x = a.allocate(4000)
    a.free(x)
    y = a.allocate(4050)  # same size class: the queued block itself, no miss
    assert y is x and y.in_use and y.requested == 4050
    s = a.memory_stats()
    assert (s["num_cache_misses"], s["num_cache_hits"], s["num_frees"]) == (1, 1, 1)
    assert s["requested_bytes.current"] == 4050 and s["allocated_bytes.current"] == x.size
    a.free(y)
    with pytest.raises(RuntimeError, match="double free"):
        a.free(y)  # queued frees still catch a second free


def test_over_the_cap_memory_goes_back_when_freed():
    a = HostCachingAllocator(max_cached_bytes=0)
    small, big = a.allocate(1000), a.allocate(alloc_mod.QUEUED_FREE_MAX + 1)
    a.free(big)  # taken in at once: over the cap, its memory is dropped now
    assert big.buffer is None
    a.free(small)  # queued; the next call that reads the cache takes it in
    s = a.memory_stats()
    assert s["reserved_bytes.current"] == 0 and s["cached_bytes.current"] == 0
    assert small.buffer is None
