"""The internal op namespace (ATen's ``at::``): how an op's implementation calls another op.

Composite ops (ops/composite.py, manipulation, sorting, linalg) call ``ops.<name>(...)``: the
same generated functions as the public namespace, entering the dispatcher like a user call (so
autograd, the tracer and the profiler see them), but reached without importing the package
above them. ``tensorlib/__init__.py`` fills it once, after the ops are registered.
"""
from __future__ import annotations

__all__ = ["ops", "fill"]


class _Ops:
    """Attribute access to every op function (filled at import)."""

    def __getattr__(self, name):
        raise AttributeError(f"tensorlib internal op namespace has no op {name!r} (is tensorlib "
                             f"fully imported?)")


ops = _Ops()


def fill(functions: dict) -> None:
    for name, fn in functions.items():
        setattr(ops, name, fn)
