"""Running one case: prepare inputs on each implementation, check tensorlib's answer against the
baseline (and any extra baseline, e.g. PyTorch-CPU), then time them all and turn the times into a
result record.

On the CPU the implementations' samples are interleaved (``timing.time_cpu_group``). A record is
flagged ``noisy`` when any timed implementation's interquartile range exceeds
``timing.NOISY_IQR`` (25 %) of its median; ``best_peer_ratio`` is tensorlib's time over the
faster of the baseline and the extra baselines.
"""
from __future__ import annotations

import dataclasses
import gc
import math

import numpy as np

from .impls import Skip
from .roofline import limit_for
from .timing import Budget, is_noisy, time_cpu, time_cpu_group, time_events

__all__ = ["Runner", "RECORD_FIELDS"]

#: Fields every record has (None where they do not apply, e.g. the times of a skipped case).
RECORD_FIELDS = ("suite", "name", "device", "dtype", "shape", "size", "kind", "work", "status",
                 "reason", "ours_ms", "ours_q1_ms", "ours_q3_ms", "ours_iqr_ms", "ours_repeats",
                 "baseline", "baseline_ms", "baseline_q1_ms", "baseline_q3_ms",
                 "baseline_iqr_ms", "ratio", "unit", "ours_rate", "baseline_rate", "roofline",
                 "roofline_value", "ours_roofline_pct", "baseline_roofline_pct", "check_error",
                 "timer", "baseline_timer", "note", "extra_baselines", "ours_p90_ms",
                 "baseline_p90_ms", "noisy", "best_peer", "best_peer_ms", "best_peer_ratio")

# Norm-wise relative error allowed by dtype: max|ours - base| / max|base|.
_RTOL = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 4e-6, "complex64": 4e-6,
         "float64": 1e-12, "complex128": 1e-12}


class _Failed(Exception):
    pass


def _is_unsupported(e: BaseException) -> bool:
    """An operation unavailable for this device/dtype: a skip, not a failure. tensorlib reports
    those as TypeError (UnsupportedKernelError is one); baselines may raise
    NotImplementedError."""
    return isinstance(e, (TypeError, NotImplementedError, Skip))


def _one_line(e: BaseException) -> str:
    msg = str(e).strip().splitlines()
    return msg[0] if msg else type(e).__name__


class Runner:
    def __init__(self, device, ours, base, extras, budget: Budget, flush_bytes: int,
                 rooflines: dict):
        self.device = device
        self.ours = ours
        self.base = base
        self.extras = list(extras)
        self.budget = budget
        self.flush_bytes = flush_bytes
        self.rooflines = rooflines
        self._host = None  # the current case's host inputs (for checks that need them)

    # ---- one case ------------------------------------------------------------------------------
    def run(self, case) -> dict:
        rec = {f: None for f in RECORD_FIELDS}
        rec.update(suite=case.suite, name=case.name, device=self.device, dtype=case.dtype,
                   shape=list(case.shape), size=case.size, kind=case.kind, work=case.work,
                   baseline=self.base.label, extra_baselines=[])
        if case.op == "softmax":
            rec["note"] = f"tensorlib softmax: {self.ours.softmax_kind}"
        try:
            self._run(case, rec)
        except _Failed:
            pass
        except Exception as e:  # noqa: BLE001 - e.g. a failure inside the timing loop
            rec["status"], rec["reason"] = "error", f"{type(e).__name__}: {_one_line(e)}"
        finally:
            self._host = None
            for impl in [self.ours, self.base] + self.extras:
                impl.release()
            gc.collect()
        return rec

    def _skip(self, rec, reason):
        rec["status"], rec["reason"] = "skipped", reason
        raise _Failed

    def _fail(self, rec, status, reason):
        rec["status"], rec["reason"] = status, reason
        raise _Failed

    def _run(self, case, rec):
        tl = self.ours.tl
        if case.skip:
            self._skip(rec, case.skip)
        for fn in case.needs:
            if not hasattr(tl, fn):
                self._skip(rec, f"tl.{fn} does not exist yet")
        for impl in (self.ours, self.base):
            why = impl.supports(case.dtype)
            if why:
                self._skip(rec, why)
        host = case.make_inputs()
        self._host = host

        try:
            f_ours = self._bind(self.ours, case, host)
            out_ours = f_ours()
            self.ours.sync()
        except _Failed:
            raise
        except Exception as e:  # noqa: BLE001 - reported per case, never a traceback
            if _is_unsupported(e):
                self._skip(rec, f"tensorlib: {_one_line(e)}")
            self._fail(rec, "error", f"tensorlib raised {type(e).__name__}: {_one_line(e)}")
        try:
            f_base = self._bind(self.base, case, host)
            out_base = f_base()
            self.base.sync()
        except _Failed:
            raise
        except Exception as e:  # noqa: BLE001
            self._skip(rec, f"baseline: {_one_line(e)}")

        ours_host = self.ours.to_host(out_ours)
        try:
            rec["check_error"] = self._check(case, ours_host, self.base.to_host(out_base))
        except _Mismatch as e:
            self._fail(rec, "failed", f"result differs from {self.base.label}: {e}")
        del out_ours, out_base

        # Extra baselines: checked now, timed together with the others below.
        timed = [(self.ours, f_ours), (self.base, f_base)]
        extra_recs = []
        for extra in self.extras:
            out, fn = self._prepare_extra(case, host, ours_host, extra)
            rec["extra_baselines"].append(out)
            if fn is not None:
                timed.append((extra, fn))
                extra_recs.append(out)

        times = self._time_group(case, timed)
        t_ours, t_base = times[0], times[1]
        rec["timer"] = "cuda-events" if self._uses_events(case, self.ours) else "perf_counter"
        rec["baseline_timer"] = ("cuda-events" if self._uses_events(case, self.base) else
                                 "perf_counter")
        self._fill_times(rec, "ours", t_ours)
        self._fill_times(rec, "baseline", t_base)
        rec["ratio"] = t_ours.median_ms / t_base.median_ms if t_base.median_ms > 0 else None
        for out, t in zip(extra_recs, times[2:]):
            out["ms"], out["p90_ms"] = t.median_ms, t.p90_ms
            out["iqr_ms"] = t.iqr_ms
            out["ratio"] = t_ours.median_ms / t.median_ms if t.median_ms > 0 else None
        rec["noisy"] = any(is_noisy(t.median_ms, t.q1_ms, t.q3_ms) for t in times)
        peers = [(rec["baseline"], t_base.median_ms)] + [(o["name"], o["ms"])
                                                         for o in extra_recs]
        name, ms = min(peers, key=lambda p: p[1])
        rec["best_peer"], rec["best_peer_ms"] = name, ms
        rec["best_peer_ratio"] = t_ours.median_ms / ms if ms > 0 else None
        rec["status"] = "ok"
        self._fill_rates(case, rec)
        del f_base

    # ---- pieces ------------------------------------------------------------------------------
    def _bind(self, impl, case, host):
        conv = impl.host_input if case.host_inputs else impl.from_host
        args = [conv(a, dt) for a, dt in zip(host, case.input_dtypes())]
        for i, v in enumerate(case.views):
            if v == "T":
                args[i] = args[i].T
        return impl.bind(case.op, tuple(args) + tuple(case.extra_args), dict(case.kwargs))

    def _check(self, case, a, b):
        """The norm-wise relative error of tensorlib's result ``a`` against the baseline's
        ``b`` (host arrays; None where values are not comparable); raises _Mismatch."""
        if case.check == "stats":
            _check_stats(case, a)
            return None
        if tuple(a.shape) != tuple(b.shape):
            raise _Mismatch(f"shape {tuple(a.shape)} != baseline {tuple(b.shape)}")
        if case.check == "shape" or a.size == 0:
            return None
        if case.check == "argsort":
            return _check_argsort(self._host, a, b)
        if a.dtype.kind in "biu" and b.dtype.kind in "biu":
            bad = int(np.count_nonzero(a.astype(np.int64) != b.astype(np.int64)))
            if bad:
                raise _Mismatch(f"{bad} of {a.size} integer results differ")
            return 0.0
        a64 = a.astype(np.complex128 if np.iscomplexobj(a) or np.iscomplexobj(b) else np.float64)
        b64 = b.astype(a64.dtype)
        scale = float(np.max(np.abs(b64))) or 1.0
        err = float(np.max(np.abs(a64 - b64))) / scale
        tol = case.rtol or _RTOL.get(case.dtype, 1e-12)
        if not err <= tol:  # also catches NaN
            raise _Mismatch(f"relative error {err:.3g} > {tol:.3g}")
        return err

    def _uses_events(self, case, impl) -> bool:
        # Latency cases measure host-side cost (dispatch, allocation): a wall clock, no sync.
        return impl.timer == "events" and case.kind != "latency"

    def _budget(self, case) -> Budget:
        if case.budget_scale == 1.0:
            return self.budget
        return dataclasses.replace(self.budget, seconds=self.budget.seconds * case.budget_scale)

    def _time(self, case, impl, fn):
        if self._uses_events(case, impl):
            nbytes = self.flush_bytes
            return time_events(fn, impl.make_event, lambda: impl.flush(nbytes),
                               self._budget(case), impl.elapsed)
        sync = impl.sync if (impl.device != "cpu" and case.kind != "latency") else None
        return time_cpu(fn, self._budget(case), sync)

    def _time_group(self, case, timed) -> list:
        """One Timing per (impl, fn): interleaved samples on the CPU, else one after another."""
        if self.device == "cpu" and not any(self._uses_events(case, i) for i, _ in timed):
            return time_cpu_group([fn for _, fn in timed], self._budget(case))
        return [self._time(case, impl, fn) for impl, fn in timed]

    @staticmethod
    def _fill_times(rec, side, t):
        rec[f"{side}_ms"] = t.median_ms
        rec[f"{side}_q1_ms"] = t.q1_ms
        rec[f"{side}_q3_ms"] = t.q3_ms
        rec[f"{side}_iqr_ms"] = t.iqr_ms
        rec[f"{side}_p90_ms"] = t.p90_ms
        if side == "ours":
            rec["ours_repeats"] = t.repeats

    def _fill_rates(self, case, rec):
        if case.kind == "latency" or not case.work:
            return
        unit = "GFLOP/s" if case.kind == "compute" else "GB/s"
        rec["unit"] = unit
        rec["ours_rate"] = case.work / (rec["ours_ms"] / 1e3) / 1e9
        rec["baseline_rate"] = case.work / (rec["baseline_ms"] / 1e3) / 1e9
        value, _, note = limit_for(self.rooflines, case.roof, case.dtype)
        if value:
            rec["roofline"] = case.roof
            rec["roofline_value"] = value
            rec["ours_roofline_pct"] = 100 * rec["ours_rate"] / value
            rec["baseline_roofline_pct"] = 100 * rec["baseline_rate"] / value
            if note:
                rec["note"] = "; ".join(x for x in (rec["note"], note) if x)

    def _prepare_extra(self, case, host, ours_host, impl):
        """(record, callable) of an additional baseline (PyTorch-CPU) after checking its result;
        the callable is None when it cannot run or disagrees (its failures only annotate)."""
        out = {"name": impl.label, "status": "ok", "reason": None, "ms": None, "ratio": None}
        why = impl.supports(case.dtype)
        if why:
            out.update(status="skipped", reason=why)
            return out, None
        try:
            fn = self._bind(impl, case, host)
            res = impl.to_host(fn())
            if case.check != "stats":
                self._check(case, ours_host, res)
        except _Mismatch as e:
            out.update(status="failed", reason=f"{impl.label} disagrees with tensorlib: {e}")
            return out, None
        except Exception as e:  # noqa: BLE001
            out.update(status="skipped", reason=_one_line(e))
            return out, None
        return out, fn


class _Mismatch(Exception):
    pass


def _check_argsort(host, a, b):
    """``a`` (tensorlib's argsort) must be a permutation that sorts the input; the baseline's
    ``b`` gives the sorted values. Ties may be ordered differently (NumPy's default sort is not
    stable), so indices are not compared directly."""
    x = host[0]
    n = x.shape[-1]
    ai = a.astype(np.int64)
    if ai.min() < 0 or ai.max() >= n or np.unique(ai).size != ai.size:
        raise _Mismatch("argsort result is not a permutation")
    if not np.array_equal(x[ai], x[b.astype(np.int64)], equal_nan=True):
        raise _Mismatch("argsort result does not sort the input")
    return 0.0


def _check_stats(case, a):
    """Random numbers: shape, finiteness, and mean/std within six standard errors of the
    distribution's (a correct generator fails about once in 10^8 runs)."""
    n = a.size
    if tuple(a.shape) != tuple(case.kwargs["shape"]):
        raise _Mismatch(f"shape {tuple(a.shape)} != {tuple(case.kwargs['shape'])}")
    x = a.astype(np.float64)
    if not np.all(np.isfinite(x)):
        raise _Mismatch("non-finite random numbers")
    m, sd = float(x.mean()), float(x.std())
    if case.op == "randn":
        ok = abs(m) <= 6 / math.sqrt(n) and abs(sd - 1) <= 6 * math.sqrt(0.5 / n) + 1e-3
        what = f"mean {m:.4f}, std {sd:.4f}; expected 0, 1"
    else:
        ok = (abs(m - 0.5) <= 6 * math.sqrt(1 / 12 / n) and x.min() >= 0 and x.max() <= 1
              and abs(sd - math.sqrt(1 / 12)) <= 6 * math.sqrt(0.0056 / n) + 1e-3)
        what = f"mean {m:.4f}, std {sd:.4f}, range [{x.min():.3g}, {x.max():.3g}]"
    if not ok:
        raise _Mismatch(f"distribution off: {what}")
