"""Autograd coverage, generated from derivatives.yaml: every op with backward formulas has sample
inputs here (a table keyed by op name, like PyTorch's OpInfo), and each sample is gradchecked
(float64, complex128 where the op takes complex) against central finite differences: with
broadcasting, non-contiguous leaves (transposed, stepped slices) and 0-d inputs where they apply.
An op with formulas but no sample fails test_every_formula_has_samples, so new ops can't slip
through. A representative set is gradgradchecked; a subset runs on CUDA (Triton interpreter).
Gradients are only ever compared with finite differences or NumPy, never with themselves.
"""
from __future__ import annotations

import os

import numpy as np
import pytest
import yaml

import tensorlib as tl
from tensorlib.dispatch.namespace import ops as _internal
from tensorlib.autograd import gradcheck, gradgradcheck
from tensorlib.autograd.kernel import SPECS

_rng = np.random.default_rng(20251125)


class In:
    """A differentiable input (a leaf that requires grad), built from this NumPy array with its
    strides (so transposed / stepped layouts reach the op as they are)."""

    def __init__(self, arr):
        self.arr = arr

    def __repr__(self):
        a = self.arr
        return f"{a.dtype}{list(a.shape)}{'' if a.flags.c_contiguous else 'nc'}"


class Const(In):
    """A tensor input that does not require grad (indices, masks, conditions)."""


def _uniform(shape, lo, hi, layout):
    if layout == "T":        # a transposed (column-major) leaf
        return _rng.uniform(lo, hi, shape[::-1]).T
    if layout == "step":     # every other element of the last dim
        return _rng.uniform(lo, hi, shape[:-1] + (2 * shape[-1],))[..., ::2]
    return np.asarray(_rng.uniform(lo, hi, shape))


def R(*shape, lo=-1.0, hi=1.0, layout="c"):
    return In(_uniform(shape, lo, hi, layout))


def C(*shape, lo=-1.0, hi=1.0, layout="c"):
    """complex128 with real and imaginary parts in [lo, hi)."""
    return In(_uniform(shape, lo, hi, layout) + 1j * _uniform(shape, lo, hi, layout))


def V(values, dtype=np.float64):
    return In(np.asarray(values, dtype=dtype))


def I(values):  # noqa: E743 - an integer index tensor
    return Const(np.asarray(values, dtype=np.int64))


def B(values):
    return Const(np.asarray(values, dtype=bool))


class Sample:
    def __init__(self, op, fn, inputs, cuda, gg, xfail):
        self.op, self.fn, self.inputs, self.cuda, self.gg = op, fn, inputs, cuda, gg
        self.xfail = xfail

    def id(self, i):
        return f"{self.op}-{i}-" + "-".join(repr(x) for x in self.inputs if isinstance(x, In))


SAMPLES: dict[str, list[Sample]] = {}


def S(op, fn, *inputs, cuda=False, gg=False, xfail=None):
    """A sample of ``op``: ``fn`` applied to ``inputs``; ``xfail``: a known bug (strict: the
    test fails once it is fixed, so the mark goes)."""
    SAMPLES.setdefault(op, []).append(Sample(op, fn, inputs, cuda, gg, xfail))


# ---------------------------------------------------------------- arithmetic
S("add", lambda a, b: tl.add(a, b), R(2, 3), R(3), cuda=True)
S("add", lambda a, b: tl.add(a, b, alpha=-2.5), R(2, 3, layout="T"), R(1, 3))
S("add", lambda a: a + 2.0, R())
S("add", lambda a: 1.5 + a, R(3, layout="step"))
S("add", lambda a, b: tl.add(a, b, alpha=1.5 - 0.5j), C(3), C(2, 3))
S("subtract", lambda a, b: tl.subtract(a, b, alpha=2), R(2, 3), R(2, 1))
S("subtract", lambda a: 2.0 - a, R(3))
S("subtract", lambda a, b: a - b, C(3), C(1))
S("multiply", lambda a, b: a * b, R(2, 3), R(3, layout="step"), gg=True, cuda=True)
S("multiply", lambda a, b: a * b, R(), R(2, 2, layout="T"))
S("multiply", lambda a: 3.0 * a, R(3))
S("multiply", lambda a, b: a * b, C(3), C(3), gg=True)
S("multiply", lambda a: a * (0.5 + 2j), R(2))   # real tensor, complex scalar
S("divide", lambda a, b: a / b, R(2, 3), R(3, lo=1.0, hi=2.0), gg=True)
S("divide", lambda a: 2.0 / a, R(3, lo=0.5, hi=2.0))
S("divide", lambda a, b: a / b, C(3), C(3, lo=0.5, hi=1.5))
# away from the jumps of floor(a / b): the derivative is 0 almost everywhere
S("floor_divide", lambda a, b: a // b, V([1.3, 2.5, -1.3]), V([1.0, 1.1, 0.9]))
S("remainder", lambda a, b: a % b, V([1.3, 2.5, -1.3]), V([1.0, 1.1, 0.9]))
S("remainder", lambda a: a % 0.7, V([1.3, -0.2]))
S("pow", lambda a, b: a ** b, R(3, lo=0.5, hi=2.0), R(3), gg=True)
S("pow", lambda a: a ** 3, R(2, 2, layout="T"))
S("pow", lambda a: 2.0 ** a, R(3))
S("pow", lambda a, b: a ** b, R(2, 3, lo=0.5, hi=2.0), R(3))
S("pow", lambda a, b: a ** b, C(3, lo=0.3, hi=1.0), C(3))
S("pow", lambda a: a ** 2, C(2))
S("negative", lambda a: -a, R(2, 3, layout="T"))
S("negative", lambda a: -a, C(2))
S("positive", lambda a: tl.positive(a), R(3))
S("positive", lambda a: tl.positive(a), C(2))
S("abs", lambda a: tl.abs(a), V([-1.5, 0.3, 2.0]))
S("abs", lambda a: tl.abs(a), C(3))
S("sign", lambda a: tl.sign(a), V([-1.5, 0.3, 2.0]))
S("sign", lambda a: tl.sign(a), C(3))
S("reciprocal", lambda a: tl.reciprocal(a), R(3, lo=0.5, hi=2.0))
S("reciprocal", lambda a: tl.reciprocal(a), C(3, lo=0.5, hi=1.0))
S("square", lambda a: tl.square(a), R(2, 2, layout="step"))
S("square", lambda a: tl.square(a), C(3))
S("maximum", lambda a, b: tl.maximum(a, b), R(2, 3), R(3))
S("maximum", lambda a: tl.maximum(a, 0.1), V([-1.0, 0.5, 2.0]))
S("minimum", lambda a, b: tl.minimum(a, b), R(2, 3, layout="T"), R(2, 1))
S("where", lambda c, a, b: tl.where(c, a, b), B([[True, False, True]]), R(2, 3), R(3),
  cuda=True)
S("where", lambda c, a: tl.where(c, a, 0.0), B([True, False]), R(2))
S("where", lambda c, a, b: tl.where(c, a, b), B([True, False]), C(2), C(2))
S("clip", lambda a: tl.clip(a, -0.5, 0.5), V([-0.9, -0.3, 0.2, 0.8]))
S("clip", lambda a, lo, hi: tl.clip(a, lo, hi), V([-0.9, -0.3, 0.2, 0.8]),
  V([-0.5, -0.5, -0.5, -0.5]), V([0.5]))
S("clip", lambda a, lo: tl.clip(a, lo), V([[-0.9, 0.3], [0.2, -0.8]]), V([-0.5, 0.0]))
# clip's internal one-pass form, through the internal op namespace (no public name)
S("clip_bounds", lambda a, lo, hi: _internal.clip_bounds(a, lo, hi), V([-0.9, -0.3, 0.2, 0.8]),
  V([-0.5, -0.5, -0.5, -0.5]), V([0.5]))
S("copysign", lambda a, b: tl.copysign(a, b), V([-1.5, 0.3, 2.0]), V([1.0, -2.0, -0.5]))
S("hypot", lambda a, b: tl.hypot(a, b), R(2, 3), R(3, lo=0.5, hi=1.0))
S("atan2", lambda a, b: tl.atan2(a, b), R(2, 3), R(3, lo=0.5, hi=1.0))
S("logaddexp", lambda a, b: tl.logaddexp(a, b), R(2, 3), R(3))

# ---------------------------------------------------------------- exponential, trigonometric
S("exp", lambda a: tl.exp(a), R(2, 3, layout="T"), gg=True, cuda=True)
S("exp", lambda a: tl.exp(a), R())
S("exp", lambda a: tl.exp(a), C(3), gg=True)
S("exp2", lambda a: tl.exp2(a), R(3))
S("exp2", lambda a: tl.exp2(a), C(2))
S("expm1", lambda a: tl.expm1(a), R(3))
S("expm1", lambda a: tl.expm1(a), C(2))
S("log", lambda a: tl.log(a), R(2, 2, lo=0.5, hi=2.0, layout="step"), cuda=True)
S("log", lambda a: tl.log(a), C(3, lo=0.3, hi=1.0))
S("log2", lambda a: tl.log2(a), R(3, lo=0.5, hi=2.0))
S("log2", lambda a: tl.log2(a), C(2, lo=0.3, hi=1.0))
S("log10", lambda a: tl.log10(a), R(3, lo=0.5, hi=2.0))
S("log10", lambda a: tl.log10(a), C(2, lo=0.3, hi=1.0))
S("log1p", lambda a: tl.log1p(a), R(3, lo=-0.5, hi=1.0))
S("log1p", lambda a: tl.log1p(a), C(2, lo=0.1, hi=0.5))
S("sqrt", lambda a: tl.sqrt(a), R(3, lo=0.5, hi=2.0))
S("sqrt", lambda a: tl.sqrt(a), C(3, lo=0.3, hi=1.0))
S("rsqrt", lambda a: tl.rsqrt(a), R(3, lo=0.5, hi=2.0))
S("rsqrt", lambda a: tl.rsqrt(a), C(2, lo=0.3, hi=1.0))
S("sin", lambda a: tl.sin(a), R(2, 2, layout="T"))
S("sin", lambda a: tl.sin(a), C(2))
S("cos", lambda a: tl.cos(a), R(3))
S("cos", lambda a: tl.cos(a), C(2))
S("tan", lambda a: tl.tan(a), R(3))
S("tan", lambda a: tl.tan(a), C(2, lo=-0.5, hi=0.5))
S("asin", lambda a: tl.asin(a), R(3, lo=-0.8, hi=0.8))
S("asin", lambda a: tl.asin(a), C(2, lo=-0.5, hi=0.5))
S("acos", lambda a: tl.acos(a), R(3, lo=-0.8, hi=0.8))
S("acos", lambda a: tl.acos(a), C(2, lo=-0.5, hi=0.5))
S("atan", lambda a: tl.atan(a), R(3))
S("atan", lambda a: tl.atan(a), C(2, lo=-0.5, hi=0.5))
S("sinh", lambda a: tl.sinh(a), R(3))
S("sinh", lambda a: tl.sinh(a), C(2))
S("cosh", lambda a: tl.cosh(a), R(3))
S("cosh", lambda a: tl.cosh(a), C(2))
S("tanh", lambda a: tl.tanh(a), R(3))
S("tanh", lambda a: tl.tanh(a), C(2))
S("asinh", lambda a: tl.asinh(a), R(3))
S("asinh", lambda a: tl.asinh(a), C(2))
S("acosh", lambda a: tl.acosh(a), R(3, lo=1.2, hi=2.0))
S("acosh", lambda a: tl.acosh(a), C(2, lo=1.2, hi=2.0))
S("atanh", lambda a: tl.atanh(a), R(3, lo=-0.8, hi=0.8))
S("atanh", lambda a: tl.atanh(a), C(2, lo=-0.5, hi=0.5))
S("sigmoid", lambda a: tl.sigmoid(a), R(2, 3, layout="T"))
S("erf", lambda a: tl.erf(a), R(3))
# rounding: piecewise constant, sampled away from the jumps
S("floor", lambda a: tl.floor(a), V([-1.3, 0.2, 2.6]))
S("ceil", lambda a: tl.ceil(a), V([-1.3, 0.2, 2.6]))
S("round", lambda a: tl.round(a), V([-1.3, 0.2, 2.7]))
S("round", lambda a: tl.round(a), V([0.2 - 1.3j, 2.7 + 0.4j], np.complex128))
S("trunc", lambda a: tl.trunc(a), V([-1.3, 0.2, 2.6]))
S("conj", lambda a: tl.conj(a), C(3))
S("conj", lambda a: tl.conj(a), R(2))
S("real", lambda a: tl.real(a), C(2, 2, layout="T"))
S("real", lambda a: tl.real(a) * 1, R(2))
S("imag", lambda a: tl.imag(a), C(3))

# ---------------------------------------------------------------- copies and casts
S("copy_", lambda a, b: (a * 1).copy_(b), R(2, 3), R(3))
S("copy_", lambda a, b: (a * 1).copy_(b), C(2), C(2))
S("fill_", lambda a: (a * 1).fill_(2.0) * a, R(3))
S("clone", lambda a: tl.clone(a), R(2, 2, layout="T"))
S("contiguous", lambda a: a.contiguous(), R(2, 3, layout="T"))
S("astype", lambda a: a.astype(tl.complex128), R(3))
S("astype", lambda a: a.astype(tl.float64, copy=True), R(2, 2, layout="step"))

# ---------------------------------------------------------------- views
S("view", lambda a: a.view((3, 2)), R(2, 3))
S("reshape", lambda a: tl.reshape(a, (3, 2)), R(2, 3, layout="T"))
S("reshape", lambda a: tl.reshape(a, (1,)), R())
S("reshape", lambda a: tl.reshape(a, (-1,)), C(2, 2))
S("transpose", lambda a: tl.transpose(a, 0, 2), R(2, 1, 3), cuda=True)
S("permute", lambda a: tl.permute(a, (2, 0, 1)), R(2, 1, 3))
S("moveaxis", lambda a: tl.moveaxis(a, (0,), (-1,)), R(2, 1, 3))
S("expand", lambda a: a.expand((2, 3)), R(1, 3))
S("broadcast_to", lambda a: tl.broadcast_to(a, (2, 2, 3)), R(3, layout="step"))
S("broadcast_to", lambda a: tl.broadcast_to(a, (3,)), R())
S("squeeze", lambda a: tl.squeeze(a), R(2, 1, 3))
S("squeeze", lambda a: tl.squeeze(a, (1,)), R(2, 1, 1))
S("unsqueeze", lambda a: tl.unsqueeze(a, 1), R(2, 3))
S("expand_dims", lambda a: tl.expand_dims(a, axis=0), R(3))
S("flatten", lambda a: tl.flatten(a), R(2, 3, layout="T"))
S("unflatten", lambda a: tl.unflatten(a, 0, (2, 3)), R(6))
S("narrow", lambda a: tl.narrow(a, 1, 1, 2), R(2, 3))
S("select", lambda a: tl.select(a, 0, -1), R(2, 3))
S("diagonal", lambda a: tl.diagonal(a), R(3, 3))
S("diagonal", lambda a: tl.diagonal(a, 1, 1, 2), R(2, 2, 3))
S("matrix_transpose", lambda a: tl.matrix_transpose(a), R(2, 2, 3))
S("as_strided", lambda a: tl.as_strided(a, (2, 2), (1, 2), 1), R(5))
# overlapping windows: an element read twice gets both gradients
S("as_strided", lambda a: tl.as_strided(a, (3, 2), (1, 1)), R(4))
S("unbind", lambda a: tl.unbind(a, 1), R(2, 3))
S("split", lambda a: tl.split(a, [1], 0), R(3, 2))
S("split", lambda a: tl.split(a, 2, 1), R(2, 4))
S("chunk", lambda a: tl.chunk(a, 2, 0), R(3, 2))
S("unstack", lambda a: tl.unstack(a, axis=0), R(2, 3))
S("flip", lambda a: tl.flip(a, axis=(0,)), R(3, 2))
S("flip", lambda a: tl.flip(a), R(2, 2, layout="T"))
S("broadcast_arrays", lambda a, b: tl.broadcast_arrays(a, b), R(2, 1), R(3))
S("meshgrid", lambda a, b: tl.meshgrid(a, b), R(2), R(3))
S("meshgrid", lambda a, b: tl.meshgrid(a, b, indexing="ij"), R(2), R(3))

# ---------------------------------------------------------------- reductions and scans
S("sum", lambda a: tl.sum(a), R(2, 3, layout="T"), gg=True, cuda=True)
S("sum", lambda a: tl.sum(a, axis=1), R(2, 3))
S("sum", lambda a: tl.sum(a, axis=(0, 2), keepdims=True), R(2, 1, 3))
S("sum", lambda a: tl.sum(a), R())
S("sum", lambda a: tl.sum(a, axis=0), C(3, 2))
S("mean", lambda a: tl.mean(a, axis=0, keepdims=True), R(3, 2), gg=True)
S("mean", lambda a: tl.mean(a), R(2, 2, layout="step"))
S("mean", lambda a: tl.mean(a, axis=-1), C(2, 2))
S("prod", lambda a: tl.prod(a, axis=1), R(2, 3, lo=0.5, hi=1.5), cuda=True)
S("prod", lambda a: tl.prod(a), V([1.5, 0.0, 3.0]), gg=True)              # one zero
S("prod", lambda a: tl.prod(a, axis=1), V([[1.5, 0.0, 0.0], [0.0, 2.0, 3.0]]))  # several
S("prod", lambda a: tl.prod(a, axis=0, keepdims=True), C(2, 2))
S("max", lambda a: tl.max(a, axis=1), R(2, 3), cuda=True)
S("max", lambda a: tl.max(a), R(2, 2, layout="T"))
S("min", lambda a: tl.min(a, axis=0, keepdims=True), R(3, 2))
S("min", lambda a: tl.min(a), R())
S("var", lambda a: tl.var(a, axis=1, correction=1), R(2, 3), gg=True, cuda=True)
S("var", lambda a: tl.var(a), R(2, 3, layout="T"))
S("var", lambda a: tl.var(a, axis=(0, 1), keepdims=True, correction=0.5), R(2, 2))
S("std", lambda a: tl.std(a), R(2, 3), gg=True)
S("std", lambda a: tl.std(a, axis=0, correction=1), R(3, 2))
S("cumsum", lambda a: tl.cumsum(a, axis=1), R(2, 3), cuda=True)
S("cumsum", lambda a: tl.cumsum(a), R(2, 2, layout="T"))
S("cumsum", lambda a: tl.cumsum(a, axis=0), C(3))
S("cumprod", lambda a: tl.cumprod(a, axis=1), R(2, 3))
S("cumprod", lambda a: tl.cumprod(a, axis=0), V([1.5, 0.0, 2.0, 0.0]), gg=True)  # zeros
S("cumprod", lambda a: tl.cumprod(a), R(2, 2, layout="T"))
S("cumprod", lambda a: tl.cumprod(a, axis=0), C(3))
S("cumulative_sum", lambda a: tl.cumulative_sum(a, axis=0), R(3, 2))
S("cumulative_sum", lambda a: tl.cumulative_sum(a, axis=1, include_initial=True), R(2, 2))
S("cumulative_sum", lambda a: tl.cumulative_sum(a, include_initial=True), R(3))
S("cumulative_prod", lambda a: tl.cumulative_prod(a, axis=1), R(2, 3))
S("cumulative_prod", lambda a: tl.cumulative_prod(a, axis=0, include_initial=True),
  V([0.5, 0.0, 2.0]))

# ---------------------------------------------------------------- linear algebra
S("matmul", lambda a, b: a @ b, R(2, 2, 3), R(3, 2, layout="T"), gg=True, cuda=True)
S("matmul", lambda a, b: a @ b, R(3), R(3, 2))
S("matmul", lambda a, b: a @ b, R(2, 3), R(3))
S("matmul", lambda a, b: a @ b, R(3), R(3))
S("matmul", lambda a, b: a @ b, R(2, 1, 2, 2), R(3, 2, 1))      # batch broadcasting
S("matmul", lambda a, b: a @ b, C(2, 2), C(2, 2))
S("mm", lambda a, b: tl.mm(a, b), R(2, 3), R(3, 2))
S("mm", lambda a, b: tl.mm(a, b), C(2, 2), C(2, 1))
S("bmm", lambda a, b: tl.bmm(a, b), R(2, 2, 3), R(2, 3, 1))
S("vecdot", lambda a, b: tl.vecdot(a, b), R(2, 3), R(3))
S("vecdot", lambda a, b: tl.vecdot(a, b, axis=0), R(3, 2), R(3, 2))
S("vecdot", lambda a, b: tl.vecdot(a, b), C(2, 2), C(2, 2))
S("tensordot", lambda a, b: tl.tensordot(a, b, axes=1), R(2, 3), R(3, 2))
S("tensordot", lambda a, b: tl.tensordot(a, b, axes=2), R(2, 2, 3), R(2, 3))
S("tensordot", lambda a, b: tl.tensordot(a, b, axes=((1,), (0,))), R(2, 3), R(3, 2))
S("tensordot", lambda a, b: tl.tensordot(a, b, axes=((0,), (1,))), R(3, 2), R(2, 3))
S("tensordot", lambda a, b: tl.tensordot(a, b, axes=1), C(2, 2), C(2, 1))

# ---------------------------------------------------------------- sorting, indexing, joining
S("sort", lambda a: tl.sort(a, axis=-1), R(2, 4), gg=True, cuda=True)
S("sort", lambda a: tl.sort(a, axis=0, descending=True), R(3, 2, layout="T"))
S("take", lambda a, i: tl.take(a, i, axis=1), R(2, 4), I([0, 2, 2, -1]), gg=True,
  cuda=True)
S("take", lambda a, i: tl.take(a, i), R(6, layout="step"), I([5, 0, 5]))
S("take", lambda a, i: tl.take(a, i, axis=0), C(3), I([1, 1]))
S("take_along_axis", lambda a, i: tl.take_along_axis(a, i, axis=1), R(2, 4),
  I([[0, 0, 3], [1, 2, -1]]))
S("take_along_axis", lambda a, i: tl.take_along_axis(a, i, axis=0), R(3, 2, layout="T"),
  I([[2, 0]]))
S("concat", lambda a, b: tl.concat([a, b], axis=0), R(2, 3), R(1, 3, layout="step"),
  cuda=True)
S("concat", lambda a, b: tl.concat([a, b], axis=None), R(2, 2), R(3))
S("concat", lambda a, b: tl.concat([a, b], axis=-1), C(2, 1), C(2, 2))
S("stack", lambda a, b: tl.stack([a, b], axis=1), R(2, 3), R(2, 3, layout="T"))
S("stack", lambda a, b: tl.stack([a, b]), R(), R())
S("roll", lambda a: tl.roll(a, (1,), axis=(0,)), R(3, 2))
S("roll", lambda a: tl.roll(a, (1, -1), axis=(0, 1)), R(2, 3))
S("roll", lambda a: tl.roll(a, (2,)), R(2, 2))
S("repeat", lambda a: tl.repeat(a, (2,), axis=0), R(2, 2))
S("repeat", lambda a: tl.repeat(a, (3,)), R(2))
S("repeat", lambda a: tl.repeat(a, (2, 0, 1), axis=1), R(2, 3))   # a count per element
S("repeat", lambda a: tl.repeat(a, (1, 3, 2, 0)), R(2, 2, layout="T"))
S("tile", lambda a: tl.tile(a, (2, 1)), R(2, 2))
S("tile", lambda a: tl.tile(a, (2, 1, 2)), R(3))
S("tril", lambda a: tl.tril(a), R(3, 3))
S("tril", lambda a: tl.tril(a, k=-1), R(2, 3, 3))
S("triu", lambda a: tl.triu(a, k=1), R(3, 3))
S("diff", lambda a: tl.diff(a, axis=-1), R(2, 4))
S("diff", lambda a: tl.diff(a, axis=0, n=2), R(4, 2))
S("diff", lambda a, p, q: tl.diff(a, prepend=p, append=q), R(2, 3), R(2, 1), R(2, 2))

# ---------------------------------------------------------------- normalization
S("softmax", lambda a: tl.softmax(a, axis=-1), R(2, 3), gg=True, cuda=True)
S("softmax", lambda a: tl.softmax(a, axis=0), R(3, 2, layout="T"))
S("log_softmax", lambda a: tl.log_softmax(a, axis=-1), R(2, 3), gg=True, cuda=True)
S("log_softmax", lambda a: tl.log_softmax(a, axis=0), R(3))
S("layer_norm", lambda a, w, b: tl.layer_norm(a, (3,), w, b), R(2, 3), R(3), R(3), gg=True)
S("layer_norm", lambda a: tl.layer_norm(a, (2, 2)), R(2, 2, 2))
S("layer_norm", lambda a, w: tl.layer_norm(a, (3,), w), R(2, 3, layout="T"), R(3))


# ================================================================ helpers
def _materialize(inputs, device):
    out = []
    for x in inputs:
        if isinstance(x, In):
            if device == "cpu":
                t = tl.from_numpy(x.arr)
            else:
                t = tl.asarray(np.ascontiguousarray(x.arr), device=device)
            if not isinstance(x, Const):
                t.requires_grad_()
            out.append(t)
        else:
            out.append(x)
    return out


def _node_names(outs):
    """Names of every node reachable from the outputs' grad_fn (a CopySlices' inner node too)."""
    stack = [o.grad_fn for o in outs if o.grad_fn is not None]
    seen, names = set(), set()
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        names.add(n.name())
        inner = getattr(n, "fn", None)
        if isinstance(inner, tl.autograd.Node):
            stack.append(inner)
        stack.extend(e[0] for e in n.next_functions if e[0] is not None)
    return names


def _check_sample(sample, device):
    args = _materialize(sample.inputs, device)
    out = sample.fn(*args)
    outs = (out,) if isinstance(out, tl.Tensor) else tuple(out)
    # the sample must reach the op's formula, not a path around it
    node = SPECS[sample.op].node_name
    assert node in _node_names(outs), f"{sample.op}: no {node} in the graph of the sample"
    assert gradcheck(sample.fn, args)


_DIFFERENTIABLE = sorted(name for name, spec in SPECS.items() if not spec.not_differentiable)
_ALL = [(s, s.id(i)) for op in sorted(SAMPLES) for i, s in enumerate(SAMPLES[op])]


def _params(pairs):
    return [pytest.param(s, id=i, marks=[pytest.mark.xfail(strict=True, reason=s.xfail)]
                         if s.xfail else []) for s, i in pairs]


def test_every_formula_has_samples():
    missing = sorted(set(_DIFFERENTIABLE) - set(SAMPLES))
    assert not missing, f"ops with backward formulas but no sample inputs here: {missing}"
    stale = sorted(set(SAMPLES) - set(_DIFFERENTIABLE))
    assert not stale, f"samples for ops without formulas in derivatives.yaml: {stale}"


def _complex_pointwise_ops():
    """Pointwise ops of ops.yaml whose dtypes include complex."""
    path = os.path.join(os.path.dirname(tl.__file__), "ops.yaml")
    with open(path) as f:
        entries = yaml.safe_load(f)
    names = set()
    for e in entries:
        if "pointwise" in e and e.get("dtypes", "all") in ("all", "numeric", "float_complex"):
            names.add(e["func"].split("(")[0].split(".")[0])
    return names


def test_complex_samples_where_the_op_takes_complex():
    need = _complex_pointwise_ops() & set(_DIFFERENTIABLE)
    have = {op for op, ss in SAMPLES.items()
            if any(isinstance(x, In) and x.arr.dtype.kind == "c" for s in ss for x in s.inputs)}
    assert not sorted(need - have), f"no complex sample for {sorted(need - have)}"


@pytest.mark.parametrize("sample", _params(_ALL))
def test_gradcheck(sample):
    _check_sample(sample, "cpu")


_CUDA = [(s, i) for s, i in _ALL if s.cuda]


@pytest.mark.parametrize("sample", _params(_CUDA))
def test_gradcheck_cuda(cuda_interpret, sample):
    _check_sample(sample, "cuda")


_GG = [(s, i) for s, i in _ALL if s.gg]


@pytest.mark.parametrize("sample", _params(_GG))
def test_gradgradcheck(sample):
    args = _materialize(sample.inputs, "cpu")
    assert gradgradcheck(sample.fn, args)


def test_gradgrad_ops_cover_the_representative_set():
    want = {"multiply", "divide", "exp", "pow", "sum", "mean", "matmul", "softmax",
            "log_softmax", "var", "sort", "take"}
    assert want <= {s.op for s, _ in _GG}


# ================================================================ conventions at the kinks
def _leaf(values, dtype=tl.float64):
    return tl.asarray(np.asarray(values), dtype=dtype).requires_grad_()


def _grad_of(fn, *values, gradient=None):
    xs = [_leaf(v) for v in values]
    out = fn(*xs)
    out.backward(gradient=None if gradient is None else tl.asarray(np.asarray(gradient)))
    return [x.grad.numpy() for x in xs]


@pytest.mark.parametrize("op,np_op", [("max", np.max), ("min", np.min)])
@pytest.mark.parametrize("axis", [1, None])
def test_max_min_ties_share_the_gradient_evenly(op, np_op, axis):
    # amax/amin convention (PyTorch's amax and full max()): every element equal to the result
    # gets an equal share of its gradient
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]) * (1 if op == "max" else -1)
    g = np.array([1.0, 2.0]) if axis == 1 else np.array(1.5)
    (got,) = _grad_of(lambda t: getattr(tl, op)(t, axis=axis), x, gradient=g)
    mask = x == np_op(x, axis=axis, keepdims=True)
    share = np.expand_dims(g, axis) if axis is not None else g
    np.testing.assert_allclose(got, mask * share / mask.sum(axis=axis, keepdims=True),
                               rtol=1e-12)


@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_maximum_minimum_ties_split_in_half(op):
    a, b = np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 5.0])
    ga, gb = _grad_of(lambda s, t: getattr(tl, op)(s, t), a, b, gradient=[4.0, 4.0, 4.0])
    a_wins = a > b if op == "maximum" else a < b
    np.testing.assert_array_equal(ga, np.where(a == b, 2.0, np.where(a_wins, 4.0, 0.0)))
    np.testing.assert_array_equal(gb, np.where(a == b, 2.0, np.where(a_wins, 0.0, 4.0)))


@pytest.mark.parametrize("x", [[2.0, 0.0, 3.0, 5.0], [2.0, 0.0, 0.0, 5.0], [0.0, 0.0, 0.0, 1.0]])
def test_prod_gradient_with_zeros_is_the_product_of_the_others(x):
    x = np.array(x)
    (got,) = _grad_of(lambda t: tl.prod(t), x)
    want = np.array([np.prod(np.delete(x, i)) for i in range(x.size)])
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("correction", [0, 1, 2])
@pytest.mark.parametrize("op", ["var", "std"])
def test_var_std_gradient_with_correction(op, correction):
    x = np.array([[0.5, -1.0, 2.0, 0.25], [1.0, 3.0, -2.0, 0.0]])
    (got,) = _grad_of(lambda t: getattr(tl, op)(t, axis=1, correction=correction), x,
                      gradient=[1.0, -2.0])
    g = np.array([[1.0], [-2.0]])
    dvar = 2 * (x - x.mean(axis=1, keepdims=True)) / (x.shape[1] - correction)
    if op == "std":
        dvar = dvar / (2 * np.sqrt(x.var(axis=1, ddof=correction, keepdims=True)))
    np.testing.assert_allclose(got, g * dvar, rtol=1e-12)


def test_std_of_constant_rows_has_zero_gradient():
    x = np.array([[1.0, 1.0, 1.0], [1.0, 2.0, 4.0]])
    (got,) = _grad_of(lambda t: tl.sum(tl.std(t, axis=1)), x)
    np.testing.assert_array_equal(got[0], [0.0, 0.0, 0.0])
    row = x[1]
    np.testing.assert_allclose(got[1], (row - row.mean()) / (row.size * row.std()), rtol=1e-12)


def test_cumsum_cumprod_gradients_with_zeros():
    x = np.array([2.0, 0.0, 3.0, 0.0, 4.0])
    g = np.array([1.0, -1.0, 0.5, 2.0, 1.5])
    (gs,) = _grad_of(lambda t: tl.cumsum(t, axis=0), x, gradient=g)
    np.testing.assert_allclose(gs, np.cumsum(g[::-1])[::-1], rtol=1e-12)
    (gp,) = _grad_of(lambda t: tl.cumprod(t, axis=0), x, gradient=g)
    # d out_j / d x_i = prod_{k <= j, k != i} x_k for j >= i, without dividing by x_i
    want = [sum(g[j] * np.prod(np.delete(x[:j + 1], i)) for j in range(i, x.size))
            for i in range(x.size)]
    np.testing.assert_allclose(gp, want, rtol=1e-12)


def test_clip_gradient_at_and_between_bounds():
    x = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
    (gx,) = _grad_of(lambda t: tl.sum(tl.clip(t, -0.5, 0.5)), x)
    np.testing.assert_array_equal(gx, [0.0, 1.0, 1.0, 1.0, 0.0])   # bounds included (PyTorch)
    gx, glo, ghi = _grad_of(lambda t, lo, hi: tl.sum(tl.clip(t, lo, hi)), x, [-0.5] * 5, [0.5] * 5)
    np.testing.assert_array_equal(gx + glo + ghi, np.ones(5))   # each element once
    np.testing.assert_array_equal(glo, [1.0, 0, 0, 0, 0])
    np.testing.assert_array_equal(ghi, [0, 0, 0, 0, 1.0])
    # min > max: the result is max everywhere, and so is the gradient
    gx, glo, ghi = _grad_of(lambda t, lo, hi: tl.sum(tl.clip(t, lo, hi)), x, [0.8] * 5, [0.2] * 5)
    np.testing.assert_array_equal(ghi, np.ones(5))
    np.testing.assert_array_equal(gx + glo, np.zeros(5))


def test_python_scalar_operands_and_alpha():
    a, b = np.array([0.5, 2.0]), np.array([1.5, -1.0])
    ga, gb = _grad_of(lambda s, t: tl.sum(tl.add(s, t, alpha=-3.0)), a, b)
    np.testing.assert_array_equal(ga, [1.0, 1.0])
    np.testing.assert_array_equal(gb, [-3.0, -3.0])
    ga, gb = _grad_of(lambda s, t: tl.sum(tl.subtract(s, t, alpha=2)), a, b)
    np.testing.assert_array_equal(gb, [-2.0, -2.0])
    for fn, want in [(lambda t: 2.0 - t, -np.ones(2)), (lambda t: 2.0 / t, -2.0 / a ** 2),
                     (lambda t: 2.0 ** t, np.log(2.0) * 2.0 ** a), (lambda t: t ** 3, 3 * a ** 2),
                     (lambda t: 3 * t - 1, 3 * np.ones(2)), (lambda t: t / 4, np.full(2, 0.25))]:
        (g,) = _grad_of(lambda t: tl.sum(fn(t)), a)
        np.testing.assert_allclose(g, want, rtol=1e-12)
    # a complex alpha on complex tensors: d/d other of (self + alpha * other) is conj(alpha)
    s = tl.asarray(np.array([1 + 1j])).requires_grad_()
    t = tl.asarray(np.array([2 - 1j])).requires_grad_()
    out = tl.add(s, t, alpha=1 - 2j)
    out.backward(gradient=tl.asarray(np.array([1.0 + 0j])))
    np.testing.assert_allclose(t.grad.numpy(), [1 + 2j])


_HALF_CASES = {
    "add": (lambda a, b: tl.sum(a + b * 2.0), 2),
    "multiply": (lambda a, b: tl.sum(a * b), 2),
    "divide": (lambda a, b: tl.sum(a / (b + 3.0)), 2),
    "exp": (lambda a: tl.sum(tl.exp(a)), 1),
    "tanh": (lambda a: tl.sum(tl.tanh(a)), 1),
    "mean": (lambda a: tl.mean(a * a), 1),
    "matmul": (lambda a, b: tl.sum(a @ tl.matrix_transpose(b)), 2),
    "softmax": (lambda a: tl.sum(tl.softmax(a, axis=-1) * tl.arange(4, dtype=a.dtype)), 1),
    "max": (lambda a: tl.sum(tl.max(a, axis=1)), 1),
    "sort": (lambda a: tl.sum(tl.sort(a, axis=1) * tl.arange(4, dtype=a.dtype)), 1),
}


@pytest.mark.parametrize("dtype,rtol", [("float16", 1e-2), ("bfloat16", 5e-2)])
@pytest.mark.parametrize("case", sorted(_HALF_CASES))
def test_half_precision_gradients_flow(case, dtype, rtol):
    fn, n = _HALF_CASES[case]
    half = getattr(tl, dtype)
    vals = [_rng.uniform(-1, 1, (3, 4)) for _ in range(n)]
    hs = [tl.asarray(v, dtype=half).requires_grad_() for v in vals]
    fn(*hs).backward()
    # the reference: the same (rounded) values in float64
    ds = [h.detach().astype(tl.float64).requires_grad_() for h in hs]
    fn(*ds).backward()
    for h, d in zip(hs, ds):
        assert h.grad is not None and h.grad.dtype == half
        got = h.grad.astype(tl.float64).numpy()
        np.testing.assert_allclose(got, d.grad.numpy(), rtol=rtol, atol=rtol)
