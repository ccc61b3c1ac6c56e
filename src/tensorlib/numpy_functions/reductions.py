"""NumPy's reductions and scans on tensors: sum, prod, max / amax, min / amin, any, all, mean,
var, std, argmax, argmin, cumsum, cumprod, cumulative_sum / cumulative_prod, count_nonzero.
"""
from __future__ import annotations

import numpy as np

import tensorlib as tl
from .. import dtypes as _dt
from ..numpy_operands import _NoValue, _given, _store, _tensor
from ..numpy_ufuncs import _reduce, _reduced_axes
from .table import _dtype_arg, _no, implements


def _mk_sum_prod(name):
    def impl(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue,
             where=_NoValue):
        x = _tensor(a, name, "a")
        return _reduce(name, x, axis, dtype, out, keepdims, initial, where, name)
    impl.__name__ = name
    return impl


implements(np.sum)(_mk_sum_prod("sum"))
implements(np.prod)(_mk_sum_prod("prod"))


def _mk_max_min(name):
    def impl(a, axis=None, out=None, keepdims=False, initial=_NoValue, where=_NoValue):
        x = _tensor(a, name, "a")
        return _reduce(name, x, axis, None, out, keepdims, initial, where, name)
    impl.__name__ = name
    return impl


implements(np.max, np.amax)(_mk_max_min("max"))
implements(np.min, np.amin)(_mk_max_min("min"))


def _mk_any_all(name):
    def impl(a, axis=None, out=None, keepdims=False, *, where=_NoValue):
        x = _tensor(a, name, "a")
        return _reduce(name, x, axis, None, out, keepdims, _NoValue, where, name)
    impl.__name__ = name
    return impl


implements(np.any)(_mk_any_all("any"))
implements(np.all)(_mk_any_all("all"))


def _float_for(x, dtype, fname):
    """Input of mean / std / var: cast to ``dtype``; integers compute in float64 (NumPy)."""
    d = _dtype_arg(dtype, fname)
    if d is None and x.dtype.kind in "biu":
        d = tl.float64
    return x if d is None else x.astype(d, copy=False)


@implements(np.mean)
def _mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=_NoValue):
    x = _float_for(_tensor(a, "mean", "a"), dtype, "mean")
    if where is not _NoValue and where is not True:
        mask = _tensor(where, "mean", "where", x.device)
        axes = _reduced_axes(x, axis, "mean")
        total = tl.sum(tl.where(mask, x, 0), axis=axes, keepdims=keepdims)
        count = tl.sum(tl.broadcast_to(mask, x.shape), axis=axes, keepdims=keepdims)
        res = tl.divide(total, count.astype(_dt.real_for(x.dtype)))
    else:
        res = tl.mean(x, axis=axis, keepdims=keepdims)
    return _store(res, out, "mean")


def _mk_var_std(name):
    def impl(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=_NoValue,
             mean=_NoValue, correction=_NoValue):
        _no(name, where=(where, True), mean=(mean, _NoValue))
        if _given(correction):
            if ddof != 0:
                raise ValueError(f"numpy.{name}(): arguments 'ddof' and 'correction' are "
                                 f"mutually exclusive")
            ddof = correction
        x = _float_for(_tensor(a, name, "a"), dtype, name)
        res = getattr(tl, name)(x, axis=axis, keepdims=keepdims, correction=ddof)
        return _store(res, out, name)
    impl.__name__ = name
    return impl


implements(np.var)(_mk_var_std("var"))
implements(np.std)(_mk_var_std("std"))


def _mk_arg(name):
    def impl(a, axis=None, out=None, *, keepdims=False):
        res = getattr(tl, name)(_tensor(a, name, "a"), axis=axis, keepdims=keepdims)
        return _store(res, out, name)
    impl.__name__ = name
    return impl


implements(np.argmax)(_mk_arg("argmax"))
implements(np.argmin)(_mk_arg("argmin"))


def _mk_scan(name):
    def impl(a, axis=None, dtype=None, out=None):
        res = getattr(tl, name)(_tensor(a, name, "a"), axis=axis,
                                dtype=_dtype_arg(dtype, name))
        return _store(res, out, name)
    impl.__name__ = name
    return impl


implements(np.cumsum)(_mk_scan("cumsum"))
implements(np.cumprod)(_mk_scan("cumprod"))


def _mk_cumulative(name):
    def impl(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
        res = getattr(tl, name)(_tensor(x, name, "x"), axis=axis,
                                dtype=_dtype_arg(dtype, name), include_initial=include_initial)
        return _store(res, out, name)
    impl.__name__ = name
    return impl


for _f in ("cumulative_sum", "cumulative_prod"):  # NumPy >= 2.1
    if hasattr(np, _f):
        implements(getattr(np, _f))(_mk_cumulative(_f))


@implements(np.count_nonzero)
def _count_nonzero(a, axis=None, *, keepdims=False):
    return tl.count_nonzero(_tensor(a, "count_nonzero", "a"), axis=axis, keepdims=keepdims)
