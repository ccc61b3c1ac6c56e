"""CUDA advanced indexing (Triton): gather (``x[idx]``), scatter (``x[idx] = v``) and nonzero.

They take tensorlib.ops.indexing's IndexPlan, as the CPU kernels do: every element offset
of the indexed result is ``pre[p] + adv[b] + post[q]`` (output element o = (p, b, q) in C
order). Kernels:

* ``offsets``: adv[b] (+)= wrap(idx_k[b]) * stride_k for one index tensor k (any integer dtype,
  any strides over the broadcast index shape); an out-of-range index records the smallest bad
  flat position in slot k of a device array (atomic_min) and contributes 0, so later kernels
  stay in bounds. The host reads the slots back once and raises the CPU's IndexError (first
  index tensor with a bad entry, its first bad position) — after a gather, before a scatter.
* ``gather`` / ``scatter``: one lane per result element; (p, b, q) from the flat index, pre /
  post offsets from their (coalesced) dims. They move raw words of the item size (complex128:
  two uint64 words, as an extra innermost dim of 2).
* Repeated indices in a scatter: the CPU (and NumPy) keep the last write in index order. Lanes
  run in no order on a GPU, so when there are several index positions the scatter first marks
  the winners (equal offsets = the same element: the destination has no internal overlap),
  and only winners write. When the offsets span at most ``DENSE_SPAN`` x the positions, an
  int64 array over that span takes each offset's largest position (atomic_max); otherwise
  adv is sorted stably (kernels/cuda/sorting.sort_keys) and a position wins when the next
  one in sorted order holds another offset.
* ``nonzero``: count pass (nonzeros per block), an exclusive scan of the counts (one program
  walking them with a carry), a read-back of the total (it sizes the output), then a write
  pass placing each nonzero at block start + its rank in the block (a scan of the flags).
  Half, float and complex elements are tested on their bits without the sign (-0.0 is zero,
  nan is not).

In the interpreter ``tl.reduce`` / ``tl.associative_scan`` call the combine function once per
element unless it is Triton's own ``_sum_combine``, which they run as np.sum / np.cumsum: the
interpreted modules use that one, compiled ones their own (launch.py: compiled kernels call no
``@jit`` function of Triton's standard library).
"""
from __future__ import annotations

import math

from ... import dtypes as _dt
from . import launch as _launch

__all__ = ["index", "index_put", "nonzero", "aot_jobs"]

ELEM_BLOCK = 1024              # lanes per program on a GPU (offsets, winners)
MOVE_BLOCK = 512               # gather / scatter / nonzero: index math costs registers
INTERPRET_BLOCK = 1 << 16      # the interpreter: few, wide programs
SCAN_BLOCK = 1024
DENSE_SPAN = 4                 # scatter winners by atomic_max when span <= 4 * positions
_BIG = 1 << 62                 # "no bad index" marker
_WORD = {1: "uint8", 2: "uint16", 4: "uint32", 8: "uint64", 16: "uint64"}

_HEADER = """
if {interp}:
    _add = tl.standard._sum_combine   # the interpreter runs it as np.sum / np.cumsum
else:
    @jit
    def _add(a, b):
        return a + b

"""


# lane indices: int32 when every index and offset of the launch fits (cheaper division)
_LANES = """\
    if IDX64:
        {v} = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    else:
        {v} = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)"""


def _fits32(n, sizes, strides):
    """Lane indices up to n (plus a block) and offsets over (sizes, strides) fit in int32."""
    span = sum((k - 1) * abs(st) for k, st in zip(sizes, strides) if k)
    return n + (1 << 16) < 2 ** 31 and span < 2 ** 31


def _decompose(lines, idx, n, size, stride, coord, off, indent="    "):
    """C-order coordinates of flat ``idx`` over dims ``{size}0..`` (last fastest) and their
    offset ``off`` = sum coord_d * ``{stride}d``."""
    if n == 0:
        lines.append(f"{indent}{off} = {idx} * 0")
        return
    lines.append(f"{indent}rem = {idx}")
    for d in range(n - 1, 0, -1):
        lines.append(f"{indent}{coord}{d} = rem % {size}{d}")
        lines.append(f"{indent}rem = rem // {size}{d}")
    lines.append(f"{indent}{coord}0 = rem")
    lines.append(f"{indent}{off} = " + " + ".join(f"{coord}{d} * {stride}{d}"
                                                   for d in range(n)))


def _dims(prefix, n):
    return [f"{prefix}s{d}" for d in range(n)] + [f"{prefix}t{d}" for d in range(n)]


# ---- generated sources -------------------------------------------------------------------------
def _offsets_source(idx_dtype, nd):
    params = ["p_adv", "p_idx", "p_bad", "n", "size", "stride", "base"] + _dims("i", nd)
    lines = [f"# adv offsets from one {idx_dtype.name} index tensor of {nd} dims", "", "",
             "@jit", f"def offsets({', '.join(params)}, FIRST: tl.constexpr, "
             "BLOCK: tl.constexpr, IDX64: tl.constexpr):", _LANES.format(v="j"),
             "    m = j < n"]
    _decompose(lines, "j", nd, "is", "it", "c", "p")
    lines.append("    v = tl.load(p_idx + p, mask=m, other=0).to(tl.int64)")
    if idx_dtype.kind == "i":
        lines.append("    v = tl.where(v < 0, v + size, v)")  # negative: from the end
    # (uint64 above int64's range reads as negative: out of range, as on the CPU)
    lines += [
        "    bad = m & ((v < 0) | (v >= size))",
        "    tl.atomic_min(p_bad + j * 0, tl.where(bad, j.to(tl.int64), 4611686018427387904), "
        "mask=bad)",
        "    off = tl.where(bad, 0, v) * stride",
        "    if FIRST:",
        "        adv = base + off",
        "    else:",
        "        adv = tl.load(p_adv + j, mask=m, other=0) + off",
        "    tl.store(p_adv + j, adv, mask=m)",
    ]
    return "\n".join(lines) + "\n"


def _move_source(npre, npost, scatter):
    name = "scatter" if scatter else "gather"
    params = ["p_dst", "p_src", "p_adv"] + (["p_win"] if scatter else []) + \
        ["total", "nb", "nq", "wscale"] + (["vmod"] if scatter else []) + \
        _dims("p", npre) + _dims("q", npost)
    consts = ("DEDUP: tl.constexpr, " if scatter else "") + \
        "BLOCK: tl.constexpr, IDX64: tl.constexpr"
    lines = [f"# {name}: {npre} dims before and {npost} after the index block", "", "",
             "@jit", f"def {name}({', '.join(params)}, {consts}):",
             _LANES.format(v="o"),
             "    m = o < total",
             "    q = o % nq",
             "    pb = o // nq",
             "    b = pb % nb",
             "    pi = pb // nb"]
    _decompose(lines, "pi", npre, "ps", "pt", "cp", "off_p")
    _decompose(lines, "q", npost, "qs", "qt", "cq", "off_q")
    lines.append("    a = tl.load(p_adv + b, mask=m, other=0) * wscale + off_p + off_q")
    if scatter:
        lines += ["    if DEDUP:",
                  "        m = m & (tl.load(p_win + b, mask=m, other=0) != 0)",
                  "    tl.store(p_dst + a, tl.load(p_src + o % vmod, mask=m), mask=m)"]
    else:
        lines.append("    tl.store(p_dst + o, tl.load(p_src + a, mask=m), mask=m)")
    return "\n".join(lines) + "\n"


_WINNERS_SOURCE = """
# scatter winners: the last of each run of equal offsets (sorted stably) writes


@jit
def winners(p_keys, p_perm, p_win, nb, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    m = i < nb
    k = tl.load(p_keys + i, mask=m, other=0)
    nxt = tl.load(p_keys + i + 1, mask=m & (i + 1 < nb), other=0)
    w = (i + 1 >= nb) | (nxt != k)
    tl.store(p_win + tl.load(p_perm + i, mask=m, other=0), w.to(tl.uint8), mask=m)


@jit
def last_writer(p_adv, p_last, nb, lo, BLOCK: tl.constexpr):
    # last[offset - lo] = the largest position holding that offset
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    m = i < nb
    a = tl.load(p_adv + i, mask=m, other=0)
    tl.atomic_max(p_last + (a - lo), i, mask=m)


@jit
def winners_from_last(p_adv, p_last, p_win, nb, lo, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    m = i < nb
    a = tl.load(p_adv + i, mask=m, other=0)
    w = tl.load(p_last + (a - lo), mask=m, other=0) == i
    tl.store(p_win + i, w.to(tl.uint8), mask=m)
"""


def _nz_test(dtype):
    """(storage type name, words per element, test of word ``v``)."""
    comp = _dt.real_for(dtype) if dtype.kind == "c" else dtype
    words = 2 if dtype.kind == "c" else 1
    if comp.kind == "f":
        bits = 8 * comp.itemsize
        return f"int{bits}", words, f"(v & {(1 << (bits - 1)) - 1}) != 0"
    return _WORD[comp.itemsize], words, "v != 0"


def _nonzero_source(dtype, nd):
    word, words, test = _nz_test(dtype)
    dims = _dims("x", nd)
    lines = [f"# nonzero of {dtype.name} ({word} words), {nd} dims", "", "",
             "@jit", "def _nz(p_x, off, m):"]
    tests = []
    for w in range(words):
        lines.append(f"    v = tl.load(p_x + off * {words} + {w}, mask=m, other=0)")
        lines.append(f"    t{w} = {test}")
        tests.append(f"t{w}")
    lines += [f"    return m & ({' | '.join(tests)})", "", "",
              "@jit", f"def count(p_x, p_cnt, n, {', '.join(dims)}, BLOCK: tl.constexpr, "
              "IDX64: tl.constexpr):", _LANES.format(v="j"),
              "    m = j < n"]
    _decompose(lines, "j", nd, "xs", "xt", "c", "off")
    lines += ["    f = _nz(p_x, off, m).to(tl.int32)",
              "    tl.store(p_cnt + tl.program_id(0), tl.reduce(f, 0, _add))", "", "",
              "@jit",
              f"def write(p_x, p_start, p_out, n, total, base, {', '.join(dims)}, "
              f"{', '.join(f'os{d}' for d in range(nd))}, MODE: tl.constexpr, "
              "BLOCK: tl.constexpr, IDX64: tl.constexpr):",
              "    # MODE 1: out[d, k] = coordinate d of the k-th nonzero; 2: out[k] = its "
              "offset base + sum_d c_d * os_d",
              _LANES.format(v="j"),
              "    m = j < n"]
    _decompose(lines, "j", nd, "xs", "xt", "c", "off")
    lines += ["    f = _nz(p_x, off, m)",
              "    fi = f.to(tl.int64)",
              "    pos = tl.load(p_start + tl.program_id(0)) + tl.associative_scan(fi, 0, _add) "
              "- fi",
              "    if MODE == 1:"]
    for d in range(nd):
        lines.append(f"        tl.store(p_out + {d} * total + pos, c{d}.to(tl.int64), mask=f)")
    lines += ["    else:",
              "        tl.store(p_out + pos, base + " +
              " + ".join(f"c{d}.to(tl.int64) * os{d}" for d in range(nd)) + ", mask=f)"]
    return "\n".join(lines) + "\n"


_SCAN_SOURCE = """
# exclusive scan of per-block counts; start[nblk] = total


@jit
def scan(p_cnt, p_start, nblk, SB: tl.constexpr):
    carry = tl.program_id(0).to(tl.int64) * 0
    for s in range(0, nblk, SB):
        i = s + tl.arange(0, SB)
        c = tl.load(p_cnt + i, mask=i < nblk, other=0).to(tl.int64)
        tl.store(p_start + i, tl.associative_scan(c, 0, _add) - c + carry, mask=i < nblk)
        carry += tl.reduce(c, 0, _add)
    tl.store(p_start + nblk, carry)
"""

def _module(key, make, mode):
    return _launch.cached_module(
        key, f"idx_{key[0]}", lambda: _HEADER.format(interp=mode == "interpret") + make(), mode)


def _offsets_kernel(idx_dtype, nd, mode):
    kind = "u64" if idx_dtype is _dt.uint64 else idx_dtype.kind
    return _module(("offsets", kind, nd), lambda: _offsets_source(idx_dtype, nd),
                   mode).offsets


def _move_kernel(npre, npost, scatter, mode):
    mod = _module(("move", npre, npost, scatter), lambda: _move_source(npre, npost, scatter),
                  mode)
    return mod.scatter if scatter else mod.gather


def _nonzero_module(dtype, nd, mode):
    word, words, _ = _nz_test(dtype)
    return _module(("nonzero", word, words, nd), lambda: _nonzero_source(dtype, nd), mode)


def _aux_module(mode):
    return _module(("aux",), lambda: _SCAN_SOURCE + _WINNERS_SOURCE, mode)


# ---- host side ---------------------------------------------------------------------------------
def _block(mode, move=False):
    if mode == "interpret":
        return INTERPRET_BLOCK, 4
    return (MOVE_BLOCK, 4) if move else (ELEM_BLOCK, 4)


def _go(fn, grid, args, dev, **kw):
    # integer-only kernels: no fp fusion choice to make (and none of Triton's warning)
    _launch.launch(fn, grid, args, dev, enable_fp_fusion=False, **kw)


def _grid(n, block):
    return (max(1, _launch.cdiv(n, block)),)


def _arg(t, as_dtype=None, offset=None):
    return _launch.arg_for(t._storage.data_ptr(), t._dtype,
                           t._offset if offset is None else offset, as_dtype)


def _coalesce(shape, strides):
    """C-order dims with size-1 dims dropped and mergeable neighbours merged (the flat C
    index over the dims is unchanged)."""
    dims = [(n, s) for n, s in zip(shape, strides) if n != 1]
    out = []
    for n, s in dims:
        if out and out[-1][1] == s * n:
            out[-1] = (out[-1][0] * n, s)
        else:
            out.append((n, s))
    return [n for n, _ in out], [s for _, s in out]


def _advanced_offsets(plan, mode, dev):
    """(adv int64 tensor over the index block, bad-position tensor or None)."""
    from ...allocation import empty
    from .pointwise import full_1d as full
    nb = math.prod(plan.index_shape)
    device = plan.src.device
    if plan.offsets is not None:  # a lone mask: nonzero already made the offsets
        return plan.offsets, None
    if not plan.indices:
        return full(nb, plan.base_offset, _dt.int64, device), None
    adv = empty((nb,), dtype=_dt.int64, device=device)
    bad = full(len(plan.indices), _BIG, _dt.int64, device)
    block, warps = _block(mode)
    for k, ix in enumerate(plan.indices):
        t = ix.tensor
        sizes, strides = _coalesce(t._shape, t._strides)
        fn = _offsets_kernel(t._dtype, len(sizes), mode)
        as_dt = "int64" if t._dtype is _dt.uint64 else None
        args = [_arg(adv), _arg(t, as_dt), _arg(bad, offset=bad._offset + k), nb, ix.size,
                ix.stride, plan.base_offset] + sizes + strides
        if nb:
            _go(fn, _grid(nb, block), args, dev, FIRST=k == 0, BLOCK=block,
                IDX64=not _fits32(nb, sizes, strides), num_warps=warps)
    return adv, bad


def _raise_bad(plan, bad):
    if bad is None:
        return
    vals = bad.cpu().numpy()  # waits for the offsets kernels
    for k, pos in enumerate(vals):
        if pos != _BIG:
            plan.raise_out_of_bounds(k, int(pos))


def _move_layout(plan):
    """(word type, words per element, pre sizes+strides, post sizes+strides) in words."""
    item = plan.src._dtype.itemsize
    words = 2 if item == 16 else 1
    pre = _coalesce(plan.pre_shape, [s * words for s in plan.pre_strides])
    post_shape, post_strides = list(plan.post_shape), [s * words for s in plan.post_strides]
    if words == 2:
        post_shape.append(2)
        post_strides.append(1)
    post = _coalesce(post_shape, post_strides)
    return _WORD[item], words, pre, post


def index(plan, out):
    """CUDA 'index' stub: out (contiguous, plan.out_shape) <- plan.src at the planned offsets;
    an out-of-range index raises IndexError (after the gather, which stays in bounds)."""
    mode = _launch.current_mode()
    dev = plan.src.device.index
    adv, bad = _advanced_offsets(plan, mode, dev)
    word, words, (ps, pt), (qs, qt) = _move_layout(plan)
    total = out._numel * words
    # An empty source with a non-empty result means some index is out of range; the gather
    # reads a bad index at offset 0, which an empty allocation does not have: raise without it.
    if total and plan.src._numel:
        nb = max(1, math.prod(plan.index_shape))
        nq = max(1, math.prod(qs))
        block, warps = _block(mode, True)
        fn = _move_kernel(len(ps), len(qs), False, mode)
        args = [_arg(out, word), _arg(plan.src, word, 0), _arg(adv),
                total, nb, nq, words] + ps + pt + qs + qt
        _go(fn, _grid(total, block), args, dev, BLOCK=block,
            IDX64=not _fits32(total, ps + qs, pt + qt), num_warps=warps)
    _raise_bad(plan, bad)
    return out


def _winners(adv, mode, dev, lo=None, span=None):
    """uint8 flags over adv: 1 where no later position holds the same offset. ``lo`` /
    ``span``: every adv lies in [lo, lo + span) (known from the index sizes and strides)."""
    from ...allocation import empty
    from .pointwise import full_1d as full
    from .sorting import sort_keys
    nb = adv._numel
    block, warps = _block(mode)
    if span is not None and span <= DENSE_SPAN * nb + 4096:
        last = full(span, -1, _dt.int64, adv.device)
        win = empty((nb,), dtype=_dt.uint8, device=adv.device)
        aux = _aux_module(mode)
        _go(aux.last_writer, _grid(nb, block), [_arg(adv), _arg(last), nb, lo], dev,
            BLOCK=block, num_warps=warps)
        _go(aux.winners_from_last, _grid(nb, block),
            [_arg(adv), _arg(last), _arg(win), nb, lo], dev, BLOCK=block,
            num_warps=warps)
        return win
    keys = adv.clone()
    sorted_keys = empty((nb,), dtype=_dt.int64, device=adv.device)
    perm = empty((nb,), dtype=_dt.int64, device=adv.device)
    sort_keys(keys, 1, nb, perm, sorted_keys)
    win = empty((nb,), dtype=_dt.uint8, device=adv.device)
    _go(_aux_module(mode).winners, _grid(nb, block),
        [_arg(sorted_keys), _arg(perm), _arg(win), nb], dev, BLOCK=block,
        num_warps=warps)
    return win


def index_put(plan, values):
    """CUDA 'index_put' stub: plan.src at the planned offsets <- values (contiguous, the
    source's dtype, plan.out_shape or one element); indices are checked before any write,
    repeated ones keep the last value in index order (as the CPU)."""
    mode = _launch.current_mode()
    dev = plan.src.device.index
    adv, bad = _advanced_offsets(plan, mode, dev)
    _raise_bad(plan, bad)
    word, words, (ps, pt), (qs, qt) = _move_layout(plan)
    nb = math.prod(plan.index_shape)
    total = math.prod(plan.pre_shape) * nb * math.prod(plan.post_shape) * words
    if total == 0:
        return
    dedup = nb > 1 and plan.offsets is None
    win = adv
    if dedup:
        lo = plan.base_offset + sum(min(0, (ix.size - 1) * ix.stride) for ix in plan.indices)
        hi = plan.base_offset + sum(max(0, (ix.size - 1) * ix.stride) for ix in plan.indices)
        win = _winners(adv, mode, dev, lo, hi - lo + 1)
    nq = max(1, math.prod(qs))
    vmod = words if values._numel == 1 else total
    block, warps = _block(mode, True)
    fn = _move_kernel(len(ps), len(qs), True, mode)
    args = [_arg(plan.src, word, 0), _arg(values, word), _arg(adv),
            _arg(win), total, nb, nq, words, vmod] + ps + pt + qs + qt
    _go(fn, _grid(total, block), args, dev, DEDUP=dedup, BLOCK=block,
        IDX64=not _fits32(total, ps + qs, pt + qt), num_warps=warps)


def nonzero(x, offset_strides=None, base=0):
    """CUDA 'nonzero' stub (x has ndim >= 1). Default: int64 tensor of shape (ndim, count)
    (rows contiguous), the C-order multi-indices of x's nonzero elements. With offset_strides
    (one per dim of x): the 1-D int64 tensor base + sum_d i_d * offset_strides[d] (element
    offsets of a masked tensor). Reads the count back to the host (it sizes the result)."""
    from ...allocation import empty
    mode = _launch.current_mode()
    dev = x.device.index
    nd = x.ndim
    n = x._numel
    block, warps = _block(mode, True)
    nblk = max(1, _launch.cdiv(n, block))
    mod = _nonzero_module(x._dtype, nd, mode)
    word = _nz_test(x._dtype)[0]
    comp = _dt.real_for(x._dtype) if x._dtype.kind == "c" else x._dtype
    words = 2 if x._dtype.kind == "c" else 1
    xarg = _launch.arg_for(x._storage.data_ptr(), comp, x._offset * words, word)
    dims = list(x._shape) + list(x._strides)
    idx64 = not _fits32(n, x._shape, [st * words for st in x._strides])
    cnt = empty((nblk,), dtype=_dt.int32, device=x.device)
    start = empty((nblk + 1,), dtype=_dt.int64, device=x.device)
    if n:
        _go(mod.count, (nblk,), [xarg, _arg(cnt), n] + dims, dev, BLOCK=block,
            IDX64=idx64, num_warps=warps)
        sb = INTERPRET_BLOCK if mode == "interpret" else SCAN_BLOCK
        _go(_aux_module(mode).scan, (1,), [_arg(cnt), _arg(start), nblk], dev,
            SB=sb, num_warps=4)
        total = int(start[nblk].item())  # waits for the two kernels
    else:
        total = 0
    if offset_strides is None:
        out = empty((nd, total), dtype=_dt.int64, device=x.device)
        mode_id, ostr = 1, [0] * nd
    else:
        out = empty((total,), dtype=_dt.int64, device=x.device)
        mode_id, ostr = 2, list(offset_strides)
    if total:
        _go(mod.write, (nblk,), [xarg, _arg(start), _arg(out), n, total, base] +
            dims + ostr, dev, MODE=mode_id, BLOCK=block, IDX64=idx64,
            num_warps=warps)
    return out


# ---- ahead-of-time compile jobs (kernels/cuda/aot.py) ------------------------------------------
def aot_jobs(quick=False):
    """aot.Job list: offsets per index dtype kind, gather / scatter per layout and word size,
    nonzero per storage class, the counts scan and the scatter winners."""
    from .launch import Job, triton_type as _triton_type
    ptr = lambda name: "*" + _triton_type(name)  # noqa: E731

    def attrs(fn, names):
        return {(fn.arg_names.index(p),): [["tt.divisibility", 16]] for p in names}

    def job(kernel, config, get, sig, const, ptrs):
        def build():
            fn = get()
            full = dict(sig)
            for c in const:
                full[c] = "constexpr"
            return fn, full, const, attrs(fn, ptrs), {"num_warps": 4, "enable_fp_fusion": False}
        return Job(kernel, config, build)

    jobs = []
    i64 = "i64"
    idx_dts = [_dt.int64] if quick else [_dt.int64, _dt.int32, _dt.uint8, _dt.uint64]
    # the 32-bit lane math of most launches; a few configs with IDX64 (huge tensors)
    for idt, nd, big in [(d, 1, False) for d in idx_dts] + [(_dt.int64, 2, False),
                                                              (_dt.int64, 2, True)]:
        if quick and nd > 1:
            continue
        w = i64 if big else "i32"
        sig = {"p_adv": "*i64", "p_idx": ptr("int64" if idt is _dt.uint64 else idt.name),
               "p_bad": "*i64", "n": w, "size": i64, "stride": i64, "base": i64}
        sig.update({p: w for p in _dims("i", nd)})
        jobs.append(job("index_offsets", f"{idt.name} nd{nd}{' i64' if big else ''}",
                        lambda idt=idt, nd=nd: _offsets_kernel(idt, nd, "compiled"), sig,
                        {"FIRST": False, "BLOCK": ELEM_BLOCK, "IDX64": big},
                        ("p_adv", "p_idx", "p_bad")))
    layouts = [(0, 0, False), (0, 1, False), (1, 0, False), (1, 1, False), (2, 2, False),
               (1, 1, True), (2, 2, True)]
    words = ["uint32"] if quick else ["uint8", "uint16", "uint32", "uint64"]
    for scatter in (False, True):
        for npre, npost, big in layouts:
            if quick and (npre, npost, big) != ((1, 1, False) if scatter else (0, 1, False)):
                continue
            for wd in (words if not big else ["uint32"]):
                w = i64 if big else "i32"
                sig = {"p_dst": ptr(wd), "p_src": ptr(wd), "p_adv": "*i64"}
                if scatter:
                    sig["p_win"] = "*u8"
                sig.update({"total": w, "nb": w, "nq": w, "wscale": "i32"})
                if scatter:
                    sig["vmod"] = w
                sig.update({p: w for p in _dims("p", npre) + _dims("q", npost)})
                const = {"BLOCK": MOVE_BLOCK, "IDX64": big}
                if scatter:
                    const["DEDUP"] = True
                jobs.append(job("index_scatter" if scatter else "index_gather",
                                f"{wd} pre{npre} post{npost}{' i64' if big else ''}",
                                lambda a=npre, b=npost, s=scatter: _move_kernel(a, b, s,
                                                                                "compiled"),
                                sig, const, ("p_dst", "p_src", "p_adv")))
    nz_dts = [(_dt.float32, 2, False)] if quick else \
        [(_dt.bool_, 1, False), (_dt.float32, 1, False), (_dt.float16, 2, False),
         (_dt.int64, 3, False), (_dt.complex64, 1, False), (_dt.bool_, 2, True)]
    for dt, nd, big in nz_dts:
        w = i64 if big else "i32"
        word = _nz_test(dt)[0]
        dims = {p: w for p in _dims("x", nd)}
        get = lambda dt=dt, nd=nd: _nonzero_module(dt, nd, "compiled")  # noqa: E731
        cfg = f"{dt.name} nd{nd}{' i64' if big else ''}"
        jobs.append(job("nonzero_count", cfg, lambda g=get: g().count,
                        dict({"p_x": ptr(word), "p_cnt": "*i32", "n": w}, **dims),
                        {"BLOCK": MOVE_BLOCK, "IDX64": big}, ("p_x", "p_cnt")))
        wsig = dict({"p_x": ptr(word), "p_start": "*i64", "p_out": "*i64", "n": w,
                     "total": i64, "base": i64}, **dims)
        wsig.update({f"os{d}": i64 for d in range(nd)})
        for m in ((1,) if quick else (1, 2)):
            jobs.append(job("nonzero_write", f"{cfg} mode{m}", lambda g=get: g().write, wsig,
                            {"MODE": m, "BLOCK": MOVE_BLOCK, "IDX64": big},
                            ("p_x", "p_start", "p_out")))
    jobs.append(job("nonzero_scan", "int32 counts", lambda: _aux_module("compiled").scan,
                    {"p_cnt": "*i32", "p_start": "*i64", "nblk": i64}, {"SB": SCAN_BLOCK},
                    ("p_cnt", "p_start")))
    jobs.append(job("index_winners", "sorted", lambda: _aux_module("compiled").winners,
                    {"p_keys": "*i64", "p_perm": "*i64", "p_win": "*u8", "nb": i64},
                    {"BLOCK": ELEM_BLOCK}, ("p_keys", "p_perm", "p_win")))
    if quick:
        return jobs
    jobs.append(job("index_winners", "last_writer", lambda: _aux_module("compiled").last_writer,
                    {"p_adv": "*i64", "p_last": "*i64", "nb": i64, "lo": i64},
                    {"BLOCK": ELEM_BLOCK}, ("p_adv", "p_last")))
    jobs.append(job("index_winners", "from_last",
                    lambda: _aux_module("compiled").winners_from_last,
                    {"p_adv": "*i64", "p_last": "*i64", "p_win": "*u8", "nb": i64, "lo": i64},
                    {"BLOCK": ELEM_BLOCK}, ("p_adv", "p_last", "p_win")))
    return jobs
