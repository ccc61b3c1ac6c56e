"""View ops: new shape/strides/offset over the same storage, no data movement.

Each is registered (from ops.yaml) as a CompositeExplicit kernel, so it runs for every backend.
"""
from __future__ import annotations

import math

from ..shape import broadcast_shapes, contiguous_strides, infer_shape, normalize_axes, \
    normalize_axis, span, view_strides as _view_strides
from ..tensor import Tensor

# normalize_axis, normalize_axes, infer_shape and broadcast_shapes live in tensorlib.shape (the
# base layer) and are re-exported here for the ops and kernels that import them from views.
__all__ = ["normalize_axis", "normalize_axes", "infer_shape", "view", "reshape", "transpose",
           "permute", "expand", "broadcast_to", "squeeze", "unsqueeze", "flatten", "unflatten",
           "narrow", "select", "diagonal", "unbind", "split", "chunk", "as_strided",
           "broadcast_shapes", "movedim"]


def view(self: Tensor, shape) -> Tensor:
    shape = infer_shape(shape, self._numel, "view")
    strides = _view_strides(self._shape, self._strides, shape)
    if strides is None:
        raise RuntimeError(f"view(): shape {shape} is not compatible with the input's shape "
                           f"{self._shape} and strides {self._strides}; use reshape() instead")
    return self._view(shape, strides, self._offset)


# Small-call caches of the views' checked geometry: (input shape, strides, requested shape) ->
# (shape, strides) of reshape's view, (axes, ndim) -> permute's normalized axes. Only what the
# full path accepted (as a view) is stored, so errors are always raised by it.
_reshapes: dict = {}
_perms: dict = {}
_MAX_CACHED = 2048


def _all_ints(seq):
    for v in seq:
        if type(v) is not int:
            return False
    return True


def reshape(self: Tensor, shape, copy=None) -> Tensor:
    """A view when the strides allow one, else a copy; ``copy=True`` always copies,
    ``copy=False`` never does (ValueError where a view is impossible), as the Array API says."""
    key = None
    if copy is None and type(shape) is tuple:
        key = (self._shape, self._strides, shape)
        hit = _reshapes.get(key)
        if hit is not None:
            return Tensor._make(self._storage, hit[0], hit[1], self._offset, self._dtype)
    req = shape
    shape = infer_shape(shape, self._numel, "reshape")
    strides = None if copy else _view_strides(self._shape, self._strides, shape)
    if key is not None and strides is not None and _all_ints(req):
        if len(_reshapes) >= _MAX_CACHED:
            _reshapes.clear()
        _reshapes[key] = (shape, tuple(strides))
    if strides is None:
        if copy is False:
            raise ValueError(f"reshape(): argument 'copy' is False, but a tensor of shape "
                             f"{self._shape} and strides {self._strides} cannot be viewed as "
                             f"shape {shape} without a copy")
        src = self.contiguous()
        if copy and src._storage is self._storage:  # already contiguous: copy it anyway
            src = src.clone()
        return src._view(shape, contiguous_strides(shape), src._offset)
    return self._view(shape, strides, self._offset)


def transpose(self: Tensor, dim0: int, dim1: int) -> Tensor:
    n = self.ndim
    if n == 0:
        normalize_axis(dim0, 0, "transpose", "dim0")
        normalize_axis(dim1, 0, "transpose", "dim1")
        return self._view((), (), self._offset)
    a = normalize_axis(dim0, n, "transpose", "dim0")
    b = normalize_axis(dim1, n, "transpose", "dim1")
    shape, strides = list(self._shape), list(self._strides)
    shape[a], shape[b] = shape[b], shape[a]
    strides[a], strides[b] = strides[b], strides[a]
    return self._view(shape, strides, self._offset)


def permute(self: Tensor, axes) -> Tensor:
    shape, strides = self._shape, self._strides
    key = (axes, len(shape)) if type(axes) is tuple else None
    p = _perms.get(key) if key is not None else None
    if p is None:
        p = tuple(axes)
        if len(p) != self.ndim:
            raise ValueError(f"permute(): argument 'axes' {p} must name each of the tensor's "
                             f"{self.ndim} dimensions once")
        p = normalize_axes(p, self.ndim, "permute", "axes")
        if key is not None and _all_ints(axes):
            if len(_perms) >= _MAX_CACHED:
                _perms.clear()
            _perms[key] = p
    return Tensor._make(self._storage, tuple([shape[a] for a in p]),
                        tuple([strides[a] for a in p]), self._offset, self._dtype)


def movedim(self: Tensor, source, destination) -> Tensor:
    src = normalize_axes(source, self.ndim, "moveaxis", "source")
    dst = normalize_axes(destination, self.ndim, "moveaxis", "destination")
    if len(src) != len(dst):
        raise ValueError(f"moveaxis(): 'source' {tuple(source)} and 'destination' "
                         f"{tuple(destination)} must have the same number of axes")
    order = [d for d in range(self.ndim) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(self, order)


def expand(self: Tensor, shape) -> Tensor:
    shape = tuple(shape)
    n = len(shape)
    if n < self.ndim:
        raise ValueError(f"expand(): target shape {shape} has fewer dimensions than the "
                         f"tensor's shape {self._shape}")
    lead = n - self.ndim
    out_shape, out_strides = [], []
    for i, want in enumerate(shape):
        have = self._shape[i - lead] if i >= lead else 1
        stride = self._strides[i - lead] if i >= lead else 0
        if want == -1:
            if i < lead:
                raise ValueError(f"expand(): -1 is not allowed for the new leading dimension "
                                 f"{i} in {shape}")
            want = have
        elif want < 0:
            raise ValueError(f"expand(): invalid size {want} in shape {shape}")
        if have != want:
            if have != 1:
                raise ValueError(f"expand(): shape {self._shape} cannot be broadcast to {shape}")
            stride = 0
        out_shape.append(want)
        out_strides.append(stride)
    return self._view(out_shape, out_strides, self._offset)


def broadcast_to(self: Tensor, shape) -> Tensor:
    shape = tuple(shape)
    if any(n < 0 for n in shape):
        raise ValueError(f"broadcast_to(): invalid negative size in shape {shape}")
    if broadcast_shapes(self._shape, shape, op="broadcast_to") != shape:
        raise ValueError(f"broadcast_to(): shape {self._shape} cannot be broadcast to {shape}")
    return expand(self, shape)


def squeeze(self: Tensor, axis=None) -> Tensor:
    if axis is None:
        keep = [d for d in range(self.ndim) if self._shape[d] != 1]
    else:
        axes = normalize_axes(axis, self.ndim, "squeeze")
        for a in axes:
            if self._shape[a] != 1:
                raise ValueError(f"squeeze(): cannot squeeze axis {a} of size "
                                 f"{self._shape[a]} (shape {self._shape})")
        keep = [d for d in range(self.ndim) if d not in axes]
    return self._view([self._shape[d] for d in keep], [self._strides[d] for d in keep],
                      self._offset)


def unsqueeze(self: Tensor, axis: int) -> Tensor:
    a = normalize_axis(axis, self.ndim + 1, "unsqueeze")
    stride = self._strides[a] * self._shape[a] if a < self.ndim else 1
    return self._view(self._shape[:a] + (1,) + self._shape[a:],
                      self._strides[:a] + (stride,) + self._strides[a:], self._offset)


def flatten(self: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    if self.ndim == 0:
        return reshape(self, (1,))
    s = normalize_axis(start_dim, self.ndim, "flatten", "start_dim")
    e = normalize_axis(end_dim, self.ndim, "flatten", "end_dim")
    if s > e:
        raise ValueError(f"flatten(): start_dim {start_dim} comes after end_dim {end_dim}")
    shape = self._shape[:s] + (math.prod(self._shape[s:e + 1]),) + self._shape[e + 1:]
    return reshape(self, shape)


def unflatten(self: Tensor, dim: int, sizes) -> Tensor:
    d = normalize_axis(dim, self.ndim, "unflatten", "dim")
    sizes = infer_shape(sizes, self._shape[d], "unflatten")
    return view(self, self._shape[:d] + sizes + self._shape[d + 1:])


def narrow(self: Tensor, dim: int, start: int, length: int) -> Tensor:
    d = normalize_axis(dim, self.ndim, "narrow", "dim")
    size = self._shape[d]
    if start < 0:
        start += size
    if not 0 <= start <= size or length < 0 or start + length > size:
        raise IndexError(f"narrow(): start {start} and length {length} are out of range for "
                         f"dimension {d} of size {size}")
    shape = list(self._shape)
    shape[d] = length
    return self._view(shape, self._strides, self._offset + start * self._strides[d])


def select(self: Tensor, dim: int, index: int) -> Tensor:
    d = normalize_axis(dim, self.ndim, "select", "dim")
    size = self._shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} is out of range for dimension {d} of size "
                         f"{size}")
    if index < 0:
        index += size
    return self._view(self._shape[:d] + self._shape[d + 1:],
                      self._strides[:d] + self._strides[d + 1:],
                      self._offset + index * self._strides[d])


def diagonal(self: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    a = normalize_axis(dim1, self.ndim, "diagonal", "dim1")
    b = normalize_axis(dim2, self.ndim, "diagonal", "dim2")
    if a == b:
        raise ValueError(f"diagonal(): dim1 and dim2 must differ, both are {a}")
    start = self._offset
    if offset >= 0:
        n = max(min(self._shape[a], self._shape[b] - offset), 0)
        if n:
            start += offset * self._strides[b]
    else:
        n = max(min(self._shape[a] + offset, self._shape[b]), 0)
        if n:
            start -= offset * self._strides[a]
    keep = [d for d in range(self.ndim) if d not in (a, b)]
    return self._view([self._shape[d] for d in keep] + [n],
                      [self._strides[d] for d in keep] + [self._strides[a] + self._strides[b]],
                      start)


def unbind(self: Tensor, dim: int = 0) -> tuple:
    d = normalize_axis(dim, self.ndim, "unbind", "dim")
    return tuple(select(self, d, i) for i in range(self._shape[d]))


def split(self: Tensor, split_size_or_sections, dim: int = 0) -> tuple:
    d = normalize_axis(dim, self.ndim, "split", "dim")
    size = self._shape[d]
    sizes = tuple(split_size_or_sections)
    if len(sizes) == 1 and sizes[0] != size:
        step = sizes[0]
        if step <= 0:
            raise ValueError(f"split(): split_size must be positive, got {step}")
        sizes = tuple(min(step, size - i) for i in range(0, size, step)) or (0,)
    if any(s < 0 for s in sizes) or sum(sizes) != size:
        raise ValueError(f"split(): sections {sizes} do not sum to dimension {d}'s size {size}")
    out, start = [], 0
    for s in sizes:
        out.append(narrow(self, d, start, s))
        start += s
    return tuple(out)


def chunk(self: Tensor, chunks: int, dim: int = 0) -> tuple:
    if chunks <= 0:
        raise ValueError(f"chunk(): argument 'chunks' must be positive, got {chunks}")
    d = normalize_axis(dim, self.ndim, "chunk", "dim")
    step = max(-(-self._shape[d] // chunks), 1)
    return split(self, (step,), d) if self._shape[d] != step else (narrow(self, d, 0, step),)


def as_strided(self: Tensor, size, stride, storage_offset=None) -> Tensor:
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise ValueError(f"as_strided(): size {size} and stride {stride} differ in length")
    if any(n < 0 for n in size):
        raise ValueError(f"as_strided(): negative size in {size}")
    offset = self._offset if storage_offset is None else storage_offset
    if offset < 0:
        raise ValueError(f"as_strided(): negative storage_offset {offset}")
    if math.prod(size):
        lo, hi = span(size, stride, offset)
        hi -= 1
        capacity = self._storage.nbytes // self._dtype.itemsize
        if lo < 0 or hi >= capacity:
            raise ValueError(f"as_strided(): size {size}, stride {stride} and offset {offset} "
                             f"reach element {lo if lo < 0 else hi}, outside the storage of "
                             f"{capacity} elements")
    return self._view(size, stride, offset)
