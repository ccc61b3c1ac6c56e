"""CUDA caching allocator on the interpret driver (constructed directly: no global state)."""
import ctypes
import random
import threading
import time

import pytest
from hypothesis import given, settings, strategies as st

from tensorlib.runtime.cuda.allocator import (AllocatorConfig, CUDACachingAllocator,
                                              allocation_size, history_to_trace, replay_trace,
                                              round_size)
from tensorlib.runtime.cuda.driver import CudaError, OutOfMemoryError
from tensorlib.runtime.cuda.interpret import InterpretDriver

KiB = 1 << 10
MiB = 1 << 20


def make(memory=1 << 30, conf=None):
    d = InterpretDriver(memory=memory)
    a = CUDACachingAllocator(d, 0, config=AllocatorConfig.parse(conf))
    return d, a, d.default_stream(0)


@pytest.fixture
def env():
    d, a, s = make()
    yield d, a, s
    a.check_invariants()
    d.shutdown()


def snap_blocks(a):
    return [[(b["size"], b["state"]) for b in seg["blocks"]] for seg in a.snapshot()]


# ---- sizes and pools ---------------------------------------------------------------------------
@pytest.mark.parametrize("n,expected", [(1, 512), (511, 512), (512, 512), (513, 1024),
                                        (4097, 4608), (MiB, MiB), (MiB + 1, MiB + 512)])
def test_round_size(n, expected):
    assert round_size(n) == expected


@pytest.mark.parametrize("n,expected", [(512, 2 * MiB), (MiB, 2 * MiB), (MiB + 512, 20 * MiB),
                                        (10 * MiB - 512, 20 * MiB), (10 * MiB, 10 * MiB),
                                        (11 * MiB + 512, 12 * MiB), (100 * MiB, 100 * MiB)])
def test_allocation_size(n, expected):
    assert allocation_size(n) == expected


def test_roundup_power2_divisions():
    assert round_size(1200 * KiB, 4) == 1280 * KiB   # steps of 256 KiB between 1 and 2 MiB
    assert round_size(MiB, 4) == MiB
    assert round_size(1000, 4) == 1024


@pytest.mark.parametrize("request_size,seg_size,seg_type", [
    (1, 2 * MiB, "small"), (MiB, 2 * MiB, "small"), (MiB + 1, 20 * MiB, "large"),
    (9 * MiB, 20 * MiB, "large"), (10 * MiB, 10 * MiB, "large"), (13 * MiB, 14 * MiB, "large")])
def test_pool_and_segment_sizes(env, request_size, seg_size, seg_type):
    d, a, s = env
    b = a.malloc(request_size, s)
    [seg] = a.snapshot()
    assert seg["total_size"] == seg_size and seg["segment_type"] == seg_type
    assert seg["address"] == b.ptr and seg["stream"] == 0
    stats = a.memory_stats()
    pool = "small_pool" if seg_type == "small" else "large_pool"
    assert stats[f"segment.{pool}.current"] == 1
    assert stats[f"reserved_bytes.{pool}.current"] == seg_size
    assert stats["requested_bytes.all.current"] == request_size
    a.free(b)


def test_small_blocks_split_one_segment_and_coalesce(env):
    d, a, s = env
    x = a.malloc(1000, s)
    y = a.malloc(3000, s)
    z = a.malloc(512, s)
    assert y.ptr == x.ptr + 1024 and z.ptr == y.ptr + 3072
    assert snap_blocks(a) == [[(1024, "active_allocated"), (3072, "active_allocated"),
                               (512, "active_allocated"), (2 * MiB - 4608, "inactive")]]
    a.free(y)
    a.check_invariants()
    assert snap_blocks(a)[0][1] == (3072, "inactive")
    assert a.memory_stats()["inactive_split.all.current"] == 2
    a.free(x)  # merges with y's free block
    assert snap_blocks(a) == [[(4096, "inactive"), (512, "active_allocated"),
                               (2 * MiB - 4608, "inactive")]]
    a.free(z)  # merges both sides: one free block covering the segment
    assert snap_blocks(a) == [[(2 * MiB, "inactive")]]
    stats = a.memory_stats()
    assert stats["inactive_split.all.current"] == 0
    assert stats["inactive_split_bytes.all.current"] == 0
    assert stats["allocated_bytes.all.current"] == 0
    assert stats["reserved_bytes.all.current"] == 2 * MiB
    assert stats["segment.all.current"] == 1


def test_small_split_down_to_512_remainder(env):
    d, a, s = env
    b1 = a.malloc(MiB, s)
    b2 = a.malloc(MiB - 512, s)  # leaves exactly 512 B: still split off (>= 512)
    assert [x[0] for x in snap_blocks(a)[0]] == [MiB, MiB - 512, 512]
    b3 = a.malloc(100, s)
    assert b3.ptr == b2.ptr + MiB - 512 and b3.size == 512
    for b in (b1, b2, b3):
        a.free(b)


def test_large_split_rule(env):
    d, a, s = env
    # 20 MiB segment, request 19 MiB: remainder 1 MiB is not > 1 MiB -> not split.
    b = a.malloc(19 * MiB, s)
    assert b.size == 20 * MiB
    assert a.memory_stats()["allocated_bytes.all.current"] == 20 * MiB
    a.free(b)
    # Request 18.5 MiB: remainder 1.5 MiB > 1 MiB -> split.
    b = a.malloc(18 * MiB + 512 * KiB, s)
    assert b.size == 18 * MiB + 512 * KiB
    assert snap_blocks(a)[0][1] == (1536 * KiB, "inactive")
    a.free(b)


def test_best_fit_by_size_then_address(env):
    d, a, s = env
    blocks = [a.malloc(n, s) for n in (8 * KiB, 512, 4 * KiB, 512, 4 * KiB, 512, 16 * KiB)]
    a.free(blocks[0])  # 8 KiB free
    a.free(blocks[2])  # 4 KiB free (lower address)
    a.free(blocks[4])  # 4 KiB free (higher address)
    got = a.malloc(3 * KiB, s)
    assert got.ptr == blocks[2].ptr  # smallest fit, lowest address among equals
    got2 = a.malloc(4 * KiB, s)
    assert got2.ptr == blocks[4].ptr
    got3 = a.malloc(5 * KiB, s)
    assert got3.ptr == blocks[0].ptr  # only the 8 KiB block fits
    a.check_invariants()
    for b in (got, got2, got3, blocks[1], blocks[3], blocks[5], blocks[6]):
        a.free(b)


def test_blocks_reused_only_on_their_stream(env):
    d, a, s = env
    s2 = d.stream_create(0)
    b = a.malloc(4096, s)
    ptr = b.ptr
    a.free(b)
    other = a.malloc(4096, s2)
    assert other.ptr != ptr  # a new segment for stream s2
    assert a.memory_stats()["segment.all.current"] == 2
    again = a.malloc(4096, s)
    assert again.ptr == ptr
    assert {seg["stream"] for seg in a.snapshot()} == {0, s2.id}
    a.free(other)
    a.free(again)


def test_record_stream_defers_reuse_until_events_complete(env):
    d, a, s = env
    s2 = d.stream_create(0)
    b = a.malloc(4096, s)
    ptr = b.ptr
    d.sleep(s2, 1.0)  # s2 still "uses" the block for a second
    a.record_stream(b, s2)
    a.free(b)
    stats = a.memory_stats()
    assert stats["allocated_bytes.all.current"] == 0
    assert stats["active_bytes.all.current"] == 4096  # pending, not reusable
    assert [blk["state"] for blk in a.snapshot()[0]["blocks"]][0] == "active_pending_free"
    c = a.malloc(4096, s)
    assert c.ptr != ptr  # the pending block must not be handed out
    d.stream_synchronize(s2)
    e = a.malloc(4096, s)  # events polled at malloc: now reusable
    assert e.ptr == ptr
    assert a.memory_stats()["active_bytes.all.peak"] >= 2 * 4096
    a.free(c)
    a.free(e)


def test_pending_block_merges_both_ways_once_its_events_complete(env):
    # The one merge (_free_block) serves free() and completed events alike: a pending block is
    # never merged into by its freed neighbours, and joins both of them when its events finish.
    d, a, s = env
    s2 = d.stream_create(0)
    gate = threading.Event()
    d.launch_host_func(s2, gate.wait)  # s2 "uses" y until the gate opens
    x, y, z = a.malloc(1000, s), a.malloc(3000, s), a.malloc(512, s)
    x_ptr = x.ptr  # (merges move pointers and recycle Block objects)
    a.record_stream(y, s2)
    a.free(y)
    a.free(x)
    a.free(z)  # merges with the free tail only
    assert snap_blocks(a) == [[(1024, "inactive"), (3072, "active_pending_free"),
                               (2 * MiB - 4096, "inactive")]]
    stats = a.memory_stats()
    assert (stats["inactive_split.all.current"], stats["inactive_split_bytes.all.current"]) == \
        (2, 2 * MiB - 3072)
    a.check_invariants()
    gate.set()
    d.stream_synchronize(s2)
    assert snap_blocks(a) == [[(2 * MiB, "inactive")]]  # snapshot() polls the events
    stats = a.memory_stats()
    assert (stats["inactive_split.all.current"], stats["inactive_split_bytes.all.current"],
            stats["active_bytes.all.current"]) == (0, 0, 0)
    again = a.malloc(MiB, s)  # taken from the merged block at the segment's start
    assert again.ptr == x_ptr and a.memory_stats()["segment.all.current"] == 1
    a.free(again)


def test_record_stream_same_stream_is_noop(env):
    d, a, s = env
    b = a.malloc(100, s)
    a.record_stream(b, s)
    assert b.stream_uses is None
    a.free(b)
    assert a.memory_stats()["active.all.current"] == 0


def test_record_stream_other_device_rejected():
    d = InterpretDriver(memory=1 << 30, device_count=2)
    a = CUDACachingAllocator(d, 0, config=AllocatorConfig())
    b = a.malloc(100, d.default_stream(0))
    with pytest.raises(RuntimeError, match="cuda:0.*cuda:1"):
        a.record_stream(b, d.default_stream(1))
    a.free(b)
    d.shutdown()


# ---- OOM and retry ---------------------------------------------------------------------------
def test_oom_frees_cached_segments_and_retries():
    d, a, s = make(memory=50 * MiB)
    blocks = [a.malloc(12 * MiB, s) for _ in range(3)]
    for b in blocks:
        a.free(b)
    assert a.memory_stats()["reserved_bytes.all.current"] == 36 * MiB
    big = a.malloc(30 * MiB, s)  # 36 + 30 > 50: free the cache, then retry
    stats = a.memory_stats()
    assert stats["num_alloc_retries"] == 1 and stats["num_ooms"] == 0
    assert stats["reserved_bytes.all.current"] == 30 * MiB
    assert stats["num_device_free"] == 3
    a.free(big)
    a.check_invariants()
    d.shutdown()


def test_oom_raises_typed_error_with_figures():
    d, a, s = make(memory=50 * MiB)
    keep = a.malloc(30 * MiB, s)
    small = a.malloc(1000, s)
    with pytest.raises(OutOfMemoryError) as info:
        a.malloc(30 * MiB, s)
    err = info.value
    assert isinstance(err, RuntimeError) and isinstance(err, MemoryError)
    msg = str(err)
    assert "Tried to allocate 30.00 MiB" in msg and f"({30 * MiB} bytes" in msg
    assert f"({30 * MiB + 1024} bytes) is allocated" in msg
    assert f"({2 * MiB - 1024} bytes) is reserved by tensorlib but unallocated" in msg
    assert f"total capacity of 50.00 MiB ({50 * MiB} bytes)" in msg
    stats = a.memory_stats()
    assert stats["num_ooms"] == 1 and stats["num_alloc_retries"] == 1
    # The allocator is still consistent and usable after an OOM.
    a.check_invariants()
    a.free(small)
    a.free(keep)
    again = a.malloc(40 * MiB, s)
    a.free(again)
    d.shutdown()


def test_oom_path_synchronizes_pending_events():
    d, a, s = make(memory=30 * MiB)
    s2 = d.stream_create(0)
    b = a.malloc(20 * MiB, s)
    d.sleep(s2, 1.0)
    a.record_stream(b, s2)
    a.free(b)  # pending on s2's sleep
    c = a.malloc(25 * MiB, s)  # must wait for the events, release the segment, retry
    stats = a.memory_stats()
    assert stats["num_sync_all_streams"] == 1
    assert stats["num_ooms"] == 0
    assert d.stream_query(s2)
    a.free(c)
    a.check_invariants()
    d.shutdown()


def test_pending_block_reused_after_sync_in_oom_path():
    d, a, s = make(memory=20 * MiB)
    s2 = d.stream_create(0)
    b = a.malloc(9 * MiB, s)  # one 20 MiB segment: [b 9][keep 9][2 free]
    keep = a.malloc(9 * MiB, s)
    ptr = b.ptr
    d.sleep(s2, 1.0)
    a.record_stream(b, s2)
    a.free(b)
    # No free block fits and no room for a segment: the retry waits for b's events and
    # finds b in the pool (its segment cannot be released: `keep` lives in it).
    c = a.malloc(9 * MiB, s)
    assert c.ptr == ptr
    assert a.memory_stats()["num_alloc_retries"] == 1
    a.free(c)
    a.free(keep)
    a.check_invariants()
    d.shutdown()


def test_memory_fraction_limit():
    d, a, s = make(memory=100 * MiB)
    a.set_memory_fraction(0.25)
    b = a.malloc(20 * MiB, s)
    with pytest.raises(OutOfMemoryError, match="set_per_process_memory_fraction"):
        a.malloc(10 * MiB, s)
    a.free(b)
    with pytest.raises(ValueError, match="fraction"):
        a.set_memory_fraction(1.5)
    d.shutdown()


# ---- configuration -----------------------------------------------------------------------------
def test_config_parse():
    cfg = AllocatorConfig.parse("max_split_size_mb:64, garbage_collection_threshold:0.6,"
                                "roundup_power2_divisions:4")
    assert cfg.max_split_size == 64 * MiB
    assert cfg.garbage_collection_threshold == 0.6
    assert cfg.roundup_power2_divisions == 4
    assert AllocatorConfig.parse("").max_split_size > 1 << 60


@pytest.mark.parametrize("text,match", [
    ("max_split_size_mb:10", "must be > 20"), ("max_split_size_mb:abc", "bad value"),
    ("garbage_collection_threshold:1.5", r"\(0, 1\)"), ("nonsense:1", "unknown option"),
    ("roundup_power2_divisions:3", "power of two"), ("max_split_size_mb", "key:value"),
    ("expandable_segments:True", "not supported")])
def test_config_errors(text, match):
    with pytest.raises(ValueError, match=match):
        AllocatorConfig.parse(text)


def test_config_from_env(monkeypatch):
    monkeypatch.setenv("TENSORLIB_CUDA_ALLOC_CONF", "max_split_size_mb:128")
    d = InterpretDriver(memory=1 << 30)
    a = CUDACachingAllocator(d, 0)
    assert a.memory_stats()["max_split_size"] == 128 * MiB
    monkeypatch.setenv("TENSORLIB_CUDA_ALLOC_CONF", "bogus:1")
    with pytest.raises(ValueError, match="TENSORLIB_CUDA_ALLOC_CONF: unknown option 'bogus'"):
        CUDACachingAllocator(d, 0)


def test_max_split_size_keeps_oversize_blocks_whole():
    d, a, s = make(memory=1 << 30, conf="max_split_size_mb:40")
    big = a.malloc(64 * MiB, s)
    ptr = big.ptr
    a.free(big)
    mid = a.malloc(2 * MiB, s)  # must not carve the cached 64 MiB oversize block
    assert mid.ptr != ptr
    b42 = a.malloc(42 * MiB, s)  # 64 >= 42 + 20: too wasteful, a new segment
    assert b42.ptr != ptr
    again = a.malloc(60 * MiB, s)  # close enough: reuse, not split
    assert again.ptr == ptr and again.size == 64 * MiB
    stats = a.memory_stats()
    assert stats["oversize_allocations.current"] == 2
    assert stats["oversize_segments.current"] == 2
    for b in (mid, b42, again):
        a.free(b)
    a.check_invariants()
    d.shutdown()


def test_max_split_size_releases_oversize_blocks_before_full_flush():
    d, a, s = make(memory=80 * MiB, conf="max_split_size_mb:30")
    x = a.malloc(60 * MiB, s)
    keep = a.malloc(1000, s)
    a.free(x)
    # The cached 60 MiB block is too big to hand out for 35 MiB (60 >= 35 + 20), and
    # 60 + 2 + 35 > 80: release just that oversize block, no full flush.
    y = a.malloc(35 * MiB, s)
    assert y.ptr != x.ptr or y.size == 36 * MiB
    stats = a.memory_stats()
    assert stats["num_alloc_retries"] == 0 and stats["num_device_free"] == 1
    a.free(y)
    a.free(keep)
    d.shutdown()


def test_garbage_collection_threshold_frees_old_segments():
    d, a, s = make(memory=100 * MiB, conf="garbage_collection_threshold:0.5")
    olds = [a.malloc(12 * MiB, s) for _ in range(5)]  # 60 MiB reserved
    for b in olds:
        a.free(b)
    new = a.malloc(14 * MiB, s)  # no cached fit; reserved 60 > 50: GC before allocating
    stats = a.memory_stats()
    assert stats["num_alloc_retries"] == 0
    # Reclaims just past reserved - threshold = 10 MiB: one old 12 MiB segment.
    assert stats["num_device_free"] == 1
    assert stats["reserved_bytes.all.current"] == 60 * MiB - 12 * MiB + 14 * MiB
    a.free(new)
    a.check_invariants()
    d.shutdown()


# ---- statistics, snapshot, history -------------------------------------------------------------
def test_stats_keys_and_peaks(env):
    d, a, s = env
    stats = a.memory_stats()
    for name in ("allocation", "segment", "active", "inactive_split", "allocated_bytes",
                 "reserved_bytes", "active_bytes", "inactive_split_bytes", "requested_bytes"):
        for pool in ("all", "small_pool", "large_pool"):
            for field in ("current", "peak", "allocated", "freed"):
                assert f"{name}.{pool}.{field}" in stats
    for key in ("num_alloc_retries", "num_ooms", "num_sync_all_streams", "num_device_alloc",
                "num_device_free", "oversize_allocations.current", "max_split_size"):
        assert key in stats
    b1 = a.malloc(3 * MiB, s)
    b2 = a.malloc(1000, s)
    a.free(b1)
    stats = a.memory_stats()
    assert stats["allocated_bytes.all.peak"] == 3 * MiB + 1024
    assert stats["allocated_bytes.large_pool.peak"] == 3 * MiB
    assert stats["allocated_bytes.all.current"] == 1024
    assert stats["allocation.all.allocated"] == 2 and stats["allocation.all.freed"] == 1
    assert stats["requested_bytes.all.current"] == 1000
    a.reset_peak_stats()
    assert a.memory_stats()["allocated_bytes.all.peak"] == 1024
    a.reset_accumulated_stats()
    stats = a.memory_stats()
    assert stats["allocation.all.allocated"] == 0 and stats["allocation.all.freed"] == 0
    assert stats["num_device_alloc"] == 0
    a.free(b2)
    stats = a.memory_stats()
    assert stats["allocation.all.freed"] == 1


def test_snapshot_layout(env):
    d, a, s = env
    b = a.malloc(1000, s)
    [seg] = a.snapshot()
    for key in ("address", "total_size", "stream", "segment_type", "allocated_size", "blocks",
                "active_size", "requested_size", "device"):
        assert key in seg
    assert seg["allocated_size"] == 1024 and seg["requested_size"] == 1000
    first = seg["blocks"][0]
    assert first == {"address": b.ptr, "size": 1024, "requested_size": 1000,
                     "state": "active_allocated"}
    a.free(b)


def test_zero_size_and_double_free(env):
    d, a, s = env
    z = a.allocate(0)
    assert z.ptr == 0 and z.size == 0
    a.free(z)
    a.free(z)  # the zero block is never "freed"
    b = a.malloc(10, s)
    a.free(b)
    with pytest.raises(RuntimeError, match="double free"):
        a.free(b)
    assert not a.free_ptr(12345)


def test_allocate_gives_host_buffer_over_block(env):
    d, a, s = env
    b = a.allocate(1000)
    assert b.buffer.size == b.size == 1024
    assert b.buffer.ctypes.data == b.ptr
    b.buffer[:] = 7
    a.free(b)
    assert b.buffer is None


def test_history_and_replay(env):
    d, a, s = env
    a.record_history(True)
    rng = random.Random(0)
    live = []
    for _ in range(300):
        if live and rng.random() < 0.45:
            a.free(live.pop(rng.randrange(len(live))))
        else:
            live.append(a.malloc(rng.choice([512, 4000, 70_000, 3 * MiB, 12 * MiB]), s))
    for b in live:
        a.free(b)
    hist = a.history()
    assert {h[0] for h in hist} >= {"alloc", "free", "segment_alloc"}
    trace = history_to_trace(hist)
    peak = a.memory_stats()["allocated_bytes.all.peak"]
    d2, fresh, s2 = make()
    stats = replay_trace(fresh, trace, s2)
    assert stats["allocated_bytes.all.peak"] == peak
    assert stats["allocated_bytes.all.current"] == 0
    fresh.check_invariants()
    a.record_history(False)
    d2.shutdown()


def test_empty_cache_returns_everything(env):
    d, a, s = env
    blocks = [a.malloc(n, s) for n in (100, 5000, 3 * MiB, 15 * MiB)]
    a.free(blocks[0])
    # 2 MiB small segment (100, 5000) and one 20 MiB large one (3 MiB, then 15 MiB from its
    # remainder). Both are partly used, so empty_cache keeps them.
    a.empty_cache()
    assert a.memory_stats()["segment.all.current"] == 2
    for b in blocks[1:]:
        a.free(b)
    a.empty_cache()
    stats = a.memory_stats()
    assert stats["reserved_bytes.all.current"] == 0 and stats["segment.all.current"] == 0
    assert d.mem_get_info(0)[0] == d.mem_get_info(0)[1]  # nothing left at the driver


# ---- property test and threads -----------------------------------------------------------------
sizes = st.one_of(st.integers(1, 4096), st.integers(1, 2 * MiB), st.integers(MiB, 24 * MiB))


@settings(max_examples=40, deadline=None)
@given(ops=st.lists(st.tuples(st.booleans(), sizes, st.integers(0, 2), st.integers(0, 10 ** 6)),
                    min_size=1, max_size=60))
def test_random_alloc_free_keeps_invariants(ops):
    d, a, s = make(memory=256 * MiB)
    streams = [s, d.stream_create(0), d.stream_create(0)]
    live = []
    for is_free, size, si, pick in ops:
        if is_free and live:
            a.free(live.pop(pick % len(live)))
        else:
            try:
                live.append((a.malloc(size, streams[si])))
            except OutOfMemoryError:
                pass
        a.check_invariants()
        stats = a.memory_stats()
        assert stats["allocated_bytes.all.current"] == sum(b.size for b in live)
        assert stats["allocated_bytes.all.peak"] >= stats["allocated_bytes.all.current"]
        assert stats["reserved_bytes.all.current"] >= stats["allocated_bytes.all.current"]
    ptrs = sorted((b.ptr, b.ptr + b.size) for b in live)
    for (s0, e0), (s1, _) in zip(ptrs, ptrs[1:]):
        assert e0 <= s1  # no two live blocks overlap
    for b in live:
        a.free(b)
    a.empty_cache()
    assert a.memory_stats()["reserved_bytes.all.current"] == 0
    d.shutdown()


def test_eight_threads_no_leak():
    d, a, s = make(memory=2 << 30)
    errors = []

    def worker(seed):
        try:
            rng = random.Random(seed)
            stream = d.stream_create(0) if seed % 2 else s
            live = []
            for _ in range(400):
                if live and rng.random() < 0.5:
                    b = live.pop(rng.randrange(len(live)))
                    # Nobody else wrote into our block (interpret pointers are host memory).
                    assert ctypes.string_at(b.ptr, 1)[0] == seed
                    assert ctypes.string_at(b.ptr + b.size - 1, 1)[0] == seed
                    a.free(b)
                else:
                    n = rng.choice([1, 600, 5000, 100_000, 2 * MiB, 11 * MiB])
                    b = a.malloc(n, stream)
                    ctypes.memset(b.ptr, seed, b.size)
                    live.append(b)
                    if rng.random() < 0.1:
                        a.record_stream(b, d.stream_create(0))
            for b in live:
                a.free(b)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for i in range(1, 10):
        d.device_synchronize(0)
    a.empty_cache()
    a.check_invariants()
    stats = a.memory_stats()
    assert stats["allocated_bytes.all.current"] == 0
    assert stats["active_bytes.all.current"] == 0
    assert stats["reserved_bytes.all.current"] == 0
    assert stats["allocation.all.allocated"] == stats["allocation.all.freed"] > 0
    free, total = d.mem_get_info(0)
    assert free == total
    d.shutdown()


def test_driver_errors_are_typed():
    d = InterpretDriver(memory=MiB)
    with pytest.raises(OutOfMemoryError):
        d.mem_alloc(0, 2 * MiB)
    with pytest.raises(CudaError, match="invalid device ordinal 3"):
        d.mem_alloc(3, 10)
    with pytest.raises(CudaError, match="not a live allocation"):
        d.mem_free(0, 1234)
    with pytest.raises(ValueError, match="memory"):
        InterpretDriver(memory=-1)
    d.shutdown()


def test_interpret_stream_sticky_error():
    d = InterpretDriver(memory=MiB)
    s = d.stream_create(0)

    def boom():
        raise ZeroDivisionError("kernel fault")

    d.launch_host_func(s, boom)
    with pytest.raises(CudaError, match="ZeroDivisionError: kernel fault"):
        d.stream_synchronize(s)
    d.stream_synchronize(s)  # reported once, then cleared
    t0 = time.perf_counter()
    d.sleep(s, 0.05)
    d.stream_synchronize(s)
    assert time.perf_counter() - t0 >= 0.045
    d.shutdown()
