"""Moving tensors between devices: ``to_device`` (behind ``Tensor.to``, ``.cuda()``, ``.cpu()``,
``tl.asarray(..., device=...)`` and ``astype(..., device=...)``), cross-device ``copy_``, and
pinned host memory (``pin_memory`` / ``is_pinned``).

A copy into or out of a CUDA tensor is one memcpy of a dense byte range on the current stream:
the source is first made dense on its own device if it is not (strides that are a permutation of
contiguous ones count as dense and are kept). Dtype conversions run where a kernel exists: on
the CPU side for host <-> device copies, on the device for device -> device ones.

Device-side strided copies and casts use the CUDA ``copy`` kernel once one is registered
(kernels/cuda, a later change). Until then: on the interpret backend the CPU copy kernel runs as
stream work over the device bytes (which are host memory); on a real GPU the bytes are staged
through host memory (correct, slow; synchronizes the stream).

Host -> device copies run asynchronously (``non_blocking=True``) only from pinned memory, whose
block is then kept from reuse until the copy has run; otherwise the call waits for the copy.
Device -> host with ``non_blocking=True`` returns a pinned tensor that is valid once the current
stream has been synchronized (as in PyTorch).
"""
from __future__ import annotations

from functools import partial

from ..allocation import empty_like, empty_pinned, empty_strided, empty_strided_like_order
from ..shape import contiguous_strides, is_dense, span

__all__ = ["to_device", "tensor_to", "cuda", "cpu", "copy_between", "pin_memory", "is_pinned",
           "empty_pinned"]


# ---- helpers -----------------------------------------------------------------------------------
def _is_dense(t) -> bool:
    """True when ``t``'s numel elements are the numel items from its data pointer up (dense,
    strides positive, any dim order): one memcpy moves them and keeps the layout."""
    return t.is_contiguous() or is_dense(t._shape, t._strides, allow_negative=False)


def _driver():
    from ..runtime.cuda import context
    return context.require("to")


def _stream_for(idx):
    from ..runtime.cuda.streams import current_handle
    return current_handle(idx)


def _target(device, op):
    from ..device import Device, to_device as as_device
    if device is None:
        return None
    dev = as_device(device, op=op)
    if dev.type == "cuda":
        from ..runtime.cuda import context
        idx = context.resolve_index(dev, op)
        return Device("cuda", idx)
    return dev


def _empty_strided(shape, strides, dtype, device):
    return empty_strided(shape, strides, dtype, device)


def _pinned_block(t):
    """The pinned allocator block behind ``t``'s storage, or None."""
    alloc = t._storage._allocator
    if alloc is None:
        return None
    from ..runtime.cuda.pinned import PinnedHostAllocator
    return t._storage._block if isinstance(alloc, PinnedHostAllocator) else None


def _cpu_copy(dst, src):
    from .copy import copy_
    return copy_(dst, src)


def _host_alias(t):
    """A CPU tensor over the same bytes as CUDA tensor ``t`` (interpret backend only).

    It does not own ``t``'s Storage: stream work must never drop the last reference to a CUDA
    Storage (its release would call the allocator from a stream worker while another thread may
    hold the allocator's lock waiting for that stream). The NumPy view keeps the segment's host
    memory alive; reuse of the block is stream-ordered, as on a GPU.
    """
    from ..device import CPU
    from ..storage import Storage
    from ..tensor import Tensor
    st = t._storage
    alias = Storage(st.nbytes, CPU, st._ptr, st.buffer)
    return Tensor._make(alias, t._shape, t._strides, t._offset, t._dtype)


def _cuda_copy_kernel(dtype):
    from ..dispatch.stub import UnsupportedKernelError, get_stub
    try:
        return get_stub("pointwise").kernel_for("cuda", dtype)
    except UnsupportedKernelError:
        return None


def _span(t):
    """(first, end) element offsets in storage covering every element of ``t`` (not empty)."""
    return span(t._shape, t._strides, t._offset)


def _stage_to_host(t, stream, driver):
    """A CPU tensor with ``t``'s shape/strides over a host copy of the bytes ``t`` spans."""
    from ..device import CPU
    from ..storage import Storage
    from ..tensor import Tensor
    lo, end = _span(t)
    item = t._dtype.itemsize
    host = Storage.allocate((end - lo) * item, CPU)
    driver.memcpy_async(host.data_ptr(), t._storage.data_ptr() + lo * item,
                        (end - lo) * item, stream, "d2h")
    driver.stream_synchronize(stream)
    return Tensor._make(host, t._shape, t._strides, t._offset - lo, t._dtype)


def _device_copy(dst, src) -> None:
    """dst[...] = src (same CUDA device, same shape; casts) in stream order."""
    if dst._numel == 0:
        return
    kernel = _cuda_copy_kernel(src._dtype)
    if kernel is not None:
        from .copy import copy_
        from ..dispatch.stub import UnsupportedKernelError
        try:
            copy_(dst, src)
            return
        except UnsupportedKernelError:
            pass  # the CUDA kernels cannot run here (no GPU Triton can launch on)
    driver = _driver()
    stream = _stream_for(dst.device.index)
    if driver.host_visible:
        # Interpret backend: device bytes are host memory; run the CPU kernel as stream work.
        driver.launch_host_func(stream, partial(_cpu_copy, _host_alias(dst), _host_alias(src)))
        return
    # Real GPU without a CUDA copy kernel yet: read-modify-write through host memory.
    h_src = _stage_to_host(src, stream, driver)
    h_dst = _stage_to_host(dst, stream, driver)
    _cpu_copy(h_dst, h_src)
    lo, end = _span(dst)
    item = dst._dtype.itemsize
    driver.memcpy_async(dst._storage.data_ptr() + lo * item,
                        h_dst._storage.data_ptr(), (end - lo) * item, stream, "h2d")
    driver.stream_synchronize(stream)


def _dense_on_device(t):
    """``t`` itself when dense, else a contiguous copy on its (CUDA) device."""
    if _is_dense(t):
        return t
    out = _empty_strided(t._shape, contiguous_strides(t._shape), t._dtype, t.device)
    _device_copy(out, t)
    return out


def _dense_on_host(t, dtype):
    """CPU tensor of ``dtype`` with t's values, dense (``t`` itself when already so)."""
    if dtype is not t._dtype:
        out = empty_like(t, dtype=dtype)  # keeps t's memory order when t is dense
        _cpu_copy(out, t)
        t = out
    if not _is_dense(t):
        from .copy import contiguous
        t = contiguous(t)
    return t


# ---- the transfers -----------------------------------------------------------------------------
def _h2d(t, target, dtype, non_blocking):
    driver = _driver()
    src = _dense_on_host(t, dtype)
    dst = _empty_strided(src._shape, src._strides, dtype, target)
    nbytes = src._numel * dtype.itemsize
    if nbytes == 0:
        return dst
    stream = _stream_for(target.index)
    driver.memcpy_async(dst.data_ptr(), src.data_ptr(), nbytes, stream, "h2d")
    block = _pinned_block(src) if non_blocking else None
    if block is not None:
        # Asynchronous: the pinned block must outlive the copy even if `src` is freed now.
        from ..runtime.cuda import pinned_allocator
        pinned_allocator().record_event(block, stream)
    else:
        driver.stream_synchronize(stream)
    return dst


def _d2h(t, dtype, non_blocking):
    from ..device import CPU
    driver = _driver()
    src = _dense_on_device(t)
    stream = _stream_for(src.device.index)
    nbytes = src._numel * src._dtype.itemsize
    if non_blocking and dtype is src._dtype:
        dst = empty_pinned(src._shape, src._strides, dtype)
        if nbytes:
            driver.memcpy_async(dst.data_ptr(), src.data_ptr(), nbytes, stream, "d2h")
            from ..runtime.cuda import pinned_allocator
            pinned_allocator().record_event(dst._storage._block, stream)
        return dst
    dst = _empty_strided(src._shape, src._strides, src._dtype, CPU)
    if nbytes:
        driver.memcpy_async(dst.data_ptr(), src.data_ptr(), nbytes, stream, "d2h")
        driver.stream_synchronize(stream)
    if dtype is not dst._dtype:
        dst = _dense_on_host(dst, dtype)
    return dst


def _d2d_peer(t, target, dtype):
    driver = _driver()
    src = _dense_on_device(t)
    dst = _empty_strided(src._shape, src._strides, src._dtype, target)
    nbytes = src._numel * src._dtype.itemsize
    if nbytes:
        si, di = src.device.index, target.index
        s_src, s_dst = _stream_for(si), _stream_for(di)
        # As PyTorch does: the copy runs on the source's current stream, ordered after the
        # destination's current stream (where dst was allocated) and before its later work.
        ev = driver.event_create(di, False, False)
        driver.event_record(ev, s_dst)
        driver.stream_wait_event(s_src, ev)
        driver.memcpy_peer_async(dst.data_ptr(), di, src.data_ptr(), si, nbytes, s_src)
        ev2 = driver.event_create(si, False, False)
        driver.event_record(ev2, s_src)
        driver.stream_wait_event(s_dst, ev2)
    if dtype is not dst._dtype:
        dst = _same_device_copy(dst, dtype)
    return dst


def _same_device_copy(t, dtype):
    """A new tensor on t's CUDA device with t's values as ``dtype`` (layout kept when dense)."""
    if dtype is t._dtype and _is_dense(t):
        driver = _driver()
        dst = _empty_strided(t._shape, t._strides, dtype, t.device)
        nbytes = t._numel * dtype.itemsize
        if nbytes:
            driver.memcpy_async(dst.data_ptr(), t.data_ptr(), nbytes,
                                _stream_for(t.device.index), "d2d")
        return dst
    dst = empty_strided_like_order(t._shape, dtype, t.device, t)
    _device_copy(dst, t)
    return dst


def to_device(t, device, dtype=None, non_blocking=False, copy=False):
    """``t`` on ``device`` as ``dtype`` (None: keep). Returns ``t`` itself when nothing changes
    and ``copy`` is False."""
    from .. import dtypes as _dt
    from ..tensor import Tensor
    if not isinstance(t, Tensor):
        raise TypeError(f"to(): expected a Tensor, got {type(t).__name__}")
    target = _target(device, "to") or t.device
    dtype = t._dtype if dtype is None else _dt.to_dtype(dtype, op="to")
    src_dev = t.device
    if target == src_dev:
        if dtype is t._dtype and not copy:
            return t
        if target.type == "cpu":
            from .copy import astype
            return astype(t, dtype, copy=True)
        return _same_device_copy(t, dtype)
    if src_dev.type == "cpu" and target.type == "cuda":
        return _h2d(t, target, dtype, bool(non_blocking))
    if src_dev.type == "cuda" and target.type == "cpu":
        return _d2h(t, dtype, bool(non_blocking))
    if src_dev.type == "cuda" and target.type == "cuda":
        return _d2d_peer(t, target, dtype)
    raise RuntimeError(f"to(): cannot move a tensor from '{src_dev}' to '{target}'")


def tensor_to(self, *args, device=None, dtype=None, non_blocking=False, copy=False):
    """Tensor.to: ``to(device=None, dtype=None, non_blocking=False, copy=False)``,
    ``to(dtype, non_blocking=False, copy=False)`` or ``to(other, non_blocking=False, copy=False)``
    (device and dtype of ``other``)."""
    from .. import dtypes as _dt
    from ..device import Device
    from ..tensor import Tensor
    args = list(args)
    if args:
        first = args.pop(0)
        if isinstance(first, Tensor):
            if device is not None or dtype is not None:
                raise TypeError("to(): a Tensor argument cannot be combined with device= or "
                                "dtype=")
            device, dtype = first.device, first.dtype
        elif isinstance(first, _dt.DType) or (not isinstance(first, (str, int, Device))
                                              and first is not None):
            if dtype is not None:
                raise TypeError("to(): dtype given twice")
            dtype = first
        elif isinstance(first, str) and not _looks_like_device(first):
            if dtype is not None:
                raise TypeError("to(): dtype given twice")
            try:
                dtype = _dt.to_dtype(first, op="to")
            except TypeError:
                raise TypeError(f"to(): {first!r} is neither a device ('cpu', 'cuda', "
                                f"'cuda:N') nor a dtype") from None
        else:
            if device is not None:
                raise TypeError("to(): device given twice")
            device = first
            if args and not isinstance(args[0], bool):
                if dtype is not None:
                    raise TypeError("to(): dtype given twice")
                dtype = args.pop(0)
    if args:
        non_blocking = args.pop(0)
    if args:
        copy = args.pop(0)
    if args:
        raise TypeError(f"to(): too many positional arguments ({len(args)} left over)")
    return to_device(self, device, dtype=dtype, non_blocking=non_blocking, copy=copy)


def _looks_like_device(s: str) -> bool:
    head = s.strip().split(":", 1)[0]
    return head in ("cpu", "cuda")


def cuda(self, device=None, non_blocking=False):
    """Tensor.cuda: a copy on CUDA device ``device`` (default: current); self if already
    there."""
    from ..device import Device
    if device is None:
        from ..runtime.cuda import context
        device = Device("cuda", context.current_device())
    elif isinstance(device, int) and not isinstance(device, bool):
        device = Device("cuda", device)
    else:
        device = Device(device)
        if device.type != "cuda":
            raise ValueError(f"cuda(): argument 'device' must be a CUDA device, got "
                             f"'{device}'")
    return to_device(self, device, non_blocking=non_blocking)


def cpu(self):
    """Tensor.cpu: self if on the CPU, else a host copy (waits for it)."""
    return to_device(self, "cpu")


def copy_between(dst, src, non_blocking=False):
    """``dst.copy_(src)`` when the two are on different devices: broadcast, cast, move."""
    from ..tensor import Tensor
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'src' must be a Tensor, got {type(src).__name__}")
    if src.device == dst.device:
        from .copy import copy_
        return copy_(dst, src)
    if src._shape != dst._shape:
        if src.ndim > dst.ndim:
            raise ValueError(f"copy_(): source shape {src.shape} cannot be broadcast to the "
                             f"destination shape {dst.shape}")
        from .views import broadcast_to
        src = broadcast_to(src, dst._shape)
    moved = to_device(src, dst.device, dtype=dst.dtype, non_blocking=non_blocking)
    if dst.device.type == "cpu":
        _cpu_copy(dst, moved)
    elif moved is not dst:
        if _is_dense(dst) and dst._strides == moved._strides and dst._numel:
            driver = _driver()
            driver.memcpy_async(dst.data_ptr(), moved.data_ptr(),
                                dst._numel * dst._dtype.itemsize,
                                _stream_for(dst.device.index), "d2d")
        else:
            _device_copy(dst, moved)
    return dst


# ---- pinned memory -----------------------------------------------------------------------------
def is_pinned(t) -> bool:
    """True when ``t``'s memory comes from the pinned host allocator."""
    return t.device.type == "cpu" and _pinned_block(t) is not None


def pin_memory(t):
    """A copy of CPU tensor ``t`` in pinned host memory (``t`` itself if already pinned)."""
    from ..tensor import Tensor
    if not isinstance(t, Tensor):
        raise TypeError(f"pin_memory(): expected a Tensor, got {type(t).__name__}")
    if t.device.type != "cpu":
        raise RuntimeError(f"pin_memory(): only CPU tensors can be pinned, got a tensor on "
                           f"'{t.device}'")
    if is_pinned(t):
        return t
    strides = t._strides if _is_dense(t) else contiguous_strides(t._shape)
    out = empty_pinned(t._shape, strides, t._dtype)
    if t._numel:
        _cpu_copy(out, t)
    return out
