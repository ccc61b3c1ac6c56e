"""``Tensor.__getitem__`` / ``__setitem__``: basic indexing as views (ints, slices with any step,
None, Ellipsis)."""
from __future__ import annotations

import operator

from .dispatch.dispatcher import check_writable
from .dispatch.keys import backend_key_for
from .tensor import Tensor

_CPU_KEY = backend_key_for("cpu")

__all__ = ["getitem", "setitem", "basic_index", "set_autograd_hooks"]


def _expand_key(key, ndim, op):
    if not isinstance(key, tuple):
        key = (key,)
    n_ellipsis = sum(1 for k in key if k is Ellipsis)
    if n_ellipsis > 1:
        raise IndexError(f"{op}(): an index can only have a single ellipsis ('...')")
    consumed = sum(1 for k in key if k is not None and k is not Ellipsis)
    if consumed > ndim:
        raise IndexError(f"{op}(): too many indices for tensor: tensor is {ndim}-dimensional, but "
                         f"{consumed} were indexed")
    if n_ellipsis:
        i = next(i for i, k in enumerate(key) if k is Ellipsis)
        key = key[:i] + (slice(None),) * (ndim - consumed) + key[i + 1:]
    else:
        key = key + (slice(None),) * (ndim - consumed)
    return key


def basic_index(t: Tensor, key, op="__getitem__") -> Tensor:
    """The view selected by a key of ints, slices, None and Ellipsis."""
    key = _expand_key(key, t.ndim, op)
    shape, strides = [], []
    offset = t._offset
    d = 0
    for k in key:
        if k is None:
            shape.append(1)
            strides.append(0)
            continue
        size, stride = t._shape[d], t._strides[d]
        if isinstance(k, slice):
            start, stop, step = k.indices(size)
            n = len(range(start, stop, step))
            if n:
                offset += start * stride
            shape.append(n)
            strides.append(stride * step)
        else:
            try:
                i = operator.index(k)
            except TypeError:
                raise IndexError(f"{op}(): only integers, slices, None, Ellipsis, integer "
                                 f"tensors and boolean masks are valid indices, got "
                                 f"{type(k).__name__} ({k!r:.40})") from None
            if not -size <= i < size:
                raise IndexError(f"{op}(): index {i} is out of bounds for dimension {d} with "
                                 f"size {size}")
            offset += (i + size if i < 0 else i) * stride
        d += 1
    return t._view(shape, strides, offset)


_BASIC_TYPES = frozenset((int, slice, type(None), type(Ellipsis)))  # exact types


def _is_basic(key) -> bool:
    items = key if isinstance(key, tuple) else (key,)
    for k in items:
        if type(k) in _BASIC_TYPES:
            continue
        # bool is an int subclass, but True/False index like 0-d masks (NumPy): advanced.
        if not (k is None or k is Ellipsis or isinstance(k, slice)
                or (hasattr(k, "__index__") and not isinstance(k, (Tensor, bool))
                    and not hasattr(k, "__len__"))):
            return False
    return True


def _slice0(t: Tensor, k: slice) -> Tensor:
    """``t[k]`` for a slice ``k`` and ``t.ndim >= 1``: what basic_index gives (same view, same
    errors from ``slice.indices``), without expanding the key."""
    shape = t._shape
    start, stop, step = k.indices(shape[0])
    n = len(range(start, stop, step))
    stride = t._strides[0]
    v = object.__new__(Tensor)
    v._storage = t._storage
    v._shape = (n,) + shape[1:]
    v._strides = (stride * step,) + t._strides[1:]
    v._offset = t._offset + start * stride if n else t._offset
    v._dtype = t._dtype
    v._ks = t._ks
    v._autograd = None
    v._numel = t._numel // shape[0] * n if shape[0] else 0
    v._contiguous = None
    return v


_getitem_dense = None  # kernels.cpu.indexing.getitem_dense, imported on first use


# Autograd's versions (tensorlib.autograd.indexing_backward installs them; this layer can't import
# it), called for tensors with autograd state: they index detached aliases (this code) and record
# the graph around that.
_autograd_getitem = None
_autograd_setitem = None


def set_autograd_hooks(getitem_fn, setitem_fn) -> None:
    global _autograd_getitem, _autograd_setitem
    _autograd_getitem, _autograd_setitem = getitem_fn, setitem_fn


def getitem(self: Tensor, key):
    if self._autograd is not None and _autograd_getitem is not None:
        return _autograd_getitem(self, key)
    tk = type(key)
    if tk is slice and self._shape and type(self) is Tensor:
        return _slice0(self, key)
    if tk is tuple and len(key) == 1 and type(key[0]) is Tensor:
        key = key[0]  # x[(idx,)] is x[idx] (take() indexes this way)
        tk = Tensor
    if tk is Tensor and key._ks == self._ks and key._ks == _CPU_KEY:
        # Small-call fast path: x[idx] / x[mask] without parsing and planning the key.
        global _getitem_dense
        if _getitem_dense is None:
            from .kernels.cpu.indexing import getitem_dense as _getitem_dense
        out = _getitem_dense(self, key)
        if out is not None:
            return out
    if _is_basic(key):
        return basic_index(self, key)
    from .advanced_indexing import advanced_getitem
    return advanced_getitem(self, key)


def setitem(self: Tensor, key, value) -> None:
    if _autograd_setitem is not None and (self._autograd is not None or
                                          getattr(value, "_autograd", None) is not None):
        _autograd_setitem(self, key, value)
        return
    check_writable(self, "__setitem__")  # ops check their written arguments in the dispatcher
    if _is_basic(key):
        # Same value rules (casts, range checks, broadcasting) as the advanced path.
        from .advanced_indexing import assign
        assign(basic_index(self, key, "__setitem__"), value)
        return
    from .advanced_indexing import advanced_setitem
    advanced_setitem(self, key, value)
