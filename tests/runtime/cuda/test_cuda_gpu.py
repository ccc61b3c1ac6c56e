"""The real driver (cuda-bindings) on an actual GPU. Skipped without one (see conftest)."""
import numpy as np
import pytest

import tensorlib as tl
import tensorlib.cuda as tc
from tensorlib.ops import transfer as T

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cuda_real")]


def test_real_device_properties():
    assert tc.is_available() and tc.backend() == "real"
    assert tc.device_count() >= 1
    props = tc.get_device_properties(0)
    assert props.total_memory > 1 << 30 and props.multi_processor_count > 0
    assert props.major >= 7
    free, total = tc.mem_get_info()
    assert 0 < free <= total


def test_real_round_trip_and_strided():
    arr = np.random.default_rng(0).standard_normal((64, 48)).astype(np.float32)
    g = T.to_device(tl.from_numpy(arr), "cuda")
    np.testing.assert_array_equal(T.cpu(g).numpy(), arr)
    np.testing.assert_array_equal(T.cpu(g.T).numpy(), arr.T)          # dense, permuted
    np.testing.assert_array_equal(T.cpu(g[:, ::3]).numpy(), arr[:, ::3])  # staged or kernel
    np.testing.assert_array_equal(T.cpu(T.to_device(g, "cuda", dtype=tl.float64)).numpy(),
                                  arr.astype(np.float64))


def test_real_streams_events_sleep():
    s = tc.Stream()
    start, end = tc.Event(enable_timing=True), tc.Event(enable_timing=True)
    with tc.stream(s):
        start.record()
        tc._sleep(0.05)
        end.record()
    assert not s.query()
    end.synchronize()
    assert s.query()
    assert start.elapsed_time(end) >= 45.0
    s2 = tc.Stream(priority=-1)
    with tc.stream(s):
        tc._sleep(0.05)
    s2.wait_stream(s)
    s2.synchronize()
    assert s.query()


def test_real_allocator_and_record_stream():
    p = tc.caching_allocator_alloc(1 << 20)
    tc.caching_allocator_delete(p)
    x = T.to_device(tl.asarray(np.ones(1 << 18, np.float32)), "cuda")
    ptr = x.data_ptr()
    side = tc.Stream()
    with tc.stream(side):
        tc._sleep(0.1)
    tl.streams.record_stream(x, side)
    del x
    y = T.to_device(tl.asarray(np.ones(1 << 18, np.float32)), "cuda")
    assert y.data_ptr() != ptr
    side.synchronize()
    stats = tc.memory_stats()
    assert stats["allocated_bytes.all.current"] >= 1 << 20
    tc.empty_cache()


def test_real_pinned_non_blocking():
    arr = np.arange(1 << 16, dtype=np.float32)
    p = T.pin_memory(tl.from_numpy(arr))
    assert T.is_pinned(p)
    g = T.to_device(p, "cuda", non_blocking=True)
    h = T.to_device(g, "cpu", non_blocking=True)
    tc.synchronize()
    np.testing.assert_array_equal(h.numpy(), arr)
