"""NumPy's protocols for tensorlib tensors: ``__array_ufunc__`` and ``__array_function__``.

``np.exp(x)``, ``np.add(x, 1, out=y)``, ``np.add.reduce(x, axis=1)`` or ``np.concatenate([x, y])``
on tensors run tensorlib ops and return tensors. Two tables say what is covered:

- ``UFUNCS``: NumPy ufunc -> name of the tensorlib function computing it (``__call__``, with
  ``out=``, ``where=``, ``dtype=``, ``casting='same_kind' | 'unsafe'``); ``REDUCE`` and
  ``ACCUMULATE``: ufuncs with a ``.reduce`` / ``.accumulate`` (add, multiply, maximum, minimum,
  logical_and, logical_or).
- ``HANDLED_FUNCTIONS``: NumPy function -> an implementation taking NumPy's signature and
  keywords (``np.mean(x, dtype=..., keepdims=...)``), built from tensorlib ops, never a copy to
  NumPy. Keywords tensorlib cannot honour (``order='F'``, ``kind=``...) raise TypeError naming
  the function and the argument.

Anything else returns NotImplemented, so NumPy raises its TypeError instead of quietly turning a
tensor into an ndarray. NumPy arrays among the operands are wrapped zero-copy (CPU); next to a
CUDA tensor they are an error naming the device. Other libraries' arrays (dask, CuPy...) are
NotImplemented, which lets their own protocol run.

The tables and protocols live in numpy_ufuncs.py (``__array_ufunc__``), numpy_functions/
(``__array_function__``) and numpy_operands.py (operand wrapping, ``out=``); this module
installs them.
"""
from __future__ import annotations

from .numpy_functions import HANDLED_FUNCTIONS, array_function, implements
from .numpy_operands import array_operand
from .numpy_ufuncs import ACCUMULATE, REDUCE, UFUNCS, array_ufunc
from .tensor import Tensor

__all__ = ["UFUNCS", "REDUCE", "ACCUMULATE", "HANDLED_FUNCTIONS", "array_ufunc",
           "array_function", "implements", "install"]


def install():
    """Attaches the protocols to Tensor and lets ops take NumPy arrays as operands (called by
    tensorlib's import)."""
    from .dispatch import binding
    Tensor.__array_ufunc__ = array_ufunc
    Tensor.__array_function__ = array_function
    binding.array_operand = array_operand
