"""`python -m tensorlib.bench`: an in-process run on tiny sizes, results.json, plots, --compare
exit codes, and every bad-input path (one line on stderr, non-zero exit, no traceback); the
everyday survey's cases and summary, --load's busy processes, progress lines and the noisy flag.
Nothing here asserts anything about speed."""
import io
import json
import math
import os
import subprocess
import sys
import warnings

import pytest

import tensorlib as tl
from tensorlib.bench import main as bench_main
from tensorlib.bench.__main__ import main as script_main
from tensorlib.bench import load as bench_load
from tensorlib.bench import runner as bench_runner
from tensorlib.bench.impls import NumpyImpl, Ours
from tensorlib.bench.report import Progress, print_table, summarize
from tensorlib.bench.suites import SUITES, build_cases, square_ish
from tensorlib.bench.timing import NOISY_IQR, Budget, is_noisy, time_cpu_group
from tensorlib.runtime.cuda import context

REQUIRED = ("suite", "name", "device", "dtype", "shape", "ours_ms", "baseline", "baseline_ms",
            "ratio")
TINY = ["--sizes", "tiny", "--no-torch"]


def run(argv, capsys):
    rc = bench_main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


def assert_one_line_error(rc, err, *needles):
    assert rc == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("tensorlib-bench: error: ")
    assert "Traceback" not in err
    for n in needles:
        assert n in lines[0], lines[0]


def test_quick_tiny_run(tmp_path, capsys):
    """One run of every suite on tiny sizes: exit status, table, results.json, plots. (One test,
    so that under pytest-xdist the kernels it compiles are compiled by one worker only.)"""
    rc, out, err = run(["--quick", *TINY, "--out", str(tmp_path)], capsys)
    doc = json.loads((tmp_path / "results.json").read_text())
    results = doc["results"]
    bad = [r for r in results if r["status"] in ("failed", "error")]
    assert rc == (1 if bad else 0), err

    # the table and summary
    for col in ("case", "shape", "dtype", "ours", "numpy", "ratio", "% roof"):
        assert col in out
    assert "rooflines: memory" in out and "GEMM float32" in out
    assert "results.json" in out

    # results.json
    assert doc["schema"] == "tensorlib-bench/1"
    meta = doc["meta"]
    assert meta["device"] == "cpu" and meta["cpu"] and meta["versions"]["numpy"]
    assert meta["baseline"].startswith("numpy ")
    assert "git_commit" in meta and meta["versions"]["python"]
    assert doc["rooflines"]["memory"]["value"] > 0
    assert doc["rooflines"]["gemm"]["float32"]["value"] > 0
    assert {r["suite"] for r in results} == set(SUITES)
    for r in results:
        for k in REQUIRED:
            assert k in r, (k, r)
        assert r["device"] == "cpu" and r["dtype"] == "float32"
        assert r["status"] in ("ok", "skipped", "failed", "error")
        if r["status"] == "ok":
            assert r["ours_ms"] > 0 and r["baseline_ms"] > 0
            assert r["ratio"] == pytest.approx(r["ours_ms"] / r["baseline_ms"])
            assert r["ours_q1_ms"] <= r["ours_ms"] <= r["ours_q3_ms"]
            if r["kind"] != "latency":
                assert r["unit"] in ("GB/s", "GFLOP/s") and r["ours_rate"] > 0
                if r["name"] not in ("sort", "argsort"):  # compute-bound: no roofline
                    assert r["ours_roofline_pct"] > 0
        else:
            assert r["reason"]
    ok = {r["suite"] for r in results if r["status"] == "ok"}
    assert {"elementwise", "matmul", "copy", "dispatch"} <= ok

    # plots
    assert (tmp_path / "summary.png").stat().st_size > 1000
    for suite in ok:
        assert (tmp_path / f"{suite}.png").exists()

    # the everyday survey (1e3 elements in the tiny set): every case's check passed
    every = [r for r in results if r["suite"] == "everyday"]
    assert len(every) == 30 and {r["size"] for r in every} == {1000}
    assert [r["name"] for r in every if r["status"] != "ok"] == []
    for r in every:
        assert r["ours_p90_ms"] >= r["ours_ms"] and r["baseline_p90_ms"] >= r["baseline_ms"]
        assert isinstance(r["noisy"], bool)
        assert r["best_peer"] == r["baseline"] and r["best_peer_ratio"] == r["ratio"]
    ev = doc["summary"]["suites"]["everyday"]
    assert ev["cases"] == 30 and ev["geomean"] > 0
    assert [(g["size"], g["size_label"], g["cases"]) for g in ev["by_size"]] == [(1000, "1e3",
                                                                                  30)]
    assert ev["by_size"][0]["geomean"] == pytest.approx(ev["geomean"])
    worst = max(every, key=lambda r: r["best_peer_ratio"])
    assert ev["worst"]["name"] == worst["name"] and ev["worst"]["size"] == 1000
    assert ev["worst"]["ratio"] == pytest.approx(worst["best_peer_ratio"])
    assert len(ev["slowest"]) == 10 and ev["slowest"][0] == ev["worst"]
    assert doc["summary"]["noisy_rows"] == sum(r["noisy"] for r in results if r["status"] == "ok")
    assert doc["meta"]["load_processes"] == 0
    flat = " ".join(out.split())
    assert "everyday survey" in flat and "geometric mean per size: 1e3" in flat
    assert "everyday worst:" in flat

    # progress: stderr is not a terminal under capsys, so one plain line per step
    assert "[1/" in err and "] measuring rooflines" in err
    assert "] everyday: add 1000 float32" in err


def test_everyday_suite_cases():
    full = build_cases(["everyday"], ["float32"], "cpu", "full")
    names = list(dict.fromkeys(c.name for c in full))
    assert len(names) == 30 and len(full) == 90
    assert sorted({c.size for c in full}) == [1000, 100_000, 2_000_000]
    assert {c.size for c in build_cases(["everyday"], ["float32"], "cpu", "quick")} == \
        {1000, 100_000}
    for c in full:
        assert c.suite == "everyday" and c.dtype == "float32" and not c.skip
        assert c.work > 0 and 0 < c.budget_scale <= 1
        shape = tuple(c.shape)
        if c.op == "matmul":  # two k x k matrices, k = round(sqrt(n)) capped at 1024
            assert shape == (min(round(math.sqrt(c.size)), 1024),) * 2
        else:
            assert math.prod(shape) == c.size
        if len(shape) == 2 and c.op != "matmul":
            assert shape == square_ish(c.size) and shape[0] <= shape[1] <= 2 * shape[0]
    # every operation is bound on tensorlib and NumPy
    ours, base = Ours("cpu"), NumpyImpl()
    for c in build_cases(["everyday"], ["float32"], "cpu", "tiny"):
        for impl in (ours, base):
            assert callable(getattr(impl, c.op)), (impl.label, c.op)
    # other dtypes: one skipped row saying why
    (skip,) = build_cases(["everyday"], ["int32"], "cpu", "tiny")
    assert "float32" in skip.skip
    assert square_ish(1000) == (25, 40) and square_ish(2_000_000) == (1250, 1600)


# ---- noisy rows, summaries, progress -------------------------------------------------------------
def test_noisy_flag_on_synthetic_timings():
    assert NOISY_IQR == 0.25
    assert is_noisy(1.0, 0.8, 1.3)             # IQR 50 % of the median
    assert not is_noisy(1.0, 0.95, 1.05)       # 10 %
    assert not is_noisy(1.0, 0.75, 1.0)        # exactly the threshold is not above it
    assert is_noisy(2.0, 1.0, 2.6)
    assert not is_noisy(0.0, 0.0, 1.0) and not is_noisy(None, None, None)
    assert is_noisy(1.0, 0.9, 1.1, threshold=0.1) is True


def _rec(name, size, ours, base, noisy=False, iqr=0.01, suite="everyday"):
    return {"suite": suite, "name": name, "device": "cpu", "dtype": "float32",
            "shape": [size], "size": size, "kind": "memory", "status": "ok", "reason": None,
            "ours_ms": ours, "ours_iqr_ms": ours * (0.5 if noisy else iqr), "baseline": "numpy 2",
            "baseline_ms": base, "baseline_iqr_ms": base * 0.05, "ratio": ours / base,
            "best_peer": "numpy 2", "best_peer_ms": base, "best_peer_ratio": ours / base,
            "unit": None, "ours_rate": None, "note": None, "extra_baselines": [],
            "noisy": noisy}


def test_summary_and_noisy_rows_in_table():
    results = [_rec("add", 1000, 2.0, 1.0), _rec("exp", 1000, 8.0, 1.0, noisy=True),
               _rec("add", 2_000_000, 1.0, 2.0), _rec("exp", 2_000_000, 3.0, 1.0),
               _rec("sum all", 64, 5.0, 1.0, suite="reduction")]
    s = summarize(results)
    ev = s["suites"]["everyday"]
    assert ev["cases"] == 4 and ev["geomean"] == pytest.approx((2 * 8 * 0.5 * 3) ** 0.25)
    by = {g["size_label"]: g for g in ev["by_size"]}
    assert by["1e3"]["geomean"] == pytest.approx(4.0) and by["2e6"]["geomean"] == \
        pytest.approx(1.5 ** 0.5)
    assert by["1e3"]["worst"]["name"] == "exp" and by["1e3"]["noisy"] == 1
    assert (ev["worst"]["name"], ev["worst"]["size_label"], ev["worst"]["ratio"]) == \
        ("exp", "1e3", 8.0)
    assert [c["ratio"] for c in ev["slowest"]] == [8.0, 3.0, 2.0, 0.5]
    assert s["suites"]["reduction"]["worst"]["ratio"] == 5.0 and "by_size" not in \
        s["suites"]["reduction"]
    assert s["noisy_rows"] == 1
    buf = io.StringIO()
    print_table(results, {"device": "cpu", "cpu": "test", "baseline": "numpy 2"}, {}, file=buf)
    text = " ".join(buf.getvalue().split())
    assert "50%!" in text and "noisy: iqr tensorlib 50%, numpy 5%" in text
    assert "1 of 5 timed rows are noisy" in text
    assert "geometric mean per size: 1e3 4.00 (2 cases), 2e6 1.22 (2 cases)" in text
    assert "everyday worst: exp 1e3 float32 8.00x" in text


def test_progress_lines_when_not_a_terminal():
    class Tty(io.StringIO):
        def isatty(self):
            return True
    buf = io.StringIO()
    with Progress(2, stream=buf) as p:
        p.step("measuring rooflines")
        p.advance()
        p.step("everyday: add 1e3 float32")
        p.advance()
    assert buf.getvalue().splitlines() == ["[1/2] measuring rooflines",
                                           "[2/2] everyday: add 1e3 float32"]
    # on a terminal: rich's bar when rich is installed (as before), else the same lines
    import importlib.util
    assert Progress(1, stream=Tty())._rich == (importlib.util.find_spec("rich") is not None)


def test_interleaved_group_timing_returns_one_timing_each():
    calls = []
    fns = [lambda i=i: calls.append(i) for i in range(3)]
    ts = time_cpu_group(fns, Budget(0.001, min_repeats=3, max_repeats=4, min_sample_s=0,
                                    warmup=1))
    assert len(ts) == 3
    for t in ts:
        assert t.repeats >= 3 and t.q1_ms <= t.median_ms <= t.q3_ms and t.p90_ms >= t.median_ms
    # samples alternate between the callables rather than running one after another
    assert len(set(calls[-6:])) == 3


# ---- --load --------------------------------------------------------------------------------------
def _alive(pid) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead, merely not reaped
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


@pytest.fixture
def load_spy(monkeypatch):
    """Records every BusyLoad the CLI makes, and whether its processes ran during the cases."""
    made, seen = [], []

    class Spy(bench_load.BusyLoad):
        def __init__(self, n):
            super().__init__(n)
            made.append(self)

    real_run = bench_runner.Runner.run

    def run(self, case):
        seen.append([_alive(pid) for pid in made[-1].pids])
        return real_run(self, case)

    monkeypatch.setattr(bench_load, "BusyLoad", Spy)
    monkeypatch.setattr(bench_runner.Runner, "run", run)
    return made, seen


def test_load_starts_and_stops_its_processes(tmp_path, capsys, load_spy):
    made, seen = load_spy
    rc, out, err = run([*TINY, "--suite", "dispatch", "--load", "1", "--no-plots",
                        "--out", str(tmp_path)], capsys)
    assert rc == 0, err
    (load,) = made
    assert len(load.pids) == 1 and seen and all(s == [True] for s in seen)
    assert not any(_alive(pid) for pid in load.pids)
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["meta"]["load_processes"] == 1
    assert "--load 1" in " ".join(out.split())


@pytest.mark.parametrize("exc,rc_expected", [(KeyboardInterrupt, 130), (RuntimeError, 1)])
def test_load_processes_stop_on_interrupt_and_error(tmp_path, capsys, monkeypatch, exc,
                                                    rc_expected):
    made = []

    class Spy(bench_load.BusyLoad):
        def __init__(self, n):
            super().__init__(n)
            made.append(self)

    def boom(self, case):
        assert all(_alive(pid) for pid in made[-1].pids)
        raise exc("stop")

    monkeypatch.setattr(bench_load, "BusyLoad", Spy)
    monkeypatch.setattr(bench_runner.Runner, "run", boom)
    rc, _, err = run([*TINY, "--suite", "dispatch", "--load", "1", "--no-plots",
                      "--out", str(tmp_path)], capsys)
    assert rc == rc_expected, err
    (load,) = made
    assert len(load.pids) == 1 and not any(_alive(pid) for pid in load.pids)


def test_missing_op_and_dtype_are_skipped_not_failed(tmp_path, capsys, monkeypatch):
    # A suite whose op does not exist says so in the table; so does a dtype NumPy lacks.
    if hasattr(tl, "randn"):
        monkeypatch.delattr(tl, "randn")
    rc, out, err = run([*TINY, "--suite", "random,alloc", "--dtype", "float32,bfloat16",
                        "--out", str(tmp_path), "--no-plots"], capsys)
    assert rc == 0, err
    assert "skipped: tl.randn does not exist yet" in " ".join(out.split())
    doc = json.loads((tmp_path / "results.json").read_text())
    by = {(r["name"], r["dtype"]): r for r in doc["results"]}
    assert by[("randn (normal)", "float32")]["status"] == "skipped"
    assert by[("randn (normal)", "float32")]["ours_ms"] is None
    assert by[("empty (allocate + free)", "bfloat16")]["reason"] == "NumPy has no bfloat16"
    assert by[("empty (allocate + free)", "float32")]["status"] == "ok"


def test_cuda_plumbing_on_interpret_backend(tmp_path, capsys, monkeypatch):
    # Events, the L2 flush and transfers on the host-memory backend; NumPy stands in for CuPy.
    monkeypatch.setenv("TENSORLIB_CUDA_BACKEND", "interpret")
    monkeypatch.setenv("TENSORLIB_CUDA_MEMORY", str(1 << 30))
    context.reset()
    try:
        rc, out, err = run(["--device", "cuda"] + TINY + ["--out", str(tmp_path), "--no-plots"],
                           capsys)
        assert_one_line_error(rc, err, "interpreter")
        rc, out, err = run(["--device", "cuda", "--cuda-baseline", "numpy", *TINY,
                            "--suite", "copy", "--out", str(tmp_path), "--no-plots"], capsys)
        assert rc in (0, 1), err
        doc = json.loads((tmp_path / "results.json").read_text())
        assert doc["meta"]["device"] == "cuda" and doc["meta"]["cuda_backend"] == "interpret"
        by = {r["name"]: r for r in doc["results"]}
        for name in ("host -> device", "device -> host"):
            assert by[name]["status"] == "ok", by[name]
            assert by[name]["timer"] == "cuda-events" and by[name]["ours_ms"] > 0
    finally:
        context.reset()


# ---- --compare -----------------------------------------------------------------------------------
def _doc(factor=1.0, device="cpu", rename=""):
    results = []
    for i, (suite, name) in enumerate([("elementwise", "add"), ("matmul", "matmul (n,n)@(n,n)"),
                                       ("dispatch", "add 1 element")]):
        ours = (i + 1) * 0.5
        results.append({"suite": suite, "name": name + rename, "device": device,
                        "dtype": "float32", "shape": [64, 64], "status": "ok",
                        "ours_ms": ours * factor, "baseline": "numpy 2", "baseline_ms": ours,
                        "ratio": factor})
    results.append({"suite": "random", "name": "randn (normal)", "device": device,
                    "dtype": "float32", "shape": [64], "status": "skipped", "ours_ms": None,
                    "baseline": "numpy 2", "baseline_ms": None, "ratio": None,
                    "reason": "tl.randn does not exist yet"})
    return {"schema": "tensorlib-bench/1", "meta": {"device": device}, "results": results}


def _write(path, doc):
    path.write_text(json.dumps(doc))
    return str(path)


def test_compare_exit_codes(tmp_path, capsys):
    old = _write(tmp_path / "old.json", _doc())
    same = _write(tmp_path / "same.json", _doc(1.05))
    slow = _write(tmp_path / "slow.json", _doc(1.5))
    fast = _write(tmp_path / "fast.json", _doc(0.5))
    rc, out, _ = run(["--compare", old, same], capsys)
    assert rc == 0 and "3 cases compared" in out and "0 regressed" in out
    rc, out, _ = run(["--compare", old, slow], capsys)
    assert rc == 1 and "REGRESSION" in out and "+50.0%" in out and "3 regressed" in out
    rc, out, _ = run(["--compare", old, slow, "--threshold", "60"], capsys)
    assert rc == 0
    rc, out, _ = run(["--compare", old, fast], capsys)
    assert rc == 0 and "faster" in out


def test_compare_bad_files(tmp_path, capsys):
    good = _write(tmp_path / "good.json", _doc())
    (tmp_path / "broken.json").write_text("{not json")
    (tmp_path / "other.json").write_text(json.dumps({"hello": 1}))
    fields = _doc()
    del fields["results"][0]["ours_ms"]
    zero = _doc()
    zero["results"][1]["ours_ms"] = 0
    cases = [
        ([str(tmp_path / "missing.json"), good], "no such file"),
        ([str(tmp_path), good], "directory"),
        ([str(tmp_path / "broken.json"), good], "not valid JSON"),
        ([good, str(tmp_path / "other.json")], "not a tensorlib-bench results file"),
        ([good, _write(tmp_path / "fields.json", fields)], "lacks ours_ms"),
        ([good, _write(tmp_path / "zero.json", zero)], "no valid ours_ms"),
        ([good, _write(tmp_path / "cuda.json", _doc(device="cuda"))], "mismatched"),
        ([good, _write(tmp_path / "disjoint.json", _doc(rename="!"))],
         "no timed case in common"),
    ]
    for files, needle in cases:
        rc, _, err = run(["--compare", *files], capsys)
        assert_one_line_error(rc, err, needle)
    rc, _, err = run(["--compare", good, good, "--threshold", "-1"], capsys)
    assert_one_line_error(rc, err, "--threshold")
    rc, _, err = run(["--compare", good, good, "--threshold", "nan"], capsys)
    assert_one_line_error(rc, err, "--threshold")


# ---- bad input -----------------------------------------------------------------------------------
@pytest.mark.parametrize("argv,needle", [
    (["--suite", "elementwise,nope"], "unknown suite 'nope'"),
    (["--suite", ""], "--suite"),
    (["--dtype", "float8"], "unknown dtype 'float8'"),
    (["--device", "tpu"], "unknown device 'tpu'"),
    (["--threshold", "5"], "needs --compare"),
    (["--bogus"], "unrecognized arguments"),
    (["--quick", "extra"], "unrecognized arguments"),
    (["--compare", "only-one.json"], "--compare"),
    (["--sizes", "huge"], "--sizes"),
    (["--budget", "-1"], "--budget"),
    (["--load", "-1"], "--load"),
    (["--load", "1000"], "--load"),
    (["--load", "two"], "--load"),
])
def test_bad_arguments(argv, needle, capsys, tmp_path):
    rc, out, err = run(argv + ["--out", str(tmp_path)], capsys)
    assert_one_line_error(rc, err, needle)
    assert not (tmp_path / "results.json").exists()


def test_unwritable_out(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    rc, _, err = run([*TINY, "--suite", "dispatch", "--out", str(blocker / "sub")], capsys)
    assert_one_line_error(rc, err, "--out")


def test_cuda_without_gpu(tmp_path, capsys, monkeypatch):
    # An unusable backend setting makes CUDA unavailable on any machine, GPU or not.
    monkeypatch.setenv("TENSORLIB_CUDA_BACKEND", "no-such-backend")
    context.reset()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            rc, _, err = run(["--device", "cuda", "--out", str(tmp_path)], capsys)
        assert_one_line_error(rc, err, "CUDA is not available")
    finally:
        context.reset()


def test_help_and_script_entry_point(capsys):
    with pytest.raises(SystemExit) as e:
        script_main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "--compare" in out and "--sizes" not in out  # hidden test options stay hidden
    assert "--load" in out


def test_import_does_not_pull_rich_or_matplotlib():
    code = ("import sys, tensorlib, tensorlib.bench, tensorlib.bench.cli; "
            "bad = [m for m in ('rich', 'matplotlib') if m in sys.modules]; "
            "sys.exit(1 if bad else 0)")
    env = dict(os.environ)
    src = os.path.join(os.path.dirname(__file__), "..", "..", "src")
    env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
