"""The Numba source templates of the CPU reduction and scan kernels, and the assembly of one
module per (op, dtypes) (kernels/cpu/reduction.py picks the variant and launches it).

The templates live in reduce_value_source.py (value reductions: ValueSpec), reduce_arg_source.py
(argmax / argmin: arg_source) and reduce_scan_source.py (cumsum / cumprod: scan_source), over
the shared pieces of reduce_common.py (header, literals, decorators, template filling).
The generated text is the kernel cache's key: edits to the templates recompile the reduction
kernels once (the header still names kernels/cpu/reduction.py, as before the split, so the text
is unchanged).
"""
from __future__ import annotations

from .reduce_arg_source import arg_source
from .reduce_common import BLOCK, FAN, extreme, lit, np_type
from .reduce_scan_source import scan_source
from .reduce_value_source import ValueSpec

__all__ = ["ValueSpec", "arg_source", "scan_source", "lit", "extreme", "np_type", "BLOCK",
           "FAN"]
