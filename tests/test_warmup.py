"""python -m tensorlib.warmup: its work split, its argument errors, and one job's run."""
import pytest

from tensorlib import warmup


def test_tasks_deal_every_op_once_per_dtype():
    work = warmup.tasks(["float32", "int64"], 3)
    assert len(work) == 6
    names = [n for n, _ in warmup._ops()] + [n for n, _ in warmup._float_ops()] + ["creation"]
    for dt in ("float32", "int64"):
        dealt = sorted(n for d, share in work if d == dt for n in share)
        assert dealt == sorted(names)


def test_one_job_runs_its_ops_without_failures(monkeypatch):
    monkeypatch.setattr(warmup, "SIZES", (1000,))
    dtype, secs, failures = warmup._run(("float32", ["add", "sum", "matmul", "exp",
                                                     "creation"]))
    assert dtype == "float32" and secs >= 0 and failures == []


@pytest.mark.parametrize("argv, match", [(["--dtypes", "float33"], "unknown dtype"),
                                         (["--jobs", "0"], "must be >= 1")])
def test_bad_arguments_are_named(argv, match, capsys):
    with pytest.raises(SystemExit):
        warmup.main(argv)
    assert match in capsys.readouterr().err
