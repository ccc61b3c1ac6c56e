"""Running one case: prepare inputs on each implementation, check tensorlib's answer against the
baseline, then time both and turn the times into a result record."""
from __future__ import annotations

import gc
import math

import numpy as np

from .impls import Skip
from .roofline import limit_for
from .timing import Budget, time_cpu, time_cpu_pair, time_events

__all__ = ["Runner", "RECORD_FIELDS"]

#: Fields every record has (None where they do not apply, e.g. the times of a skipped case).
RECORD_FIELDS = ("suite", "name", "device", "dtype", "shape", "size", "kind", "work", "status",
                 "reason", "ours_ms", "ours_q1_ms", "ours_q3_ms", "ours_iqr_ms", "ours_repeats",
                 "baseline", "baseline_ms", "baseline_q1_ms", "baseline_q3_ms",
                 "baseline_iqr_ms", "ratio", "unit", "ours_rate", "baseline_rate", "roofline",
                 "roofline_value", "ours_roofline_pct", "baseline_roofline_pct", "check_error",
                 "timer", "baseline_timer", "note", "extra_baselines")

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

        t_ours, t_base = self._time_pair(case, f_ours, self.base, f_base)
        rec["timer"] = "cuda-events" if self._uses_events(case, self.ours) else "perf_counter"
        rec["baseline_timer"] = ("cuda-events" if self._uses_events(case, self.base) else
                                 "perf_counter")
        self._fill_times(rec, "ours", t_ours)
        self._fill_times(rec, "baseline", t_base)
        rec["ratio"] = t_ours.median_ms / t_base.median_ms if t_base.median_ms > 0 else None
        rec["status"] = "ok"
        self._fill_rates(case, rec)
        del f_base
        for extra in self.extras:
            rec["extra_baselines"].append(self._extra(case, host, ours_host, extra,
                                                      rec["ours_ms"]))

    # ---- pieces ------------------------------------------------------------------------------
    def _bind(self, impl, case, host):
        conv = impl.host_input if case.host_inputs else impl.from_host
        args = [conv(a, case.dtype) for a in host]
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

    def _time(self, case, impl, fn):
        if self._uses_events(case, impl):
            nbytes = self.flush_bytes
            return time_events(fn, impl.make_event, lambda: impl.flush(nbytes), self.budget,
                               impl.elapsed)
        sync = impl.sync if (impl.device != "cpu" and case.kind != "latency") else None
        return time_cpu(fn, self.budget, sync)

    def _time_pair(self, case, f_ours, base, f_base):
        if not self._uses_events(case, self.ours) and not self._uses_events(case, base) and \
                self.device == "cpu":
            return time_cpu_pair(f_ours, f_base, self.budget)
        return self._time(case, self.ours, f_ours), self._time(case, base, f_base)

    @staticmethod
    def _fill_times(rec, side, t):
        rec[f"{side}_ms"] = t.median_ms
        rec[f"{side}_q1_ms"] = t.q1_ms
        rec[f"{side}_q3_ms"] = t.q3_ms
        rec[f"{side}_iqr_ms"] = t.iqr_ms
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

    def _extra(self, case, host, ours_host, impl, ours_ms) -> dict:
        """Check and time an additional baseline (PyTorch-CPU); its failures only annotate."""
        out = {"name": impl.label, "status": "ok", "reason": None, "ms": None, "ratio": None}
        why = impl.supports(case.dtype)
        if why:
            out.update(status="skipped", reason=why)
            return out
        try:
            fn = self._bind(impl, case, host)
            res = impl.to_host(fn())
            if case.check != "stats":
                self._check(case, ours_host, res)
            t = self._time(case, impl, fn)
        except _Mismatch as e:
            out.update(status="failed", reason=f"{impl.label} disagrees with tensorlib: {e}")
            return out
        except Exception as e:  # noqa: BLE001
            out.update(status="skipped", reason=_one_line(e))
            return out
        out["ms"] = t.median_ms
        out["ratio"] = ours_ms / t.median_ms if t.median_ms > 0 else None
        return out


class _Mismatch(Exception):
    pass


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
