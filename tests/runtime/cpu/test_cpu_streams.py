"""CPU streams: asynchronous worker-thread streams, events, read-waits, memory lifetime.

Ordering is forced with gates (a callable queued on a stream that waits for a threading.Event
the test sets), never with timing thresholds; the only timed facts asserted are lower bounds
that sleeps guarantee.
"""
import gc
import threading
import time

import numpy as np
import pytest

import tensorlib as tl
from helpers import gated
from tensorlib import streams as gs
from tensorlib.runtime.cpu import streams as cs
from tensorlib.runtime.cpu.allocator import host_allocator


def host_fn(fn, *args):
    """Queue a Python callable on the current CPU stream (as a kernel would be)."""
    cs.launch(fn, "hostfn", (), (), *args)


def release_later(gate, delay=0.05):
    t = threading.Timer(delay, gate.set)
    t.daemon = True
    t.start()
    return t


def f32(values):
    return tl.asarray(np.asarray(values, dtype=np.float32))


# ---- streams and the current stream -------------------------------------------------------------
def test_stream_types_and_current_stream():
    s = tl.Stream(device="cpu", priority=-1)
    assert isinstance(s, gs.CpuStream) and s.device == tl.Device("cpu") and s.priority == -1
    d = gs.default_stream("cpu")
    assert d.stream_id == 0 and s.stream_id >= 1 and s != d
    assert gs.current_stream("cpu") is d
    with tl.stream(s):
        assert gs.current_stream("cpu") is s
        with tl.stream(d):
            assert gs.current_stream("cpu") is d
        assert gs.current_stream("cpu") is s
        seen = []
        th = threading.Thread(target=lambda: seen.append(gs.current_stream("cpu")))
        th.start()
        th.join()
        assert seen == [d]  # the current stream is per thread
    assert gs.current_stream("cpu") is d


def test_pool_bounds_worker_threads():
    ids = {tl.Stream(device="cpu").stream_id for _ in range(cs.STREAMS_PER_POOL + 5)}
    assert ids <= set(range(1, cs.STREAMS_PER_POOL + 1))


def test_bad_arguments():
    with pytest.raises(TypeError, match="priority"):
        tl.Stream(device="cpu", priority="high")
    with pytest.raises(ValueError, match="'cpu'"):
        gs.CpuStream(device="cuda")
    with pytest.raises(TypeError, match="event"):
        tl.Stream(device="cpu").wait_event("e")
    with pytest.raises(TypeError, match="stream"):
        tl.Stream(device="cpu").wait_stream(3)
    with pytest.raises(ValueError, match=">= 0"):
        cs.sleep(-1)
    with pytest.raises(TypeError, match="seconds"):
        cs.sleep("x")


# ---- asynchronous execution ---------------------------------------------------------------------
def test_work_is_asynchronous_and_in_order():
    s = tl.Stream(device="cpu")
    gate = gated(s)
    order = []
    with tl.stream(s):
        for i in range(5):
            host_fn(order.append, i)
    assert not s.query() and order == []  # queued behind the gate, host not blocked
    gate.set()
    s.synchronize()
    assert s.query() and order == [0, 1, 2, 3, 4]


def test_kernels_on_a_stream_compute_the_same():
    a = f32(np.arange(12).reshape(3, 4))
    b = f32(np.linspace(-1, 1, 4))
    expect = ((a.numpy() + b.numpy()) * 2 - a.numpy()) / 4
    s = tl.Stream(device="cpu")
    gate = gated(s)
    with tl.stream(s):
        c = a + b
        d = c * 2
        e = (d - a) / 4
    gate.set()
    np.testing.assert_allclose(e.numpy(), expect, rtol=1e-6)
    np.testing.assert_allclose(c.numpy(), a.numpy() + b.numpy(), rtol=1e-6)


def test_parallel_kernels_on_two_streams_and_host():
    n = 40_000  # above the parallel grain: each launch is a parallel Numba kernel
    a = f32(np.arange(n) % 97)
    s1, s2 = tl.Stream(device="cpu"), tl.Stream(device="cpu")
    with tl.stream(s1):
        x = a + a
    with tl.stream(s2):
        y = a * 3
    z = a - 1
    gs.synchronize("cpu")
    np.testing.assert_array_equal(x.numpy(), a.numpy() * 2)
    np.testing.assert_array_equal(y.numpy(), a.numpy() * 3)
    np.testing.assert_array_equal(z.numpy(), a.numpy() - 1)


_STREAM_OPS = {
    # name: (what runs on the stream, given the producer's result x (4, 6) float32, and its
    # NumPy oracle); each reads x, which a gated stream has not written yet when it is issued.
    "sum": (lambda x: x.sum(axis=1), lambda x: x.sum(axis=1)),
    "var": (lambda x: tl.var(x, axis=0), lambda x: x.var(axis=0)),
    "argmax": (lambda x: tl.argmax(x, axis=1), lambda x: x.argmax(axis=1)),
    "cumsum": (lambda x: tl.cumsum(x, axis=1), lambda x: x.cumsum(axis=1)),
    "matmul_blas": (lambda x: x @ x.mT, lambda x: x @ x.T),
    "matmul_numba": (lambda x: x.astype(tl.int32) @ x.astype(tl.int32).mT,
                     lambda x: x.astype(np.int32) @ x.astype(np.int32).T),
    "sort": (lambda x: tl.sort(x, axis=1), lambda x: np.sort(x, axis=1)),
    "gather": (lambda x: x[tl.asarray([3, 0, 0])], lambda x: x[[3, 0, 0]]),
    "mask": (lambda x: x[x > 10], lambda x: x[x > 10]),
    "arange_plus": (lambda x: x + tl.arange(6, dtype=tl.float32),
                    lambda x: x + np.arange(6, dtype=np.float32)),
}


# These need their result (a count, a bounds check) on the host: they wait for the stream.
_HOST_SYNCED = {"sort", "gather", "mask"}


@pytest.mark.parametrize("name", sorted(_STREAM_OPS))
def test_every_kernel_family_is_stream_ordered(name):
    """Reductions, scans, matmul (BLAS and Numba), sort, indexing and creation kernels issued on
    a user stream see the result of the stream's earlier (still gated) work."""
    run, oracle = _STREAM_OPS[name]
    # Values differ per case: a reused allocator block must not already hold the answer.
    base = f32(np.arange(24).reshape(4, 6) % 7 + sorted(_STREAM_OPS).index(name))
    run(base)  # compile first: the gate below must outlast only the issuing of the op
    s = tl.Stream(device="cpu")
    gate = gated(s)
    with tl.stream(s):
        x = base * 3  # queued behind the gate
        release_later(gate, 0.3)
        y = run(x)
        if name not in _HOST_SYNCED:
            assert not gate.is_set()  # issued without waiting for the stream
    s.synchronize()
    expect = oracle(base.numpy() * 3)
    np.testing.assert_allclose(y.numpy(), expect, rtol=1e-5)


def test_random_kernels_queue_on_the_stream():
    s = tl.Stream(device="cpu")
    gate = gated(s)
    with tl.stream(s):
        r = tl.rand(1000, generator=tl.Generator().manual_seed(5))
        assert not s.query()  # queued behind the gate, not run inline
    gate.set()
    expect = tl.rand(1000, generator=tl.Generator().manual_seed(5))
    np.testing.assert_array_equal(r.numpy(), expect.numpy())


# ---- host reads wait ----------------------------------------------------------------------------
@pytest.mark.parametrize("read", ["numpy", "item", "repr", "tolist", "array", "default_op"])
def test_host_reads_wait_for_pending_writes(read):
    s = tl.Stream(device="cpu")
    a = f32([41.0])
    gate = gated(s)
    with tl.stream(s):
        b = a + 1
    release_later(gate)
    if read == "numpy":
        assert b.numpy()[0] == 42.0
    elif read == "item":
        assert b.item() == 42.0
    elif read == "repr":
        assert "42." in repr(b)
    elif read == "tolist":
        assert b.tolist() == [42.0]
    elif read == "array":
        assert np.asarray(b)[0] == 42.0
    else:
        assert (b * 2).numpy()[0] == 84.0  # a default-stream kernel reading b waits too
    assert s.query()


def test_host_write_waits_for_pending_reads():
    s = tl.Stream(device="cpu")
    a = f32([1.0, 2.0])
    gate = gated(s)
    with tl.stream(s):
        b = a * 10
    release_later(gate)
    a.numpy()[:] = -1.0  # must not land before the stream has read a
    np.testing.assert_array_equal(b.numpy(), [10.0, 20.0])


def test_host_sync_orders_an_inline_kernel():
    s = tl.Stream(device="cpu")
    a = f32([1.0])
    gate = gated(s)
    with tl.stream(s):
        b = a + 1
        release_later(gate)
        cs.host_sync(b)  # what a kernel that must run inline calls first
        assert s.query()
        assert b._storage._uses is None


# ---- events -------------------------------------------------------------------------------------
def test_events_order_two_streams():
    s1, s2 = tl.Stream(device="cpu"), tl.Stream(device="cpu")
    a = f32([1.0, 2.0, 3.0])
    gate = gated(s1)
    with tl.stream(s1):
        b = a * 2
    e = tl.Event(device="cpu")
    e.record(s1)
    assert isinstance(e, gs.CpuEvent) and not e.query()
    s2.wait_event(e)
    with tl.stream(s2):
        c = b + 1  # reads b only after s1 produced it
    assert not s2.query()
    gate.set()
    e.synchronize()
    assert e.query()
    s2.synchronize()
    np.testing.assert_array_equal(c.numpy(), [3.0, 5.0, 7.0])


def test_wait_stream_and_default_stream_semantics():
    s1, s2 = tl.Stream(device="cpu"), tl.Stream(device="cpu")
    log = []
    gate = gated(s1)
    with tl.stream(s1):
        host_fn(log.append, "s1")
    s2.wait_stream(s1)
    with tl.stream(s2):
        host_fn(log.append, "s2")
    release_later(gate)
    gs.default_stream("cpu").wait_stream(s2)  # the default stream is the host: waits now
    assert log == ["s1", "s2"]
    s1.wait_stream(s1)  # a stream never waits on itself


def test_event_elapsed_time_and_errors():
    s = tl.Stream(device="cpu")
    start, end = tl.Event(device="cpu", enable_timing=True), tl.Event(device="cpu",
                                                                     enable_timing=True)
    gate = gated(s)
    start.record(s)
    with tl.stream(s):
        cs.sleep(0.03)
    end.record(s)
    with pytest.raises(RuntimeError, match="not completed"):
        start.elapsed_time(end)
    gate.set()
    end.synchronize()
    assert start.elapsed_time(end) >= 29.0  # the sleep ran between the two records
    with pytest.raises(RuntimeError, match="enable_timing"):
        tl.Event(device="cpu").elapsed_time(end)
    with pytest.raises(RuntimeError, match="never recorded"):
        start.elapsed_time(tl.Event(device="cpu", enable_timing=True))
    with pytest.raises(TypeError, match="end_event"):
        start.elapsed_time(1)
    assert tl.Event(device="cpu").query()  # never recorded: complete


def test_record_on_idle_stream_completes_at_once():
    s = tl.Stream(device="cpu")
    s.synchronize()
    e = s.record_event()
    assert e.query()
    e.wait(s)  # nothing to wait for


def test_two_streams_overlap():
    s1, s2 = tl.Stream(device="cpu"), tl.Stream(device="cpu")
    spans = {}

    def work(name):
        t0 = time.perf_counter()
        time.sleep(0.05)
        spans[name] = (t0, time.perf_counter())
    gate = threading.Event()
    for name, s in (("a", s1), ("b", s2)):
        with tl.stream(s):
            host_fn(gate.wait)
            host_fn(work, name)
    gate.set()
    gs.synchronize("cpu")
    (a0, a1), (b0, b1) = spans["a"], spans["b"]
    assert min(a1, b1) - max(a0, b0) > 0  # both workers ran at once


def test_synchronize_device():
    s1, s2 = tl.Stream(device="cpu"), tl.Stream(device="cpu")
    g1, g2 = gated(s1), gated(s2)
    release_later(g1)
    release_later(g2)
    gs.synchronize("cpu")
    assert s1.query() and s2.query()
    gs.synchronize()  # None: the CPU streams (and CUDA when in use)


# ---- errors -------------------------------------------------------------------------------------
def test_sticky_error_surfaces_on_synchronize():
    s = tl.Stream(device="cpu")
    with tl.stream(s):
        host_fn(lambda: 1 / 0)
    with pytest.raises(RuntimeError, match=r"CPU stream \d+.*ZeroDivisionError"):
        s.synchronize()
    s.synchronize()  # reported once
    with tl.stream(s):
        host_fn(lambda: [][1])
    with pytest.raises(RuntimeError, match="IndexError"):
        gs.synchronize("cpu")


# ---- memory lifetime ----------------------------------------------------------------------------
def test_queued_work_keeps_storage_alive():
    s = tl.Stream(device="cpu")
    a = tl.ones((1000,), dtype=tl.float32)
    ptr = a.data_ptr()  # before queuing: data_ptr() waits for queued uses
    gate = gated(s)
    with tl.stream(s):
        b = a * 2
    del a
    gc.collect()
    fresh = tl.empty((1000,), dtype=tl.float32)
    assert fresh.data_ptr() != ptr  # a's block is held by the queued kernel
    gate.set()
    s.synchronize()
    np.testing.assert_array_equal(b.numpy(), 2.0)


def test_record_stream_defers_reuse():
    s = tl.Stream(device="cpu")
    x = tl.empty((512,), dtype=tl.float32)
    ptr = x.data_ptr()
    gate = gated(s)
    gs.record_stream(x, s)
    gs.record_stream(x, s)  # one pending entry per stream
    assert len(x.untyped_storage()._block.pending) == 1
    del x
    gc.collect()
    assert host_allocator.memory_stats()["num_deferred_frees.current"] >= 1
    y = tl.empty((512,), dtype=tl.float32)
    assert y.data_ptr() != ptr
    gate.set()
    s.synchronize()
    z = tl.empty((512,), dtype=tl.float32)
    assert z.data_ptr() == ptr  # reusable once the stream passed the recorded point
    gs.record_stream(z, gs.default_stream("cpu"))  # the default stream: nothing outstanding
    assert not z.untyped_storage()._block.pending


def test_a_stream_kernel_may_read_its_own_operands_on_the_host():
    s = tl.Stream(device="cpu")
    a = f32([1.0, 2.0])
    seen = []
    with tl.stream(s):
        b = a + 1
        cs.launch(lambda: seen.append(b.numpy().copy()), "peek", (), (b,))
    s.synchronize()  # no self-wait deadlock: b's use by this very stream is skipped
    np.testing.assert_array_equal(seen[0], [2.0, 3.0])


@pytest.fixture
def interpret_cuda(monkeypatch):
    from tensorlib.runtime.cuda import context
    monkeypatch.setenv("TENSORLIB_CUDA_BACKEND", "interpret")
    monkeypatch.setenv("TENSORLIB_CUDA_MEMORY", str(1 << 28))
    monkeypatch.delenv("TENSORLIB_CUDA_DEVICE_COUNT", raising=False)
    context.reset()
    yield context
    context.reset()


def test_events_across_cpu_and_cuda_streams(interpret_cuda):
    import tensorlib.cuda as tc
    s, side = tl.Stream(device="cpu"), tc.Stream()
    driver = interpret_cuda.get_driver()
    log = []
    gate = gated(s)
    e = s.record_event()
    e.wait(side)  # the CUDA stream waits for the CPU stream's work so far
    driver.launch_host_func(side._handle, lambda: log.append("cuda"))
    assert log == [] and not side.query()
    gate.set()
    side.synchronize()
    assert log == ["cuda"]
    ce = tc.Event()
    with tc.stream(side):
        tc._sleep(0.02)
    ce.record(side)
    s.wait_event(ce)  # and a CPU stream waits for a CUDA event
    with tl.stream(s):
        host_fn(lambda: log.append(("cpu", ce.query())))
    s.synchronize()
    assert log[-1] == ("cpu", True)
    gs.synchronize()  # device None: CPU streams and the current CUDA device
