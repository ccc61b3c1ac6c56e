"""NumPy's products, copies, casts and array queries on tensors: dot, tensordot, copy, astype,
round / around, real, imag, result_type, shape, ndim, size, array_equal.
"""
from __future__ import annotations

import builtins

import numpy as np

import tensorlib as tl
from ..numpy_operands import _device_of, _store, _tensor
from .table import _dtype_arg, _no, _order, implements


# ---- linear algebra
@implements(np.dot)
def _dot(a, b, out=None):
    device = _device_of((a, b))
    res = tl.dot(_tensor(a, "dot", "a", device, scalars=True),
                 _tensor(b, "dot", "b", device, scalars=True))
    return _store(res, out, "dot")


@implements(np.tensordot)
def _tensordot(a, b, axes=2):
    device = _device_of((a, b))
    return tl.tensordot(_tensor(a, "tensordot", "a", device),
                        _tensor(b, "tensordot", "b", device), axes=axes)


# ---- copies, casts, element types
@implements(np.copy)
def _copy(a, order="K", subok=False):
    _order("copy", order)
    return tl.clone(_tensor(a, "copy", "a"))


def _astype(x, dtype, /, *, copy=True, device=None):
    return tl.astype(_tensor(x, "astype", "x"), _dtype_arg(dtype, "astype"), copy=copy,
                     device=device)


if hasattr(np, "astype"):  # NumPy >= 2.1
    implements(np.astype)(_astype)


@implements(np.round, np.around)
def _round(a, decimals=0, out=None):
    _no("round", decimals=(decimals, 0))
    return _store(tl.round(_tensor(a, "round", "a")), out, "round")


@implements(np.real)
def _real(val):
    return tl.real(_tensor(val, "real", "val"))


@implements(np.imag)
def _imag(val):
    return tl.imag(_tensor(val, "imag", "val"))


@implements(np.result_type)
def _result_type(*arrays_and_dtypes):
    return tl.result_type(*arrays_and_dtypes).dtype


@implements(np.shape)
def _shape(a):
    return _tensor(a, "shape", "a").shape


@implements(np.ndim)
def _ndim(a):
    return _tensor(a, "ndim", "a").ndim


@implements(np.size)
def _size(a, axis=None):
    x = _tensor(a, "size", "a")
    return x.size if axis is None else x.shape[axis]


@implements(np.array_equal)
def _array_equal(a1, a2, equal_nan=False):
    device = _device_of((a1, a2))
    x, y = _tensor(a1, "array_equal", "a1", device), _tensor(a2, "array_equal", "a2", device)
    if x.shape != y.shape:
        return False
    same = tl.equal(x, y)
    if equal_nan and x.dtype.kind in "fc" and y.dtype.kind in "fc":
        same = tl.logical_or(same, tl.logical_and(tl.isnan(x), tl.isnan(y)))
    return builtins.bool(tl.all(same))
