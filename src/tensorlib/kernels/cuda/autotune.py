"""GPU benchmarker and config autotuner of our own: Triton's ``do_bench`` and ``Autotuner``
depend on PyTorch, which tensorlib never uses.

* :func:`benchmark` times a callable that enqueues work on the current CUDA stream with timing
  events (``tl.cuda.Event(enable_timing=True)``) around each rep. Before every rep an L2-flush
  buffer (256 MiB by default, from the caching allocator) is zeroed by tensorlib's
  ``fill_range`` kernel: each rep starts from a cold L2, as a kernel inside a model would, and
  the flush keeps the GPU busy while the host enqueues the rep, so host launch latency stays
  out of the timed window. Warm-up calls (compiles) come first; a few reps estimate the time,
  which sets the rep count from a time budget. Returns median and quartiles in ms.
  :func:`event_times` is the bare loop, with injectable events and flush (the bench CLI times
  CuPy through it).
* :class:`Autotuner` picks, per (device, dtype class, shape key), the fastest of a kernel's
  configs by timing each once, prunes configs whose estimated shared memory exceeds the
  device's opt-in limit, and caches the choice in memory and in a JSON file under
  ``<tensorlib cache dir>/autotune/`` named by kernel, device name and Triton version (a
  driver / GPU / compiler change retunes). The timer, the shared-memory limit and the cache
  dir are attributes, so the selection logic is testable without a GPU. Kernels must not call
  the autotuner on the interpret backend (timings mean nothing there): they use a
  deterministic default config instead. ``TENSORLIB_AUTOTUNE=0`` turns tuning off everywhere
  (the kernel's size heuristic is used).
"""
from __future__ import annotations

import json
import math
import os
import re
import statistics
import threading
import warnings
from dataclasses import dataclass

from ...runtime.cache_files import cache_root as _cache_root

__all__ = ["BenchResult", "L2Flusher", "benchmark", "event_times", "summarize", "Autotuner",
           "enabled", "cache_root", "device_smem_limit", "DEFAULT_FLUSH_BYTES"]

DEFAULT_FLUSH_BYTES = 256 << 20   # larger than the L2 of every current GPU (H100: 50 MiB)
ENV_AUTOTUNE = "TENSORLIB_AUTOTUNE"


# ---- benchmarking ------------------------------------------------------------------------------
@dataclass(frozen=True)
class BenchResult:
    """Per-rep GPU milliseconds: median, quartiles, minimum, and how many reps."""
    median_ms: float
    q1_ms: float
    q3_ms: float
    min_ms: float
    reps: int

    @property
    def iqr_ms(self) -> float:
        return self.q3_ms - self.q1_ms


def summarize(times_ms) -> BenchResult:
    """Median, quartiles (inclusive method) and minimum of per-rep times."""
    ms = sorted(float(t) for t in times_ms)
    if not ms:
        raise ValueError("summarize(): argument 'times_ms' is empty")
    if len(ms) >= 2:
        q1, _, q3 = statistics.quantiles(ms, n=4, method="inclusive")
    else:
        q1 = q3 = ms[0]
    return BenchResult(statistics.median(ms), q1, q3, ms[0], len(ms))


def event_times(fn, n, make_event, flush=None, elapsed=None) -> list:
    """``n`` reps of ``fn()``, each between two timing events (``flush()`` first when given);
    the host waits once, at the end. Returns per-rep milliseconds."""
    if elapsed is None:
        def elapsed(s, e):
            return s.elapsed_time(e)
    starts = [make_event() for _ in range(n)]
    ends = [make_event() for _ in range(n)]
    for s, e in zip(starts, ends):
        if flush is not None:
            flush()
        s.record()
        fn()
        e.record()
    ends[-1].synchronize()
    return [elapsed(s, e) for s, e in zip(starts, ends)]


class L2Flusher:
    """A buffer of ``nbytes`` on CUDA device ``device`` from the caching allocator; calling the
    object enqueues a zero fill of it on the current stream. ``close()`` (or the end of a
    ``with`` block) returns the memory to the allocator's cache."""

    def __init__(self, device: int, nbytes: int = DEFAULT_FLUSH_BYTES):
        from ... import dtypes as _dt
        from ...allocation import empty
        if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 4:
            raise ValueError(f"L2Flusher(): argument 'nbytes' must be an int >= 4, got "
                             f"{nbytes!r}")
        self.device = device
        self.nbytes = nbytes
        self._buf = empty((nbytes // 4,), dtype=_dt.int32, device=f"cuda:{device}")

    def __call__(self) -> None:
        from .pointwise import fill_range
        fill_range(self._buf, 0, 0)   # a write of every line: evicts whatever L2 held

    def close(self) -> None:
        self._buf = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def _check_count(op, name, value, low):
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{op}(): argument '{name}' must be an int >= {low}, got {value!r}")


def benchmark(fn, *, warmup: int = 3, reps: int | None = None, budget_ms: float = 100.0,
              min_reps: int = 5, max_reps: int = 1000, flush_bytes: int | None = None,
              device=None, make_event=None, elapsed=None, flush=None) -> BenchResult:
    """GPU time of ``fn()`` (which enqueues its work on the current stream of ``device``).

    ``warmup`` untimed calls (compiles happen there), a sync, 3 flushed reps to estimate the
    time, then ``reps`` reps (default: as many as fit ``budget_ms``, clamped to
    ``[min_reps, max_reps]``). ``flush``: a callable run before each rep, False for none,
    default an :class:`L2Flusher` of ``flush_bytes`` (default 256 MiB). ``make_event`` /
    ``elapsed``: the event factory and ``elapsed(start, end) -> ms`` (default tensorlib's
    timing events on the current stream).
    """
    from ...runtime.cuda import context
    from ...runtime.cuda.streams import Event, current_stream
    _check_count("benchmark", "warmup", warmup, 0)
    _check_count("benchmark", "min_reps", min_reps, 1)
    _check_count("benchmark", "max_reps", max_reps, min_reps)
    if reps is not None:
        _check_count("benchmark", "reps", reps, 1)
    if not (isinstance(budget_ms, (int, float)) and budget_ms > 0):
        raise ValueError(f"benchmark(): argument 'budget_ms' must be > 0, got {budget_ms!r}")
    idx = context.resolve_index(device, "benchmark")
    if make_event is None:
        def make_event():
            return Event(enable_timing=True)
    own = None
    if flush is None:
        flush = own = L2Flusher(idx, DEFAULT_FLUSH_BYTES if flush_bytes is None
                                else flush_bytes)
    elif flush is False:
        flush = None
    prev = context.current_device()
    if prev != idx:
        context.set_device(idx)
    try:
        for _ in range(warmup):
            fn()
        current_stream(idx).synchronize()
        if reps is None:
            est = statistics.median(event_times(fn, 3, make_event, flush, elapsed))
            reps = max(min_reps, min(max_reps, int(budget_ms / max(est, 1e-4))))
        return summarize(event_times(fn, reps, make_event, flush, elapsed))
    finally:
        if own is not None:
            own.close()
        if prev != idx:
            context.set_device(prev)


# ---- autotuning --------------------------------------------------------------------------------
def enabled() -> bool:
    """False when ``TENSORLIB_AUTOTUNE`` is 0/false/off/no."""
    return os.environ.get(ENV_AUTOTUNE, "1").strip().lower() not in ("0", "false", "off", "no")


def cache_root() -> str:
    """``$TENSORLIB_CACHE_DIR/autotune`` (default ``~/.cache/tensorlib/autotune``)."""
    return os.path.join(_cache_root(), "autotune")


def device_smem_limit(device: int) -> int:
    """Shared memory one block may use on ``device`` when it opts in (what Triton launches
    with), in bytes; the default per-block limit if Triton cannot tell."""
    try:
        import triton
        return int(triton.runtime.driver.active.utils.get_device_properties(device)
                   ["max_shared_mem"])
    except Exception:  # noqa: BLE001 - no Triton driver: the conservative default limit
        from ...runtime.cuda import context
        return context.require("autotune").get_properties(device).max_shared_memory_per_block


def _device_identity(device: int) -> tuple:
    """(device name, Triton version): what makes a stored choice valid."""
    import triton
    from ...runtime.cuda import context
    return context.require("autotune").get_properties(device).name, triton.__version__


# Compile / resource failures make a config unusable on this device (Triton's autotuner skips
# them the same way); anything else is a real error and propagates.
_SKIPPABLE = ("OutOfResources", "CompileTimeAssertionFailure", "PTXASError")


def _skippable(exc) -> bool:
    return any(c.__name__ in _SKIPPABLE for c in type(exc).__mro__)


def _label(cfg) -> str:
    return ",".join(f"{k}={v}" for k, v in cfg._asdict().items())


class Autotuner:
    """Chooses among ``configs[cls]`` (namedtuples) for a kernel called ``name``.

    ``smem_bytes(cfg, cls)``: estimated shared memory of a config (None: never pruned).
    Attributes to replace (tests, tools): ``timer(fn) -> ms`` (default: median of
    :func:`benchmark` with a short budget), ``smem_limit(device) -> bytes`` (default
    :func:`device_smem_limit`), ``identity(device) -> (device name, triton version)``,
    ``cache_dir`` (None: :func:`cache_root`, read when a file is first needed; False: no disk
    cache).
    """

    def __init__(self, name: str, configs: dict, smem_bytes=None, *, timer=None,
                 smem_limit=None, cache_dir=None, identity=None):
        self.name = name
        self.configs = configs
        self.smem_bytes = smem_bytes
        self.timer = timer or self._default_timer
        self.smem_limit = smem_limit or device_smem_limit
        self.identity = identity or _device_identity
        self.cache_dir = cache_dir
        self.timings = {}       # (identity, cls, key) -> {label: ms}, of the last tuning
        self._mem = {}          # (device index, cls, key) -> config
        self._ids = {}          # device index -> identity
        self._disk = {}         # identity -> {entry key: config} loaded from the file
        self._lock = threading.RLock()

    @staticmethod
    def _default_timer(fn) -> float:
        from ...runtime.cuda.driver import OutOfMemoryError
        kw = dict(warmup=2, budget_ms=25.0, min_reps=5, max_reps=100)
        try:
            return benchmark(fn, **kw).median_ms
        except OutOfMemoryError:
            # no room for the flush buffer: warm-L2 times still rank configs; the user's
            # call must not fail because of tuning
            return benchmark(fn, flush=False, **kw).median_ms

    # -- public ---------------------------------------------------------------------------------
    def choose(self, cls: str, key: str, run, device: int = 0):
        """The config for (cls, key) on ``device``; on a miss every candidate is timed by
        ``timer(lambda: run(cfg))`` (``run`` launches the kernel with a config) and the fastest
        is remembered."""
        cfg = self._mem.get((device, cls, key))
        if cfg is not None:
            return cfg
        with self._lock:
            cfg = self._mem.get((device, cls, key))
            if cfg is not None:
                return cfg
            ident = self._ids.get(device)
            if ident is None:
                ident = self._ids[device] = tuple(self.identity(device))
            cfg = self._stored(ident, cls, key)
            if cfg is None:
                cfg = self._tune(ident, cls, key, run, device)
            self._mem[(device, cls, key)] = cfg
            return cfg

    def cached(self, cls: str, key: str, device: int = 0):
        """The config already chosen for (cls, key) on ``device`` in this process, or None."""
        return self._mem.get((device, cls, key))

    def candidates(self, cls: str, device: int) -> list:
        """configs[cls] that fit the device's shared memory (the smallest one if none does)."""
        configs = list(self.configs[cls])
        if self.smem_bytes is None:
            return configs
        limit = self.smem_limit(device)
        fit = [c for c in configs if self.smem_bytes(c, cls) <= limit]
        return fit or [min(configs, key=lambda c: self.smem_bytes(c, cls))]

    def clear(self) -> None:
        """Forget in-memory choices (the disk cache stays)."""
        with self._lock:
            self._mem.clear()
            self._ids.clear()
            self._disk.clear()

    def cache_path(self, ident) -> str | None:
        if self.cache_dir is False:
            return None
        root = self.cache_dir or cache_root()
        tag = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{self.name}-{ident[0]}-triton-{ident[1]}")
        return os.path.join(root, tag + ".json")

    # -- internals ------------------------------------------------------------------------------
    def _tune(self, ident, cls, key, run, device):
        times = {}
        best, best_ms = None, math.inf
        for cfg in self.candidates(cls, device):
            try:
                ms = float(self.timer(lambda cfg=cfg: run(cfg)))
            except Exception as e:  # noqa: BLE001 - filtered by _skippable
                if not _skippable(e):
                    raise
                ms = math.inf
            times[_label(cfg)] = ms
            if ms < best_ms:
                best, best_ms = cfg, ms
        self.timings[(ident, cls, key)] = times
        if best is None:
            raise RuntimeError(f"{self.name}(): no config of dtype class {cls!r} can run on "
                               f"cuda:{device} ({ident[0]}) for shape {key!r}: {times}")
        self._store(ident, cls, key, best, best_ms, times)
        return best

    def _entry(self, cls, key):
        return f"{cls}|{key}"

    def _stored(self, ident, cls, key):
        table = self._disk.get(ident)
        if table is None:
            table = self._disk[ident] = self._load(ident)
        fields = table.get(self._entry(cls, key))
        if fields is None:
            return None
        for cfg in self.configs.get(cls, ()):   # only a config that still exists counts
            if cfg._asdict() == fields:
                return cfg
        return None

    def _read(self, path):
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError):
            return None
        return doc if isinstance(doc, dict) else None

    def _load(self, ident) -> dict:
        path = self.cache_path(ident)
        doc = None if path is None else self._read(path)
        if not doc or doc.get("kernel") != self.name or \
                [doc.get("device"), doc.get("triton")] != list(ident):
            return {}
        entries = doc.get("entries")
        if not isinstance(entries, dict):
            return {}
        return {k: v["config"] for k, v in entries.items()
                if isinstance(v, dict) and isinstance(v.get("config"), dict)}

    def _store(self, ident, cls, key, cfg, ms, times):
        entry = self._entry(cls, key)
        self._disk.setdefault(ident, {})[entry] = cfg._asdict()
        path = self.cache_path(ident)
        if path is None:
            return
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            # merge with what other processes wrote since we loaded
            doc = self._read(path)
            if not doc or [doc.get("device"), doc.get("triton")] != list(ident) or \
                    not isinstance(doc.get("entries"), dict):
                doc = {"kernel": self.name, "device": ident[0], "triton": ident[1],
                       "entries": {}}
            doc["entries"][entry] = {"config": cfg._asdict(), "ms": ms,
                                     "timings": {k: (v if math.isfinite(v) else None)
                                                 for k, v in times.items()}}
            tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
            with open(tmp, "w") as f:
                json.dump(doc, f, indent=1, sort_keys=True)
            os.replace(tmp, path)   # atomic: readers never see half a file
        except OSError as e:
            warnings.warn(f"{self.name} autotuner: cannot write the cache {path} ({e}); the "
                          f"choice is kept in memory only", RuntimeWarning, stacklevel=3)
