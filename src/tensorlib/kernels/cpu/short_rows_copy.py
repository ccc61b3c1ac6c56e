"""Same-dtype copies into a dense destination whose rows are short (``tl.repeat(x, 8)``, an
expanded column made contiguous, ``x[:, :3].copy()``), row after row.

The pointwise copy loop pays its outer loop's index arithmetic and tile slicing per row, so for
rows under SHORT_INNER elements it runs the long dim innermost (``pointwise._long_inner``): a
pass writes one element per row, and the row's other elements come in later passes over the
same tile of TILE rows; once a tile's rows span more than the caches keep between passes, every
pass refetches them (``tl.repeat(x, 8)`` of 5e5 int64: 16 ms, NumPy's repeat 1.2). Here each
task takes a block of rows and writes each row whole, its elements from the source's two steps
(zero for a broadcast), as raw words of their size (a copy moves bits). Rows of 2 to 7
elements run a kernel compiled for their length (``CONST_LENGTHS``), contiguous source rows of
8-15 as two overlapping halves of 8 (``HALF_ROW``), and a broadcast source step (0) or a
contiguous one (1) is a constant of the kernel (``_kernel_key``). ``tl.repeat(x, r)``
against the loop nest (Zen 4, two threads, 2026-12-06): float32 2e6, r = 2 / 3 / 8 / 12:
0.98 -> 0.22, 1.7 -> 0.36, 13 -> 2.6, 30 -> 3.9 ms (NumPy 2.2, 3.5, 8.5, 13); int64 5e5
r = 8: 16 -> 0.77 ms (NumPy 1.2).
"""
from __future__ import annotations

import types

import numpy as np
from numba import njit, prange

from . import pointwise as _pointwise  # (SHORT_INNER, read per call: pointwise imports this)
from .cold_route import ready_once, ready_soon
from .word_copy import WORDS as _WORDS, launch_copy

__all__ = ["copy_short_rows", "copy_short_rows_serial"]

# Rows of 8+ elements and fewer bytes read at a step other than 0 or 1 keep the loop nest's long
# inner loop (1- and 2-byte rows of 8-15 elements: 1.00-1.14x the nest's time on one thread;
# 32+ bytes 0.2-0.8x)
ROW_BYTES_MIN = 32
ROWS_PER_TASK = 4096


@njit(inline="always")
def _u(a, p, step, k):
    # a[p + k step] by an unsigned index (no negative-index wraparound: a negative step's
    # offset is its view's first element, so no index goes below 0)
    return a[np.uint64(p + k * step)]


@njit(inline="always")
def _put8(out, o, v0, v1, v2, v3, v4, v5, v6, v7):
    out[np.uint64(o)] = v0
    out[np.uint64(o + 1)] = v1
    out[np.uint64(o + 2)] = v2
    out[np.uint64(o + 3)] = v3
    out[np.uint64(o + 4)] = v4
    out[np.uint64(o + 5)] = v5
    out[np.uint64(o + 6)] = v6
    out[np.uint64(o + 7)] = v7


def _make(parallel, length, step):
    rng = prange if parallel else range
    halves = length == HALF_ROW  # rows of HALF_ROW .. 2 HALF_ROW - 1 elements, as two halves
    one_value = step == 0        # a broadcast row: one source element

    @njit(cache=True, nogil=True, error_model="numpy", parallel=parallel)
    def rows(out, o_off, a, a_off, n0, n1, s0_arg, s1):
        # out[o_off + i0 + i1 * n0] = a[a_off + i0 * s0 + i1 * s1]: n1 rows of n0 elements.
        # ``length`` (a constant of the compiled code, 0: none) is n0 for the short lengths
        # whose unrolled row beats a loop (see CONST_LENGTHS), or HALF_ROW for rows of 8 to 15:
        # their first and last 8 elements, each an unrolled copy (the overlap is written twice,
        # with the same bits). ``step`` (-1: none) is s0 as a constant. A row's loads all come
        # before its stores: out and a may alias as far as LLVM knows, so a load after a store
        # is redone, and a store between loads keeps them from merging into vector moves.
        s0 = s0_arg if step < 0 else step
        m = n0 if halves or not length else length
        q = n0 - HALF_ROW
        for t in rng((n1 + ROWS_PER_TASK - 1) // ROWS_PER_TASK):
            lo = t * ROWS_PER_TASK
            for i1 in range(lo, min(n1, lo + ROWS_PER_TASK)):
                o = o_off + i1 * m
                p = a_off + i1 * s1
                if one_value:
                    v = a[np.uint64(p)]
                    for i0 in range(m):
                        out[np.uint64(o + i0)] = v
                elif halves:
                    v0, v1, v2, v3 = _u(a, p, s0, 0), _u(a, p, s0, 1), _u(a, p, s0, 2), \
                        _u(a, p, s0, 3)
                    v4, v5, v6, v7 = _u(a, p, s0, 4), _u(a, p, s0, 5), _u(a, p, s0, 6), \
                        _u(a, p, s0, 7)
                    r = p + q * s0
                    w0, w1, w2, w3 = _u(a, r, s0, 0), _u(a, r, s0, 1), _u(a, r, s0, 2), \
                        _u(a, r, s0, 3)
                    w4, w5, w6, w7 = _u(a, r, s0, 4), _u(a, r, s0, 5), _u(a, r, s0, 6), \
                        _u(a, r, s0, 7)
                    _put8(out, o, v0, v1, v2, v3, v4, v5, v6, v7)
                    _put8(out, o + q, w0, w1, w2, w3, w4, w5, w6, w7)
                else:
                    for i0 in range(m):
                        out[np.uint64(o + i0)] = a[np.uint64(p + i0 * s0)]
    return rows


# Rows of 2 to 7 elements get a kernel compiled for their length: LLVM unrolls the row. One
# thread, 1e5 rows (Zen 4, 2026-12-06): 0.02-0.35 of the loop's time for broadcast rows,
# 0.33-0.97 for column slices (one case 1.24: 8-byte words, rows of 4). Rows of 8-15 elements
# get one for two overlapping halves where the source row is contiguous, and a broadcast row of
# any length one for its single value (12500 rows, one thread, 2-, 4- and 8-byte words: 0.32-0.96
# and 0.50-0.64 of the loop's time; unrolled rows of 8+ at other steps ran 0.6-1.6x, halves
# 1.3-2.7x).
CONST_LENGTHS = range(2, 8)
HALF_ROW = 8
_kernels: dict = {}  # _kernel_key's (length, step) -> its serial and parallel kernels


def _kernel_key(n0, s0):
    """(length, step) of the kernels for rows of n0 elements read at source step s0: a
    constant length for 2-7 elements, halves for contiguous rows of 8-15 (for other steps the
    loaded halves ran 1.3-2.7x the loop's time), a constant step 0 or 1."""
    step = s0 if s0 == 0 or s0 == 1 else -1
    if n0 in CONST_LENGTHS:
        return n0, step
    return (HALF_ROW if step == 1 and HALF_ROW <= n0 < 2 * HALF_ROW else 0), step


def _kernels_for(n0, s0):
    key = _kernel_key(n0, s0)
    pair = _kernels.get(key)
    if pair is None:
        pair = _kernels[key] = types.SimpleNamespace(serial=_make(False, *key),
                                                     parallel=_make(True, *key))
    return pair


def _fits(size, n0, n1, s0):
    # (rows of one element are a strided 1-D copy: their dim's stride is no row step, and the
    # halves would write 8 elements per row)
    return (size in _WORDS and 2 <= n0 < _pointwise.SHORT_INNER and n1 > 4 * n0
            and (n0 in CONST_LENGTHS or s0 == 0 or s0 == 1 or n0 * size >= ROW_BYTES_MIN))


def copy_short_rows(out, src, lay, grain) -> bool:
    """Runs the copy of ``src`` into ``out`` (their TensorIterator ``lay``out, dims innermost
    first) row by row when it is a same-dtype 2-D copy into dense rows of 2 to SHORT_INNER - 1
    elements (rows of 8 or more: at least ROW_BYTES_MIN bytes), and returns True; False for
    any other copy. From ``grain`` elements the thread team shares the rows."""
    if len(lay.shape) != 2 or out._dtype is not src._dtype:
        return False
    os0, os1 = lay.strides[0]
    n0, n1 = lay.shape
    size = out._dtype.itemsize
    s0 = lay.strides[1][0]
    if os0 != 1 or os1 != n0 or not _fits(size, n0, n1, s0):
        return False
    launch_copy(_kernels_for(n0, s0), out, src, _WORDS[size], lay, grain)
    return True


def copy_short_rows_serial(dst, src, small=False) -> bool:
    """``dst.copy_(src)`` below the copy's parallel grain (no stream, no profiler: the caller,
    pointwise_fast.copy_strided, checked) for a C-order 2-D ``dst`` with short rows, as
    copy_short_rows takes them, on the serial kernel once it is compiled or on disk
    (cold_route's rule; for a ``small`` copy, one the caller has a cheap loop for, checked at
    most every RECHECK_S seconds while it is not); False (nothing written) otherwise."""
    size = dst._dtype.itemsize
    n1, n0 = dst._shape
    s1, s0 = src._strides
    if not _fits(size, n0, n1, s0):
        return False
    word = _WORDS[size]
    args = (dst._storage.typed(word), dst._offset, src._storage.typed(word), src._offset,
            n0, n1, s0, s1)
    kernels = _kernels_for(n0, s0)
    if not (ready_soon if small else ready_once)(("short rows copy", size)
                                                 + _kernel_key(n0, s0), n0 * n1,
                                                 lambda: (kernels.serial, args)):
        return False
    kernels.serial(*args)
    return True
