"""Devices, streams, events and the current-stream state on the interpret backend."""
import threading
import time

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.cuda as tc
from tensorlib import streams as gs
from tensorlib.ops import transfer as T
from tensorlib.runtime.cuda import context
from tensorlib.runtime.cuda.driver import CudaError


pytestmark = pytest.mark.usefixtures("cuda_interpret")  # conftest.py


def host_work(stream, fn):
    """Enqueue a Python callable on a tl.cuda.Stream (interpret backend only)."""
    context.state.driver.launch_host_func(stream._handle, fn)


# ---- devices -----------------------------------------------------------------------------------
def test_devices():
    assert tc.is_available() and tc.backend() == "interpret"
    assert tc.device_count() == 2
    props = tc.get_device_properties(1)
    assert props.total_memory == 1 << 30 and props.major >= 8
    assert "interpret" in repr(props)
    assert tc.get_device_capability() == (props.major, props.minor)
    assert tc.current_device() == 0
    with tc.device(1):
        assert tc.current_device() == 1
        with tc.device("cuda:0"):
            assert tc.current_device() == 0
        assert tc.current_device() == 1
    assert tc.current_device() == 0
    with tc.device(None):
        assert tc.current_device() == 0
    tc.set_device(1)
    try:
        assert tc.current_device() == 1
        assert tc.current_stream().device == tl.Device("cuda:1")
    finally:
        tc.set_device(0)


def test_invalid_device_errors_name_the_value():
    with pytest.raises(CudaError, match="invalid device ordinal 5"):
        tc.set_device(5)
    with pytest.raises(CudaError, match="get_device_properties.*ordinal 7"):
        tc.get_device_properties(7)
    with pytest.raises(ValueError, match="must be a CUDA device, got 'cpu'"):
        tc.Stream(device="cpu")
    with pytest.raises(TypeError, match="priority"):
        tc.Stream(priority="high")


def test_current_device_is_per_thread():
    seen = []
    tc.set_device(1)
    try:
        t = threading.Thread(target=lambda: seen.append(tc.current_device()))
        t.start()
        t.join()
    finally:
        tc.set_device(0)
    assert seen == [0]


# ---- streams -----------------------------------------------------------------------------------
def test_stream_runs_in_order_and_asynchronously():
    s = tc.Stream()
    log = []
    with tc.stream(s):
        tc._sleep(0.5)
    host_work(s, lambda: log.append("after sleep"))
    log.append("host")  # the caller was not blocked by the sleep
    assert not s.query()
    s.synchronize()
    assert s.query()
    assert log == ["host", "after sleep"]


def test_streams_are_independent():
    s1, s2 = tc.Stream(), tc.Stream()
    assert s1 != s2
    with tc.stream(s1):
        tc._sleep(1.0)
    done = []
    host_work(s2, lambda: done.append(True))
    s2.synchronize()  # s2 does not wait for s1
    assert done == [True]
    assert not s1.query()
    s1.synchronize()


def test_wait_event_orders_streams():
    s1, s2 = tc.Stream(), tc.Stream()
    with tc.stream(s1):
        tc._sleep(0.5)
    ev = s1.record_event()
    assert not ev.query()
    s2.wait_event(ev)
    seen = []
    host_work(s2, lambda: seen.append(ev.query()))
    s2.synchronize()
    assert seen == [True]  # s2's later work ran only after the event


def test_wait_stream_and_event_wait():
    s1, s2 = tc.Stream(), tc.Stream()
    with tc.stream(s1):
        tc._sleep(0.2)
    s2.wait_stream(s1)
    seen = []
    host_work(s2, lambda: seen.append(s1.query()))
    s2.synchronize()
    assert seen == [True]
    ev = tc.Event()
    ev.wait(s2)  # never recorded: no-op
    assert ev.query()
    ev.synchronize()


def test_event_timing():
    start = tc.Event(enable_timing=True)
    end = tc.Event(enable_timing=True)
    start.record()
    tc._sleep(0.1)
    end.record()
    end.synchronize()
    assert end.query()
    ms = start.elapsed_time(end)
    assert ms >= 99.0  # the stream was busy for at least the sleep
    plain = tc.Event()
    plain.record()
    with pytest.raises(RuntimeError, match="enable_timing=True"):
        start.elapsed_time(plain)
    with pytest.raises(RuntimeError, match="never recorded"):
        start.elapsed_time(tc.Event(enable_timing=True))
    with pytest.raises(TypeError, match="end_event"):
        start.elapsed_time(3)


def test_elapsed_time_before_completion_raises():
    s = tc.Stream()
    a, b = tc.Event(enable_timing=True), tc.Event(enable_timing=True)
    a.record(s)
    with tc.stream(s):
        tc._sleep(0.5)
    b.record(s)
    with pytest.raises(CudaError, match="not completed"):
        a.elapsed_time(b)
    b.synchronize()
    assert a.elapsed_time(b) >= 499.0


def test_event_device_mismatch():
    ev = tc.Event()
    ev.record(tc.Stream(device=0))
    with pytest.raises(CudaError, match="cuda:0.*cuda:1"):
        ev.record(tc.Stream(device=1))
    assert tc.Event(device=1).device == tl.Device("cuda:1")


def test_current_stream_context_and_threads():
    default = tc.default_stream()
    assert tc.current_stream() == default and default.cuda_stream == 0
    s = tc.Stream()
    other_thread = []
    with tc.stream(s) as entered:
        assert entered is s
        assert tc.current_stream() == s
        t = threading.Thread(target=lambda: other_thread.append(tc.current_stream()))
        t.start()
        t.join()
        s2 = tc.Stream()
        with tl.streams.stream(s2):
            assert tc.current_stream() == s2
        assert tc.current_stream() == s
    assert tc.current_stream() == default
    assert other_thread == [default]  # current streams are per thread


def test_stream_context_switches_device():
    s1 = tc.Stream(device="cuda:1")
    with tc.stream(s1):
        assert tc.current_device() == 1
        assert tc.current_stream() == s1
        assert tc.current_stream(0) == tc.default_stream(0)
    assert tc.current_device() == 0
    assert tc.current_stream(1) == tc.default_stream(1)
    with tc.stream(None):
        assert tc.current_stream() == tc.default_stream()
    tc.set_stream(s1)
    try:
        assert tc.current_stream(1) == s1
    finally:
        tc.set_stream(tc.default_stream(1))


def test_priorities_and_pool():
    least, greatest = tc.Stream.priority_range()
    assert least == 0 and greatest < 0
    hi = tc.Stream(priority=-1)
    assert hi.priority == -1
    assert tc.Stream(priority=-100).priority == greatest  # clamped, as CUDA does
    assert tc.Stream(priority=7).priority == least
    many = [tc.Stream(priority=-2) for _ in range(40)]
    assert len({s.cuda_stream for s in many}) == 32  # pooled, round robin
    assert many[0] == many[32] and hash(many[0]) == hash(many[32])
    assert "priority=-2" in repr(many[0])


def test_device_synchronize():
    s1, s2 = tc.Stream(), tc.Stream(device=1)
    with tc.stream(s1):
        tc._sleep(0.05)
    with tc.stream(s2):
        tc._sleep(1.0)  # still busy when device 0's synchronize returns
    tc.synchronize()
    assert s1.query() and not s2.query()
    tc.synchronize(1)
    assert s2.query()


def test_sleep_argument_errors():
    with pytest.raises(ValueError, match="seconds.*-1"):
        tc._sleep(-1)
    with pytest.raises(TypeError, match="seconds"):
        tc._sleep("long")


# ---- device-generic types ----------------------------------------------------------------------
def test_generic_stream_and_event():
    s = gs.Stream(device="cuda")
    assert isinstance(s, tc.Stream) and isinstance(s, gs.Stream)
    assert s.device == tl.Device("cuda:0")
    s1 = gs.Stream(device="cuda:1", priority=-1)
    assert s1.device == tl.Device("cuda:1") and s1.priority == -1
    ev = gs.Event(device="cuda", enable_timing=True)
    assert isinstance(ev, tc.Event) and isinstance(ev, gs.Event)
    with gs.stream(s):
        assert gs.current_stream("cuda") == s
    assert gs.current_stream("cuda") == gs.default_stream("cuda")
    assert isinstance(gs.Stream(), tc.Stream)  # device=None: the accelerator when available
    gs.synchronize("cuda")


def test_cpu_stream_stub():
    s = gs.Stream(device="cpu")
    assert isinstance(s, gs.CpuStream) and isinstance(s, gs.Stream)
    assert s.device == tl.Device("cpu")
    assert s.query()
    s.synchronize()
    a = gs.Event(device="cpu", enable_timing=True)
    b = gs.Event(device="cpu", enable_timing=True)
    a.record(s)
    time.sleep(0.01)
    b.record()
    assert a.query() and b.query()
    assert a.elapsed_time(b) >= 9.0
    s.wait_event(a)
    s.wait_stream(gs.default_stream("cpu"))
    with gs.stream(s):
        assert gs.current_stream("cpu") is s
    assert gs.current_stream("cpu") is gs.default_stream("cpu")
    assert isinstance(s.record_event(), gs.CpuEvent)
    with pytest.raises(RuntimeError, match="never recorded"):
        a.elapsed_time(gs.Event(device="cpu", enable_timing=True))
    with pytest.raises(ValueError, match="CPU event cannot be recorded"):
        a.record(tc.Stream())
    with pytest.raises(TypeError, match="stream"):
        gs.stream(42)


# ---- record_stream on tensors --------------------------------------------------------------------
def test_record_stream_keeps_memory_until_stream_done():
    x = T.to_device(tl.asarray(np.arange(1024, dtype=np.float32)), "cuda")
    ptr = x.data_ptr()
    side = tc.Stream()
    with tc.stream(side):
        tc._sleep(1.0)  # "a kernel on side still reads x"
    gs.record_stream(x, side)
    del x
    y = T.to_device(tl.asarray(np.ones(1024, dtype=np.float32)), "cuda")
    assert y.data_ptr() != ptr  # x's block is not reused while side is busy
    side.synchronize()
    z = T.to_device(tl.asarray(np.ones(1024, dtype=np.float32)), "cuda")
    assert z.data_ptr() == ptr  # reused once side's work finished
    np.testing.assert_array_equal(T.cpu(z).numpy(), 1.0)


def test_without_record_stream_memory_is_reused_at_once():
    x = T.to_device(tl.asarray(np.arange(1024, dtype=np.float32)), "cuda")
    ptr = x.data_ptr()
    del x
    y = T.to_device(tl.asarray(np.ones(1024, dtype=np.float32)), "cuda")
    assert y.data_ptr() == ptr


def test_record_stream_errors():
    x = T.to_device(tl.asarray([1.0, 2.0]), "cuda:0")
    with pytest.raises(RuntimeError, match="'cuda:0'.*'cuda:1'"):
        gs.record_stream(x, tc.Stream(device=1))
    with pytest.raises(TypeError, match="stream"):
        gs.record_stream(x, "s")
    cpu = tl.asarray([1.0])
    gs.record_stream(cpu, gs.Stream(device="cpu"))  # no-op
    with pytest.raises(RuntimeError, match="'cpu'.*'cuda:0'"):
        gs.record_stream(cpu, tc.Stream())


def test_sticky_stream_error_surfaces_on_synchronize():
    s = tc.Stream()
    host_work(s, lambda: 1 / 0)
    with pytest.raises(CudaError, match="ZeroDivisionError"):
        s.synchronize()
    s.synchronize()
