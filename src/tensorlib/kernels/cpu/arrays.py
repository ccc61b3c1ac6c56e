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
    Storage.typed(), not Tensor.numpy(): it waits for queued CPU-stream work on the memory unless
    a user stream is current (the caller then runs in stream order)."""
    arr = t._storage.typed(np_dtype)
    item = arr.itemsize
    st = t._strides
    # (spelled out for 1-D and 2-D: small copies and matmuls make several views per call)
    if len(st) == 2:
        strides = (st[0] * item, st[1] * item)
    elif len(st) == 1:
        strides = (st[0] * item,)
    else:
        strides = tuple([s * item for s in st])
    return np.ndarray(t._shape, arr.dtype, arr, t._offset * item, strides)
