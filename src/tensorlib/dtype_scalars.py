"""Python scalars and dtypes: a scalar's default dtype (``python_scalar_dtype``) and a scalar
as a value of an op's compute dtype (``scalar_to_compute``, on every op call with a scalar)."""

from __future__ import annotations

import numpy as np

from .dtype_info import iinfo
from .dtype_table import DType, _from_np, bool_, complex64, float16, float32, int64


def python_scalar_dtype(value) -> DType:
    """Default dtype of a Python scalar value: bool, int64, float32, complex64.
    NumPy scalars keep their own dtype."""
    if isinstance(value, np.generic):
        d = _from_np(value.dtype)
        if d is not None:
            return d
    elif isinstance(value, bool):
        return bool_
    elif isinstance(value, int):
        return int64
    elif isinstance(value, float):
        return float32
    elif isinstance(value, complex):
        return complex64
    raise TypeError(f"python_scalar_dtype(): expected a Python bool, int, float or complex, got {value!r}")


class ScalarOutOfRange(OverflowError):
    """A Python int outside the integer dtype an op computes in (``value`` of argument
    ``arg``, ``dtype``): an error, as in NumPy 2, but for comparisons, whose answer is then
    the same for every element (ops/pointwise.py)."""

    def __init__(self, op, arg, value, dtype):
        super().__init__(f"{op}(): Python integer {value} is out of bounds for {dtype}")
        self.arg, self.value, self.dtype = arg, value, dtype


# (op, argument) -> the least Python scalar an integer computation of the op takes (ops.yaml
# integer_scalar_min, filled by dispatch/registration.py): pow's exponent 0, as in NumPy and
# PyTorch, where 2 ** -1 has no integer answer
INTEGER_SCALAR_MIN: dict = {}


def scalar_to_compute(value, compute, op, arg):
    """A Python scalar as a NumPy scalar of the compute dtype, for every backend's kernels.

    Out-of-range ints are an error (as in NumPy 2) rather than a silent wrap; a float that is
    not integral, or complex into a real op, is a TypeError; an integer computation's value
    below the op's INTEGER_SCALAR_MIN a ValueError."""
    if compute.kind in "iu":
        if isinstance(value, float):
            if not value.is_integer():  # also False for nan and inf
                raise TypeError(f"{op}(): argument '{arg}' = {value!r} is not an integer, but "
                                f"the op computes in {compute}")
            value = int(value)
        info = iinfo(compute)
        if not info.min <= value <= info.max:
            raise ScalarOutOfRange(op, arg, value, compute)
        low = INTEGER_SCALAR_MIN.get((op, arg))
        if low is not None and value < low:
            raise ValueError(f"{op}(): argument '{arg}' = {value!r} is below {low}, which the "
                             f"op does not take in integer arithmetic ({compute}); use a "
                             f"floating-point tensor")
    if compute is bool_ and not isinstance(value, bool):
        if isinstance(value, (float, complex)) or value not in (0, 1):
            raise TypeError(f"{op}(): argument '{arg}' = {value!r} can't be used with bool "
                            f"tensors")
    if compute.kind != "c" and isinstance(value, complex):
        raise TypeError(f"{op}(): argument '{arg}' = {value!r} is complex but the op computes "
                        f"in {compute}")
    to = compute.np_dtype.type
    lim = FINITE_MAX.get(compute)
    if lim is None or (abs(value.real) <= lim and abs(value.imag) <= lim):
        # (no overflow to silence: errstate costs ~1 us a call; parts, as abs() of a complex
        # near the float range raises)
        return to(value)
    with np.errstate(all="ignore"):
        return to(value)


# the largest finite values of the types whose conversion from a Python number can overflow
# (NumPy warns then; complex64: of each part)
FINITE_MAX = {d: float(np.finfo(d.np_dtype).max) for d in (float16, float32, complex64)}
