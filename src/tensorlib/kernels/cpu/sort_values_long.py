"""Numba source template of the CPU value sort of one long row of 1-byte keys (part of the
value-sort module that ``sort_values_source._values_source`` assembles for that key width, after
``_VALUES_TAIL``): ``vlong``, a counting sort whose per-chunk histograms run on all threads
(``rawhist``). Wider values sort through NumPy's sort (kernels/cpu/sorting.py)."""
from __future__ import annotations

_LONG_ROW = """
@njit(nogil=True, error_model='numpy')
def rawhist(src, lo, hi, h):
    h[:] = 0
    for i in range(lo, hi):
        h[np.uint64(src[i])] += 1


@njit(cache=True, nogil=True, error_model='numpy', parallel=True)
def vlong(src, out, desc, nch):
    # One long row of 1-byte values: already in order (a check that stops early on other
    # data), else a counting sort: chunk histograms of the raw values on all threads, then
    # every value written out in key order (1-byte keys: no nan, no -0.0)
    n = src.size
    dm = ALL if desc else np.uint64(0)
    i = 1
    while i < n and (tokey(src[i]) ^ dm) >= (tokey(src[i - 1]) ^ dm):
        i += 1
    if i == n:
        for i in range(n):
            out[i] = src[i]   # a stable sort leaves it as it is
        return
    H = 1 << BITS
    h = np.empty((nch, H), np.int64)
    for c in prange(nch):
        rawhist(src, n * c // nch, n * (c + 1) // nch, h[c])
    tot = np.zeros(H, np.int64)     # counts by key
    for rc in range(H):
        t = 0
        for c in range(nch):
            t += h[c, rc]
        tot[np.int64((tokey_plain(np.uint64(rc)) ^ dm) & np.uint64(H - 1))] = t
    j = 0
    for g in range(H):
        v = KT(unkey(np.uint64(g) ^ dm))
        for q in range(tot[g]):
            out[j] = v
            j += 1
"""
