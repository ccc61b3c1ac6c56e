"""Backward helpers of views, joins / splits and index-taking ops."""
from __future__ import annotations

from ... import dtypes as _dt
from ...shape import normalize_axis
from ...dispatch.namespace import ops as tl
from ..views import zeros_with_region
from .common import sum_to


def broadcast_arrays_backward(grads, arrays):
    return [sum_to(g, a.shape) for g, a in zip(grads, arrays)]


def meshgrid_backward(grads, arrays, indexing):
    """Output i broadcasts 1-D array i along one axis (axes 0 and 1 swapped for 'xy')."""
    n = len(arrays)
    out = []
    for i, (g, a) in enumerate(zip(grads, arrays)):
        ax = i
        if indexing == "xy" and n >= 2 and i < 2:
            ax = 1 - i
        others = tuple(d for d in range(g.ndim) if d != ax)
        out.append(tl.reshape(tl.sum(g, axis=others) if others else g, a.shape))
    return out


def inverse_permutation(axes):
    inv = [0] * len(axes)
    for i, a in enumerate(axes):
        inv[normalize_axis(a, len(axes), "permute")] = i
    return tuple(inv)


def squeeze_backward(grad, shape):
    return tl.reshape(grad, tuple(shape))


def slice_backward(grad, shape, dim, start, length):
    """Zero gradient of ``shape`` with the narrowed slab set to ``grad``."""
    return zeros_with_region(grad, shape, None, lambda t: tl.narrow(t, dim, start, length))


def select_backward(grad, shape, dim, index):
    return zeros_with_region(grad, shape, None, lambda t: tl.select(t, dim, index))


def diagonal_backward(grad, shape, offset, dim1, dim2):
    return zeros_with_region(grad, shape, None, lambda t: tl.diagonal(t, offset, dim1, dim2))


def as_strided_backward(grad, shape, strides, offset, storage_size, size, stride,
                        storage_offset):
    """Scatter-adds the view's gradient into the storage positions it read (overlapping views
    read a position several times) and views the result with the input's geometry. Only the
    input's geometry is saved, not the input: writing into it later does not void this."""
    from ..indexing_backward import index_add_flat
    n = storage_size
    pos = tl.arange(n, dtype=_dt.int64, device=grad.device)
    off = offset if storage_offset is None else storage_offset
    idx = tl.as_strided(pos, size, stride, off)
    flat = index_add_flat(n, tl.reshape(idx, (-1,)), tl.reshape(grad, (-1,)))
    return tl.as_strided(flat, shape, strides, offset)


def unbind_backward(grads, dim):
    return tl.stack(list(grads), axis=dim)


def split_backward(grads, dim):
    return tl.concat(list(grads), axis=dim)


def concat_backward(grad, arrays, axis):
    if axis is None:
        grad_parts, start = [], 0
        for a in arrays:
            grad_parts.append(tl.reshape(grad[start:start + a.numel()], a.shape))
            start += a.numel()
        return grad_parts
    parts, start = [], 0
    for a in arrays:
        n = a.shape[axis] if a.ndim else 1
        parts.append(tl.narrow(grad, axis, start, n))
        start += n
    return parts


def stack_backward(grad, n, axis):
    return list(tl.unbind(grad, axis))


def flip_backward(grad, axis):
    return tl.flip(grad, axis=axis)


def roll_backward(grad, shift, axis):
    return tl.roll(grad, tuple(-s for s in shift), axis=axis)


def tril_backward(grad, k):
    return tl.tril(grad, k=k)


def triu_backward(grad, k):
    return tl.triu(grad, k=k)


def tile_backward(grad, shape, reps):
    """Each input element appears in every tile: fold the tiles onto a leading axis and sum."""
    shape = tuple(shape)
    reps = tuple(reps)
    nd = max(len(shape), len(reps))
    shape_p = (1,) * (nd - len(shape)) + shape
    reps_p = (1,) * (nd - len(reps)) + reps
    split = []
    for r, n in zip(reps_p, shape_p):
        split += [r, n]
    g = tl.reshape(grad, tuple(split))
    g = tl.sum(g, axis=tuple(range(0, 2 * nd, 2)))
    return tl.reshape(g, shape)


def repeat_backward(grad, x, repeats, axis):
    """repeat with one count for every element: fold the copies onto a new axis and sum; with
    a count per element, add each output slice into the element it copies (the same repeat of
    arange says which)."""
    if len(repeats) != 1:
        from ..indexing_backward import index_add_axis
        if axis is None:
            n = x.numel()
            src = tl.repeat(tl.arange(n, dtype=_dt.int64, device=grad.device), list(repeats))
            return tl.reshape(index_add_axis(tl.reshape(grad, (-1,)), src, 0, (n,)), x.shape)
        axis = normalize_axis(axis, x.ndim, "repeat")
        src = tl.repeat(tl.arange(x.shape[axis], dtype=_dt.int64, device=grad.device),
                        list(repeats))
        return index_add_axis(grad, src, axis, x.shape)
    r = repeats[0]
    if axis is None:
        g = tl.reshape(grad, (x.numel(), r))
        return tl.reshape(tl.sum(g, axis=(1,)), x.shape)
    axis = normalize_axis(axis, x.ndim, "repeat")
    shape = x.shape[:axis] + (x.shape[axis], r) + x.shape[axis + 1:]
    return tl.sum(tl.reshape(grad, shape), axis=(axis + 1,))


def diff_backward(grad, x, axis, n, prepend, append, which):
    """diff is linear: its adjoint applied n times (the difference of the zero-padded gradient),
    then the slice belonging to x, prepend or append."""
    axis = normalize_axis(axis, grad.ndim, "diff")
    g = grad
    for _ in range(n):
        shape0 = list(g.shape)
        shape0[axis] = 1
        z = tl.zeros(tuple(shape0), dtype=g.dtype, device=g.device)
        padded = tl.concat([z, g, z], axis=axis)
        g = tl.narrow(padded, axis, 0, padded.shape[axis] - 1) - \
            tl.narrow(padded, axis, 1, padded.shape[axis] - 1)
    npre = prepend.shape[axis] if prepend is not None and prepend.ndim else (
        1 if prepend is not None else 0)
    nx = x.shape[axis]
    if which == "x":
        return tl.narrow(g, axis, npre, nx)
    if which == "prepend":
        return tl.narrow(g, axis, 0, npre)
    return tl.narrow(g, axis, npre + nx, g.shape[axis] - npre - nx)


def take_along_axis_backward(grad, x, indices, axis):
    from ..indexing_backward import scatter_add_along_axis
    return scatter_add_along_axis(grad, indices, axis, x.shape)


def take_backward(grad, x, indices, axis):
    from ..indexing_backward import index_add_axis
    return index_add_axis(grad, indices, axis, x.shape)
