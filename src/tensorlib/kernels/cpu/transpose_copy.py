"""Same-dtype copies of transposed 2-D layouts (``x.T.contiguous()``, ``y.copy_(x.T)``) in
bands of source rows.

The pointwise copy loop walks the output along its unit stride, so a transposed input is read
down a column: one cache line and one TLB entry per element, and with a power-of-two leading
dimension every line of a column falls into the same cache sets (2048 x 2048 float32: 13 ms,
1.2 GB/s). Here a task takes a band of source rows, as many as one output cache line holds
(64 bytes: 16 float32 rows; at most 16, the forward streams a core's prefetchers follow), and a
block of ``COLS`` source columns: each output row's line is written whole at once and the
band's lines serve the next 64 / itemsize output rows from L1. A row stride that is a multiple
of 4096 bytes puts every row's lines in one L1 set (8 ways), so such bands are 8 rows
(:func:`band_rows`). Square 32 x 32 tiles, the first form, wrote half-lines and swept the
source once per tile column; against them (``x.T.contiguous()``, Zen 4, 2026-12-06): one
thread, 600 x 500 float32 194 -> 94 us, 3162 x 3162 27 -> 12 ms; two threads, 2048 x 2048
float32 4.1 -> 1.9 ms, 256 x 4096 0.94 -> 0.19 ms; after a 100 ms pause, 600 x 500 float32
918 -> 555 us (NumPy 353). The elements move as raw words of their size (a copy moves
bits), so one compiled loop per element width serves every dtype.
"""
from __future__ import annotations

import math
import types

import numpy as np
from numba import njit, prange

from .cold_route import ready_once
from .word_copy import WORDS as _WORDS, launch_copy

__all__ = ["copy_transposed", "copy_transposed_serial"]

LINE = 64      # bytes of one cache line
MAX_ROWS = 16  # source rows per band at most
COLS = 256     # source columns (output rows) per task


def _make(parallel, rows):
    rng = prange if parallel else range

    @njit(cache=True, nogil=True, error_model="numpy", parallel=parallel)
    def bands(out, o_off, a, a_off, n0, n1, s0, s1):
        # out[o_off + i0 + i1 * n0] = a[a_off + i0 * s0 + i1 * s1]; s1 is 1 for a transposed
        # input (see copy_transposed). Tasks go band by band, so a thread's run of tasks
        # shares its bands' rows. A whole band's inner loop has the constant trip count
        # ``rows``, which LLVM unrolls (one thread, 600 x 500: 1- and 2-byte words 175 ->
        # 70 us, 4- and 8-byte 126-145 -> 80-100 us against a trip count it cannot see).
        ncols = (n1 + COLS - 1) // COLS
        for task in rng(((n0 + rows - 1) // rows) * ncols):
            lo0 = (task // ncols) * rows
            lo1 = (task % ncols) * COLS
            hi1 = min(n1, lo1 + COLS)
            if lo0 + rows <= n0:
                for i1 in range(lo1, hi1):
                    o = o_off + i1 * n0 + lo0
                    p = a_off + i1 * s1 + lo0 * s0
                    for j in range(rows):
                        # (unsigned indices: no negative-index wraparound per element)
                        out[np.uint64(o + j)] = a[np.uint64(p + j * s0)]
            else:
                for i1 in range(lo1, hi1):
                    o = o_off + i1 * n0
                    p = a_off + i1 * s1
                    for i0 in range(lo0, n0):
                        out[np.uint64(o + i0)] = a[np.uint64(p + i0 * s0)]
    return bands


def band_rows(itemsize: int, row_bytes: int) -> int:
    """Source rows per band (8 or 16) for elements of ``itemsize`` bytes (1 to 8) whose rows
    are ``row_bytes`` apart: one output line's worth, at most MAX_ROWS, at most 8 (an L1 set's
    ways) per set the rows' lines cycle through (measured on Zen 4, 2048 x 2048 and 256 x 4096
    of 1- to 8-byte words: 8-row bands 1.3-2.6x faster than 16-row ones at a 4096-byte
    stride)."""
    sets = 4096 // math.gcd(row_bytes, 4096)  # 4 KiB: an L1 way (64 sets of 64-byte lines)
    return min(LINE // itemsize, MAX_ROWS, 8 * sets)


_KERNELS = {rows: types.SimpleNamespace(serial=_make(False, rows), parallel=_make(True, rows))
            for rows in (8, 16)}  # every band_rows value


def copy_transposed(out, src, lay, grain) -> bool:
    """Runs the copy of ``src`` into ``out`` (their TensorIterator ``lay``out, dims innermost
    first) in bands when it is a same-dtype 2-D copy whose input has unit stride along the
    output's outer dim, and returns True; False for any other copy (the pointwise loop runs).
    From ``grain`` elements (the copy loop's) the thread team shares the bands."""
    if len(lay.shape) != 2 or out._dtype is not src._dtype:
        return False
    (os0, os1), (s0, s1) = lay.strides
    n0, n1 = lay.shape
    size = out._dtype.itemsize
    word = _WORDS.get(size)
    if word is None or os0 != 1 or os1 != n0 or s1 != 1 or s0 <= 1:
        return False
    launch_copy(_KERNELS[band_rows(size, s0 * size)], out, src, word, lay, grain)
    return True


def copy_transposed_serial(dst, src) -> bool:
    """``dst.copy_(src)`` below the copy's parallel grain (no stream, no profiler: the caller,
    pointwise_fast.copy_strided, checked) for a C-order 2-D ``dst`` and a same-dtype ``src``
    stepping 1 down dst's columns (``x.T`` of a C-order x), on the serial band kernel once it
    is compiled or on disk (cold_route's rule: NumPy's strided copy serves until then, and it
    compiles in the background once such copies repeat); False (nothing written) otherwise.
    ``x.T.contiguous()`` against that copy: 250 x 400 float32 38 -> 33 us (NumPy 34), 512 x 256
    float64 292 -> 62 us (NumPy 290; measured 2026-12-06, Zen 4)."""
    size = dst._dtype.itemsize
    word = _WORDS.get(size)
    shape, (s1, s0) = dst._shape, src._strides
    if word is None or len(shape) != 2 or s1 != 1 or s0 <= 1:
        return False
    n1, n0 = shape
    rows = band_rows(size, s0 * size)
    kernels = _KERNELS[rows]
    args = (dst._storage.typed(word), dst._offset, src._storage.typed(word), src._offset,
            n0, n1, s0, 1)
    if not ready_once(("transposed copy", size, rows), n0 * n1, lambda: (kernels.serial, args)):
        return False
    kernels.serial(*args)
    return True
