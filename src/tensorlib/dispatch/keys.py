"""Dispatch keys and key sets (an int bitmask; a higher bit is a higher priority).

Backend keys come from the tensors' devices; functionality keys sit above them: Autograd is in the
key set of every tensor that requires grad (its kernel records the graph, then redispatches below
itself), Tracer and Profiler are switched on per thread through the thread-local include set.
"""
from __future__ import annotations

import enum
import threading
from contextlib import contextmanager

__all__ = ["DispatchKey", "BACKEND_KEYS", "BACKEND_MASK", "AUTOGRAD_BIT", "ALIAS_KEYS", "keyset_names", "tls",
           "include_keys", "exclude_keys", "backend_key_for", "set_tls_keys", "TLS_IN_USE",
           "TOP_KEY"]


class DispatchKey(enum.IntEnum):
    CPU = 0
    CUDA = 1
    # Functionality keys: their kernels receive (op, keyset, args) and redispatch below.
    Autograd = 3
    Tracer = 4
    Profiler = 5


NUM_KEYS = max(DispatchKey) + 1
BACKEND_KEYS = (DispatchKey.CPU, DispatchKey.CUDA)
BACKEND_MASK = sum(1 << k for k in BACKEND_KEYS)
AUTOGRAD_BIT = 1 << DispatchKey.Autograd
FIRST_FUNCTIONALITY = DispatchKey.Autograd
# An alias key registers one kernel at several runtime keys (PyTorch's CompositeExplicitAutograd).
ALIAS_KEYS = {"CompositeExplicit": BACKEND_KEYS}

_BACKEND_BITS = {"cpu": 1 << DispatchKey.CPU, "cuda": 1 << DispatchKey.CUDA}


def backend_key_for(device_type: str) -> int:
    return _BACKEND_BITS[device_type]


def keyset_names(ks: int) -> list[str]:
    return [k.name for k in DispatchKey if ks >> k & 1]


# TOP_KEY[ks]: the highest key in key set ks (-1 for none), a list index being cheaper than
# ks.bit_length() on every call.
TOP_KEY = [ks.bit_length() - 1 for ks in range(1 << NUM_KEYS)]


class _State(threading.local):
    def __init__(self):
        self.included = 0
        self.excluded = 0


tls = _State()
# TLS_IN_USE[0]: how many threads have a non-empty include or exclude set. While 0, dispatch
# skips reading the thread-local sets (a threading.local read costs more than the rest of
# the key computation).
TLS_IN_USE = [0]
_tls_lock = threading.Lock()


def set_tls_keys(included: int, excluded: int) -> None:
    """Sets this thread's include and exclude sets (always through here: keeps TLS_IN_USE)."""
    with _tls_lock:
        was = bool(tls.included or tls.excluded)
        tls.included = included
        tls.excluded = excluded
        TLS_IN_USE[0] += bool(included or excluded) - was


@contextmanager
def include_keys(*keys: DispatchKey):
    """Adds functionality keys to this thread's dispatch (e.g. the profiler while it records)."""
    saved = tls.included
    set_tls_keys(saved | sum(1 << k for k in keys), tls.excluded)
    try:
        yield
    finally:
        set_tls_keys(saved, tls.excluded)


@contextmanager
def exclude_keys(*keys: DispatchKey):
    """Hides keys from this thread's dispatch (e.g. while a functionality kernel redispatches)."""
    saved = tls.excluded
    set_tls_keys(tls.included, saved | sum(1 << k for k in keys))
    try:
        yield
    finally:
        set_tls_keys(tls.included, saved)
