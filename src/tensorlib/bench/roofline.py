"""Rooflines: the limits each case's throughput is compared with.

* memory: the best rate of a large copy (bytes read + bytes written per second). On the CPU
  NumPy's copy is single-threaded, so the copy is also split over one thread per usable core and
  the better of the two is kept; on CUDA it is the baseline's device-to-device copy.
* gemm: the best rate of a large BLAS matmul per dtype (NumPy's BLAS on the CPU, cuBLAS or
  cuBLASLt through the CUDA baseline), 2*n^3 flops per call.
* pcie (CUDA only): a host-to-device copy from pinned memory.

Each limit is the best of a few repeats, not the median: it estimates what the machine can do.
"""
from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

__all__ = ["measure", "limit_for", "SIZES"]

# (copy bytes, GEMM n, repeats) per size set
SIZES = {"full": (256 << 20, 2048, 5), "quick": (128 << 20, 2048, 3), "tiny": (4 << 20, 128, 2)}


def _usable_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return os.cpu_count() or 1


def _best_s(fn, repeats, min_total_s=0.05) -> float:
    """Best time of ``fn`` over at least ``repeats`` calls and ``min_total_s`` seconds (short
    calls get more tries: one unlucky time slice must not set the limit)."""
    fn()
    best = float("inf")
    start = time.perf_counter()
    i = 0
    while i < repeats or (time.perf_counter() - start < min_total_s and i < 1000):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
        i += 1
    return best


def cpu_bandwidth(nbytes: int, repeats: int) -> dict:
    n = nbytes // 8
    src = np.ones(n)
    dst = np.zeros(n)  # both touched: page faults stay out of the timing
    single = 2 * src.nbytes / _best_s(lambda: np.copyto(dst, src), repeats)
    cores = _usable_cores()
    best, method = single, "NumPy copy, 1 thread"
    if cores > 1:
        bounds = np.linspace(0, n, cores + 1).astype(int)
        parts = [(dst[a:b], src[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
        with ThreadPoolExecutor(cores) as pool:  # np.copyto releases the GIL
            def threaded():
                list(pool.map(lambda p: np.copyto(*p), parts))
            multi = 2 * src.nbytes / _best_s(threaded, repeats)
        if multi > best:
            best, method = multi, f"NumPy copy split over {cores} threads"
    return {"value": best / 1e9, "unit": "GB/s",
            "method": f"{method}, {nbytes >> 20} MiB, best of {repeats}"}


def cpu_gemm(dtype: str, n: int, repeats: int) -> dict:
    rng = np.random.default_rng(0)
    a = rng.random((n, n)).astype(dtype)
    b = rng.random((n, n)).astype(dtype)
    t = _best_s(lambda: np.matmul(a, b), repeats)
    return {"value": 2.0 * n ** 3 / t / 1e9, "unit": "GFLOP/s",
            "method": f"NumPy matmul {dtype} {n}x{n}, best of {repeats}"}


def _events_best_ms(impl, fn, repeats) -> float:
    fn()
    best = float("inf")
    for _ in range(repeats):
        s, e = impl.make_event(), impl.make_event()
        s.record()
        fn()
        e.record()
        e.synchronize()
        best = min(best, impl.elapsed(s, e))
    return best


def cuda_rooflines(base, dtypes, size_set) -> dict:
    """Rooflines measured with the CUDA baseline (CuPy arrays, its events)."""
    nbytes = {"full": 1 << 30, "quick": 512 << 20, "tiny": 16 << 20}[size_set]
    n = {"full": 8192, "quick": 4096, "tiny": 256}[size_set]
    reps = 5 if size_set == "full" else 3
    out = {"memory": _cuda_copy(base, nbytes, reps)}
    try:
        out["pcie"] = _cuda_pinned_h2d(base, nbytes, reps)
    except Exception as e:  # noqa: BLE001 - the pcie limit is optional
        out["pcie"] = {"value": None, "unit": "GB/s", "method": f"not measured ({e})"}
    out["gemm"] = {dt: _cuda_gemm(base, dt, n, reps)
                   for dt in _gemm_dtypes(dtypes, ("float16", "float32", "float64"))}
    return out


# Each helper owns its device buffers, so they are freed when it returns.
def _cuda_copy(base, nbytes, reps):
    cp = base.cp
    src = cp.ones(nbytes // 4, dtype=np.float32)
    dst = cp.empty_like(src)
    ms = _events_best_ms(base, lambda: cp.copyto(dst, src), reps)
    return {"value": 2 * nbytes / (ms / 1e3) / 1e9, "unit": "GB/s",
            "method": f"CuPy device copy {nbytes >> 20} MiB, best of {reps}"}


def _cuda_pinned_h2d(base, nbytes, reps):
    import cupyx
    pinned = cupyx.empty_pinned((nbytes // 4,), dtype=np.float32)
    pinned[...] = 1
    dev = base.cp.empty(pinned.shape, dtype=np.float32)
    ms = _events_best_ms(base, lambda: dev.set(pinned), reps)
    return {"value": nbytes / (ms / 1e3) / 1e9, "unit": "GB/s",
            "method": f"CuPy host->device copy from pinned memory, {nbytes >> 20} MiB"}


def _cuda_gemm(base, dt, n, reps):
    a = base.cp.asarray(np.random.default_rng(0).random((n, n)).astype(dt))
    try:
        ms = _events_best_ms(base, base.bind("matmul", (a, a), {}), reps)
    finally:
        base.release()
    return {"value": 2.0 * n ** 3 / (ms / 1e3) / 1e9, "unit": "GFLOP/s",
            "method": f"{base.label} matmul {dt} {n}x{n}, best of {reps}"}


def _gemm_dtypes(dtypes, measurable):
    want = [d for d in dtypes if d in measurable]
    return want or ["float32"]


def measure(device, base, dtypes, size_set, progress=None) -> dict:
    """{"memory": {...}, "gemm": {dtype: {...}}, ["pcie": {...}]}."""
    if device == "cuda" and getattr(base, "cp", None) is not None:
        return cuda_rooflines(base, dtypes, size_set)
    nbytes, n, reps = SIZES[size_set]
    out = {"memory": cpu_bandwidth(nbytes, reps)}
    if device == "cuda":  # host-memory stand-in (interpret backend): the host is the limit
        out["pcie"] = dict(out["memory"])
    out["gemm"] = {dt: cpu_gemm(dt, n, reps)
                   for dt in _gemm_dtypes(dtypes, ("float32", "float64"))}
    return out


def limit_for(rooflines: dict, roof: str, dtype: str):
    """(value, unit, note) of the limit that applies to a case, or (None, None, None)."""
    if not roof:
        return None, None, None
    if roof == "gemm":
        g = rooflines.get("gemm", {})
        if dtype in g:
            return g[dtype]["value"], "GFLOP/s", None
        # Half types accumulate in float32 and complex GEMMs are BLAS too: the nearest measured
        # float peak is a fair reference. Integer and bool GEMMs have none.
        basis = {"float16": "float32", "bfloat16": "float32", "complex64": "float32",
                 "complex128": "float64"}.get(dtype)
        if basis not in g:
            basis = "float32" if basis and "float32" in g else None
        if basis is None:
            return None, None, None
        return g[basis]["value"], "GFLOP/s", f"vs {basis} GEMM peak"
    r = rooflines.get(roof)
    if not r or r.get("value") is None:
        return None, None, None
    return r["value"], r["unit"], None

