"""Range fill for arange/linspace: out[i] = start + i * step, computed in float64 or int64."""
from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from .casting import cast_code, kernel_array
from .pointwise import load_generated_module
from ...runtime.cpu.streams import launch

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

_mods: dict = {}


def fill_range(t, start, step):
    """Writes start + i*step into the 1-D tensor t (int math when all inputs are ints)."""
    exact_int = t.dtype.kind in "iu" and all(isinstance(v, int) for v in (start, step))
    acc = _dt.int64 if exact_int else (_dt.complex128 if t.dtype.kind == "c" else _dt.float64)
    mod = _mods.get((acc, t.dtype))
    if mod is None:
        src = _SOURCE.format(store=cast_code(acc, t.dtype, "v"))
        mod = _mods[(acc, t.dtype)] = load_generated_module("range", src)
    arr = kernel_array(t)
    conv = acc.np_dtype.type
    launch(mod.fill_range, "fill_range", t, (), arr, t._offset, t._strides[0], t._numel,
           conv(start), conv(step))
