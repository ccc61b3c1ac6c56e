"""``Tensor.__array_function__``: ``HANDLED_FUNCTIONS`` (NumPy function -> an implementation
taking NumPy's signature and keywords, ``np.mean(x, dtype=..., keepdims=...)``, built from
tensorlib ops, never a copy to NumPy), filled by ``@implements(np.f)``. Keywords tensorlib
cannot honour (``order='F'``, ``kind=``...) raise TypeError naming the function and the
argument; functions not in the table are NotImplemented.
"""
from __future__ import annotations

import builtins
import numbers
import operator

import numpy as np

import tensorlib as tl
from . import dtypes as _dt
from .numpy_operands import _NoValue, _Unhandled, _device_of, _given, _store, _tensor, \
    _unsupported
from .numpy_ufuncs import _reduce, _reduced_axes
from .shape import normalize_axis
from .tensor import Tensor

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


# ---- reductions
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


# ---- joining and manipulation
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


def _order(fname, order, allowed=("C", "K", "A")):
    if order not in allowed:
        _unsupported(fname, "order", order)


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


# ---- factories: the *_like family and NumPy's like= (a tensor as the prototype)
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


@implements(np.array)
def _array(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0):
    return _asarray(object, dtype, order, copy=copy or None, ndmin=ndmin)
