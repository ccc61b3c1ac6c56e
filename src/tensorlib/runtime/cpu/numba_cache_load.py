"""Loading a kernel from Numba's disk cache without building Numba's compiler first.

Before it loads a cached function, Numba's ``Cache.load_overload`` refreshes the whole target
context: it imports and installs every lowering and typing registry Numba has (linalg,
arraymath, typed containers, random, ...). Running machine code that is already compiled needs
none of them, only Numba's runtime (NRT: the allocator and reference counting the kernels link
against). Measured on this project's 2-core machine (2026-12-05), a fresh process whose kernels
are all on disk spent ~0.11-0.15 s of its first kernel call in that refresh, on top of Numba's
import (~0.17 s): the traced GELU's first call went 0.29-0.33 s -> 0.18-0.19 s.

:func:`install` makes a cache load initialize the runtime alone. Nothing else changes: a
compile still refreshes the context first (Numba's compiler pipeline does it on every compile),
and the refresh stays idempotent. Installed only when Numba's ``Cache`` has the two members
the wrapper relies on; otherwise Numba's own method stays.
"""
from __future__ import annotations

import threading

__all__ = ["install"]

_installed = False
_lock = threading.Lock()


def install() -> bool:
    """Replaces ``numba.core.caching.Cache.load_overload`` once per process; returns whether the
    replacement is in place."""
    global _installed
    with _lock:
        if _installed:
            return True
        from numba.core import caching
        from numba.core.runtime import rtsys
        cache = caching.Cache
        if not (hasattr(cache, "_load_overload")
                and hasattr(cache, "_guard_against_spurious_io_errors")):
            return False

        def load_overload(self, sig, target_context):
            rtsys.initialize(target_context)  # what loaded code needs; idempotent
            with self._guard_against_spurious_io_errors():
                return self._load_overload(sig, target_context)
            # None when the guard swallowed an error: treated as a cache miss, as in Numba

        cache.load_overload = load_overload
        _installed = True
        return True
