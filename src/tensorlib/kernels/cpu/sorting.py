"""Numba CPU kernels for sorting and searching: stable sorts of rows, and binary search
(searchsorted).

Every real dtype is sorted through an unsigned integer key of its width whose unsigned order is
the value order (kernels see raw bits: half types are uint16, float32 is read as uint32, ...):
    unsigned: the bits; signed: the bits with the sign bit flipped;
    floating: every nan -> all ones (last), -0.0 -> +0.0 (equal, so a stable sort keeps their
    order, as NumPy's), negatives -> all bits flipped, positives -> sign bit set.
Descending sorts flip every key bit, which keeps equal elements in input order (stable) and
puts nan first (the exact reverse of the ascending order).

Routes (measured on a 2-core AVX-512 VM, where NumPy's sort is x86-simd-sort's vectorized
quicksort: one thread, so nothing waits for a descheduled team thread on a busy machine). Where
NumPy's sort is the scalar introsort instead (``numpy_sort_fast``, timed once per process),
value sorts from RADIX_VALUES_MIN and argsorts from RADIX_ARGSORT_MIN elements a row take the
radix routes, not the NumPy ones:

``argsort`` of rows up to COMPOSITE_MAX_ROW long sorts one distinct uint64 word per element
with NumPy's (unstable) sort, built in the int64 result itself; distinct words make its order
the stable one. Keys up to 32 bits: key << (64 - bits) | position (``compose``); 1-byte keys
in rows of 256+: a counting sort instead (``count_argsort``); 64-bit keys in two stages
(``key_range``, ``compose_hi``, ``resolve``: the top bits of key - smallest key that fit
beside the position, then runs of equal high parts ordered by the low bits). Longer rows: LSD
radix of (key, index) pairs with 8-bit digits (insertion sort up to SMALL elements), skipping
passes whose digit is the same for the whole row; many rows spread over threads, one long row
sorted by all threads together (per-chunk digit counts, then each chunk scatters to its own
offsets, so the result stays stable).

``sort`` needs no payload: for a value sort, stability is only observable on nan payloads and
on the sign of zero. float32 / float64 and 16- to 64-bit integers: NumPy's sort of the values,
then each nan run and zero run gets the input's own bit patterns back in input order
(``_np_fix``): bit for bit what ``np.sort(kind="stable")`` gives. Half types: NumPy's sort of
their 16-bit keys (``keys_into``, ``unkeys``), then the same fix-up (fix_special). Rows shorter
than NP_MIN_ROW and 1-byte keys: radix sorts of the keys alone, turned back into values, with
that fix-up. Many rows up to NET_MAX long: a bitonic network vectorized
across rows (kernels/cpu/sort_network.py). Other short rows: one read makes keys + byte-digit
counts (+ nan / -0.0 count, + an already-sorted check) in cache, LSD passes over the digits
that vary, one sequential write of the values. A long row of 1-byte keys (vlong): a counting
sort, its histograms on all threads.
Each (key width, kind) gets a generated module in the kernel cache dir; kernels/cpu/sort_source.py
assembles its source from the sort_*.py templates, this module runs them.
"""
from __future__ import annotations

import functools
import threading
import time

import numpy as np

from ...allocation import new_dense_cpu
from ...storage import Storage
from .casting import kernel_array
from .cold_route import kernel_ready
from .pointwise import load_generated_module
from .arrays import dense_view
from .sort_cold import canonical_keys, cold_order
from .sort_network import lanes, W as NET_W
from .sort_small import sort_along_axis
from .sort_split import sort_into, sort_rows
from .sort_source import SMALL, UINT as _UINT, key_spec, module_source
from ...runtime.cpu import cores
from ...runtime.cpu.streams import host_sync

__all__ = ["sort_kernel", "searchsorted_kernel", "raw_view", "key_spec"]

PAR_GRAIN = 1 << 15     # below this many elements, one thread
# A row this long is sorted by all threads together. Measured 2026-11-28 on this 2-core VM
# (quiet, NUMBA_NUM_THREADS 1 vs 2, one float32 row): 131K elements 1.6 ms on one thread vs
# 3.6-3.9 ms together; 262K about equal (3.6 vs 3.4-5.2); 524K 9.0-9.6 vs 6.1-7.3; 1M 23 vs 9-11.
ROW_PAR = 1 << 19

_lock = threading.Lock()
_mods: dict = {}


def raw_view(t):
    """The unsigned-integer view of contiguous tensor t's elements (1-D)."""
    return dense_view(t, _UINT[t._dtype.itemsize])


_mod_of_dtype: dict = {}  # dtype -> its key width's module (key_spec's answer, remembered)


def _module(dtype):
    mod = _mod_of_dtype.get(dtype)
    if mod is not None:
        return mod
    spec = key_spec(dtype)
    mod = _mods.get(spec)
    if mod is None:
        with _lock:
            mod = _mods.get(spec)
            if mod is None:
                width, kind, _ = spec
                mod = load_generated_module(f"sort{width}{kind}", module_source(spec))
                mod.warm_paths = set()  # routes whose full kernels are compiled (_full_ready)
                _mods[spec] = mod
    _mod_of_dtype[dtype] = mod
    return mod


def _threads():
    return cores.threads()  # one while the machine is busy (runtime/cpu/cores.py)


def _twins(mod, serial, parallel):
    """(serial, parallel) kernels of ``mod`` for cores.parallel_ready: a parallel kernel
    compiles in the background once its combination is used for real work; the serial one
    (cheaper to compile) serves meanwhile."""
    return cores.twins(getattr(mod, parallel), getattr(mod, serial))


# A first call whose full kernels are neither compiled nor in the disk cache runs the cold path
# (kernels/cpu/sort_cold.py: NumPy steps + one small kernel shared by all sorts of a key width)
# instead of compiling them (1-4 s), by kernels/cpu/cold_route.py's rule.


def _full_ready(mod, path, kernels, total):
    """Whether this call runs the full serial kernels ``kernels`` ([(name, args)]) of route
    ``path`` (callers check ``path in mod.warm_paths`` first): yes once each is compiled (or
    loaded from disk); otherwise the cold path serves and each compiles on a background thread
    when cores.parallel_ready would start a parallel twin (at once where
    cores.DEFER_PARALLEL_COMPILE is off: tests, warmup, benchmarks)."""
    ready = True
    for name, args in kernels:
        if not kernel_ready(getattr(mod, name), args, total):
            ready = False
    if ready:
        mod.warm_paths.add(path)
    return ready


def _fix(mod, raw, out, rows, n, desc):
    """fix_rows beside the radix value sorts of floats (compiled with them: a first nan in a
    warm loop would otherwise wait for its compile)."""
    return (("fix_rows", (raw, out, rows, n, desc)),) if mod.FLOAT else ()


def _cold_values(raw, out, rows, n, spec, desc):
    np.take(raw, cold_order(raw, rows, n, spec, desc), out=out)


# Scratch of small calls is kept per thread and reused (allocating and freeing three or four
# blocks costs more than sorting a 1,000-element row); bigger scratch comes from the allocator.
SCRATCH_KEEP_BYTES = 1 << 18
_tls_scratch = threading.local()


def _scratch(n, np_dtype, keep):
    """n elements of np_dtype, not aliased by anything else in use (fresh NumPy buffers would
    pay page faults on every call): this thread's reused buffer number len(keep) when small,
    else a block of the caching host allocator, which ``keep`` holds until the caller is
    done. Kernels never leave a reference to scratch behind, and a sort calls no other sort
    while its scratch is in use."""
    np_dtype = np.dtype(np_dtype)
    nbytes = max(n, 1) * np_dtype.itemsize
    slot = len(keep)
    if nbytes <= SCRATCH_KEEP_BYTES:
        bufs = getattr(_tls_scratch, "bufs", None)
        if bufs is None:
            bufs = _tls_scratch.bufs = []
        while len(bufs) <= slot:  # (earlier slots of this call may be allocator blocks)
            bufs.append(None)
        buf = bufs[slot]
        if buf is None or buf.size < nbytes:  # grown in powers of two, up to the limit
            buf = bufs[slot] = np.empty(max(1 << (nbytes - 1).bit_length(), 4096), np.uint8)
        keep.append(None)
        return buf[:n * np_dtype.itemsize].view(np_dtype)
    st = Storage.allocate(nbytes)
    keep.append(st)
    return st.buffer[:n * np_dtype.itemsize].view(np_dtype)


# value sorts of many rows up to this long (by key width) take the sorting network (faster than
# the radix rows up to here, measured serial on random data; a row group's keys: <= 512 KiB)
NET_MAX = {1: 2048, 2: 4096, 4: 16384, 8: 16384}
BUCKET = 1 << 20   # argsort MSD buckets larger than this are split again (all threads) first


def _sort_long_row(mod, k, p, kd, pd, width, below=None):
    """One long row: an MSD pass on the highest digit that varies (per-chunk counts, then
    each chunk scatters stably from (k, p) into (kd, pd)); buckets still larger than BUCKET are
    split the same way on their next digit (floats crowd a few exponents), and the rest, now
    cache-sized, are LSD-sorted on the remaining digits with the buckets spread over threads.
    The result is in (kd, pd)."""
    nch = 4 * _threads()
    n = k.size
    if below is None:
        # every digit's counts in one read; sort on the highest one that varies
        counts = np.empty((nch, width, 256), np.int64)
        cores.run(mod.chunk_counts_all, (k, nch, counts))
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
            cores.run(mod.chunk_counts, (k, np.uint64(8 * d), nch, c))
            tot = c.sum(axis=0)
            if tot.max() < n:
                ps = d
                break
    if ps is None:  # all keys equal: already sorted
        kd[:] = k
        pd[:] = p
        return
    bounds = np.concatenate(([0], np.cumsum(tot)))
    # chunk c writes digit d from: all smaller digits, then the same digit in earlier chunks
    offs = np.ascontiguousarray(bounds[None, :-1] + np.cumsum(c, axis=0) - c)
    cores.run(mod.chunk_scatter, (k, p, kd, pd, np.uint64(8 * ps), nch, offs))
    los, his = bounds[:-1], bounds[1:]
    big = (his - los) > BUCKET
    if ps > 0:
        for lo, hi in zip(los[big], his[big]):
            # split again (k, p are free now): sorted into k[lo:hi], then back into kd
            _sort_long_row(mod, kd[lo:hi], pd[lo:hi], k[lo:hi], p[lo:hi], width, ps)
            kd[lo:hi] = k[lo:hi]
            pd[lo:hi] = p[lo:hi]
        small = ~big & ((his - los) > 1)
    else:
        small = (his - los) > 1
    cores.run(mod.buckets, (kd, pd, np.ascontiguousarray(los[small]),
                            np.ascontiguousarray(his[small])))



# Value sorts of these dtypes are NumPy's sort (x86-simd-sort's AVX-512 / AVX2 quicksort, one
# thread: nothing to stall on a busy machine) plus a fix-up of the nan and zero runs (_np_fix).
# Measured 2026-12-05 on this 2-core AVX-512 VM, float32, against the radix sorts: one row of
# 1e5 0.26 ms vs 0.87, 1e6 3.9 vs 17 ms (2 threads); 64-bit keys 1e5 0.45 vs 3.0 ms (8 byte
# passes); rows of 16+ elements as fast as the network or faster. Not the half types
# (NumPy's float16 sort is slow, bfloat16 has none: _key_values sorts their keys), nor
# 1-byte keys (a counting sort is 10-30x faster than NumPy's there).
NP_VALUES = frozenset({"float32", "float64", "int16", "uint16", "int32", "uint32", "int64",
                       "uint64"})
# many rows shorter than this: the network (per-row sort calls cost more; not for 64-bit
# values: NumPy's sort of (1e5, 8) float64 rows 2.3 ms, the network's 4.6)
NP_MIN_ROW = 16
# argsort rows up to this long (by key width) sort composite words of key and position
# (_count_argsort, _composite_argsort, _two_stage_argsort); longer rows, whose positions
# would not fit in them, take the radix argsort (tests lower these to keep it tested)
COMPOSITE_MAX_ROW = {1: 1 << 56, 2: 1 << 48, 4: 1 << 32, 8: 1 << 32}
# Where NumPy's sort is not vectorized (its build or this CPU leaves the scalar introsort:
# measured 2026-12-06 on an AMD Zen 4 VM, NumPy 2.4: 1e5 float32 2.26 ms, 22 ns an element),
# the radix routes win from these row lengths and the NumPy routes above are not taken (the
# same VM: value sort of 1e5 float32 0.88 vs 2.25 ms, 1e6 8.8 vs 32, int16 0.26 vs 1.46 (its
# keys through NumPy's sort), float16 0.71 vs 1.5; argsort 1e5 0.76 vs 3.8 ms, 1e6 6.5 vs 51)
RADIX_VALUES_MIN = 4096
RADIX_ARGSORT_MIN = 1024
_NP_SORT_PROBE = 16384
_np_sort_fast = None  # whether NumPy's sort is vectorized here for value sorts (numpy_sort_fast)
_np_words_fast = None  # the same for argsort's 64-bit composite words (words=True)


def numpy_sort_fast(words=False) -> bool:
    """Whether NumPy's sort beats the radix kernels here: a vectorized one (x86-simd-sort), timed
    once per process on a 16384-element row (~5 ms) of float32 (the value sorts) or, with
    ``words``, uint64 (the argsorts sort 64-bit composite words): its default sort against its
    stable sort (a scalar merge sort) of the same row, best of three each. Vectorized, the
    default takes 0.07-0.1 of the stable one's time on float32 (AVX2 on a Zen 3 VM: 5-8 vs
    72-84 ns an element), the scalar introsort several times that. 64-bit words with AVX2 only
    take 0.19-0.22 (14-16 ns an element), where the radix argsort is faster (1e5 / 1e7 float32
    ~20% / ~30% less time), hence their tighter bound. (An absolute bound, 7 ns an element,
    flipped with the machine's speed: 4.9 and 7.7 ns measured minutes apart on that VM, where
    the NumPy route sorts 1e7 float32 in 80 ms against the radix kernel's 146.)"""
    global _np_sort_fast, _np_words_fast
    if words:
        if _np_words_fast is None:
            _np_words_fast = _default_over_stable(np.random.default_rng(0).integers(
                0, 1 << 63, _NP_SORT_PROBE, dtype=np.uint64)) < 0.12
        return _np_words_fast
    if _np_sort_fast is None:
        _np_sort_fast = _default_over_stable(
            np.random.default_rng(0).random(_NP_SORT_PROBE).astype(np.float32)) < 0.2
    return _np_sort_fast


def _default_over_stable(row) -> float:
    """NumPy's default sort time of ``row`` over its stable sort time, best of three each."""
    best = {}
    for kind in ("quicksort", "stable"):
        best[kind] = float("inf")
        for _ in range(3):
            b = row.copy()
            t0 = time.perf_counter()
            b.sort(kind=kind)
            best[kind] = min(best[kind], time.perf_counter() - t0)
    return best["quicksort"] / best["stable"]


FIX_ROWS_PY = 32  # rows to fix up one by one in NumPy; more: fix_rows (a kernel to compile)
# two-stage argsort: runs of equal high parts from this long are sorted by NumPy, not in the
# kernel (Numba's sort of 1e6 words: ~70 ms, NumPy's ~10)
LONG_RUN = 4096


def sort_kernel(src, values, indices, descending):
    """src: contiguous (rows, n) tensor (any real dtype or bool), sorted along its last dim
    into ``values`` (same dtype) or ``indices`` (int64), both contiguous of src's shape."""
    host_sync()  # several passes with host-side bookkeeping: run in stream order, inline
    dtype = src._dtype
    total = src._numel
    if total == 0:
        return
    n = src._shape[-1] if src._shape else 1
    rows = total // n
    desc = bool(descending)
    width = dtype.itemsize
    np_values = values is not None and dtype.name in NP_VALUES and (
        n >= NP_MIN_ROW or rows < lanes(width) or width == 8)
    if np_values and (n < RADIX_VALUES_MIN or numpy_sort_fast()):
        _numpy_value_sort(dtype, src, values, rows, n, desc)
        return
    raw = raw_view(src)
    mod = _module(dtype)
    np_argsort = values is None and n <= COMPOSITE_MAX_ROW[width]
    if np_argsort and (width == 1 or n < RADIX_ARGSORT_MIN or numpy_sort_fast(words=True)):
        _numpy_argsort(mod, dtype, raw, indices, rows, n, desc)
        return
    if values is not None and width == 2 and (n >= NP_MIN_ROW or rows < lanes(width)) and (
            n < RADIX_VALUES_MIN or numpy_sort_fast()):
        out = raw_view(values)
        if not _key_values(mod, raw, out, rows, n, desc):
            _cold_values(raw, out, rows, n, key_spec(dtype), desc)
        return
    nthreads = _threads()
    big = total >= PAR_GRAIN and nthreads > 1
    if values is not None:
        # (while the radix kernels compile, NumPy's route where it has one: no compile)
        _sort_values(mod, dtype, raw, raw_view(values), rows, n, desc, big, nthreads,
                     (lambda: _numpy_value_sort(dtype, src, values, rows, n, desc))
                     if np_values else None)
        return
    variant = "parallel" if big and cores.parallel_ready(
        _twins(mod, "prepare_serial", "prepare_parallel"), work=total) else "serial"
    keep = []
    keys = _scratch(total, raw.dtype, keep)
    pay = kernel_array(indices)[indices._offset:indices._offset + total]
    if n >= ROW_PAR and variant == "parallel":
        # long rows: prepare into scratch, MSD-scatter into the result buffers
        kd = _scratch(total, keys.dtype, keep)
        ps = _scratch(total, pay.dtype, keep)
        cores.run(mod.prepare_parallel, (raw, keys, ps, n, desc))
        for r in range(rows):
            sl = slice(r * n, (r + 1) * n)
            _sort_long_row(mod, keys[sl], ps[sl], kd[sl], pay[sl], raw.dtype.itemsize)
    elif variant == "serial" and "argsort" not in mod.warm_paths and not _full_ready(
            mod, "argsort", (("prepare_serial", (raw, keys, pay, n, desc)),
                             ("rows_serial", (keys, pay, rows, n))), total):
        if np_argsort:  # (NumPy's route while the radix kernels compile: no compile)
            _numpy_argsort(mod, dtype, raw, indices, rows, n, desc)
        else:
            _cold_argsort(raw, indices, rows, n, dtype, desc)
    else:
        cores.run(getattr(mod, "prepare_" + variant), (raw, keys, pay, n, desc))
        nch = min(rows, 8 * nthreads)
        if big and rows > 1 and cores.parallel_ready(
                _twins(mod, "rows_serial", "rows_parallel"), (keys, pay, rows, n, nch), total):
            cores.run(mod.rows_parallel, (keys, pay, rows, n, nch))
        else:
            mod.rows_serial(keys, pay, rows, n)


# the ops layer's route for small sorts along any axis (sort_small.py)
sort_kernel.along_axis = functools.partial(sort_along_axis, vectorized_sort=numpy_sort_fast)

# dtypes whose values NumPy compares as tensorlib does (nan unequal to every value, -0.0 equal
# to 0.0)
_DISTINCT = frozenset({"bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
                       "uint64", "float16", "float32", "float64"})


def distinct_sorted(s):
    """The first element of each run of equal values of ``s``, a sorted contiguous 1-D CPU
    tensor, as a new tensor: unique_values' step after its sort, as NumPy steps on the
    elements (the ops layer's route: a flags tensor, a not_equal of two views and a mask
    compaction, ~12 us of a 1e3-element unique_values). None for dtypes outside _DISTINCT."""
    dtype = s._dtype
    n = s._numel
    if dtype.name not in _DISTINCT or n < 2 or len(s._shape) != 1:
        return None
    host_sync()  # (inline, in stream order: as the kernel)
    np_dtype = dtype.storage_np_dtype
    a = dense_view(s, np_dtype)
    keep = np.empty(n, np.bool_)
    keep[0] = True
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    res = a[keep]
    out = new_dense_cpu((res.size,), dtype)
    dense_view(out, np_dtype)[:] = res
    return out


sort_kernel.distinct = distinct_sorted


def _numpy_value_sort(dtype, src, values, rows, n, desc):
    """The value sort of an NP_VALUES dtype by NumPy's sort (typed views: these dtypes'
    storage type is their own)."""
    np_dtype = dtype.storage_np_dtype
    _np_values(dtype, dense_view(src, np_dtype), dense_view(values, np_dtype), rows, n, desc)


def _numpy_argsort(mod, dtype, raw, indices, rows, n, desc):
    """argsort of rows up to COMPOSITE_MAX_ROW long by sorting composite words (NumPy's sort;
    1-byte keys of rows of 256+: the counting sort)."""
    if raw.dtype.itemsize == 1 and n >= 256:  # (shorter rows: 256 counts per row cost more)
        _count_argsort(mod, dtype, raw, indices, rows, n, desc)
    elif raw.dtype.itemsize <= 4:
        _composite_argsort(mod, dtype, raw, indices, rows, n, desc)
    elif not _two_stage_argsort(mod, raw, indices, rows, n, desc):
        _cold_argsort(raw, indices, rows, n, dtype, desc)


def _np_values(dtype, a, o, rows, n, desc):
    """Value sort of the rows of a into o (1-D arrays of the dtype) by NumPy's sort (not
    stable: where that shows, nan payloads and zero signs, _np_fix puts the input's back)."""
    if rows == 1:  # (a few microseconds less than the 2-D form: small sorts feel it)
        if desc:
            asc = np.empty_like(a)
            if not sort_into(a, asc):  # (a long row: on two threads)
                np.copyto(asc, a)
                asc.sort()
            np.copyto(o, asc[::-1])
        else:
            if not sort_into(a, o):
                np.copyto(o, a)
                o.sort()
            asc = o
        if dtype.kind == "f":
            _np_fix_row(a, o, asc, desc)
        return
    raw = a.view(_UINT[a.itemsize])
    out = o.view(raw.dtype)
    a = a.reshape(rows, n)
    o = o.reshape(rows, n)
    if desc:
        asc = a.copy()
        if not sort_rows(asc):  # (many values: half of the rows on another thread)
            asc.sort(axis=-1)
        np.copyto(o, asc[:, ::-1])
    else:
        np.copyto(o, a)
        if not sort_rows(o):
            o.sort(axis=-1)
        asc = o
    if dtype.kind == "f":
        _np_fix(dtype, raw, out, a, o, asc, rows, n, desc)


def _np_fix(dtype, raw, out, a, o, asc, rows, n, desc):
    """After an unstable sort of float rows a (asc: ascending, o: the result, asc reversed when
    desc): the nan run and the zero run of each row hold the input's own bit patterns in input
    order, as a stable sort leaves them (NumPy's AVX-512 sort writes its own quiet nan, and the
    order of equal zeros is arbitrary). A row needs it when it holds a nan or a -0.0 (a zero
    run of +0.0 alone is right as it is: a sort only moves values)."""
    fix = np.isnan(asc[:, -1])
    negz = raw == raw.dtype.type(1 << (8 * raw.dtype.itemsize - 1))
    if negz.any():  # (per-row any() of short rows is slow: only when there is one)
        fix |= negz.reshape(rows, n).any(1)
    todo = np.flatnonzero(fix)
    if todo.size > FIX_ROWS_PY:
        _module(dtype).fix_rows(raw, out, rows, n, desc)
    else:
        for r in todo:
            _np_fix_row(a[r], o[r], asc[r], desc)


def _np_fix_row(a, o, asc, desc):
    n = a.size
    nn = 0
    last = asc[-1]
    if last != last:  # nan (sorted last)
        v = a[np.isnan(a)]
        nn = v.size
        if desc:
            o[:nn] = v
        else:
            o[n - nn:] = v
    elif asc[0] > 0 or last < 0:
        return  # (sorted: no zero in the row, the common case costs two element reads)
    zero = a.dtype.type(0)
    lo = int(asc[:n - nn].searchsorted(zero, "left"))  # -0.0 == 0.0: the run of both
    if lo < n - nn and asc[lo] == zero:
        hi = int(asc[:n - nn].searchsorted(zero, "right"))
        z = a[a == zero]
        if desc:
            o[n - hi:n - lo] = z
        else:
            o[lo:hi] = z


def _key_values(mod, raw, out, rows, n, desc):
    """Value sort of 16-bit rows (the half types: NumPy's sort of them is slow) by NumPy's
    sort of their keys (x86-simd-sort's 16-bit quicksort) turned back into values, nan / -0.0
    runs fixed by fix_rows. False (nothing done) while its kernels are not compiled (the cold
    path serves). Measured 2026-12-05 on this 2-core VM, float16: 1e5 ~0.2 ms vs
    0.72 for the radix vrow and 0.44 for NumPy's float16 sort."""
    if "keysort" not in mod.warm_paths and not _full_ready(
            mod, "keysort", (("keys_into", (raw, out, desc)), ("unkeys", (out, desc)))
            + _fix(mod, raw, out, rows, n, desc), rows * n):
        return False
    special = mod.keys_into(raw, out, desc)
    out.reshape(rows, n).sort(axis=-1)
    mod.unkeys(out, desc)
    if special:
        mod.fix_rows(raw, out, rows, n, desc)
    return True


def _cold_argsort(raw, indices, rows, n, dtype, desc):
    """argsort by the cold path (kernels/cpu/sort_cold.py: NumPy steps, one small kernel)."""
    pay = kernel_array(indices)[indices._offset:indices._offset + rows * n]
    order = cold_order(raw, rows, n, key_spec(dtype), desc)
    if rows > 1:
        np.remainder(order, n, out=pay)  # positions in the row
    else:
        pay[:] = order


def _count_argsort(mod, dtype, raw, indices, rows, n, desc):
    """Stable argsort of 1-byte keys: one serial counting sort (count_argsort; measured
    2026-12-05, uint8 1e6: ~2 ms vs 5.3 for NumPy's stable radix argsort and 11 for the
    composite words); while it is not compiled, NumPy's stable argsort of the same keys."""
    total = rows * n
    pay = kernel_array(indices)[indices._offset:indices._offset + total]
    args = (raw, pay, rows, n, desc)
    if "count" in mod.warm_paths or _full_ready(mod, "count", (("count_argsort", args),),
                                                  total):
        mod.count_argsort(*args)
    else:
        keys = canonical_keys(raw, key_spec(dtype), desc).reshape(rows, n)
        pay.reshape(rows, n)[:] = np.argsort(keys, axis=-1, kind="stable")


def _composite_argsort(mod, dtype, raw, indices, rows, n, desc):
    """Stable argsort of keys up to 32 bits wide: each element becomes one distinct uint64,
    key << (64 - bits) | position, built in the int64 result itself (``compose``), sorted by
    NumPy's sort (x86-simd-sort; distinct values, so its order is the stable one), and the
    positions kept (the low bits). One thread: nothing to stall on a busy machine. Measured
    2026-12-05 on this 2-core AVX-512 VM, float32: 1e5 ~0.6 ms vs 1.0-2.3 for the radix
    argsort, 2e6 ~20 vs 59 ms (2 threads)."""
    o64 = dense_view(indices, np.uint64)
    args = (raw, o64, rows, n, desc)
    total = rows * n
    if "compose" in mod.warm_paths or _full_ready(mod, "compose", (("compose", args),), total):
        mod.compose(*args)
    else:
        # cold: the same keys by NumPy steps (kernels/cpu/sort_cold.py), no kernel to compile
        o64[:] = canonical_keys(raw, key_spec(dtype), desc)
        o64 <<= np.uint64(64 - 8 * raw.dtype.itemsize)
        o64.reshape(rows, n)[:] |= np.arange(n, dtype=np.uint64)
    if rows == 1:
        o64.sort()  # (~0.2 us less than the 2-D form)
    else:
        o64.reshape(rows, n).sort(axis=-1)
    np.bitwise_and(o64, np.uint64((1 << (64 - 8 * raw.dtype.itemsize)) - 1), out=o64)


def _two_stage_argsort(mod, raw, indices, rows, n, desc):
    """Stable argsort of 64-bit keys in two NumPy sorts of composite words (False, nothing
    done, while its kernels are not compiled: the radix route's cold path serves). With pb
    bits for a position (n <= 2**pb) and the keys less the smallest one (their range: signed
    keys around zero need few bits), stage one sorts (the top 64 - pb bits of that range)
    << pb | position; where the range fits in them that is the whole order, else ``resolve``
    orders each run of equal high parts by the low bits (at most pb) and position. Measured
    2026-12-05 on this 2-core VM, float64 (random keys: few runs): 1e5 ~0.7 ms vs 2.2 for the
    8-pass radix argsort, 2e6 ~20 vs 155 ms."""
    total = rows * n
    o64 = kernel_array(indices)[indices._offset:indices._offset + total].view(np.uint64)
    pb = max((n - 1).bit_length(), 1)
    base = np.uint64(0)
    args = (raw, o64, rows, n, desc, base, 0, pb)
    longs = np.empty((total // LONG_RUN + 1, 2), np.int64)
    if "two_stage" not in mod.warm_paths and not _full_ready(
            mod, "two_stage", (("key_range", (raw, desc)), ("compose_hi", args),
                               ("resolve", args + (LONG_RUN, longs))), total):
        return False
    kmin, kmax = mod.key_range(raw, desc)
    base = np.uint64(kmin)   # (Numba hands back Python ints; the kernels take uint64)
    sh = max((int(kmax) - int(kmin)).bit_length() - (64 - pb), 0)
    mod.compose_hi(raw, o64, rows, n, desc, base, sh, pb)
    o64.reshape(rows, n).sort(axis=-1)
    if sh:
        for lo, hi in longs[:mod.resolve(raw, o64, rows, n, desc, base, sh, pb, LONG_RUN,
                                         longs)]:
            o64[lo:hi].sort()
    np.bitwise_and(o64, np.uint64((1 << pb) - 1), out=o64)
    return True


def _sort_values(mod, dtype, raw, out, rows, n, desc, big, nthreads, cold=None):
    """Value sort of the rows of raw (unsigned view) into out: long rows of 1-byte keys one at
    a time with all threads (a counting sort); at least a vector's worth of rows up to
    NET_MAX long by the sorting network, row groups spread over threads; other short rows by
    LSD radix, spread over threads. ``cold()``: what serves while a kernel is not compiled
    (default: the cold path)."""
    if cold is None:
        def cold():
            _cold_values(raw, out, rows, n, key_spec(dtype), desc)
    total = rows * n
    if n >= ROW_PAR and nthreads > 1 and raw.dtype.itemsize == 1 and cores.parallel_ready(
            _twins(mod, "vrows_serial", "vlong"), (raw[:n], out[:n], desc, nthreads), total):
        for r in range(rows):
            sl = slice(r * n, (r + 1) * n)
            cores.run(mod.vlong, (raw[sl], out[sl], desc, nthreads))
    elif 2 <= n <= NET_MAX[raw.dtype.itemsize] and rows >= lanes(raw.dtype.itemsize):
        npad = NET_W
        while npad < n:
            npad *= 2
        g = lanes(raw.dtype.itemsize)
        groups = -(-rows // g)
        nch = min(groups, 8 * nthreads)
        if big and groups > 1 and cores.parallel_ready(
                _twins(mod, "net_groups", "vnet_parallel"),
                (raw, out, rows, n, npad, desc, nch), total):
            cores.run(mod.vnet_parallel, (raw, out, rows, n, npad, desc, nch))
        else:
            keep = []
            args = (raw, out, _scratch(npad * g, raw.dtype, keep), 0, groups, rows, n, npad,
                    desc)
            if "net" in mod.warm_paths or _full_ready(mod, "net", (("net_groups", args),),
                                                      total):
                mod.net_groups(*args)
            else:
                cold()
    else:
        nch = min(rows, 8 * nthreads)
        if big and rows > 1 and cores.parallel_ready(
                _twins(mod, "vrows_serial", "vrows_parallel"), (raw, out, rows, n, nch, desc),
                total):
            special = cores.run(mod.vrows_parallel, (raw, out, rows, n, nch, desc))
        elif rows == 1:
            # one row: vrow itself (no row-loop kernel to compile around it)
            keep = []
            kt = raw.dtype
            args = (raw, out, _scratch(n, kt, keep), _scratch(n, kt, keep),
                    _scratch(raw.dtype.itemsize * 256, np.int64, keep).reshape(
                        raw.dtype.itemsize, 256), desc)
            if "vrow" not in mod.warm_paths and not _full_ready(
                    mod, "vrow", (("vrow", args),) + _fix(mod, raw, out, rows, n, desc), total):
                return cold()
            special = mod.vrow(*args)
        else:
            if "vrows" not in mod.warm_paths and not _full_ready(
                    mod, "vrows", (("vrows_serial", (raw, out, rows, n, desc)),)
                    + _fix(mod, raw, out, rows, n, desc), total):
                return cold()
            special = mod.vrows_serial(raw, out, rows, n, desc)
        if special:
            mod.fix_rows(raw, out, rows, n, desc)


_NO_SORTER = np.zeros(1, np.int64)  # (read by no kernel: use_sorter is False with it)


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
        s, use = _NO_SORTER, False
    else:
        s, use = kernel_array(sorter)[sorter._offset:sorter._offset + sorter.numel()], True
    # (the number of halvings, floor(log2(len + 1)), in integer arithmetic)
    name = "search_parallel" if b.size * max(1, (a.size + 1).bit_length() - 1) >= PAR_GRAIN \
        and _threads() > 1 else "search_serial"
    args = (a, s, use, b, o, bool(right))
    if name in mod.warm_paths or _full_ready(mod, name, ((name, args),), b.size):
        cores.run(getattr(mod, name), args)
    else:
        # cold: NumPy's binary search over the same order keys (equal results on sorted x1)
        spec = key_spec(x1.dtype)
        k1 = canonical_keys(a, spec, False)
        o[:] = np.searchsorted(k1[s] if use else k1, canonical_keys(b, spec, False),
                               side="right" if right else "left")
