"""NumPy views of tensors for CPU kernels that run NumPy's own loops (BLAS matmul, strided
copies) or pack typed arrays for generated kernels.

(Kept out of casting.py: that file's bytes are part of every generated kernel's cache key, see
pointwise._helpers_digest.)
"""
from __future__ import annotations

import numpy as np

__all__ = ["kernel_np_dtype", "strided_array", "dense_view"]


def kernel_np_dtype(dt):
    """The NumPy dtype kernels see a tensor of ``dt`` as (casting.kernel_array's rule): half
    types as raw uint16, since Numba has no float16 arrays."""
    return np.uint16 if dt.itemsize == 2 and dt.kind == "f" else dt.storage_np_dtype


def strided_array(t, np_dtype, byte_strides=None):
    """t's elements as a NumPy array of ``np_dtype`` with t's shape and strides over its storage
    (``byte_strides``: those strides in bytes, when the caller has them worked out already).
    Storage.typed(), not Tensor.numpy(), when CPU-stream work is queued on the memory: it waits
    for it unless a user stream is current (the caller then runs in stream order); with nothing
    queued, a view of the storage's bytes straight away."""
    st = t._storage
    dt = _np_dtypes.get(np_dtype)
    if dt is None:
        dt = _np_dtypes[np_dtype] = np.dtype(np_dtype)
    buf = st.typed(np_dtype) if st._uses is not None else st.buffer
    item = dt.itemsize
    if byte_strides is not None:
        return _ndarray(t._shape, dt, buf, t._offset * item, byte_strides)
    if t._contiguous:  # (C order: NumPy derives the strides, cheaper than checking given ones)
        return _ndarray(t._shape, dt, buf, t._offset * item)
    s = t._strides
    # (spelled out for 1-D and 2-D: small copies and matmuls make several views per call)
    if len(s) == 2:
        strides = (s[0] * item, s[1] * item)
    elif len(s) == 1:
        strides = (s[0] * item,)
    else:
        strides = tuple([v * item for v in s])
    return _ndarray(t._shape, dt, buf, t._offset * item, strides)


def dense_view(t, np_dtype):
    """Contiguous ``t``'s elements as a 1-D array of ``np_dtype`` (of t's itemsize), e.g. raw
    words to move. A view of the bytes made directly, as strided_array's: Storage.typed() makes
    and keeps a view of the whole storage (~0.6 us on a fresh result's); through typed() while
    CPU-stream work is queued on the memory (it waits for that), and for an empty t."""
    st = t._storage
    if st._uses is not None or not t._numel:
        return st.typed(np_dtype)[t._offset:t._offset + t._numel]
    dt = _np_dtypes.get(np_dtype)
    if dt is None:
        dt = _np_dtypes[np_dtype] = np.dtype(np_dtype)
    return _frombuffer(st.buffer, dt, t._numel, t._offset * dt.itemsize)


_np_dtypes: dict = {}  # what strided_array / dense_view are asked for -> its np.dtype
_ndarray = np.ndarray
_frombuffer = np.frombuffer
