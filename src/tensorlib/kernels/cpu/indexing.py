"""Numba CPU kernels for advanced indexing: gather (``x[idx]``), scatter (``x[idx] = v``) and
``nonzero`` (boolean masks -> int64 indices).

The device-generic side (tensorlib.ops.indexing) hands over an IndexPlan: a base element
offset, the basic dims before and after the broadcast index block (shape + strides each) and the
index tensors broadcast to the block's shape. Here every element offset into the source is
``pre[p] + adv[b] + post[q]``: ``adv`` folds the base offset and all index tensors (wrapped and
bounds-checked) into one int64 array, ``pre``/``post`` enumerate the basic dims. Gather and
scatter only move bits, so they are specialised on the item size, not the dtype.
"""
from __future__ import annotations

import math
import threading

import numpy as np

from ... import dtypes as _dt
from ...dtype_scalars import FINITE_MAX
from .casting import kernel_array
from .cold_route import kernel_ready, ready_once
from .indexing_source import (COMPACT_RAW_HEADER, COMPACT_RAW_SOURCE, COMPACT_SOURCE,
                              DIRECT_SOURCE, LOAD_SIGNED, LOAD_U64, MOVE_SOURCE, NONZERO_SOURCE,
                              OFFSETS_SOURCE, TAKE_RAW_HEADER, TAKE_RAW_SOURCE)
from .. import codegen as _codegen
from .pointwise import GRAIN as _FILL_GRAIN, _entry_point, load_generated_module
from .pointwise_fast import _wait_queued, fill_dense
from .arrays import dense_view, kernel_np_dtype, strided_array
from ...runtime.cpu import cores, streams as _streams
from ...runtime.cpu.streams import host_sync
from ...storage import Storage
from ...tensor import Tensor, contiguous_strides

__all__ = ["index", "index_put", "nonzero", "getitem_dense", "getitem_arrays", "take_along_small"]

CHUNK = 1 << 14          # flat elements per parallel task (index offsets, nonzero)
# Elements from which gathers, scatters and nonzero use the thread team: 2**15, the pointwise
# grain these loops shared until pointwise loops moved theirs up (kernels/cpu/pointwise.py);
# gathers are bound by memory latency rather than bandwidth (not re-measured since).
GRAIN = 1 << 15

_lock = threading.Lock()
_mods: dict = {}

_count_nonzero = np.count_nonzero
_frombuffer = np.frombuffer
_BY_ITEMSIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.complex128}


def _module(key, make):
    return _codegen.once(_mods, _lock, key, make)


def _move_module():
    return _module("move", lambda: load_generated_module("indexmove", MOVE_SOURCE))


def _offsets_module(idx_dtype, parallel):
    def make():
        load = LOAD_U64 if idx_dtype is _dt.uint64 else LOAD_SIGNED
        src = OFFSETS_SOURCE.format(load=load, parallel=parallel,
                                     rng="prange" if parallel else "range")
        return load_generated_module("indexoff", src)
    return _module(("off", idx_dtype is _dt.uint64, parallel), make)


def _nonzero_module(dtype, parallel):
    half = dtype.itemsize == 2 and dtype.kind == "f"
    # Half types arrive as raw bits: any bit but the sign makes them nonzero (-0.0 is zero).
    nz = "(v & np.uint16(0x7fff)) != 0" if half else "v != 0"

    def make():
        src = NONZERO_SOURCE.format(nz=nz, parallel=parallel,
                                     rng="prange" if parallel else "range")
        return load_generated_module("nonzero", src)
    return _module(("nz", half, parallel), make)


def _compact_module():
    return _module("compact", lambda: load_generated_module(
        "compact", COMPACT_SOURCE + COMPACT_RAW_HEADER + "".join(
            COMPACT_RAW_SOURCE.format(word=np.dtype(w).name) for w in _BY_ITEMSIZE.values())))


_compact_words: set = set()  # word types compact_serial is compiled for (or on disk)


def _compact_ready(word, src, mask):
    """Whether the small-call mask path runs compact_serial for ``word``: once it is compiled
    or in the disk cache; before, NumPy's compress serves (no compile on a first call) and the
    kernel compiles in the background once the combination repeats (cold_route's rule)."""
    if word in _compact_words:
        return True
    disp = _compact_module().compact_serial
    if kernel_ready(disp, (np.empty(2, word), src, mask), src.size):
        _compact_words.add(word)
        return True
    return False


_compact_raws: dict = {}  # item size -> (count_raw, compact_<word>) entry points


def _compact_raw(item, work):
    """The compiled ``count_raw(size, mask_addr)`` and ``compact_<word>(size, out_addr,
    src_addr, mask_addr, count)`` (COMPACT_RAW_SOURCE) for elements of ``item`` bytes, or None
    while either is neither compiled nor on disk (cold_route's rule, as _take_raw)."""
    fns = _compact_raws.get(item)
    if fns is None:
        mod = _compact_module()
        count = mod.count_raw
        move = getattr(mod, f"compact_{np.dtype(_BY_ITEMSIZE[item]).name}")
        if not (kernel_ready(count, (0, 0), work) and kernel_ready(move, (0, 0, 0, 0, 0), work)):
            return None
        fns = _compact_raws[item] = (_entry_point(count, 1, ()),
                                     _entry_point(move, 3, (), (0,)))
    return fns


def compact(t, key):
    """``t[key]`` for a contiguous ``t`` and a contiguous bool ``key`` of its shape: the kept
    elements, in C order, as a new 1-D tensor (raw words moved: any dtype, bits kept)."""
    size = t._numel
    src = _raw(t)[t._offset:t._offset + size]
    mask = kernel_array(key)[key._offset:key._offset + size].view(np.uint8)
    mod = _compact_module()
    nchunks = (size + CHUNK - 1) // CHUNK
    counts = np.empty(nchunks, np.int64)
    par = size >= GRAIN and _ready(mod.compact_serial, mod.compact_counts,
                                   (mask, CHUNK, counts), size)
    if par:
        cores.call(mod.compact_counts, (mask, CHUNK, counts))
        total = int(counts.sum())
    else:
        total = int(np.count_nonzero(mask))
    st = Storage.allocate((total + 1) * t._dtype.itemsize)  # + the scratch slot
    out = Tensor._make(st, (total,), (1,), 0, t._dtype)
    if not total:
        return out
    if par and _ready(mod.compact_serial, mod.compact_parallel, (_raw(out), src, mask, CHUNK,
                                                                 counts, total), size):
        starts = np.zeros(nchunks, np.int64)
        np.cumsum(counts[:-1], out=starts[1:])
        cores.call(mod.compact_parallel, (_raw(out), src, mask, CHUNK, starts, total))
    else:
        mod.compact_serial(_raw(out), src, mask)
    return out


def _raw(t):
    """The storage as a 1-D array of same-size unsigned words (bit moves need no dtype)."""
    return t._storage.typed(_BY_ITEMSIZE[t._dtype.itemsize])


def _i64(values):
    return np.array(values, dtype=np.int64).reshape(-1)


def _offsets(shape, strides):
    """Element offsets of a strided block, C order (NumPy: pre / post blocks are small, and a
    kernel compile for them costs more than they ever take)."""
    out = np.zeros((), np.int64)
    for size, stride in zip(shape, strides):
        out = out[..., None] + np.arange(size, dtype=np.int64) * stride
    return out.reshape(-1)


def _ready(serial, parallel, args, work):
    """Whether the parallel kernel should run now (cores.parallel_ready: it compiles in the
    background once the combination is used for real work; the serial one serves before)."""
    return cores.team_ready(cores.twins(parallel, serial), args, work)


def _advanced_offsets(plan):
    """plan.base + sum_k wrap(idx_k) * stride_k over the broadcast index shape (int64)."""
    n = 1
    for s in plan.index_shape:
        n *= s
    if plan.offsets is not None:  # precomputed (a lone mask's element offsets)
        o = plan.offsets
        return o._storage.typed(np.int64)[o._offset:o._offset + n]
    adv = np.empty(n, np.int64)
    if not plan.indices:
        adv.fill(plan.base_offset)
        return adv
    bshape = _i64(plan.index_shape)
    for k, ix in enumerate(plan.indices):
        t = ix.tensor
        args = (adv, kernel_array(t), t._offset, bshape, _i64(t._strides), ix.size, ix.stride,
                plan.base_offset, k == 0, CHUNK)
        fn = _offsets_module(t._dtype, False).index_offsets
        if n >= GRAIN:
            par = _offsets_module(t._dtype, True).index_offsets
            fn = par if _ready(fn, par, args, n) else fn
        bad = cores.run(fn, args)
        if bad >= 0:
            plan.raise_out_of_bounds(k, int(bad))
    return adv


def _layout(plan):
    pre = _offsets(plan.pre_shape, plan.pre_strides)
    post = _offsets(plan.post_shape, plan.post_strides)
    return pre, _advanced_offsets(plan), post


def _direct_module(parallel):
    global _direct_serial

    def make():
        src = DIRECT_SOURCE.format(parallel=parallel, rng="prange" if parallel else "range")
        if not parallel:
            src += TAKE_RAW_HEADER + "".join(
                TAKE_RAW_SOURCE.format(word=np.dtype(w).name, itype=i)
                for w in _BY_ITEMSIZE.values() for i in ("int32", "int64"))
        return load_generated_module("indexdirect", src)
    mod = _module(("direct", parallel), make)
    if not parallel:
        _direct_serial = mod  # (the small-call path then skips this lookup)
    return mod


_direct_serial = None
_takes: dict = {}  # (item size, index dtype) -> the raw-address gather's entry point


def _take_raw(item, idx_dtype, work):
    """The compiled ``take_<word>_<itype>(n, out_addr, src_addr, span, idx_addr, size, stride,
    base)`` of the serial direct module (TAKE_RAW_SOURCE: the bad index's position or -1), or
    None while it is neither compiled nor on disk: the boxed call serves meanwhile (a first
    call compiles nothing more) and it compiles in the background once the combination
    repeats (cold_route's rule)."""
    fn = _takes.get((item, idx_dtype))
    if fn is None:
        mod = _direct_serial or _direct_module(False)
        disp = getattr(mod, f"take_{np.dtype(_BY_ITEMSIZE[item]).name}_{idx_dtype.name}")
        if not kernel_ready(disp, (0, 0, 0, 0, 0, 1, 1, 0), work):
            return None
        fn = _takes[(item, idx_dtype)] = _entry_point(disp, 2, (), (0, 0, 1, 1, 0))
    return fn


def _take_along(dst, src, offset, size, stride, idx):
    """dst <- NumPy's take at ``idx`` of the ``size`` elements ``stride`` apart from
    ``offset`` in the raw words ``src`` (the gather kernels' first calls, while they are
    neither compiled nor on disk); NumPy's IndexError for an out-of-range index (it checks
    every one: dst is fresh memory, so a partial write before it raises is seen by no one)."""
    item = src.itemsize
    along = np.ndarray((size,), src.dtype, src, offset * item, (stride * item,))
    np.take(along, idx, out=dst, mode="raise")


def index(plan, out):
    """CPU 'index' stub: out (contiguous, plan.out_shape) <- plan.src at the planned offsets."""
    host_sync()  # bounds are checked on the host: run in stream order, inline
    big = out._numel >= GRAIN
    dst, src = _raw(out)[out._offset:out._offset + out._numel], _raw(plan.src)
    ix = plan.indices[0] if len(plan.indices) == 1 and plan.offsets is None else None
    if ix is not None and ix.tensor._dtype in (_dt.int64, _dt.int32) and \
            ix.tensor.is_contiguous():
        # The common x[idx]: check and gather in one pass, no offsets array.
        pre = _offsets(plan.pre_shape, plan.pre_strides)
        post = _offsets(plan.post_shape, plan.post_strides)
        t = ix.tensor
        if pre.size * post.size == 0:
            _advanced_offsets(plan)  # nothing to copy, but indices are still checked
            return out
        args = (dst, src, kernel_array(t), t._offset, t._numel, ix.size, ix.stride,
                plan.base_offset, pre, post, CHUNK)
        fn = _direct_module(False).gather_direct
        if big and t._numel > CHUNK:  # (its tasks split the indices: one chunk, one task)
            par = _direct_module(True).gather_direct
            fn = par if _ready(fn, par, args, out._numel) else fn
        if pre.size == 1 and post.size == 1 and not cores.is_parallel(fn) and \
                not ready_once((fn, src.dtype, t._dtype), out._numel, lambda: (fn, args)):
            # a first call while the gather is neither compiled nor on disk (~0.23 s to
            # compile): NumPy's take along the indexed dim
            idx = kernel_array(t)[t._offset:t._offset + t._numel]
            try:
                _take_along(dst, src, plan.base_offset, ix.size, ix.stride, idx)
            except IndexError:
                pos = int(np.flatnonzero((idx < -ix.size) | (idx >= ix.size))[0])
                plan.raise_out_of_bounds(0, pos)
            return out
        bad = cores.run(fn, args)
        if bad >= 0:
            plan.raise_out_of_bounds(0, int(bad))
        return out
    pre, adv, post = _layout(plan)
    if out._numel == 0:
        return out
    mod = _move_module()
    if big and _ready(mod.gather_serial, mod.gather_parallel,
                      (dst, src, pre, adv, post, CHUNK), out._numel):
        cores.call(mod.gather_parallel, (dst, src, pre, adv, post, CHUNK))
    elif pre.size == 1 and post.size == 1:
        # one run of checked offsets (x[mask], x[idx] of other index kinds): NumPy's take
        # (no kernel to compile; 'clip' is a no-op on valid offsets and writes out directly)
        np.take(src, adv + (pre[0] + post[0]), out=dst, mode="clip")
    else:
        mod.gather_serial(dst, src, pre, adv, post)
    return out


def index_put(plan, values):
    """CPU 'index_put' stub: plan.src at the planned offsets <- values (contiguous, the source's
    dtype, either plan.out_shape or one element broadcast to it)."""
    host_sync()  # bounds are checked on the host: run in stream order, inline
    pre, adv, post = _layout(plan)
    numel = pre.size * adv.size * post.size
    if numel == 0:
        return
    mod = _move_module()
    val = _raw(values)[values._offset:values._offset + values._numel]
    vstep = 0 if values._numel == 1 else 1
    args = (_raw(plan.src), val, vstep, pre, adv, post)
    if numel >= GRAIN and max(pre.size, post.size) > 1 and \
            _ready(mod.scatter_serial, mod.scatter_parallel, args, numel):
        cores.call(mod.scatter_parallel, args)
    else:
        mod.scatter_serial(*args)


def nonzero(x, offset_strides=None, base=0):
    """CPU 'nonzero' stub (x has ndim >= 1). Default: int64 tensor of shape (ndim, count) (rows
    contiguous), the C-order multi-indices of x's nonzero elements: NumPy's nonzero, which
    beats the two-pass kernel on every size and layout here (2 cores: 1e5 random mask 45 vs
    164 us, 2e6 0.91 vs 2.19 ms). With offset_strides (one per dim of x): the 1-D int64 tensor
    base + sum_d i_d * offset_strides[d] instead (element offsets of a masked tensor, so
    x[mask] needs no index tensors), from the kernel's passes or from NumPy's nonzero."""
    host_sync()  # the count sizes the output: run in stream order, inline
    if offset_strides is None:
        return _nonzero_numpy(x, None, 0)
    nd = x.ndim
    n = x._numel
    nchunks = (n + CHUNK - 1) // CHUNK
    arr = kernel_array(x)
    shape, strides, ostrides = _i64(x._shape), _i64(x._strides), _i64(offset_strides)
    starts = np.zeros(max(nchunks, 1), np.int64)
    args = (arr, x._offset, shape, strides, CHUNK, starts, 0, 0, np.empty(1, np.int64),
            ostrides, base)
    ser = _nonzero_module(x._dtype, False)
    mod = ser
    if n >= GRAIN:
        par = _nonzero_module(x._dtype, True)
        mod = par if _ready(ser.nonzero_pass, par.nonzero_pass, args, n) else ser
    if mod is ser and x.is_contiguous():
        return _nonzero_numpy(x, offset_strides, base)
    cores.run(mod.nonzero_pass, args)
    # Per-chunk counts -> each chunk's first output position (exclusive prefix sum).
    total = 0
    for c in range(nchunks):
        starts[c], total = total, total + int(starts[c])
    # One extra (scratch) slot for the branch-free second pass; the result views the first
    # `total`.
    st = Storage.allocate((total + 1) * 8)
    out = Tensor._make(st, (total,), (1,), 0, _dt.int64)
    if total:
        cores.run(mod.nonzero_pass, (arr, x._offset, shape, strides, CHUNK, starts, total, 1,
                                     st.typed(np.int64), ostrides, base))
    return out


# Index rows up to this many are copied into a cached block (~1 us for 4096); bigger ones wrap
# NumPy's arrays (~2.3 us, no copy)
_WRAP_MIN = 4096


def _nonzero_numpy(x, offset_strides, base):
    """nonzero() through NumPy's nonzero on a view of x (what the kernel's passes compute,
    without a kernel to compile); the same result layouts."""
    v = strided_array(x, kernel_np_dtype(x._dtype))
    if x._dtype.itemsize == 2 and x._dtype.kind == "f":
        v = (v & np.uint16(0x7fff)) != 0  # raw half bits: any bit but the sign is nonzero
    idx = np.nonzero(v)
    total = idx[0].size
    if offset_strides is None:
        nd = len(idx)
        if nd * total > _WRAP_MIN:
            rows = idx[0].reshape(1, total) if nd == 1 else np.stack(idx)
            st, off = Storage.from_buffer(rows.astype(np.int64, copy=False))
            return Tensor._make(st, (nd, total), (total, 1), off // 8, _dt.int64)
        st = Storage.allocate(nd * total * 8)
        if total:
            rows = _frombuffer(st.buffer, np.int64, nd * total)
            for d in range(nd):
                rows[d * total:(d + 1) * total] = idx[d]
        return Tensor._make(st, (nd, total), (total, 1), 0, _dt.int64)
    st = Storage.allocate(total * 8)
    out = Tensor._make(st, (total,), (1,), 0, _dt.int64)
    if total:
        o = st.typed(np.int64)[:total]
        np.multiply(idx[0], offset_strides[0], out=o)
        for d in range(1, len(idx)):
            o += idx[d] * offset_strides[d]
        if base:
            o += base
    return out


# ---- small-call fast path (indexing.getitem) ----------------------------------------------------
_ZERO = np.zeros(1, np.int64)  # the offsets of an empty pre/post shape: one, at 0
_posts: dict = {}


def setitem_dense(t, key, value):
    """``t[key] = value`` on the host, for ``key`` a 1-D int32 / int64 index tensor over dim 0
    (or a NumPy integer array: a list key the caller converted) or a bool mask of t's shape,
    on t's device, or an int or a slice over dim 0 or a tuple of ints and slices (a Python
    scalar value only); ``value`` a Python scalar already converted by setitem's rules, or a
    tensor of t's dtype that broadcasts to the indexed shape (one element for a mask); key and
    value in other memory than t's; below the grain, but for index arrays into a 1-D target
    or rows of ROWS_NUMPY_MIN+ elements at any size: NumPy's assignment through views of the
    storages (it checks every index before writing: an
    out-of-range index writes nothing; repeated indices: the last write wins, as
    index_put's; tests/ops/test_indexing.py holds NumPy to both). The general path plans the
    key, makes the value a tensor and copies it before its kernel: x[idx] = v of 50 indices
    ~28 us, x[mask] = 0.0 of 1e3 ~39 us, NumPy 0.2 / 1.8. Returns False (the general path
    runs, and raises what it raises) for anything else: CPU streams or the profiler in use,
    bfloat16 (NumPy has none), broadcast targets, an out-of-range index."""
    # (a dtype's NumPy type stores the bits its values have and converts a Python scalar as
    # setitem does, float16 rounded once from the double; bfloat16 has none)
    npd = t._dtype.np_dtype
    if npd is None or not t._shape or _streams._slow or 0 in t._strides:
        return False  # (a zero stride: the general path refuses writes to shared elements)
    tk = type(key)
    if tk is np.ndarray:
        ix, count = key, key.size
    elif tk is int or tk is slice:  # basic: a Python scalar value only (the caller's check)
        ix = key
        count = 1 if tk is int else len(range(*key.indices(t._shape[0])))
    elif tk is tuple:  # of ints and slices (the caller's check), a Python scalar value only
        shape = t._shape
        if len(key) > len(shape):
            return False  # (the general path raises)
        written = t._numel
        for k, n in zip(key, shape):
            if n:
                written = written // n * (len(range(*k.indices(n))) if type(k) is slice else 1)
        if written >= _FILL_GRAIN:
            return False  # (the general path's fill runs the team)
        ix, count = key, None
    else:
        kd = key._dtype
        if key._storage is t._storage:
            return False
        if kd is _dt.bool_:
            if key._shape != t._shape or t._numel >= GRAIN:
                return False
            ix, count = strided_array(key, np.bool_), None
        elif (kd is _dt.int64 or kd is _dt.int32) and len(key._shape) == 1:
            ix, count = strided_array(key, kd.np_dtype), key._numel
        else:
            return False
    inner = t._numel // t._shape[0] if t._shape[0] else 0
    if (tk is slice and type(value) is not Tensor and (key.step is None or key.step == 1)
            and (t._contiguous or t.is_contiguous())):
        # whole rows of a Python scalar, one block: the fill kernel's flat loop up to its
        # grain (NumPy's fill loop is slower: x[1:-1] = 2.0 of 1e5 float32 ~13 -> ~9 us)
        first = range(*key.indices(t._shape[0])).start
        block = Tensor._make(t._storage, (count * inner,), (1,), t._offset + first * inner,
                             t._dtype)
        return fill_dense(block, value) is not None
    # (a Python scalar into a slice: the fill kernels' grain, see below)
    limit = _FILL_GRAIN if tk is slice and type(value) is not Tensor else GRAIN
    if (count is not None and count * inner >= limit and (inner != 1 or tk is slice)
            and (inner < ROWS_NUMPY_MIN or tk is slice)):
        # (element by element into a 1-D target, NumPy's assignment at any size: 5e5
        # indices into 1e7 float32 / int64 1.0-1.05x NumPy's time this way, 1.4-1.75x on
        # the general path's offsets and parallel scatter; row copies and slices keep the
        # team above the grain; a Python scalar into a slice, up to the fill kernels' grain:
        # below it the general path's fill of the view is NumPy's assignment too; rows of
        # ROWS_NUMPY_MIN+ elements by index: NumPy's assignment at any size, see there)
        return False
    if type(value) is not Tensor:
        lim = FINITE_MAX.get(t._dtype)
        if lim is not None and (abs(value.real) > lim or abs(value.imag) > lim) and \
                math.isfinite(abs(value)):
            return False  # (NumPy's cast would warn of the overflow; the general path: inf)
    else:
        if value._dtype is not t._dtype or value._storage is t._storage:
            return False
        vs = value._shape
        if count is None:
            if vs not in ((), (1,)):
                return False  # (the mask's count would size the value)
        else:
            indexed = (count,) + t._shape[1:]
            if len(vs) > len(indexed) or any(v != 1 and v != n for v, n in
                                             zip(vs[::-1], indexed[::-1])):
                return False  # the general path raises what it raises
        value = strided_array(value, npd)
    try:
        strided_array(t, npd)[ix] = value
    except IndexError:
        return False
    return True


_WHOLE = slice(None)
# x[idx] = rows of at least this many elements: NumPy's assignment (a copy or fill per row) at
# any size, not the general path's team scatter above the grain. Measured 2026-12-06 on a
# 2-core Zen 4 VM, float32, (rows, row length, indices): (100, 1000, 50) values 64 -> 6 us,
# (100, 20000, 50) 162 -> 91, (1000, 10000, 500) 1138 -> 1027 (a scalar: 577 -> 634),
# (20000, 64, 10000) 154 -> 146; rows of 16: NumPy 1848 against the team's 339.
ROWS_NUMPY_MIN = 64


def getitem_arrays(t, key):
    """``t[i0, i1, ...]`` for a tuple of integer index tensors on t's device (one per leading
    dim, broadcast together; the dims after them whole, also as trailing ``:``), as long as
    every index tensor times those dims stays below the grain: NumPy's advanced indexing of
    t's elements as raw words, copied into a new C-order tensor (the general path plans the
    key, works out an offsets array per index and gathers: ~30-60 us for 500 points of a
    matrix, NumPy ~4). None for anything else, and for an out-of-range index (the general
    path runs and raises its own error; nothing was written)."""
    shape = t._shape
    n = len(key)
    while n and type(key[n - 1]) is slice and key[n - 1] == _WHOLE:
        n -= 1  # (x[idx, :] is x[idx])
    if n > len(shape) or (_streams._slow and _streams.tls.queue is not _streams.DEFAULT):
        return None
    if n == 1:
        return getitem_dense(t, key[0]) if type(key[0]) is Tensor else None
    key = key[:n]
    rest = math.prod(shape[n:])
    arrays = []
    for k in key:
        if (type(k) is not Tensor or k._ks != t._ks or k._numel * rest >= GRAIN
                or (k._dtype is not _dt.int64 and k._dtype is not _dt.int32)):
            return None
        arrays.append(strided_array(k, k._dtype.storage_np_dtype))
    return _indexed_words(t, tuple(arrays))


def _indexed_words(t, key):
    """NumPy's advanced indexing of t's elements as raw words by ``key`` (a tuple of NumPy
    index arrays), copied into a new C-order tensor; None when NumPy raises IndexError (an
    out-of-range index, shapes that do not broadcast: the general path raises its own)."""
    word = _BY_ITEMSIZE[t._dtype.itemsize]
    try:
        res = strided_array(t, word)[key]
    except IndexError:
        return None
    out = Tensor._make(Storage.allocate(res.nbytes), res.shape, contiguous_strides(res.shape),
                       0, t._dtype)
    if res.size:
        np.copyto(dense_view(out, word).reshape(res.shape), res)
    return out


_aranges: dict = {}  # (length, dim, ndim) -> arange(length) shaped to broadcast along dim


def take_along_small(t, idx, ax):
    """``take_along_axis(t, idx, ax)`` for an int32 / int64 index tensor on t's device (same
    ndim; the other dims broadcast) whose result stays below the grain: NumPy's
    take_along_axis of t's elements as raw words, copied into a new C-order tensor (the
    general path builds an arange tensor per other dim and plans x[key]: ~13 us for (100,
    1000) by (100, 1), NumPy ~4). None for anything else, and for an out-of-range index or
    shapes that do not broadcast (the general path raises its own error)."""
    shape, ishape = t._shape, idx._shape
    if (idx._ks != t._ks or (idx._dtype is not _dt.int64 and idx._dtype is not _dt.int32)
            or len(ishape) != len(shape)
            or (_streams._slow and _streams.tls.queue is not _streams.DEFAULT)):
        return None
    n = ishape[ax]
    for d, (a, b) in enumerate(zip(shape, ishape)):
        if d != ax:
            n *= a if b == 1 else b
    if n >= GRAIN:
        return None
    # t[r0, ..., idx, ..., rk] with r_d = arange along dim d (what NumPy's take_along_axis
    # builds, without its Python-level steps)
    nd = len(shape)
    key = []
    for d in range(nd):
        if d == ax:
            key.append(strided_array(idx, idx._dtype.storage_np_dtype))
        else:
            r = _aranges.get((shape[d], d, nd))
            if r is None:
                if len(_aranges) > 256:
                    _aranges.clear()
                grid = [1] * nd
                grid[d] = shape[d]
                r = _aranges[(shape[d], d, nd)] = np.arange(shape[d]).reshape(grid)
            key.append(r)
    return _indexed_words(t, tuple(key))


def getitem_dense(t, key):
    """``t[key]`` for a key tensor on t's device that the general path would turn into the plans
    ``index()`` serves directly: a 1-D contiguous int32/int64 index over dim 0, or a bool mask
    of t's whole shape. Same kernels, same results; returns None (the general path runs, and
    raises what it raises) for anything else: CPU streams or the profiler in use, an
    out-of-range index."""
    if not t._shape or (_streams._slow and _streams.tls.queue is not _streams.DEFAULT):
        return None  # (on the default stream, Storage.typed() waits for queued writers)
    kd = key._dtype
    if kd is _dt.int64 or kd is _dt.int32:
        if len(key._shape) != 1 or not (key._contiguous or key.is_contiguous()):
            return None
        pk = (t._shape[1:], t._strides[1:])
        post = _posts.get(pk)
        if post is None:
            if len(_posts) > 1024:
                _posts.clear()
            post = _posts[pk] = _offsets(*pk) if pk[0] else _ZERO
        nidx = key._numel
        n = nidx * post.size
        if not n or (n >= GRAIN and _streams._prof is not None):
            return None  # (under the profiler the general path records the big gather)
        item = t._dtype.itemsize
        st = Storage.allocate(n * item)
        take = _take_raw(item, kd, n) if not pk[0] and n < GRAIN else None
        if take is not None:
            # one word per index: the raw-address gather (the same loop, no arrays to box)
            if _streams._slow:
                _wait_queued(t, key)  # as Storage.typed() would
            out = Tensor._make(st, (nidx,), (1,), 0, t._dtype)
            src = t._storage
            bad = take(nidx, st._ptr, src._ptr, src.nbytes // item,
                       key._storage._ptr + key._offset * kd.itemsize, t._shape[0],
                       t._strides[0], t._offset)
            return out if bad < 0 else None
        word = _BY_ITEMSIZE[item]
        if pk[0]:
            shape = (nidx,) + pk[0]
            out = Tensor._make(st, shape, contiguous_strides(shape), 0, t._dtype)
        else:
            out = Tensor._make(st, (nidx,), (1,), 0, t._dtype)
        dst, src, idx = dense_view(out, word), _raw(t), kernel_array(key)
        serial = _direct_serial or _direct_module(False)
        if n >= GRAIN and nidx > CHUNK:  # (as index() runs it: the team once compiled)
            args = (dst, src, idx, key._offset, nidx, t._shape[0], t._strides[0], t._offset,
                    _ZERO, post, CHUNK)
            par = _direct_module(True).gather_direct
            if _ready(serial.gather_direct, par, args, n):
                bad = cores.call(par, args)
                return out if bad < 0 else None
        # One block of indices, no pre block: the run itself (no chunk loop to compile)
        args = (dst, src, idx, key._offset, t._shape[0], t._strides[0], t._offset, post, 0, 0,
                nidx)
        if not ready_once((serial._direct_run, src.dtype, kd), n,
                          lambda: (serial._direct_run, args)):
            # while the run is neither compiled nor on disk (~0.3 s to compile): NumPy's take
            # along dim 0 (an out-of-range index: the general path raises)
            ix = idx[key._offset:key._offset + nidx]
            try:
                if pk[0]:
                    np.take(strided_array(t, word), ix, axis=0, out=dst.reshape(out._shape),
                            mode="raise")
                else:
                    _take_along(dst, src, t._offset, t._shape[0], t._strides[0], ix)
            except IndexError:
                return None
            return out
        bad = serial._direct_run(*args)
        return out if bad < 0 else None
    if kd is _dt.bool_ and key._shape == t._shape and t._numel >= GRAIN:
        if t.is_contiguous() and key.is_contiguous() and _streams._prof is None:
            return compact(t, key)  # (under the profiler the general path records its kernels)
        return None
    if kd is _dt.bool_ and key._shape == t._shape:
        if (t._contiguous or t.is_contiguous()) and (key._contiguous or key.is_contiguous()):
            # Both dense: the selected elements are moved as raw words (no offsets array; a
            # move is a move, whichever loop does it): on raw addresses once compiled
            size = t._numel
            item = t._dtype.itemsize
            raw = _compact_raw(item, size)
            if raw is not None:
                if _streams._slow:
                    _wait_queued(t, key)  # as Storage.typed() would
                maddr = key._storage._ptr + key._offset
                n = raw[0](size, maddr)
                st = Storage.allocate((n + 1) * item if n else 0)  # (+ the scratch slot)
                out = Tensor._make(st, (n,), (1,), 0, t._dtype)
                if n:
                    raw[1](size, st._ptr, t._storage._ptr + t._offset * item, maddr, n)
                return out
            mask = key._storage.typed(np.uint8)[key._offset:key._offset + size]
            n = int(_count_nonzero(mask))
            word = _BY_ITEMSIZE[item]
            src = _raw(t)[t._offset:t._offset + size]
            if n and _compact_ready(word, src, mask):
                # compact()'s branch-free loop (~1.3 us less than NumPy's compress here),
                # once compiled: into n + 1 slots, the last its scratch slot
                st = Storage.allocate((n + 1) * item)
                out = Tensor._make(st, (n,), (1,), 0, t._dtype)
                _compact_module().compact_serial(_frombuffer(st.buffer, word, n + 1), src, mask)
                return out
            st = Storage.allocate(n * item)
            out = Tensor._make(st, (n,), (1,), 0, t._dtype)
            if n:
                src.compress(mask, out=dense_view(out, word))
            return out
        offsets = nonzero(key, t._strides, t._offset)
        n = offsets._numel
        st = Storage.allocate(n * t._dtype.itemsize)
        out = Tensor._make(st, (n,), (1,), 0, t._dtype)
        if n:
            adv = offsets._storage.typed(np.int64)[offsets._offset:offsets._offset + n]
            _move_module().gather_serial(_raw(out)[:n], _raw(t), _ZERO, adv, _ZERO)
        return out
    return None
