"""Command line of ``python -m tensorlib.bench`` / ``tensorlib-bench``.

Exit status: 0 when every case ran (or was skipped), 1 when a case's result disagreed with the
baseline or raised (or, with --compare, when a case regressed past --threshold), 2 for bad
input (unknown suite/dtype/device, CUDA or a CUDA baseline missing, an unwritable --out, an
unreadable or mismatched --compare file). Errors are one line on stderr, never a traceback
(set TENSORLIB_BENCH_DEBUG=1 to see one for an internal error).
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time

from .suites import SIZE_SETS, SUITES

__all__ = ["main", "build_parser"]

PROG = "tensorlib-bench"


class UsageError(Exception):
    """Bad input: reported as one line on stderr, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse would print the whole usage; one line is enough
        raise UsageError(f"{message} (see {PROG} --help)")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="Benchmark tensorlib against NumPy (CPU) or CuPy/nvmath-"
                "python (CUDA): checks each case's result first, then times both and reports "
                "ratios and the fraction of measured rooflines.",
                epilog="See docs/benchmarks.md for how to read the output.")
    p.add_argument("--device", default="cpu", metavar="{cpu,cuda}",
                   help="device to benchmark (default: cpu)")
    p.add_argument("--suite", default="all", metavar="LIST",
                   help=f"comma-separated suites, or 'all' (default): {','.join(SUITES)}")
    p.add_argument("--dtype", default="float32", metavar="LIST",
                   help="comma-separated dtypes (default: float32), e.g. float32,float64")
    p.add_argument("--quick", action="store_true",
                   help="fewer sizes and shorter timing (about a minute on 2 cores)")
    p.add_argument("--out", default="bench-out", metavar="DIR",
                   help="directory for results.json and the PNG plots (default: bench-out)")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.add_argument("--load", type=int, default=0, metavar="N",
                   help="run N busy-loop processes beside the benchmark (killed at the end), "
                        "to see what a busy laptop, CI runner or worker pool sees (default 0)")
    p.add_argument("--compare", nargs=2, metavar=("OLD.json", "NEW.json"),
                   help="compare two results files instead of running; exit 1 on a regression")
    p.add_argument("--threshold", type=float, default=None, metavar="PCT",
                   help="with --compare: percent slowdown counted as a regression (default 10)")
    # Hidden knobs for the tests and for quick experiments.
    p.add_argument("--sizes", choices=SIZE_SETS, default=None, help=argparse.SUPPRESS)
    p.add_argument("--budget", type=float, default=None, help=argparse.SUPPRESS)
    p.add_argument("--cuda-baseline", choices=("auto", "numpy"), default="auto",
                   help=argparse.SUPPRESS)
    p.add_argument("--no-torch", action="store_true", help=argparse.SUPPRESS)
    return p


def _split(value: str, what: str, valid, allow_all=False) -> list:
    items = [v.strip() for v in value.split(",") if v.strip()]
    if not items:
        raise UsageError(f"--{what}: empty list")
    if allow_all and items == ["all"]:
        return list(valid)
    bad = [v for v in items if v not in valid]
    if bad:
        noun = what if len(bad) == 1 else what + "s"
        raise UsageError(f"--{what}: unknown {noun} {', '.join(map(repr, bad))}; choose from "
                         f"{', '.join(valid)}")
    return list(dict.fromkeys(items))


def _dtype_names():
    from ..dtypes import ALL_DTYPES
    return [d.name for d in ALL_DTYPES]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        return _main(argv)
    except UsageError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001 - a one-line report; the traceback on request
        if os.environ.get("TENSORLIB_BENCH_DEBUG"):
            raise
        print(f"{PROG}: internal error: {type(e).__name__}: {e} (set TENSORLIB_BENCH_DEBUG=1 "
              f"for the traceback)", file=sys.stderr)
        return 1


def _main(argv) -> int:
    args = build_parser().parse_args(argv)
    if args.compare:
        return _compare(args)
    if args.threshold is not None:
        raise UsageError("--threshold needs --compare OLD.json NEW.json")
    if args.device not in ("cpu", "cuda"):
        raise UsageError(f"--device: unknown device {args.device!r}; choose cpu or cuda")
    suites = _split(args.suite, "suite", SUITES, allow_all=True)
    dtypes = _split(args.dtype, "dtype", _dtype_names())
    if args.budget is not None and not (args.budget > 0 and math.isfinite(args.budget)):
        raise UsageError(f"--budget: expected a positive number of seconds, got {args.budget}")
    from .load import MAX_LOAD
    if not 0 <= args.load <= MAX_LOAD:
        raise UsageError(f"--load: expected a number of processes from 0 to {MAX_LOAD}, got "
                         f"{args.load}")
    ours, base, extras, flush_bytes = _implementations(args)  # before --out: fail early
    out_dir = _prepare_out(args.out)
    return _run(args, argv, suites, dtypes, out_dir, ours, base, extras, flush_bytes)


def _compare(args) -> int:
    from .compare import CompareError, compare
    thr = 10.0 if args.threshold is None else args.threshold
    if not (math.isfinite(thr) and thr >= 0):
        raise UsageError(f"--threshold: expected a percentage >= 0, got {args.threshold}")
    try:
        return compare(args.compare[0], args.compare[1], thr)
    except CompareError as e:
        raise UsageError(str(e)) from None


def _prepare_out(path: str) -> str:
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise UsageError(f"--out: cannot create directory {path!r}: {e.strerror or e}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise UsageError(f"--out: directory {path!r} is not writable")
    return path


def _implementations(args):
    from .impls import BaselineUnavailable, NumpyImpl, Ours, cuda_baseline, torch_cpu_baseline
    import tensorlib as tl
    if args.device == "cpu":
        extras = [] if args.no_torch else [t for t in (torch_cpu_baseline(),) if t]
        return Ours("cpu"), NumpyImpl(), extras, 0
    if not tl.cuda.is_available():
        from ..runtime.cuda import context
        raise UsageError(f"--device cuda: CUDA is not available ({context.unavailable_reason()})")
    if tl.cuda.backend() == "interpret" and args.cuda_baseline != "numpy":
        raise UsageError("--device cuda: the CUDA backend is the host-memory interpreter "
                         "(TENSORLIB_CUDA_BACKEND=interpret); there is no GPU to benchmark")
    if args.cuda_baseline == "numpy":  # plumbing test: host NumPy stands in for the baseline
        base = NumpyImpl()
        base.label += " (host stand-in)"
    else:
        try:
            base = cuda_baseline()
        except BaselineUnavailable as e:
            raise UsageError(f"--device cuda: {e}") from None
    props = tl.cuda.get_device_properties()
    flush = 1 << 20 if tl.cuda.backend() == "interpret" else max(2 * props.L2_cache_size,
                                                                 64 << 20)
    return Ours("cuda"), base, [], flush


def _budget(size_set, override):
    from .timing import Budget
    b = {"full": Budget(0.4), "quick": Budget(0.12, min_repeats=3),
         "tiny": Budget(0.002, min_repeats=2, max_repeats=5, warmup=1)}[size_set]
    if override is not None:
        b = Budget(override, b.min_repeats, b.max_repeats, b.min_sample_s, b.warmup)
    return b


def _run(args, argv, suites, dtypes, out_dir, ours, base, extras, flush_bytes) -> int:
    from . import env, roofline
    from .load import BusyLoad
    from .report import Progress, fmt_shape, print_table, summarize, write_json
    from .runner import Runner
    from .suites import build_cases

    size_set = args.sizes or ("quick" if args.quick else "full")
    budget = _budget(size_set, args.budget)
    cases = build_cases(suites, dtypes, args.device, size_set)
    load_start = env.load_average()
    busy = env.busy_warning()
    if busy:
        print(f"{PROG}: {busy}", file=sys.stderr)
    t0 = time.perf_counter()
    results = []
    with Progress(len(cases) + 1) as prog:
        # Rooflines first, on the machine as it is: they estimate what it can do, and the
        # cases' % roof under --load then shows what the load costs.
        prog.step("measuring rooflines")
        roofs = roofline.measure(args.device, base, dtypes, size_set)
        prog.advance()
        # Each case's untimed warm-up compiles (or loads) its parallel variants. Deferred to a
        # background thread (what users' scripts get), a compile holds the GIL for seconds
        # while *later* cases are timed: the first run after a kernel-cache change measured
        # the 1e3 reductions at 50-127x NumPy (2026-12-05). First calls are measured apart
        # (benchmarks/cold_start_cpu.py).
        from ..runtime.cpu import cores
        cores.DEFER_PARALLEL_COMPILE = False
        runner = Runner(args.device, ours, base, extras, budget, flush_bytes, roofs)
        with BusyLoad(args.load):  # always stopped, even on Ctrl-C or an error
            for case in cases:
                prog.step(f"{case.suite}: {case.name} {fmt_shape(case.shape)} {case.dtype}")
                results.append(runner.run(case))
                prog.advance()
            # Our own busy processes count in the load average: leave them out of the check.
            busy_end = busy or env.busy_warning(own_load=args.load)
    if args.device == "cuda":
        ours.release_flush()
    wall = time.perf_counter() - t0
    meta = env.collect(args.device, [PROG] + list(argv))
    meta.update(baseline=base.label, extra_baselines=[e.label for e in extras],
                wall_seconds=round(wall, 2), load_average_start=load_start,
                load_processes=args.load, busy_warning=busy_end)
    config = {"suites": suites, "dtypes": dtypes, "size_set": size_set,
              "budget_seconds": budget.seconds, "min_repeats": budget.min_repeats,
              "l2_flush_bytes": flush_bytes or None}
    json_path = os.path.join(out_dir, "results.json")
    try:
        write_json(json_path, meta, config, roofs, results, summarize(results))
    except OSError as e:
        raise UsageError(f"--out: cannot write {json_path}: {e.strerror or e}") from None
    print_table(results, meta, roofs)
    written = [json_path]
    if not args.no_plots:
        try:
            from .plots import write_plots
            written += write_plots(results, roofs, out_dir)
        except ImportError:
            print(f"{PROG}: matplotlib is not installed: plots skipped (pip install "
                  f"'tensorlib[bench]')", file=sys.stderr)
    print(f"wrote {', '.join(written)} in {wall:.0f} s")
    return 1 if any(r["status"] in ("failed", "error") for r in results) else 0
