"""Copies, casts and fills: the element-moving kernels behind factories, clone and astype."""
from __future__ import annotations

from .. import dtypes as _dt
from ..iterator import TensorIterator, has_internal_overlap, memory_overlap
from ..dispatch.keys import BACKEND_MASK, backend_key_for
from ..dispatch.stub import get_stub
from ..allocation import MAX_BYTES as _MAX_BYTES, empty_like
from ..storage import Storage
from ..tensor import Tensor, contiguous_strides
from ..shape import is_dense, span
from ..dispatch.pointwise_info import COPY, FILL
from .pointwise import layout_of, layout_path

__all__ = ["copy_", "fill_", "fill_dense_fast", "fill_iterated", "clone", "contiguous", "astype",
           "fill_range"]



_PY_SCALAR_TYPES = frozenset((bool, int, float, complex))
_fill_fast: dict = {}  # backend key -> the device kernel's fill_dense (None: none)
_copy_fast: dict = {}  # backend key -> the device kernel's copy_dense (None: none)
_copy_strided: dict = {}  # backend key -> the device kernel's copy_strided (None: none)
_fill_strided: dict = {}  # backend key -> the device kernel's fill_strided (None: none)


def _fast_for(table, attr, t):
    ks = t._ks
    try:
        return table[ks]
    except KeyError:
        kern = _COPY_STUB.kernel_for(t._storage.device.type)
        fn = table[ks] = getattr(kern, attr, None)
        return fn


def copy_(self: Tensor, src: Tensor) -> Tensor:
    """Writes src (broadcast to self's shape, cast to self's dtype) into self."""
    if (type(self) is Tensor and type(src) is Tensor and self._shape == src._shape
            and self._ks == src._ks and self._storage is not src._storage
            and (((self._contiguous or self.is_contiguous())
                  and (src._contiguous or src.is_contiguous()))
                 or (self._strides == src._strides
                     and is_dense(self._shape, self._strides, allow_negative=False)))
            and self._storage.device == src._storage.device):
        # Dense fast path: no TensorIterator (the device kernel declines what it can't do).
        # Both contiguous, or one dense block each in the same dim order (x.T.astype(...)
        # into empty_like's layout): element k of one block is element k of the other.
        fast = _fast_for(_copy_fast, "copy_dense", self)
        if fast is not None and fast(self, src) is not None:
            return self
    elif (type(self) is Tensor and type(src) is Tensor and self._shape == src._shape
          and self._dtype is src._dtype and self._ks == src._ks
          and self._storage is not src._storage
          and self._storage.device == src._storage.device
          and (self._contiguous or not has_internal_overlap(self))):
        # A strided source of self's dtype into a self with no element written twice (a
        # window of a bigger tensor: concat along an inner axis, x[:, :3] = y): the device
        # kernel's strided copy (it declines big tensors).
        fast = _fast_for(_copy_strided, "copy_strided", self)
        if fast is not None and fast(self, src) is not None:
            return self
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'src' must be a Tensor, got {type(src).__name__}")
    if src._storage.device is not self._storage.device and src.device != self.device:
        from .transfer import copy_between
        return copy_between(self, src)
    if memory_overlap(self, src) == "full":
        return self
    if src._shape != self._shape:
        src = src.broadcast_to(self.shape) if src.ndim <= self.ndim else _bad_copy(self, src)
    if src._dtype is not self._dtype and type(self) is Tensor and type(src) is Tensor:
        # A cast from a strided or broadcast source (x[:, ::2].astype(float64), out[:] = a
        # row of another dtype): learned per layout as the pointwise ops' are, so a repeated
        # one skips the TensorIterator. Same-dtype copies keep the full path's bands and
        # short-row kernels (copy_strided serves the small ones above).
        out = layout_of(_cast_by_layout, (src,), src, None, self,
                        (self._dtype, self._shape, self._strides))
        if out is not None:
            return out
    return _copy_iterated(src, self)


def _iterate_copy(out, args):
    return TensorIterator.build("copy_", [out], [args[0]], promote_inputs=False,
                                enforce_safe_cast=False)


def _copy_iterated(src, self):
    """The full path of ``self.copy_(src)`` (src already of self's shape)."""
    it = _iterate_copy(self, (src,))
    if it.numel:
        _COPY_STUB.kernel_for(it.device.type, src.dtype)(it, COPY, [])
    return self


_COPY_STUB = _FILL_STUB = get_stub("pointwise")  # copy and fill are pointwise kernels
_cast_by_layout = layout_path(COPY, _copy_iterated, _COPY_STUB, _iterate_copy, ())


def _bad_copy(dst, src):
    raise ValueError(f"copy_(): source shape {src.shape} cannot be broadcast to the destination "
                     f"shape {dst.shape}")


_CPU_KS = backend_key_for("cpu")
_streams_mod = None


def _cpu_streams():
    global _streams_mod
    if _streams_mod is None:
        from ..runtime.cpu import streams as _streams_mod
    return _streams_mod


def fill_(self: Tensor, value) -> Tensor:
    if type(value) in _PY_SCALAR_TYPES and type(self) is Tensor:
        if self._contiguous or self.is_contiguous():
            if fill_dense_fast(self, value):
                return self
        elif is_dense(self._shape, self._strides):
            # One block in another order (x[::-1], x.T): every element of the block is
            # written, so it is filled as the contiguous run it occupies.
            first, _ = span(self._shape, self._strides, self._offset)
            block = self._view((self._numel,), (1,), first)
            if not fill_dense_fast(block, value):
                fill_iterated(block, value)
            return self
        else:
            fast = _fast_for(_fill_strided, "fill_strided", self)
            if fast is not None and fast(self, value) is not None:
                return self
    return fill_iterated(self, value)


def fill_dense_fast(t: Tensor, value) -> bool:
    """fill_'s dense fast path (no TensorIterator) for a contiguous Tensor ``t`` and a Python
    scalar of an exact type: the device kernel's small dense fill, else a memset of zeros;
    False (nothing written) for what they decline."""
    if value == 0 and (type(value) is int or type(value) is bool) and zero_bytes(t):
        return True  # (one memset: at least as fast as the kernel's loop at every size)
    fast = _fast_for(_fill_fast, "fill_dense", t)
    return fast is not None and fast(t, value) is not None


def fill_iterated(self: Tensor, value) -> Tensor:
    """fill_ through the TensorIterator and the fill stub (every layout, device and value)."""
    it = TensorIterator.build("fill_", [self], [value], promote_inputs=False,
                              enforce_safe_cast=False, compute_dtype=_compute(self.dtype),
                              common_dtype=self.dtype)
    if it.numel:
        _FILL_STUB.kernel_for(it.device.type, self.dtype)(it, FILL, [])
    return self


def zero_bytes(t: Tensor) -> bool:
    """Fills contiguous, writable CPU tensor ``t`` (the caller checked it is contiguous) with
    zero bytes in one memset, at every size: a zero of every dtype is all-zero bytes (0 converts
    to every dtype without an error), and one thread's memset beats the parallel fill kernel
    even on big tensors (its stores skip the read for ownership: float32 2e6 / 1e7 on a Zen 3
    VM 0.18-0.25 / 1.1-2.1 ms against the kernel's 0.39-0.73 / 3.4, with a busy process beside
    it 0.23-0.24 / 1.5-5.6 against 0.65-0.88 / 3.2-7.3). False (nothing written) for other
    devices and while CPU streams or the profiler are in use (the fill kernel is launched
    then)."""
    item = t._dtype.itemsize
    nbytes = t._numel * item
    st = t._storage
    if t._ks != _CPU_KS or st.readonly or _cpu_streams()._slow:
        return False
    off = t._offset * item
    st.buffer[off:off + nbytes].fill(0)
    return True


def _compute(dtype):
    # A half-type fill converts the Python float once, from float64: going through float32 would
    # round twice (1 + 2**-11 + 2**-40 would become float16 1.0 instead of 1.0009765625).
    return _dt.float64 if dtype in (_dt.float16, _dt.bfloat16) else dtype


def clone(self: Tensor) -> Tensor:
    if type(self) is Tensor:
        out = _dense_copy(self, self._dtype)
        if out is not None:
            return out
    return copy_(empty_like(self), self)


def contiguous(self: Tensor) -> Tensor:
    if self.is_contiguous():
        return self
    shape = self._shape
    nbytes = self._numel * self._dtype.itemsize
    if type(self) is not Tensor or nbytes > _MAX_BYTES:
        from ..allocation import empty  # (its size checks raise for what cannot be allocated)
        return copy_(empty(shape, dtype=self.dtype, device=self.device), self)
    # What empty() gives (a C-order tensor on self's device), without its argument checks.
    out = object.__new__(Tensor)
    out._storage = Storage.allocate(nbytes, self._storage.device)
    out._shape = shape
    out._strides = contiguous_strides(shape)
    out._offset = 0
    out._dtype = self._dtype
    out._ks = self._ks & BACKEND_MASK
    out._autograd = None
    out._numel = self._numel
    out._contiguous = True
    if out._ks == self._ks:
        # What copy_ picks for this pair (one dtype and backend, a fresh dense destination):
        # the device kernel's strided copy, without copy_'s checks.
        fast = _fast_for(_copy_strided, "copy_strided", out)
        if fast is not None and fast(out, self) is not None:
            return out
    return copy_(out, self)


def astype(self: Tensor, dtype, copy: bool = True, device=None) -> Tensor:
    same_device = device is None or device == self.device
    if dtype is self.dtype and same_device and not copy:
        return self
    if not same_device:
        from .transfer import to_device
        return to_device(self, device, dtype=dtype)
    if type(self) is Tensor and type(dtype) is _dt.DType:
        out = _dense_copy(self, dtype)
        if out is not None:
            return out
        if dtype is not self._dtype:
            # a strided source (x[:, ::2].astype(float64)): its runner allocates the result
            # as empty_like does, with no iterator
            by_layout = _astypes.get(dtype) or _astype_path(dtype)
            out = layout_of(by_layout, (self,), self, None, None)
            if out is not None:
                return out
    return copy_(empty_like(self, dtype=dtype), self)


_astypes: dict = {}  # dtype -> the layout path of casts to it (layout_path)


def _astype_path(dtype):
    def cast(src, _into):
        return copy_(empty_like(src, dtype=dtype), src)
    by_layout = _astypes[dtype] = layout_path(COPY, cast, _COPY_STUB, _iterate_copy, ())
    return by_layout


def _dense_copy(self, dtype):
    """A copy of contiguous, non-empty ``self`` as ``dtype`` into the C-order tensor empty_like
    would give, through copy_'s fast path; None for other tensors."""
    if not self._numel or not (self._contiguous or self.is_contiguous()):
        return None
    shape = self._shape
    st = Storage.allocate(self._numel * dtype.itemsize, self._storage.device)
    out = Tensor._make(st, shape, (1,) if len(shape) == 1 else contiguous_strides(shape), 0,
                       dtype)
    out._contiguous = True
    fast = _fast_for(_copy_fast, "copy_dense", out)
    if fast is not None and fast(out, self) is not None:
        return out
    return copy_(out, self)


_RANGE_STUB = get_stub("fill_range")
_range_fast: dict = {}  # backend key -> the device kernel's dense range fill (None: none)


def fill_range(self: Tensor, start, step) -> Tensor:
    """out[i] = start + i * step over a 1-D tensor (arange / linspace)."""
    if self._numel:
        _RANGE_STUB.kernel_for(self.device.type, self.dtype)(self, start, step)
    return self


def range_fast_for(t: Tensor):
    """The device kernel's small-call range fill for contiguous 1-D ``t`` (its stub kernel's
    ``dense``: ``dense(t, start, step)`` returns None for what ``fill_range`` must do), or None
    when the device has none."""
    ks = t._ks
    try:
        return _range_fast[ks]
    except KeyError:
        kern = _RANGE_STUB.kernel_for(t._storage.device.type)
        fn = _range_fast[ks] = getattr(kern, "dense", None)
        return fn


def zero_(self: Tensor) -> Tensor:
    """Fills the tensor with zeros in place (PyTorch's spelling, e.g. ``x.grad.zero_()``)."""
    return self.fill_(0)
