"""Sorting and searching, device-generic: sort / argsort (the ``sort`` stub sorts the rows of a
contiguous tensor), searchsorted (the ``searchsorted`` stub), and count_nonzero and the
unique_* family composed from argsort, comparisons, nonzero and indexing.

Order (Array API leaves nan and signed zeros to the implementation): ascending sorts put every
nan last, as NumPy does; -0.0 and +0.0 compare equal (a stable sort keeps their input order);
``descending=True`` is the exact reverse order (nan first) with equal elements still in input
order. searchsorted uses the same order. The unique_* functions treat each nan as distinct
(nan != nan) and -0.0 == +0.0, and return sorted values; ``indices`` are first occurrences.
Complex inputs are rejected (complex numbers are not ordered).
"""
from __future__ import annotations

from collections import namedtuple

from .. import dtypes as _dt
from ..dispatch.stub import get_stub
from ..factories import empty
from ..tensor import Tensor
from .views import movedim, normalize_axis, reshape

__all__ = ["sort", "argsort", "searchsorted", "count_nonzero", "unique_values",
           "unique_counts", "unique_inverse", "unique_all", "UniqueAllResult",
           "UniqueCountsResult", "UniqueInverseResult"]

UniqueAllResult = namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices",
                                                 "counts"])
UniqueCountsResult = namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def _check(op, x, arg="x"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{arg}' must be a Tensor, got {type(x).__name__}")
    if x.dtype.kind == "c":
        raise TypeError(f"{op}(): argument '{arg}' has dtype {x.dtype}, but complex numbers "
                        f"are not ordered")


# ---------------------------------------------------------------- sort, argsort
def _sort(op, x, axis, descending, want_indices):
    _check(op, x)
    ax = normalize_axis(axis, x.ndim, op)
    if x.ndim == 0:
        return empty((), dtype=_dt.int64, device=x.device).fill_(0) if want_indices \
            else x.clone()
    # Rows along the last dim, contiguous (a copy unless x already is laid out so).
    rows = movedim(x, (ax,), (x.ndim - 1,)).contiguous()
    if want_indices:
        res = empty(rows.shape, dtype=_dt.default_index(), device=x.device)
        args = (rows, None, res)
    else:
        res = empty(rows.shape, dtype=x.dtype, device=x.device)
        args = (rows, res, None)
    if res.numel():
        get_stub("sort").kernel_for(x.device.type, x.dtype)(*args, bool(descending))
    return movedim(res, (x.ndim - 1,), (ax,))


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
    common = _dt.result_type(x1, x2)
    a = x1.astype(common, copy=False).contiguous()
    b = x2.astype(common, copy=False).contiguous()
    out = empty(x2.shape, dtype=_dt.default_index(), device=x2.device)
    if out.numel():
        if a.numel() == 0:
            return out.fill_(0)
        get_stub("searchsorted").kernel_for(x1.device.type, common)(a, b, sorter, out,
                                                                   side == "right")
    return out


# ---------------------------------------------------------------- count_nonzero
def count_nonzero(x, axis=None, keepdims=False):
    from .. import not_equal, sum as _sum
    if not isinstance(x, Tensor):
        raise TypeError(f"count_nonzero(): argument 'x' must be a Tensor, got "
                        f"{type(x).__name__}")
    return _sum(not_equal(x, 0), axis, keepdims, dtype=_dt.default_int())


# ---------------------------------------------------------------- unique
def _unique(op, x, counts=False, index=False, inverse=False):
    """Sorted unique values plus what is asked for, from a stable argsort of the flat input."""
    _check(op, x)
    from .. import cumulative_sum, not_equal, subtract
    flat = reshape(x, (-1,))
    n = flat.numel()
    dev = x.device
    idx_dt = _dt.default_index()
    if n == 0:
        e = empty((0,), dtype=idx_dt, device=dev)
        return flat.clone(), e, empty(x.shape, dtype=idx_dt, device=dev), e
    perm = argsort(flat)
    s = flat[perm]
    # run starts in sorted order: nan != nan gives each nan its own run, -0.0 == 0.0 one run
    flags = empty((n,), dtype=_dt.bool_, device=dev)
    flags[0] = True
    if n > 1:
        not_equal(s[1:], s[:-1], out=flags[1:])
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
