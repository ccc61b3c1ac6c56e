"""Differentiable views and in-place writes through them.

A view op's output remembers its base (the tensor the chain of views started from). When an
in-place op writes through a view, the base's history changes too: the base gets a CopySlices node
(the gradient of the base is the incoming one, with the view's region replaced by what the
in-place op's backward gives for its old value), and the view's grad_fn becomes a view of the base
again. A view whose base was written by another path notices by the storage version and
regenerates its grad_fn the same way (PyTorch's view rebasing).
"""
from __future__ import annotations

from ..tensor import Tensor
from .graph import Node, attach_output, edge_of
from ..dispatch.namespace import ops as tl

__all__ = ["mark_view", "after_inplace", "refresh_view_grad_fn"]


def _geometry(view: Tensor, base: Tensor):
    if not base.is_contiguous():
        raise RuntimeError(
            f"autograd: an in-place write through a view of a non-contiguous base tensor (shape "
            f"{base.shape}, strides {base.stride()}) is not supported; write into a contiguous "
            f"copy (base.contiguous()) instead")
    return view._shape, view._strides, view._offset - base._offset


def mark_view(out: Tensor, src: Tensor) -> None:
    m_src = src._autograd
    base = m_src.view_base if m_src is not None and m_src.view_base is not None else src
    m = out._autograd
    m.view_base = base
    m.view_version = out._storage.version


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
        g = grads[0]
        res = tl.zeros(self.base_shape, dtype=g.dtype, device=g.device)
        shape, strides, offset = self.geometry
        tl.as_strided(res, shape, strides, offset).copy_(g)
        return [res]


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
        res = g.clone()
        shape, strides, offset = self.geometry
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
