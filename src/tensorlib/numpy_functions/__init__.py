"""``Tensor.__array_function__``: ``HANDLED_FUNCTIONS`` (NumPy function -> an implementation
taking NumPy's signature and keywords, ``np.mean(x, dtype=..., keepdims=...)``, built from
tensorlib ops, never a copy to NumPy), filled by ``@implements(np.f)``. Keywords tensorlib
cannot honour (``order='F'``, ``kind=``...) raise TypeError naming the function and the
argument; functions not in the table are NotImplemented.

The table and its shared keyword checks are in ``table.py``; the implementations, one module a
family, in ``reductions.py``, ``manipulation.py`` (joining, reshaping, sorting, indexing, sets),
``arrays.py`` (products, copies, casts, queries) and ``creation.py``. Importing this package
fills the table.
"""
from __future__ import annotations

# importing the families fills the table (in this order, the order of the old single module)
from . import reductions, manipulation, arrays, creation  # noqa: F401,I001
from .table import HANDLED_FUNCTIONS, array_function, implements

__all__ = ["HANDLED_FUNCTIONS", "array_function", "implements"]
