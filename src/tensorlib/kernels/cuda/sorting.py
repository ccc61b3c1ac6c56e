"""CUDA sorting and searching (Triton): stable sort / argsort of rows, and searchsorted.

Keys. A first kernel turns every element into a signed integer key (int32 for dtypes of up to
4 bytes, int64 for 8) whose signed order is the CPU kernels' order (kernels/cpu/sorting.py):
integers widen (uint32 / uint64 flip the sign bit); floats read as raw bits map every nan to
the largest key (last), -0.0 and +0.0 to 0 (equal: input order kept), negatives to their bits
with all but the sign flipped. ``descending`` flips every key bit: the exact reverse order, nan
first, ties still in input order. The sort kernels then see two dtypes only, never the data's.

Sort (multi-pass, every pass stable because elements travel as (key, row index) pairs, which are
all distinct, so "the sorted order" is unique and ties keep index order):

1. ``block_sort``: a bitonic network over (key, index) pairs sorts segments of up to
   ``MAX_BLOCK`` elements (a whole row when it fits), R segments per program as an [R, BLOCK]
   tile. Each compare-exchange stage views the tile as [R, A, 2, J], splits the partner axis
   and swaps with ``tl.where`` (reshape / permute / split / join: builtins, the same code in
   the interpreter and compiled). Padding lanes get the largest key and index, so they sort last.
2. ``merge`` (rows longer than MAX_BLOCK): log2(n / MAX_BLOCK) passes, each merging pairs of
   sorted runs: an element's new place is its rank in its own run plus the number of
   partner-run elements smaller than it, found by a binary search; ping-pong buffers.
3. ``take``: sort() gathers the values at the sorted indices (raw bits, so nan payloads and
   signed zeros come out as they went in); argsort's last pass writes the int64 indices
   straight into the result.

searchsorted: keys of x1 (read through ``sorter``) and of x2 by the same key kernel, then one
binary search per element of x2 (left: first key >= v; right: first key > v).
"""
from __future__ import annotations


from ... import dtypes as _dt
from ...dispatch.stub import UnsupportedKernelError
from . import launch as _launch

__all__ = ["sort_kernel", "searchsorted_kernel", "key_dtype", "sort_keys", "aot_jobs",
           "MAX_BLOCK"]

MAX_BLOCK = 4096         # longest segment one bitonic network sorts (then merge passes)
MAX_LOG = 12             # log2(MAX_BLOCK): stages are generated up to this size
TILE = 4096              # elements per block_sort program on a GPU (R segments x BLOCK)
INTERPRET_TILE = 1 << 14
ELEM_BLOCK = 1024        # elementwise kernels (keys, take, search) on a GPU
MERGE_BLOCK = 512        # merge: (key, index) pairs and a binary search per lane
INTERPRET_ELEM_BLOCK = 1 << 16

# storage read as (Triton type, widening to the key) per dtype; float bits as signed ints
_F_CONST = {"float16": (0x7FFF, 0x7C00), "bfloat16": (0x7FFF, 0x7F80),
            "float32": (0x7FFFFFFF, 0x7F800000),
            "float64": (0x7FFFFFFFFFFFFFFF, 0x7FF0000000000000)}
_RAW = {_dt.bool_: "uint8", _dt.int8: "int8", _dt.uint8: "uint8", _dt.int16: "int16",
        _dt.uint16: "uint16", _dt.int32: "int32", _dt.uint32: "int32", _dt.int64: "int64",
        _dt.uint64: "int64", _dt.float16: "int16", _dt.bfloat16: "int16",
        _dt.float32: "int32", _dt.float64: "int64"}
_WORD = {1: "uint8", 2: "uint16", 4: "uint32", 8: "uint64"}


def key_dtype(dtype):
    """The key dtype of a real dtype: int64 for 8-byte dtypes, else int32."""
    if dtype.kind == "c" or dtype not in _RAW:
        raise UnsupportedKernelError(f"sort(): no CUDA sort keys for dtype {dtype}")
    return _dt.int64 if dtype.itemsize == 8 else _dt.int32


def _key_code(dtype) -> str:
    """Lines turning the loaded storage value ``v`` into the key ``k``."""
    kt = "tl.int64" if dtype.itemsize == 8 else "tl.int32"
    if dtype.kind == "f":
        absm, expm = _F_CONST[dtype.name]
        return (f"    v = v.to({kt})\n"          # half bits sign-extend: same order logic
                f"    a = v & {absm}\n"
                f"    k = tl.where(a > {expm}, {absm}, tl.where(a == 0, 0, "
                f"tl.where(v < 0, v ^ {absm}, v)))\n")
    if dtype in (_dt.uint32, _dt.uint64):
        sb = -(1 << (8 * dtype.itemsize - 1))
        return f"    k = v ^ {sb}\n"
    return f"    k = v.to({kt})\n"


_KEYS_SOURCE = """
# keys of {dtype}


@jit(do_not_specialize=["flip"])
def keys(p_src, p_sorter, p_out, total, flip, SORTER: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    m = o < total
    if SORTER:
        j = tl.load(p_sorter + o, mask=m, other=0)
    else:
        j = o
    v = tl.load(p_src + j, mask=m, other=0)
{code}    tl.store(p_out + o, k ^ flip, mask=m)
"""

_SORT_SOURCE = """
# stable sort passes over (key, index) pairs; keys {kname} (largest {kmax}); pad index 2**62


@jit
def _stage(k, i, R: tl.constexpr, BLOCK: tl.constexpr, J: tl.constexpr, S: tl.constexpr):
    # compare-exchange of partners J apart; blocks of S sort ascending where (pos & S) == 0
    A: tl.constexpr = BLOCK // (2 * J)
    klo, khi = tl.split(tl.permute(tl.reshape(k, (R, A, 2, J)), (0, 1, 3, 2)))
    ilo, ihi = tl.split(tl.permute(tl.reshape(i, (R, A, 2, J)), (0, 1, 3, 2)))
    asc = tl.reshape(((tl.arange(0, A) * (2 * J)) & S) == 0, (1, A, 1))
    sw = ((klo > khi) | ((klo == khi) & (ilo > ihi))) == asc
    k = tl.join(tl.where(sw, khi, klo), tl.where(sw, klo, khi))
    i = tl.join(tl.where(sw, ihi, ilo), tl.where(sw, ilo, ihi))
    k = tl.reshape(tl.permute(k, (0, 1, 3, 2)), (R, BLOCK))
    i = tl.reshape(tl.permute(i, (0, 1, 3, 2)), (R, BLOCK))
    return k, i


@jit
def block_sort(p_k, p_ko, p_io, n, nseg, nchunk, R: tl.constexpr, BLOCK: tl.constexpr,
               LOG: tl.constexpr, WRITE_KEYS: tl.constexpr):
    # segment s = chunk (s % nchunk) of row (s // nchunk); its BLOCK elements, sorted
    seg = tl.program_id(0).to(tl.int64) * R + tl.arange(0, R).to(tl.int64)
    row = seg // nchunk
    start = (seg - row * nchunk) * BLOCK
    li = start[:, None] + tl.arange(0, BLOCK).to(tl.int64)[None, :]
    m = (seg < nseg)[:, None] & (li < n)
    g = row[:, None] * n + li
    k = tl.load(p_k + g, mask=m, other={kmax})
    i = tl.where(m, li, 4611686018427387904)
{stages}
    # the real elements sort before the padding: their sorted places are the masked lanes
    tl.store(p_io + g, i, mask=m)
    if WRITE_KEYS:
        tl.store(p_ko + g, k, mask=m)


@jit
def merge(p_k, p_i, p_ko, p_io, n, total, run, steps, BLOCK: tl.constexpr,
          WRITE_KEYS: tl.constexpr):
    # runs [r*run, (r+1)*run) of each row are sorted; merge runs 2j and 2j+1
    g = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    m = g < total
    row = g // n
    base = row * n
    li = g - base
    r = li // run
    ps = (r ^ 1) * run
    lo = ps
    hi = tl.maximum(tl.minimum(ps + run, n), ps)
    mk = tl.load(p_k + g, mask=m, other=0)
    mi = tl.load(p_i + g, mask=m, other=0)
    for _ in range(steps):
        act = m & (lo < hi)
        mid = (lo + hi) >> 1
        pk = tl.load(p_k + base + mid, mask=act, other=0)
        pi = tl.load(p_i + base + mid, mask=act, other=0)
        less = (pk < mk) | ((pk == mk) & (pi < mi))
        lo = tl.where(act & less, mid + 1, lo)
        hi = tl.where(act & (less == 0), mid, hi)
    dst = base + (r - (r & 1)) * run + (li - r * run) + (lo - ps)
    tl.store(p_io + dst, mi, mask=m)
    if WRITE_KEYS:
        tl.store(p_ko + dst, mk, mask=m)


@jit
def take(p_src, p_idx, p_out, n, total, BLOCK: tl.constexpr):
    # out[row, j] = src[row, idx[row, j]] (raw words)
    g = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    m = g < total
    j = tl.load(p_idx + g, mask=m, other=0)
    v = tl.load(p_src + (g // n) * n + j, mask=m, other=0)
    tl.store(p_out + g, v, mask=m)


@jit
def search(p_k1, m1, p_k2, p_out, n2, steps, RIGHT: tl.constexpr, BLOCK: tl.constexpr):
    # out[j] = first i with k1[i] > k2[j] (RIGHT) or >= k2[j]
    g = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    m = g < n2
    v = tl.load(p_k2 + g, mask=m, other=0)
    lo = g * 0
    hi = lo + m1
    for _ in range(steps):
        act = m & (lo < hi)
        mid = (lo + hi) >> 1
        x = tl.load(p_k1 + mid, mask=act, other=0)
        if RIGHT:
            go = x <= v
        else:
            go = x < v
        lo = tl.where(act & go, mid + 1, lo)
        hi = tl.where(act & (go == 0), mid, hi)
    tl.store(p_out + g, lo, mask=m)
"""


def _stages_code() -> str:
    """Bitonic stages for every BLOCK up to MAX_BLOCK, guarded by the constexpr LOG."""
    lines = []
    for ls in range(1, MAX_LOG + 1):
        lines.append(f"    if LOG >= {ls}:")
        for lj in range(ls - 1, -1, -1):
            lines.append(f"        k, i = _stage(k, i, R, BLOCK, {1 << lj}, {1 << ls})")
    return "\n".join(lines)


def _module(kind, arg, mode):
    def source():
        if kind == "keys":
            return _KEYS_SOURCE.format(dtype=arg.name, code=_key_code(arg))
        kmax = 2 ** 63 - 1 if arg is _dt.int64 else 2 ** 31 - 1
        return _SORT_SOURCE.format(kname=arg.name, kmax=kmax, stages=_stages_code())
    return _launch.cached_module(arg, f"sort_{kind}", source, mode)


def _arg(t, as_dtype=None):
    return _launch.arg_for(t._storage.data_ptr(), t._dtype, t._offset, as_dtype)


def _elem_block(mode):
    return (INTERPRET_ELEM_BLOCK, 4) if mode == "interpret" else (ELEM_BLOCK, 4)


def _go(fn, grid, args, dev, **kw):
    # integer-only kernels: no fp fusion choice to make (and none of Triton's warning)
    _launch.launch(fn, grid, args, dev, enable_fp_fusion=False, **kw)


def _grid(total, block):
    return (max(1, _launch.cdiv(total, block)),)


def _keys(src, sorter, descending, mode, dev):
    """Int keys (int32 / int64) of contiguous ``src``, read through ``sorter`` if given."""
    from ...allocation import empty
    total = sorter._numel if sorter is not None else src._numel
    out = empty((total,), dtype=key_dtype(src._dtype), device=src.device)
    block, warps = _elem_block(mode)
    fn = _module("keys", src._dtype, mode).keys
    args = [_arg(src, _RAW[src._dtype]), _arg(sorter) if sorter is not None else _arg(out),
            _arg(out), total, -1 if descending else 0]
    _go(fn, _grid(total, block), args, dev, SORTER=sorter is not None,
        BLOCK=block, num_warps=warps)
    return out


def _tile(block, nseg, mode):
    """(R, num_warps) of block_sort: segments per program, up to a tile of elements."""
    tile = INTERPRET_TILE if mode == "interpret" else TILE
    r = max(1, min(tile // block, _launch.next_pow2(nseg)))
    return r, 8 if block * r >= 2048 else 4


def sort_keys(keys, rows, n, idx_out, keys_out=None):
    """Stable sort of ``rows`` rows of ``n`` int keys (contiguous int32 / int64 tensor
    ``keys``, consumed): the row-local int64 positions in sorted order go to ``idx_out``
    (contiguous int64, rows * n), the sorted keys to ``keys_out`` if given."""
    from ...allocation import empty
    mode = _launch.current_mode()
    dev = keys.device.index
    mod = _module("sort", keys._dtype, mode)
    total = rows * n
    block = _launch.next_pow2(min(n, MAX_BLOCK))
    nchunk = _launch.cdiv(n, block)
    nseg = rows * nchunk
    r, warps = _tile(block, nseg, mode)
    npass = max(0, (nchunk - 1).bit_length())
    # Ping-pong buffers, numbered so that the last pass lands in idx_out / keys_out: passes
    # start from buffer npass % 2. block_sort may write its input in place (each program
    # reads its segments before writing them); merges may not.
    kb = [keys_out if keys_out is not None else keys, None]
    ib = [idx_out, None]
    if npass:
        kb[1] = keys if keys_out is not None else empty((total,), dtype=keys._dtype,
                                                        device=keys.device)
        ib[1] = empty((total,), dtype=_dt.int64, device=keys.device)
    a = npass % 2
    _go(mod.block_sort, (_launch.cdiv(nseg, r),),
        [_arg(keys), _arg(kb[a]), _arg(ib[a]), n, nseg, nchunk], dev, R=r,
        BLOCK=block, LOG=block.bit_length() - 1,
        WRITE_KEYS=npass > 0 or keys_out is not None, num_warps=warps)
    eblock, ewarps = _elem_block(mode)
    if mode != "interpret":
        eblock = MERGE_BLOCK
    run = block
    for p in range(npass):
        s, d = (a + p) % 2, (a + p + 1) % 2
        wk = p < npass - 1 or keys_out is not None
        _go(mod.merge, _grid(total, eblock),
            [_arg(kb[s]), _arg(ib[s]), _arg(kb[d]), _arg(ib[d]), n, total, run,
             run.bit_length()], dev, BLOCK=eblock, WRITE_KEYS=wk, num_warps=ewarps)
        run *= 2


def sort_kernel(src, values, indices, descending):
    """src: contiguous (..., n) real or bool tensor, sorted along its last dim into ``values``
    (same dtype) or ``indices`` (int64), both contiguous of src's shape."""
    from ...allocation import empty
    total = src._numel
    if total == 0:
        return
    n = src.shape[-1] if src.ndim else 1
    rows = total // n
    mode = _launch.current_mode()
    dev = src.device.index
    keys = _keys(src, None, descending, mode, dev)
    idx = indices if indices is not None else empty((total,), dtype=_dt.int64,
                                                   device=src.device)
    sort_keys(keys, rows, n, idx)
    if values is not None:
        word = _WORD[src._dtype.itemsize]
        block, warps = _elem_block(mode)
        fn = _module("sort", keys._dtype, mode).take
        _go(fn, _grid(total, block), [_arg(src, word), _arg(idx), _arg(values, word),
                                      n, total], dev, BLOCK=block, num_warps=warps)


def searchsorted_kernel(x1, x2, sorter, out, right):
    """x1: contiguous 1-D (sorted, or sorted through ``sorter``: contiguous int64 indices
    already checked to be in range); x2: contiguous, same dtype; out: contiguous int64 of x2's
    shape <- insertion points in key order (nan last)."""
    if x2._numel == 0:
        return
    mode = _launch.current_mode()
    dev = x2.device.index
    k1 = _keys(x1, sorter, False, mode, dev)
    k2 = _keys(x2, None, False, mode, dev)
    m1 = x1._numel
    block, warps = _elem_block(mode)
    fn = _module("sort", k1._dtype, mode).search
    _go(fn, _grid(x2._numel, block), [_arg(k1), m1, _arg(k2), _arg(out), x2._numel,
                                     m1.bit_length()], dev, RIGHT=bool(right),
        BLOCK=block, num_warps=warps)


# ---- ahead-of-time compile jobs (kernels/cuda/aot.py) ------------------------------------------
def aot_jobs(quick=False):
    """aot.Job list: the key kernel per dtype, block_sort per key dtype and tile, merge, take
    and search per key dtype."""
    from .launch import Job, triton_type as _triton_type
    jobs = []
    ptr = lambda name: "*" + _triton_type(name)  # noqa: E731
    al = lambda fn, names: {(fn.arg_names.index(p),): [["tt.divisibility", 16]]  # noqa: E731
                            for p in names}
    dtypes = [_dt.float32, _dt.int64] if quick else [d for d in _RAW]

    def keys_job(dt, sorter):
        def build():
            fn = _module("keys", dt, "compiled").keys
            sig = {"p_src": ptr(_RAW[dt]), "p_sorter": "*i64",
                   "p_out": ptr(key_dtype(dt).name), "total": "i64", "flip": "i32",
                   "SORTER": "constexpr", "BLOCK": "constexpr"}
            return (fn, sig, {"SORTER": sorter, "BLOCK": ELEM_BLOCK},
                    al(fn, ("p_src", "p_sorter", "p_out")),
                    {"num_warps": 4, "enable_fp_fusion": False})
        return Job("sort_keys", f"{dt.name}{' sorter' if sorter else ''}", build)

    for dt in dtypes:
        jobs.append(keys_job(dt, False))
    if not quick:
        jobs.append(keys_job(_dt.float64, True))

    def sort_job(kdt, name, block, r, warps):
        def build():
            mod = _module("sort", kdt, "compiled")
            k = ptr(kdt.name)
            if name == "block_sort":
                fn = mod.block_sort
                sig = {"p_k": k, "p_ko": k, "p_io": "*i64", "n": "i64", "nseg": "i64",
                       "nchunk": "i64", "R": "constexpr", "BLOCK": "constexpr",
                       "LOG": "constexpr", "WRITE_KEYS": "constexpr"}
                const = {"R": r, "BLOCK": block, "LOG": block.bit_length() - 1,
                         "WRITE_KEYS": True}
                ptrs = ("p_k", "p_ko", "p_io")
            elif name == "merge":
                fn = mod.merge
                sig = {"p_k": k, "p_i": "*i64", "p_ko": k, "p_io": "*i64", "n": "i64",
                       "total": "i64", "run": "i64", "steps": "i32", "BLOCK": "constexpr",
                       "WRITE_KEYS": "constexpr"}
                const = {"BLOCK": MERGE_BLOCK, "WRITE_KEYS": True}
                ptrs = ("p_k", "p_i", "p_ko", "p_io")
            elif name == "take":
                fn = mod.take
                word = ptr(_WORD[8 if kdt is _dt.int64 else 4])
                sig = {"p_src": word, "p_idx": "*i64", "p_out": word, "n": "i64",
                       "total": "i64", "BLOCK": "constexpr"}
                const = {"BLOCK": ELEM_BLOCK}
                ptrs = ("p_src", "p_idx", "p_out")
            else:
                fn = mod.search
                sig = {"p_k1": k, "m1": "i64", "p_k2": k, "p_out": "*i64", "n2": "i64",
                       "steps": "i32", "RIGHT": "constexpr", "BLOCK": "constexpr"}
                const = {"RIGHT": True, "BLOCK": ELEM_BLOCK}
                ptrs = ("p_k1", "p_k2", "p_out")
            return fn, sig, const, al(fn, ptrs), {"num_warps": warps, "enable_fp_fusion": False}
        cfg = f"{kdt.name}" + (f" {r}x{block}" if name == "block_sort" else "")
        return Job(f"sort_{name}", cfg, build)

    # (the 4096-wide network takes ~20 s to compile: not in the quick set)
    tiles = [(MAX_BLOCK, 1), (1024, 4), (256, 16), (64, 64), (8, 512)]
    for kdt in (_dt.int32, _dt.int64):
        for block, r in tiles:
            if quick and (kdt is _dt.int64 or block != 8):
                continue
            jobs.append(sort_job(kdt, "block_sort", block, r, 8 if block * r >= 2048 else 4))
        for name in ("merge", "take", "search"):
            if quick and (kdt is _dt.int32) != (name != "merge"):
                continue
            jobs.append(sort_job(kdt, name, 0, 0, 4))
    return jobs
