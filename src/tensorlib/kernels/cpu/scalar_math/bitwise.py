"""Bitwise (integers, bool as logical) and logical helpers."""
from numba.extending import overload

from .plumbing import _JIT, _define, _kind


# --------------------------------------------------------------------------
# bitwise (ints, bool as logical)
# --------------------------------------------------------------------------

def _mk_bitop(op):
    def make(t):
        k = _kind(t)
        if k == "b":
            if op == "and":
                return lambda a, b: a and b
            if op == "or":
                return lambda a, b: a or b
            return lambda a, b: a != b
        if k in ("i", "u"):
            if op == "and":
                return lambda a, b: t(a & b)
            if op == "or":
                return lambda a, b: t(a | b)
            return lambda a, b: t(a ^ b)
        return None
    return make


def _mk_bit_not(t):
    k = _kind(t)
    if k == "b":
        return lambda a: not a
    if k in ("i", "u"):
        return lambda a: t(~a)
    return None


def _mk_shift(left):
    def make(t):
        k = _kind(t)
        if k not in ("i", "u"):
            return None
        nbits = t.bitwidth
        signed = k == "i"
        # NumPy: counts outside [0, width) give 0 (or -1 for a negative a >>)
        if left:
            def impl(a, b):
                if (signed and b < 0) or b >= nbits:
                    return t(0)
                return t(a << b)
        else:
            def impl(a, b):
                if (signed and b < 0) or b >= nbits:
                    return t(-1) if (signed and a < 0) else t(0)
                return t(a >> b)
        return impl
    return make


bit_and = _define("bit_and", 2, _mk_bitop("and"))
bit_or = _define("bit_or", 2, _mk_bitop("or"))
bit_xor = _define("bit_xor", 2, _mk_bitop("xor"))
bit_not = _define("bit_not", 1, _mk_bit_not)
left_shift = _define("left_shift", 2, _mk_shift(True))
right_shift = _define("right_shift", 2, _mk_shift(False))


# --------------------------------------------------------------------------
# logical (truthiness of each operand; no promotion needed)
# --------------------------------------------------------------------------

def _truth(a):
    """NumPy truthiness: non-zero (nan counts), complex if either part is."""


@overload(_truth, jit_options=_JIT)
def _ov_truth(a):
    k = _kind(a)
    if k == "b":
        return lambda a: a
    if k in ("i", "u", "f"):
        return lambda a: a != 0
    if k == "c":
        return lambda a: a.real != 0 or a.imag != 0
    return None


def _mk_logical(fn):
    def make(t):
        return fn if _kind(t) is not None else None
    return make


logical_and = _define("logical_and", 2, _mk_logical(lambda a, b: _truth(a) and _truth(b)))
logical_or = _define("logical_or", 2, _mk_logical(lambda a, b: _truth(a) or _truth(b)))
logical_xor = _define("logical_xor", 2, _mk_logical(lambda a, b: _truth(a) != _truth(b)))
logical_not = _define("logical_not", 1, _mk_logical(lambda a: not _truth(a)))
