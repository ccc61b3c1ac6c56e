"""Backward helpers of matmul, vecdot and tensordot."""
from __future__ import annotations

import math

from ...dispatch.namespace import ops as tl
from .common import conj
from .shape import inverse_permutation


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
    from ...ops.matmul import _tensordot_axes
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
