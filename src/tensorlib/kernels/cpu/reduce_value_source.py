"""The Numba source of the CPU value reductions (sum, prod, mean, max, min, any, all, var,
std): _BLOCK_SRC / _MINMAX_BLOCK_SRC (one row block, the float32/float64 max/min block on
integer keys), _VALUE_SRC (serial and parallel kernels, split per mode by _split_modes),
_ROWS_SRC (contiguous rows); ValueSpec.source fills them.
"""
from __future__ import annotations

from ... import dtypes as _dt
from .addresses import SCRATCH
from .casting import cast_code
from .reduce_common import (BLOCK, FAN, MINMAX_BLOCK, _HEADER, _bit_keys, _fill, _njit,
                            _split_modes, bit_scan, load_code, np_type)
from .unravel import unravel_source
from ...runtime.cpu import vector_width

__all__ = ["ValueSpec"]

_BLOCK_SRC = """
@INLJIT
def rowoff(meta, rb, nr, r):
    # Element offset of reduced row r (its index decomposed over the reduced dims).
    q = 0
@ROWOFF_BODY
    return q


@BLOCKJIT
def block(a, q, st, nb@M):
    acc = BLOCK_INIT
    # A block of other steps is gathered into a stack scratch first and runs the contiguous
    # block's loop: vectorized, and its bits (one accumulator along the steps ran a chain of
    # dependent adds: float32 x[::2].sum() of 1e5, 80 us against NumPy's 24). Indexed from 0
    # (a slice or the scratch): LLVM drops Numba's wraparound check and vectorizes. (The
    # contiguous block keeps its own loop: one loop over tile_view's pointer was slower.)
    if st == 1:
        seg = a[q:q + nb]
        for k in range(nb):
            acc = BLOCK_STEP_CONTIG
        return BLOCK_RESULT
    buf = stack_scratch(a)
    gather(buf, a, q, st, nb)
    seg = buf[:nb]
    for k in range(nb):
        acc = BLOCK_STEP_CONTIG
    return BLOCK_RESULT

""".replace(
    "@ROWOFF_BODY", unravel_source("r", "range(nr)", "rb", [("q", "rb + nr")], 4))

# float32/float64 max and min over a contiguous block. The float select chain of ``comb`` does
# not vectorize here (LLVM keeps scalar vmaxss even under fastmath), but integer max / min do,
# on the raw bit patterns, three of them per element (two when the block's first element
# settles the sign: reduce_common.TWOOPS) and no key arithmetic: the signed max
# (the largest non-negative float, or a +nan above +inf), the signed min (among negatives the
# smallest magnitude, the largest float; among non-negatives the smallest) and the unsigned max
# (among negatives the largest magnitude, the smallest float, or a -nan above -inf). A nan makes
# the block's result the canonical nan, as before; ties of -0.0 and +0.0 give +0.0 for max,
# -0.0 for min (IEEE maximum/minimum). (The former scan on order keys, the non-sign bits of
# negatives flipped, plus a magnitude max for nans, took 5 vector ops per element; max of 1e5
# float32, the whole call: 9.7 -> 9.1 us, NumPy 5.6; a variant taking the signed min in a second
# pass only for an all-negative block, 2 ops, measured faster on mixed data and slower on
# negative data, under noise.)
_MINMAX_BLOCK_SRC = _BLOCK_SRC.split("@BLOCKJIT")[0] + """
from tensorlib.kernels.cpu.scalar_math import _from_bits
from tensorlib.kernels.cpu.vector_math import f32_bits, f64_bits


@BLOCKJIT
def block(a, q, st, nb):
    # A block of other steps is gathered a chunk of SCRATCH at a time into a stack scratch and
    # scanned as a contiguous one (a comb chain along the steps before: float32 x[::2].max()
    # of 1e5, the whole call, 46-54 -> 15-17 us; NumPy 27-39). (One loop over tile_view's
    # selected pointer for both kinds made the contiguous scan ~15% slower.)
    if st == 1:
        seg = a[q:q + nb]
""" + bit_scan("nb") + """            return ACCT(np.nan)
        return _from_bits(ACCT(0), PICK)
    buf = stack_scratch(a)
    acc = INIT
    for c0 in range(0, nb, SCRATCHN):
        m = min(SCRATCHN, nb - c0)
        gather(buf, a, q + c0 * st, st, m)
        seg = buf[:m]
""" + bit_scan("m") + """            return ACCT(np.nan)
        r = _from_bits(ACCT(0), PICK)
        acc = comb(acc, r) if c0 else r
    return acc

"""

_VALUE_SRC = """
@KERNELJIT
def KNAME(meta, out, aux, inp, div):
    inner = meta[0]
    n0 = meta[1]
    os0 = meta[2]
    as0 = meta[3]
    is0 = meta[4]
    nk = meta[8]
    nr = meta[9]
    nsplit = meta[10]
    tile = meta[11]
    kb = 12
    rb = 12 + 4 * nk
    nkept = 1
    for d in range(nk):
        nkept *= meta[kb + d]
    nrows = 1
    for d in range(nr):
        nrows *= meta[rb + d]
    if inner:
@PART_INNER
        for w in RANGE(nkept * nsplit):
            j = w // nsplit
            s = w - j * nsplit
            po = meta[5]
            pa = meta[6]
            pi = meta[7]
@KEPT_OFFSETS
@MEAN_INNER
            if nrows >= nsplit:
                r0 = nrows * s // nsplit
                r1 = nrows * (s + 1) // nsplit
                c0 = 0
                c1 = n0
            else:
                r0 = 0
                r1 = nrows
                c0 = n0 * s // nsplit
                c1 = n0 * (s + 1) // nsplit
            l1 = INIT
            l2 = INIT
            cnt = 0
            for r in range(r0, r1):
                q = pi
@ROW_OFFSET
                i = c0
                while i < c1:
                    nb = min(BLOCKN, c1 - i)
                    l1 = comb(l1, block(inp, q + i * is0, is0, nb@M))
                    cnt += 1
@STOP_BLOCK
                    if cnt == FANN:
                        l2 = comb(l2, l1)
                        l1 = INIT
                        cnt = 0
                    i += nb
@STOP_ROW
            acc = comb(l2, l1)
@STORE_INNER
    else:
        ntile = (n0 + tile - 1) // tile
@PART_OUTER
        for w in RANGE(nkept * ntile * nsplit):
            s = w % nsplit
            u = w // nsplit
            j = u // ntile
            t = u - j * ntile
            po = meta[5]
            pa = meta[6]
            pi = meta[7]
@KEPT_OFFSETS
            c0 = t * tile
            cn = min(tile, n0 - c0)
            r0 = nrows * s // nsplit
            r1 = nrows * (s + 1) // nsplit
            accv = np.empty(tile, ACCT)@NEXT_ALLOC
            for i in range(cn):
                accv[i] = INIT
@MEAN_OUTER
            r = r0
            if is0 == 1:
                # Four rows per pass over the tile: a quarter of the accumulator traffic.
                while r + 4 <= r1:
                    q = pi + c0 + rowoff(meta, rb, nr, r)
                    x0 = inp[q:q + cn]
                    q = pi + c0 + rowoff(meta, rb, nr, r + 1)
                    x1 = inp[q:q + cn]
                    q = pi + c0 + rowoff(meta, rb, nr, r + 2)
                    x2 = inp[q:q + cn]
                    q = pi + c0 + rowoff(meta, rb, nr, r + 3)
                    x3 = inp[q:q + cn]
                    for i in range(cn):
                        NEXTV[i] = comb(accv[i], comb(
                            comb(fmap(load(x0[i])@MV), fmap(load(x1[i])@MV)),
                            comb(fmap(load(x2[i])@MV), fmap(load(x3[i])@MV))))@NEXT_SWAP
                    r += 4
            while r < r1:
                q = pi + c0 * is0 + rowoff(meta, rb, nr, r)
                if is0 == 1:
                    row = inp[q:q + cn]
                    for i in range(cn):
                        NEXTV[i] = comb(accv[i], fmap(load(row[i])@MV))
                else:
                    for i in range(cn):
                        NEXTV[i] = comb(accv[i], fmap(load(inp[np.uint64(q + i * is0)])@MV))@NEXT_SWAP_ROW
                r += 1
@STORE_OUTER
""".replace(
    "@KEPT_OFFSETS", unravel_source("j", "range(nk)", "kb", [
        ("po", "kb + nk"), ("pa", "kb + 2 * nk"), ("pi", "kb + 3 * nk")], 12)).replace(
    "@ROW_OFFSET", unravel_source("r", "range(nr)", "rb", [("q", "rb + nr")], 16))

# Inner mode over contiguous rows (in stride 1 along dim 0), no reduced outer dims, at most one
# kept dim: sum(x), sum(x, axis=-1) of C-order x, ... The loop of serial_inner for exactly these
# layouts (the same blocks and cascade: bit for bit its result), without the general layout
# decoding: a smaller kernel, so a first call compiles faster.
_ROWS_SRC = """
@KERNELJIT
def serial_rows(meta, out, aux, inp, div):
    n0 = meta[1]
    nk = meta[8]
    po = meta[5]
    pa = meta[6]
    pi = meta[7]
    nkept = meta[12] if nk else 1
    so = meta[13] if nk else 0
    sa = meta[14] if nk else 0
    si = meta[15] if nk else 0
    for j in range(nkept):
@MEAN_ROWS
        q = pi + j * si
        l1 = INIT
        l2 = INIT
        cnt = 0
        i = 0
        while i < n0:
            nb = min(BLOCKN, n0 - i)
            l1 = comb(l1, block(inp, q + i, 1, nb@M))
            cnt += 1
@STOP_ROWS
            if cnt == FANN:
                l2 = comb(l2, l1)
                l1 = INIT
                cnt = 0
            i += nb
        out[po + j * so] = fin(comb(l2, l1), div)
"""

# the offset of the output of a kept index jc, in the serial combine of split partials
_STORE_OFFSET = unravel_source("jc + 0", "range(nk)", "kb", [("po", "kb + nk")], 16,
                               note="a copy, not the prange index itself (parfors)")
_STORE_INNER_SERIAL = """\
            out[po] = fin(acc, div)"""
_STORE_INNER_PAR = """\
            if nsplit == 1:
                out[po] = fin(acc, div)
            else:
                part[w] = acc
        if nsplit > 1:
            for jc in range(nkept):  # few outputs (< threads): serial
                po = meta[5]
@STORE_OFFSET
                acc = part[jc * nsplit]
                for sc in range(1, nsplit):
                    acc = comb(acc, part[jc * nsplit + sc])
                out[po] = fin(acc, div)""".replace("@STORE_OFFSET", _STORE_OFFSET)
_STORE_OUTER_SERIAL = """\
            for i in range(cn):
                out[np.uint64(po + (c0 + i) * os0)] = fin(accv[i], div)"""
_STORE_OUTER_PAR = """\
            if nsplit == 1:
                for i in range(cn):
                    out[np.uint64(po + (c0 + i) * os0)] = fin(accv[i], div)
            else:
                for i in range(cn):
                    part[w * tile + i] = accv[i]
        if nsplit > 1:
            for uc in range(nkept * ntile):  # few tiles (< threads): serial
                jc = uc // ntile
                tc = uc - jc * ntile
                po = meta[5]
@STORE_OFFSET
                c0 = tc * tile
                cn = min(tile, n0 - c0)
                for i in range(cn):
                    acc = part[uc * nsplit * tile + i]
                    for sc in range(1, nsplit):
                        acc = comb(acc, part[(uc * nsplit + sc) * tile + i])
                    out[np.uint64(po + (c0 + i) * os0)] = fin(acc, div)""".replace("@STORE_OFFSET", _STORE_OFFSET)


class ValueSpec:
    """One generated value-reduction module: load (input dtype -> load_dt), fmap (per element,
    with the aux value m when given), comb (associative), init (its identity), fin (acc and the
    float64 divisor -> fin_dt), then the cast to the output dtype. ``stop``: comb's absorbing
    value (True for any, the type's largest for an integer max), where it has one: a row's scan
    over contiguous blocks ends at the first block that reaches it, as NumPy's any / max of
    bools do (max of 1e7 random bools read every byte: 127 us, NumPy 2)."""

    def __init__(self, op, in_dt, load_dt, acc_dt, out_dt, *, init, comb, fmap="v", fin="acc",
                 fin_dt=None, aux_dt=None, reassoc=False, stop=None):
        self.op, self.in_dt, self.load_dt, self.acc_dt, self.out_dt = (op, in_dt, load_dt,
                                                                       acc_dt, out_dt)
        self.init, self.comb, self.fmap, self.fin = init, comb, fmap, fin
        self.fin_dt = fin_dt or acc_dt
        self.aux_dt, self.reassoc, self.stop = aux_dt, reassoc, stop

    def _block_step(self):
        """The block loop's accumulation. An integer sum of 8- and 16-bit elements (bool
        included) and a count of nonzero elements add a block's BLOCK elements in int32 lanes,
        twice as many per vector as int64's, which cannot overflow (1024 * 65535 < 2**31) and
        give the same total (integer addition is exact in any order): the sum of 1e5 bools
        5.0 -> 2.7 us in a plain loop."""
        small_sum = (self.op == "sum" and self.fmap == "v" and self.in_dt.kind in "biu"
                     and self.in_dt.itemsize <= 2)
        narrow = ((small_sum or self.op == "count_nonzero") and self.aux_dt is None
                  and self.acc_dt.kind in "iu" and self.acc_dt.itemsize == 8 and BLOCK <= 1024)
        # elements of 0 / 1 (a count, or a sum of bools) of 1- and 2-byte inputs in int16
        # lanes, twice as many again (a block's total <= 1024): count_nonzero / sum of 2e6 bools
        # 0.15-0.16 -> 0.08-0.09 ms, NumPy's 0.08-0.09 (from 4-byte inputs the narrowing of
        # their compare masks cost more than it saved)
        lane = "np.int16" if narrow and self.in_dt.itemsize <= 2 and (
            self.op == "count_nonzero" or self.in_dt is _dt.bool_) else "np.int32"
        step = (f"{lane}(acc + {lane}(fmap(load({{}}))))" if narrow else
                "comb(acc, fmap(load({})@M))")
        return {"BLOCK_INIT": f"{lane}(0)" if narrow else "INIT",
                "BLOCK_STEP_CONTIG": step.format("seg[k]"),
                "BLOCK_RESULT": "ACCT(acc)" if narrow else "acc"}

    def key(self):
        return ("value", self.op, self.in_dt, self.load_dt, self.acc_dt, self.out_dt,
                self.aux_dt, self.init, self.comb, self.fmap, self.fin, self.reassoc, self.stop)

    def source(self):
        has_aux = self.aux_dt is not None
        what = (f"{self.op} {self.in_dt.name} -> {self.acc_dt.name} -> {self.out_dt.name}"
                + (f" (aux {self.aux_dt.name})" if has_aux else ""))
        inl = _njit(inline=True)
        src = _HEADER.format(what=what)
        src += f"{inl}\ndef load(x):\n    return {load_code(self.in_dt, self.load_dt)}\n\n"
        sig = "v, m" if has_aux else "v"
        src += f"{inl}\ndef fmap({sig}):\n    return {self.fmap}\n\n"
        src += f"{inl}\ndef comb(a, b):\n    return {self.comb}\n\n"
        store = cast_code(self.fin_dt, self.out_dt, f"({self.fin})")
        src += f"{inl}\ndef fin(acc, div):\n    return {store}\n\n"
        acct = np_type(self.acc_dt)
        rep = {"@M": ", m" if has_aux else "", "@MV": ", mv[i]" if has_aux else "",
               "INIT": self.init, "ACCT": acct, "BLOCKN": str(BLOCK), "FANN": str(FAN),
               "SCRATCHN": str(SCRATCH),
               "@BLOCKJIT": _njit(fastmath=True) if self.reassoc else inl, "@INLJIT": inl}
        # A stop is checked every 4th block: a check per block cost 30% of a full scan of
        # 1e7 bytes (the branch serialized the blocks' horizontal reductions); once more at a
        # row's end.
        for token, indent, test in (("@STOP_BLOCK", 20, "cnt & 3 == 0 and "),
                                    ("@STOP_ROW", 16, ""), ("@STOP_ROWS", 12, "cnt & 3 == 0 and ")):
            rep[token] = ("" if self.stop is None else
                          f"{' ' * indent}if {test}l1 == {self.stop}:\n{' ' * indent}    break")
        if self.op in ("max", "min") and self.in_dt in (_dt.float32, _dt.float64) and \
                self.acc_dt is self.in_dt:
            rep.update(_bit_keys(self.in_dt, self.op))
            rep["BLOCKN"] = str(MINMAX_BLOCK)
            src += _fill(_MINMAX_BLOCK_SRC, rep)
            # float64: 512-bit vectors (the 64-bit integer max / min have a 3-cycle latency
            # and two ports at 256 bits): max of 1e5 float64, the whole call, 22 us at 256
            # bits, 13 at 512 (the former key scan: 16.6); float32 gained nothing measurable
            # at 512 bits, and keeps 256
            src = vector_width.source_marker(self.in_dt is _dt.float64) + src
        else:
            src += _fill(_BLOCK_SRC, {**rep, **self._block_step()})
        # A select comb (max / min) writes each pass into a second tile and swaps the two: in
        # place, ``b if b > a else a`` stored back over the accumulator it read became a masked
        # store of the changed lanes (vmaskmovps, microcoded on AMD Zen): max along axis 0 of
        # (2000, 1000) float32 took 1.5-2.2x NumPy's time (one thread 0.48 -> 0.23 ms, NumPy 0.3).
        select = self.op in ("max", "min")
        swap = "accv, nextv = nextv, accv"
        rep.update({"@NEXT_ALLOC": "\n            nextv = np.empty(tile, ACCT)" if select else "",
                    "NEXTV": "nextv" if select else "accv",
                    "@NEXT_SWAP_ROW": f"\n{' ' * 16}{swap}" if select else "",
                    "@NEXT_SWAP": f"\n{' ' * 20}{swap}" if select else ""})
        for fname, par in (("serial", False), ("parallel", True)):
            rep.update({
                "@KERNELJIT": _njit(parallel=par), "KNAME": fname,
                "RANGE": "prange" if par else "range",
                "@PART_INNER": ("        part = np.empty(nkept * nsplit if nsplit > 1 else 0, "
                                "ACCT)" if par else ""),
                "@PART_OUTER": ("        part = np.empty(nkept * ntile * nsplit * tile if "
                                "nsplit > 1 else 0, ACCT)" if par else ""),
                "@STORE_INNER": _STORE_INNER_PAR if par else _STORE_INNER_SERIAL,
                "@STORE_OUTER": _STORE_OUTER_PAR if par else _STORE_OUTER_SERIAL,
                "@MEAN_INNER": "            m = aux[pa]" if has_aux else "",
                "@MEAN_OUTER": ("            mv = np.empty(tile, AUXT)\n"
                                "            for i in range(cn):\n"
                                "                mv[i] = aux[pa + (c0 + i) * as0]"
                                if has_aux else ""),
                "AUXT": np_type(self.aux_dt) if has_aux else acct,
            })
            src += "\n" + _split_modes(_fill(_VALUE_SRC, rep), fname)
        rep.update({"@KERNELJIT": _njit(),
                    "@MEAN_ROWS": "        m = aux[pa + j * sa]" if has_aux else ""})
        src += "\n" + _fill(_ROWS_SRC, rep)
        return src
