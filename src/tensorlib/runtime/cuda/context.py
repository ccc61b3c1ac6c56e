"""Process-wide CUDA state: the driver (chosen lazily, once), per-device objects, and the
calling thread's current device and current streams.

Nothing here touches the driver until CUDA is first queried, so ``import tensorlib`` stays cheap
and never fails on a machine without CUDA. ``reset()`` drops everything (tests use it to switch
backends or memory caps); thread-local values from before a reset are discarded lazily by
comparing a generation number.
"""
from __future__ import annotations

import operator
import threading

from .driver import CudaError, CudaUnavailableError, ENV_BACKEND, create_driver

__all__ = ["state", "tls", "get_driver", "require", "is_available", "device_count",
           "current_device", "set_device", "check_index", "resolve_index", "reset",
           "unavailable_reason", "backend_name"]


class _State:
    def __init__(self):
        self.lock = threading.RLock()
        self.gen = 0
        self.initialized = False
        self.driver = None
        self.reason = None
        # Per-device objects, filled by allocator.py / streams.py / pinned.py on first use.
        self.allocators = {}
        self.default_streams = {}
        self.pools = {}
        self.pinned = None


state = _State()


class _TLS(threading.local):
    def __init__(self):
        self.gen = -1
        self.device = 0
        self.streams = {}  # device index -> current Stream (absent = default stream)
        # (allocator, stream handle) of the current device and stream, for the raw allocation
        # fast path; cleared whenever the device or a current stream changes.
        self.fast = None


tls = _TLS()


def _fresh_tls():
    t = tls
    if t.gen != state.gen:
        t.gen = state.gen
        t.device = 0
        t.streams = {}
        t.fast = None
    return t


def _init():
    with state.lock:
        if not state.initialized:
            try:
                state.driver, state.reason = create_driver()
            except Exception as e:  # noqa: BLE001 - availability checks must never raise
                state.driver, state.reason = None, f"{type(e).__name__}: {e}"
            state.initialized = True


def get_driver():
    """The driver, or None when CUDA is unavailable."""
    if not state.initialized:
        _init()
    return state.driver


def unavailable_reason():
    get_driver()
    return state.reason


def backend_name():
    """'real', 'interpret' or None (unavailable)."""
    d = get_driver()
    return None if d is None else d.name


def require(op: str | None = None):
    """The driver; CudaUnavailableError (naming ``op``) when CUDA is unavailable."""
    d = state.driver if state.initialized else get_driver()
    if d is None:
        prefix = f"{op}(): " if op else ""
        raise CudaUnavailableError(
            f"{prefix}CUDA is not available: {state.reason}. Set {ENV_BACKEND}=interpret to run "
            f"the CUDA path on host memory.")
    return d


def is_available() -> bool:
    return get_driver() is not None


def device_count() -> int:
    d = get_driver()
    return 0 if d is None else d.device_count()


def check_index(index, op: str = "cuda", arg: str = "device") -> int:
    """A valid device ordinal as an int; errors name op, argument and value."""
    d = require(op)
    try:
        i = operator.index(index)
    except TypeError:
        raise TypeError(f"{op}(): argument '{arg}' must be a device index, got "
                        f"{index!r}") from None
    n = d.device_count()
    if not 0 <= i < n:
        raise CudaError(f"{op}(): invalid device ordinal {i} for argument '{arg}' "
                        f"(device_count() = {n})")
    return i


def resolve_index(device, op: str = "cuda", arg: str = "device") -> int:
    """None / int / 'cuda' / 'cuda:1' / Device -> a valid device ordinal (None = current)."""
    if device is None:
        return current_device()
    if isinstance(device, int) and not isinstance(device, bool):
        return check_index(device, op, arg)
    from ...device import Device
    try:
        dev = Device(device)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{op}(): argument '{arg}': {e}") from None
    if dev.type != "cuda":
        raise ValueError(f"{op}(): argument '{arg}' must be a CUDA device, got '{dev}'")
    return current_device() if dev.index is None else check_index(dev.index, op, arg)


def current_device() -> int:
    require("current_device")
    return _fresh_tls().device


def set_device(device) -> None:
    """Make ``device`` this thread's current CUDA device (a negative int is ignored, as in
    PyTorch)."""
    if isinstance(device, int) and not isinstance(device, bool) and device < 0:
        return
    i = resolve_index(device, "set_device")
    t = _fresh_tls()
    if t.device != i:
        state.driver.set_current(i)
        t.device = i
        t.fast = None


def reset() -> None:
    """Forget the driver and every per-device object; the next query chooses again from the
    environment. For tests: tensors from before must be gone (their memory is not returned)."""
    with state.lock:
        old = state.driver
        state.gen += 1
        state.initialized = False
        state.driver = None
        state.reason = None
        state.allocators = {}
        state.default_streams = {}
        state.pools = {}
        state.pinned = None
    if old is not None and hasattr(old, "shutdown"):
        old.shutdown()
