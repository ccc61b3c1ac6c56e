"""NumPy's creation functions with tensors: the *_like family (a tensor as the prototype),
zeros, ones, empty, full, arange, asarray / asanyarray / ascontiguousarray, array.
"""
from __future__ import annotations

import numbers
import operator

import numpy as np

import tensorlib as tl
from ..numpy_operands import _tensor, _unsupported
from ..tensor import Tensor
from .table import _dtype_arg, _order, implements


def _mk_like(name):
    def impl(a, *args, dtype=None, order="K", subok=True, shape=None, device=None):
        _order(name, order)
        x = _tensor(a, name, "a")
        d = _dtype_arg(dtype, name) or x.dtype
        dev = device if device is not None else x.device
        if shape is not None:
            shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
            if name == "full_like":
                return tl.full(shape, args[0], dtype=d, device=dev)
            return getattr(tl, name[:-5])(shape, dtype=d, device=dev)
        return getattr(tl, name)(x, *args, dtype=d, device=dev)
    impl.__name__ = name
    return impl


for _f in ("zeros_like", "ones_like", "empty_like", "full_like"):
    implements(getattr(np, _f))(_mk_like(_f))


def _np_default(dtype, fname):
    """NumPy's default dtype (float64) where NumPy's creation functions would use it."""
    return tl.float64 if dtype is None else _dtype_arg(dtype, fname)


def _mk_factory(name):
    def impl(shape, dtype=None, order="C", *, device=None, **kwargs):
        _order(name, order, ("C",))
        for k, v in kwargs.items():
            _unsupported(name, k, v)
        return getattr(tl, name)(shape, dtype=_np_default(dtype, name), device=device)
    impl.__name__ = name
    return impl


for _f in ("zeros", "ones", "empty"):
    implements(getattr(np, _f))(_mk_factory(_f))


@implements(np.full)
def _full(shape, fill_value, dtype=None, order="C", *, device=None):
    _order("full", order, ("C",))
    if dtype is None:
        dtype = np.asarray(fill_value).dtype
    return tl.full(shape, fill_value, dtype=_dtype_arg(dtype, "full"), device=device)


@implements(np.arange)
def _arange(start=None, stop=None, step=None, dtype=None, *, device=None):
    if stop is None:  # arange(stop)
        start, stop = 0, start
    if stop is None:
        raise TypeError("numpy.arange(): argument 'stop' is missing")
    step = 1 if step is None else step
    if dtype is None:  # NumPy's: int64 for integers, float64 for floats
        dtype = np.result_type(*[np.asarray(v) for v in (start, stop, step)])
    return tl.arange(start, stop, step, dtype=_dtype_arg(dtype, "arange"), device=device)


@implements(np.asarray, np.asanyarray, np.ascontiguousarray)
def _asarray(a, dtype=None, order=None, *, copy=None, device=None, **kwargs):
    if order not in (None, "K", "A", "C"):
        _unsupported("asarray", "order", order)
    for k, v in kwargs.items():
        if k not in ("subok", "ndmin"):
            _unsupported("asarray", k, v)
    if not isinstance(a, Tensor):
        a = np.asarray(a)  # NumPy's inference (float64 for Python floats)
    t = tl.asarray(a, dtype=_dtype_arg(dtype, "asarray"), device=device, copy=copy)
    ndmin = operator.index(kwargs.get("ndmin", 0))
    if ndmin > t.ndim:  # leading ones, as NumPy (dask's chunk_max asks for it)
        t = t.reshape((1,) * (ndmin - t.ndim) + tuple(t.shape))
    return t


@implements(np.array)
def _array(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0):
    return _asarray(object, dtype, order, copy=copy or None, ndmin=ndmin)
