"""Profiler and CPU-stream overheads on the CPU (a script printing figures, not a test).

Run: PYTHONPATH=src python benchmarks/profiler_overhead.py [--quick]

Figures (microseconds per op, median of interleaved repeats on a 1-element float32 add):
  * off, before any profiler ran / after (the Profiler fallback is then registered): the
    dispatch path must be unchanged;
  * the launch helper alone against a direct kernel call (what every CPU kernel now pays);
  * after a CPU stream was used (default-stream launches take the checking path);
  * profiling on (plain, record_shapes, profile_memory): target <= 5 us added per op;
  * enqueueing on a CPU stream (host side of an asynchronous launch).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
import timeit

import numpy as np


def per_op_us(fn, n, repeats):
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        times.append((time.perf_counter() - t) / n * 1e6)
    return statistics.median(times)


def interleaved(cases, n, rounds):
    """Median per case over ``rounds`` rounds that each time every case once (machine noise
    hits all cases alike)."""
    acc = {name: [] for name, _, _ in cases}
    for _ in range(rounds):
        for name, fn, ctx in cases:
            with ctx():
                acc[name].append(per_op_us(fn, n, 1))
    return {k: statistics.median(v) for k, v in acc.items()}


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    n, rounds = (2000, 5) if args.quick else (5000, 15)

    import tensorlib as tl
    from tensorlib import profiler
    from tensorlib.runtime.cpu import streams as cs

    a = tl.asarray(np.ones(1, np.float32))
    b = tl.asarray(np.ones(1, np.float32))
    op = lambda: a + b  # noqa: E731
    rows = []

    off_before = interleaved([("off", op, _null)], n, rounds)["off"]
    with profiler.profile():  # registers the Profiler fallback for good
        op()
    off_after = interleaved([("off", op, _null)], n, rounds)["off"]
    rows.append(("add, profiler off, never started", off_before, ""))
    rows.append(("add, profiler off, after a profile ran", off_after,
                 f"{off_after - off_before:+.2f} us (target: unchanged)"))

    def kernel(*args):
        return None
    o, ops = object(), [object(), 1, 2]
    direct = min(timeit.repeat(lambda: kernel(1, 2, 3, 4), number=200_000, repeat=7)) / 2e5
    helper = min(timeit.repeat(lambda: cs.launch(kernel, "x", o, ops, 1, 2, 3, 4),
                               number=200_000, repeat=7)) / 2e5
    rows.append(("launch helper vs direct call", (helper - direct) * 1e6,
                 "added to every CPU kernel call"))

    # Profiling on, interleaved with off so load changes hit both.
    prof_plain = lambda: profiler.profile(activities=["cpu"])  # noqa: E731
    prof_shapes = lambda: profiler.profile(activities=["cpu"], record_shapes=True)  # noqa: E731
    prof_mem = lambda: profiler.profile(activities=["cpu"], profile_memory=True)  # noqa: E731
    res = interleaved([("off", op, _null), ("on", op, prof_plain),
                       ("shapes", op, prof_shapes), ("memory", op, prof_mem)],
                      n // 2, rounds)
    for key, label in (("on", "profiler on"), ("shapes", "profiler on, record_shapes"),
                       ("memory", "profiler on, profile_memory")):
        added = res[key] - res["off"]
        rows.append((f"add, {label}", res[key],
                     f"{added:+.2f} us added ({'ok' if added <= 5 else 'OVER'} <= 5 us)"))

    # After a user CPU stream was used: default-stream launches check their operands.
    s = tl.Stream(device="cpu")
    with tl.stream(s):
        op()
    s.synchronize()
    after_streams = interleaved([("x", op, _null)], n, rounds)["x"]
    rows.append(("add, default stream, after a CPU stream was used", after_streams,
                 f"{after_streams - off_after:+.2f} us vs never"))

    import threading

    def host_side():
        # The stream is held by a gate: only the host's enqueue cost is timed.
        gate = threading.Event()
        with tl.stream(s):
            cs.launch(gate.wait, "gate", (), ())
            t0 = time.perf_counter()
            for _ in range(200):
                a + b
            t1 = time.perf_counter()
        gate.set()
        s.synchronize()
        return (t1 - t0) / 200 * 1e6
    t = min(host_side() for _ in range(rounds))
    rows.append(("add on a CPU stream, host side (enqueue)", t, ""))

    def pipelined():
        with tl.stream(s):
            for _ in range(200):
                a + b
        s.synchronize()
    t = min(timeit.repeat(pipelined, number=1, repeat=rounds)) / 200 * 1e6
    rows.append(("add on a CPU stream, enqueue + run, pipelined", t, ""))

    w = max(len(r[0]) for r in rows)
    print(f"{'case':<{w}}  {'us/op':>8}  note")
    for name, us, note in rows:
        print(f"{name:<{w}}  {us:>8.2f}  {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
