"""`python -m tensorlib.bench`: an in-process run on tiny sizes, results.json, plots, --compare
exit codes, and every bad-input path (one line on stderr, non-zero exit, no traceback)."""
import json
import os
import subprocess
import sys
import warnings

import pytest

import tensorlib as tl
from tensorlib.bench import main as bench_main
from tensorlib.bench.__main__ import main as script_main
from tensorlib.bench.suites import SUITES
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
                assert r["ours_roofline_pct"] > 0
        else:
            assert r["reason"]
    ok = {r["suite"] for r in results if r["status"] == "ok"}
    assert {"elementwise", "matmul", "copy", "dispatch"} <= ok

    # plots
    assert (tmp_path / "summary.png").stat().st_size > 1000
    for suite in ok:
        assert (tmp_path / f"{suite}.png").exists()


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


def test_import_does_not_pull_rich_or_matplotlib():
    code = ("import sys, tensorlib, tensorlib.bench, tensorlib.bench.cli; "
            "bad = [m for m in ('rich', 'matplotlib') if m in sys.modules]; "
            "sys.exit(1 if bad else 0)")
    env = dict(os.environ)
    src = os.path.join(os.path.dirname(__file__), "..", "src")
    env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
