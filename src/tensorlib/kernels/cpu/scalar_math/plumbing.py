"""Type plumbing of the CPU scalar helpers: NumPy promotion of operand types, the stub +
``overload`` each helper is made of (:func:`_define`), typed constants, bit casts and the
float16 / bfloat16 storage conversions."""
import numba
import numpy as np
from numba import types
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype, from_dtype

from .. import vector_math as _vm

# Helper bodies are compiled separately from the calling kernel, so they need
# the kernel's float semantics themselves (no ZeroDivisionError, no fastmath).
_JIT = {"error_model": "numpy", "fastmath": False}


# --------------------------------------------------------------------------
# type plumbing
# --------------------------------------------------------------------------

def _kind(t):
    if isinstance(t, types.Boolean):
        return "b"
    if isinstance(t, types.Integer):
        return "i" if t.signed else "u"
    if isinstance(t, types.Float):
        return "f"
    if isinstance(t, types.Complex):
        return "c"
    return None


def _common(tys):
    """NumPy promotion of operand types; integer/bool literals are weak."""
    strong, weak = [], []
    for t in tys:
        (weak if isinstance(t, types.Literal) else strong).append(types.unliteral(t))
    if any(_kind(t) is None for t in strong + weak):
        return None
    if not strong:
        strong, weak = weak, []
    res = from_dtype(np.result_type(*[as_dtype(t) for t in strong]))
    if weak and _kind(res) == "b" and any(_kind(w) != "b" for w in weak):
        res = types.int64  # a Python int combined with bools is an int
    return res


def _wide(t):
    # integer work type: Numba promotes small ints to 64 bit anyway
    return types.int64 if t.signed else types.uint64


_CASTERS = {
    1: lambda stub, t: (lambda a: stub(t(a))),
    2: lambda stub, t: (lambda a, b: stub(t(a), t(b))),
    3: lambda stub, t: (lambda x, lo, hi: stub(t(x), t(lo), t(hi))),
}

_PY_WRAPPERS = {}
_PY_ARITY = {
    1: lambda f: (lambda a: f(a)),
    2: lambda f: (lambda a, b: f(a, b)),
    3: lambda f: (lambda x, lo, hi: f(x, lo, hi)),
}


def _pycall(stub, args):
    fn = _PY_WRAPPERS.get(stub)
    if fn is None:
        fn = _PY_WRAPPERS[stub] = numba.njit(**_JIT)(_PY_ARITY[len(args)](stub))
    return fn(*args)


def _stub(name, arity):
    # explicit parameter names so keyword calls fold onto the impls
    if arity == 1:
        def f(a):
            return _pycall(f, (a,))
    elif arity == 2:
        def f(a, b):
            return _pycall(f, (a, b))
    else:
        def f(x, lo, hi):
            return _pycall(f, (x, lo, hi))
    f.__name__ = f.__qualname__ = name
    f.__module__ = __package__  # exported from the package (tensorlib.kernels.cpu.scalar_math)
    return f


def _define(name, arity, make, inline="never"):
    """Create helper ``name``: operands are cast to their common type ``t``
    and ``make(t)`` returns the implementation (or None: unsupported).
    ``inline="always"``: the implementation is inlined into the caller in Numba's IR (the
    vector_math kernels: too big for LLVM's inliner, and a call stops vectorization); or a
    Numba inline policy function."""
    stub = _stub(name, arity)

    # strict=False: the typing function takes *args, the impls named params
    @overload(stub, prefer_literal=True, strict=False, jit_options=_JIT, inline=inline)
    def _ov(*args):
        t = _common(args)
        if t is None:
            return None
        if any(a != t for a in args):
            # one extra hop keeps a single compiled body per type
            return _CASTERS[arity](stub, t)
        return make(t)

    return stub


def _like(x, v):
    """``v`` converted to the type of ``x`` (typed constants in generic code)."""


@overload(_like, jit_options=_JIT)
def _ov_like(x, v):
    t = types.unliteral(x)
    return lambda x, v: t(v)


def _cpack(like, re, im):
    """complex of ``like``'s type from two real parts (inf/nan exact)."""


@overload(_cpack, jit_options=_JIT)
def _ov_cpack(like, re, im):
    t = types.unliteral(like)
    # float32 -> float64 -> float32 round trip is exact, so build via complex128
    return lambda like, re, im: t(complex(re, im))


# bit reinterpretation (no Numba builtin for scalars): vector_math's intrinsics
_f32_bits, _bits_f32 = _vm.f32_bits, _vm.bits_f32
_f64_bits, _bits_f64 = _vm.f64_bits, _vm.bits_f64


def _bits(x):
    """IEEE bit pattern of a float32/float64."""


@overload(_bits, jit_options=_JIT)
def _ov_bits(x):
    if x == types.float32:
        return lambda x: _f32_bits(x)
    if x == types.float64:
        return lambda x: _f64_bits(x)
    return None


def _from_bits(like, u):
    """float of ``like``'s type with bit pattern ``u`` (truncated)."""


@overload(_from_bits, jit_options=_JIT)
def _ov_from_bits(like, u):
    if like == types.float32:
        return lambda like, u: _bits_f32(np.uint32(u))
    if like == types.float64:
        return lambda like, u: _bits_f64(np.uint64(u))
    return None


# --------------------------------------------------------------------------
# float16 / bfloat16 storage conversions (integer arithmetic: no dependence
# on F16C or compiler-rt half builtins being linkable in the JIT)
# --------------------------------------------------------------------------

@register_jitable(**_JIT)
def _f16_to_f32(a):
    h = np.int64(a) & 0xFFFF
    sign = (h & 0x8000) << 16
    e = (h >> 10) & 0x1F
    m = h & 0x3FF
    if e == 0x1F:  # inf / nan, payload kept like NumPy
        return _bits_f32(np.uint32(sign | 0x7F800000 | (m << 13)))
    if e != 0:
        return _bits_f32(np.uint32(sign | ((e + 112) << 23) | (m << 13)))
    # zero / subnormal: m * 2**-24 is exact in float32
    v = np.float32(m) * np.float32(5.960464477539063e-08)
    return _bits_f32(np.uint32(sign | np.int64(_f32_bits(v))))


@register_jitable(**_JIT)
def _f32_to_f16(a):
    x = np.int64(_f32_bits(np.float32(a)))
    sign = (x >> 16) & 0x8000
    x &= 0x7FFFFFFF
    if x >= 0x7F800000:
        if x == 0x7F800000:
            return np.uint16(sign | 0x7C00)
        # nan: keep the top payload bits, force non-zero (NumPy does the same)
        r = 0x7C00 + ((x & 0x7FFFFF) >> 13)
        if r == 0x7C00:
            r += 1
        return np.uint16(sign | r)
    if x >= 0x477FF000:  # >= 65520 rounds to inf
        return np.uint16(sign | 0x7C00)
    if x >= 0x38800000:  # normal half: rebias and round to nearest even
        return np.uint16(sign | ((x - 0x38000000 + 0xFFF + ((x >> 13) & 1)) >> 13))
    if x <= 0x33000000:  # <= 2**-25 (a tie) rounds to zero
        return np.uint16(sign)
    # subnormal half: shift the full significand, round to nearest even
    shift = 126 - (x >> 23)
    m = (x & 0x7FFFFF) | 0x800000
    r = m >> shift
    rem = m & ((np.int64(1) << shift) - 1)
    half = np.int64(1) << (shift - 1)
    if rem > half or (rem == half and (r & 1) != 0):
        r += 1
    return np.uint16(sign | r)


@register_jitable(**_JIT)
def _bf16_to_f32(a):
    return _bits_f32(np.uint32((np.int64(a) & 0xFFFF) << 16))


@register_jitable(**_JIT)
def _f32_to_bf16(a):
    x = np.int64(_f32_bits(np.float32(a)))
    if (x & 0x7FFFFFFF) > 0x7F800000:
        return np.uint16(((x >> 16) & 0x8000) | 0x7FC0)
    # round to nearest even; overflow carries into inf naturally
    return np.uint16((x + 0x7FFF + ((x >> 16) & 1)) >> 16)


def _mk_conv(impl, src_kinds):
    def make(t):
        return impl if _kind(t) in src_kinds else None
    return make


# storage words are any integer type (uint16 normally); sources any real float
f16_to_f32 = _define("f16_to_f32", 1, _mk_conv(_f16_to_f32, ("i", "u")))
bf16_to_f32 = _define("bf16_to_f32", 1, _mk_conv(_bf16_to_f32, ("i", "u")))
f32_to_f16 = _define("f32_to_f16", 1, _mk_conv(_f32_to_f16, ("f",)))
f32_to_bf16 = _define("f32_to_bf16", 1, _mk_conv(_f32_to_bf16, ("f",)))
