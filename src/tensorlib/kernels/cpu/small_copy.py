"""Small same-dtype copies from a strided source into a dense destination on raw addresses
(``x.T.contiguous()``, ``x[::2].copy()`` of a few thousand elements).

NumPy's strided assignment needs an array view of each side (~0.5 us each to make) before its
own ~0.5 us call: most of a 1,000-element transpose copy's time. These loops take the storages'
addresses and the source's element strides as plain integers (one compiled entry point per
element width: a copy moves bits, as ``transpose_copy.py``'s bands do), for sources whose
layout folds to two dims.
"""
from __future__ import annotations

import numpy as np

from .addresses import array_at
from .pointwise import LONG_STEP_MAX, SHORT_INNER, _entry_point
from .word_copy import WORDS as _WORDS

__all__ = ["MAX_ELEMENTS", "HOT_CALLS", "fold_2d", "copy_loop"]

# Above this many elements the per-call savings no longer matter, and NumPy's assignment (which
# orders its loops by the strides) or the tiled transpose copy serves large layouts better.
MAX_ELEMENTS = 1 << 14

# as the dispatch fast paths wait before making their runners (ops/pointwise.py HOT_CALLS)
HOT_CALLS = 32

_loops: dict = {}
_calls: dict = {}  # itemsize -> copies seen before its loop exists
_folds: dict = {}  # (shape, strides) -> fold_2d's answer


def fold_2d(shape, strides):
    """(n0, n1, s0, s1): a layout of ``shape`` / element ``strides`` as two nested dims
    (row-major: element (i0, i1) at i0 * s0 + i1 * s1), dims of size 1 dropped and a dim
    merged into the next one where it steps over it exactly; None when more than two dims
    remain. Remembered per layout (working it out costs more than a small copy)."""
    key = (shape, strides)
    fold = _folds.get(key, False)
    if fold is False:
        if len(_folds) >= 1024:
            _folds.clear()
        fold = _folds[key] = _fold(shape, strides)
    return fold


def _fold(shape, strides):
    dims = [(n, s) for n, s in zip(shape, strides) if n != 1]
    merged = []
    for n, s in dims:
        if merged and merged[-1][1] == s * n:
            m, _ = merged.pop()
            merged.append((m * n, s))
        else:
            merged.append((n, s))
    if len(merged) > 2:
        return None
    while len(merged) < 2:
        merged.insert(0, (1, 0))
    (n0, s0), (n1, s1) = merged
    return n0, n1, s0, s1


def _make(word):
    from numba import njit

    @njit(cache=True, nogil=True, error_model="numpy")
    def copy2d(n, dst_addr, src_addr, n1, span, first, s0, s1):
        # dst[i0 * n1 + i1] = src[first + i0 * s0 + i1 * s1]; src spans ``span`` elements from
        # src_addr (its lowest element), so every index is in [0, span)
        dst = array_at(dst_addr, n, word)
        src = array_at(src_addr, span, word)
        n0 = n // n1 if n1 else 0
        if n1 < SHORT_INNER and n0 > 4 * n1 and abs(s0) <= LONG_STEP_MAX:
            # short rows (repeat's (n, 2) broadcast): the long dim innermost, as the loop
            # nests order it (pointwise.tile_meta): tl.repeat(x, 2) of 1e3 float32, the copy
            # 2.7 -> 0.7 us
            for i1 in range(n1):
                col = dst[i1:]
                q = first + i1 * s1
                for i0 in range(n0):
                    col[np.uint64(i0 * n1)] = src[np.uint64(q + i0 * s0)]
            return
        for i0 in range(n0):
            row = dst[i0 * n1:(i0 + 1) * n1]
            p = first + i0 * s0
            for i1 in range(n1):
                row[i1] = src[np.uint64(p + i1 * s1)]
    return copy2d


def copy_loop(itemsize):
    """The compiled loop ``(n, dst_addr, src_addr, n1, span, first, s0, s1)`` for elements of
    ``itemsize`` bytes, or None: for widths it has no word for (complex128), and for a width's
    first HOT_CALLS calls (compiling it costs ~0.1-0.3 s in a process with empty caches,
    where NumPy's copy costs ~1 us more: a script that copies a few times never compiles)."""
    fn = _loops.get(itemsize)
    if fn is None:
        word = _WORDS.get(itemsize)
        seen = _calls[itemsize] = _calls.get(itemsize, 0) + 1
        if word is None or seen < HOT_CALLS:
            return None
        fn = _loops[itemsize] = _entry_point(_make(word), 2, (), (1, 0, 0, 0, 0))
    return fn
