"""Opt-in 512-bit vectors for tensorlib's Numba kernels on CPUs with AVX-512
(TENSORLIB_CPU_VECTOR_BITS=512).

LLVM tunes Skylake-X / Cascade Lake / Ice Lake server cores to prefer 256-bit vectors (the
"prefer-256-bit" tuning: wide instructions can lower the core clock). Measured on a Cascade Lake
(2 cores, CPU time, three alternating processes per setting, 2026-11-28), 512-bit vectors make
the arithmetic-heavy loops faster (float32 tanh 0.70x the time at 1e5 and 2e6 elements, the
fused tanh-GELU of benchmarks/jit.py 14.6 -> 5.6 ms at 4e6) but the memory-bound ones slower
(add 1.17x, maximum 1.12x, sqrt 1.13x, astype float64 1.2-1.3x; sin, exp, log, sum unchanged).
Numba takes one feature string per process, so the choice cannot be made per kernel; the
default stays LLVM's. With TENSORLIB_CPU_VECTOR_BITS=512, ``configure`` (run before tensorlib's
first Numba compile or cache load) asks for 512-bit vectors, and only:

* on a CPU with AVX-512F;
* when the user set neither NUMBA_CPU_NAME nor NUMBA_CPU_FEATURES (their choice wins);
* when Numba's CPU target does not exist yet (code compiled before tensorlib's kernels loaded
  keeps the target it was built for: changing it later would not reach the machine code).

The feature string is part of the key of Numba's disk cache, so kernels cached under one setting
are never loaded under the other.
"""
from __future__ import annotations

import os

__all__ = ["configure", "WIDE_FEATURE"]

WIDE_FEATURE = "-prefer-256-bit"
ENV = "TENSORLIB_CPU_VECTOR_BITS"


def configure() -> bool:
    """Asks Numba for 512-bit vectors when TENSORLIB_CPU_VECTOR_BITS=512 and the conditions
    above hold; returns whether it did. A value other than 256 or 512 raises ValueError naming
    the variable."""
    bits = os.environ.get(ENV, "").strip()
    if bits not in ("", "256", "512"):
        raise ValueError(f"{ENV} must be 256 or 512, got {bits!r}")
    if bits != "512":
        return False
    from numba.core import codegen, config, registry
    if config.CPU_NAME is not None or config.CPU_FEATURES is not None:
        return False
    if "_toplevel_target_context" in vars(registry.cpu_target):
        return False  # Numba's CPU target is built: its features are fixed for this process
    features = codegen.get_host_cpu_features()  # Numba's own view (honours NUMBA_ENABLE_AVX)
    if "+avx512f" not in features.split(","):
        return False
    config.CPU_FEATURES = f"{features},{WIDE_FEATURE}"
    return True
