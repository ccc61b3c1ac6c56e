"""The sort keys of the CPU sorting kernels: every real dtype sorts through an unsigned integer
key of its width whose unsigned order is the value order (``key_spec``, and ``_key_source``: the
generated module's key transforms ``tokey`` / ``tokey_plain`` / ``unkey`` / ``special``)."""
from __future__ import annotations

import numpy as np

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
