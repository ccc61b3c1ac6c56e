"""Range fill for arange/linspace: out[i] = start + i * step, computed in float64 or int64.

``fill_range`` is the stub kernel (any 1-D tensor, launched on the current CPU stream);
``fill_range.dense`` the creation ops' small-call path: the same loop over a contiguous tensor
on its raw address (a module of its own, so the full path's keeps its text and disk cache)."""
from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ...runtime.cpu.streams import launch
from .casting import cast_code, kernel_array
from .pointwise import _entry_point, _kernel_np_name, load_generated_module
from .pointwise_fast import host_call

_SOURCE = """\
import numpy as np
from numba import njit
from tensorlib.kernels.cpu.scalar_math import *
from tensorlib.kernels.cpu.casting import *


@njit(cache=True, nogil=True, error_model='numpy')
def fill_range(out, offset, stride, n, start, step):
    for i in range(n):
        v = start + i * step
        out[offset + i * stride] = {store}
"""

# The same element expression over n contiguous elements at a raw address (what fill_range
# computes for offset o, stride 1: the same values bit for bit).
_FLAT_SOURCE = """\
import numpy as np
from numba import njit
from tensorlib.kernels.cpu.scalar_math import *
from tensorlib.kernels.cpu.casting import *
from tensorlib.kernels.cpu.addresses import array_at


@njit(cache=True, nogil=True, error_model='numpy')
def flat(n, out_addr, start, step):
    out = array_at(out_addr, n, np.{elem})
    for i in range(n):
        v = start + i * step
        out[i] = {store}
"""

_mods: dict = {}
_flats: dict = {}  # (exact int math, dtype) -> (flat entry point, accumulator scalar type)
_I64_MIN, _I64_END = -(1 << 63), 1 << 63


def _accumulator(dtype, start, step):
    exact_int = dtype.kind in "iu" and isinstance(start, int) and isinstance(step, int)
    return _dt.int64 if exact_int else (_dt.complex128 if dtype.kind == "c" else _dt.float64)


def fill_range(t, start, step):
    """Writes start + i*step into the 1-D tensor t (int math when all inputs are ints)."""
    acc = _accumulator(t.dtype, start, step)
    mod = _mods.get((acc, t.dtype))
    if mod is None:
        src = _SOURCE.format(store=cast_code(acc, t.dtype, "v"))
        mod = _mods[(acc, t.dtype)] = load_generated_module("range", src)
    arr = kernel_array(t)
    conv = acc.np_dtype.type
    launch(mod.fill_range, "fill_range", t, (), arr, t._offset, t._strides[0], t._numel,
           conv(start), conv(step))


def _flat_for(dtype, exact_int):
    key = (exact_int, dtype)
    ent = _flats.get(key)
    if ent is None:
        acc = _dt.int64 if exact_int else (_dt.complex128 if dtype.kind == "c" else _dt.float64)
        src = _FLAT_SOURCE.format(elem=_kernel_np_name(dtype), store=cast_code(acc, dtype, "v"))
        mod = load_generated_module("range_flat", src)
        conv = acc.np_dtype.type
        ent = _flats[key] = (_entry_point(mod.flat, 1, [conv(0), conv(0)]), conv)
    return ent


def fill_range_dense(t, start, step):
    """fill_range(t, start, step) for a non-empty contiguous 1-D CPU tensor ``t`` (the creation
    ops' fresh results): the flat loop on t's address, with the values converted as fill_range
    converts them (the same errors). Returns None (nothing written) while a user CPU stream is
    current: fill_range launches on it then. Under the profiler the loop is recorded as
    fill_range's launch records it."""
    dtype = t._dtype
    ts, tp = type(start), type(step)
    exact_int = dtype.kind in "iu" and isinstance(start, int) and isinstance(step, int)
    ent = _flats.get((exact_int, dtype))
    flat, conv = ent if ent is not None else _flat_for(dtype, exact_int)
    st = t._storage
    call = host_call(flat, "fill_range", st)
    if call is None:
        return None
    # (Python ints in int64's range and floats pass as they are: the entry point reads them as
    # conv would; anything else is converted by conv, which raises what fill_range raises)
    if exact_int:
        if not (ts is int and _I64_MIN <= start < _I64_END):
            start = conv(start)
        if not (tp is int and _I64_MIN <= step < _I64_END):
            step = conv(step)
    elif conv is np.float64:
        if ts is not float:
            start = conv(start)
        if tp is not float:
            step = conv(step)
    else:
        start, step = conv(start), conv(step)
    call(t._numel, st._ptr + t._offset * dtype.itemsize, start, step)
    return t


fill_range.dense = fill_range_dense
