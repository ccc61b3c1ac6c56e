"""Helpers the derivatives.yaml formulas call: the parts of a backward that are more than one
expression. Every helper is written in tensorlib ops, so a backward is itself differentiable
(double backward records it like any forward)."""
from __future__ import annotations

import cmath
import math
import sys

from .. import dtypes as _dt
from ..shape import normalize_axis
from ..dispatch.keys import AUTOGRAD_BIT, tls
from ..tensor import Tensor
from ..dispatch.namespace import ops as tl
from . import indexing_backward  # noqa: F401 - also installs Tensor.__getitem__/__setitem__ hooks
from .graph import donating
from .views import zeros_with_region

__all__ = ["HELPERS"]

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
# node's env and saved list, the formula's local name, this function's parameter, and
# getrefcount's argument. Any other holder (the user, another node, a hook, the profiler) makes
# the count higher, and the memory is then left alone.
_NODE_ONLY_REFS = 5


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


def mean_backward(grad, shape, axis, keepdims):
    return unreduce(grad, shape, axis, keepdims) / max(reduced_count(shape, axis), 1)


def prod_backward(grad, x, result, axis, keepdims):
    """d prod / d x_i = product of the others; exact with zeros (no division by x_i)."""
    axes = _axes(axis, x.ndim)
    g = unreduce(grad, x.shape, axis, keepdims)
    if x.numel() == 0:
        return tl.zeros_like(x)
    # move the reduced axes last and flatten them: one row per output element
    rest = tuple(a for a in range(x.ndim) if a not in axes)
    perm = rest + axes
    xr = tl.permute(x, perm)
    lead = xr.shape[:len(rest)]
    n = reduced_count(x.shape, axis)
    rows = tl.reshape(xr, lead + (n,))
    ones = tl.ones(lead + (1,), dtype=x.dtype, device=x.device)
    # exclusive products from the left and from the right
    left = tl.cumprod(tl.concat([ones, rows[..., :-1]], axis=-1), axis=-1)
    right = tl.flip(tl.cumprod(tl.concat([ones, tl.flip(rows, axis=-1)[..., :-1]], axis=-1),
                               axis=-1), axis=-1)
    others = tl.reshape(left * right, xr.shape)
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return g * conj(tl.permute(others, tuple(inv)))


def minmax_backward(grad, x, result, axis, keepdims):
    """max/min over axes: the gradient is shared evenly among the elements equal to the result
    (ties included), as NumPy-style amax/amin."""
    r = unreduce(result, x.shape, axis, keepdims)
    mask = tl.astype(tl.equal(x, r), grad.dtype)
    count = tl.sum(mask, axis=_axes(axis, x.ndim), keepdims=True)
    return unreduce(grad, x.shape, axis, keepdims) * mask / count


def var_backward(grad, x, axis, keepdims, correction):
    n = reduced_count(x.shape, axis)
    mu = tl.mean(x, axis=_axes(axis, x.ndim), keepdims=True)
    return unreduce(grad, x.shape, axis, keepdims) * (2.0 / (n - correction)) * (x - mu)


def std_backward(grad, x, result, axis, keepdims, correction):
    """d std = d var / (2 std); where std is 0 (constant rows) the gradient is 0, not nan
    (PyTorch masks it the same way)."""
    zero = tl.equal(result, 0)
    g = grad / (tl.where(zero, tl.ones_like(result), result) * 2.0)
    return var_backward(tl.where(zero, tl.zeros_like(g), g), x, axis, keepdims, correction)


def cumsum_backward(grad, axis):
    if axis is None:
        # cumsum of the flattened tensor: the caller reshapes the result back
        return tl.flip(tl.cumsum(tl.flip(grad, axis=(0,)), axis=0), axis=(0,))
    return tl.flip(tl.cumsum(tl.flip(grad, axis=(axis,)), axis=axis), axis=(axis,))


def cumsum_input_backward(grad, x, axis):
    if axis is None:
        return tl.reshape(cumsum_backward(tl.reshape(grad, (-1,)), None), x.shape)
    return cumsum_backward(grad, axis)


def cumulative_sum_backward(grad, x, axis, include_initial):
    if axis is None:
        axis = 0
    if include_initial:
        n = grad.shape[axis]
        grad = tl.narrow(grad, axis, 1, n - 1)
    return cumsum_backward(grad, axis)


def cumulative_prod_backward(grad, x, axis, include_initial):
    if axis is None:
        axis = 0
    if include_initial:
        grad = tl.narrow(grad, axis, 1, grad.shape[axis] - 1)
    return cumprod_backward(grad, x, axis)


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


def cumprod_backward(grad, x, axis):
    """Sum over j >= i of grad_j * prod_{k <= j, k != i} x_k, exact with zeros: built from
    exclusive prefix products (no division by x)."""
    flat = axis is None
    if flat:
        shape = x.shape
        x = tl.reshape(x, (-1,))
        grad = tl.reshape(grad, (-1,))
        axis = 0
    axis = normalize_axis(axis, x.ndim, "cumprod")
    n = x.shape[axis]
    if n == 0:
        out = tl.zeros_like(x)
        return tl.reshape(out, shape) if flat else out
    # O(n^2) in the scanned length but exact: row i of the result sums
    # grad_j * prefix_{j, without i} for j >= i.
    xs = tl.moveaxis(x, (axis,), (-1,))
    gs = tl.moveaxis(grad, (axis,), (-1,))
    cols = []
    for i in range(n):
        ones = tl.ones(xs.shape[:-1] + (1,), dtype=x.dtype, device=x.device)
        without = tl.concat([xs[..., :i], ones, xs[..., i + 1:]], axis=-1)
        pref = tl.cumprod(without, axis=-1)
        cols.append(tl.sum(gs[..., i:] * conj(pref[..., i:]), axis=-1, keepdims=True))
    out = tl.moveaxis(tl.concat(cols, axis=-1), (-1,), (axis,))
    return tl.reshape(out, shape) if flat else out


def sgn(x):
    """x / |x| (0 at 0): the derivative direction of abs for real and complex x."""
    if x.dtype.kind != "c":
        return tl.sign(x)
    a = tl.abs(x)
    return tl.where(tl.equal(a, 0), tl.zeros_like(x), x / tl.astype(a, x.dtype))


def sign_backward(grad, x, result):
    """sign is piecewise constant for real x; for complex x it is x / |x|, whose gradient
    (conjugate Wirtinger convention) is (grad - sgn * Re(conj(grad) * sgn)) / |x|, 0 at 0."""
    if x.dtype.kind != "c":
        return tl.zeros_like(grad)
    a = tl.abs(x)
    zero = tl.equal(a, 0)
    safe = tl.where(zero, tl.ones_like(a), a)
    g = (grad - result * tl.real(conj(grad) * result)) / safe
    return tl.where(zero, tl.zeros_like(g), g)


def maximum_backward(grad, a, b, take_a: bool):
    """Gradient of maximum/minimum for operand a (take_a: the op's winning comparison for a);
    ties split the gradient evenly."""
    half = grad * 0.5
    win = tl.greater(a, b) if take_a else tl.less(a, b)
    return tl.where(win, grad, tl.where(tl.equal(a, b), half, tl.zeros_like(grad)))


def pow_self_backward(grad, base, exponent):
    if not _is_tensor(exponent) and exponent == 0:
        return tl.zeros_like(grad)
    d = exponent * tl.pow(base, exponent - 1)
    if _is_tensor(exponent):
        d = tl.where(tl.equal(exponent, 0), tl.zeros_like(d), d)
    return grad * conj(d)


def pow_exponent_backward(grad, base, exponent, result):
    if _is_tensor(base):
        lg = tl.log(base) if base.dtype.kind == "c" else tl.log(base)
        d = result * lg
        zero_base = tl.logical_and(tl.equal(base, 0), tl.greater_equal(tl.real(exponent) if
                                                                        _is_tensor(exponent) and exponent.dtype.kind == "c" else exponent, 0))
        d = tl.where(zero_base, tl.zeros_like(d), d)
    else:
        if base == 0:
            return tl.zeros_like(grad)
        lg = cmath.log(base) if isinstance(base, complex) or base < 0 else math.log(base)
        d = result * lg
    return grad * conj(d)


def clip_backward(grad, x, lo, hi):
    keep = tl.ones_like(x, dtype=_dt.bool_)
    if lo is not None:
        keep = tl.logical_and(keep, tl.greater_equal(x, lo))
    if hi is not None:
        keep = tl.logical_and(keep, tl.less_equal(x, hi))
    return tl.where(keep, grad, tl.zeros_like(grad))


def clip_bound_backward(grad, x, lo, hi, which):
    """Gradient for the min (which='min') or max bound: where that bound decided the result.
    With min > max the result is max everywhere (minimum(maximum(x, min), max)), so max takes
    the whole gradient there and min none, as in PyTorch's clamp."""
    if which == "min":
        sel = tl.less(x, lo)
        if hi is not None:
            sel = tl.logical_and(sel, tl.less_equal(lo, hi))
    else:
        sel = tl.greater(x, hi)
        if lo is not None:
            sel = tl.logical_or(sel, tl.greater(lo, hi))
    return tl.where(sel, grad, tl.zeros_like(grad))


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
    from .indexing_backward import index_add_flat
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


def matmul_backward(grad, a, b, which):
    """matmul's gradient for operand ``which`` ('a' or 'b'), 1-D operands and batch broadcasting
    included (the broadcast batch dimensions are summed away by the caller's sum_to)."""
    a2 = tl.reshape(a, (1,) + a.shape) if a.ndim == 1 else a
    b2 = tl.reshape(b, b.shape + (1,)) if b.ndim == 1 else b
    g = grad
    if a.ndim == 1 and b.ndim == 1:
        g = tl.reshape(g, (1, 1))
    elif a.ndim == 1:
        g = tl.unsqueeze(g, -2)
    elif b.ndim == 1:
        g = tl.unsqueeze(g, -1)
    if which == "a":
        r = tl.matmul(g, conj(tl.matrix_transpose(b2)))
        if a.ndim == 1:
            r = tl.squeeze(r, axis=(-2,))
            if r.ndim > 1:
                r = tl.sum(r, axis=tuple(range(r.ndim - 1)))
        return r
    r = tl.matmul(conj(tl.matrix_transpose(a2)), g)
    if b.ndim == 1:
        r = tl.squeeze(r, axis=(-1,))
        if r.ndim > 1:
            r = tl.sum(r, axis=tuple(range(r.ndim - 1)))
    return r


def vecdot_backward(grad, a, b, axis, which):
    g = tl.unsqueeze(grad, axis if axis < 0 else axis)
    if which == "a":
        return b * conj(g)
    return a * g


def tensordot_backward(grad, a, b, axes, which):
    """tensordot is one matmul of permuted operands: out = A (free_a x C) @ B (C x free_b) with
    A = a's free axes then its contracted ones, B = b's contracted axes then its free ones; so
    dA = dOut @ B^H and dB = A^H @ dOut, reshaped and permuted back."""
    from ..ops.matmul import _tensordot_axes
    ax_a, ax_b = _tensordot_axes(axes, a.ndim, b.ndim)
    free_a = [d for d in range(a.ndim) if d not in ax_a]
    free_b = [d for d in range(b.ndim) if d not in ax_b]
    na = math.prod(a.shape[d] for d in free_a)
    nc = math.prod(a.shape[d] for d in ax_a)
    nb = math.prod(b.shape[d] for d in free_b)
    g2 = tl.reshape(grad, (na, nb))
    if which == "a":
        perm = free_a + list(ax_a)
        bm = tl.reshape(tl.permute(b, list(ax_b) + free_b), (nc, nb))
        r = tl.matmul(g2, conj(tl.matrix_transpose(bm)))
        r = tl.reshape(r, tuple(a.shape[d] for d in perm))
    else:
        perm = list(ax_b) + free_b
        am = tl.reshape(tl.permute(a, free_a + list(ax_a)), (na, nc))
        r = tl.matmul(conj(tl.matrix_transpose(am)), g2)
        r = tl.reshape(r, tuple(b.shape[d] for d in perm))
    return tl.permute(r, inverse_permutation(perm))


def _fused(*tensors):
    """The fused normalization backward kernels (ops/normalization_backward.py) when this
    backward is not recorded (no create_graph); else None: the composite formulas below record
    a differentiable graph (double backward)."""
    from .grad_mode import is_grad_enabled
    from .graph import requires_grad
    if is_grad_enabled() and any(t is not None and requires_grad(t) for t in tensors):
        return None
    from ..ops import normalization_backward
    return normalization_backward


def softmax_backward(grad, result, axis):
    fused = _fused(grad, result)
    if fused is not None:
        return fused.softmax_backward(grad, result, axis)
    return result * (grad - tl.sum(grad * result, axis=(axis,), keepdims=True))


def log_softmax_backward(grad, result, axis):
    fused = _fused(grad, result)
    if fused is not None:
        return fused.log_softmax_backward(grad, result, axis)
    return grad - tl.exp(result) * tl.sum(grad, axis=(axis,), keepdims=True)


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
        from .indexing_backward import index_add_axis
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


def where_backward(grad, condition, take_self):
    z = tl.zeros_like(grad)
    return tl.where(condition, grad, z) if take_self else tl.where(condition, z, grad)


def copysign_backward(grad, x, result):
    ratio = tl.where(tl.equal(x, 0), tl.zeros_like(result), result / tl.where(
        tl.equal(x, 0), tl.ones_like(x), x))
    return grad * ratio


def layer_norm_backward(grad, x, weight, normalized_shape, eps, which):
    """Composite layer_norm backward (normalized over the trailing ``normalized_shape``)."""
    if which == "bias":  # needs no statistics
        return sum_to(grad, tuple(normalized_shape))
    fused = _fused(grad, x, weight)
    if fused is not None:
        if which == "x":
            return fused.layer_norm_backward(grad, x, weight, normalized_shape, eps)
        return sum_to(fused.layer_norm_grad_xhat(grad, x, normalized_shape, eps), weight.shape)
    k = len(normalized_shape)
    axes = tuple(range(x.ndim - k, x.ndim))
    mu = tl.mean(x, axis=axes, keepdims=True)
    xc = x - mu
    var = tl.mean(xc * xc, axis=axes, keepdims=True)
    rstd = 1.0 / tl.sqrt(var + eps)
    xhat = xc * rstd
    if which == "weight":
        return sum_to(grad * xhat, weight.shape)
    gx = grad * weight if weight is not None else grad
    m1 = tl.mean(gx, axis=axes, keepdims=True)
    m2 = tl.mean(gx * xhat, axis=axes, keepdims=True)
    return rstd * (gx - m1 - xhat * m2)


def sort_backward(grad, x, axis, descending, stable):
    idx = tl.argsort(x, axis=axis, descending=descending, stable=stable)
    from .indexing_backward import scatter_along_axis
    return scatter_along_axis(grad, idx, axis, x.shape)


def take_along_axis_backward(grad, x, indices, axis):
    from .indexing_backward import scatter_add_along_axis
    return scatter_add_along_axis(grad, indices, axis, x.shape)


def take_backward(grad, x, indices, axis):
    from .indexing_backward import index_add_axis
    return index_add_axis(grad, indices, axis, x.shape)


HELPERS = {name: obj for name, obj in globals().items()
           if callable(obj) and not name.startswith("_") and obj.__module__ == __name__}
HELPERS.update(LN2=_LN2, LN10=_LN10, TWO_OVER_SQRT_PI=_TWO_OVER_SQRT_PI)
