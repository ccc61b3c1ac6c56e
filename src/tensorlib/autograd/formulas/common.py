"""What the formula helpers share: conjugation, the in-place rewrites derivatives.py makes
(``mul_into_temp``, ``unary_into_saved``), and undoing broadcasting and reductions
(``sum_to``, ``unreduce``)."""
from __future__ import annotations

import math
import sys

from ...shape import normalize_axis
from ...dispatch.keys import AUTOGRAD_BIT, tls
from ...tensor import Tensor
from ...dispatch.namespace import ops as tl
from ..graph import donating


_LN2 = math.log(2.0)


_LN10 = math.log(10.0)


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _is_tensor(x):
    return isinstance(x, Tensor)


def conj(x):
    """Complex conjugate of a tensor or Python scalar; a no-op (no copy) for real values."""
    if _is_tensor(x):
        return x.conj() if x.dtype.kind == "c" else x
    return x.conjugate() if isinstance(x, complex) else x


# Below this many elements the in-place product saves little memory and costs more than the
# functional one (whose dense fast path skips the TensorIterator).
_IN_PLACE_MIN = 1 << 16


def mul_into_temp(grad, t):
    """``grad * t`` where ``t`` is a tensor the formula has just made (derivatives.py rewrites
    ``grad * <pointwise op>(...)`` into this): the product is written into ``t`` when that is
    exactly the result (same real float dtype, t already of the broadcast shape, contiguous,
    large) and the backward is not itself being recorded (t is then nobody else's)."""
    if (t.__class__ is Tensor and grad.__class__ is Tensor and t._numel >= _IN_PLACE_MIN
            and t._dtype is grad._dtype and t._dtype.kind == "f"
            and tls.excluded & AUTOGRAD_BIT and t.is_contiguous()
            and (grad._shape == t._shape or grad._numel == 1 and grad.ndim <= t.ndim)):
        return t.mul_(grad)
    return grad * t


# References to a saved tensor that only its node holds, as unary_into_saved sees them: the
# node's saved tuple, the formula's local name, this function's parameter, and getrefcount's
# argument. Any other holder (the user, another node, a hook, the profiler) makes the count
# higher, and the memory is then left alone.
_NODE_ONLY_REFS = 4


def unary_into_saved(op, x):
    """``op(x)`` for a saved tensor ``x`` that the formula reads only here (derivatives.py
    rewrites ``f(x)`` into this): computed in x's own memory when the backward keeps nothing
    for later (the engine's ``donating``: no retain_graph, no create_graph), x is a large
    dense float tensor of its own storage, and nothing but its node refers to it or its memory
    (x dies when the node releases it, so nobody can see the write). Then an n-element
    gradient like sin's needs no new buffer at all. The result is an alias without x's
    autograd state (it becomes a gradient)."""
    if (x.__class__ is Tensor and x._numel >= _IN_PLACE_MIN
            and getattr(donating, "on", False) and x._dtype.kind == "f"
            and sys.getrefcount(x) <= _NODE_ONLY_REFS
            and sys.getrefcount(x._storage) <= 2  # x's own slot and getrefcount's argument
            and x._offset == 0 and x.is_contiguous()
            and x._storage.nbytes == x._numel * x._dtype.itemsize
            and not x._storage.readonly):
        op(x, out=x)
        return x.detach()
    return op(x)


def sum_to(g: Tensor, shape) -> Tensor:
    """Sums ``g`` over the dimensions that broadcasting added to ``shape`` or expanded from 1."""
    shape = tuple(shape)
    if g.shape == shape:
        return g
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                      if n == 1 and g.shape[lead + i] != 1)
    if axes:
        g = tl.sum(g, axis=axes, keepdims=True)
    return tl.reshape(g, shape)


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, int):
        axis = (axis,)
    return tuple(sorted(normalize_axis(a, ndim, "backward") for a in axis))


def unreduce(grad: Tensor, shape, axis, keepdims) -> Tensor:
    """The gradient of a reduction over ``axis`` of a tensor of ``shape``, broadcast back to it."""
    shape = tuple(shape)
    if not keepdims:
        kept = list(shape)
        for a in _axes(axis, len(shape)):
            kept[a] = 1
        grad = tl.reshape(grad, tuple(kept))
    return tl.broadcast_to(grad, shape)


def reduced_count(shape, axis) -> int:
    n = 1
    for a in _axes(axis, len(shape)):
        n *= shape[a]
    return n
