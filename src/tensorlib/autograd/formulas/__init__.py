"""Helpers the derivatives.yaml formulas call: the parts of a backward that are more than one
expression. Every helper is written in tensorlib ops, so a backward is itself differentiable
(double backward records it like any forward).

The helpers live in parts: common.py (conjugation, the in-place rewrites, undoing broadcasting
and reductions), pointwise.py, reductions.py (with softmax / layer_norm / sort), shape.py (views,
joins, index-taking ops) and linalg.py; ``HELPERS`` gathers them for the formulas' namespace."""
from __future__ import annotations

from .. import indexing_backward  # noqa: F401 - also installs Tensor.__getitem__/__setitem__ hooks
from . import common, linalg, pointwise, reductions, shape
from .common import _IN_PLACE_MIN, conj, mul_into_temp, sum_to, unary_into_saved, unreduce
from .reductions import layer_norm_backward, log_softmax_backward, softmax_backward

__all__ = ["HELPERS"]

# every public function a part defines (not the ones it imports), and the constants
HELPERS = {name: obj for part in (common, pointwise, reductions, shape, linalg)
           for name, obj in vars(part).items()
           if callable(obj) and not name.startswith("_") and obj.__module__ == part.__name__}
HELPERS.update(LN2=common._LN2, LN10=common._LN10, TWO_OVER_SQRT_PI=common._TWO_OVER_SQRT_PI)
