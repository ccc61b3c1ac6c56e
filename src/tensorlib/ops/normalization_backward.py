"""Fused backward of the row-wise normalizations (the gradient of their input), device-generic.

Autograd's formula helpers (autograd/formulas/: softmax_backward, log_softmax_backward,
layer_norm_backward) call these when the backward itself is not being recorded (no
create_graph); double backward keeps the composite formulas, which record a graph.

Each function lays its operands out as C-contiguous tensors in the compute dtype, rows of n
elements back to back: the normalized axis moved last (a view; copied only when the tensor is
not already dense that way) and half types widened to float32. The ``softmax_backward`` / ``log_softmax_backward`` /
``layer_norm_backward`` DispatchStubs then run one row per work item (Numba on the CPU, Triton
on CUDA) and the result is cast back and viewed in the input's axis order.
"""
from __future__ import annotations

import math

from ..allocation import empty
from .creation import zeros
from ..dispatch.stub import get_stub
from ..tensor import Tensor
from .normalization import compute_dtype_for
from .views import normalize_axis

__all__ = ["softmax_backward", "log_softmax_backward", "layer_norm_backward",
           "layer_norm_grad_xhat"]


def _check(op, grad, other, arg):
    for name, t in (("grad", grad), (arg, other)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): argument '{name}' must be a Tensor, got "
                            f"{type(t).__name__}")
        if t.dtype.kind != "f":
            raise TypeError(f"{op}(): argument '{name}' has dtype {t.dtype}; a floating-point "
                            f"dtype is required")
    if grad.shape != other.shape:
        raise ValueError(f"{op}(): argument 'grad' has shape {grad.shape}, but '{arg}' has "
                         f"shape {other.shape}")
    if grad.device != other.device:
        raise RuntimeError(f"{op}(): argument 'grad' is on '{grad.device}', but '{arg}' is on "
                           f"'{other.device}'")


def _as_rows(t, order, acc):
    """``t`` permuted to ``order`` (normalized axis last) and C-contiguous in ``acc``: rows of
    n elements back to back (no copy when it already is)."""
    if order is not None:
        t = t.permute(order)
    if t.dtype is not acc:
        t = t.astype(acc)
    return t if t.is_contiguous() else t.contiguous()


def _inverse(order):
    inv = [0] * len(order)
    for i, o in enumerate(order):
        inv[o] = i
    return tuple(inv)


def _softmax_like(op, grad, result, axis):
    _check(op, grad, result, "result")
    dtype = result.dtype
    if result.ndim == 0:
        # one row of one element
        grad, result = grad.reshape((1,)), result.reshape((1,))
        return _softmax_like(op, grad, result, 0).reshape(())
    ax = normalize_axis(axis, result.ndim, op)
    n = result.shape[ax]
    if result._numel == 0:
        return zeros(result.shape, dtype=dtype, device=result.device)
    last = result.ndim - 1
    order = None if ax == last else tuple(i for i in range(result.ndim) if i != ax) + (ax,)
    acc = compute_dtype_for(dtype)
    g = _as_rows(grad if grad.dtype is dtype else grad.astype(dtype), order, acc)
    y = _as_rows(result, order, acc)
    out = empty(y.shape, dtype=acc, device=result.device)
    get_stub(op).kernel_for(result.device.type, acc)(out, g, y, result._numel // n, n)
    if acc is not dtype:
        out = out.astype(dtype)
    return out if order is None else out.permute(_inverse(order))


def softmax_backward(grad, result, axis):
    """result * (grad - sum(grad * result, axis)): the input gradient of y = softmax(x, axis)."""
    return _softmax_like("softmax_backward", grad, result, axis)


def log_softmax_backward(grad, result, axis):
    """grad - exp(result) * sum(grad, axis): the input gradient of y = log_softmax(x, axis)."""
    return _softmax_like("log_softmax_backward", grad, result, axis)


def _layer_norm_rows(op, grad, x, normalized_shape):
    _check(op, grad, x, "x")
    ns = tuple(int(s) for s in normalized_shape)
    k = len(ns)
    if k == 0 or k > x.ndim or x.shape[x.ndim - k:] != ns:
        raise ValueError(f"{op}(): argument 'normalized_shape' = {ns} does not match the "
                         f"trailing dimensions of 'x' of shape {x.shape}")
    acc = compute_dtype_for(x.dtype)
    g = _as_rows(grad if grad.dtype is x.dtype else grad.astype(x.dtype), None, acc)
    return ns, math.prod(ns), acc, g, _as_rows(x, None, acc)


def layer_norm_backward(grad, x, weight, normalized_shape, eps):
    """The gradient of layer_norm's input ``x`` (normalized over the trailing
    ``normalized_shape``; ``weight`` of that shape or None)."""
    op = "layer_norm_backward"
    ns, n, acc, g, xr = _layer_norm_rows(op, grad, x, normalized_shape)
    if x._numel == 0:
        return zeros(x.shape, dtype=x.dtype, device=x.device)
    w = None
    if weight is not None:
        if weight.shape != ns:
            raise ValueError(f"{op}(): argument 'weight' has shape {weight.shape}, but "
                             f"normalized_shape is {ns}")
        w = _as_rows(weight, None, acc)
    out = empty(x.shape, dtype=acc, device=x.device)
    get_stub(op).kernel_for(x.device.type, acc)(out, g, xr, w, float(eps), x._numel // n, n)
    return out.astype(x.dtype) if acc is not x.dtype else out


def layer_norm_grad_xhat(grad, x, normalized_shape, eps):
    """grad * xhat (xhat = (x - mean) * rstd per row), x's shape, in the compute dtype (float32
    for half types): its sum over the leading dims is the gradient of layer_norm's weight."""
    op = "layer_norm_grad_xhat"
    ns, n, acc, g, xr = _layer_norm_rows(op, grad, x, normalized_shape)
    out = empty(x.shape, dtype=acc, device=x.device)
    if x._numel:
        get_stub(op).kernel_for(x.device.type, acc)(out, g, xr, float(eps), x._numel // n, n)
    return out
