"""Differentiable views and in-place writes through them.

A view op's output remembers its base (the tensor the chain of views started from). When an
in-place op writes through a view, the base's history changes too: the base gets a CopySlices node
(the gradient of the base is the incoming one, with the view's region replaced by what the
in-place op's backward gives for its old value), and the view's grad_fn becomes a view of the base
again. A view whose base was written by another path notices by the storage version and
regenerates its grad_fn the same way (PyTorch's view rebasing).
"""
from __future__ import annotations

from ..allocation import empty_strided
from ..shape import is_dense
from ..dispatch.keys import AUTOGRAD_BIT, tls
from ..tensor import Tensor
from .grad_mode import no_grad
from .graph import Node, attach_output, edge_of, requires_grad
from ..dispatch.namespace import ops as tl

__all__ = ["mark_view", "after_inplace", "refresh_view_grad_fn", "zeros_with_region"]


def _geometry(view: Tensor, base: Tensor):
    """Where the view's elements sit among the base's: the view's shape, strides and offset
    relative to the base's first element, and the base's own strides. A gradient of the base
    laid out with those strides holds the view's region at exactly that geometry,
    whatever dense layout the base has (a transposed result, a permuted one...)."""
    if not is_dense(base._shape, base._strides, allow_negative=False):
        raise RuntimeError(
            f"autograd: an in-place write through a view of a base tensor whose elements are "
            f"not one gap-free block with positive strides (shape {base.shape}, strides "
            f"{base.stride()}) is not supported; write into a copy (base.clone()) instead")
    return view._shape, view._strides, view._offset - base._offset, base._strides


def mark_view(out: Tensor, src: Tensor) -> None:
    m_src = src._autograd
    base = m_src.view_base if m_src is not None and m_src.view_base is not None else src
    m = out._autograd
    m.view_base = base
    m.view_version = out._storage.version


class _RegionOfZeros(Node):
    """grad_fn of zeros_with_region's result: only the region depends on ``g``, so the gradient
    flowing back to ``g`` is that region read back (double backward goes through here)."""

    __slots__ = ("region",)
    _name = "ScatterBackward"

    def apply(self, grads):
        return [self.region(grads[0])]


def zeros_with_region(g: Tensor, shape, strides, region) -> Tensor:
    """A zero tensor of ``shape`` (laid out with ``strides``; C order when None) whose view
    ``region(t)`` holds ``g``: the backward of a view op. Written in place under no_grad (an
    in-place write into a view of a tensor that needs no grad would not reach that tensor's
    history), then recorded as one node when the backward itself is being recorded."""
    with no_grad():
        out = (tl.zeros(tuple(shape), dtype=g._dtype, device=g.device) if strides is None
               else empty_strided(tuple(shape), strides, dtype=g._dtype, device=g.device))
        if strides is not None:
            out.fill_(0)
        region(out).copy_(g)
    if requires_grad(g) and not tls.excluded & AUTOGRAD_BIT:
        node = _RegionOfZeros((edge_of(g),), 1)
        node.region = region
        attach_output(out, node, 0)
    return out


def _in_layout(t: Tensor, strides) -> Tensor:
    """``t`` with exactly ``strides`` and offset 0 (as_strided reads storage positions)."""
    if t._strides == tuple(strides) and t._offset == 0:
        return t
    out = empty_strided(t._shape, strides, dtype=t._dtype, device=t.device)
    out.copy_(t)
    return out


class ViewOfBase(Node):
    """grad_fn of a view after its base's history changed: scatters the view's gradient into a
    zero gradient of the base."""

    __slots__ = ("base_shape", "base_dtype", "geometry")
    _name = "AsStridedBackward"

    def __init__(self, base: Tensor, geometry):
        super().__init__((edge_of(base),), 1)
        self.base_shape = base._shape
        self.base_dtype = base._dtype
        self.geometry = geometry

    def apply(self, grads):
        shape, strides, offset, base_strides = self.geometry
        return [zeros_with_region(
            grads[0], self.base_shape, base_strides,
            lambda t: tl.as_strided(_in_layout(t, base_strides), shape, strides, offset))]


class CopySlices(Node):
    """The base's grad_fn after an in-place op wrote through one of its views."""

    __slots__ = ("fn", "geometry")
    _name = "CopySlices"

    def __init__(self, base_edge, geometry, fn: Node):
        super().__init__((base_edge,) + tuple(fn.next_functions[1:]), 1)
        self.fn = fn
        self.geometry = geometry

    def name(self):
        return "CopySlices"

    def release(self):
        self.fn.release()

    def apply(self, grads):
        g = grads[0]
        shape, strides, offset, base_strides = self.geometry
        res = empty_strided(g._shape, base_strides, dtype=g._dtype, device=g.device)
        res.copy_(g)  # the base's gradient in the base's layout: the region sits at geometry
        region = tl.as_strided(res, shape, strides, offset)
        sub = self.fn.apply([region.clone()])
        if sub[0] is None:
            region.fill_(0)
        else:
            region.copy_(sub[0])
        return [res] + list(sub[1:])


def after_inplace(t: Tensor, node: Node) -> None:
    """Makes ``t`` (just written in place by the op of ``node``) an output of that op, rebasing
    its base's history when ``t`` is a view."""
    m = t._autograd
    base = m.view_base if m is not None else None
    if base is None:
        attach_output(t, node, 0)
        return
    geometry = _geometry(t, base)
    attach_output(base, CopySlices(edge_of_base_before(base), geometry, node), 0)
    attach_output(t, ViewOfBase(base, geometry), 0)
    m.view_version = t._storage.version
    bm = base._autograd
    if bm.view_base is None:
        bm.view_version = t._storage.version


def edge_of_base_before(base: Tensor):
    m = base._autograd
    if m is not None and m.grad_fn is not None:
        return (m.grad_fn, m.output_nr)
    return edge_of(base)


def refresh_view_grad_fn(t: Tensor) -> None:
    m = t._autograd
    base = m.view_base
    m.view_version = t._storage.version
    bm = base._autograd
    if bm is None or (bm.grad_fn is None and not bm.requires_grad):
        return
    if bm.grad_fn is None:
        return  # the base is a leaf: the view's own history still leads to it
    attach_output(t, ViewOfBase(base, _geometry(t, base)), 0)
