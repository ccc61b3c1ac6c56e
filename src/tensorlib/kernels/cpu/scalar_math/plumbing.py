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
# on F16C or compiler-rt half builtins being linkable in the JIT). Branch-free:
# every case is computed and one selected, so a loop converting each element
# vectorizes (with early returns per case it stayed scalar: float16 abs of 1e5
# elements took 137 us, NumPy 5).
# --------------------------------------------------------------------------

_F16_MIN_NORMAL = np.float32(6.103515625e-05)   # 2**-14
_U32 = np.uint32  # (32-bit lanes throughout: twice as many per vector as Numba's int64 default)


@register_jitable(**_JIT)
def _f16_to_f32(a):
    h = _U32(np.int64(a) & 0xFFFF)
    o = _U32((h & _U32(0x7FFF)) << _U32(13))     # exponent and mantissa in float32's place
    e = (h >> _U32(10)) & _U32(0x1F)
    normal = _U32(o + _U32(112 << 23))           # exponent rebiased (15 -> 127)
    special = _U32(o + _U32(224 << 23))          # inf / nan: exponent 255, payload kept (NumPy)
    # zero / subnormal: 2**-14 (1 + m / 1024) - 2**-14 = m 2**-24, exact in float32 (normal
    # floats only: a flush-to-zero mode cannot change it)
    sub = _f32_bits(_bits_f32(_U32(o + _U32(113 << 23))) - _F16_MIN_NORMAL)
    r = special if e == _U32(0x1F) else (normal if e != _U32(0) else sub)
    return _bits_f32(_U32(r | ((h & _U32(0x8000)) << _U32(16))))


@register_jitable(**_JIT)
def _f32_to_f16(a):
    x = _f32_bits(np.float32(a))
    sign = _U32((x >> _U32(16)) & _U32(0x8000))
    x = _U32(x & _U32(0x7FFFFFFF))
    # normal half: rebias and round to nearest even (from 65520 on the carry reaches inf)
    nrm = _U32(x - _U32(0x38000000) + _U32(0xFFF) + ((x >> _U32(13)) & _U32(1))) >> _U32(13)
    # zero / subnormal half (below 2**-14): adding 0.5, whose ulp is 2**-24, rounds |a| to a
    # multiple of 2**-24 (to nearest even); that multiple is the half's bits (1024: the
    # smallest normal half, 0x0400)
    sub = _U32(_f32_bits(_bits_f32(x) + np.float32(0.5)) - _U32(0x3F000000))
    # nan: keep the top payload bits, force non-zero (NumPy does the same)
    nan = _U32(0x7C00) | ((x & _U32(0x7FFFFF)) >> _U32(13))
    nan = nan if nan != _U32(0x7C00) else _U32(0x7C01)
    r = nrm if x >= _U32(0x38800000) else sub
    r = _U32(0x7C00) if x >= _U32(0x477FF000) else r   # >= 65520 rounds to inf
    r = nan if x > _U32(0x7F800000) else r
    return np.uint16(sign | r)


@register_jitable(**_JIT)
def _bf16_to_f32(a):
    return _bits_f32(_U32(_U32(np.int64(a) & 0xFFFF) << _U32(16)))


@register_jitable(**_JIT)
def _f32_to_bf16(a):
    x = _f32_bits(np.float32(a))
    # round to nearest even; overflow carries into inf naturally; nan: quiet, sign kept
    rne = _U32(x + _U32(0x7FFF) + ((x >> _U32(16)) & _U32(1))) >> _U32(16)
    nan = ((x >> _U32(16)) & _U32(0x8000)) | _U32(0x7FC0)
    return np.uint16(nan if (x & _U32(0x7FFFFFFF)) > _U32(0x7F800000) else rne)


def _mk_conv(impl, src_kinds):
    def make(t):
        return impl if _kind(t) in src_kinds else None
    return make


# storage words are any integer type (uint16 normally); sources any real float
f16_to_f32 = _define("f16_to_f32", 1, _mk_conv(_f16_to_f32, ("i", "u")))
bf16_to_f32 = _define("bf16_to_f32", 1, _mk_conv(_bf16_to_f32, ("i", "u")))
f32_to_f16 = _define("f32_to_f16", 1, _mk_conv(_f32_to_f16, ("f",)))
f32_to_bf16 = _define("f32_to_bf16", 1, _mk_conv(_f32_to_bf16, ("f",)))
