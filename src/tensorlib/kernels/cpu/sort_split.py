"""Value sorts on two threads: many rows (NumPy sorts each half of the rows on its own thread,
the GIL released) and one long row, split at a sampled pivot into the values
below it and the rest (a kernel per half of the row, on two threads: counts, then each half
scatters to its own offsets), then NumPy sorts the two parts at once, one per thread (its
AVX-512 sort releases the GIL).

NumPy sorts one long row on one thread. Measured 2026-12-05 on this project's 2-core VM, 1e7
float32: ``np.sort`` 45-50 ms; its two halves sorted on two threads 24-26 ms; merging two sorted
halves instead costs ~3.7 ns per element and thread (each step's loads wait for the previous
comparison), as much as the sort it saves, so the split comes first and nothing is merged.

The parts hold the same values as the row, the lower part every value below the pivot, the
upper part the rest with nan (which compares false) last, so the result holds ``np.sort``'s
values in its order; the caller then gives the nan run and the zero run the input's own bit
patterns (sorting.py's ``_np_fix_row``), as after one NumPy sort. A split leaving less than
an eighth of the row on one side (many values equal to the pivot) writes nothing: NumPy's sort
of the whole row serves it.
"""
from __future__ import annotations

import threading

import numpy as np
from numba import njit

from ...runtime.cpu import cores

__all__ = ["MIN_N", "ROWS_MIN", "sort_into", "sort_rows"]

MIN_N = 1 << 20  # shorter rows: one NumPy sort (the split pass and a thread's start cost more)
# values in all the rows below which one thread sorts them: a thread's start and join cost
# ~0.15 ms; two threads broke even at ~5e5 float32 values (measured 2026-12-05)
ROWS_MIN = 1 << 20
SAMPLE = 4096    # values the pivot is the median of


@njit(cache=True, nogil=True, error_model="numpy")
def split_chunk(src, lo, hi, pivot, dst, p, q):
    """How many of src[lo:hi] are below pivot; with p >= 0 also writes them to dst[p:] and
    the others to dst[q:], each in src's order (one signature for both: one compile)."""
    k = 0
    if p < 0:
        for i in range(lo, hi):
            k += np.int64(src[i] < pivot)
        return k
    last = dst.shape[0] - 1
    for i in range(lo, hi):
        v = src[i]
        t = np.int64(v < pivot)
        # a select of the index (no branch to mispredict), kept inside dst even if src changed
        # since it was counted (another thread writing it: a wrong result, never a stray write)
        dst[min(p if t else q, last)] = v
        p += t
        q += 1 - t
        k += t
    return k


def _both(fn, first, second):
    """fn(*first) on a new thread and fn(*second) on this one (the kernels release the GIL;
    Python threads, not a Numba team: an OpenMP team's threads spin for a while after their
    loop and slowed the NumPy sorts that follow to 1.6-1.9x their time); their results."""
    res = [None, None]  # the other thread's result, or the exception it raised

    def run():
        try:
            res[0] = fn(*first)
        except BaseException as e:  # noqa: BLE001 - raised again on the calling thread
            res[1] = e

    other = threading.Thread(target=run, name="tensorlib-sort-part")
    other.start()
    try:
        mine = fn(*second)
    finally:
        other.join()  # (never leave it running on memory the caller owns)
    if res[1] is not None:
        raise res[1]
    return res[0], mine


def sort_into(a, out) -> bool:
    """out <- a sorted ascending (1-D arrays of one dtype, not overlapping) on two threads when
    a is long, two threads are free, the split kernel is compiled (it compiles in the
    background once long sorts repeat: cores.parallel_ready) and the pivot splits it well;
    False (out unspecified) otherwise: the caller sorts with NumPy."""
    n = a.shape[0]
    if n < MIN_N or cores.threads(own=True) < 2:
        return False
    pivot = np.sort(a[::n // SAMPLE])[SAMPLE // 2]
    if pivot != pivot:
        return False  # mostly nan
    h = n // 2
    if not cores.parallel_ready(cores.twins(split_chunk), (a, 0, h, pivot, out, 0, 0), n):
        return False
    c0, c1 = _both(split_chunk, (a, 0, h, pivot, out, -1, 0), (a, h, n, pivot, out, -1, 0))
    below = c0 + c1
    if below < n // 8 or n - below < n // 8:
        return False  # a lopsided split (many values equal to the pivot): one NumPy sort
    _both(split_chunk, (a, 0, h, pivot, out, 0, below), (a, h, n, pivot, out, c0, below + h - c0))
    _both(np.ndarray.sort, (out[below:],), (out[:below],))
    return True


def sort_rows(o) -> bool:
    """Sorts each row of 2-D array ``o`` in place, half of the rows on another thread, when
    there is enough work and two threads are free (each row gets the very NumPy sort it gets
    on one thread); False (nothing done) otherwise."""
    rows, n = o.shape
    if rows < 2 or rows * n < ROWS_MIN or cores.threads(own=True) < 2:
        return False
    h = rows // 2
    _both(np.ndarray.sort, (o[h:], -1), (o[:h], -1))  # (-1: the axis)
    return True
