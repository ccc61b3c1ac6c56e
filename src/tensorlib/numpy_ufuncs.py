"""``Tensor.__array_ufunc__``: ``UFUNCS`` (NumPy ufunc -> name of the tensorlib function
computing it: ``__call__`` with ``out=``, ``where=``, ``dtype=``, ``casting='same_kind' |
'unsafe'``), ``REDUCE`` and ``ACCUMULATE`` (ufuncs with a ``.reduce`` / ``.accumulate``: add,
multiply, maximum, minimum, logical_and, logical_or). Anything else is NotImplemented.
"""
from __future__ import annotations

import operator

import numpy as np

import tensorlib as tl
from . import dtypes as _dt
from .numpy_operands import _NoValue, _Unhandled, _device_of, _given, _out_target, _store, \
    _tensor, _unsupported
from .shape import normalize_axis
from .tensor import Tensor

__all__ = ["UFUNCS", "REDUCE", "ACCUMULATE", "array_ufunc"]


UFUNCS = {
    np.add: "add", np.subtract: "subtract", np.multiply: "multiply", np.divide: "divide",
    np.floor_divide: "floor_divide", np.remainder: "remainder", np.power: "pow",
    np.negative: "negative", np.positive: "positive", np.absolute: "abs", np.sign: "sign",
    np.reciprocal: "reciprocal", np.square: "square", np.sqrt: "sqrt",
    np.equal: "equal", np.not_equal: "not_equal", np.less: "less", np.less_equal: "less_equal",
    np.greater: "greater", np.greater_equal: "greater_equal",
    np.maximum: "maximum", np.minimum: "minimum",
    np.logical_and: "logical_and", np.logical_or: "logical_or", np.logical_xor: "logical_xor",
    np.logical_not: "logical_not", np.bitwise_and: "bitwise_and", np.bitwise_or: "bitwise_or",
    np.bitwise_xor: "bitwise_xor", np.invert: "bitwise_invert",
    np.left_shift: "bitwise_left_shift", np.right_shift: "bitwise_right_shift",
    np.exp: "exp", np.exp2: "exp2", np.expm1: "expm1", np.log: "log", np.log2: "log2",
    np.log10: "log10", np.log1p: "log1p", np.sin: "sin", np.cos: "cos", np.tan: "tan",
    np.arcsin: "asin", np.arccos: "acos", np.arctan: "atan", np.arctan2: "atan2",
    np.sinh: "sinh", np.cosh: "cosh", np.tanh: "tanh", np.arcsinh: "asinh",
    np.arccosh: "acosh", np.arctanh: "atanh", np.floor: "floor", np.ceil: "ceil",
    np.rint: "round", np.trunc: "trunc", np.hypot: "hypot", np.copysign: "copysign",
    np.logaddexp: "logaddexp", np.isnan: "isnan", np.isinf: "isinf", np.isfinite: "isfinite",
    np.conjugate: "conj", np.nextafter: "nextafter", np.signbit: "signbit",
    np.matmul: "matmul", np.vecdot: "vecdot",
}
_BOOL_OUT = {np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
             np.logical_and, np.logical_or, np.logical_xor, np.logical_not, np.isnan,
             np.isinf, np.isfinite, np.signbit}
REDUCE = {np.add: "sum", np.multiply: "prod", np.maximum: "max", np.minimum: "min",
          np.logical_and: "all", np.logical_or: "any"}
ACCUMULATE = {np.add: "cumsum", np.multiply: "cumprod", np.maximum: "maximum",
              np.minimum: "minimum", np.logical_and: "logical_and",
              np.logical_or: "logical_or"}
_CASTINGS = ("same_kind", "unsafe")


def _ufunc_call(ufunc, inputs, kwargs):
    fname = ufunc.__name__
    name = UFUNCS.get(ufunc)
    if name is None:
        raise _Unhandled
    out = kwargs.pop("out", None)
    where = kwargs.pop("where", True)
    dtype = kwargs.pop("dtype", None)
    casting = kwargs.pop("casting", "same_kind")
    if kwargs.pop("order", "K") not in ("K", "A", "C"):
        _unsupported(fname, "order", "F")
    kwargs.pop("subok", None)
    for k, v in kwargs.items():  # signature=, axes=, axis=, keepdims=...
        _unsupported(fname, k, v)
    if casting not in _CASTINGS:
        _unsupported(fname, "casting", casting)
    device = _device_of(inputs)
    args = [_tensor(x, fname, f"x{i + 1}", device, scalars=True) for i, x in enumerate(inputs)]
    if dtype is not None:
        dtype = _dt.to_dtype(dtype, arg="dtype", op=f"numpy.{fname}")
        if ufunc in _BOOL_OUT:
            if dtype is not tl.bool:
                _unsupported(fname, "dtype", dtype)
        else:
            args = [a.astype(dtype, copy=False) if isinstance(a, Tensor) else a for a in args]
    fn = getattr(tl, name)
    res = fn(*args)
    if dtype is not None and ufunc not in _BOOL_OUT and res.dtype is not dtype:
        raise TypeError(f"numpy.{fname}(): tensorlib computes this ufunc of {dtype} inputs in "
                        f"{res.dtype}; argument 'dtype'={dtype} is not available")
    if where is not True:
        mask = _tensor(where, fname, "where", device)
        if mask.dtype is not tl.bool:
            raise TypeError(f"numpy.{fname}(): argument 'where' must be a bool array, got "
                            f"{mask.dtype}")
        if out is None:  # NumPy leaves those elements uninitialized: the computed ones do
            return res
        target, ret = _out_target(out, fname)
        _check_cast(res, target, fname, casting)
        target.copy_(tl.where(mask, res.astype(target.dtype, copy=False), target))
        return ret
    if out is not None:
        target, ret = _out_target(out, fname)
        _check_cast(res, target, fname, casting)
        if target.shape != res.shape:
            raise ValueError(f"numpy.{fname}(): argument 'out' has shape {target.shape}, the "
                             f"result has shape {res.shape}")
        target.copy_(res)
        return ret
    return res


def _check_cast(res, target, fname, casting):
    if casting == "same_kind" and not tl.can_cast(res.dtype, target.dtype, "same_kind"):
        raise TypeError(f"numpy.{fname}(): can't write the {res.dtype} result into argument "
                        f"'out' of dtype {target.dtype} with casting='same_kind'")


def _reduced_axes(x, axis, fname):
    if axis is None:
        return tuple(range(x.ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return tuple(normalize_axis(operator.index(a), x.ndim, f"numpy.{fname}")
                 for a in axes)


_IDENTITY = {"sum": 0, "prod": 1, "all": True, "any": False}


def _ufunc_reduce(ufunc, inputs, kwargs):
    fname = f"{ufunc.__name__}.reduce"
    name = REDUCE.get(ufunc)
    if name is None or len(inputs) != 1:
        raise _Unhandled
    x = _tensor(inputs[0], fname, "array")
    axis = kwargs.pop("axis", 0)
    dtype = kwargs.pop("dtype", None)
    out = kwargs.pop("out", None)
    keepdims = kwargs.pop("keepdims", False)
    initial = kwargs.pop("initial", _NoValue)
    where = kwargs.pop("where", True)
    for k, v in kwargs.items():
        _unsupported(fname, k, v)
    return _reduce(name, x, axis, dtype, out, keepdims, initial, where, fname)


def _reduce(name, x, axis, dtype, out, keepdims, initial, where, fname):
    """sum / prod / max / min / all / any with NumPy's dtype=, initial= and where=."""
    if isinstance(out, tuple) and len(out) == 1:
        out = out[0]
    if dtype is not None:
        dtype = _dt.to_dtype(dtype, arg="dtype", op=f"numpy.{fname}")
        if name in ("all", "any"):
            if dtype is not tl.bool:
                _unsupported(fname, "dtype", dtype)
        elif name in ("max", "min"):
            x = x.astype(dtype, copy=False)
    axes = _reduced_axes(x, axis, fname)
    if where is not True and where is not _NoValue:
        mask = _tensor(where, fname, "where", x.device)
        if name in _IDENTITY:
            fill = _IDENTITY[name]
        elif _given(initial):
            fill = initial
        else:
            raise ValueError(f"numpy.{fname}(): reduction '{name}' with argument 'where' needs "
                             f"argument 'initial' (it has no identity)")
        x = tl.where(mask, x, fill)
    fn = getattr(tl, name)
    kw = {"dtype": dtype} if name in ("sum", "prod") and dtype is not None else {}
    empty = any(x.shape[a] == 0 for a in axes) if x.ndim else False
    if name in ("max", "min") and empty and _given(initial):
        shape = tuple(1 if i in axes else n for i, n in enumerate(x.shape)) if keepdims else \
            tuple(n for i, n in enumerate(x.shape) if i not in axes)
        res = tl.full(shape, initial, dtype=x.dtype, device=x.device)
    else:
        res = fn(x, axis=axes, keepdims=keepdims, **kw)
        if _given(initial) and initial is not None:
            combine = {"sum": tl.add, "prod": tl.multiply, "max": tl.maximum,
                       "min": tl.minimum, "all": tl.logical_and, "any": tl.logical_or}[name]
            res = combine(res, initial).astype(res.dtype, copy=False)
    return _store(res, out, fname)


def _scan_pairwise(x, axis, fn):
    """Inclusive scan of a pointwise binary ``fn`` along ``axis`` in ceil(log2 n) steps of
    whole-tensor ops (Hillis-Steele), on every device: tensorlib has no maximum / minimum scan
    kernel."""
    n = x.shape[axis]
    y = x.contiguous()
    k = 1
    while k < n:
        head = tl.narrow(y, axis, 0, k)
        tail = fn(tl.narrow(y, axis, k, n - k), tl.narrow(y, axis, 0, n - k))
        y = tl.concat([head, tail.astype(y.dtype, copy=False)], axis=axis)
        k *= 2
    return y


def _ufunc_accumulate(ufunc, inputs, kwargs):
    fname = f"{ufunc.__name__}.accumulate"
    name = ACCUMULATE.get(ufunc)
    if name is None or len(inputs) != 1:
        raise _Unhandled
    x = _tensor(inputs[0], fname, "array")
    axis = kwargs.pop("axis", 0)
    dtype = kwargs.pop("dtype", None)
    out = kwargs.pop("out", None)
    for k, v in kwargs.items():
        _unsupported(fname, k, v)
    if x.ndim == 0:
        raise TypeError(f"numpy.{fname}(): cannot accumulate on a scalar (0-d) tensor")
    ax = normalize_axis(operator.index(axis), x.ndim, f"numpy.{fname}")
    if dtype is not None:
        dtype = _dt.to_dtype(dtype, arg="dtype", op=f"numpy.{fname}")
    if name in ("cumsum", "cumprod"):
        res = getattr(tl, name)(x, axis=ax, dtype=dtype)
    elif name in ("maximum", "minimum"):
        if dtype is not None:
            x = x.astype(dtype, copy=False)
        res = _scan_pairwise(x, ax, getattr(tl, name))
    else:
        b = x if x.dtype is tl.bool else tl.not_equal(x, 0)
        if name == "logical_and":  # true while no False has been seen
            res = tl.equal(tl.cumsum(tl.logical_not(b).astype(tl.int64), axis=ax), 0)
        else:
            res = tl.greater(tl.cumsum(b.astype(tl.int64), axis=ax), 0)
    return _store(res, out, fname)


_METHODS = {"__call__": _ufunc_call, "reduce": _ufunc_reduce, "accumulate": _ufunc_accumulate}


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """``Tensor.__array_ufunc__``: the ufunc computed by tensorlib ops (see ``UFUNCS``)."""
    impl = _METHODS.get(method)
    if impl is None:  # outer, at, reduceat
        return NotImplemented
    try:
        return impl(ufunc, inputs, kwargs)
    except _Unhandled:
        return NotImplemented
