"""The torch-free benchmarker and autotuner (kernels/cuda/autotune.py), its wiring into the
CUDA matmul, and the GPU benchmark scripts' no-GPU path.

No GPU here: the autotuner's selection, pruning and disk cache run with injected fake timers;
the benchmarker runs on the interpret backend (its numbers mean nothing there, its plumbing —
events, the L2-flush fill kernel, the caching allocator — is real) and with fake events; the
matmul wiring runs with launches recorded instead of executed.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections import namedtuple

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.kernels.cuda import autotune as A

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")


pytestmark = pytest.mark.usefixtures("cuda_interpret")  # conftest.py


Cfg = namedtuple("Cfg", "BLOCK num_stages")
CONFIGS = {"f": [Cfg(256, 4), Cfg(128, 3), Cfg(64, 2), Cfg(32, 1)], "g": [Cfg(16, 1)]}
IDENT = ("Fake GPU 80GB", "3.9.0")


def smem(cfg, cls):
    return cfg.BLOCK * cfg.num_stages * 100


class FakeTimer:
    """timer(fn): runs fn (which records the config it launched) and returns that config's
    time from a table; counts calls."""

    def __init__(self, table):
        self.table = table
        self.launched = []

    def run(self, cfg):
        self.launched.append(cfg)

    def __call__(self, fn):
        fn()
        t = self.table[self.launched[-1]]
        if isinstance(t, Exception):
            raise t
        return t


def make_tuner(tmp_path, timer, limit=1 << 30, ident=IDENT, cache=True):
    return A.Autotuner("fakekern", CONFIGS, smem, timer=timer, smem_limit=lambda d: limit,
                       identity=lambda d: ident,
                       cache_dir=str(tmp_path / "tune") if cache else False)


# ---- autotuner selection -------------------------------------------------------------------------
def test_fastest_config_is_chosen_once_per_key(tmp_path):
    timer = FakeTimer({Cfg(256, 4): 3.0, Cfg(128, 3): 1.0, Cfg(64, 2): 2.0, Cfg(32, 1): 5.0})
    tuner = make_tuner(tmp_path, timer, cache=False)
    assert tuner.choose("f", "1024x1024x1024nn", timer.run) == Cfg(128, 3)
    assert timer.launched == CONFIGS["f"]          # each candidate timed exactly once
    assert tuner.choose("f", "1024x1024x1024nn", timer.run) == Cfg(128, 3)
    assert len(timer.launched) == 4                # in-memory hit: no timing
    timer.table[Cfg(32, 1)] = 0.5                  # another shape class tunes afresh
    assert tuner.choose("f", "64x64x64nn", timer.run) == Cfg(32, 1)
    assert len(timer.launched) == 8
    timings = tuner.timings[(IDENT, "f", "64x64x64nn")]
    assert sorted(timings.values()) == [0.5, 1.0, 2.0, 3.0]


def test_failing_configs_are_skipped_and_real_errors_propagate(tmp_path):
    class OutOfResources(Exception):
        pass
    timer = FakeTimer({Cfg(256, 4): OutOfResources("smem"), Cfg(128, 3): 4.0,
                       Cfg(64, 2): 2.0, Cfg(32, 1): OutOfResources("regs")})
    tuner = make_tuner(tmp_path, timer, cache=False)
    assert tuner.choose("f", "k1", timer.run) == Cfg(64, 2)
    assert math.isinf(tuner.timings[(IDENT, "f", "k1")][A._label(Cfg(256, 4))])
    for c in CONFIGS["f"]:
        timer.table[c] = OutOfResources("all")
    with pytest.raises(RuntimeError, match=r"fakekern\(\): no config of dtype class 'f'.*'k2'"):
        tuner.choose("f", "k2", timer.run)
    timer.table[Cfg(256, 4)] = ZeroDivisionError("a bug, not a resource limit")
    with pytest.raises(ZeroDivisionError):
        tuner.choose("f", "k3", timer.run)


def test_pruning_by_shared_memory(tmp_path):
    # the pruned configs would be fastest: they must never even be launched
    timer = FakeTimer({Cfg(256, 4): 0.1, Cfg(128, 3): 0.2, Cfg(64, 2): 0.9, Cfg(32, 1): 0.8})
    tuner = make_tuner(tmp_path, timer, limit=smem(Cfg(64, 2), "f"), cache=False)
    assert tuner.candidates("f", 0) == [Cfg(64, 2), Cfg(32, 1)]
    assert tuner.choose("f", "k", timer.run) == Cfg(32, 1)
    assert timer.launched == [Cfg(64, 2), Cfg(32, 1)]
    # nothing fits: the smallest is still tried (the launch will say if it cannot run)
    tiny = make_tuner(tmp_path, timer, limit=10, cache=False)
    assert tiny.candidates("f", 0) == [Cfg(32, 1)]


# ---- disk cache ----------------------------------------------------------------------------------
def test_disk_cache_round_trip(tmp_path):
    timer = FakeTimer({Cfg(256, 4): 3.0, Cfg(128, 3): 1.0, Cfg(64, 2): 2.0, Cfg(32, 1): 5.0,
                       Cfg(16, 1): 1.0})
    first = make_tuner(tmp_path, timer)
    assert first.choose("f", "512x512x512nt", timer.run) == Cfg(128, 3)
    assert first.choose("g", "512x512x512nt", timer.run) == Cfg(16, 1)
    path = first.cache_path(IDENT)
    assert os.path.dirname(path) == str(tmp_path / "tune")
    assert "Fake_GPU_80GB" in os.path.basename(path) and "3.9.0" in os.path.basename(path)
    doc = json.load(open(path))
    assert doc["device"] == IDENT[0] and doc["triton"] == IDENT[1]
    entry = doc["entries"]["f|512x512x512nt"]
    assert entry["config"] == {"BLOCK": 128, "num_stages": 3} and entry["ms"] == 1.0

    def no_timing(fn):
        raise AssertionError("a cached choice must not be re-timed")
    second = make_tuner(tmp_path, no_timing)          # a new process, in effect
    assert second.choose("f", "512x512x512nt", timer.run) == Cfg(128, 3)
    assert second.choose("g", "512x512x512nt", timer.run) == Cfg(16, 1)

    # another device name or Triton version does not reuse the file
    for ident in (("Other GPU", "3.9.0"), ("Fake GPU 80GB", "3.10.0")):
        t = FakeTimer(dict(timer.table))
        other = make_tuner(tmp_path, t, ident=ident)
        assert other.choose("f", "512x512x512nt", t.run) == Cfg(128, 3)
        assert len(t.launched) == 4
    assert len(os.listdir(tmp_path / "tune")) == 3

    # a stored config that no longer exists in the table, and a corrupt file: retuned
    doc["entries"]["f|512x512x512nt"]["config"] = {"BLOCK": 999, "num_stages": 9}
    json.dump(doc, open(path, "w"))
    t = FakeTimer(dict(timer.table))
    assert make_tuner(tmp_path, t).choose("f", "512x512x512nt", t.run) == Cfg(128, 3)
    assert len(t.launched) == 4
    open(path, "w").write("{not json")
    t = FakeTimer(dict(timer.table))
    assert make_tuner(tmp_path, t).choose("f", "512x512x512nt", t.run) == Cfg(128, 3)
    assert json.load(open(path))["entries"]["f|512x512x512nt"]["ms"] == 1.0  # rewritten


def test_unwritable_cache_warns_and_keeps_choice(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    timer = FakeTimer({c: float(i) for i, c in enumerate(CONFIGS["f"])})
    tuner = A.Autotuner("fakekern", CONFIGS, smem, timer=timer, smem_limit=lambda d: 1 << 30,
                        identity=lambda d: IDENT, cache_dir=str(blocker / "sub"))
    with pytest.warns(RuntimeWarning, match="cannot write the cache"):
        assert tuner.choose("f", "k", timer.run) == Cfg(256, 4)
    assert tuner.choose("f", "k", timer.run) == Cfg(256, 4)


def test_cache_root_and_switch(monkeypatch, tmp_path):
    monkeypatch.setenv("TENSORLIB_CACHE_DIR", str(tmp_path))
    assert A.cache_root() == os.path.join(str(tmp_path), "autotune")
    monkeypatch.setenv("TENSORLIB_AUTOTUNE", "0")
    assert not A.enabled()
    monkeypatch.setenv("TENSORLIB_AUTOTUNE", "1")
    assert A.enabled()


# ---- benchmarker ---------------------------------------------------------------------------------
class FakeEvent:
    """Events on a fake clock that each call of the timed function advances."""
    clock = [0.0]

    def record(self):
        self.t = FakeEvent.clock[0]

    def synchronize(self):
        pass


def test_benchmark_statistics_with_fake_events():
    durations = iter([5.0, 5.0, 5.0] + [1.0, 2.0, 3.0, 4.0, 100.0] + [0.0] * 50)
    flushes = []

    def fn():
        FakeEvent.clock[0] += next(durations)
    r = A.benchmark(fn, warmup=0, budget_ms=25.0, min_reps=5, max_reps=10, make_event=FakeEvent,
                    elapsed=lambda s, e: e.t - s.t, flush=lambda: flushes.append(1))
    # estimate 5 ms from 3 reps -> 25 ms budget / 5 ms = 5 reps
    assert r.reps == 5 and len(flushes) == 8
    assert (r.median_ms, r.q1_ms, r.q3_ms, r.min_ms) == (3.0, 2.0, 4.0, 1.0)
    assert r.iqr_ms == 2.0
    assert A.summarize([7.0]) == A.BenchResult(7.0, 7.0, 7.0, 7.0, 1)
    with pytest.raises(ValueError, match=r"benchmark\(\): argument 'reps' must be an int >= 1"):
        A.benchmark(fn, reps=0, make_event=FakeEvent, flush=False)
    with pytest.raises(ValueError, match=r"argument 'budget_ms' must be > 0, got -1"):
        A.benchmark(fn, budget_ms=-1, make_event=FakeEvent, flush=False)
    with pytest.raises(ValueError, match=r"L2Flusher\(\): argument 'nbytes'"):
        A.L2Flusher(0, 2)


def test_benchmark_plumbing_on_interpret_backend():
    # real tl.cuda events, a real flush buffer from the caching allocator zeroed by the fill
    # kernel on the current stream; meaningless times, but the whole path runs
    x = tl.zeros((64,), dtype=tl.float32, device="cuda")
    calls = []

    def fn():
        calls.append(1)
        x.fill_(2.0)
    with A.L2Flusher(0, 4096) as fl:
        buf = fl._buf
        buf.fill_(7)
        fl()
        np.testing.assert_array_equal(buf.cpu().numpy(), np.zeros(1024, np.int32))
    r = A.benchmark(fn, warmup=1, reps=3, flush_bytes=4096)
    assert r.reps == 3 and len(calls) == 4
    assert 0 <= r.min_ms <= r.q1_ms <= r.median_ms <= r.q3_ms
    np.testing.assert_array_equal(x.cpu().numpy(), np.full(64, 2.0, np.float32))


def test_default_timer_tunes_without_room_for_the_flush(monkeypatch):
    # the flush buffer cannot be allocated (over TENSORLIB_CUDA_MEMORY): the tuner's timer
    # still answers (warm-L2 timing) instead of failing the user's call
    monkeypatch.setattr(A, "DEFAULT_FLUSH_BYTES", 4 << 30)
    with pytest.raises(tl.cuda.OutOfMemoryError):
        A.L2Flusher(0, 4 << 30)
    x = tl.zeros((8,), dtype=tl.float32, device="cuda")
    assert A.Autotuner._default_timer(lambda: x.fill_(1.0)) >= 0


# ---- wiring into the matmul ----------------------------------------------------------------------
def test_matmul_interpret_mode_uses_default_config_without_tuning(monkeypatch):
    from tensorlib.kernels.cuda import matmul as MM

    def boom(*args, **kwargs):
        raise AssertionError("no autotuning in interpret mode")
    monkeypatch.setattr(MM.TUNER, "choose", boom)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 9, 20)).astype(np.float32)
    b = rng.standard_normal((20, 7)).astype(np.float32)
    got = tl.matmul(tl.asarray(a, device="cuda"), tl.asarray(b, device="cuda")).cpu().numpy()
    np.testing.assert_allclose(got, a @ b, rtol=1e-5, atol=1e-5)


def test_matmul_compiled_mode_tunes_per_shape_class(monkeypatch, tmp_path):
    # Compiled mode with launches recorded instead of run: the tuner times each candidate
    # (one launch each), then the chosen config runs; a same-class shape reuses the choice.
    from tensorlib.kernels.cuda import launch as L
    from tensorlib.kernels.cuda import matmul as MM
    launches = []
    monkeypatch.setattr(L, "current_mode", lambda: "compiled")
    monkeypatch.setattr(L, "launch", lambda kernel, grid, args, device, **kw: launches.append(
        (grid, MM.Config(kw["BLOCK_M"], kw["BLOCK_N"], kw["BLOCK_K"], kw["GROUP_M"],
                         kw["num_warps"], kw["num_stages"]), args[3:6], kw["EVEN_K"])))
    half = MM.CONFIGS["half"]
    fastest = half[2]

    def timer(fn):
        n = len(launches)
        fn()
        assert len(launches) == n + 1
        return 1.0 if launches[-1][1] == fastest else 2.0
    tuner = A.Autotuner("matmul", MM.CONFIGS, MM.smem_bytes, timer=timer,
                        smem_limit=lambda d: 64 << 10,
                        identity=lambda d: IDENT, cache_dir=str(tmp_path))
    monkeypatch.setattr(MM, "TUNER", tuner)
    a = tl.empty((100, 40), dtype=tl.float16, device="cuda")
    b = tl.empty((40, 72), dtype=tl.float16, device="cuda")
    out = tl.empty((100, 72), dtype=tl.float16, device="cuda")
    MM.matmul_kernel(a, b, out)
    timed = [c for _, c, _, _ in launches[:-1]]
    assert timed == half[2:]       # 128x256x32 and 128x128x64 at 3 stages exceed 64 KiB
    grid, cfg, mnk, even_k = launches[-1]
    assert cfg == fastest and mnk == [100, 72, 40] and even_k == (40 % cfg.BLOCK_K == 0)
    assert grid == (math.ceil(100 / cfg.BLOCK_M) * math.ceil(72 / cfg.BLOCK_N), 1)
    key = MM.shape_key(100, 72, 40, 1, True, True)
    assert key == "128x128x64nn"
    assert tuner.choose("half", key, None) == fastest
    assert json.load(open(tuner.cache_path(IDENT)))["entries"][f"half|{key}"]["config"] == \
        fastest._asdict()
    # same shape class (M 65..128 etc.): no retuning, one launch
    n = len(launches)
    MM.matmul_kernel(a[:90], b[:, :70], out[:90, :70])
    assert len(launches) == n + 1 and launches[-1][1] == fastest
    # a transposed operand is another class
    MM.matmul_kernel(a[:, :40], tl.empty((72, 40), dtype=tl.float16, device="cuda").T, out)
    assert len(launches) == n + 1 + len(timed) + 1
    # TENSORLIB_AUTOTUNE=0: the size heuristic, no timing
    monkeypatch.setenv("TENSORLIB_AUTOTUNE", "0")
    n = len(launches)
    MM.matmul_kernel(tl.empty((3000, 40), dtype=tl.float16, device="cuda"), b,
                     tl.empty((3000, 72), dtype=tl.float16, device="cuda"))
    assert len(launches) == n + 1 and launches[-1][1] == MM._pick("half", 3000, 72, 1)


def test_shape_key_buckets():
    from tensorlib.kernels.cuda.matmul import shape_key, smem_bytes, CONFIGS
    assert shape_key(4096, 4096, 11008, 1, True, True) == "4096x4096x16384nn"
    assert shape_key(3000, 1, 5, 6, False, True) == "4096x1x8b8tn"
    assert shape_key(2049, 2048, 2048, 1, True, False) == "4096x2048x2048nt"
    assert smem_bytes(CONFIGS["generic"][0], "generic") == 0
    # the estimate bounds what ptxas reported for sm_80 / sm_90 (see aot.py's table)
    assert smem_bytes(CONFIGS["tf32"][0], "tf32") == 98304


# ---- benchmark scripts without a GPU -------------------------------------------------------------
@pytest.mark.parametrize("script", ["cuda_gemm.py", "cuda_bandwidth.py"])
def test_benchmark_scripts_skip_without_gpu(script):
    from tensorlib.runtime.cuda.probe import cuda_gpu_present
    if cuda_gpu_present():
        pytest.skip("a GPU is present: the scripts would benchmark")
    env = dict(os.environ, TENSORLIB_CUDA_BACKEND="interpret")  # not a GPU either
    r = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", script)],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "no CUDA GPU present: skipped"
