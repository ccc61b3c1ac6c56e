"""Numba source templates of the CPU argsort and searchsorted kernels (assembled by
``sort_source.module_source``): ``_ROWS`` (argsort rows of (key, index) pairs: insertion sort,
LSD radix, the cross-thread chunk scatter of one long row), ``_SOURCE`` / ``_COUNTS_ALL`` (digit
counts of the long argsort rows; the value sorts use its ``U255``), ``_VARIANTS`` (prepare +
searchsorted, serial and parallel)."""
from __future__ import annotations

# argsort rows: (key, index) pairs.
_ROWS = """
@njit(inline='always', error_model='numpy')
def sort_rowSUF(k, p, kb, pb, cnt, n):
    # stable sort of (k, p) by k, in place; kb / pb / cnt are scratch
    if n <= SMALLN:
        for i in range(1, n):
            kk = k[i]
            pp = p[i]
            j = i - 1
            while j >= 0 and k[j] > kk:
                k[j + 1] = k[j]
                p[j + 1] = p[j]
                j -= 1
            k[j + 1] = kk
            p[j + 1] = pp
        return
    cnt[:, :] = 0
    for i in range(n):
        v = np.uint64(k[i])
        for ps in range(NPASS):
            cnt[ps, (v >> np.uint64(8 * ps)) & U255] += 1
    flipped = False
    for ps in range(NPASS):
        c = cnt[ps]
        first = 0
        while c[first] == 0:
            first += 1
        if c[first] == n:
            continue  # every element has this digit
        acc = 0
        for d in range(256):
            t = c[d]
            c[d] = acc
            acc += t
        shift = np.uint64(8 * ps)
        if flipped:
            for i in range(n):
                v = kb[i]
                d = digit(v, shift)
                o = np.uint64(c[d])
                k[o] = v
                p[o] = pb[i]
                c[d] = o + np.uint64(1)
        else:
            for i in range(n):
                v = k[i]
                d = digit(v, shift)
                o = np.uint64(c[d])
                kb[o] = v
                pb[o] = p[i]
                c[d] = o + np.uint64(1)
        flipped = not flipped
    if flipped:
        for i in range(n):
            k[i] = kb[i]
            p[i] = pb[i]


@njit(cache=True, nogil=True, error_model='numpy')
def rows_serialSUF(keys, pay, rows, n):
    kb = np.empty(n, keys.dtype)
    pb = np.empty(n, pay.dtype)
    cnt = np.empty((NPASS, 256), np.int64)
    for r in range(rows):
        sort_rowSUF(keys[r * n:(r + 1) * n], pay[r * n:(r + 1) * n], kb, pb, cnt, n)


@njit(cache=True, nogil=True, error_model='numpy', parallel=True)
def rows_parallelSUF(keys, pay, rows, n, nch):
    for c in prange(nch):
        r0 = rows * c // nch
        r1 = rows * (c + 1) // nch
        kb = np.empty(n, keys.dtype)
        pb = np.empty(n, pay.dtype)
        cnt = np.empty((NPASS, 256), np.int64)
        for r in range(r0, r1):
            sort_rowSUF(keys[r * n:(r + 1) * n], pay[r * n:(r + 1) * n], kb, pb, cnt, n)


@njit(cache=True, nogil=True, error_model='numpy', parallel=True)
def bucketsSUF(keys, pay, los, his):
    # after an MSD scatter: sort each bucket [los[b], his[b]) on the other digits
    for b in prange(los.size):
        lo = los[b]
        hi = his[b]
        m = hi - lo
        if m > 1:
            kb = np.empty(m, keys.dtype)
            pb = np.empty(m, pay.dtype)
            cnt = np.empty((NPASS, 256), np.int64)
            sort_rowSUF(keys[lo:hi], pay[lo:hi], kb, pb, cnt, m)


@njit(cache=True, nogil=True, error_model='numpy', parallel=True)
def chunk_scatterSUF(k, p, kd, pd, shift, nch, offs):
    # chunk c writes its elements with digit d from offs[c, d] on, in order (stable)
    n = k.size
    for c in prange(nch):
        lo = n * c // nch
        hi = n * (c + 1) // nch
        o = offs[c].copy()
        for i in range(lo, hi):
            v = k[i]
            d = digit(v, shift)
            j = np.uint64(o[d])
            kd[j] = v
            pd[j] = p[i]
            o[d] = j + np.uint64(1)
"""

_SOURCE = """
U255 = np.uint64(255)


@njit(inline='always', error_model='numpy')
def digit(k, shift):
    # unsigned: indexing with it skips Numba's negative-index wraparound
    return (np.uint64(k) >> shift) & U255


@njit(cache=True, nogil=True, error_model='numpy', parallel=True)
def chunk_counts(k, shift, nch, out):
    # out[c, d]: elements of chunk c whose digit at `shift` is d
    n = k.size
    for c in prange(nch):
        lo = n * c // nch
        hi = n * (c + 1) // nch
        row = out[c]
        row[:] = 0
        for i in range(lo, hi):
            row[digit(k[i], shift)] += 1
"""

_COUNTS_ALL = """
@njit(cache=True, nogil=True, error_model='numpy', parallel=True)
def chunk_counts_all(k, nch, out):
    # out[c, ps, d]: elements of chunk c whose digit ps is d, every digit in one read
    n = k.size
    for c in prange(nch):
        lo = n * c // nch
        hi = n * (c + 1) // nch
        h = out[c]
        h[:, :] = 0
        for i in range(lo, hi):
            v = np.uint64(k[i])
            for ps in range(NPASS):
                h[ps, (v >> np.uint64(8 * ps)) & U255] += 1
"""

_COMPOSE = """
@njit(cache=True, nogil=True, error_model='numpy')
def compose(src, out, rows, n, desc):
    # argsort of keys up to 32 bits: out[r * n + i] <- key << (64 - BITS) | i, one uint64 per
    # element, all distinct, whose order is the stable order of the row (bits of a descending
    # key above BITS shift out)
    dm = ALL if desc else np.uint64(0)
    sh = np.uint64(64 - BITS)
    for r in range(rows):
        b = r * n
        for i in range(n):
            out[b + i] = ((tokey(src[b + i]) ^ dm) << sh) | np.uint64(i)
"""

_COMPOSE64 = """
@njit(cache=True, nogil=True, error_model='numpy')
def key_range(src, desc):
    # (smallest, largest) key: keys minus the smallest need bitlen(largest - smallest) bits
    dm = ALL if desc else np.uint64(0)
    lo = ALL
    hi = np.uint64(0)
    for i in range(src.size):
        k = tokey(src[i]) ^ dm
        lo = min(lo, k)
        hi = max(hi, k)
    return lo, hi


@njit(cache=True, nogil=True, error_model='numpy')
def compose_hi(src, out, rows, n, desc, base, sh, pb):
    # 64-bit keys, first stage: out[r * n + i] <- ((key - base) >> sh) << pb | i (pb: the bits
    # a position needs; key - base, base the smallest key, has no bits above sh + 64 - pb)
    dm = ALL if desc else np.uint64(0)
    s = np.uint64(sh)
    p = np.uint64(pb)
    for r in range(rows):
        b = r * n
        for i in range(n):
            out[b + i] = ((((tokey(src[b + i]) ^ dm) - base) >> s) << p) | np.uint64(i)


@njit(cache=True, nogil=True, error_model='numpy')
def resolve(src, c, rows, n, desc, base, sh, pb, long_run, longs):
    # second stage, after each row of c is sorted: a run of equal high parts is ordered by
    # the low sh bits (at most pb) of key - base, then position: the words of the run become
    # low << pb | position (position stays the low pb bits) and are sorted again here, or,
    # from long_run words on, by the caller (NumPy's sort is faster): their [start, end) go to
    # longs, and the count is returned
    dm = ALL if desc else np.uint64(0)
    lm = (np.uint64(1) << np.uint64(sh)) - np.uint64(1)
    p = np.uint64(pb)
    pm = (np.uint64(1) << p) - np.uint64(1)
    nl = 0
    for r in range(rows):
        b = r * n
        i = 0
        while i < n - 1:
            h = c[b + i] >> p
            j = i + 1
            while j < n and (c[b + j] >> p) == h:
                j += 1
            if j - i > 1:
                for q in range(b + i, b + j):
                    pos = c[q] & pm
                    c[q] = ((((tokey(src[b + np.int64(pos)]) ^ dm) - base) & lm) << p) | pos
                run = c[b + i:b + j]
                if j - i <= 16:
                    insertion(run)  # (sort_values_source.py's, in the same module)
                elif j - i < long_run:
                    run.sort()
                else:
                    longs[nl, 0] = b + i
                    longs[nl, 1] = b + j
                    nl += 1
            i = j
    return nl
"""

_KEYSORT = """
@njit(cache=True, nogil=True, error_model='numpy')
def keys_into(src, out, desc):
    # value sort by NumPy's sort of the keys: out <- keys of src; returns how many nan / -0.0
    # (the caller then runs fix_rows: their keys are canonical)
    dm = ALL if desc else np.uint64(0)
    ns = 0
    for i in range(src.size):
        x = src[i]
        out[i] = KT(tokey(x) ^ dm)
        ns += special(x)
    return ns


@njit(cache=True, nogil=True, error_model='numpy')
def unkeys(out, desc):
    # the sorted keys back into values, in place
    dm = ALL if desc else np.uint64(0)
    for i in range(out.size):
        out[i] = KT(unkey(np.uint64(out[i]) ^ dm))
"""

_COUNT_ARGSORT = """
@njit(cache=True, nogil=True, error_model='numpy')
def count_argsort(src, out, rows, n, desc):
    # stable argsort of 1-byte keys: a counting sort, one count pass and one placing pass
    dm = ALL if desc else np.uint64(0)
    cnt = np.empty(256, np.int64)
    for r in range(rows):
        b = r * n
        cnt[:] = 0
        for i in range(n):
            cnt[(tokey(src[b + i]) ^ dm) & U255] += 1
        acc = 0
        for d in range(256):
            t = cnt[d]
            cnt[d] = acc
            acc += t
        for i in range(n):
            d = (tokey(src[b + i]) ^ dm) & U255
            j = cnt[d]
            cnt[d] = j + 1
            out[b + j] = i
"""

_VARIANTS = """
@njit(cache=True, nogil=True, error_model='numpy', parallel=PAR)
def prepare_NAME(src, keys, pay, n, desc):
    # argsort: keys <- key(src) (descending flips every key bit), pay <- index along the row
    total = src.size
    nch = (total + 65535) // 65536
    dm = ALL if desc else np.uint64(0)
    for c in RANGE(nch):
        lo = c * 65536
        hi = min(total, lo + 65536)
        for i in range(lo, hi):
            keys[i] = KT(tokey(src[i]) ^ dm)
        for i in range(lo, hi):
            pay[i] = i % n


@njit(cache=True, nogil=True, error_model='numpy', parallel=PAR)
def search_NAME(x1, sorter, use_sorter, x2, out, right):
    m = x1.size
    if m <= 64:
        # A few keys: count those before v, a vectorized pass over the keys (no branch on the
        # data; 1e5 queries into 50 keys ~4x less time than the binary search's mispredicted
        # halvings)
        k1 = np.empty(m, np.uint64)
        for i in range(m):
            k1[i] = tokey(x1[sorter[i]] if use_sorter else x1[i])
        for j in RANGE(x2.size):
            v = tokey(x2[j])
            c = 0
            if right:
                for i in range(m):
                    c += np.int64(k1[i] <= v)
            else:
                for i in range(m):
                    c += np.int64(k1[i] < v)
            out[j] = c
        return
    # Binary search on the keys of the elements it reads (no key array of all of x1: that
    # pass cost more than the searches, 1e3 queries into 1e7 float32 40 ms -> ~0.1). The
    # branches beat selects here (2026-12-06, Zen 4: 1e3 random queries into 1e3 keys 9 vs
    # 13 us; the predicted path's loads start early).
    for j in RANGE(x2.size):
        v = tokey(x2[j])
        lo = 0
        hi = m
        if right:
            while lo < hi:
                mid = (lo + hi) >> 1
                if tokey(x1[sorter[mid]] if use_sorter else x1[mid]) <= v:
                    lo = mid + 1
                else:
                    hi = mid
        else:
            while lo < hi:
                mid = (lo + hi) >> 1
                if tokey(x1[sorter[mid]] if use_sorter else x1[mid]) < v:
                    lo = mid + 1
                else:
                    hi = mid
        out[j] = lo
"""
