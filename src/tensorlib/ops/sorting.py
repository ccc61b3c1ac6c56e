"""Sorting and searching, device-generic: sort / argsort (the ``sort`` stub sorts the rows of a
contiguous tensor), searchsorted (the ``searchsorted`` stub), and the unique_* family composed
from argsort, comparisons, nonzero and indexing.

Order (Array API leaves nan and signed zeros to the implementation): ascending sorts put every
nan last, as NumPy does; -0.0 and +0.0 compare equal (a stable sort keeps their input order);
``descending=True`` is the exact reverse order (nan first) with equal elements still in input
order. searchsorted uses the same order. The unique_* functions treat each nan as distinct
(nan != nan) and -0.0 == +0.0, and return sorted values; ``indices`` are first occurrences.

Complex values take NumPy's order: lexicographic (real part, then imaginary part) within four
classes in turn, ``[R + Rj, R + nanj, nan + Rj, nan + nanj]`` (nan signs and payloads aside);
descending is again the exact reverse with ties in input order. It is composed from the real
kernels on strided views of the two parts (``_complex_argsort_rows``), so every backend runs it;
unique_* treat a value with a nan part as distinct, as a real nan is; searchsorted sorts x2's
values in with x1's and counts the x1 elements before each.
"""
from __future__ import annotations

from ..dispatch.namespace import ops as _ops

from collections import namedtuple

import numpy as np

from .. import dtypes as _dt
from ..dispatch.keys import BACKEND_MASK, backend_key_for
from ..dispatch.stub import get_stub
from ..allocation import empty, new_dense_cpu
from ..tensor import Tensor
from .views import movedim, normalize_axis, reshape

__all__ = ["sort", "argsort", "searchsorted", "unique_values",
           "unique_counts", "unique_inverse", "unique_all", "UniqueAllResult",
           "UniqueCountsResult", "UniqueInverseResult"]

UniqueAllResult = namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices",
                                                 "counts"])
UniqueCountsResult = namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def _check(op, x, arg="x"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{arg}' must be a Tensor, got {type(x).__name__}")


# ---------------------------------------------------------------- complex order
def _parts(x):
    """(real, imag) of a complex tensor as strided views of its storage (tl.real / tl.imag
    would copy)."""
    comp = _dt.real_for(x.dtype)
    strides = tuple(2 * s for s in x._strides)
    return tuple(Tensor._make(x._storage, x._shape, strides, 2 * x._offset + k, comp)
                 for k in (0, 1))


def _complex_argsort_rows(rows, descending):
    """Stable argsort of each row of a 2-D complex tensor in NumPy's complex order.

    Passes of the stable real argsort, least significant key first: the imaginary part, the
    real part (both put nan last), then "has a nan part", which moves ``R + nanj`` behind every
    nan-free value while keeping ``R + nanj < nan + Rj < nan + nanj`` from the earlier passes.
    Descending runs every pass descending: the exact reverse, ties still in input order."""
    _any, isnan, logical_or = _ops.any, _ops.isnan, _ops.logical_or
    re, im = _parts(rows)

    def then_by(perm, key):
        return _take_rows(perm, argsort(_take_rows(key, perm), -1, descending))

    perm = argsort(im, -1, descending)
    perm = then_by(perm, re)
    im_nan = isnan(im)
    if bool(_any(im_nan)):  # otherwise nan real parts are already last (first descending)
        perm = then_by(perm, logical_or(isnan(re), im_nan))
    return perm


def _take_rows(v, perm):
    """take_along_axis(v, perm, -1) for 2-D operands as one 1-D gather (a third of the cost
    of take_along_axis's broadcast two-array index)."""
    add, arange = _ops.add, _ops.arange
    r, n = perm.shape
    if r == 1:
        return reshape(v[0][perm[0]], (1, n))
    base = reshape(arange(0, r * n, n, dtype=perm.dtype, device=perm.device), (r, 1))
    return reshape(v, (r * n,))[add(perm, base)]


def _complex_sort(x, ax, descending, want_indices):
    rows = movedim(x, (ax,), (x.ndim - 1,))
    shape = rows.shape
    n = shape[-1]
    rows = reshape(rows, (rows.numel() // n if n else 0, n))  # a copy only when it must
    if rows.numel() == 0:
        res = empty(shape, dtype=_dt.default_index() if want_indices else x.dtype,
                    device=x.device)
    else:
        perm = _complex_argsort_rows(rows, descending)
        res = reshape(perm if want_indices else _take_rows(rows, perm), shape)
    return movedim(res, (x.ndim - 1,), (ax,))


# ---------------------------------------------------------------- sort, argsort
_CPU_KS = backend_key_for("cpu")
_sort_kernels: dict = {}  # dtype -> (the CPU sort stub kernel, its along_axis route or None)


def _cpu_sort_kernel(dtype):
    """(the CPU sort stub kernel of ``dtype``, its along_axis route or None), looked up once
    per dtype."""
    entry = _sort_kernels.get(dtype)
    if entry is None:
        kern = get_stub("sort").kernel_for("cpu", dtype)
        entry = _sort_kernels[dtype] = (kern, getattr(kern, "along_axis", None))
    return entry


def _sort_direct(x, axis, descending, want_indices):
    """The full path's work for a non-empty contiguous real CPU tensor: along any axis (an
    int) the device kernel's small-sort route (``along_axis``: a C-order result, no
    transposed copies), else along its last dim the C-order result allocated directly and
    the stub kernel called on x itself, without the axis / layout / allocation set-up. None
    for anything else (the full path serves it and raises what it raises)."""
    shape = x._shape
    if (not shape or type(axis) is not int or x._ks & BACKEND_MASK != _CPU_KS
            or not x._numel or not (x._contiguous or x.is_contiguous())):
        return None
    nd = len(shape)
    ax = axis + nd if axis < 0 else axis
    if not 0 <= ax < nd:
        return None
    dtype = x._dtype
    if dtype.kind == "c":
        return None
    kern, along_axis = _cpu_sort_kernel(dtype)
    res = along_axis(x, ax, bool(descending), want_indices) if along_axis is not None else None
    if res is not None or ax != nd - 1:
        return res
    if want_indices:
        res = new_dense_cpu(shape, _dt.default_index())
        if res is not None:
            kern(x, None, res, bool(descending))
    else:
        res = new_dense_cpu(shape, dtype)
        if res is not None:
            kern(x, res, None, bool(descending))
    return res


def _sort(op, x, axis, descending, want_indices):
    if type(x) is Tensor:
        res = _sort_direct(x, axis, descending, want_indices)
        if res is not None:
            return res
    _check(op, x)
    ax = normalize_axis(axis, x.ndim, op)
    if x.ndim == 0:
        return empty((), dtype=_dt.int64, device=x.device).fill_(0) if want_indices \
            else x.clone()
    if x.dtype.kind == "c":
        return _complex_sort(x, ax, descending, want_indices)
    # Rows along the last dim, contiguous (a copy unless x already is laid out so).
    last = x.ndim - 1
    rows = (x if ax == last else movedim(x, (ax,), (last,))).contiguous()
    if want_indices:
        res = empty(rows.shape, dtype=_dt.default_index(), device=x.device)
        args = (rows, None, res)
    else:
        res = empty(rows.shape, dtype=x.dtype, device=x.device)
        args = (rows, res, None)
    if res.numel():
        get_stub("sort").kernel_for(x.device.type, x.dtype)(*args, bool(descending))
    return res if ax == last else movedim(res, (last,), (ax,))


def sort(x, axis=-1, descending=False, stable=True):
    """Sorted copy of x along ``axis`` (always stable)."""
    return _sort("sort", x, axis, descending, False)


def argsort(x, axis=-1, descending=False, stable=True):
    """Indices (int64) that sort x along ``axis`` (always stable)."""
    return _sort("argsort", x, axis, descending, True)


# ---------------------------------------------------------------- searchsorted
def searchsorted(x1, x2, side="left", sorter=None):
    op = "searchsorted"
    _check(op, x1, "x1")
    _check(op, x2, "x2")
    if x1.ndim != 1:
        raise ValueError(f"{op}(): argument 'x1' must be 1-D, got shape {x1.shape}")
    if side not in ("left", "right"):
        raise ValueError(f"{op}(): argument 'side' must be 'left' or 'right', got {side!r}")
    if x1.device != x2.device:
        raise RuntimeError(f"{op}(): x1 is on '{x1.device}' but x2 on '{x2.device}'")
    if sorter is not None:
        if not isinstance(sorter, Tensor):
            raise TypeError(f"{op}(): argument 'sorter' must be a Tensor, got "
                            f"{type(sorter).__name__}")
        if sorter.ndim != 1 or sorter.shape != x1.shape:
            raise ValueError(f"{op}(): argument 'sorter' must be 1-D with the shape {x1.shape} "
                             f"of x1, got shape {sorter.shape}")
        if sorter.dtype.kind not in "iu":
            raise TypeError(f"{op}(): argument 'sorter' must have an integer dtype, got "
                            f"{sorter.dtype}")
        if sorter.numel():
            lo, hi = int(sorter.min().item()), int(sorter.max().item())
            if lo < 0 or hi >= x1.shape[0]:
                bad = lo if lo < 0 else hi
                raise IndexError(f"{op}(): argument 'sorter' holds index {bad}, out of range "
                                 f"for x1 of size {x1.shape[0]}")
        sorter = sorter.astype(_dt.int64, copy=False).contiguous()
    common = x1.dtype if x1.dtype is x2.dtype else _dt.result_type(x1, x2)
    # (the bindings' no-op calls skipped: ~3 us of a 1000-query search)
    a = x1 if x1.dtype is common else x1.astype(common)
    a = a if a.is_contiguous() else a.contiguous()
    b = x2 if x2.dtype is common else x2.astype(common)
    b = b if b.is_contiguous() else b.contiguous()
    out = empty(x2.shape, dtype=_dt.default_index(), device=x2.device)
    if out.numel():
        if a.numel() == 0:
            return out.fill_(0)
        if common.kind == "c":
            return _complex_searchsorted(a, b, sorter, side == "right")
        get_stub("searchsorted").kernel_for(x1.device.type, common)(a, b, sorter, out,
                                                                   side == "right")
    return out


def _complex_searchsorted(a, b, sorter, right):
    """Insertion points of b's values into the sorted a, for complex values: one stable sort of
    both (b's values ahead of a's for side='left', so an equal a element lands behind them, and
    after them for 'right'); each b value's answer is the number of a elements sorted before it.
    For a sorted x1 this is NumPy's binary search; it costs a sort of len(x1) + x2.size."""
    arange, cumulative_sum = _ops.arange, _ops.cumulative_sum
    greater_equal, less = _ops.greater_equal, _ops.less
    from .manipulation import concat, take
    if sorter is not None:
        a = take(a, sorter)
    n, m = a.shape[0], b.numel()
    flat_b = reshape(b, (m,))
    both = concat([a, flat_b] if right else [flat_b, a])
    perm = _complex_argsort_rows(reshape(both, (1, n + m)), False)[0]
    is_a = less(perm, n) if right else greater_equal(perm, m)
    before = cumulative_sum(is_a, dtype=_dt.default_index())  # a elements up to each position
    pos = empty((n + m,), dtype=_dt.default_index(), device=a.device)
    pos[perm] = arange(n + m, dtype=_dt.default_index(), device=a.device)
    return reshape(before[pos[n:] if right else pos[:m]], b.shape)


# ---------------------------------------------------------------- unique
def _unique(op, x, counts=False, index=False, inverse=False):
    """Sorted unique values plus what is asked for, from a stable argsort of the flat input."""
    _check(op, x)
    cumulative_sum, not_equal, subtract = _ops.cumulative_sum, _ops.not_equal, _ops.subtract
    flat = reshape(x, (-1,))
    n = flat.numel()
    dev = x.device
    idx_dt = _dt.default_index()
    if n == 0:
        e = empty((0,), dtype=idx_dt, device=dev)
        return flat.clone(), e, empty(x.shape, dtype=idx_dt, device=dev), e
    values_only = not (counts or index or inverse)
    if values_only:
        # A value sort is bit for bit flat[argsort(flat)] (stable), needs no permutation
        # and shares its kernels with sort()
        s = sort(flat)
        if type(s) is Tensor and s._ks & BACKEND_MASK == _CPU_KS:
            # the CPU sort kernel's route for the runs' first elements, where it has one
            distinct = getattr(_cpu_sort_kernel(s._dtype)[0], "distinct", None)
            values = distinct(s) if distinct is not None else None
            if values is not None:
                return values, None, None, None
    else:
        perm = argsort(flat)
        s = flat[perm]
    # run starts in sorted order: nan != nan gives each nan its own run, -0.0 == 0.0 one run
    if dev.type == "cpu":
        # host memory with flags[0] set (a scalar write would compile a fill kernel of its
        # own on a first call)
        from .creation import asarray
        host = np.empty(n, np.bool_)
        host[0] = True
        flags = asarray(host)
    else:
        flags = empty((n,), dtype=_dt.bool_, device=dev)
        flags[0] = True
    if n > 1:  # a complex value with a nan part is != everything: distinct, as a real nan
        not_equal(s[1:], s[:-1], out=flags[1:])
    if values_only:
        return s[flags], None, None, None  # (the mask kernels x[mask] uses)
    # clone: the CPU gather kernel currently walks the index tensor's whole storage, and
    # nonzero's result is a view into a larger buffer
    starts = flags.nonzero()[0].clone()
    values = s[starts]
    res_counts = res_index = res_inverse = None
    if counts:
        ends = empty(starts.shape, dtype=idx_dt, device=dev)
        ends[:-1] = starts[1:]
        ends[-1] = n
        res_counts = subtract(ends, starts)
    if index:
        res_index = perm[starts]
    if inverse:
        run = cumulative_sum(flags, dtype=idx_dt)
        inv = empty((n,), dtype=idx_dt, device=dev)
        inv[perm] = subtract(run, 1)
        res_inverse = reshape(inv, x.shape)
    return values, res_index, res_inverse, res_counts


def unique_values(x):
    return _unique("unique_values", x)[0]


def unique_counts(x):
    v, _, _, c = _unique("unique_counts", x, counts=True)
    return UniqueCountsResult(v, c)


def unique_inverse(x):
    v, _, inv, _ = _unique("unique_inverse", x, inverse=True)
    return UniqueInverseResult(v, inv)


def unique_all(x):
    v, i, inv, c = _unique("unique_all", x, counts=True, index=True, inverse=True)
    return UniqueAllResult(v, i, inv, c)
