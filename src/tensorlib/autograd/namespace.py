"""The ops that backward formulas and nodes call, filled once at import (tensorlib.__init__ hands
the generated op functions down, so autograd never imports the public namespace above it)."""
from __future__ import annotations

__all__ = ["ops", "fill"]


class _Ops:
    """tensorlib's op functions and the formula helpers, as attributes."""


ops = _Ops()


def fill(namespace: dict) -> None:
    for name, fn in namespace.items():
        setattr(ops, name, fn)
