"""Scatter-adds for the backward of gathers (take, take_along_axis, advanced indexing,
overlapping as_strided): repeated indices must add up, which no plain write does.

The accumulation runs on the host (NumPy's ``add.at`` over the gradient's memory; a CUDA gradient
is copied over and back). It is wrapped as an autograd Function whose own backward is the gather,
so double backward through it works.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..shape import normalize_axis
from .function import Function
from .namespace import ops as tl

__all__ = ["index_add_flat", "scatter_add_along_axis", "scatter_along_axis", "index_add_axis"]


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
