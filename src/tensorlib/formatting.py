"""NumPy-like repr for tensors: ``tensor([1., 2.])``, dtype and device shown when not the defaults."""
from __future__ import annotations

import numpy as np

from . import dtypes as _dt

_IMPLIED = {"float32", "int64", "bool"}  # dtypes a reader infers from the printed values


def tensor_repr(t) -> str:
    values = t._to_host_numpy()
    prefix = "tensor("
    if t._numel == 0:
        body = "[]" if t.ndim <= 1 else f"[], size={t.shape}"
    else:
        body = np.array2string(values, separator=", ", prefix=prefix,
                               max_line_width=100, threshold=1000)
    extras = []
    if t.dtype.name not in _IMPLIED or (t._numel == 0 and t.dtype is not _dt.float32):
        extras.append(f"dtype={t.dtype!r}")
    if t.device.type != "cpu":
        extras.append(f"device='{t.device}'")
    return prefix + body + "".join(", " + e for e in extras) + ")"
