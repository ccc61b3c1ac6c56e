"""Shape and stride arithmetic on plain tuples (base layer: imports nothing from tensorlib).

Everything here works on ``shape`` / ``strides`` sequences of ints (strides in elements), never on
Tensors, so every layer can use it: the Tensor (contiguity), the TensorIterator (broadcasting,
loop coalescing), the view ops (axes, reshape), factories and transfers (dense layouts).

* ``normalize_axis`` / ``normalize_axes``: a possibly negative axis into ``[0, ndim)``; a 0-d
  tensor accepts axis 0 / -1 (NumPy's ``normalize_axis_index`` with that one extension).
* ``infer_shape``: one ``-1`` resolved against an element count (view / reshape / unflatten).
* ``broadcast_shapes``: NumPy's rules (``np.broadcast_shapes``); ``broadcast_strides``: a
  tensor's strides seen with a broadcast shape (0 where broadcast).
* ``contiguous_strides`` (C order), ``is_contiguous`` (C order, size-1 dims free, empty = yes),
  ``view_strides`` (strides viewing one shape as another without a copy, or None).
* ``is_dense``: the elements fill a gap-free block of exactly numel slots in some dim order.
* ``span``: the element range a layout touches; ``coalesce``: merging loop dims.
"""
from __future__ import annotations

import math

__all__ = ["normalize_axis", "normalize_axes", "infer_shape", "broadcast_shapes",
           "broadcast_strides", "contiguous_strides", "is_contiguous", "is_dense", "view_strides",
           "span", "coalesce"]


# ---- axes ---------------------------------------------------------------------------------------
def normalize_axis(axis: int, ndim: int, op: str, arg: str = "axis") -> int:
    """Maps a possibly negative axis into [0, ndim); IndexError names the op and the value."""
    if not -max(ndim, 1) <= axis < max(ndim, 1) or (ndim == 0 and axis not in (0, -1)):
        raise IndexError(f"{op}(): argument '{arg}' = {axis} is out of range for a tensor of "
                         f"{ndim} dimension{'s' if ndim != 1 else ''}")
    if ndim == 0:
        return 0  # a 0-d tensor accepts axis 0 / -1 as "the whole scalar"
    return axis + ndim if axis < 0 else axis


def normalize_axes(axes, ndim: int, op: str, arg: str = "axis") -> tuple:
    """``normalize_axis`` of each; ValueError on a repeated axis (after normalization)."""
    out = tuple(axes)
    for a in out:  # the common case (in-range non-negative ints) allocates nothing more
        if type(a) is not int or not 0 <= a < ndim:
            out = tuple([normalize_axis(a, ndim, op, arg) for a in out])
            break
    if len(set(out)) != len(out):
        raise ValueError(f"{op}(): argument '{arg}' has duplicate axes: {tuple(axes)}")
    return out


# ---- shapes -------------------------------------------------------------------------------------
def infer_shape(shape, numel: int, op: str) -> tuple:
    """Resolves one -1 in ``shape`` so that it holds ``numel`` elements."""
    shape = tuple(shape)
    unknown = [i for i, n in enumerate(shape) if n == -1]
    if len(unknown) > 1:
        raise ValueError(f"{op}(): only one dimension can be -1, got shape {shape}")
    bad = [n for n in shape if n < -1]
    if bad:
        raise ValueError(f"{op}(): invalid negative size {bad[0]} in shape {shape}")
    known = math.prod(n for n in shape if n != -1)
    if unknown:
        if known == 0 or numel % known:
            raise ValueError(f"{op}(): shape {shape} is invalid for a tensor of {numel} elements")
        i = unknown[0]
        shape = shape[:i] + (numel // known,) + shape[i + 1:]
    elif known != numel:
        raise ValueError(f"{op}(): shape {shape} is invalid for a tensor of {numel} elements")
    return shape


def broadcast_shapes(*shapes, op: str = "broadcast_shapes") -> tuple:
    """The broadcast of ``shapes`` (NumPy's rules: right-aligned, size 1 stretches, size 0 only
    meets 0 or 1); ValueError naming the op and every shape."""
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, n in enumerate(s, ndim - len(s)):
            if n == out[i] or n == 1:
                continue
            if out[i] == 1:
                out[i] = n
            else:
                raise ValueError(f"{op}(): shapes {' and '.join(str(tuple(x)) for x in shapes)} "
                                 f"cannot be broadcast together")
    return tuple(out)


def broadcast_strides(shape, strides, ndim: int) -> list:
    """``strides`` of a tensor of ``shape`` seen with a broadcast shape of ``ndim`` dims: 0 for
    the new leading dims and for size-1 dims (the caller checked the shapes broadcast)."""
    out = [0] * (ndim - len(shape))
    for n, s in zip(shape, strides):
        out.append(0 if n == 1 else s)
    return out


# ---- strides ------------------------------------------------------------------------------------
def contiguous_strides(shape) -> tuple:
    """C-order strides (a size-0 dim counts as 1, as PyTorch's and NumPy's do). Remembered per
    shape tuple: every new dense tensor asks (working them out was ~0.4 us of a 2-D
    ``tl.empty``'s ~2.8)."""
    if type(shape) is tuple:
        strides = _c_strides.get(shape)
        if strides is None:
            if len(_c_strides) >= 1024:
                _c_strides.clear()
            strides = _c_strides[shape] = _c_order(shape)
        return strides
    return _c_order(shape)


_c_strides: dict = {}  # shape -> contiguous_strides(shape)


def _c_order(shape) -> tuple:
    strides = []
    acc = 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def is_contiguous(shape, strides) -> bool:
    """C-contiguous: the strides of the dims of size > 1 are the C-order ones (size-1 dims may
    have any stride); a layout without elements always is."""
    expected = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n == 1:
            continue
        if s != expected:
            return n == 0 or 0 in shape
        expected *= n
    return True


def is_dense(shape, strides, allow_negative: bool = True) -> bool:
    """True when the elements fill a gap-free block of exactly numel slots: the strides of the
    dims of size > 1 are, in some order, C-order strides of those dims (PyTorch's
    ``is_non_overlapping_and_dense``, in any dim order).

    Size-1 dims are ignored (any stride); a layout with no elements (a size-0 dim) is dense, as
    is one with a single element; a zero stride on a dim of size > 1 is not (elements repeat).
    ``allow_negative``: a negative stride counts by its magnitude (a flipped dense tensor is
    still one block, starting below its first element); False requires every stride of a dim
    of size > 1 to be positive, i.e. the block starts at the first element (what a ``memcpy``
    of ``numel`` items from the data pointer needs).
    """
    if 0 in shape:
        return True
    if allow_negative:
        dims = sorted((abs(s), n) for n, s in zip(shape, strides) if n != 1)
    else:
        dims = sorted((s, n) for n, s in zip(shape, strides) if n != 1)
    expected = 1
    for s, n in dims:
        if s != expected:
            return False
        expected *= n
    return True


def view_strides(old_shape, old_strides, new_shape):
    """Strides that view ``old`` as ``new_shape`` without copying, or None when impossible.

    Walks groups of old dims that are contiguous with each other ("chunks"); each chunk must map
    onto a run of new dims holding the same number of elements.
    """
    if math.prod(old_shape) <= 1 or not old_shape:
        return contiguous_strides(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_stride = old_strides[-1]
    tensor_numel = 1
    view_numel = 1
    for d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[d]
        chunk_ends = d == 0 or (old_shape[d - 1] != 1
                                and old_strides[d - 1] != tensor_numel * chunk_stride)
        if chunk_ends:
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                chunk_stride = old_strides[d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)


def span(shape, strides, offset: int = 0) -> tuple:
    """(first, end): the element range ``[first, end)`` in storage that holds every element of a
    layout starting at ``offset`` (a non-empty one: the caller checks numel)."""
    lo = hi = offset
    for n, s in zip(shape, strides):
        if s > 0:
            hi += (n - 1) * s
        else:
            lo += (n - 1) * s
    return lo, hi + 1


# ---- loops --------------------------------------------------------------------------------------
def coalesce(shape, strides):
    """Merges loop dims: ``shape`` lists sizes innermost first and ``strides`` one sequence per
    operand in the same order; dim j+1 is merged into dim j when, for every operand, stepping it
    is the same as stepping j through its whole size (``s[j+1] == s[j] * shape[j]``), so the
    flat iteration order is unchanged. Callers drop size-1 dims first. Returns (shape tuple, one
    strides tuple per operand); no dims gives ``(1,)`` with stride 0 (a single element)."""
    if not shape:
        return (1,), tuple((0,) for _ in strides)
    cshape = [shape[0]]
    cstr = [[s[0]] for s in strides]
    for j in range(1, len(shape)):
        n = shape[j]
        if all(s[j] == c[-1] * cshape[-1] for s, c in zip(strides, cstr)):
            cshape[-1] *= n
        else:
            cshape.append(n)
            for s, c in zip(strides, cstr):
                c.append(s[j])
    return tuple(cshape), tuple(tuple(c) for c in cstr)
