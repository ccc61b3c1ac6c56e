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

The runtime itself is an LLVM module Numba compiles in every process (~20 ms of that first
call, measured 2026-12-05). With a ``runtime_dir`` the compiled module is kept there as object
code (what Numba's own cache keeps of a kernel), keyed by Numba's and llvmlite's versions and
the machine code target, and later processes load it (~3 ms) instead of compiling it. A file
that does not match its digest, or does not load, is ignored: the module compiles as before.
"""
from __future__ import annotations

import os
import pickle
import threading

from ..cache_files import digest, read_checked, write_checked

__all__ = ["install", "initialize_runtime", "load_cached"]

_installed = False
_lock = threading.Lock()
_runtime_dir = None  # callable -> the directory holding the compiled runtime module, or None


def install(runtime_dir=None) -> bool:
    """Replaces ``numba.core.caching.Cache.load_overload`` once per process; returns whether the
    replacement is in place. ``runtime_dir``: a callable giving the directory where the compiled
    runtime module is kept across processes (None: Numba compiles it in every process)."""
    global _installed, _runtime_dir
    _runtime_dir = runtime_dir
    with _lock:
        if _installed:
            return True
        from numba.core import caching
        from numba.core.runtime import rtsys
        if _runtime_parts_present(rtsys):
            # every initialization (a compile's too) goes through the kept module
            rtsys.initialize = initialize_runtime
        cache = caching.Cache
        if not (hasattr(cache, "_load_overload")
                and hasattr(cache, "_guard_against_spurious_io_errors")):
            return False

        def load_overload(self, sig, target_context):
            initialize_runtime(target_context)  # what loaded code needs; idempotent
            with self._guard_against_spurious_io_errors():
                return self._load_overload(sig, target_context)
            # None when the guard swallowed an error: treated as a cache miss, as in Numba

        cache.load_overload = load_overload
        _installed = True
        return True


def load_cached(disp, sig) -> bool:
    """Whether Numba dispatcher ``disp`` has an overload for ``sig`` (a tuple of Numba types),
    loading it from Numba's disk cache if it is there: the first step of ``Dispatcher.compile``
    without its fallback to compiling (a miss costs an index read). False for anything that
    prevents a load (no disk cache, an unreadable entry)."""
    if tuple(sig) in disp.overloads:
        return True
    cache = getattr(disp, "_cache", None)
    if cache is None:
        return False
    try:
        from numba.core.compiler_lock import global_compiler_lock
        with global_compiler_lock:
            cres = cache.load_overload(tuple(sig), disp.targetctx)
            if cres is None:
                return False
            if not cres.objectmode:
                disp.targetctx.insert_user_function(cres.entry_point, cres.fndesc,
                                                    [cres.library])
            disp.add_overload(cres)
        return True
    except Exception:  # noqa: BLE001 - no usable cache entry: treated as not compiled
        return False


def initialize_runtime(ctx) -> None:
    """Numba's ``rtsys.initialize(ctx)``, loading the compiled runtime module from the runtime
    directory when it is there (and saving it there when it had to be compiled)."""
    from numba.core.runtime import rtsys
    if getattr(rtsys, "_init", True):
        return
    try:
        directory = _runtime_dir() if _runtime_dir is not None else None
    except OSError:  # no usable cache directory: Numba compiles the module, as always
        directory = None
    if directory is None or not _runtime_parts_present(rtsys):
        type(rtsys).initialize(rtsys, ctx)  # Numba's own: compiles the module
        return
    from numba.core import config
    from numba.core.compiler_lock import global_compiler_lock
    from numba.core.runtime import _nrt_python as _nrt
    from llvmlite import binding as ll
    with global_compiler_lock:
        if rtsys._init:
            return
        if config.NRT_STATS:
            _nrt.memsys_enable_stats()
        for py_name, address in _nrt.c_helpers.items():  # as Numba registers them
            ll.add_symbol(py_name if py_name.startswith("_") else "NRT_" + py_name, address)
        path = os.path.join(directory, f"numba_runtime_{_runtime_key(ctx)}.pkl")
        library = _load_runtime(ctx, path)
        if library is None:
            library = _compile_runtime(ctx, path)
        rtsys._library = library
        rtsys._init = True


def _runtime_parts_present(rtsys) -> bool:
    from numba.core.runtime import nrtdynmod
    # (``_library`` is set by ``initialize`` and read through the ``library`` property)
    return (hasattr(type(rtsys), "library") and hasattr(rtsys, "_init")
            and hasattr(nrtdynmod, "create_nrt_module"))


def _runtime_key(ctx) -> str:
    import llvmlite
    import numba
    what = repr((numba.__version__, llvmlite.__version__, ctx.codegen().magic_tuple()))
    return digest(what.encode())


def _load_runtime(ctx, path):
    payload = read_checked(path)
    if payload is None:
        return None  # absent, torn or altered: compile instead
    try:
        library = ctx.codegen().unserialize_library(pickle.loads(payload))
        for name in ("NRT_incref", "NRT_decref", "NRT_MemInfo_data_fast"):
            if not library.get_pointer_to_function(name):
                return None
        return library
    except Exception:  # noqa: BLE001 - contents Numba cannot load: compile it
        return None


def _compile_runtime(ctx, path):
    from numba.core.runtime import nrtdynmod
    ir_module, library = nrtdynmod.create_nrt_module(ctx)
    library.enable_object_caching()
    library.add_ir_module(ir_module)
    library.finalize()
    # (a read-only cache: the next process compiles it too)
    write_checked(path, pickle.dumps(library.serialize_using_object_code(), protocol=4))
    return library
