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

__all__ = ["Timing", "Budget", "time_cpu_pair", "time_cpu_group", "time_cpu", "time_events",
           "NOISY_IQR", "is_noisy"]

#: A timing whose interquartile range exceeds this fraction of its median is flagged noisy: the
#: middle half of its samples spread over more than a quarter of the value reported, so other
#: work on the machine (or frequency changes) moved it more than most differences worth
#: reporting. Quiet runs stay well below it (a few percent); a shared 2-core machine busy with
#: other processes goes far above.
NOISY_IQR = 0.25


@dataclass
class Timing:
    median_ms: float
    q1_ms: float
    q3_ms: float
    repeats: int   # samples taken
    number: int    # calls per sample
    p90_ms: float = None  # 90th percentile of the samples (None: not computed)

    @property
    def iqr_ms(self) -> float:
        return self.q3_ms - self.q1_ms


def is_noisy(median_ms, q1_ms, q3_ms, threshold: float = NOISY_IQR) -> bool:
    """True when the interquartile range is above ``threshold`` times the median."""
    if median_ms is None or q1_ms is None or q3_ms is None or not median_ms > 0:
        return False
    return (q3_ms - q1_ms) / median_ms > threshold


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
        p90 = statistics.quantiles(ms, n=10, method="inclusive")[8]
    else:
        q1 = q3 = p90 = ms[0]
    return Timing(statistics.median(ms), q1, q3, len(ms), number, p90)


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
    """Time two CPU callables with their samples interleaved (see time_cpu_group)."""
    return tuple(time_cpu_group([ours, base], budget))


def time_cpu_group(fns, budget: Budget) -> list:
    """Time several CPU callables (tensorlib, NumPy, PyTorch...) with their samples interleaved:
    each repetition takes one sample of every callable that still needs one, so a burst of load
    from elsewhere on a small shared machine hits all of them alike rather than whichever ran at
    the time. The order within a repetition rotates, so none always runs right after another
    one (warm caches, a frequency step). Returns one Timing per callable, in order."""
    plan = [_calibrate(fn, budget) for fn in fns]
    samples = [[] for _ in fns]
    k = len(fns)
    for i in range(max((r for _, r in plan), default=0)):
        for j in range(k):
            idx = (i + j) % k
            number, repeats = plan[idx]
            if i < repeats:
                samples[idx].append(_sample(fns[idx], number))
    return [_stats(s, number) for s, (number, _) in zip(samples, plan)]


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
