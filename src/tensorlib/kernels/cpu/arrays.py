"""NumPy views of tensors for CPU kernels that run NumPy's own loops (BLAS matmul, strided
copies) or pack typed arrays for generated kernels.

(Kept out of casting.py: that file's bytes are part of every generated kernel's cache key, see
pointwise._helpers_digest.)
"""
from __future__ import annotations

import numpy as np

__all__ = ["kernel_np_dtype", "strided_array"]


def kernel_np_dtype(dt):
    """The NumPy dtype kernels see a tensor of ``dt`` as (casting.kernel_array's rule): half
    types as raw uint16, since Numba has no float16 arrays."""
    return np.uint16 if dt.itemsize == 2 and dt.kind == "f" else dt.storage_np_dtype


def strided_array(t, np_dtype):
    """t's elements as a NumPy array of ``np_dtype`` with t's shape and strides over its storage.
    Storage.typed(), not Tensor.numpy(), when CPU-stream work is queued on the memory: it waits
    for it unless a user stream is current (the caller then runs in stream order); with nothing
    queued, a view of the storage's bytes straight away."""
    st = t._storage
    dt = _np_dtypes.get(np_dtype)
    if dt is None:
        dt = _np_dtypes[np_dtype] = np.dtype(np_dtype)
    buf = st.typed(np_dtype) if st._uses is not None else st.buffer
    item = dt.itemsize
    s = t._strides
    # (spelled out for 1-D and 2-D: small copies and matmuls make several views per call)
    if len(s) == 2:
        strides = (s[0] * item, s[1] * item)
    elif len(s) == 1:
        strides = (s[0] * item,)
    else:
        strides = tuple([v * item for v in s])
    return _ndarray(t._shape, dt, buf, t._offset * item, strides)


_np_dtypes: dict = {}  # what strided_array is asked for -> its np.dtype
_ndarray = np.ndarray
