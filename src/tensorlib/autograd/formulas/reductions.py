"""Backward helpers of reductions, scans, softmax / log_softmax, layer_norm and sort."""
from __future__ import annotations

from ...shape import normalize_axis
from ...dispatch.namespace import ops as tl
from .common import _axes, conj, reduced_count, sum_to, unreduce


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


def _fused(*tensors):
    """The fused normalization backward kernels (ops/normalization_backward.py) when this
    backward is not recorded (no create_graph); else None: the composite formulas below record
    a differentiable graph (double backward)."""
    from ..grad_mode import is_grad_enabled
    from ..graph import requires_grad
    if is_grad_enabled() and any(t is not None and requires_grad(t) for t in tensors):
        return None
    from ...ops import normalization_backward
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
    from ..indexing_backward import scatter_along_axis
    return scatter_along_axis(grad, idx, axis, x.shape)
