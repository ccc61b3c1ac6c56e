"""The Numba source of the CPU argmax / argmin kernels: _ARG_SRC (serial and parallel, split
per mode), _ARG_ROWS_SRC (contiguous rows), _ARG_BITS_SRC (the float32/float64 row scan on
integer keys), _ARG_INTS_SRC (the integer / bool row scan by blocks); arg_source fills them.
"""
from __future__ import annotations

from ... import dtypes as _dt
from .addresses import SCRATCH
from .casting import cast_code
from .reduce_common import (_HEADER, _bit_keys, _fill, _njit, _split_modes, bit_scan,
                            extreme, lit, load_code, np_type)
from .unravel import unravel_source
from ...runtime.cpu import vector_width

__all__ = ["arg_source"]

_ARG_SRC = """
@KERNELJIT
def KNAME(meta, out, inp):
    inner = meta[0]
    n0 = meta[1]
    os0 = meta[2]
    is0 = meta[3]
    nk = meta[6]
    nr = meta[7]
    tile = meta[8]
    kb = 9
    rb = 9 + 3 * nk
    nkept = 1
    for d in range(nk):
        nkept *= meta[kb + d]
    rstride = meta[rb + 1] if nr else 0
    nrows = meta[rb] if nr else 1
    if inner:
        for j in RANGE(nkept):
            po = meta[4]
            pi = meta[5]
@KEPT_COPY_OFFSETS
            best = INIT
            bi = 0
            if is0 == 1:
                row = inp[pi:pi + n0]
@ARGROW
            else:
@ARGSTRIDED
            out[po] = STORE_BI
    else:
        ntile = (n0 + tile - 1) // tile
        for w in RANGE(nkept * ntile):
            j = w // ntile
            t = w - j * ntile
            po = meta[4]
            pi = meta[5]
@KEPT_OFFSETS
            c0 = t * tile
            cn = min(tile, n0 - c0)
            # Each row writes the tile's next best values and rows into a second pair of
            # tiles, swapped after it: stored back only where a row is better, they had become
            # masked stores (vmaskmovps, microcoded on AMD Zen) or branches: (250, 400) float32
            # argmax along axis 0 0.11 ms, NumPy's 0.06.
            bestv = np.empty(tile, ACCT)
            bidx = np.zeros(tile, np.int64)
            nextv = np.empty(tile, ACCT)
            nexti = np.empty(tile, np.int64)
            for i in range(cn):
                bestv[i] = INIT
            for r in range(nrows):
                q = pi + c0 * is0 + r * rstride
                if is0 == 1:
                    row = inp[q:q + cn]
                    for i in range(cn):
                        v = load(row[i])
                        b = better(v, bestv[i])
                        nextv[i] = v if b else bestv[i]
                        nexti[i] = r if b else bidx[i]
                else:
                    for i in range(cn):
                        v = load(inp[np.uint64(q + i * is0)])
                        b = better(v, bestv[i])
                        nextv[i] = v if b else bestv[i]
                        nexti[i] = r if b else bidx[i]
                bestv, nextv = nextv, bestv
                bidx, nexti = nexti, bidx
            for i in range(cn):
                out[np.uint64(po + (c0 + i) * os0)] = STORE_BIDX
""".replace(
    "@KEPT_COPY_OFFSETS", unravel_source("j + 0", "range(nk)", "kb", [
        ("po", "kb + nk"), ("pi", "kb + 2 * nk")], 12,
        note="a copy, not the prange index itself (parfors)")).replace(
    "@KEPT_OFFSETS", unravel_source("j", "range(nk)", "kb", [
        ("po", "kb + nk"), ("pi", "kb + 2 * nk")], 12))


# Inner mode over contiguous rows, no reduced outer dims, at most one kept dim (argmax(x),
# argmax(x, axis=-1) of C-order x): serial_inner's loop for exactly these layouts.
_ARG_ROWS_SRC = """
@njit(cache=True, nogil=True, error_model='numpy')
def serial_rows(meta, out, inp):
    n0 = meta[1]
    nk = meta[6]
    po = meta[4]
    pi = meta[5]
    nkept = meta[9] if nk else 1
    so = meta[10] if nk else 0
    si = meta[11] if nk else 0
    for j in range(nkept):
        q = pi + j * si
        best = INIT
        bi = 0
        row = inp[q:q + n0]
@ARGROW
        out[po + j * so] = STORE_BI
"""

_ARG_ROW_SCALAR = """\
                for i in range(n0):
                    v = load(row[i])
                    if better(v, best):
                        best = v
                        bi = i"""
_ARG_ROW_BITS = """\
                bi = arg_of_bits(row, n0)"""

# A row of other steps: scanned element by element, or, where the contiguous row has a scan
# of its own (ROWFN: arg_of_bits, arg_of_ints), gathered a chunk of SCRATCH at a time into a
# stack scratch and each chunk scanned so (float32 x[::2].argmax() of 1e5, the whole call,
# 80-85 -> 23-25 us; NumPy 25-31); a later chunk's extreme wins only when strictly better (a
# nan over a number), so the first index of the extreme, and the first nan, as the scalar
# scan finds them.
_ARG_STRIDED_SCALAR = """\
                for i in range(n0):
                    v = load(inp[np.uint64(pi + i * is0)])
                    if better(v, best):
                        best = v
                        bi = i"""
_ARG_STRIDED_CHUNKS = """\
                buf = stack_scratch(inp)
                for c0 in range(0, n0, SCRATCHN):
                    m = min(SCRATCHN, n0 - c0)
                    gather(buf, inp, pi + c0 * is0, is0, m)
                    k = ROWFN(buf[:m], m)
                    v = load(buf[k])
                    if c0 == 0 or better(v, best):
                        best = v
                        bi = c0 + k"""

# argmax/argmin of a contiguous float32/float64 row: per 1024-block the three integer extremes
# of the raw bit patterns that the max/min block takes (reduce_value_source._MINMAX_BLOCK_SRC:
# three vector ops per element, two when the block's first element settles the sign: see
# reduce_common.TWOOPS) give the block's extreme, or say it holds a nan; the blocks'
# extremes are compared by order key (non-sign bits of negatives flipped, -0.0 keyed as +0.0:
# they tie, and the first of them wins), then the first block holding the overall extreme gives
# the first index of it by a min over the block (an index where the bits match, else 1024: it
# vectorizes; a scalar scan that stops at the match does not). A block holding a nan is
# scanned for its first nan, which wins (NumPy's rule). argmax of 1e5 float32, the whole call:
# 12.8 -> 9.0 us (NumPy 5.9; the kernel alone ~5.3, NumPy's ~4.5); float64 (512-bit vectors)
# 22.5 -> 13.1 (NumPy 10.9). Rows of 100 still cost ~50 ns each (slices, horizontal reductions;
# NumPy's ~25).
_ARG_BITS_SRC = """
from tensorlib.kernels.cpu.vector_math import f32_bits, f64_bits


@njit(cache=True, nogil=True)
def arg_of_bits(row, n):
    # Each block is a slice indexed from 0, as in the max/min block: indexing row[k] with
    # k in range(s, e) kept the loop scalar (10x slower at 1e5 float32).
    best = SINT(KEY0)
    best_blk = 0
    for blk in range((n + 1023) // 1024):
        s = blk * 1024
        seg = row[s:min(n, s + 1024)]
""" + bit_scan("seg.size") + """            for k in range(seg.size):
                if SINT(SINT(BITSF(seg[k])) & MASK) > EXPBITS:
                    return s + k
        x = SINT(PICK)
        key = SINT(x ^ SINT(SINT(x >> SHIFT) & MASK))
        key = SINT(0) if key == SINT(-1) else key
        if blk == 0 or key CMP best:
            best = key
            best_blk = blk
    # the extreme's bit pattern (the key flip is its own inverse); a zero matches either sign
    want = SINT(best ^ SINT(SINT(best >> SHIFT) & MASK))
    keep = MASK if best == 0 else SINT(-1)
    s = best_blk * 1024
    seg = row[s:min(n, s + 1024)]
    first = np.int32(1024)
    for k in range(seg.size):
        c = np.int32(k) if SINT(SINT(BITSF(seg[k])) & keep) == want else np.int32(1024)
        first = c if c < first else first
    return s + first

"""


# argmax/argmin of a contiguous integer or bool row: per 1024-block its extreme (a plain
# max / min reduction, which vectorizes where the scalar scan's index select did not), the first
# block holding the overall extreme, then the first index of it in that block by a min over the
# block (as arg_of_bits); the scan stops at the first block holding the type's own extreme
# (a True of a bool row, 255 of uint8), as NumPy's does. argmax of 1e5 int64: 21.8 -> ~9 us
# (NumPy 11).
_ARG_INTS_SRC = """

@njit(cache=True, nogil=True)
def arg_of_ints(row, n):
    best = load(row[0])
    best_s = 0
    best_e = min(n, FIRST)
    s = 0
    e = best_e
    while s < n:
        seg = row[s:e]
        m = load(seg[0])
        for k in range(1, seg.size):
            v = load(seg[k])
            m = v if v CMP m else m
        if m CMP best:
            best = m
            best_s = s
            best_e = e
        if best == REACHED:
            break  # the type's own extreme: no later block can hold a first one
        s = e
        e = min(n, s + BLOCKN)
    seg = row[best_s:best_e]
    s = best_s
    first = np.int32(BLOCKN)
    for k in range(seg.size):
        c = np.int32(k) if load(seg[k]) == best else np.int32(BLOCKN)
        first = c if c < first else first
    return s + first

"""
_ARG_ROW_INTS = """\
                bi = arg_of_ints(row, n0)"""


def arg_source(op, in_dt, acc, out_dt):
    """The module of argmax / argmin (op) of in_dt, compared in acc, stored as out_dt."""
    cmp = ">" if op == "argmax" else "<"
    # (a nan wins over a number, the first one over later ones; bitwise, not `or` / `and`:
    # short-circuits are branches, which kept the outer mode's selects masked stores)
    better = f"(v {cmp} b) | ((v != v) & (b == b))" if acc.kind == "f" else f"v {cmp} b"
    inl = _njit(inline=True)
    src = _HEADER.format(what=f"{op} {in_dt.name} -> {acc.name} -> {out_dt.name}")
    src += f"{inl}\ndef load(x):\n    return {load_code(in_dt, acc)}\n\n"
    src += f"{inl}\ndef better(v, b):\n    return {better}\n\n"
    by_bits = in_dt in (_dt.float32, _dt.float64) and acc is in_dt
    rowscan, strided = _ARG_ROW_SCALAR, _ARG_STRIDED_SCALAR
    if by_bits:
        src += _fill(_ARG_BITS_SRC, _bit_keys(in_dt, op[3:]))
        # float64: 512-bit vectors, as the float64 max / min block (reduce_value_source.py)
        src = vector_width.source_marker(in_dt is _dt.float64) + src
        rowscan = _ARG_ROW_BITS
        strided = _ARG_STRIDED_CHUNKS.replace("ROWFN", "arg_of_bits")
    elif in_dt.kind in "biu":
        # (bool loads as 0 / 1; an integer's extreme is its dtype's)
        top = (1 if op == "argmax" else 0) if in_dt is _dt.bool_ else (
            _dt.iinfo(in_dt).max if op == "argmax" else _dt.iinfo(in_dt).min)
        # A first block of 64 elements for bool (a bool row's True mostly comes early, where
        # NumPy's scan stops; a wider type's extreme seldom: a first short block cost int8
        # rows of 300 10%), then blocks of 4 KiB, at least 1024 elements (each block ends
        # in a horizontal reduction and a branch: argmax along 100 rows of 1e5 False took
        # 264 us in 1-KiB blocks, 151 in 4-KiB ones, 141 in 8-KiB ones, NumPy 120-125; a
        # True at ~1e4 in each: 38 / 43 / 64 us, NumPy 16-21)
        block = max(1024, 4096 // in_dt.itemsize)
        src += _ARG_INTS_SRC.replace("CMP", cmp).replace("REACHED", lit(acc, top)).replace(
            "FIRST", "64" if in_dt is _dt.bool_ else str(block)).replace("BLOCKN", str(block))
        rowscan = _ARG_ROW_INTS
        strided = _ARG_STRIDED_CHUNKS.replace("ROWFN", "arg_of_ints")
    strided = strided.replace("SCRATCHN", str(SCRATCH))
    for fname, par in (("serial", False), ("parallel", True)):
        src += "\n" + _split_modes(_fill(_ARG_SRC, {
            "@ARGROW": rowscan, "@ARGSTRIDED": strided,
            "@KERNELJIT": _njit(parallel=par), "KNAME": fname,
            "RANGE": "prange" if par else "range", "INIT": extreme(acc, op[3:]),
            "ACCT": np_type(acc),
            "STORE_BIDX": cast_code(_dt.int64, out_dt, "bidx[i]"),
            "STORE_BI": cast_code(_dt.int64, out_dt, "np.int64(bi)")}), fname)
    row = _ARG_ROWS_SRC.replace("@ARGROW", "\n".join(ln[8:] for ln in rowscan.split("\n")))
    src += "\n" + _fill(row, {"INIT": extreme(acc, op[3:]), "STORE_BI": cast_code(
        _dt.int64, out_dt, "np.int64(bi)")})
    return src
