"""Cheap checks of what hardware is present, safe to call on any machine (no tensorlib state,
no driver initialisation beyond cuInit; tests and benchmarks ask it before using a GPU)."""
from __future__ import annotations

import functools

__all__ = ["cuda_gpu_present"]


@functools.lru_cache(maxsize=1)
def cuda_gpu_present() -> bool:
    """True only when the CUDA driver initialises and reports at least one device."""
    try:
        from cuda.bindings import driver
    except ImportError:
        return False
    try:
        err, = driver.cuInit(0)
        if err != driver.CUresult.CUDA_SUCCESS:
            return False
        err, count = driver.cuDeviceGetCount()
        return err == driver.CUresult.CUDA_SUCCESS and count > 0
    except Exception:  # a broken driver install means "no GPU", never a crash
        return False
