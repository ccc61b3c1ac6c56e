"""Operands of NumPy's protocols (numpy_ufuncs.py, numpy_functions/): NumPy arrays (and, for
functions, lists and scalars) wrapped zero-copy as CPU tensors, next to a CUDA tensor an error
naming the device; other libraries' arrays raise _Unhandled, which the protocols answer with
NotImplemented; ``out=`` targets (a Tensor or a writeable NumPy array) written by NumPy's rules.
``array_operand`` is the same wrap for op operands (installed into dispatch/binding.py).
"""
from __future__ import annotations

import numpy as np

import tensorlib as tl
from .tensor import Tensor

__all__ = ["array_operand"]

_NoValue = np._NoValue  # NumPy's "argument not given" marker in its own signatures


class _Unhandled(Exception):
    """An operand of another library: the protocol answers NotImplemented."""


# ------------------------------------------------------------------------------- operands
def _device_of(values):
    for v in values:
        if isinstance(v, Tensor):
            return v.device
    return None


def _check_host(device, fname, arg):
    if device is not None and device.type != "cpu":
        raise TypeError(f"numpy.{fname}(): argument '{arg}' is a NumPy array (host memory) but "
                        f"the tensors are on '{device}'; move it first, e.g. "
                        f"tl.asarray(arr, device='{device}')")


def _tensor(x, fname, arg, device=None, scalars=False):
    """``x`` as a Tensor: tensors as they are, NumPy arrays (and, for functions, lists) wrapped
    without a copy on the CPU; Python / NumPy scalars kept as scalars when ``scalars``."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, np.generic) and scalars:
        return x.item()
    if isinstance(x, (bool, int, float, complex)) and scalars:
        return x
    if isinstance(x, (np.ndarray, np.generic, list, tuple, bool, int, float, complex)):
        _check_host(device, fname, arg)
        arr = np.asarray(x)
        if arr.dtype.kind not in "biufc" and arr.dtype.name != "bfloat16":  # ml_dtypes
            raise TypeError(f"numpy.{fname}(): argument '{arg}' has dtype {arr.dtype}, which "
                            f"tensorlib does not have")
        return tl.asarray(arr)
    raise _Unhandled


def _unsupported(fname, arg, value):
    raise TypeError(f"numpy.{fname}(): argument '{arg}'={value!r:.60} is not supported for "
                    f"tensorlib tensors")


def _given(v):
    return v is not _NoValue


def _out_target(out, fname):
    """(tensor to write, object to return) for NumPy's ``out=`` (a Tensor, or a writeable CPU
    NumPy array written through a zero-copy view)."""
    if isinstance(out, tuple):
        if len(out) != 1:
            raise TypeError(f"numpy.{fname}(): argument 'out' must hold one array, got "
                            f"{len(out)}")
        out = out[0]
    if isinstance(out, Tensor):
        return out, out
    if isinstance(out, np.ndarray):
        if not out.flags.writeable:
            raise ValueError(f"numpy.{fname}(): argument 'out' is a read-only NumPy array")
        return tl.asarray(out), out
    raise TypeError(f"numpy.{fname}(): argument 'out' must be a tensorlib Tensor or a NumPy "
                    f"array, got {type(out).__module__}.{type(out).__name__}")


def _store(res, out, fname, casting="same_kind"):
    """Writes ``res`` into ``out`` (NumPy's out= rules: same shape, cast allowed by
    ``casting``); returns what NumPy returns."""
    if out is None:
        return res
    target, ret = _out_target(out, fname)
    if not isinstance(res, Tensor):
        res = tl.asarray(res, device=target.device)
    if target.shape != res.shape:
        raise ValueError(f"numpy.{fname}(): argument 'out' has shape {target.shape}, the result "
                         f"has shape {res.shape}")
    if not tl.can_cast(res.dtype, target.dtype, casting):
        raise TypeError(f"numpy.{fname}(): can't write the {res.dtype} result into argument "
                        f"'out' of dtype {target.dtype} with casting={casting!r}")
    target.copy_(res)
    return ret



def array_operand(x, op, arg):
    """A NumPy array given where an op takes a Tensor: wrapped without a copy (a CPU tensor
    over its memory; byte-swapped or misaligned data is copied). Next to a CUDA tensor the op
    then reports the two devices."""
    if x.dtype.kind not in "biufc" and x.dtype.name != "bfloat16":  # ml_dtypes' bfloat16
        raise TypeError(f"{op}(): argument '{arg}' is a NumPy array of dtype {x.dtype}, which "
                        f"tensorlib does not have")
    return tl.asarray(x)
