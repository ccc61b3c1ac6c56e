"""The matmul family: matmul (and mm, bmm, vecdot, tensordot built on it), matrix_transpose.
(The public ``tl.linalg`` namespace is ``tensorlib/linalg.py``, built on these and other ops.)

Device-generic part: shape rules (NumPy / Array API matmul), dtype promotion, output
allocation and ``out=`` checks. The per-device work goes through the ``matmul`` DispatchStub,
whose kernels take a (..., M, K), b (..., K, N), out (..., M, N) with identical batch dims (zero
strides where broadcast), one dtype, and an out that overlaps neither input.
"""
from __future__ import annotations

import math

from .. import dtypes as _dt
from ..iterator import has_internal_overlap, memory_overlap
from ..dispatch.stub import get_stub
from ..allocation import empty
from ..shape import broadcast_shapes, contiguous_strides, normalize_axes
from ..tensor import Tensor
from .views import expand, permute, reshape, transpose, view

__all__ = ["matmul", "mm", "bmm", "vecdot", "tensordot", "matrix_transpose"]

_stub = get_stub("matmul")
_direct: dict = {}  # (device type, route name) -> the kernel's direct route (None: none)


def _common_device(op, a, b):
    if a.device != b.device:
        raise RuntimeError(f"{op}(): expected both tensors on one device, got '{a.device}' and "
                           f"'{b.device}'")
    return a.device


def _output(op, out, result_shape, dtype, device, inputs):
    """(tensor returned, dense tensor the kernel writes, whether to copy the second into the
    first afterwards)."""
    if out is None:
        t = empty(result_shape, dtype=dtype, device=device)
        return t, t, False
    if out.shape != result_shape:
        raise ValueError(f"{op}(): argument 'out' has shape {out.shape}, but the result has "
                         f"shape {result_shape}")
    if out.device != device:
        raise RuntimeError(f"{op}(): argument 'out' is on '{out.device}', the inputs on "
                           f"'{device}'")
    if out.dtype is not dtype and not _dt.can_cast(dtype, out.dtype, "same_kind"):
        raise TypeError(f"{op}(): result type {dtype} can't be cast to the output dtype "
                        f"{out.dtype}")
    if has_internal_overlap(out):
        raise RuntimeError(f"{op}(): argument 'out' (shape {out.shape}, strides {out.stride()}) "
                           f"has elements that share memory")
    # The kernels want a dense out of the compute dtype that no input reads from (a @= b
    # reads a while writing it); otherwise compute into a temporary and copy.
    if (out.dtype is dtype and out.is_contiguous()
            and all(memory_overlap(out, x) == "none" for x in inputs)):
        return out, out, False
    return out, empty(result_shape, dtype=dtype, device=device), True


def _fold_batch(a, b, w):
    """When every batch shares one b matrix, (batch..., M, K) @ (K, N) is a single
    (batch*M, K) @ (K, N) product: one big GEMM instead of many small ones."""
    nbd = w.ndim - 2
    if nbd == 0 or any(s != 0 for s in b._strides[:nbd]) or any(s == 0 for s in a._strides[:nbd]):
        return a, b, w
    rows = math.prod(w.shape[:-1])
    try:
        a2 = view(a, (rows, a._shape[-1]))
    except RuntimeError:  # a's batch and row dims don't collapse into one: keep the batches
        return a, b, w
    w2 = w._view((rows, w.shape[-1]), (w._strides[-2], w._strides[-1]), w._offset)
    b2 = b._view(b.shape[-2:], b._strides[-2:], b._offset)
    return a2, b2, w2


def _run(op, x1, x2, a, b, batch, result_shape, out, conj_a=False):
    """out (result_shape) = a (..., M, K) @ b (..., K, N) over the broadcast ``batch`` dims;
    x1 and x2 are the caller's original tensors (for overlap checks)."""
    device = _common_device(op, x1, x2)
    dtype = _dt.result_type(x1._dtype, x2._dtype)
    res, work, copy_back = _output(op, out, result_shape, dtype, device, (x1, x2))
    if not work._numel:
        return res
    full = batch + (a._shape[-2], b._shape[-1])
    # work is dense, so its elements in C order also make the (batch, M, N) view.
    w = work._view(full, contiguous_strides(full), work._offset)
    if a._shape[-1] == 0:
        w.fill_(0)  # empty sums
    else:
        if a._dtype is not dtype:
            a = a.astype(dtype)
        if b._dtype is not dtype:
            b = b.astype(dtype)
        if a._shape[:-2] != batch:
            a = expand(a, batch + a._shape[-2:])
        if b._shape[:-2] != batch:
            b = expand(b, batch + b._shape[-2:])
        if batch:
            a, b, w = _fold_batch(a, b, w)
        _stub.kernel_for(device.type, dtype)(a, b, w, conj_a)
    if copy_back:
        res.copy_(work)
    return res


def _check_tensors(op, x1, x2):
    for name, x in (("self", x1), ("other", x2)):
        if x.ndim == 0:
            raise ValueError(f"{op}(): 0-d operands are not supported (argument '{name}'), got "
                             f"shapes {x1.shape} and {x2.shape}")


def _batch(op, a, b, x1, x2):
    try:
        return broadcast_shapes(a.shape[:-2], b.shape[:-2], op=op)
    except ValueError:
        raise ValueError(f"{op}(): batch dimensions of shapes {x1.shape} and {x2.shape} cannot "
                         f"be broadcast together") from None


def mm_2d(x1, x2, bias=None):
    """x1 (M, K) @ x2 (K, N) [+ bias (N,)] for 2-D tensors of one dtype on one device through
    the device kernel's direct route (``new_matmul``: no broadcasting, promotion or out=
    set-up; a bias added into the fresh product), or None when that route does not serve the
    call (matmul's general path, and autograd formulas whose backward is not recorded, call
    it)."""
    if len(x1._shape) != 2 or len(x2._shape) != 2:
        return None
    direct = _direct_route("new_matmul", x1, x2)
    if direct is None:
        return None
    return direct(x1, x2) if bias is None else direct(x1, x2, bias)


def _direct_route(name, x1, x2):
    """The device kernel's direct route ``name`` (``new_matmul`` / ``new_dot``) for x1 and x2
    when they share a dtype and a device and the kernel has one, else None."""
    if x1._dtype is not x2._dtype:
        return None
    device = x1._storage.device
    if device is not x2._storage.device and device != x2._storage.device:
        return None
    key = (device.type, name)
    direct = _direct.get(key, False)
    if direct is False:
        direct = _direct[key] = getattr(_stub.kernel_for(device.type, x1._dtype), name, None)
    return direct


def transposed_2d(t):
    """A 2-D tensor's transpose as a plain view (no dispatch: what matrix_transpose's kernel
    gives, for callers already below the keys, such as a backward or a Function's forward)."""
    return t._view((t._shape[1], t._shape[0]), (t._strides[1], t._strides[0]), t._offset)


def linear_2d(x, w, bias=None):
    """x (M, K) @ w.T + bias through ``mm_2d`` with w viewed transposed (no copy), for 2-D w;
    None when that route does not serve the call (the caller then composes matmul and add)."""
    return mm_2d(x, transposed_2d(w), bias) if len(w._shape) == 2 else None


def vector_dot(x1, x2):
    """x1 . x2 of two 1-D tensors through the device kernel's direct dot (``new_dot``: no
    matmul set-up; on the CPU NumPy's dot, BLAS's for floats); None where that route does not
    serve the call (mixed dtypes or devices, K = 0, differing lengths: the general path
    raises for those or fills the empty sum)."""
    direct = _direct_route("new_dot", x1, x2)
    return None if direct is None else direct(x1, x2)


def _matmul(op, x1, x2, out):
    if out is None:
        one_d = len(x1._shape) == 1 and len(x2._shape) == 1
        res = vector_dot(x1, x2) if one_d else mm_2d(x1, x2)
        if res is not None:
            return res
    _check_tensors(op, x1, x2)
    # 1-D operands: a vector on the left is a 1 x K row, on the right a K x 1 column; that
    # dimension is dropped from the result again.
    a = x1 if x1.ndim >= 2 else x1._view((1,) + x1.shape, (0,) + x1._strides, x1._offset)
    b = x2 if x2.ndim >= 2 else x2._view(x2.shape + (1,), x2._strides + (0,), x2._offset)
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"{op}(): contraction dimensions differ: shapes {x1.shape} and "
                         f"{x2.shape} ({a.shape[-1]} != {b.shape[-2]})")
    batch = _batch(op, a, b, x1, x2)
    result_shape = (batch + ((a.shape[-2],) if x1.ndim >= 2 else ())
                    + ((b.shape[-1],) if x2.ndim >= 2 else ()))
    return _run(op, x1, x2, a, b, batch, result_shape, out)


def matmul(self: Tensor, other: Tensor, out=None) -> Tensor:
    """NumPy / Array API matmul; structured kernel for matmul, matmul.out and matmul_ (out=self,
    valid only when the result keeps self's shape)."""
    return _matmul("matmul", self, other, out)


def mm(self: Tensor, mat2: Tensor, out=None) -> Tensor:
    for name, x in (("self", self), ("mat2", mat2)):
        if x.ndim != 2:
            raise ValueError(f"mm(): argument '{name}' must be 2-D, got shape {x.shape}")
    return _matmul("mm", self, mat2, out)


def bmm(self: Tensor, mat2: Tensor, out=None) -> Tensor:
    for name, x in (("self", self), ("mat2", mat2)):
        if x.ndim != 3:
            raise ValueError(f"bmm(): argument '{name}' must be 3-D, got shape {x.shape}")
    if self.shape[0] != mat2.shape[0]:
        raise ValueError(f"bmm(): batch sizes differ: shapes {self.shape} and {mat2.shape}")
    return _matmul("bmm", self, mat2, out)


def vecdot(self: Tensor, other: Tensor, axis: int = -1, out=None) -> Tensor:
    """sum(conj(self) * other) over ``axis``; the other dims broadcast. A negative axis counts
    from the end (Array API); a non-negative one indexes the broadcast shape."""
    op = "vecdot"
    if (out is None and len(self._shape) == 1 and len(other._shape) == 1
            and self._dtype.kind != "c" and axis in (0, -1)):
        res = vector_dot(self, other)  # (conj is the identity on real vectors)
        if res is not None:
            return res
    _check_tensors(op, self, other)
    nd = max(self.ndim, other.ndim)
    ax = axis - nd if axis >= 0 else axis
    if not -min(self.ndim, other.ndim) <= ax <= -1:
        raise IndexError(f"{op}(): argument 'axis' = {axis} is out of range for shapes "
                         f"{self.shape} and {other.shape}")
    a = _move_last(self, self.ndim + ax)
    b = _move_last(other, other.ndim + ax)
    k = a.shape[-1]
    if k != b.shape[-1]:
        raise ValueError(f"{op}(): shapes {self.shape} and {other.shape} differ along axis "
                         f"{axis} ({k} != {b.shape[-1]})")
    try:
        batch = broadcast_shapes(a.shape[:-1], b.shape[:-1], op=op)
    except ValueError:
        raise ValueError(f"{op}(): shapes {self.shape} and {other.shape} cannot be broadcast "
                         f"together (outside axis {axis})") from None
    # Each vector pair is a (1, K) @ (K, 1) product.
    a = a._view(a.shape[:-1] + (1, k), a._strides[:-1] + (0, a._strides[-1]), a._offset)
    b = b._view(b.shape + (1,), b._strides + (0,), b._offset)
    return _run(op, self, other, a, b, batch, batch, out, conj_a=True)


def _move_last(t: Tensor, d: int) -> Tensor:
    order = [i for i in range(t.ndim) if i != d] + [d]
    return permute(t, order)


def _tensordot_axes(axes, nd1, nd2):
    """axes: N (last N of x1 with first N of x2), or two sequences (or two ints) of axes; the
    schema's int[] hands an int over as (N,)."""
    if isinstance(axes, (list, tuple)) and len(axes) == 1 and not isinstance(axes[0],
                                                                              (list, tuple)):
        axes = axes[0]
    if isinstance(axes, int):
        if not 0 <= axes <= min(nd1, nd2):
            raise ValueError(f"tensordot(): argument 'axes' = {axes} must be in [0, "
                             f"{min(nd1, nd2)}] for tensors of {nd1} and {nd2} dimensions")
        return tuple(range(nd1 - axes, nd1)), tuple(range(axes))
    if not isinstance(axes, (list, tuple)) or len(axes) != 2:
        raise ValueError(f"tensordot(): argument 'axes' must be an int or a pair of axis "
                         f"sequences, got {axes!r}")
    a1, a2 = (tuple(x) if isinstance(x, (list, tuple)) else (x,) for x in axes)
    if len(a1) != len(a2):
        raise ValueError(f"tensordot(): argument 'axes' {axes!r} names {len(a1)} axes of the "
                         f"first tensor but {len(a2)} of the second")
    return (normalize_axes(a1, nd1, "tensordot", "axes"),
            normalize_axes(a2, nd2, "tensordot", "axes"))


def tensordot(self: Tensor, other: Tensor, axes=2) -> Tensor:
    """Contracts the given axes of self with those of other; the result has self's free dims
    then other's. Computed as one (M, K) @ (K, N) matmul."""
    op = "tensordot"
    ax1, ax2 = _tensordot_axes(axes, self.ndim, other.ndim)
    for i, j in zip(ax1, ax2):
        if self.shape[i] != other.shape[j]:
            raise ValueError(f"{op}(): shapes {self.shape} and {other.shape} differ along the "
                             f"contracted axes {ax1} and {ax2} ({self.shape[i]} != "
                             f"{other.shape[j]})")
    free1 = [d for d in range(self.ndim) if d not in ax1]
    free2 = [d for d in range(other.ndim) if d not in ax2]
    m = math.prod(self.shape[d] for d in free1)
    k = math.prod(self.shape[d] for d in ax1)
    n = math.prod(other.shape[d] for d in free2)
    a = reshape(permute(self, free1 + list(ax1)), (m, k))
    b = reshape(permute(other, list(ax2) + free2), (k, n))
    result_shape = tuple(self.shape[d] for d in free1) + tuple(other.shape[d] for d in free2)
    return _run(op, self, other, a, b, (), result_shape, None)


def matrix_transpose(self: Tensor) -> Tensor:
    """Array API: a view with the last two dims swapped."""
    if self.ndim < 2:
        raise ValueError(f"matrix_transpose(): argument 'self' must have at least 2 "
                         f"dimensions, got shape {self.shape}")
    return transpose(self, -2, -1)
