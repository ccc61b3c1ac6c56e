"""Environment metadata stored with the results: versions, CPU/GPU, git commit."""
from __future__ import annotations

import datetime
import os
import platform
import subprocess
import sys
from importlib import metadata

__all__ = ["collect"]

_DISTS = ("tensorlib", "numpy", "numba", "rich", "matplotlib", "triton", "cuda-bindings")
_MODULES = ("cupy", "nvmath", "torch")  # optional baselines: versions only if already imported


def _version(dist):
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return _source_version() if dist == "tensorlib" else None


def _source_version():
    """tensorlib's version from pyproject.toml when it runs from a checkout, not installed."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
    try:
        with open(os.path.join(root, "pyproject.toml")) as f:
            for line in f:
                if line.startswith("version"):
                    return line.split("=", 1)[1].strip().strip('"') + " (source checkout)"
    except OSError:
        pass
    return None


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def git_commit():
    """The checkout's HEAD when tensorlib runs from a git checkout (read-only query)."""
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        r = subprocess.run(["git", "-C", here, "rev-parse", "HEAD"], capture_output=True,
                           text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    if r.returncode != 0:
        return None
    return r.stdout.strip() or None


def load_average():
    """The 1-minute load average, or None where the OS has none."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def busy_warning(own_load: int = 0):
    """A warning when other work already occupies the cores (timings would be unreliable).
    ``own_load``: busy processes the benchmark started itself (--load), not counted."""
    load, cores = load_average(), usable_cores()
    if load is not None:
        load = max(load - own_load, 0.0)
    if load is not None and load > 0.5 * cores + 0.25:
        return (f"warning: the machine is busy (load average {load:.1f} on {cores} cores): "
                f"timings will be noisy and ratios unreliable")
    return None


def collect(device: str, argv) -> dict:
    versions = {d: _version(d) for d in _DISTS}
    versions["python"] = platform.python_version()
    for m in _MODULES:
        mod = sys.modules.get(m)
        if mod is not None:
            versions[m] = getattr(mod, "__version__", "?")
    meta = {
        "time_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "argv": list(argv),
        "device": device,
        "platform": platform.platform(),
        "cpu": cpu_name(),
        "cpu_cores_usable": usable_cores(),
        "cpu_count": os.cpu_count(),
        "versions": versions,
        "git_commit": git_commit(),
        "load_average_end": load_average(),
    }
    nb = sys.modules.get("numba")
    if nb is not None:
        meta["numba_threads"] = nb.config.NUMBA_NUM_THREADS
    if device == "cuda":
        import tensorlib as tl
        try:
            p = tl.cuda.get_device_properties()
            meta["gpu"] = p.name
            meta["gpu_capability"] = f"{p.major}.{p.minor}"
            meta["gpu_memory_bytes"] = p.total_memory
            meta["gpu_l2_bytes"] = p.L2_cache_size
            meta["cuda_backend"] = tl.cuda.backend()
        except Exception as e:  # noqa: BLE001 - metadata must not stop a run
            meta["gpu"] = f"unknown ({e})"
    return meta
