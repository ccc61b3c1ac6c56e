"""The ``__array_function__`` table: ``HANDLED_FUNCTIONS`` (NumPy function -> implementation),
``@implements`` that fills it, ``array_function`` that looks calls up in it, and the keyword
checks the implementations share (``dtype=``, ``order=``, keywords left at NumPy's default).
"""
from __future__ import annotations

import numbers

import numpy as np

from .. import dtypes as _dt
from ..numpy_operands import _NoValue, _Unhandled, _unsupported
from ..tensor import Tensor

__all__ = ["HANDLED_FUNCTIONS", "array_function", "implements"]

HANDLED_FUNCTIONS: dict = {}


def implements(*np_functions):
    """Registers an implementation of NumPy functions (same signature as NumPy's)."""
    def deco(fn):
        for f in np_functions:
            HANDLED_FUNCTIONS[f] = fn
        return fn
    return deco


def array_function(self, func, types, args, kwargs):
    """``Tensor.__array_function__``: NumPy functions in ``HANDLED_FUNCTIONS``."""
    impl = HANDLED_FUNCTIONS.get(func)
    if impl is None:
        return NotImplemented
    for t in types:
        if not issubclass(t, (Tensor, np.ndarray)):
            return NotImplemented
    try:
        return impl(*args, **kwargs)
    except _Unhandled:
        return NotImplemented


def _dtype_arg(dtype, fname):
    return None if dtype is None else _dt.to_dtype(dtype, arg="dtype",
                                                         op=f"numpy.{fname}")


def _no(fname, **given):
    """Keywords that tensorlib cannot honour: an error unless left at NumPy's default."""
    for k, (v, default) in given.items():
        if v is _NoValue or v is default or (isinstance(v, (str, numbers.Number)) and
                                             v == default):
            continue
        _unsupported(fname, k, v)


def _order(fname, order, allowed=("C", "K", "A")):
    if order not in allowed:
        _unsupported(fname, "order", order)
