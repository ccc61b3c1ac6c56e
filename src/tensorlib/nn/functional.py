"""``tl.nn.functional``: activations, ``linear``, ``dropout`` and losses (PyTorch's names and
semantics), composed of differentiable tensorlib ops so their gradients (and double
gradients) come from the ops' derivatives.yaml formulas.

Bad input raises TypeError / ValueError naming the function and the argument.
"""
from __future__ import annotations

import math
import numbers

import tensorlib as tl

from ..autograd.function import Function
from ..dispatch import keys as _keys
from ..ops import cross_entropy as _xent
from ..autograd.grad_mode import is_grad_enabled
from ..ops.matmul import linear_2d as _linear_2d, mm_2d as _mm_2d, \
    transposed_2d as _transposed_2d
from ..ops.cross_entropy import TargetIndexError
from ..shape import broadcast_shapes
from ..tensor import Tensor

__all__ = ["relu", "gelu", "silu", "linear", "dropout", "mse_loss", "cross_entropy",
           "binary_cross_entropy_with_logits"]

_REDUCTIONS = ("mean", "sum", "none")
_TRACER_BIT = 1 << _keys.DispatchKey.Tracer


def _tracing() -> bool:
    """Whether tl.jit's tracer records on this thread (it sees ops only: the one-call routes
    below, which are not ops, step aside for it)."""
    return bool(_keys.TLS_IN_USE[0] and _keys.tls.included & _TRACER_BIT)


# ---------------------------------------------------------------- argument checks
def _tensor(x, op, arg):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{arg}' must be a tensorlib Tensor, got "
                        f"{type(x).__name__}")
    return x


def _floating(x, op, arg):
    _tensor(x, op, arg)
    if x.dtype.kind != "f":
        raise TypeError(f"{op}(): argument '{arg}' must be a real floating-point tensor, got "
                        f"{x.dtype}")
    return x


def _reduction(reduction, op):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{op}(): argument 'reduction' must be one of 'mean', 'sum', 'none', "
                         f"got {reduction!r}")
    return reduction


def _reduce(loss, reduction):
    if reduction == "mean":
        return tl.mean(loss)
    if reduction == "sum":
        return tl.sum(loss)
    return loss


def _broadcasts_to(t, shape, op, arg):
    try:
        ok = broadcast_shapes(t.shape, shape, op=op) == shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"{op}(): argument '{arg}' of shape {t.shape} does not broadcast to "
                         f"the input's shape {shape}")


def _same_shape(a, b, op, arg):
    if a.shape != b.shape:
        raise ValueError(f"{op}(): argument '{arg}' must have the input's shape {a.shape}, got "
                         f"{b.shape}")


# ---------------------------------------------------------------- activations
class ReLU(Function):
    """relu as one kernel each way: the composed where(x <= 0, 0, x) would differentiate
    as where(mask, zeros_like(grad), grad), an allocation and fill more per call. It saves its
    output (as PyTorch does; the next layer usually keeps it anyway), whose nonzero elements
    are exactly where the gradient passes: out = maximum(x, 0) is +0.0 where x <= 0 (-0.0
    included) and x elsewhere, nan and positive subnormals too. Its backward is a tensorlib
    op, so double backward works."""

    @staticmethod
    def forward(ctx, x):
        # maximum(x, 0.0) is where(x <= 0, 0, x) bit for bit (nan kept, -0.0 -> +0.0) and takes
        # the Python-scalar fast path (where with a scalar operand builds a TensorIterator)
        out = tl.maximum(x, 0.0)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        # where reads its condition as bool (out != 0): one pass, no mask kept from the forward
        return tl.where(out, grad, 0)


def relu(input: Tensor) -> Tensor:
    """max(input, 0); nan stays nan, and the gradient at 0 is 0 (as PyTorch)."""
    _tensor(input, "relu", "input")
    return ReLU.apply(input)


_SQRT1_2 = 1.0 / math.sqrt(2.0)
_SQRT_2_PI = math.sqrt(2.0 / math.pi)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x * Phi(x) with Phi the standard normal CDF (``approximate='none'``, through erf), or
    the tanh approximation (``approximate='tanh'``)."""
    _floating(input, "gelu", "input")
    if approximate == "none":
        return input * (tl.erf(input * _SQRT1_2) + 1.0) * 0.5
    if approximate == "tanh":
        inner = (input + input * input * input * 0.044715) * _SQRT_2_PI
        return input * (tl.tanh(inner) + 1.0) * 0.5
    raise ValueError(f"gelu(): argument 'approximate' must be 'none' or 'tanh', got "
                     f"{approximate!r}")


def silu(input: Tensor) -> Tensor:
    """x * sigmoid(x) (swish)."""
    _floating(input, "silu", "input")
    return input * tl.sigmoid(input)


# ---------------------------------------------------------------- layers
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """input @ weight.T + bias, with weight of shape (out_features, in_features) (or
    (in_features,): the output then drops the feature dim) and bias of shape (out_features,)."""
    op = "linear"
    _tensor(input, op, "input")
    _tensor(weight, op, "weight")
    # (the private fields: this runs once per layer per step)
    wshape, xshape = weight._shape, input._shape
    wnd = len(wshape)
    if wnd != 1 and wnd != 2:
        raise ValueError(f"{op}(): argument 'weight' must be 1-D or 2-D (out_features, "
                         f"in_features), got shape {wshape}")
    if not xshape:
        raise ValueError(f"{op}(): argument 'input' must have at least 1 dimension, got a 0-d "
                         f"tensor")
    if xshape[-1] != wshape[-1]:
        raise ValueError(f"{op}(): input's last dimension ({xshape[-1]}) must equal "
                         f"weight's in_features ({wshape[-1]}); input {xshape}, "
                         f"weight {wshape}")
    if bias is not None:
        _tensor(bias, op, "bias")
        n_out = wshape[0] if wnd == 2 else 1
        bshape = bias._shape
        if (bshape != (n_out,) and bshape != ()) or (wnd == 1 and bshape != ()):
            want = f"({n_out},)" if wnd == 2 else "() (a 0-d tensor)"
            raise ValueError(f"{op}(): argument 'bias' must have shape {want}, got "
                             f"{bshape}")
    dtype = input._dtype
    device = input._storage.device
    if wnd == 2 and dtype.kind in "fc" and dtype is weight._dtype and \
            (device is weight._storage.device or device == weight._storage.device) and (
                bias is None or (bias._dtype is dtype and (
                    device is bias._storage.device or device == bias._storage.device))):
        return Linear.apply(input, weight, bias)
    # mixed dtypes or devices, or a 1-D weight: the composed ops (promotion, their errors)
    out = tl.matmul(input, tl.matrix_transpose(weight) if weight.ndim == 2 else weight)
    return out if bias is None else out + bias


class Linear(Function):
    """linear as one node. Its weight gradient is grad^T @ input, computed directly in the
    weight's (out, in) C order: the composed matmul(input, weight.T) would hand back a
    transposed (strided) gradient that accumulating and optimizer steps then copy. One node
    instead of three (transpose, matmul, add) also halves the graph bookkeeping. The
    backward uses tensorlib ops, so double backward works."""

    @staticmethod
    def forward(ctx, x, w, b):
        ctx.save_for_backward(x, w)
        ctx.has_bias = b is not None
        # 2-D on the CPU: one call adds the bias into the fresh product (no add's allocation,
        # broadcast set-up and dispatch); not while tracing: the tracer must see the ops
        if not _tracing():
            out = _linear_2d(x, w, b)
            if out is not None:
                return out
        out = tl.matmul(x, tl.matrix_transpose(w))
        if b is not None:
            # out of place: a loop writing the array it reads does not vectorize (LLVM's overlap
            # check fails for an exact alias), so out += b took ~2x the time of out + b
            out = out + b
        return out

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad
        gx = gw = gb = None
        # 2-D, not recorded (no create_graph), not traced: the products straight through the
        # device kernel's direct route (a transposed view of grad, no copy); None falls back
        direct = grad.ndim == 2 and x.ndim == 2 and not is_grad_enabled() and not _tracing()
        if need_x:
            gx = _mm_2d(grad, w) if direct else None
            if gx is None:
                gx = tl.matmul(grad, w)
        if need_w or need_b:
            g2 = tl.reshape(grad, (-1, grad.shape[-1])) if grad.ndim != 2 else grad
            if need_w:
                x2 = tl.reshape(x, (-1, x.shape[-1])) if x.ndim != 2 else x
                if direct:
                    gw = _mm_2d(_transposed_2d(g2), x2)
                if gw is None:
                    gw = tl.matmul(tl.matrix_transpose(g2), x2)
            if need_b:
                gb = tl.sum(g2, axis=0)
        return gx, gw, gb


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False, *,
            generator=None) -> Tensor:
    """Zeroes each element with probability ``p`` and scales the rest by 1 / (1 - p), drawing
    the mask from ``generator`` (a ``tl.Generator``; default: the device's default generator,
    Philox4x32-10, so a seed reproduces it on every device). Identity when not training.
    ``inplace=True`` writes the result into ``input`` and returns it (an in-place multiply:
    autograd records it, and refuses it on a leaf that requires grad, as every in-place op)."""
    op = "dropout"
    _floating(input, op, "input")
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 <= float(p) <= 1.0:
        raise ValueError(f"{op}(): argument 'p' must be a probability in [0, 1], got {p!r}")
    if not isinstance(inplace, bool):
        raise TypeError(f"{op}(): argument 'inplace' must be a bool, got {inplace!r}")
    p = float(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input.mul_(0.0) if inplace else input * 0.0
    mask = tl.bernoulli(input.detach(), 1.0 - p, generator=generator)
    mask *= 1.0 / (1.0 - p)  # a fresh tensor that needs no grad: scaled in place
    return input.mul_(mask) if inplace else input * mask


# ---------------------------------------------------------------- losses
def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """(input - target) ** 2, reduced by ``reduction`` ('mean', 'sum' or 'none')."""
    op = "mse_loss"
    _floating(input, op, "input")
    _tensor(target, op, "target")
    _same_shape(input, target, op, "target")
    _reduction(reduction, op)
    d = input - target
    return _reduce(d * d, reduction)


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  ignore_index: int = -100, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """Cross entropy of logits ``input`` (shape (C,), (N, C) or (N, C, d1, ...)) with integer
    class indices ``target`` (shape (), (N,) or (N, d1, ...)): log_softmax over the class dim,
    then the target's entry. ``weight`` (C,) rescales classes; targets equal to
    ``ignore_index`` count nothing; 'mean' divides by the summed weight of the counted targets
    (PyTorch's rule). ``label_smoothing`` mixes in the uniform distribution over classes."""
    op = "cross_entropy"
    _floating(input, op, "input")
    _tensor(target, op, "target")
    if target.dtype.kind not in "iu":
        raise TypeError(f"{op}(): argument 'target' must be an integer tensor of class indices, "
                        f"got {target.dtype} (probability targets are not supported)")
    _reduction(reduction, op)
    if isinstance(label_smoothing, bool) or not isinstance(label_smoothing, numbers.Real) \
            or not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"{op}(): argument 'label_smoothing' must be in [0, 1], got "
                         f"{label_smoothing!r}")
    if input.ndim == 0:
        raise ValueError(f"{op}(): argument 'input' must have a class dimension, got a 0-d "
                         f"tensor")
    axis = 0 if input.ndim == 1 else 1
    n_cls = input.shape[axis]
    want = input.shape[:axis] + input.shape[axis + 1:]
    if target.shape != want:
        raise ValueError(f"{op}(): argument 'target' must have shape {want} for input of shape "
                         f"{input.shape} (classes along dim {axis}), got {target.shape}")
    if weight is not None:
        _floating(weight, op, "weight")
        if weight.shape != (n_cls,):
            raise ValueError(f"{op}(): argument 'weight' must have shape ({n_cls},), got "
                             f"{weight.shape}")
    # the fused pair is not an op: tl.jit's tracer (which records ops at the dispatcher) would
    # not see it, so a trace takes the composed ops below
    plain = weight is None and label_smoothing == 0.0 and input.ndim <= 2 and not _tracing()
    if plain and not 0 <= ignore_index < n_cls:
        # the fused kernel checks the class indices as it reads them (no host copy of the
        # targets): a target outside [0, C) -- an ignore_index too -- sends the call on to the
        # host check below, which names a bad index or takes the general path
        try:
            return CrossEntropy.apply(input, target, axis, reduction)
        except TargetIndexError:
            pass
    # class indices checked on the host: a bad index must name this function, not the gather
    t_host = target._to_host_numpy()
    ignored = t_host == ignore_index
    bad = ~ignored & ((t_host < 0) | (t_host >= n_cls))
    if bad.any():
        raise IndexError(f"{op}(): target {int(t_host[bad].reshape(-1)[0])} is out of bounds "
                         f"for {n_cls} classes (valid: 0..{n_cls - 1}, or ignore_index="
                         f"{ignore_index})")
    any_ignored = bool(ignored.any())
    if plain and not any_ignored:
        return CrossEntropy.apply(input, target, axis, reduction)
    valid = None
    idx = target
    if any_ignored:
        valid = tl.not_equal(target, ignore_index)
        idx = tl.where(valid, target, 0)
    logp = tl.log_softmax(input, axis=axis)
    nll = -tl.squeeze(tl.take_along_axis(logp, tl.unsqueeze(idx, axis), axis=axis), axis)
    # per-target weight (class weight, 0 where ignored); None means all ones
    w_t = None
    if weight is not None:  # take wants 1-D indices: flatten, then restore the target's shape
        w_t = tl.reshape(tl.take(weight, tl.reshape(idx, (-1,))), idx.shape)
    if valid is not None:
        vf = valid.astype(input.dtype)
        w_t = vf if w_t is None else w_t * vf
    if w_t is not None:
        nll = nll * w_t
    denom = None
    if reduction == "mean" and w_t is not None:
        denom = tl.sum(w_t)
        loss = tl.sum(nll) / denom
    else:
        loss = _reduce(nll, reduction)
    if label_smoothing == 0.0:
        return loss
    wl = logp if weight is None else logp * (weight if axis == 0 else
                                              tl.reshape(weight, (n_cls,) + (1,) * len(want[1:])))
    smooth = -tl.sum(wl, axis=axis)
    if valid is not None:
        smooth = smooth * valid.astype(input.dtype)
    if denom is not None:
        smooth = tl.sum(smooth) / denom
    else:
        smooth = _reduce(smooth, reduction)
    return loss * (1.0 - label_smoothing) + smooth * (label_smoothing / n_cls)


class CrossEntropy(Function):
    """The plain case of cross_entropy (no class weights, no ignored targets, no smoothing,
    input (C,) or (N, C)) as one node over a fused kernel pair (ops/cross_entropy.py): the
    forward computes each row's max and log-sum-exp, the loss and its reduction in one pass
    and saves the (max, log-sum) pair per row; the backward writes (softmax - one-hot) *
    scale in one pass. Under create_graph the backward is composed of differentiable ops
    instead (log_softmax recomputed from the input), so double backward works."""

    @staticmethod
    def forward(ctx, x, t, axis, reduction):
        loss, stats = _xent.cross_entropy_forward(x, t, reduction)
        ctx.save_for_backward(x, t, stats)
        ctx.axis = axis
        ctx.reduction = reduction
        return loss

    @staticmethod
    def backward(ctx, grad):
        x, t, stats = ctx.saved_tensors
        if not tl.is_grad_enabled():
            return _xent.cross_entropy_backward(grad, x, t, stats, ctx.reduction), None, None, \
                None
        # create_graph: a softmax connected to x's graph, so the gradient is differentiable
        axis = ctx.axis
        logp = tl.log_softmax(x, axis=axis)
        n_cls = x.shape[axis]
        classes = tl.arange(n_cls, device=x.device)
        if axis == 1:
            classes = tl.reshape(classes, (1, n_cls))
        d = tl.exp(logp) - tl.equal(classes, tl.unsqueeze(t, axis))  # bool counts as 0 / 1
        if ctx.reduction == "mean":
            scale = grad / (x.size // n_cls)
        elif ctx.reduction == "sum":
            scale = grad
        else:
            scale = tl.unsqueeze(grad, axis)
        return d * scale, None, None, None


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """-[pos_weight * t * log sigmoid(x) + (1 - t) * log(1 - sigmoid(x))] * weight, computed
    stably as (1 - t) * x + (1 + (pos_weight - 1) * t) * softplus(-x) with
    softplus(-x) = log1p(exp(-|x|)) + max(-x, 0) (no overflow for large |x|)."""
    op = "binary_cross_entropy_with_logits"
    _floating(input, op, "input")
    _floating(target, op, "target")
    _same_shape(input, target, op, "target")
    _reduction(reduction, op)
    softplus_neg = tl.log1p(tl.exp(-tl.abs(input))) + tl.maximum(-input, 0)
    if pos_weight is not None:
        _floating(pos_weight, op, "pos_weight")
        _broadcasts_to(pos_weight, input.shape, op, "pos_weight")
        softplus_neg = softplus_neg * ((pos_weight - 1.0) * target + 1.0)
    loss = (1.0 - target) * input + softplus_neg
    if weight is not None:
        _tensor(weight, op, "weight")
        _broadcasts_to(weight, input.shape, op, "weight")
        loss = loss * weight
    return _reduce(loss, reduction)
