"""Numba source template of the CPU value sort of one long row (part of the value-sort module
that ``sort_values_source._values_source`` assembles, after ``_VALUES_TAIL``): an MSD histogram
(``vhist``) and scatter (``vscatter``) into buckets grouped into cells across threads
(``group_cells``, ``bucket_offsets``, ``split_buckets``), each bucket then LSD-sorted
(``sort_bucket``); ``vlong_exact`` / ``vlong`` are the entry points, ``rawhist`` /
``rawscatter`` the plain-value first pass."""
from __future__ import annotations

_LONG_ROW = """\
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
