"""Small sorts along any axis by NumPy's sort of views, no kernel and no transposed copies.

The stub's kernel (sorting.sort_kernel) sorts rows along the last dim; the ops layer brings
any other axis there with a transposed copy and hands back a transposed view of the result,
~20-40 us of set-up around a few microseconds of sorting at 1,000 elements (NumPy's
``np.sort(a, axis=0)`` of (31, 31) float32: ~3 us). Here the C-order result is written
directly by NumPy's sort along the axis (its vectorized quicksort where it has one):

* values: the quicksort is not stable, which shows only in nan payloads and in the order of
  -0.0 against +0.0; a float tensor holding -0.0, or whose sorted lanes end in a nan, is left
  to the kernel's route (which restores the input's bits there), so every result here is the
  stable sort's, bit for bit;
* indices: NumPy's stable argsort, whose order is the kernel's (nan last and equal to each
  other, -0.0 equal to +0.0, ties in input order); descending as the ascending order of the
  reversed lanes, reversed (ties stay in input order, nan first).

Only below SMALL_VALUES / SMALL_INDICES elements: above them the kernel's routes (parallel,
radix, composite-word argsorts) win. Along the last dim the kernel's own rows route is no
transposed copy either and it wins for argsorts ((20, 50) float32: 7.4 us, here 11.8) and for
a single row of values ((1000,): 9.9 us, here 13.8; its one NumPy sort has fewer steps around
it); many value rows along the last dim stay here ((20, 50): 8.7 us, the kernel 11.9).
Measured 2026-12-06 on a 2-core Zen 4 VM, float32, tl.sort / tl.argsort before -> after
(NumPy's sort / stable argsort): (31, 31) along axis 0 44 -> 9.6 us (3.1), argsort 34 -> 11
(6.4); along axis 1 20 -> 9.3 (2.6); (125, 8) along axis 1 120 -> 12 (5.7); (8, 125) along
axis 0 152 -> 14 (6.8).
"""
from __future__ import annotations

import numpy as np

from ...allocation import new_dense_cpu
from ...dtypes import default_index
from ...runtime.cpu.streams import host_sync
from .arrays import dense_view

__all__ = ["sort_along_axis", "SMALL_VALUES", "SMALL_INDICES"]

# Value sorts up to this many elements (one thread: the kernel's routes go parallel above);
# where NumPy has only its scalar introsort, of lanes shorter than SCALAR_LANE_MAX (from
# there the kernel's radix sort wins: sorting.RADIX_VALUES_MIN).
SMALL_VALUES = 1 << 15
SCALAR_LANE_MAX = 1 << 12
# many rows shorter than this along the last dim: the kernel's sorting network, vectorized
# across rows, is faster ((100, 10) float32: 8.7 us, this route 13.5; sorting.NP_MIN_ROW)
NETWORK_ROW = 16
# argsorts up to this many elements: NumPy's stable argsort (a merge sort) is 3.7x slower
# than the composite-word route at (100, 100), 3x faster at (31, 31)
SMALL_INDICES = 1 << 11
# NumPy sorts these with the comparison order of the kernel's keys
_VALUES = frozenset({"float32", "float64", "int16", "uint16", "int32", "uint32", "int64",
                     "uint64"})
_INDICES = _VALUES | {"int8", "uint8", "bool"}
_NEG_ZERO = {"float32": np.uint32(1 << 31), "float64": np.uint64(1 << 63)}
_BITS = {"float32": np.uint32, "float64": np.uint64}


def sort_along_axis(src, ax, descending, want_indices, vectorized_sort):
    """The sort (or argsort, ``want_indices``) of contiguous CPU tensor ``src`` along dim
    ``ax`` (0 <= ax < ndim) as a new C-order tensor, or None where this route does not give
    the stable sort's result or is not the fast one (the caller's route then serves).
    ``vectorized_sort``: a callable saying whether NumPy's sort is the vectorized one."""
    dtype = src._dtype
    name = dtype.name
    total = src._numel
    lane = src._shape[ax]
    last = ax == len(src._shape) - 1
    if want_indices:
        if name not in _INDICES or total > SMALL_INDICES or last:
            return None
    elif (name not in _VALUES or total > SMALL_VALUES
          or lane >= SCALAR_LANE_MAX and not vectorized_sort()
          or last and (total == lane or lane < NETWORK_ROW)):
        return None
    host_sync()  # (inline, in stream order: as the kernel)
    shape = src._shape
    np_dtype = dtype.storage_np_dtype
    a = dense_view(src, np_dtype).reshape(shape)
    if want_indices:
        return _argsort(a, ax, descending, shape)
    if name in _NEG_ZERO and np.count_nonzero(dense_view(src, _BITS[name]) == _NEG_ZERO[name]):
        return None
    out = new_dense_cpu(shape, dtype)
    o = dense_view(out, np_dtype).reshape(shape)
    if descending:
        asc = np.sort(a, axis=ax)
        np.copyto(o, np.flip(asc, ax))
    else:
        np.copyto(o, a)
        o.sort(axis=ax)
        asc = o
    if name in _NEG_ZERO and np.count_nonzero(np.isnan(asc[(slice(None),) * ax + (-1,)])):
        return None  # (nan payloads: the kernel's route keeps the input's)
    return out


def _argsort(a, ax, descending, shape):
    out = new_dense_cpu(shape, default_index())
    o = dense_view(out, np.int64).reshape(shape)
    if descending:
        n = shape[ax]
        order = np.argsort(np.flip(a, ax), axis=ax, kind="stable")
        np.subtract(n - 1, np.flip(order, ax), out=o)
    else:
        o[...] = np.argsort(a, axis=ax, kind="stable")
    return out
