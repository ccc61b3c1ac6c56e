"""Data types of tensorlib: the DType singletons, lookup, promotion and casting.

The public face of the dtype family (every name importers use lives on here):
``dtype_table.py`` (the ``DType`` objects, defaults, lookup), ``dtype_promotion.py``
(``promote_types``, ``result_type``, ``can_cast``), ``dtype_info.py`` (``finfo``, ``iinfo``,
``isdtype``), ``dtype_scalars.py`` (``python_scalar_dtype``, ``scalar_to_compute``).

Only NumPy is imported here so that the dtype machinery stays usable (and
cheap to import) without the compiled backends.
"""

from __future__ import annotations

from .dtype_info import finfo, iinfo, isdtype
from .dtype_promotion import can_cast, promote_types, result_type
from .dtype_scalars import python_scalar_dtype
from .dtype_scalars import scalar_to_compute  # noqa: F401 - the backends' scalar conversion
from .dtype_scalars import INTEGER_SCALAR_MIN  # noqa: F401 - filled from ops.yaml
from .dtype_table import _BY_NAME  # noqa: F401 - dask_backend looks dtype names up here
from .dtype_table import (ALL_DTYPES, DType, bfloat16, bool_, complex64, complex128,
                          complex_for, default_complex, default_float, default_index,
                          default_int, float16, float32, float64, from_numpy_dtype, int8,
                          int16, int32, int64, real_for, to_dtype, to_numpy_dtype, uint8,
                          uint16, uint32, uint64)

__all__ = [
    "DType",
    "bool_",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "ALL_DTYPES",
    "to_dtype",
    "from_numpy_dtype",
    "to_numpy_dtype",
    "promote_types",
    "result_type",
    "can_cast",
    "finfo",
    "iinfo",
    "isdtype",
    "default_float",
    "default_int",
    "default_complex",
    "default_index",
    "complex_for",
    "real_for",
    "python_scalar_dtype",
]
