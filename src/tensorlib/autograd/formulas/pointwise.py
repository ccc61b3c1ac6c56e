"""Backward helpers of pointwise ops (sign, maximum / minimum, pow, clip, where, copysign)."""
from __future__ import annotations

import cmath
import math

from ... import dtypes as _dt
from ...dispatch.namespace import ops as tl
from .common import _is_tensor, conj


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


def where_backward(grad, condition, take_self):
    z = tl.zeros_like(grad)
    return tl.where(condition, grad, z) if take_self else tl.where(condition, z, grad)


def copysign_backward(grad, x, result):
    ratio = tl.where(tl.equal(x, 0), tl.zeros_like(result), result / tl.where(
        tl.equal(x, 0), tl.ones_like(x), x))
    return grad * ratio
