"""Compatibility names: raw allocation moved to ``allocation.py`` (tensor layer), the creation
ops to ``ops/creation.py``. ``ops.yaml`` registers the factory ops by these paths, and a few
callers (``kernels/cpu/indexing.py``, ``ops/sorting.py``) still import ``empty`` from here; new
code imports the two modules directly."""
from __future__ import annotations

from .allocation import empty, empty_like, empty_strided, normalize_shape
from .ops.creation import arange, asarray, eye, from_numpy, full, full_like, linspace, ones, \
    ones_like, tensor, zeros, zeros_like

__all__ = ["asarray", "tensor", "from_numpy", "empty", "empty_strided", "zeros", "ones", "full",
           "empty_like", "zeros_like", "ones_like", "full_like", "arange", "linspace", "eye",
           "normalize_shape"]
