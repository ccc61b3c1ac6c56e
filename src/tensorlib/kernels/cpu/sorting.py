"""Numba CPU kernels for sorting and searching: stable LSD radix sort of rows, and binary
search (searchsorted).

Every real dtype is sorted through an unsigned integer key of its width whose unsigned order is
the value order (kernels see raw bits: half types are uint16, float32 is read as uint32, ...):
    unsigned: the bits; signed: the bits with the sign bit flipped;
    floating: every nan -> all ones (last), -0.0 -> +0.0 (equal, so a stable sort keeps their
    order, as NumPy's), negatives -> all bits flipped, positives -> sign bit set.
Descending sorts flip every key bit, which keeps equal elements in input order (stable) and
puts nan first (the exact reverse of the ascending order).

A row is sorted as (key, payload) pairs, the payload being the raw value bits (``sort``) or
the index (``argsort``): insertion sort up to SMALL elements, else LSD radix with 8-bit digits,
skipping passes whose digit is the same for the whole row. Many rows are spread over threads;
one long row is sorted by all threads together (per-chunk digit counts, then each chunk
scatters to its own offsets, so the result stays stable).
Each (key width, kind) gets a generated module in the kernel cache dir.
"""
from __future__ import annotations

import threading

import numba
import numpy as np

from ...storage import Storage
from .casting import kernel_array
from .pointwise import load_generated_module
from ...runtime.cpu.streams import host_sync

__all__ = ["sort_kernel", "searchsorted_kernel", "raw_view", "key_spec"]

SMALL = 32              # rows up to this long use insertion sort
PAR_GRAIN = 1 << 15     # below this many elements, one thread
ROW_PAR = 1 << 17       # a row this long is sorted by all threads together

_lock = threading.Lock()
_mods: dict = {}

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
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


def raw_view(t):
    """The unsigned-integer view of contiguous tensor t's elements (1-D)."""
    arr = kernel_array(t)[t._offset:t._offset + t._numel]
    return arr.view(_UINT[t.dtype.itemsize])


def _key_source(width, kind, expmask):
    bits = 8 * width
    allm = (1 << bits) - 1
    sb = 1 << (bits - 1)
    head = (f"ALL = np.uint64({allm})\nSB = np.uint64({sb})\nABSM = np.uint64({allm ^ sb})\n"
            f"EXPM = np.uint64({expmask})\nNPASS = {width}\nKT = np.uint{bits}\n"
            f"FLOAT = {kind == 'f'}\n\n")
    # tokey: the order key (nan canonical, -0.0 == +0.0); tokey_plain / unkey: the invertible
    # transform, equal to tokey on everything but nan and -0.0 (used for value sorts of rows
    # without them: keys only, no payload)
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


# Lines ending in '#P' move the payload; the key-only variants ('_k') drop them.
_ROWS = """
@njit(inline='always', error_model='numpy')
def sort_rowSUF(k, p, kb, pb, cnt, n):
    # stable sort of (k, p) by k, in place; kb / pb / cnt are scratch
    if n <= SMALLN:
        for i in range(1, n):
            kk = k[i]
            pp = p[i]  #P
            j = i - 1
            while j >= 0 and k[j] > kk:
                k[j + 1] = k[j]
                p[j + 1] = p[j]  #P
                j -= 1
            k[j + 1] = kk
            p[j + 1] = pp  #P
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
                p[o] = pb[i]  #P
                c[d] = o + np.uint64(1)
        else:
            for i in range(n):
                v = k[i]
                d = digit(v, shift)
                o = np.uint64(c[d])
                kb[o] = v
                pb[o] = p[i]  #P
                c[d] = o + np.uint64(1)
        flipped = not flipped
    if flipped:
        for i in range(n):
            k[i] = kb[i]
            p[i] = pb[i]  #P


@njit(cache=True, nogil=True, error_model='numpy')
def rows_serialSUF(keys, pay, rows, n):
    kb = np.empty(n, keys.dtype)
    pb = np.empty(n if pay.size else 0, pay.dtype)
    cnt = np.empty((NPASS, 256), np.int64)
    for r in range(rows):
        sort_rowSUF(keys[r * n:(r + 1) * n], pay[r * n:(r + 1) * n], kb, pb, cnt, n)


@njit(cache=True, nogil=True, error_model='numpy', parallel=True)
def rows_parallelSUF(keys, pay, rows, n, nch):
    for c in prange(nch):
        r0 = rows * c // nch
        r1 = rows * (c + 1) // nch
        kb = np.empty(n, keys.dtype)
        pb = np.empty(n if pay.size else 0, pay.dtype)
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
            pb = np.empty(m if pay.size else 0, pay.dtype)
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
            pd[j] = p[i]  #P
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
def prepare_NAME(src, keys, pay, n, desc, mode):
    # mode 0: keys <- key(src), pay <- src; 1: keys <- key(src), pay <- index along the row;
    # 2: keys <- invertible key(src), no payload. Descending flips every key bit.
    total = src.size
    nch = (total + 65535) // 65536
    dm = ALL if desc else np.uint64(0)
    for c in RANGE(nch):
        lo = c * 65536
        hi = min(total, lo + 65536)
        if mode == 2:
            for i in range(lo, hi):
                keys[i] = KT(tokey_plain(src[i]) ^ dm)
        else:
            for i in range(lo, hi):
                keys[i] = KT(tokey(src[i]) ^ dm)
        if mode == 0:
            for i in range(lo, hi):
                pay[i] = src[i]
        elif mode == 1:
            for i in range(lo, hi):
                pay[i] = i % n


@njit(cache=True, nogil=True, error_model='numpy', parallel=PAR)
def count_special_NAME(src):
    total = src.size
    nch = (total + 65535) // 65536
    cnt = 0
    for c in RANGE(nch):
        lo = c * 65536
        hi = min(total, lo + 65536)
        m = 0
        for i in range(lo, hi):
            if special(src[i]):
                m += 1
        cnt += m
    return cnt


@njit(cache=True, nogil=True, error_model='numpy', parallel=PAR)
def finish_NAME(keys, out, desc):
    # out <- the values of the (sorted) invertible keys
    total = keys.size
    nch = (total + 65535) // 65536
    dm = ALL if desc else np.uint64(0)
    for c in RANGE(nch):
        lo = c * 65536
        hi = min(total, lo + 65536)
        for i in range(lo, hi):
            out[i] = KT(unkey(np.uint64(keys[i]) ^ dm))


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


def _module(dtype):
    spec = key_spec(dtype)
    mod = _mods.get(spec)
    if mod is None:
        with _lock:
            mod = _mods.get(spec)
            if mod is None:
                width, kind, expm = spec
                src = (f"# Generated by tensorlib.kernels.cpu.sorting for: keys of {width} "
                       f"bytes, kind {kind}\nimport numpy as np\nfrom numba import njit, "
                       f"prange\n\n" + _key_source(width, kind, expm) + _SOURCE
                       + _COUNTS_ALL)
                rows = _ROWS.replace("SMALLN", str(SMALL))
                src += rows.replace("SUF", "")
                src += "\n".join(ln for ln in rows.replace("SUF", "_k").split("\n")
                                 if not ln.endswith("#P"))
                for name, par in (("serial", False), ("parallel", True)):
                    src += (_VARIANTS.replace("NAME", name).replace("PAR", str(par))
                            .replace("RANGE", "prange" if par else "range"))
                mod = load_generated_module(f"sort{width}{kind}", src)
                _mods[spec] = mod
    return mod


def _threads():
    return numba.config.NUMBA_NUM_THREADS


def _scratch(n, np_dtype, keep):
    """n elements of np_dtype from the caching host allocator (fresh NumPy buffers would pay
    page faults on every call); ``keep`` holds the Storage until the caller is done."""
    st = Storage.allocate(max(n, 1) * np.dtype(np_dtype).itemsize)
    keep.append(st)
    return st.buffer[:n * np.dtype(np_dtype).itemsize].view(np_dtype)


BUCKET = 1 << 20   # MSD buckets larger than this are split again (all threads) first


def _sort_long_row(mod, k, p, kd, pd, width, below=None):
    """One long row: an MSD pass on the highest digit that varies (per-chunk counts, then
    each chunk scatters stably from (k, p) into (kd, pd)); buckets still larger than BUCKET are
    split the same way on their next digit (floats crowd a few exponents), and the rest, now
    cache-sized, are LSD-sorted on the remaining digits with the buckets spread over threads.
    The result is in (kd, pd); p / pd are empty arrays for a keys-only sort."""
    nch = 4 * _threads()
    n = k.size
    if below is None:
        # every digit's counts in one read; sort on the highest one that varies
        counts = np.empty((nch, width, 256), np.int64)
        mod.chunk_counts_all(k, nch, counts)
        total = counts.sum(axis=0)
        varying = [d for d in range(width) if total[d].max() < n]
        ps = varying[-1] if varying else None
        if ps is not None:
            c, tot = counts[:, ps, :], total[ps]
    else:
        # a bucket: the digits from `below` up are constant; try the next ones down
        ps = None
        c = np.empty((nch, 256), np.int64)
        for d in range(below - 1, -1, -1):
            mod.chunk_counts(k, np.uint64(8 * d), nch, c)
            tot = c.sum(axis=0)
            if tot.max() < n:
                ps = d
                break
    if ps is None:  # all keys equal: already sorted
        kd[:] = k
        if p.size:
            pd[:] = p
        return
    bounds = np.concatenate(([0], np.cumsum(tot)))
    # chunk c writes digit d from: all smaller digits, then the same digit in earlier chunks
    offs = np.ascontiguousarray(bounds[None, :-1] + np.cumsum(c, axis=0) - c)
    scatter = mod.chunk_scatter if p.size else mod.chunk_scatter_k
    scatter(k, p, kd, pd, np.uint64(8 * ps), nch, offs)
    los, his = bounds[:-1], bounds[1:]
    big = (his - los) > BUCKET
    if ps > 0:
        for lo, hi in zip(los[big], his[big]):
            # split again (k, p are free now): sorted into k[lo:hi], then back into kd
            _sort_long_row(mod, kd[lo:hi], pd[lo:hi] if p.size else p, k[lo:hi],
                           p[lo:hi] if p.size else p, width, ps)
            kd[lo:hi] = k[lo:hi]
            if p.size:
                pd[lo:hi] = p[lo:hi]
        small = ~big & ((his - los) > 1)
    else:
        small = (his - los) > 1
    (mod.buckets if p.size else mod.buckets_k)(kd, pd, np.ascontiguousarray(los[small]),
                                                np.ascontiguousarray(his[small]))


_EMPTY = np.empty(0, np.int64)


def sort_kernel(src, values, indices, descending):
    """src: contiguous (rows, n) tensor (any real dtype or bool), sorted along its last dim
    into ``values`` (same dtype) or ``indices`` (int64), both contiguous of src's shape."""
    host_sync()  # several passes with host-side bookkeeping: run in stream order, inline
    mod = _module(src.dtype)
    total = src.numel()
    if total == 0:
        return
    n = src.shape[-1] if src.ndim else 1
    rows = total // n
    raw = raw_view(src)
    nthreads = _threads()
    big = total >= PAR_GRAIN and nthreads > 1
    variant = "parallel" if big else "serial"
    keep = []
    keys = _scratch(total, raw.dtype, keep)
    if values is not None:
        out_raw = raw_view(values)
        # Values without nan / -0.0 (always, for integers) sort as keys alone and are
        # recovered from them: half the memory traffic of (key, value) pairs.
        key_only = key_spec(src.dtype)[1] != "f" or \
            getattr(mod, "count_special_" + variant)(raw) == 0
        if key_only:
            pay, mode = _EMPTY, 2
        else:
            pay, mode = out_raw, 0
    else:
        key_only = False
        pay, mode = kernel_array(indices)[indices._offset:indices._offset + total], 1
    suffix = "_k" if key_only else ""
    if n >= ROW_PAR:
        # long rows: prepare into scratch, MSD-scatter into the result buffers
        kd = _scratch(total, keys.dtype, keep)
        ps = _EMPTY if key_only else _scratch(total, pay.dtype, keep)
        getattr(mod, "prepare_" + variant)(raw, keys, ps, n, bool(descending), mode)
        for r in range(rows):
            sl = slice(r * n, (r + 1) * n)
            _sort_long_row(mod, keys[sl], ps[sl], kd[sl], pay[sl], raw.dtype.itemsize)
        keys = kd
    else:
        getattr(mod, "prepare_" + variant)(raw, keys, pay, n, bool(descending), mode)
        if big and rows > 1:
            getattr(mod, "rows_parallel" + suffix)(keys, pay, rows, n,
                                                   min(rows, 8 * nthreads))
        else:
            getattr(mod, "rows_serial" + suffix)(keys, pay, rows, n)
    if key_only:
        getattr(mod, "finish_" + variant)(keys, out_raw, bool(descending))


def searchsorted_kernel(x1, x2, sorter, out, right):
    """x1: contiguous 1-D (sorted, or sorted through ``sorter``: contiguous int64 indices
    already checked to be in range); x2: contiguous, same dtype; out: contiguous int64 of x2's
    shape <- insertion points (left: first i with x1[i] >= v, right: first with x1[i] > v, in
    key order, so nan sorts last)."""
    host_sync()  # run in stream order, inline
    mod = _module(x1.dtype)
    if x2.numel() == 0:
        return
    a = raw_view(x1)
    b = raw_view(x2)
    o = kernel_array(out)[out._offset:out._offset + out.numel()]
    if sorter is None:
        s, use = np.zeros(1, np.int64), False
    else:
        s, use = kernel_array(sorter)[sorter._offset:sorter._offset + sorter.numel()], True
    search = mod.search_parallel if b.size * max(1, int(np.log2(a.size + 1))) >= PAR_GRAIN \
        and _threads() > 1 else mod.search_serial
    search(a, s, use, b, o, bool(right))
