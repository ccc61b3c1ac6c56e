"""The plain case of cross_entropy as a fused kernel pair, device-generic: class-index targets,
no class weights, no ignored targets, no label smoothing, logits (C,) or (N, C) of any
strides. ``tl.nn.functional.CrossEntropy`` calls these (the ops layer cannot see ``nn``).

* ``cross_entropy_forward(x, target, reduction)`` -> (loss, stats): one pass over the rows
  (the ``cross_entropy`` DispatchStub) computing each row's max m and ls = log(sum(exp(x - m))),
  the loss ls - (x[t] - m) and its reduction; ``stats`` (N, 2) keeps (m, ls) per row in the
  compute dtype for the backward. A target outside [0, C) raises :class:`TargetIndexError`
  (the kernel skips that row, never reading through it); the caller names the bad value.
* ``cross_entropy_backward(grad, x, target, stats, reduction)``: one pass (the
  ``cross_entropy_backward`` stub) writing (softmax - one_hot(t)) * grad (/ N for 'mean').

float16 / bfloat16 compute in float32 (as softmax does) and round once on store; the loss
and the gradient have the input's dtype.

Not ops.yaml ops: the forward returns an intermediate (``stats``) that only the backward
reads, and only nn's Function calls the pair (as autograd's formula helpers call
ops/normalization_backward.py); so ``nn.functional.cross_entropy`` takes the composed ops
while ``tl.jit`` traces (the tracer records dispatcher ops).
"""
from __future__ import annotations

from ..allocation import empty, new_dense_cpu
from ..dispatch.stub import get_stub
from .creation import full
from .normalization import compute_dtype_for

__all__ = ["cross_entropy_forward", "cross_entropy_backward", "TargetIndexError"]


class TargetIndexError(IndexError):
    """Some target is outside [0, C): the caller finds and names it."""


def _rows(x, target):
    """(rows, classes, x row stride, x column stride, target stride), in elements."""
    if x.ndim == 1:
        return 1, x.shape[0], 0, x._strides[0], 0
    n, c = x.shape
    return n, c, x._strides[0], x._strides[1], target._strides[0]


def _new(shape, dtype, device):
    """A new C-order tensor; CPU ones directly (this runs once per training step)."""
    if device.type == "cpu":
        t = new_dense_cpu(shape, dtype)
        if t is not None:
            return t
    return empty(shape, dtype=dtype, device=device)


def _same_device(op, x, t, arg):
    if t.device != x.device:
        raise RuntimeError(f"{op}(): argument '{arg}' is on '{t.device}', but the input is on "
                           f"'{x.device}'")


def cross_entropy_forward(x, target, reduction):
    """(loss, stats) for logits ``x`` (C,) / (N, C) and integer ``target`` () / (N,);
    ``reduction``: 'mean', 'sum' or 'none'."""
    op = "cross_entropy"
    _same_device(op, x, target, "target")
    acc = compute_dtype_for(x.dtype)
    n, c, xs, xc, ts = _rows(x, target)
    out = _new((n,) if reduction == "none" and x.ndim == 2 else (), x.dtype, x.device)
    stats = _new((n, 2), acc, x.device)
    if n == 0:  # no rows: the sum of nothing is 0, its mean nan (as tl.mean of (0,))
        if reduction != "none":
            out = full((), float("nan") if reduction == "mean" else 0.0, dtype=x.dtype,
                       device=x.device)
        return out, stats
    bad = get_stub(op).kernel_for(x.device.type, acc)(out, stats, x, target, n, c, xs, xc, ts,
                                                      reduction, acc)
    if bad:
        raise TargetIndexError(f"{op}(): {bad} target(s) out of bounds for {c} classes")
    return out, stats


def cross_entropy_backward(grad, x, target, stats, reduction):
    """The gradient of cross_entropy_forward's loss with respect to ``x`` (x's shape and dtype,
    C-contiguous), given the loss gradient ``grad`` (the loss's shape)."""
    op = "cross_entropy_backward"
    _same_device(op, x, grad, "grad")
    acc = compute_dtype_for(x.dtype)
    n, c, xs, xc, ts = _rows(x, target)
    g = grad if grad.dtype is acc else grad.astype(acc)
    gs = g._strides[0] if g.ndim == 1 else 0
    if gs < 0:
        g, gs = g.contiguous(), 1
    out = _new(x.shape, x.dtype, x.device)
    get_stub(op).kernel_for(x.device.type, acc)(out, x, target, stats, g, n, c, xs, xc, ts, gs,
                                                n if reduction == "mean" else 1, acc)
    return out
