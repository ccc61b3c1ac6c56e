"""Raw allocation: uninitialized tensors from the device allocators (tensor layer).

Everything here returns memory that nothing has written yet: ``empty`` / ``empty_strided`` /
``empty_like`` (behind ``tl.empty``... through ``ops/creation.py``), pinned host memory
(``empty_pinned``, what ``pin_memory=True`` allocates), ``empty_strided_like_order`` (the
TensorIterator's and the reductions' outputs in an input's memory order) and the direct dense
helpers (``new_dense_cpu``, ``empty_1d``) the creation ops' fast paths use. It sits below the
TensorIterator and the kernels, which allocate their outputs through it; the creation ops that
fill (``full``, ``zeros``, ``arange``...) live in ``ops/creation.py``.
"""
from __future__ import annotations

import math
import operator

from . import dtypes as _dt
from .device import CPU, Device, plain_cpu, to_device
from .dispatch.keys import BACKEND_MASK, backend_key_for
from .shape import contiguous_strides, is_dense
from .storage import Storage
from .tensor import Tensor

__all__ = ["MAX_BYTES", "normalize_shape", "checked_nbytes", "resolve_device", "empty",
           "empty_strided", "empty_like", "empty_pinned", "empty_strided_like_order",
           "new_dense_cpu", "empty_1d"]

MAX_BYTES = 2 ** 62  # beyond any machine; also keeps every byte offset inside int64
_CPU_KS = backend_key_for("cpu")


def normalize_shape(shape, op: str, arg: str = "shape") -> tuple:
    """int or sequence of ints -> tuple; TypeError/ValueError naming op, argument and value."""
    if type(shape) is tuple:  # (what the bindings' conv_int_list hands on: plain ints)
        for n in shape:
            if type(n) is not int or n < 0:
                break
        else:
            return shape
    if isinstance(shape, Tensor):
        shape = shape.tolist()
    try:
        if isinstance(shape, (list, tuple)):
            dims = tuple(operator.index(n) for n in shape)
        else:
            dims = (operator.index(shape),)
    except TypeError:
        raise TypeError(f"{op}(): argument '{arg}' must be an int or a sequence of ints, "
                        f"got {shape!r}") from None
    for n in dims:
        if n < 0:
            raise ValueError(f"{op}(): argument '{arg}' has a negative dimension {n}: {dims}")
    return dims


def checked_nbytes(shape, strides, dtype, op) -> int:
    """Bytes a tensor of ``shape`` / ``strides`` (elements) of ``dtype`` spans; OverflowError
    naming ``op`` beyond what can be addressed."""
    if any(n == 0 for n in shape):
        return 0
    span = 1 + sum((n - 1) * abs(s) for n, s in zip(shape, strides))
    nbytes = span * dtype.itemsize
    if nbytes > MAX_BYTES or math.prod(shape) > MAX_BYTES:
        raise OverflowError(f"{op}(): shape {tuple(shape)} of {dtype} needs {nbytes} bytes, "
                            f"more than can be addressed")
    return nbytes


def resolve_device(device, op) -> Device:
    """``device`` (None, str, int, Device) as a Device; 'cuda' resolves to the current index."""
    device = to_device(device, op=op)
    if device.type == "cuda" and device.index is None:
        from .runtime import cuda
        return Device("cuda", cuda.current_device())
    return device


def empty_strided(shape, strides, dtype=None, device=None, op="empty_strided",
                  pin_memory=False) -> Tensor:
    if type(dtype) is not _dt.DType:
        dtype = _dt.default_float() if dtype is None else _dt.to_dtype(dtype, op=op)
    if type(device) is not Device or device.index is None and device.type == "cuda":
        device = resolve_device(device, op)
    if pin_memory:
        if device.type != "cpu":
            raise ValueError(f"{op}(): pin_memory=True needs a CPU tensor, got device '{device}'")
        return empty_pinned(tuple(shape), tuple(strides), dtype)
    nbytes = checked_nbytes(shape, strides, dtype, op)
    storage = Storage.allocate(nbytes, device)
    return Tensor._make(storage, tuple(shape), tuple(strides), 0, dtype)


def empty(shape, dtype=None, device=None, pin_memory=False) -> Tensor:
    shape = normalize_shape(shape, "empty")
    if plain_cpu(device) and not pin_memory and (dtype is None or type(dtype) is _dt.DType):
        # the common call: a C-order CPU tensor, without empty_strided's general checks
        t = new_dense_cpu(shape, _dt.default_float() if dtype is None else dtype)
        if t is not None:
            return t
    return empty_strided(shape, contiguous_strides(shape), dtype, device, "empty", pin_memory)


def empty_pinned(shape, strides, dtype):
    """An uninitialized CPU tensor in pinned memory with the given layout (what
    ``pin_memory=True`` allocates)."""
    from .device import CPU
    from .runtime.cuda import pinned_allocator
    alloc = pinned_allocator()
    nbytes = checked_nbytes(shape, strides, dtype, "pin_memory")
    block = alloc.allocate(nbytes)
    storage = Storage(nbytes, CPU, block.ptr, block.buffer, alloc, block)
    return Tensor._make(storage, tuple(shape), tuple(strides), 0, dtype)


def empty_strided_like_order(shape, dtype, device, order_from: Tensor | None) -> Tensor:
    """Allocates a dense tensor of ``shape`` whose dims are laid out in ``order_from``'s memory
    order (so a transposed input gives a transposed-layout output), else C order."""
    if order_from is None or order_from.ndim != len(shape) or order_from.is_contiguous():
        return empty_strided(shape, contiguous_strides(shape), dtype, device)
    perm = sorted(range(len(shape)), key=lambda d: (-abs(order_from._strides[d]), d))
    strides = [0] * len(shape)
    acc = 1
    for d in reversed(perm):
        strides[d] = acc
        acc *= max(shape[d], 1)
    return empty_strided(shape, tuple(strides), dtype, device)


# ---- direct dense allocation (the creation ops' fast paths) -------------------------------------
def new_dense_cpu(shape, dtype):
    """A new C-order CPU tensor of ``shape`` (a tuple of ints >= 0) and DType ``dtype``, or None
    when its size needs the general checks (empty_strided raises for it)."""
    numel = math.prod(shape)
    nbytes = numel * dtype.itemsize
    if nbytes > MAX_BYTES:
        return None
    t = object.__new__(Tensor)
    t._storage = Storage.allocate(nbytes)
    t._shape = shape
    t._strides = (1,) if len(shape) == 1 else contiguous_strides(shape)
    t._offset = 0
    t._dtype = dtype
    t._ks = _CPU_KS
    t._autograd = None
    t._numel = numel
    t._contiguous = True
    return t


def empty_1d(n, dtype, device):
    """empty((n,), dtype, device): allocated directly for a CPU tensor of a DType."""
    if device is None and type(dtype) is _dt.DType and type(n) is int and 0 <= n:
        t = new_dense_cpu((n,), dtype)
        if t is not None:
            return t
    return empty(n, dtype=dtype, device=device)


_like_strides: dict = {}  # (shape, strides) of x -> strides of empty_like(x)


def empty_like(x: Tensor, dtype=None, device=None) -> Tensor:
    """Same shape; keeps x's memory order when x is dense (PyTorch's preserve_format)."""
    if (type(x) is Tensor and (device is None or x._storage.device is CPU and plain_cpu(device))
            and (dtype is None or type(dtype) is _dt.DType)):
        # The layout depends on x's shape and strides only: remembered per pair.
        dtype = x._dtype if dtype is None else dtype
        nbytes = x._numel * dtype.itemsize
        strides = _like_strides.get((x._shape, x._strides))
        if strides is not None and nbytes <= MAX_BYTES:
            t = object.__new__(Tensor)
            t._storage = Storage.allocate(nbytes, x._storage.device)
            t._shape = x._shape
            t._strides = strides
            t._offset = 0
            t._dtype = dtype
            t._ks = x._ks & BACKEND_MASK
            t._autograd = None
            t._numel = x._numel
            t._contiguous = None
            return t
        t = _empty_like(x, dtype, device)
        if len(_like_strides) >= 1024:
            _like_strides.clear()
        _like_strides[(x._shape, x._strides)] = t._strides
        return t
    return _empty_like(x, dtype, device)


def _empty_like(x, dtype, device):
    dtype = x.dtype if dtype is None else _dt.to_dtype(dtype, op="empty_like")
    device = x.device if device is None else resolve_device(device, "empty_like")
    # Only a dense x lends its order: an expanded or sliced one gives C order, as in PyTorch
    # (ordering by stride would put a broadcast dim innermost).
    return empty_strided_like_order(x.shape, dtype, device,
                                    x if is_dense(x.shape, x.stride()) else None)
