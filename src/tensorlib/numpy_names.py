"""NumPy names a new user types on day one, composed from tensorlib's public ops (so the
dispatcher, the profiler and autograd see the ops they run, and both devices work):
``concatenate`` (an alias of ``concat``, bound in ``__init__``), ``dot``, ``unique``, ``isin``,
``broadcast_shapes`` and the methods ``Tensor.copy()`` and ``Tensor.sort()`` (in place, as
NumPy's; ``tl.sort(x)`` returns a sorted copy).
"""
from __future__ import annotations

import numbers
import operator

import tensorlib as tl
from .shape import broadcast_shapes as _broadcast_shapes
from .tensor import Tensor

__all__ = ["dot", "unique", "isin", "broadcast_shapes", "tensor_copy", "tensor_sort"]

_SCALARS = (bool, int, float, complex)


def _need_tensor(x, op, arg):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{arg}' must be a Tensor, got {type(x).__name__}")
    return x


def dot(a, b, /):
    """NumPy's ``dot``: the inner product of 1-D tensors, the matrix product of 2-D ones, a
    product with a 0-d tensor or a Python scalar; for N-D tensors a sum product over the last
    axis of ``a`` and the second-to-last of ``b`` (``tensordot``, not ``matmul``'s batching)."""
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise TypeError(f"dot(): at least one of 'a', 'b' must be a Tensor, got "
                        f"{type(a).__name__} and {type(b).__name__}")
    if isinstance(a, _SCALARS) or isinstance(b, _SCALARS) or a.ndim == 0 or b.ndim == 0:
        return tl.multiply(a, b)
    if b.ndim <= 2 or a.ndim == 1:  # matmul's batching only starts past these
        return tl.matmul(a, b)
    return tl.tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 2]))


def unique(x, /, return_index=False, return_inverse=False, return_counts=False, *,
           equal_nan=True):
    """NumPy's ``unique`` of the flattened tensor: sorted values, and as asked the index of
    each value's first occurrence, the inverse (shaped like ``x``) and the counts. With
    ``equal_nan`` (NumPy's default) all NaNs count as one value; the Array API's
    ``unique_values`` / ``unique_all`` keep every NaN apart."""
    op = "unique"
    _need_tensor(x, op, "x")
    flags = (bool(return_index), bool(return_inverse), bool(return_counts))
    nan_merge = equal_nan and x.dtype.kind == "f"
    if not any(flags) and not nan_merge:
        return tl.unique_values(x)
    values, index, inverse, counts = tl.unique_all(x)
    if nan_merge and values.size:
        nan = tl.isnan(values)
        k = int(tl.sum(tl.logical_not(nan)))  # NaNs sort last
        if k < values.shape[0] - 1:  # more than one NaN: merge them into the first
            tail = slice(k, None)
            values = values[:k + 1]
            index = tl.concat([index[:k], tl.min(index[tail], keepdims=True, axis=0)])
            counts = tl.concat([counts[:k], tl.sum(counts[tail], keepdims=True, axis=0)])
            inverse = tl.minimum(inverse, k)
    if not any(flags):
        return values
    extra = [t for t, f in zip((index, inverse, counts), flags) if f]
    return (values, *extra)


def isin(x1, x2, /, *, invert=False):
    """Array API 2025.12 ``isin``: whether each element of ``x1`` equals some element of
    ``x2`` (compared in their promoted dtype; NaN is in nothing). ``invert`` negates. Integers
    whose ``x2`` spans a small range look up a table of that range (NumPy's ``kind='table'``);
    other values sort ``x2`` and binary-search it; complex values (no total order) compare
    against every element."""
    op = "isin"
    if not isinstance(x1, Tensor) and not isinstance(x2, Tensor):
        raise TypeError(f"{op}(): at least one of 'x1', 'x2' must be a Tensor, got "
                        f"{type(x1).__name__} and {type(x2).__name__}")
    if not isinstance(invert, bool):
        raise TypeError(f"{op}(): argument 'invert' must be a bool, got {invert!r}")
    ct = tl.result_type(x1, x2)
    device = (x1 if isinstance(x1, Tensor) else x2).device
    a = tl.asarray(x1, dtype=ct, device=device)
    b = tl.reshape(tl.asarray(x2, dtype=ct, device=device), (-1,))
    if b.shape[0] == 0 or a.size == 0:
        found = tl.zeros(a.shape, dtype=tl.bool, device=device)
    elif ct.kind == "c":
        found = tl.any(tl.equal(tl.expand_dims(a, -1), b), axis=-1)
    elif ct.kind == "b":
        # two possible values: each in x2 or not (1e5 bools through the sort route: 474 us)
        has_true, has_false = bool(tl.any(b)), not bool(tl.all(b))
        found = (tl.ones(a.shape, dtype=tl.bool, device=device) if has_true and has_false
                 else tl.asarray(a, copy=True) if has_true else tl.logical_not(a))
    else:
        found = _isin_table(a, b) if ct.kind in "iu" and a.size >= _ISIN_TABLE_MIN else None
        if found is None:
            s = tl.sort(b)
            flat = tl.reshape(a, (-1,))
            pos = tl.clip(tl.searchsorted(s, flat), 0, s.shape[0] - 1)
            found = tl.reshape(tl.equal(tl.take(s, pos), flat), a.shape)
    return tl.logical_not(found) if invert else found


# below this many elements the table's seven small ops cost more than the sort route's
# searches (1e3 int64 in 50 values: 55 vs 47 us)
_ISIN_TABLE_MIN = 4096


def _isin_table(a, b):
    """isin of integer ``a`` in 1-D ``b`` (non-empty, of a's dtype) by a bool table over
    [min(b), max(b)], widened by one False entry on each side that the dtype's range reaches
    past: each element of ``a`` is clipped into the table's range (one pass), offset, and
    looked up (a gather). None when the range is wider than NumPy's table bound (6 entries per
    element of ``a`` and ``b``). 1e5 int64 in 50 values of [-100, 100): 486 -> 168-206 us."""
    lo, hi = int(tl.min(b)), int(tl.max(b))
    info = tl.iinfo(a.dtype)
    low = lo - 1 if lo > info.min else lo
    high = hi + 1 if hi < info.max else hi
    span = high - low + 1
    if span > 6 * (a.size + b.shape[0]):
        return None
    item = a.dtype.itemsize

    def positions(x):
        # x - low as an index dtype the gathers and scatters take directly, without overflow:
        # 8-byte values subtract in their own type (the result is below span), narrower ones
        # after widening
        if item == 8:
            return (x - low).astype(tl.int64, copy=False)
        return x.astype(tl.int64 if item == 4 else tl.int32) - low

    table = tl.zeros((span,), dtype=tl.bool, device=a.device)
    table[positions(b)] = True
    flat = tl.reshape(a, (-1,))
    return tl.reshape(tl.take(table, positions(tl.clip(flat, low, high))), a.shape)


def broadcast_shapes(*shapes):
    """The shape that tensors of ``shapes`` broadcast to (NumPy's rules); an int stands for a
    1-D shape, as in NumPy."""
    op = "broadcast_shapes"
    norm = []
    for i, s in enumerate(shapes):
        if isinstance(s, numbers.Integral) and not isinstance(s, bool):
            s = (s,)
        if not isinstance(s, (tuple, list)):
            raise TypeError(f"{op}(): argument shapes[{i}] must be a tuple of ints, got "
                            f"{type(s).__name__} ({s!r:.60})")
        try:
            s = tuple(operator.index(n) for n in s)
        except TypeError:
            raise TypeError(f"{op}(): argument shapes[{i}] must be a tuple of ints, got "
                            f"{s!r:.60}") from None
        if any(n < 0 for n in s):
            raise ValueError(f"{op}(): argument shapes[{i}] has a negative size: {s}")
        norm.append(s)
    return _broadcast_shapes(*norm, op=op)


def tensor_copy(self, order="K"):
    """``x.copy()``: a new tensor with the same values (NumPy's spelling of ``clone``)."""
    if order not in ("K", "A", "C"):
        raise TypeError(f"copy(): argument 'order'={order!r} is not supported (tensorlib "
                        f"copies keep C or the source's memory order)")
    return tl.clone(self)


def tensor_sort(self, axis=-1, kind=None, order=None, *, descending=False, stable=True):
    """``x.sort()`` sorts in place along ``axis`` and returns None, as NumPy's does;
    ``tl.sort(x)`` returns a sorted copy."""
    if order is not None:
        raise TypeError(f"sort(): argument 'order'={order!r} is not supported (no structured "
                        f"dtypes)")
    if kind not in (None, "quicksort", "mergesort", "heapsort", "stable"):
        raise ValueError(f"sort(): argument 'kind' must be None, 'quicksort', 'mergesort', "
                         f"'heapsort' or 'stable', got {kind!r}")
    if axis is None:
        raise TypeError("sort(): in-place sort needs an axis (axis=None would flatten); use "
                        "tl.sort(x.reshape(-1))")
    self.copy_(tl.sort(self, axis=axis, descending=descending, stable=stable))
