"""The SIMD width of tensorlib's Numba kernels on CPUs with AVX-512.

LLVM tunes Skylake-X / Cascade Lake / Ice Lake server cores to prefer 256-bit vectors (the
"prefer-256-bit" tuning: wide instructions can lower the core clock). Measured on a Cascade Lake
(2 cores, CPU time, alternating processes, 2026-11-28), 512-bit vectors make the
arithmetic-heavy loops faster (float32 tanh 0.70x the time at 1e5 and 2e6 elements, the fused
tanh-GELU of benchmarks/jit.py 14.6 -> 5.6 ms at 4e6) but the memory-bound ones slower (add
1.17x, maximum 1.12x, sqrt 1.13x, astype float64 1.2-1.3x). So the width is chosen per kernel:

* **wide kernels** (the default, ``TENSORLIB_CPU_VECTOR_BITS`` unset or ``auto``): a generated
  kernel module whose source defines ``TENSORLIB_VECTOR_BITS = 512`` (:func:`source_marker`;
  the pointwise generator writes it for ops tagged ``wide_vectors`` in ops.yaml, the JIT fuser
  for fusion groups holding one) gets LLVM's ``"prefer-vector-width"="512"`` function attribute
  on its functions, and on the parallel-loop bodies Numba outlines from them while lowering
  them. Numba has no per-function option for it, so :func:`install` wraps its lowering (as
  Numba's own ``pre_lower`` adds ``noinline`` under debug info); code outside such modules is
  untouched. The attribute only states a preference: on a CPU without AVX-512 it changes
  nothing. The marker is part of the kernel's text, so its disk-cache key says which width it
  was built with.
* ``256``: no kernel is made wide (no marker is written).
* ``512``: every kernel (the whole process's Numba target prefers 512 bits, :func:`configure`),
  only when the user set neither NUMBA_CPU_NAME nor NUMBA_CPU_FEATURES (their choice wins) and
  Numba's CPU target does not exist yet (code compiled before tensorlib's kernels loaded keeps
  the target it was built for). The feature string is part of the key of Numba's disk cache.
"""
from __future__ import annotations

import os
import sys
import threading

__all__ = ["configure", "install", "mode", "source_marker", "WIDE_FEATURE", "MARKER"]

WIDE_FEATURE = "-prefer-256-bit"
ENV = "TENSORLIB_CPU_VECTOR_BITS"
MARKER = "TENSORLIB_VECTOR_BITS"
_ATTRIBUTE = '"prefer-vector-width"="512"'


def mode() -> str:
    """``auto`` (wide kernels only), ``256`` or ``512``, from TENSORLIB_CPU_VECTOR_BITS; any other
    value raises ValueError naming the variable."""
    bits = os.environ.get(ENV, "").strip() or "auto"
    if bits not in ("auto", "256", "512"):
        raise ValueError(f"{ENV} must be auto, 256 or 512, got {bits!r}")
    return bits


def source_marker(wide: bool) -> str:
    """The line a generated kernel module starts with to get 512-bit vectors (see above), or
    ``""``: none when the kernel is not compute-bound or the mode is not ``auto``."""
    return f"{MARKER} = 512\n" if wide and mode() == "auto" else ""


def configure() -> bool:
    """Asks Numba for 512-bit vectors everywhere when TENSORLIB_CPU_VECTOR_BITS=512 and the
    conditions above hold; returns whether it did."""
    if mode() != "512":
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


_state = threading.local()  # .wide: one flag per function being lowered (nested: parfor bodies)
_installed = False
_install_lock = threading.Lock()


def _marked(modname) -> bool:
    mod = sys.modules.get(modname)
    return mod is not None and getattr(mod, MARKER, None) == 512


def install() -> None:
    """Wraps Numba's lowering once per process so that functions of marked modules (and the
    loop bodies outlined while lowering them) carry the 512-bit preference."""
    global _installed
    with _install_lock:
        if _installed:
            return
        from numba.core.lowering import BaseLower
        lower, pre_lower = BaseLower.lower, BaseLower.pre_lower

        def lower_with_width(self):
            stack = getattr(_state, "wide", None)
            if stack is None:
                stack = _state.wide = []
            # a parallel loop's body is lowered (as its own function) inside its parent's lowering
            stack.append(_marked(self.fndesc.modname) or bool(stack and stack[-1]))
            try:
                return lower(self)
            finally:
                stack.pop()

        def pre_lower_with_width(self):
            pre_lower(self)
            stack = getattr(_state, "wide", None)
            if stack and stack[-1]:
                # set.add: llvmlite's attribute set checks names against the enum attributes
                # only; a string attribute is printed as given
                set.add(self.builder.function.attributes, _ATTRIBUTE)

        BaseLower.lower = lower_with_width
        BaseLower.pre_lower = pre_lower_with_width
        _installed = True
