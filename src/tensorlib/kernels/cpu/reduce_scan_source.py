"""The Numba source of the CPU scans (cumsum / cumprod): _SCAN_SRC, filled by scan_source."""
from __future__ import annotations

from .casting import cast_code
from .reduce_common import _HEADER, _fill, _njit, lit, load_code, np_type
from .unravel import unravel_source

__all__ = ["scan_source"]

_SCAN_SRC = """
@KERNELJIT
def KNAME(meta, out, inp):
    inner = meta[0]
    n = meta[1]
    osa = meta[2]
    isa = meta[3]
    nd = meta[4]
    tile = meta[5]
    sb = 8
    if inner:
        lines = 1
        for d in range(nd):
            lines *= meta[sb + d]
        for j in RANGE(lines):
            po = meta[6]
            pi = meta[7]
@LINE_OFFSETS
            acc = INIT
            for k in range(n):
                acc = comb(acc, load(inp[np.uint64(pi + k * isa)]))
                out[np.uint64(po + k * osa)] = store(acc)
    else:
        n0 = meta[sb]
        os0 = meta[sb + nd]
        is0 = meta[sb + 2 * nd]
        nouter = 1
        for d in range(1, nd):
            nouter *= meta[sb + d]
        ntile = (n0 + tile - 1) // tile
        for w in RANGE(nouter * ntile):
            j = w // ntile
            t = w - j * ntile
            po = meta[6]
            pi = meta[7]
@OUTER_OFFSETS
            c0 = t * tile
            cn = min(tile, n0 - c0)
            accv = np.empty(tile, ACCT)
            for i in range(cn):
                accv[i] = INIT
            for k in range(n):
                q = pi + k * isa + c0 * is0
                qo = po + k * osa + c0 * os0
                if is0 == 1 and os0 == 1:
                    src = inp[q:q + cn]
                    dst = out[qo:qo + cn]
                    for i in range(cn):
                        accv[i] = comb(accv[i], load(src[i]))
                        dst[i] = store(accv[i])
                else:
                    for i in range(cn):
                        accv[i] = comb(accv[i], load(inp[np.uint64(q + i * is0)]))
                        out[np.uint64(qo + i * os0)] = store(accv[i])
""".replace(
    "@LINE_OFFSETS", unravel_source("j + 0", "range(nd)", "sb", [
        ("po", "sb + nd"), ("pi", "sb + 2 * nd")], 12,
        note="a copy, not the prange index itself (parfors)")).replace(
    "@OUTER_OFFSETS", unravel_source("j", "range(1, nd)", "sb", [
        ("po", "sb + nd"), ("pi", "sb + 2 * nd")], 12))


def scan_source(op, in_dt, acc, out_dt):
    """The module of cumsum / cumprod (op) of in_dt, accumulated in acc, stored as out_dt."""
    inl = _njit(inline=True)
    src = _HEADER.format(what=f"{op} {in_dt.name} -> {acc.name} -> {out_dt.name}")
    src += f"{inl}\ndef load(x):\n    return {load_code(in_dt, acc)}\n\n"
    src += f"{inl}\ndef store(x):\n    return {cast_code(acc, out_dt, 'x')}\n\n"
    comb = "a + b" if op == "cumsum" else "a * b"
    src += f"{inl}\ndef comb(a, b):\n    return {comb}\n\n"
    for fname, par in (("serial", False), ("parallel", True)):
        src += "\n" + _fill(_SCAN_SRC, {
            "@KERNELJIT": _njit(parallel=par), "KNAME": fname,
            "RANGE": "prange" if par else "range",
            "INIT": lit(acc, 0 if op == "cumsum" else 1), "ACCT": np_type(acc)})
    return src
