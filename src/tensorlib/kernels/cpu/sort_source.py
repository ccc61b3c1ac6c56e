"""The Numba source templates of the CPU sorting kernels (kernels/cpu/sorting.py runs them).

Keys: every real dtype sorts through an unsigned integer key of its width whose unsigned order is
the value order (key_spec / _key_source). Templates: _ROWS (argsort rows: insertion sort, LSD
radix, the cross-thread chunk scatter of one long row), _SOURCE / _COUNTS_ALL (digit counts),
_VARIANTS (prepare + searchsorted, serial and parallel), _VALUES / _LSD_P / _VALUES_TAIL (the
value sort: short rows in cache, fix_special for nan / -0.0 bit patterns, the MSD-bucketed long
row). module_source assembles one module per (key width, kind); the generated text is the
kernel cache's key, so edits here recompile the sorting kernels once.
"""
from __future__ import annotations

import numpy as np

from .sort_network import network_source

__all__ = ["module_source", "key_spec", "SMALL", "UINT"]

SMALL = 32              # rows up to this long use insertion sort

UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
# exponent mask (= +inf's bits) of each floating layout, by dtype name
_EXPMASK = {"float16": 0x7C00, "bfloat16": 0x7F80, "float32": 0x7F800000,
            "float64": 0x7FF0000000000000}


def key_spec(dtype):
    """(width in bytes, kind 'u' | 'i' | 'f', exponent mask or 0) of a real dtype."""
    if dtype.kind == "b":
        return 1, "u", 0
    if dtype.kind in "iu":
        return dtype.itemsize, dtype.kind, 0
    return dtype.itemsize, "f", _EXPMASK[dtype.name]


def _key_source(width, kind, expmask):
    bits = 8 * width
    allm = (1 << bits) - 1
    sb = 1 << (bits - 1)
    head = (f"ALL = np.uint64({allm})\nSB = np.uint64({sb})\nABSM = np.uint64({allm ^ sb})\n"
            f"EXPM = np.uint64({expmask})\nNPASS = {width}\nBITS = {bits}\nKT = np.uint{bits}\n"
            f"FLOAT = {kind == 'f'}\n\n")
    # tokey: the order key (nan canonical, -0.0 == +0.0); tokey_plain / unkey: the invertible
    # transform, equal to tokey on everything but nan and -0.0
    plain = {"u": "v", "i": "v ^ SB", "f": "((~v) & ALL) if v & SB else (v | SB)"}[kind]
    inverse = {"u": "k", "i": "k ^ SB", "f": "(k ^ SB) if k & SB else ((~k) & ALL)"}[kind]
    head += ("@njit(inline='always', error_model='numpy')\ndef tokey_plain(x):\n"
             f"    v = np.uint64(x)\n    return {plain}\n\n"
             "@njit(inline='always', error_model='numpy')\ndef unkey(k):\n"
             f"    return {inverse}\n\n"
             "@njit(inline='always', error_model='numpy')\ndef special(x):\n"
             "    # nan or -0.0: where tokey and tokey_plain differ\n"
             "    v = np.uint64(x)\n"
             "    return FLOAT and ((v & ABSM) > EXPM or v == SB)\n\n"
             "@njit(inline='always', error_model='numpy')\ndef tokey(x):\n"
             "    v = np.uint64(x)\n")
    if kind == "f":
        body = ("    a = v & ABSM\n"
                "    if a > EXPM:\n"
                "        return ALL\n"
                "    if a == np.uint64(0):\n"
                "        return SB\n")
    else:
        body = ""
    return head + body + "    return tokey_plain(x)\n"


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
    k1 = np.empty(m, np.uint64)
    for i in range(m):
        k1[i] = tokey(x1[sorter[i]] if use_sorter else x1[i])
    for j in RANGE(x2.size):
        v = tokey(x2[j])
        lo = 0
        hi = m
        if right:
            while lo < hi:
                mid = (lo + hi) >> 1
                if k1[mid] <= v:
                    lo = mid + 1
                else:
                    hi = mid
        else:
            while lo < hi:
                mid = (lo + hi) >> 1
                if k1[mid] < v:
                    lo = mid + 1
                else:
                    hi = mid
        out[j] = lo
"""


# Value sorts (no payload). Stability is only observable on nan payloads and on the sign of
# zero: keys are sorted alone and turned back into values, and a row holding nan or -0.0 gets
# its own nan / zero bit patterns written back over those runs in input order afterwards.
_VALUES = """
HB = HBITS   # bits of the MSD histogram of a long row
RSHIFT = BITS - HB
LSD_BITS = 11   # digit bits of the in-bucket LSD passes


@njit(inline='always', error_model='numpy')
def bitlen(x):
    r = 0
    x = np.uint64(x)
    while x != np.uint64(0):
        x >>= np.uint64(1)
        r += 1
    return r


@njit(nogil=True, error_model='numpy')
def fix_special(src, out, desc):
    # out holds src sorted with canonical nan / +0.0 in the nan and zero runs: write src's own
    # nan and zero bit patterns back there in input order, as a stable sort leaves them
    n = src.size
    dm = ALL if desc else np.uint64(0)
    nn = 0
    nz = 0
    for i in range(n):
        a = np.uint64(src[i]) & ABSM
        if a > EXPM:
            nn += 1
        elif a == np.uint64(0):
            nz += 1
    if nn:
        j = 0 if desc else n - nn
        for i in range(n):
            if (np.uint64(src[i]) & ABSM) > EXPM:
                out[j] = src[i]
                j += 1
    if nz:
        zk = SB ^ dm
        lo = 0
        hi = n
        while lo < hi:
            mid = (lo + hi) >> 1
            if (tokey(out[mid]) ^ dm) < zk:
                lo = mid + 1
            else:
                hi = mid
        for i in range(n):
            if (np.uint64(src[i]) & ABSM) == np.uint64(0):
                out[lo] = src[i]
                lo += 1


@njit(inline='always', error_model='numpy')
def keys_out(a, out, dm):
    for i in range(a.size):
        out[i] = KT(unkey(np.uint64(a[i]) ^ dm))


@njit(inline='always', error_model='numpy')
def insertion(a):
    for i in range(1, a.size):
        kk = a[i]
        j = i - 1
        while j >= 0 and a[j] > kk:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = kk


@njit(inline='always', error_model='numpy')
def vpass(s, t, base, sh, mask, o):
    for i in range(s.size):
        k = s[i]
        d = ((np.uint64(k) - base) >> sh) & mask
        j = o[d]
        o[d] = j + 1
        t[j] = k


@njit(inline='always', error_model='numpy')
def vpass_first(s, t, base, mask, o, dm):
    # first pass over plain values (no nan / -0.0): keys computed on the way
    for i in range(s.size):
        k = tokey_plain(s[i]) ^ dm
        d = (k - base) & mask
        j = o[d]
        o[d] = j + 1
        t[j] = KT(k)


@njit(inline='always', error_model='numpy')
def exclusive(c):
    acc = 0
    for d in range(c.size):
        t = c[d]
        c[d] = acc
        acc += t
"""

# One LSD bucket sort per pass count P (histogram loop unrolled: a runtime loop over the digits
# costs more than the passes themselves): a[:] keys with a[i] - base < 2**(P*b) -> out values.
_LSD_P = """
@njit(nogil=True, error_model='numpy')
def lsd_P(a, kb, out, base, b, dm, cnt, vals):
    m = a.size
    R = 1 << b
    mask = np.uint64(R - 1)
    bb = np.uint64(b)
ZERO
    if vals:
        for i in range(m):
            k = (tokey_plain(a[i]) ^ dm) - base
HIST
    else:
        for i in range(m):
            k = np.uint64(a[i]) - base
HIST
EXCL
    s = a
    t = kb[:m]
    for p in range(P):
        if p == 0 and vals:
            vpass_first(s, t, base, mask, cnt[0, :R], dm)
        else:
            vpass(s, t, base, bb * np.uint64(p), mask, cnt[p, :R])
        s, t = t, s
    # the last pass stays in cache; values go out in one sequential write
    keys_out(s, out, dm)
"""

_VALUES_TAIL = """
@njit(nogil=True, error_model='numpy')
def sort_bucket(a, kb, out, base, r, dm, cnt, vals):
    # a[:]: keys, or plain values (vals: no nan / -0.0), all keys within [base, base + 2**r)
    # -> out[:] their values in order
    m = a.size
    if r == 0 or m <= 1:
        if vals:
            for i in range(m):
                out[i] = a[i]
        else:
            keys_out(a, out, dm)
        return
    if m <= SMALLN:
        if vals:
            for i in range(m):
                a[i] = KT(tokey_plain(a[i]) ^ dm)
        insertion(a)
        keys_out(a, out, dm)
        return
    P = (r + LSD_BITS - 1) // LSD_BITS
    b = (r + P - 1) // P
DISPATCH


@njit(cache=True, nogil=True, error_model='numpy')
def vrow(src, out, ka, kb, cnt, desc):
    # returns the number of nan / -0.0 (then fix_special must run on the row)
    # one row (short: its keys stay in cache): keys + digit counts + nan / -0.0 + sortedness
    # in one read, LSD passes over the byte digits that vary, values written by the last pass
    n = src.size
    dm = ALL if desc else np.uint64(0)
    ns = 0
    nd = 0
    if n <= SMALLN:
        for i in range(n):
            ka[i] = KT(tokey(src[i]) ^ dm)
            ns += special(src[i])
        insertion(ka[:n])
        keys_out(ka[:n], out, dm)
    else:
ZERO8
        prev = tokey(src[0]) ^ dm
        for i in range(n):
            x = src[i]
            k = tokey(x) ^ dm
            ns += special(x)
            nd += k < prev
            prev = k
            ka[i] = KT(k)
HIST8
        if nd == 0:
            for i in range(n):
                out[i] = src[i]   # already in order: a stable sort leaves it as it is
            return ns
        s = ka[:n]
        t = kb[:n]
        for ps in range(NPASS):
            c = cnt[ps]
            if c[(np.uint64(ka[0]) >> np.uint64(8 * ps)) & U255] == n:
                continue  # every key has this digit
            exclusive(c)
            vpass(s, t, np.uint64(0), np.uint64(8 * ps), U255, c)
            s, t = t, s
        keys_out(s, out, dm)   # one sequential write of the values
    return ns   # nan / -0.0 seen: the caller runs fix_rows


@njit(cache=True, nogil=True, error_model='numpy')
def vrows_serial(src, out, rows, n, desc):
    # returns how many rows hold nan / -0.0 (the caller then runs fix_rows: compiled only
    # when some data has them)
    ka = np.empty(n, KT)
    kb = np.empty(n, KT)
    cnt = np.empty((NPASS, 256), np.int64)
    special = 0
    for r in range(rows):
        if vrow(src[r * n:(r + 1) * n], out[r * n:(r + 1) * n], ka, kb, cnt, desc):
            special += 1
    return special


@njit(cache=True, nogil=True, error_model='numpy', parallel=True)
def vrows_parallel(src, out, rows, n, nch, desc):
    special = 0
    for c in prange(nch):
        ka = np.empty(n, KT)
        kb = np.empty(n, KT)
        cnt = np.empty((NPASS, 256), np.int64)
        for r in range(rows * c // nch, rows * (c + 1) // nch):
            if vrow(src[r * n:(r + 1) * n], out[r * n:(r + 1) * n], ka, kb, cnt, desc):
                special += 1
    return special


@njit(cache=True, nogil=True, error_model='numpy')
def fix_rows(src, out, rows, n, desc):
    for r in range(rows):
        fix_special(src[r * n:(r + 1) * n], out[r * n:(r + 1) * n], desc)


@njit(nogil=True, error_model='numpy')
def vhist(src, lo, hi, dm, base, shift, h, res, first):
    # h[(key - base) >> shift] counts over src[lo:hi]; the first read also gives res = (nan or
    # -0.0 count, descents, non-ascents, OR of the keys, AND of the keys)
    h[:] = 0
    if first:
        ns = 0
        nd = 0
        nna = 0
        ko = np.uint64(0)
        kand = ALL
        prev = tokey(src[lo]) ^ dm
        for i in range(lo, hi):
            x = src[i]
            k = tokey(x) ^ dm
            h[(k - base) >> shift] += 1
            ns += special(x)
            nd += k < prev
            nna += k >= prev
            prev = k
            ko |= k
            kand &= k
        res[0] = ns
        res[1] = nd
        res[2] = nna - 1   # the first element compared with itself
        res[3] = ko
        res[4] = kand
    else:
        for i in range(lo, hi):
            h[((tokey(src[i]) ^ dm) - base) >> shift] += 1


@njit(nogil=True, error_model='numpy')
def vscatter(src, lo, hi, dm, base, shift, bmap, o, a):
    # MSD pass: the keys of src[lo:hi] into their buckets of a, in order (o: next slot per bucket)
    for i in range(lo, hi):
        k = tokey(src[i]) ^ dm
        b = bmap[(k - base) >> shift]
        j = o[b]
        o[b] = j + 1
        a[j] = KT(k)


@njit(nogil=True, error_model='numpy')
def group_cells(tot, ncell, target):
    # Buckets: runs of consecutive histogram cells of about `target` keys (a bigger cell
    # alone); a bucket's key span runs from its first to its last non-empty cell. Returns
    # (cell -> bucket, first cell, last cell, bucket count).
    bmap = np.empty(ncell, np.int32)
    bfirst = np.empty(ncell, np.int64)
    blast = np.empty(ncell, np.int64)
    nb = 0
    acc = 0
    for g in range(ncell):
        t = tot[g]
        if t:
            if nb == 0 or acc + t > target:
                bfirst[nb] = g
                nb += 1
                acc = 0
            acc += t
            blast[nb - 1] = g
        bmap[g] = max(nb - 1, 0)
    return bmap, bfirst, blast, nb


@njit(nogil=True, error_model='numpy')
def bucket_offsets(bc, nch, nb):
    # From per-(chunk, bucket) counts: where each chunk's keys of each bucket go, and each
    # bucket's start (buckets in order, chunks in order inside a bucket).
    offs = np.empty((nch, nb), np.int64)
    bstart = np.empty(nb + 1, np.int64)
    pos = 0
    for bk in range(nb):
        bstart[bk] = pos
        for c in range(nch):
            offs[c, bk] = pos
            pos += bc[c, bk]
    bstart[nb] = pos
    return offs, bstart


@njit(nogil=True, error_model='numpy')
def split_buckets(bstart, nb, n, nch):
    # Buckets split between `nch` threads by key count: thread w sorts buckets
    # [wb[w], wb[w + 1]); also the biggest bucket's size (the scratch each thread needs).
    wb = np.empty(nch + 1, np.int64)
    bk = 0
    for w in range(nch + 1):
        while bk < nb and bstart[bk] < n * w // nch:
            bk += 1
        wb[w] = bk
    wb[nch] = nb
    maxb = 0
    for bk in range(nb):
        maxb = max(maxb, bstart[bk + 1] - bstart[bk])
    return wb, maxb


@njit(cache=True, nogil=True, error_model='numpy', parallel=True)
def vlong_exact(src, out, a, desc, nch, target):
    # vlong for any values (nan, -0.0, narrow key ranges): the same plan on keys, whose top HB
    # varying bits are histogrammed, and the nan / zero runs fixed afterwards
    n = src.size
    dm = ALL if desc else np.uint64(0)
    H = 1 << HB
    shift = np.uint64(BITS - HB)
    base = np.uint64(0)
    h = np.empty((nch, H), np.int64)
    res = np.empty((nch, 5), np.uint64)
    for c in prange(nch):
        vhist(src, n * c // nch, n * (c + 1) // nch, dm, base, shift, h[c], res[c], True)
    ns = 0
    nd = 0
    nna = 0
    ko = np.uint64(0)
    kand = ALL
    for c in range(nch):
        ns += np.int64(res[c, 0])
        nd += np.int64(res[c, 1])
        nna += np.int64(res[c, 2])
        ko |= res[c, 3]
        kand &= res[c, 4]
    for c in range(1, nch):
        i = n * c // nch
        k0 = tokey(src[i - 1]) ^ dm
        k1 = tokey(src[i]) ^ dm
        nd += k1 < k0
        nna += k1 >= k0
    if nd == 0:
        for i in range(n):
            out[i] = src[i]   # already in order (this includes all keys equal)
        return
    if nna == 0:
        for i in range(n):   # strictly decreasing: no ties, so reversing is the stable sort
            out[i] = src[n - 1 - i]
        return
    top = bitlen(ko ^ kand)   # bits above `top` are the same in every key
    nshift = top - HB if top > HB else 0
    big = 0
    for c in range(nch):
        for g in range(H):
            big = max(big, h[c, g])
    if nshift + 4 <= BITS - HB and big > 2 * target // nch:
        # narrow key range, crowding the top cells: histogram the HB bits below the common
        # prefix instead
        shift = np.uint64(nshift)
        base = kand & ~((np.uint64(1) << np.uint64(top)) - np.uint64(1))
        for c in prange(nch):
            vhist(src, n * c // nch, n * (c + 1) // nch, dm, base, shift, h[c], res[c], False)
    ncell = np.int64((ko - base) >> shift) + 1
    tot = np.zeros(ncell, np.int64)
    for c in range(nch):
        for g in range(ncell):
            tot[g] += h[c, g]
    if BITS <= HB:
        # every cell is one key: a counting sort
        j = 0
        for g in range(ncell):
            v = KT(unkey(np.uint64(g) ^ dm))
            for q in range(tot[g]):
                out[j] = v
                j += 1
        if ns:
            fix_special(src, out, desc)
        return
    bmap, bfirst, blast, nb = group_cells(tot, ncell, target)
    # per chunk and bucket, where the chunk's keys of that bucket start
    bc = np.zeros((nch, nb), np.int64)
    for c in range(nch):
        for g in range(ncell):
            bc[c, bmap[g]] += h[c, g]
    offs, bstart = bucket_offsets(bc, nch, nb)
    for c in prange(nch):
        vscatter(src, n * c // nch, n * (c + 1) // nch, dm, base, shift, bmap, offs[c], a)
    wb, maxb = split_buckets(bstart, nb, n, nch)
    for w in prange(nch):
        kb = np.empty(maxb, KT)
        cnt = np.empty((PMAX, 1 << LSD_BITS), np.int64)
        for bk in range(wb[w], wb[w + 1]):
            lo = bstart[bk]
            hi = bstart[bk + 1]
            bbase = base + (np.uint64(bfirst[bk]) << shift)
            span = ((np.uint64(blast[bk] - bfirst[bk]) + np.uint64(1)) << shift) - np.uint64(1)
            sort_bucket(a[lo:hi], kb, out[lo:hi], bbase, bitlen(span), dm, cnt, False)
    if ns:
        fix_special(src, out, desc)

@njit(nogil=True, error_model='numpy')
def rawhist(src, lo, hi, h):
    h[:] = 0
    for i in range(lo, hi):
        h[np.uint64(src[i]) >> RSHIFT] += 1


@njit(nogil=True, error_model='numpy')
def rawscatter(src, lo, hi, bmap, o, a):
    for i in range(lo, hi):
        v = src[i]
        b = bmap[np.uint64(v) >> RSHIFT]
        j = o[b]
        o[b] = j + 1
        a[j] = v


@njit(cache=True, nogil=True, error_model='numpy', parallel=True)
def vlong(src, out, a, desc, nch, target):
    # One long row: a histogram of the top HB bits of the raw values (a cell of raw values
    # without nan / -0.0 is one cell of keys), consecutive key cells grouped into buckets of
    # about `target` keys (cache-sized), one scatter of the values into their buckets, then
    # each bucket LSD-sorted in cache and written out. Returns 1 (nothing done) where cells
    # may hold nan, inf or -0.0, or crowd into a narrow key range: vlong_exact sorts those.
    n = src.size
    dm = ALL if desc else np.uint64(0)
    # already in order, or strictly reversed: checks that stop early on other data
    i = 1
    while i < n and (tokey(src[i]) ^ dm) >= (tokey(src[i - 1]) ^ dm):
        i += 1
    if i == n:
        for i in range(n):
            out[i] = src[i]   # a stable sort leaves it as it is
        return 0
    if i == 1:
        while i < n and (tokey(src[i]) ^ dm) < (tokey(src[i - 1]) ^ dm):
            i += 1
        if i == n:
            for i in range(n):   # no ties: reversing is the stable sort
                out[i] = src[n - 1 - i]
            return 0
    H = 1 << HB
    h = np.empty((nch, H), np.int64)
    for c in prange(nch):
        rawhist(src, n * c // nch, n * (c + 1) // nch, h[c])
    cm = np.uint64(H - 1) if desc else np.uint64(0)
    kcell = np.empty(H, np.int64)   # raw cell -> key cell
    tot = np.zeros(H, np.int64)     # counts by key cell
    big = 0
    for rc in range(H):
        t = 0
        for c in range(nch):
            t += h[c, rc]
        hi_bits = np.uint64(rc) << np.uint64(RSHIFT)
        if FLOAT and t and ((hi_bits & ABSM) >= EXPM or hi_bits == SB):
            return 1
        kc = np.int64((tokey_plain(hi_bits) >> np.uint64(RSHIFT)) ^ cm)
        kcell[rc] = kc
        tot[kc] = t
        big = max(big, t)
    first = 0
    while tot[first] == 0:
        first += 1
    last = H - 1
    while tot[last] == 0:
        last -= 1
    if big > 4 * target and HB < BITS and (last - first) * 16 < H:
        return 1
    if BITS <= HB:
        # every cell is one key: a counting sort
        j = 0
        for g in range(H):
            v = KT(unkey(np.uint64(g) ^ dm))
            for q in range(tot[g]):
                out[j] = v
                j += 1
        return 0
    bmap, bfirst, blast, nb = group_cells(tot, H, target)
    rmap = np.empty(H, np.int32)   # raw cell -> bucket
    bc = np.zeros((nch, nb), np.int64)
    for rc in range(H):
        rmap[rc] = bmap[kcell[rc]]
        for c in range(nch):
            bc[c, rmap[rc]] += h[c, rc]
    offs, bstart = bucket_offsets(bc, nch, nb)
    for c in prange(nch):
        rawscatter(src, n * c // nch, n * (c + 1) // nch, rmap, offs[c], a)
    wb, maxb = split_buckets(bstart, nb, n, nch)
    for w in prange(nch):
        kb = np.empty(maxb, KT)
        cnt = np.empty((PMAX, 1 << LSD_BITS), np.int64)
        for bk in range(wb[w], wb[w + 1]):
            lo = bstart[bk]
            hi = bstart[bk + 1]
            bbase = np.uint64(bfirst[bk]) << np.uint64(RSHIFT)
            ncells = np.uint64(blast[bk] - bfirst[bk]) + np.uint64(1)
            span = (ncells << np.uint64(RSHIFT)) - np.uint64(1)
            sort_bucket(a[lo:hi], kb, out[lo:hi], bbase, bitlen(span), dm, cnt, True)
    return 0
"""


def _values_source(width):
    """The value-sort kernels for keys of `width` bytes (unrolled digit counts)."""
    bits = 8 * width
    hb = min(16, bits)
    pmax = -(-bits // 11)
    src = _VALUES.replace("HBITS", str(hb))
    for p in range(1, pmax + 1):
        zero = "\n".join(f"    c{i} = cnt[{i}, :R]\n    c{i}[:] = 0" for i in range(p))
        hist = "\n".join(f"        c{i}[(k >> (bb * np.uint64({i}))) & mask] += 1"
                          for i in range(p))
        src += _LSD_P.replace("lsd_P", f"lsd_{p}").replace("range(P)", f"range({p})") \
            .replace("ZERO", zero).replace("HIST", "    " + hist.replace("\n", "\n    ")) \
            .replace("EXCL", "\n".join(f"    exclusive(c{i})" for i in range(p)))
    dispatch = "\n".join(f"    {'if' if p == 1 else 'elif'} P == {p}:\n"
                          f"        lsd_{p}(a, kb, out, base, b, dm, cnt, vals)"
                          for p in range(1, pmax + 1))
    zero8 = "        cnt[:, :] = 0\n" + "\n".join(f"        c{i} = cnt[{i}]" for i in range(width))
    hist8 = "\n".join(f"            c{i}[(k >> np.uint64({8 * i})) & U255] += 1"
                       for i in range(width))
    tail = _VALUES_TAIL.replace("DISPATCH", dispatch).replace("ZERO8", zero8) \
        .replace("HIST8", hist8).replace("PMAX", str(pmax))
    return src + tail.replace("SMALLN", str(SMALL))


def module_source(spec) -> str:
    """The generated module's source for key spec ``(width, kind, exponent mask)``."""
    width, kind, expm = spec
    src = (f"# Generated by tensorlib.kernels.cpu.sorting for: keys of {width} "
           f"bytes, kind {kind}\nimport numpy as np\nfrom numba import njit, "
           f"prange\n\n" + _key_source(width, kind, expm) + _SOURCE
           + _COUNTS_ALL)
    src += _ROWS.replace("SMALLN", str(SMALL)).replace("SUF", "")
    src += _values_source(width)
    src += network_source(width, kind)
    for name, par in (("serial", False), ("parallel", True)):
        src += (_VARIANTS.replace("NAME", name).replace("PAR", str(par))
                .replace("RANGE", "prange" if par else "range"))
    return src
