"""Ops written in terms of other ops (they run on every backend that has the pieces)."""
from __future__ import annotations

from ..tensor import Tensor

__all__ = ["clip"]


def clip(self: Tensor, min=None, max=None) -> Tensor:
    """Array API clip: the result keeps x's dtype; nan bounds propagate like maximum/minimum."""
    from .. import maximum, minimum
    out = self.clone() if min is None and max is None else self
    if min is not None:
        out = maximum(out, min).astype(self.dtype, copy=False)
    if max is not None:
        out = minimum(out, max).astype(self.dtype, copy=False)
    return out
