"""Scatter-adds for the backward of gathers (take, take_along_axis, advanced indexing,
overlapping as_strided): repeated indices must add up, which no plain write does.

The accumulation runs on the host (NumPy's ``add.at`` over the gradient's memory; a CUDA gradient
is copied over and back). It is wrapped as an autograd Function whose own backward is the gather,
so double backward through it works.

Also autograd's side of ``Tensor.__getitem__`` / ``__setitem__`` (installed into indexing.py, which
sits below autograd): basic indexing gives a differentiable view (SliceBackward), advanced
indexing a gather whose backward scatter-adds (IndexBackward), and ``x[key] = v`` records an
in-place write (IndexPutBackward: x's gradient zero where written, v's the gathered gradient).
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes as _dt
from ..ops import indexing as _indexing
from ..shape import normalize_axis
from ..tensor import Tensor
from .function import Function
from .grad_mode import is_grad_enabled
from .graph import Node, attach_output, edge_of, requires_grad
from ..dispatch.namespace import ops as tl
from .views import after_inplace, mark_view, zeros_with_region

__all__ = ["index_add_flat", "scatter_add_along_axis", "scatter_along_axis", "index_add_axis",
           "autograd_getitem", "autograd_setitem"]


def _host(t):
    return t.cpu().numpy() if t.device.type != "cpu" else t.numpy()


class _IndexAddFlat(Function):
    """out = zeros(n); out[idx[k]] += values[k] (1-D)."""

    @staticmethod
    def forward(ctx, n, idx, values):
        ctx.save_for_backward(idx)
        dtype = values.dtype
        # half types add up in float32 (NumPy has no bfloat16; float16 sums lose digits)
        wide = values.astype(_dt.float32) if dtype.kind == "f" and dtype.itemsize == 2 \
            else values
        v = _host(wide)
        acc = np.zeros(n, dtype=v.dtype)
        np.add.at(acc, _host(idx).astype(np.int64), v)
        out = tl.asarray(acc, dtype=wide.dtype)
        if out.dtype is not dtype:
            out = out.astype(dtype)
        return out.to(values.device) if values.device.type != "cpu" else out

    @staticmethod
    def backward(ctx, g):
        (idx,) = ctx.saved_tensors
        return None, None, tl.take(g, idx)


def index_add_flat(n, idx, values):
    return _IndexAddFlat.apply(n, idx, values)


def _flat_positions(indices, axis, shape):
    """Flat positions (into a contiguous tensor of ``shape``) addressed by take_along_axis-style
    ``indices`` along ``axis``."""
    nd = len(shape)
    strides = [1] * nd
    for d in range(nd - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    ishape = indices.shape
    pos = tl.astype(indices, _dt.int64)
    pos = tl.where(tl.less(pos, 0), pos + shape[axis], pos) * strides[axis]
    for d in range(nd):
        if d == axis:
            continue
        r = tl.arange(ishape[d], dtype=_dt.int64, device=indices.device) * strides[d]
        r = tl.reshape(r, tuple(ishape[d] if i == d else 1 for i in range(nd)))
        pos = pos + r
    return pos


def scatter_add_along_axis(grad, indices, axis, shape):
    axis = normalize_axis(axis, len(shape), "take_along_axis")
    n = 1
    for s in shape:
        n *= s
    pos = _flat_positions(tl.broadcast_to(indices, grad.shape), axis, shape)
    flat = index_add_flat(n, tl.reshape(pos, (-1,)), tl.reshape(grad, (-1,)))
    return tl.reshape(flat, tuple(shape))


def scatter_along_axis(grad, indices, axis, shape):
    """For a permutation along ``axis`` (sort): no index repeats, so the scatter-add is exact."""
    return scatter_add_along_axis(grad, indices, axis, shape)


def index_add_axis(grad, indices, axis, shape):
    """Backward of take(x, indices, axis): rows of grad added into the rows they were taken from."""
    shape = tuple(shape)
    if axis is None:
        n = 1
        for s in shape:
            n *= s
        idx = tl.reshape(tl.astype(indices, _dt.int64), (-1,))
        idx = tl.where(tl.less(idx, 0), idx + n, idx)
        return tl.reshape(index_add_flat(n, idx, tl.reshape(grad, (-1,))), shape)
    axis = normalize_axis(axis, len(shape), "take")
    # move the axis first: rows of the flattened remainder
    g = tl.moveaxis(grad, (axis,), (0,))
    rest = g.shape[1:]
    m = 1
    for s in rest:
        m *= s
    idx = tl.astype(indices, _dt.int64)
    idx = tl.where(tl.less(idx, 0), idx + shape[axis], idx)
    pos = tl.reshape(idx, (-1, 1)) * m + tl.reshape(tl.arange(m, dtype=_dt.int64,
                                                              device=grad.device), (1, m))
    total = shape[axis] * m
    flat = index_add_flat(total, tl.reshape(pos, (-1,)), tl.reshape(g, (-1,)))
    out = tl.reshape(flat, (shape[axis],) + rest)
    return tl.moveaxis(out, (0,), (axis,))


# ---- Tensor.__getitem__ / __setitem__ with autograd ---------------------------------------------
# indexing.py calls these (through set_autograd_hooks) for tensors with autograd state; the
# element work is indexing.py's own, done on detached aliases, and these record the graph.

def _recording(*ts) -> bool:
    return is_grad_enabled() and any(requires_grad(t) for t in ts)


def _positions(shape, key, device):
    """The flat (C-order) positions of a tensor of ``shape`` that ``key`` selects, shaped as the
    selection: ``arange(numel).reshape(shape)[key]``."""
    n = math.prod(shape)
    return _indexing.getitem(tl.reshape(tl.arange(n, dtype=_dt.int64, device=device), shape),
                             key)


class _SliceBackward(Node):
    """grad_fn of ``x[key]`` for a basic key (ints, slices, None, Ellipsis): a view of x."""

    __slots__ = ("shape", "key")
    _name = "SliceBackward"

    def __init__(self, edge, shape, key):
        super().__init__((edge,), 1)
        self.shape, self.key = shape, key

    def apply(self, grads):
        key = self.key  # the key selects every position at most once: its adjoint is a copy
        return [zeros_with_region(grads[0], self.shape, None,
                                  lambda t: _indexing.getitem(t, key))]


class _IndexBackward(Node):
    """grad_fn of ``x[key]`` for an advanced key (integer arrays, masks): a gather, so the
    gradient is scatter-added (an element picked several times gets every gradient)."""

    __slots__ = ("shape", "key")
    _name = "IndexBackward"

    def __init__(self, edge, shape, key):
        super().__init__((edge,), 1)
        self.shape, self.key = shape, key

    def apply(self, grads):
        g = grads[0]
        pos = _positions(self.shape, self.key, g.device)
        flat = index_add_flat(math.prod(self.shape), tl.reshape(pos, (-1,)),
                              tl.reshape(g, (-1,)))
        return [tl.reshape(flat, self.shape)]


def autograd_getitem(x, key):
    out = _indexing.getitem(x.detach(), key)
    if not _recording(x):
        return out
    view = out._storage is x._storage   # basic indexing (a 0-d integer tensor key too) is a view
    node = (_SliceBackward if view else _IndexBackward)(edge_of(x), x._shape, key)
    attach_output(out, node, 0)
    if view:
        mark_view(out, x)
    return out


class _IndexPutBackward(Node):
    """grad_fn of x after ``x[key] = value``: x's old values survive outside the written
    positions (gradient zeroed there); the value gets the gradient of the positions it was
    written to, summed over its broadcasting."""

    __slots__ = ("key", "value_meta")
    _name = "IndexPutBackward"

    def __init__(self, x_edge, value_edge, key, value_meta):
        super().__init__((x_edge, value_edge), 1)
        self.key, self.value_meta = key, value_meta

    def apply(self, grads):
        g = grads[0]
        gx = gv = None
        if self.next_functions[0][0] is not None:
            keep = tl.ones(g.shape, dtype=g.dtype, device=g.device)
            _indexing.setitem(keep, self.key, 0)
            gx = g * keep
        if self.value_meta is not None:
            shape, dtype = self.value_meta
            gv = g[self.key]
            # the value may have fewer dims than the selection (broadcast) or extra leading 1s
            lead = len(shape) - gv.ndim
            core = shape[lead:] if lead > 0 else shape
            from .formulas import sum_to
            gv = tl.reshape(sum_to(gv, core), shape)
            if gv.dtype.kind == "c" and dtype.kind != "c":
                gv = tl.real(gv)
            if gv.dtype is not dtype:
                gv = gv.astype(dtype)
        return [gx, gv]


def autograd_setitem(x, key, value):
    value_grad = isinstance(value, Tensor) and requires_grad(value)
    if not _recording(x, value):
        _indexing.setitem(x.detach(), key, value.detach() if isinstance(value, Tensor) else value)
        return
    m = x._autograd
    base = m.view_base if m is not None else None
    for t, what in ((x, "tensor"), (base, "base of the view")):
        bm = t._autograd if t is not None else None
        if bm is not None and bm.grad_fn is None and bm.requires_grad:
            raise RuntimeError(
                f"__setitem__(): a leaf tensor that requires grad (the {what} written to) is "
                f"being used in an in-place operation; write into a copy (x.clone()), or wrap "
                f"the write in tl.no_grad()")
    x_edge = edge_of(x)
    v_edge = edge_of(value) if value_grad else (None, 0)
    meta = (value._shape, value._dtype) if value_grad else None
    _indexing.setitem(x.detach(), key, value.detach() if isinstance(value, Tensor) else value)
    node = _IndexPutBackward(x_edge, v_edge, key, meta)
    if x._storage.device.type == "cuda":
        from ..streams import current_stream
        node.stream = current_stream(x.device)
    after_inplace(x, node)


_indexing.set_autograd_hooks(autograd_getitem, autograd_setitem)
