"""First calls of the CPU sorts (kernels/cpu/sorting.py), while a combination's full kernels
are neither compiled in this process nor in the disk cache.

The full kernels fuse key transform, digit counts and passes, and cost 1-4 s each to compile
(vrow, prepare + rows for argsort); a script that sorts once would wait for that. Here the
elementwise steps are NumPy array operations on the raw unsigned view (no compile) and the
one sequential step, a stable counting-sort pass of (key, position) pairs, is ``pair_pass``:
a few lines of Numba, compiled once per key width (0.1-0.2 s) and shared by sort, argsort
and unique of every dtype of that width. LSD passes over the byte digits that vary of the
same canonical keys the full kernels sort (kernels/cpu/sort_keys.py: nan -> all ones, -0.0 ->
+0.0, descending flips every bit), then one stable pass by row (NumPy's argsort of the row
numbers): the result is the stable sort permutation, so ``raw[order]`` is bit for bit the
full value sort (nan payloads and zero signs in input order: no fix-up needed) and ``order``
the full argsort. About 2-4x the full kernels' time: it serves until they are compiled.
"""
from __future__ import annotations

import sys

import numba
import numpy as np

__all__ = ["cold_order", "canonical_keys", "pair_pass"]



@numba.njit(cache=True, nogil=True, error_model="numpy")
def pair_pass(k, p, kd, pd, offs, shift, mask):
    # stable counting-sort pass of (key, position) pairs on the digit (k >> shift) & mask:
    # sequential reads, one write stream per digit value (offs: each one's next slot)
    for i in range(k.size):
        v = k[i]
        d = (v >> shift) & mask
        j = offs[d]
        offs[d] = j + 1
        kd[j] = v
        pd[j] = p[i]


def canonical_keys(raw, spec, desc):
    """The order keys of ``raw`` (unsigned view) for key spec ``(width, kind, exponent mask)``,
    as the generated module's ``tokey`` (^ all ones when descending), by NumPy operations; a
    new array."""
    width, kind, expm = spec
    kt = raw.dtype.type
    allm = kt((1 << (8 * width)) - 1)
    sb = kt(1 << (8 * width - 1))
    if kind == "u":
        k = raw ^ allm if desc else raw.copy()
        return k
    if kind == "i":
        k = raw ^ sb
    else:
        # negatives: all bits flipped; positives: sign bit set; then nan -> all ones and
        # either zero -> the key of +0.0
        k = raw ^ np.where((raw & sb) != 0, allm, sb)
        a = raw & kt(allm ^ sb)
        k[a > kt(expm)] = allm
        k[a == 0] = sb
    if desc:
        np.bitwise_xor(k, allm, out=k)
    return k


def cold_order(raw, rows, n, spec, desc):
    """The stable sort permutation of each of the ``rows`` rows of ``n`` elements of ``raw``
    (unsigned view, contiguous): int64 positions into ``raw``, row r's in [r * n, (r + 1) * n)."""
    k = canonical_keys(raw, spec, desc)
    width = spec[0]
    total = raw.size
    kt = k.dtype.type
    # every byte digit's counts up front (LSD counts do not depend on the order)
    byte = k.view(np.uint8).reshape(total, width)
    o = np.arange(total, dtype=np.int64)
    kd = np.empty_like(k)
    od = np.empty_like(o)
    for ps in range(width):
        cnt = np.bincount(byte[:, ps if sys.byteorder == "little" else width - 1 - ps],
                          minlength=256)
        if cnt.max() == total:
            continue  # every key has this digit
        pair_pass(k, o, kd, od, np.cumsum(cnt) - cnt, kt(8 * ps), kt(255))
        k, kd, o, od = kd, k, od, o
    if rows > 1:
        # most significant: the row (a stable pass, so each row keeps its key order)
        r = o // n
        o = o[np.argsort(r.astype(np.uint16) if rows <= 1 << 16 else r, kind="stable")]
    return o
