"""Generated kernel modules, one mechanism for both backends: a kernel generator writes the
module's source once (atomically) under the kernel cache dir and imports it from there, named
by a digest of its text. The file is the disk cache key: Numba's ``cache=True`` and Triton key
their compiled code on it, and Triton reads kernel source from real files. The backends fold a
digest of their helper modules into the text (:func:`files_digest`), since neither cache
watches the helper files a kernel imports.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import threading

from ..runtime.compile_lock import COMPILE_LOCK
from ..runtime.cache_files import cache_root

__all__ = ["cache_dir", "files_digest", "module_name", "load_module"]

_loaded: dict = {}  # module name -> module, fully executed
_lock = threading.RLock()  # one import of a module at a time: the others wait, then share it


def cache_dir(*sub: str) -> str:
    """``$TENSORLIB_CACHE_DIR/kernels/<sub...>`` (default ``~/.cache/tensorlib``), created."""
    path = os.path.join(cache_root(), "kernels", *sub)
    os.makedirs(path, exist_ok=True)
    return path


def files_digest(paths, length: int) -> str:
    """The first ``length`` hex digits of the SHA-1 of the files' bytes, in order."""
    h = hashlib.sha1()
    for path in paths:
        with open(path, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:length]


def once(table: dict, lock, key, build):
    """``table[key]``, made by ``build()`` under ``lock`` the first time: the generated modules
    and entry points each kernel family builds once per process (a hit takes no lock; the
    caller's own lock, as builds may load modules under this file's)."""
    value = table.get(key)
    if value is None:
        with lock:
            value = table.get(key)
            if value is None:
                value = table[key] = build()
    return value


def module_name(stem: str, source: str) -> str:
    """``<stem>_<16 hex digits of the source's SHA-1>``: one name per text."""
    return f"{stem}_{hashlib.sha1(source.encode()).hexdigest()[:16]}"


def load_module(name: str, source: str, directory: str):
    """Module ``name`` holding ``source``: written once (atomically) as ``<directory>/<name>.py``
    and imported; memoised, so later calls are one dict lookup."""
    mod = _loaded.get(name)
    if mod is not None:
        return mod
    with _lock:
        mod = _loaded.get(name)
        if mod is not None:
            return mod
        path = os.path.join(directory, name + ".py")
        if not os.path.exists(path):
            tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
            with open(tmp, "w") as f:
                f.write(source)
            os.replace(tmp, path)  # atomic: parallel test workers may race here
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod  # as an import does (Triton looks kernels' modules up)
        try:
            with COMPILE_LOCK:  # compiling the module's source (runtime/compile_lock.py)
                spec.loader.exec_module(mod)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        _loaded[name] = mod
        return mod
