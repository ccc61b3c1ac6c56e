"""NumPy's joining, reshaping, sorting, searching, indexing and set functions on tensors:
concatenate, stack, where, clip, sort, argsort, searchsorted, reshape, ravel, transpose,
swapaxes, moveaxis, squeeze, expand_dims, broadcast_to / _arrays, flip, roll, repeat, tile,
tril, triu, take, take_along_axis, diff, diagonal, nonzero, meshgrid, unique, isin,
unravel_index, ravel_multi_index.
"""
from __future__ import annotations

import numbers
import operator

import numpy as np

import tensorlib as tl
from ..numpy_operands import _NoValue, _device_of, _given, _store, _tensor, _unsupported
from ..shape import normalize_axis
from ..tensor import Tensor
from .table import _dtype_arg, _no, _order, implements


def _tensors(arrays, fname, arg):
    arrays = list(arrays)
    device = _device_of(arrays)
    return [_tensor(x, fname, f"{arg}[{i}]", device) for i, x in enumerate(arrays)]


def _join(name, arrays, axis, out, dtype, casting):
    ts = _tensors(arrays, name, "arrays")
    if not ts:
        raise ValueError(f"numpy.{name}(): need at least one array to join")
    d = _dtype_arg(dtype, name)
    if d is not None:
        for t in ts:
            if not tl.can_cast(t.dtype, d, casting):
                raise TypeError(f"numpy.{name}(): can't cast {t.dtype} to dtype={d} with "
                                f"casting={casting!r}")
        ts = [t.astype(d, copy=False) for t in ts]
    res = getattr(tl, "concat" if name == "concatenate" else name)(ts, axis=axis)
    return _store(res, out, name, casting)


@implements(np.concatenate)
def _concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    return _join("concatenate", arrays, axis, out, dtype, casting)


@implements(np.stack)
def _stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    return _join("stack", arrays, axis, out, dtype, casting)


@implements(np.where)
def _where(condition, *xy):
    device = _device_of((condition,) + xy)
    cond = _tensor(condition, "where", "condition", device)
    if not xy:
        return tuple(tl.nonzero(cond))
    if len(xy) != 2:
        raise ValueError("numpy.where(): either both or neither of x and y should be given")
    x, y = (_tensor(v, "where", n, device, scalars=True) for v, n in zip(xy, "xy"))
    if cond.dtype is not tl.bool:
        cond = tl.not_equal(cond, 0)
    return tl.where(cond, x, y)


@implements(np.clip)
def _clip(a, a_min=_NoValue, a_max=_NoValue, out=None, *, min=_NoValue, max=_NoValue,
          **kwargs):
    for k, v in kwargs.items():
        _unsupported("clip", k, v)
    lo = min if _given(min) else (None if a_min is _NoValue else a_min)
    hi = max if _given(max) else (None if a_max is _NoValue else a_max)
    x = _tensor(a, "clip", "a")
    lo, hi = (None if v is None else _tensor(v, "clip", n, x.device, scalars=True)
              for v, n in ((lo, "a_min"), (hi, "a_max")))
    return _store(tl.clip(x, lo, hi), out, "clip")


def _sort_args(fname, a, axis, kind, order, stable):
    _no(fname, order=(order, None))
    if kind not in (None, "quicksort", "mergesort", "heapsort", "stable"):
        _unsupported(fname, "kind", kind)
    if stable is False:
        _unsupported(fname, "stable", stable)  # tensorlib's sorts are always stable
    x = _tensor(a, fname, "a")
    if axis is None:
        x, axis = tl.reshape(x, (-1,)), 0
    return x, axis


@implements(np.sort)
def _sort(a, axis=-1, kind=None, order=None, *, stable=None):
    x, axis = _sort_args("sort", a, axis, kind, order, stable)
    return tl.sort(x, axis=axis)


@implements(np.argsort)
def _argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    x, axis = _sort_args("argsort", a, axis, kind, order, stable)
    return tl.argsort(x, axis=axis)


@implements(np.searchsorted)
def _searchsorted(a, v, side="left", sorter=None):
    x = _tensor(a, "searchsorted", "a")
    vv = _tensor(v, "searchsorted", "v", x.device)
    s = None if sorter is None else _tensor(sorter, "searchsorted", "sorter", x.device)
    return tl.searchsorted(x, vv, side=side, sorter=s)


@implements(np.reshape)
def _reshape(a, /, shape=None, order="C", *, newshape=None, copy=None):
    _order("reshape", order, ("C", "A"))
    if shape is None:
        shape = newshape
    if shape is None:
        raise TypeError("numpy.reshape(): argument 'shape' is missing")
    return tl.reshape(_tensor(a, "reshape", "a"), shape, copy=copy)


@implements(np.ravel)
def _ravel(a, order="C"):
    _order("ravel", order)
    return tl.reshape(_tensor(a, "ravel", "a"), (-1,))


@implements(np.transpose, np.permute_dims)
def _transpose(a, axes=None):
    x = _tensor(a, "transpose", "a")
    if axes is None:
        axes = tuple(range(x.ndim - 1, -1, -1))
    return tl.permute(x, axes)


@implements(np.swapaxes)
def _swapaxes(a, axis1, axis2):
    return tl.swapaxes(_tensor(a, "swapaxes", "a"), axis1, axis2)


@implements(np.moveaxis)
def _moveaxis(a, source, destination):
    return tl.moveaxis(_tensor(a, "moveaxis", "a"), source, destination)


@implements(np.squeeze)
def _squeeze(a, axis=None):
    return tl.squeeze(_tensor(a, "squeeze", "a"), axis)


@implements(np.expand_dims)
def _expand_dims(a, axis):
    x = _tensor(a, "expand_dims", "a")
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    nd = x.ndim + len(axes)
    norm = sorted(normalize_axis(operator.index(v), nd, "numpy.expand_dims")
                  for v in axes)
    if len(set(norm)) != len(norm):
        raise ValueError(f"numpy.expand_dims(): repeated axis in {axis!r}")
    for ax in norm:
        x = tl.expand_dims(x, ax)
    return x


@implements(np.broadcast_to)
def _broadcast_to(array, shape, subok=False):
    shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    return tl.broadcast_to(_tensor(array, "broadcast_to", "array"), shape)


@implements(np.broadcast_arrays)
def _broadcast_arrays(*args, subok=False):
    return tuple(tl.broadcast_arrays(*_tensors(args, "broadcast_arrays", "args")))


@implements(np.flip)
def _flip(m, axis=None):
    return tl.flip(_tensor(m, "flip", "m"), axis=axis)


@implements(np.roll)
def _roll(a, shift, axis=None):
    return tl.roll(_tensor(a, "roll", "a"), shift, axis=axis)


@implements(np.repeat)
def _repeat(a, repeats, axis=None):
    return tl.repeat(_tensor(a, "repeat", "a"), repeats, axis=axis)


@implements(np.tile)
def _tile(A, reps):
    reps = (reps,) if isinstance(reps, numbers.Integral) else tuple(reps)
    return tl.tile(_tensor(A, "tile", "A"), reps)


@implements(np.tril)
def _tril(m, k=0):
    return tl.tril(_tensor(m, "tril", "m"), k=k)


@implements(np.triu)
def _triu(m, k=0):
    return tl.triu(_tensor(m, "triu", "m"), k=k)


@implements(np.take)
def _take(a, indices, axis=None, out=None, mode="raise"):
    _no("take", mode=(mode, "raise"))
    x = _tensor(a, "take", "a")
    idx = _tensor(indices, "take", "indices", x.device)
    if axis is None:
        x = tl.reshape(x, (-1,))
    res = tl.take(x, tl.reshape(idx, (-1,)) if idx.ndim != 1 else idx, axis=axis)
    if idx.ndim != 1:  # NumPy: the indices' shape replaces the taken axis
        ax = 0 if axis is None else normalize_axis(axis, x.ndim, "numpy.take")
        base = (-1,) if axis is None else res.shape
        res = tl.reshape(res, base[:ax] + idx.shape + base[ax + 1:])
    return _store(res, out, "take")


@implements(np.take_along_axis)
def _take_along_axis(arr, indices, axis=-1):
    x = _tensor(arr, "take_along_axis", "arr")
    idx = _tensor(indices, "take_along_axis", "indices", x.device)
    if axis is None:
        x, axis = tl.reshape(x, (-1,)), 0
    return tl.take_along_axis(x, idx, axis=axis)


@implements(np.diff)
def _diff(a, n=1, axis=-1, prepend=_NoValue, append=_NoValue):
    x = _tensor(a, "diff", "a")
    pre = None if prepend is _NoValue else _tensor(prepend, "diff", "prepend", x.device)
    app = None if append is _NoValue else _tensor(append, "diff", "append", x.device)
    return tl.diff(x, axis=axis, n=n, prepend=pre, append=app)


@implements(np.diagonal)
def _diagonal(a, offset=0, axis1=0, axis2=1):
    return tl.diagonal(_tensor(a, "diagonal", "a"), offset, axis1, axis2)


@implements(np.nonzero)
def _nonzero(a):
    return tuple(tl.nonzero(_tensor(a, "nonzero", "a")))


@implements(np.meshgrid)
def _meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    _no("meshgrid", sparse=(sparse, False))
    out = tl.meshgrid(*_tensors(xi, "meshgrid", "xi"), indexing=indexing)
    return tuple(o.copy() for o in out) if copy else tuple(out)


@implements(np.unique)
def _unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
            equal_nan=True, sorted=True):
    _no("unique", axis=(axis, None))
    return tl.unique(_tensor(ar, "unique", "ar"), return_index=return_index,
                     return_inverse=return_inverse, return_counts=return_counts,
                     equal_nan=equal_nan)


@implements(np.isin)
def _isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    x = _tensor(element, "isin", "element")
    return tl.isin(x, _tensor(test_elements, "isin", "test_elements", x.device), invert=invert)


def _index_tensor(x, fname, arg):
    t = x if isinstance(x, Tensor) else tl.asarray(np.asarray(x))
    if t.dtype.kind not in "iu":
        raise TypeError(f"numpy.{fname}(): argument '{arg}' must hold integers, got {t.dtype}")
    return t.astype(tl.int64)


def _dims(shape):
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    return tuple(operator.index(n) for n in shape)


@implements(np.unravel_index)
def _unravel_index(indices, shape, order="C"):
    if order != "C":
        _unsupported("unravel_index", "order", order)
    idx, dims = _index_tensor(indices, "unravel_index", "indices"), _dims(shape)
    size = int(np.prod(dims, dtype=np.int64))
    if idx.numel() and (bool(tl.any(idx < 0)) or bool(tl.any(idx >= size))):
        raise ValueError(f"numpy.unravel_index(): argument 'indices' has an index out of bounds "
                         f"for shape {dims}")
    out, rest = [], idx
    for n in reversed(dims):
        out.append(rest % n if n else rest)
        rest = rest // n if n else rest
    return tuple(reversed(out))


@implements(np.ravel_multi_index)
def _ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    if mode != "raise":
        _unsupported("ravel_multi_index", "mode", mode)
    if order != "C":
        _unsupported("ravel_multi_index", "order", order)
    dims = _dims(dims)
    if len(multi_index) != len(dims):
        raise ValueError(f"numpy.ravel_multi_index(): argument 'multi_index' has "
                         f"{len(multi_index)} coordinate arrays for {len(dims)} dimensions")
    flat = None
    for i, n in zip(multi_index, dims):
        i = _index_tensor(i, "ravel_multi_index", "multi_index")
        if i.numel() and (bool(tl.any(i < 0)) or bool(tl.any(i >= n))):
            raise ValueError(f"numpy.ravel_multi_index(): argument 'multi_index' has a "
                             f"coordinate out of bounds for shape {dims}")
        flat = i if flat is None else flat * n + i
    return flat
