"""tl.profiler: op / kernel / copy / memory recording, tables, Chrome traces, the overlap report
and its CLI. Assertions are on presence and ordering; the only timed ones are "overlap > 0"
facts built from deliberate sleeps on two streams."""
import json
import subprocess
import sys
import threading

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import profiler
from tensorlib import streams as gs
from tensorlib.dispatch.keys import DispatchKey
from tensorlib.dispatch.keys import tls as keys_tls
from tensorlib.profiler import ProfilerError, TraceFormatError
from tensorlib.profiler.__main__ import main as cli
from tensorlib.profiler._trace import KernelEvent, Trace
from tensorlib.runtime.cpu import streams as cs
from tensorlib.storage import Storage


def f32(values):
    return tl.asarray(np.asarray(values, dtype=np.float32))


def profile(**kw):
    return profiler.profile(activities=["cpu"], **kw)


def run_two_streams():
    """Two CPU streams sleeping 40 ms each at the same time, plus small kernels."""
    s1, s2 = tl.Stream(device="cpu"), tl.Stream(device="cpu")
    a = f32([1.0, 2.0, 3.0])
    gate = threading.Event()
    for s in (s1, s2):
        with tl.stream(s):
            cs.launch(gate.wait, "gate", (), ())
            cs.sleep(0.04)
    with tl.stream(s1):
        b = a * 2
    with tl.stream(s2):
        c = a + 1
    gate.set()
    return s1, s2, b, c


# ---- recording ----------------------------------------------------------------------------------
def test_ops_are_recorded_with_nesting_device_and_stream():
    a = f32([1.0, 2.0])
    s = tl.Stream(device="cpu")
    with profile() as prof:
        b = a + a
        z = tl.zeros((3,))
        with tl.stream(s):
            c = b * 3
    ops = prof.events()
    names = [o.name for o in ops]
    assert names[:2] == ["add", "zeros"] and "fill_" in names and "multiply" in names
    zeros = next(o for o in ops if o.name == "zeros")
    fill = next(o for o in ops if o.name == "fill_")
    assert fill.parent == zeros.id and zeros.parent == 0
    assert zeros.start_ns <= fill.start_ns <= fill.end_ns <= zeros.end_ns
    mul = next(o for o in ops if o.name == "multiply")
    assert mul.device == "cpu" and mul.stream == s.stream_id
    assert all(o.stream == 0 for o in ops if o.name != "multiply")
    assert all(o.input_shapes is None for o in ops)
    np.testing.assert_array_equal(c.numpy(), [6.0, 12.0])
    np.testing.assert_array_equal(z.numpy(), 0.0)


def test_kernels_run_on_their_streams_with_launch_links():
    s1, s2, b, c = (None,) * 4
    with profile() as prof:
        s1, s2, b, c = run_two_streams()
        d = f32([1.0]) + 1
    tr = prof.trace
    by_stream = {}
    for k in tr.kernels:
        by_stream.setdefault((k.device, k.stream), []).append(k.name)
    assert by_stream[("cpu", s1.stream_id)] == ["gate_kernel", "sleep", "multiply_kernel"]
    assert by_stream[("cpu", s2.stream_id)] == ["gate_kernel", "sleep", "add_kernel"]
    assert "add_kernel" in by_stream[("cpu", 0)]  # the inline one on the default stream
    flows = {f for _, _, f in tr.flows} | {l[4] for l in tr.launches}
    assert all(k.flow in flows for k in tr.kernels)  # every kernel links to its launch
    launches = {l[4]: l for l in tr.launches}
    for k in tr.kernels:
        if k.stream != 0:
            assert launches[k.flow][1] == "enqueue " + k.name
            assert launches[k.flow][2] <= k.start_ns  # launched before it ran
    mul_op = next(o for o in tr.ops if o.name == "multiply")
    mul_kernel = next(k for k in tr.kernels if k.name == "multiply_kernel")
    assert mul_kernel.op_id == mul_op.id
    np.testing.assert_array_equal(b.numpy(), [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(c.numpy(), [2.0, 3.0, 4.0])
    np.testing.assert_array_equal(d.numpy(), [2.0])


def test_record_shapes_and_stack():
    a = f32(np.ones((2, 3)))
    with profile(record_shapes=True, with_stack=True) as prof:
        a + 1
    op = next(o for o in prof.events() if o.name == "add")
    assert [list(s) for s in op.input_shapes] == [[2, 3], [], []]
    assert list(op.input_dtypes) == ["float32", "Scalar", "Scalar"]
    assert any("test_profiler.py" in f for f in op.stack)
    table = prof.key_averages(group_by_input_shape=True).table()
    assert "[[2, 3], [], []]" in table


def test_record_function_ranges():
    a = f32([1.0])

    @profiler.record_function("decorated")
    def step():
        return a + 1

    with profiler.record_function("outside"):  # no profiler: nothing recorded, no error
        pass
    with profile() as prof:
        with profiler.record_function("outer"):
            step()
            with profiler.record_function("inner"):
                a * 2
    ops = {o.name: o for o in prof.events()}
    assert "outside" not in ops
    assert ops["outer"].kind == "range" and ops["outer"].parent == 0
    assert ops["decorated"].parent == ops["outer"].id
    assert ops["add"].parent == ops["decorated"].id
    assert ops["multiply"].parent == ops["inner"].id
    with pytest.raises(TypeError, match="name"):
        profiler.record_function(3)


def test_profile_memory():
    with profile(profile_memory=True) as prof:
        x = tl.ones((256,), dtype=tl.float32)
        del x
    mem = prof.trace.memory
    assert [m.delta > 0 for m in mem] == [True, False]
    assert mem[0].delta == -mem[1].delta >= 1024
    assert mem[1].total == mem[0].total - mem[0].delta
    ones = next(o for o in prof.events() if o.name == "ones")
    assert mem[0].op_id == ones.id
    row = next(r for r in prof.key_averages() if r.key == "ones")
    assert row.cpu_memory_usage >= 1024
    assert "CPU Mem" in prof.key_averages().table()
    with profile() as prof2:
        tl.ones((4,))
    assert prof2.trace.memory == [] and "CPU Mem" not in prof2.key_averages().table()


def test_profiler_off_leaves_no_trace():
    plain_allocate = Storage.__dict__["allocate"]
    with profile(profile_memory=True):
        assert keys_tls.included & (1 << DispatchKey.Profiler)
        assert cs._prof is not None
    assert not keys_tls.included & (1 << DispatchKey.Profiler)
    assert cs._prof is None and Storage.__dict__["allocate"] is plain_allocate
    assert "__del__" in Storage.__dict__ and Storage.__del__.__name__ == "__del__"


def test_profiled_program_computes_the_same():
    rng = np.random.default_rng(0)
    a, b = f32(rng.random((4, 5))), f32(rng.random(5))

    def program():
        s = tl.Stream(device="cpu")
        x = a * b + 1
        with tl.stream(s):
            y = (x - a) / 2
            w = tl.zeros((4, 5))
            w.copy_(y)
        return x.numpy().copy(), w.numpy().copy(), (x.sum()).item()

    plain = program()
    with profiler.profile(record_shapes=True, profile_memory=True, with_stack=True):
        profiled = program()
    for p, q in zip(plain, profiled):
        np.testing.assert_array_equal(p, q)


# ---- tables -------------------------------------------------------------------------------------
def test_key_averages_table_and_sort_keys():
    a = f32([1.0, 2.0])
    with profile() as prof:
        for _ in range(3):
            a + a
        a * a
    ka = prof.key_averages()
    add = next(r for r in ka if r.key == "add")
    assert add.count == 3 and add.cpu_time_total >= add.self_cpu_time_total > 0
    assert add.cpu_time == pytest.approx(add.cpu_time_total / 3)
    assert add.device_time_total > 0  # its kernels
    kern = next(r for r in ka if r.key == "add_kernel")
    assert kern.count == 3 and kern.kind == "kernel"
    for key in profiler.SORT_KEYS:
        ka.table(sort_by=key, row_limit=2)
    table = ka.table(sort_by="count", row_limit=1)
    lines = [ln for ln in table.splitlines() if ln.startswith(("add", "multiply"))]
    assert len(lines) == 1 and lines[0].startswith("add")
    assert "Self CPU time total" in table
    with pytest.raises(ValueError, match="unknown sort_by 'bogus'.*cpu_time_total"):
        ka.table(sort_by="bogus")
    with pytest.raises(TypeError, match="row_limit"):
        ka.table(row_limit="3")


# ---- the overlap report -------------------------------------------------------------------------
def _k(stream, cat, t0, t1, nbytes=0, dev="cpu"):
    return KernelEvent(dev, stream, cat, cat, t0 * 1_000_000, t1 * 1_000_000, nbytes,
                       "h2d" if cat == "memcpy" else "")


def test_overlap_math_on_a_synthetic_trace():
    # stream 1: compute 0-10, 20-30 ms; stream 2: copies 5-15, 25-27 ms; stream 3: compute 40-50
    tr = Trace([], [_k(1, "kernel", 0, 10), _k(1, "kernel", 20, 30),
                    _k(2, "memcpy", 5, 15, 1_000_000), _k(2, "memcpy", 25, 27, 1_000_000),
                    _k(3, "kernel", 40, 50), _k(0, "kernel", 0, 4, dev="cuda:0")],
               duration_ns=60_000_000)
    r = tr.overlap()
    cpu = r.devices["cpu"]
    assert cpu.window_ms == pytest.approx(50) and cpu.busy_ms == pytest.approx(35)
    assert cpu.overlap_ms == pytest.approx(7) and cpu.copy_ms == pytest.approx(12)
    assert cpu.copy_hidden_ms == pytest.approx(7)
    assert cpu.copy_hidden_share == pytest.approx(7 / 12)
    assert cpu.idle_ms == pytest.approx(15) and cpu.gaps[0] == pytest.approx((30, 10))
    assert [s.stream for s in cpu.streams] == [1, 2, 3]
    s2 = cpu.streams[1]
    assert s2.copies == 2 and s2.copy_bytes == 2_000_000 and s2.copy_gbps == pytest.approx(1 / 6)
    pairs = {p.streams: p for p in cpu.pairs}
    assert pairs[(1, 2)].overlap_ms == pytest.approx(7) and pairs[(1, 3)].overlap_ms == 0
    assert pairs[(1, 2)].copy_hidden_share == pytest.approx(7 / 12)
    assert pairs[(1, 3)].copy_hidden_share is None
    assert r.overlap_ms == pytest.approx(7 + 4)  # cuda:0 0-4 overlaps cpu stream 1
    assert r.copies["h2d"] == (2, 2_000_000, pytest.approx(12))
    text = str(r)
    assert "overlap_ms = 11.000" in text and "stream 1 | stream 2" in text
    assert "copy hidden under compute 7.000 ms (58.3 %)" in text
    assert json.loads(json.dumps(r.to_dict()))["devices"]["cpu"]["busy_ms"] == pytest.approx(35)


def test_overlap_of_real_streams():
    with profile() as prof:
        s1, s2, _, _ = run_two_streams()
    r = prof.overlap()
    assert r.overlap_ms > 0
    pair = next(p for p in r.devices["cpu"].pairs if set(p.streams) == {s1.stream_id,
                                                                         s2.stream_id})
    assert pair.overlap_ms > 0


def test_copy_hidden_under_compute():
    s1, s2 = tl.Stream(device="cpu"), tl.Stream(device="cpu")
    src, dst = f32(np.arange(1000)), tl.empty((1000,), dtype=tl.float32)
    with profile() as prof:
        with tl.stream(s1):
            cs.sleep(0.01)
            started = s1.record_event()
            cs.sleep(0.1)  # long compute on s1 ...
        s2.wait_event(started)
        with tl.stream(s2):
            dst.copy_(src)  # ... with a copy on s2 that starts while it runs
        gs.synchronize("cpu")
    d = prof.overlap().devices["cpu"]
    assert d.copy_ms > 0 and d.copy_hidden_ms > 0 and d.copy_hidden_share > 0
    copy = next(k for k in prof.trace.kernels if k.is_copy)
    assert copy.stream == s2.stream_id and copy.bytes == 4000 and copy.kind == "h2h"
    np.testing.assert_array_equal(dst.numpy(), np.arange(1000))


# ---- Chrome trace + CLI -------------------------------------------------------------------------
def test_chrome_trace_export_and_reload(tmp_path):
    with profile(profile_memory=True, record_shapes=True) as prof:
        s1, s2, _, _ = run_two_streams()
        x = tl.ones((16,))
        del x
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(path)
    data = json.loads(path.read_text())
    ev = data["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in ev
             if e["ph"] == "M" and e["name"] == "process_name"}
    assert "cpu" in procs.values() and any(n.startswith("host") for n in procs.values())
    cpu_pid = next(p for p, n in procs.items() if n == "cpu")
    tracks = {e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"
              and e["pid"] == cpu_pid}
    assert {f"stream {s1.stream_id}", f"stream {s2.stream_id}", "stream 0"} <= tracks
    starts = {e["id"] for e in ev if e["ph"] == "s"}
    ends = {e["id"] for e in ev if e["ph"] == "f"}
    assert starts == ends and starts
    kernels = [e for e in ev if e["ph"] == "X" and e["pid"] == cpu_pid]
    assert all(e["cat"] in ("kernel", "memcpy") for e in kernels)
    assert any(e["ph"] == "C" and e["name"] == "Memory" for e in ev)
    assert any(e["ph"] == "X" and e["cat"] == "cpu_op" and "Input Dims" in e["args"]
               for e in ev)
    loaded = profiler.load_trace(path)
    a, b = prof.overlap(), loaded.overlap()
    assert b.overlap_ms == pytest.approx(a.overlap_ms, abs=1e-3)
    assert set(b.devices) == set(a.devices)
    assert [o.name for o in loaded.ops] == [o.name for o in prof.events()]
    assert profiler.summary(path).overlap_ms == pytest.approx(a.overlap_ms, abs=1e-3)


def test_cli_summary(tmp_path, capsys):
    with profile() as prof:
        run_two_streams()
    path = tmp_path / "t.json"
    prof.export_chrome_trace(str(path))
    assert cli(["summary", str(path), "--ops", "3"]) == 0
    out = capsys.readouterr().out
    assert "overlap_ms = " in out and "device cpu" in out and "Name" in out
    assert cli(["summary", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["overlap_ms"] > 0


@pytest.mark.parametrize("content, message", [
    ("{not json", "not valid JSON"),
    ('{"foo": 1}', "no 'traceEvents' list"),
    ("42", "JSON int"),
    ('{"traceEvents": [3]}', "event 0 is not an object"),
    ('{"traceEvents": [{"ph": "X", "ts": "soon", "dur": 1}]}', "non-numeric 'ts'"),
    ('{"traceEvents": [{"ph": "X", "ts": 1, "dur": -5}]}', "negative duration"),
])
def test_cli_rejects_corrupt_traces(tmp_path, capsys, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    assert cli(["summary", str(path)]) == 2
    assert message in capsys.readouterr().err
    with pytest.raises(TraceFormatError, match=message):
        profiler.load_trace(path)


def test_cli_missing_file_and_module_entry(tmp_path):
    with pytest.raises(TraceFormatError, match="cannot read"):
        profiler.load_trace(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\x00\xff garbage")
    r = subprocess.run([sys.executable, "-m", "tensorlib.profiler", "summary", str(bad)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "error:" in r.stderr and "Traceback" not in r.stderr


def test_plot_timeline(tmp_path, monkeypatch):
    with profile() as prof:
        run_two_streams()
    try:
        import matplotlib
    except ImportError:
        matplotlib = None
    if matplotlib is not None:
        out = tmp_path / "t.png"
        prof.plot_timeline(out)
        assert out.read_bytes()[:4] == b"\x89PNG"
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(RuntimeError, match="matplotlib is not installed"):
        prof.plot_timeline(tmp_path / "u.png")


# ---- misuse -------------------------------------------------------------------------------------
def test_misuse_raises_typed_errors(tmp_path):
    prof = profile()
    with pytest.raises(ProfilerError, match="nothing was profiled"):
        prof.export_chrome_trace(tmp_path / "x.json")
    with pytest.raises(ProfilerError, match="nothing was profiled"):
        prof.key_averages()
    with pytest.raises(ProfilerError, match="not running"):
        prof.stop()
    with prof:
        with pytest.raises(ProfilerError, match="still running"):
            prof.overlap()
        with pytest.raises(ProfilerError, match="another profiler is already running"):
            with profile():
                pass
        with pytest.raises(ProfilerError, match="this profiler is already running"):
            prof.start()
        f32([1.0]) + 1
    assert any(o.name == "add" for o in prof.events())  # the outer one kept recording
    with pytest.raises(ValueError, match="activities"):
        profiler.profile(activities=["tpu"])
    with profile() as again:  # a profiler can run again once the first has ended
        pass
    assert again.events() == []


# ---- CUDA (interpret backend) -------------------------------------------------------------------
@pytest.fixture
def interpret_cuda(monkeypatch):
    from tensorlib.runtime.cuda import context
    monkeypatch.setenv("TENSORLIB_CUDA_BACKEND", "interpret")
    monkeypatch.setenv("TENSORLIB_CUDA_MEMORY", str(1 << 28))
    monkeypatch.delenv("TENSORLIB_CUDA_DEVICE_COUNT", raising=False)
    context.reset()
    yield
    context.reset()


def test_cuda_copies_and_kernels_on_interpret_streams(interpret_cuda):
    import tensorlib.cuda as tc
    from tensorlib.ops import transfer as T
    host = f32(np.arange(4096))
    side = tc.Stream()
    with profiler.profile() as prof:
        dev = T.to_device(host, "cuda")
        with tc.stream(side):
            tc._sleep(0.03)
        back = T.to_device(dev, "cpu")
        cast = dev.astype(tl.float64)  # device-side cast: a host function on interpret
    np.testing.assert_array_equal(back.numpy(), np.arange(4096))
    np.testing.assert_array_equal(T.to_device(cast, "cpu").numpy(), np.arange(4096))
    ks = prof.trace.kernels
    h2d = next(k for k in ks if k.kind == "h2d")
    d2h = next(k for k in ks if k.kind == "d2h")
    assert h2d.device == "cuda:0" and h2d.bytes == 4096 * 4 and h2d.is_copy
    assert h2d.name == "Memcpy HtoD" and d2h.name == "Memcpy DtoH" and h2d.gbps > 0
    assert h2d.end_ns <= d2h.start_ns
    sleep = next(k for k in ks if k.name == "sleep")
    assert sleep.stream == side.cuda_stream and sleep.device == "cuda:0"
    astype = next(o for o in prof.events() if o.name == "astype")
    assert astype.device == "cuda:0"
    assert any(k.device == "cuda:0" and k.cat == "kernel" and k.op_id == astype.id
               for k in ks)  # however the device cast ran, it was timed on cuda:0
    apis = {l[1] for l in prof.trace.launches}
    assert {"cudaMemcpyAsync", "cudaLaunchKernel", "cudaLaunchHostFunc"} <= apis
    r = prof.overlap()
    assert r.copies["h2d"][1] == 4096 * 4 and "cuda:0" in r.devices
    driver = __import__("tensorlib.runtime.cuda.context", fromlist=["x"]).state.driver
    assert "memcpy_async" not in vars(driver)  # the driver is untouched after profiling


def test_cpu_kernels_inside_a_host_function_count_once(interpret_cuda):
    import tensorlib.cuda as tc
    from tensorlib.runtime.cuda import context
    x = f32([1.0, 2.0])
    side = tc.Stream()

    def host_kernel():
        x.add_(1)  # a CPU kernel run as CUDA stream work (how interpret runs device kernels)
    with profiler.profile() as prof:
        context.state.driver.launch_host_func(side._handle, host_kernel)
    ks = prof.trace.kernels
    assert [(k.device, k.name) for k in ks] == [("cuda:0", "host_kernel")]
    np.testing.assert_array_equal(x.numpy(), [2.0, 3.0])


def test_compiled_launch_timer_is_handed_in_while_profiling(interpret_cuda):
    # compiled Triton launches bypass the driver: the profiler hands kernels/cuda/launch.py a
    # timer while it runs (launch.py imports nothing of the profiler)
    import tensorlib.cuda as tc
    from tensorlib.kernels.cuda import launch
    assert launch._kernel_timer is None
    ran = []
    with profiler.profile() as prof:
        timer = launch._kernel_timer
        assert timer is not None
        side = tc.Stream()
        timer(side._handle, "timed_kernel", lambda: ran.append(1))
        side.synchronize()
    assert launch._kernel_timer is None and ran == [1]
    assert "timed_kernel" in [k.name for k in prof.trace.kernels]
