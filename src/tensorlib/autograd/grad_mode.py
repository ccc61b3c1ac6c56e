"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode (thread-local).

Grad mode is the Autograd key's place in this thread's exclude set: with the key excluded no op
reaches the autograd kernel, so nothing is recorded and a no-grad call costs what a plain call
costs. inference_mode also marks the storage allocated inside it, and such tensors are refused
when an op wants to save them for backward.
"""
from __future__ import annotations

import functools
import threading

from ..dispatch.keys import AUTOGRAD_BIT, set_tls_keys, tls
from .. import storage as _storage

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled"]


def is_grad_enabled() -> bool:
    return not tls.excluded & AUTOGRAD_BIT


def _set_enabled(flag: bool) -> None:
    ex = tls.excluded
    set_tls_keys(tls.included, ex & ~AUTOGRAD_BIT if flag else ex | AUTOGRAD_BIT)


class _Mode:
    """A context manager that is also a decorator (each call of the decorated function enters a
    fresh instance, so recursion and threads are safe)."""

    def __call__(self, fn):
        if not callable(fn):
            raise TypeError(f"{type(self).__name__}: used as a decorator, expects a function, "
                            f"got {type(fn).__name__}")
        factory = self._clone

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with factory():
                return fn(*args, **kwargs)
        return wrapper

    def _clone(self):
        return type(self)()


class no_grad(_Mode):
    """Ops inside record no graph; their results do not require grad."""

    def __enter__(self):
        self._prev = is_grad_enabled()
        _set_enabled(False)
        return self

    def __exit__(self, *exc):
        _set_enabled(self._prev)
        return False


class enable_grad(_Mode):
    """Turns recording back on inside a no_grad block."""

    def __enter__(self):
        self._prev = is_grad_enabled()
        _set_enabled(True)
        return self

    def __exit__(self, *exc):
        _set_enabled(self._prev)
        return False


class set_grad_enabled(_Mode):
    """``set_grad_enabled(False)`` as a call sets the mode for this thread; as a context manager
    or decorator it restores the previous mode on exit."""

    def __init__(self, mode: bool):
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(): argument 'mode' must be a bool, got "
                            f"{type(mode).__name__}")
        self._mode = mode
        self._prev = is_grad_enabled()
        _set_enabled(mode)

    def _clone(self):
        return set_grad_enabled(self._mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _set_enabled(self._prev)
        return False


class _InferenceState(threading.local):
    depth = 0


_inference = _InferenceState()


def is_inference_mode_enabled() -> bool:
    return _inference.depth > 0


class inference_mode(_Mode):
    """no_grad, and the tensors made inside are inference tensors: they can never be saved for
    backward (an op that would save one raises RuntimeError)."""

    def __init__(self, mode: bool = True):
        self._mode = bool(mode)

    def _clone(self):
        return inference_mode(self._mode)

    def __enter__(self):
        self._prev = is_grad_enabled()
        if self._mode:
            _set_enabled(False)
            _inference.depth += 1
            _storage.set_inference_marking(+1)
        return self

    def __exit__(self, *exc):
        if self._mode:
            _inference.depth -= 1
            _storage.set_inference_marking(-1)
        _set_enabled(self._prev)
        return False
