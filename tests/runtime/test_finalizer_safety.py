"""Finalizers never wait for a lock (issue: Storage.__del__ deadlocked inside allocate()).

The GC may run a finalizer at any bytecode, also while its own thread holds an allocator's lock.
Each allocator's ``free`` must then return at once (queueing the block) and the next locked call
must take the block in. The torture test runs tests/runtime/finalizer_torture.py in a child
process with a time limit, so a regression fails with every thread's stack instead of hanging the
suite.
"""
import os
import subprocess
import sys
import threading

import pytest

import tensorlib as tl
from tensorlib.runtime.cpu.allocator import HostCachingAllocator

HERE = os.path.dirname(__file__)


def _run_within(fn, seconds=20):
    """Run ``fn`` in a daemon thread; fail (not hang) when it does not return in time."""
    out = {}

    def body():
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised below
            out["error"] = e
    t = threading.Thread(target=body, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"{fn.__name__} did not return within {seconds} s (deadlock)"
    if "error" in out:
        raise out["error"]
    return out.get("value")


def _free_under_own_lock(allocator, block):
    """What a finalizer run by the GC inside a locked section of ``allocator`` does."""
    def free_while_locked():
        with allocator._lock:
            allocator.free(block)
    return free_while_locked


# ---- host caching allocator --------------------------------------------------------------------
def test_cpu_free_inside_own_lock_is_queued_then_taken_in():
    a = HostCachingAllocator(max_cached_bytes=1 << 20)
    b = a.allocate(1000)
    _run_within(_free_under_own_lock(a, b))
    stats = a.memory_stats()  # takes the queued block in first
    assert stats["allocation.current"] == 0 and stats["allocated_bytes.current"] == 0
    assert stats["cached_bytes.current"] == b.size
    assert a.allocate(1000) is b  # and it is reused


def test_cpu_free_queued_block_is_reused_by_next_allocate():
    a = HostCachingAllocator(max_cached_bytes=1 << 20)
    b = a.allocate(4096)
    _run_within(_free_under_own_lock(a, b))
    assert a.allocate(4096) is b


def test_cpu_queued_block_over_cache_cap_is_dropped():
    a = HostCachingAllocator(max_cached_bytes=0)
    b = a.allocate(4096)
    _run_within(_free_under_own_lock(a, b))
    stats = a.memory_stats()
    assert stats["reserved_bytes.current"] == 0 and stats["allocation.current"] == 0
    assert b.buffer is None


def test_cpu_double_free_still_raises():
    a = HostCachingAllocator()
    b = a.allocate(64)
    a.free(b)
    with pytest.raises(RuntimeError, match="double free"):
        a.free(b)
    b2 = a.allocate(128)
    _run_within(_free_under_own_lock(a, b2))
    with pytest.raises(RuntimeError, match="double free"):
        a.free(b2)  # queued, not yet taken in: still a double free


def test_cpu_free_from_another_thread_while_locked():
    a = HostCachingAllocator(max_cached_bytes=1 << 20)
    blocks = [a.allocate(256) for _ in range(8)]
    with a._lock:  # another thread frees while this one holds the lock: no waiting
        _run_within(lambda: [a.free(b) for b in blocks])
    assert a.memory_stats()["allocation.current"] == 0


def test_storage_del_inside_allocate_does_not_hang():
    """The issue's scenario, deterministic: a tensor dies inside the allocator's lock."""
    from tensorlib.runtime.cpu.allocator import host_allocator
    victim = tl.empty((100,))
    before = host_allocator.memory_stats()["allocation.current"]

    def die_inside_lock():
        nonlocal victim
        with host_allocator._lock:
            victim = None  # Storage.__del__ -> free() while this thread holds the lock
    _run_within(die_inside_lock)
    assert host_allocator.memory_stats()["allocation.current"] == before - 1


# ---- CUDA caching allocator and pinned memory (interpret backend) ------------------------------
@pytest.mark.usefixtures("cuda_interpret")
def test_cuda_free_inside_own_lock_is_queued_then_taken_in():
    from tensorlib.runtime.cuda import device_allocator_for
    alloc = device_allocator_for(tl.Device("cuda", 0))
    base = alloc.memory_stats()["allocation.all.current"]
    blk = alloc.allocate(10_000)
    _run_within(_free_under_own_lock(alloc, blk))
    assert alloc.memory_stats()["allocation.all.current"] == base
    alloc.check_invariants()
    with pytest.raises(RuntimeError, match="double free"):
        alloc.free(blk)


@pytest.mark.usefixtures("cuda_interpret")
def test_cuda_free_with_stream_uses_never_calls_the_driver_from_free():
    """A block used on another stream needs events recorded (a driver call that takes the
    stream's lock): free() queues it, the next locked call records them."""
    from tensorlib.runtime.cuda import device_allocator_for
    alloc = device_allocator_for(tl.Device("cuda", 0))
    side = tl.Stream(device="cuda:0")
    x = tl.ones((1000,), device="cuda:0")
    x.record_stream(side)
    calls = []
    driver = alloc._driver
    real_record = driver.event_record
    driver.event_record = lambda *a: (calls.append(a), real_record(*a))[1]
    try:
        del x  # Storage.__del__ -> free()
        assert calls == []
        alloc.memory_stats()  # takes the block in: records the event now
        assert len(calls) == 1
    finally:
        driver.event_record = real_record
    side.synchronize()
    alloc.check_invariants()


@pytest.mark.usefixtures("cuda_interpret")
def test_pinned_free_inside_own_lock_is_queued_then_taken_in():
    p = tl.ones((100,)).pin_memory()
    alloc = p._storage._allocator
    base = alloc.memory_stats()["allocation.current"]
    blk = p._storage._block
    p._storage._block = None  # free it by hand, as its finalizer would
    _run_within(_free_under_own_lock(alloc, blk))
    assert alloc.memory_stats()["allocation.current"] == base - 1
    with pytest.raises(RuntimeError, match="not an allocated pinned block"):
        alloc.free(blk)


# ---- the torture test --------------------------------------------------------------------------
@pytest.mark.timeout(1000)  # the child's own limits: 600 s warm-up (cold compiles), 240 s traced
@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_gc_inside_runtime_locks_torture(device):
    """A tracer collects garbage every few lines of runtime code in 3 threads while reference
    cycles holding tensors (NumPy/DLPack views, pinned buffers, stream-used blocks) die."""
    env = dict(os.environ, PYTHONFAULTHANDLER="1")
    limit = 240
    proc = subprocess.run(
        [sys.executable, os.path.join(HERE, "finalizer_torture.py"), device, "8", "3",
         str(limit)], capture_output=True, text=True, timeout=limit + 660, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    assert proc.stdout.startswith("ok: "), proc.stdout
    assert int(proc.stdout.split()[1]) > 100  # the GC really ran inside runtime code


def test_profiler_ignores_work_that_finishes_after_it_stopped():
    """Another thread's queued work that completes after ``stop()`` must not fail its stream."""
    prof = tl.profiler.profile()
    with prof:
        pass
    # Both raised AttributeError (the record lists are gone after stop) inside stream workers.
    prof._device_kernel(("cuda:0", 0, 0, 1, None))
    prof._worker_done(0, 0, 1, [None] * 9)
