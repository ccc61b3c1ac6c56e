"""Ops written in terms of other ops (they run on every backend that has the pieces)."""
from __future__ import annotations

import math

from .. import dtypes as _dt
from ..dispatch.namespace import ops as _ops

from ..tensor import Tensor

__all__ = ["clip", "to_device"]


def clip(self: Tensor, min=None, max=None) -> Tensor:
    """Array API clip: the result keeps x's dtype; nan bounds propagate like maximum/minimum.
    ``min`` / ``max``: tensors or Python scalars (weak, as in every pointwise op; a Python
    float bound of an integer x clamps exactly, as its integer equivalent: _float_bound)."""
    given = (min, max)  # (what an error names)
    if type(min) is float or type(max) is float:
        min, max = _float_bound(self, min, "min"), _float_bound(self, max, "max")
    if type(min) is int or type(max) is int:
        min, max = (_int_bound(self, min, "min", given[0]),
                    _int_bound(self, max, "max", given[1]))
    if min is not None and max is not None and _fused_bounds(self, min, max):
        try:
            return _ops.clip_bounds(self, min, max)
        except (TypeError, ValueError, OverflowError, RuntimeError):
            pass  # (the two steps below raise it in their own words, naming clip's pieces)
    maximum, minimum = _ops.maximum, _ops.minimum
    out = self.clone() if min is None and max is None else self
    if min is not None:
        out = maximum(out, min)
        if out.dtype is not self.dtype:
            out = out.astype(self.dtype)
    if max is None:
        return out
    if out is not self and not out.requires_grad and _keeps_dtype(out, max):
        # the fresh result of the first step takes the second in place: no second result to
        # allocate, and the in-place loop rereads memory still in cache (1e5 float64: 67 ->
        # 40 us)
        return minimum(out, max, out=out)
    return minimum(out, max).astype(self.dtype, copy=False)


def _float_bound(x: Tensor, bound, arg):
    """A Python float bound of an integer x as the int bound that gives the same result: x
    kept where it is inside the bound, else the bound truncated toward zero (the result keeps
    x's dtype), which for an integer x is clamping to trunc(bound) exactly. (Computed as
    floats, the steps rounded x to float32: clip(int64 2**40 + 1, 0.5) gave 2**40.) An
    infinite bound that cannot clamp is dropped, one that would is an OverflowError; nan, which
    no integer holds, a ValueError."""
    if type(bound) is not float or x.dtype.kind not in "iu":
        return bound
    if bound != bound:
        raise ValueError(f"clip(): argument '{arg}' = nan cannot bound an integer tensor "
                         f"({x.dtype})")
    if math.isinf(bound):
        if (bound < 0) == (arg == "min"):
            return None
        raise OverflowError(f"clip(): argument '{arg}' = {bound} is out of bounds for "
                            f"{x.dtype}")
    return math.trunc(bound)


def _int_bound(x: Tensor, bound, arg, given):
    """NumPy 2's rule for a Python int bound outside an integer x's range (the Array API leaves
    it open): a bound that cannot clamp anything (``min`` below the range, ``max`` above it) is
    dropped; one that would clamp to a value the dtype cannot hold is an OverflowError."""
    if type(bound) is not int or x.dtype.kind not in "iu":
        return bound
    info = _dt.iinfo(x.dtype)
    if info.min <= bound <= info.max:
        return bound
    if (bound < info.min) == (arg == "min"):
        return None
    raise OverflowError(f"clip(): argument '{arg}' = {given!r} is out of bounds for {x.dtype} "
                        f"({info.min}..{info.max})")


def _fused_bounds(x: Tensor, lo, hi) -> bool:
    """Whether clip_bounds (one pass) gives what the two steps give: a real x, both bounds
    keeping x's dtype, tensor bounds on x's device that broadcast into x's shape."""
    if x.dtype.kind not in "biuf":
        return False
    for b in (lo, hi):
        if not _keeps_dtype(x, b):
            return False
        if isinstance(b, Tensor) and (b.device != x.device or b.ndim > x.ndim or any(
                m not in (1, n) for m, n in zip(b.shape[::-1], x.shape[::-1]))):
            return False
    return True


def _keeps_dtype(t: Tensor, bound) -> bool:
    """Whether ``t op bound`` has t's dtype by the promotion rules (a Python scalar weakly: a
    float bound turns an integer tensor float); other bound types go the general way."""
    if isinstance(bound, Tensor):
        bound = bound.dtype
    elif type(bound) not in (bool, int, float):
        return False
    return _dt.result_type(t.dtype, bound) is t.dtype


def to_device(self: Tensor, device, /, *, stream=None) -> Tensor:
    """Array API ``x.to_device(device, /, *, stream=None)``: x itself when already there,
    else a copy on ``device``, enqueued on ``stream`` (a tl.Stream; None: the current one)."""
    from . import transfer
    from ..streams import Stream, stream as stream_context
    if stream is not None and not isinstance(stream, Stream):
        raise TypeError(f"to_device(): argument 'stream' must be a tensorlib Stream or None, "
                        f"got {type(stream).__name__} ({stream!r:.60})")
    with stream_context(stream):
        return transfer.to_device(self, device)
