"""Files tensorlib keeps across processes: where they live (``$TENSORLIB_CACHE_DIR``, default
``~/.cache/tensorlib``) and how one is written and read back whole. A file holds a pickled
(digest, payload) pair, written to a temporary name and renamed into place, so a reader sees
the whole file or none; a payload that does not match its digest (torn, altered) reads as
absent, and the caller rebuilds it."""
from __future__ import annotations

import os
import pickle
import threading

try:  # (hashlib's import loads OpenSSL: 5-10 ms of `import tensorlib`, which uses this)
    from _blake2 import blake2b as _blake2b
except ImportError:  # a Python built without it
    from hashlib import blake2b as _blake2b

__all__ = ["cache_root", "digest", "read_checked", "write_checked"]


def cache_root() -> str:
    """``$TENSORLIB_CACHE_DIR`` (default ``~/.cache/tensorlib``): every cache lives below it."""
    return os.environ.get("TENSORLIB_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "tensorlib")


def digest(data: bytes) -> str:
    return _blake2b(data, digest_size=20).hexdigest()


def read_checked(path: str):
    """The payload (bytes) stored at ``path`` by :func:`write_checked`, or None when the file is
    absent, unreadable or does not match its digest."""
    try:
        with open(path, "rb") as f:
            stored, payload = pickle.load(f)
    except Exception:  # noqa: BLE001 - absent, torn or foreign: treated as absent
        return None
    if not isinstance(payload, bytes) or digest(payload) != stored:
        return None
    return payload


def write_checked(path: str, payload: bytes) -> bool:
    """Stores ``payload`` at ``path`` (directories made); False where that is not possible (a
    read-only cache: the caller goes on without it)."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
        with open(tmp, "wb") as f:
            pickle.dump((digest(payload), payload), f, protocol=4)
        os.replace(tmp, path)
        return True
    except OSError:
        return False
