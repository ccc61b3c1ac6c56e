"""Timers: CPU wall clock (perf_counter) and CUDA events.

Every timer returns a :class:`Timing` of per-call milliseconds. Repeats are chosen from a time
budget after a calibration call, so a 1-element op and a 2048^3 GEMM get comparable statistical
weight for comparable wall time; ops much shorter than the timer's resolution are run several
times per sample (``number``) and the sample divided, as ``timeit`` does.
"""
from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass

__all__ = ["Timing", "Budget", "time_cpu_pair", "time_cpu", "time_events"]


@dataclass
class Timing:
    median_ms: float
    q1_ms: float
    q3_ms: float
    repeats: int   # samples taken
    number: int    # calls per sample

    @property
    def iqr_ms(self) -> float:
        return self.q3_ms - self.q1_ms


@dataclass(frozen=True)
class Budget:
    """How long to spend timing one implementation of one case."""
    seconds: float = 0.5        # target wall time for the samples of one side
    min_repeats: int = 5
    max_repeats: int = 200
    min_sample_s: float = 2e-4  # below this a sample loops the op `number` times
    warmup: int = 2


def _stats(per_call_s: list, number: int) -> Timing:
    ms = sorted(t * 1e3 for t in per_call_s)
    if len(ms) >= 2:
        q = statistics.quantiles(ms, n=4, method="inclusive")
        q1, q3 = q[0], q[2]
    else:
        q1 = q3 = ms[0]
    return Timing(statistics.median(ms), q1, q3, len(ms), number)


def _calibrate(fn, budget: Budget) -> tuple:
    """(number, repeats) from one timed call after the warm-up calls."""
    for _ in range(budget.warmup):
        fn()
    t0 = time.perf_counter()
    fn()
    t = max(time.perf_counter() - t0, 1e-8)
    number = 1 if t >= budget.min_sample_s else int(math.ceil(budget.min_sample_s / t))
    repeats = int(budget.seconds / (t * number))
    return number, max(budget.min_repeats, min(budget.max_repeats, repeats))


def _sample(fn, number: int) -> float:
    if number == 1:
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0
    rng = range(number)
    t0 = time.perf_counter()
    for _ in rng:
        fn()
    return (time.perf_counter() - t0) / number


def time_cpu(fn, budget: Budget, sync=None) -> Timing:
    """Median/IQR of ``fn`` (``sync`` is called inside each sample, e.g. a device sync)."""
    f = fn if sync is None else (lambda: (fn(), sync()))
    number, repeats = _calibrate(f, budget)
    return _stats([_sample(f, number) for _ in range(repeats)], number)


def time_cpu_pair(ours, base, budget: Budget) -> tuple:
    """Time two CPU callables with their samples interleaved, so a burst of load from elsewhere
    on a small shared machine hits both sides alike rather than whichever ran at the time."""
    n_a, r_a = _calibrate(ours, budget)
    n_b, r_b = _calibrate(base, budget)
    a, b = [], []
    for i in range(max(r_a, r_b)):
        if i < r_a:
            a.append(_sample(ours, n_a))
        if i < r_b:
            b.append(_sample(base, n_b))
    return _stats(a, n_a), _stats(b, n_b)


def time_events(fn, make_event, flush, budget: Budget, elapsed=None) -> Timing:
    """GPU time of ``fn`` from events recorded on the current stream around each call.

    ``make_event()`` gives a timing event with ``record()``; ``flush()`` enqueues a write over a
    buffer larger than L2 before each call so every repeat starts from a cold cache, as a
    kernel in a real model would. ``elapsed(start, end)`` defaults to ``start.elapsed_time(end)``.
    """
    if elapsed is None:
        def elapsed(s, e):
            return s.elapsed_time(e)
    for _ in range(budget.warmup):
        fn()
    # Calibrate on a few flushed calls (events only; the host does not wait in between).
    est = _event_samples(fn, make_event, flush, 3, elapsed)
    t = max(statistics.median(est), 1e-6) / 1e3
    repeats = max(budget.min_repeats, min(budget.max_repeats, int(budget.seconds / t)))
    return _stats([ms / 1e3 for ms in _event_samples(fn, make_event, flush, repeats, elapsed)],
                  1)


def _event_samples(fn, make_event, flush, n, elapsed) -> list:
    # the kernels' benchmarker owns the event loop (one implementation for CLI and autotuner)
    from ..kernels.cuda.autotune import event_times
    return event_times(fn, n, make_event, flush, elapsed)
