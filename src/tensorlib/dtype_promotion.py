"""Type promotion and casting rules: ``promote_types``, ``result_type`` (Python scalars weak)
and ``can_cast``, each a table lookup over every dtype pair built at import."""

from __future__ import annotations

import numpy as np

from .dtype_table import (_BY_NAME, _PY_TYPES, ALL_DTYPES, DType, _from_np, bfloat16, bool_,
                          complex64, complex128, complex_for, float16, float32, float64, int64,
                          real_for, to_dtype)

_INTEGRAL = ("b", "i", "u")


def _promote_float(a, b):
    if a is b:
        return a
    if a.bits == b.bits:  # float16 vs bfloat16: neither holds the other
        return float32
    return a if a.bits > b.bits else b


def _compute_promotion(a, b):
    if a is b:
        return a
    if a.kind == "b":
        return b
    if b.kind == "b":
        return a
    ka, kb = a.kind, b.kind
    if ka in _INTEGRAL and kb in _INTEGRAL:
        if ka == kb:
            return a if a.bits >= b.bits else b
        s, u = (a, b) if ka == "i" else (b, a)
        if u.bits < s.bits:
            return s
        if u.bits == 64:
            return float64  # no integer holds both int64 and uint64 (NumPy's choice)
        return _BY_NAME[f"int{u.bits * 2}"]
    # Integers never widen a float/complex operand (PyTorch behaviour).
    if ka in _INTEGRAL:
        return b
    if kb in _INTEGRAL:
        return a
    if ka == "f" and kb == "f":
        return _promote_float(a, b)
    # At least one complex: component precision is the float promotion.
    return complex_for(_promote_float(real_for(a), real_for(b)))


_PROMOTE = {(a, b): _compute_promotion(a, b) for a in ALL_DTYPES for b in ALL_DTYPES}


def promote_types(a, b) -> DType:
    """Smallest dtype both ``a`` and ``b`` promote to (see module docs)."""
    try:
        return _PROMOTE[(a, b)]
    except (KeyError, TypeError):  # TypeError: unhashable argument
        pass
    return _PROMOTE[(to_dtype(a, arg="type1", op="promote_types"),
                     to_dtype(b, arg="type2", op="promote_types"))]


# Weak Python scalar categories, ordered so the highest one decides.
_W_BOOL, _W_INT, _W_FLOAT, _W_COMPLEX = 1, 2, 3, 4
_WEAK_ALONE = {_W_BOOL: bool_, _W_INT: int64, _W_FLOAT: float32, _W_COMPLEX: complex64}


def _apply_weak(strong, weak):
    k = strong.kind
    if weak == _W_INT:
        return int64 if k == "b" else strong
    if weak == _W_FLOAT:
        return strong if k in ("f", "c") else float32
    if weak == _W_COMPLEX:
        if k == "c":
            return strong
        if strong is float64:
            return complex128
        return complex64
    return strong  # bool scalars never change a strong dtype


def _strong_of(x, i):
    """DType of a non-Python-scalar result_type argument."""
    if type(x) is DType:
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        d = _from_np(x.dtype)
        if d is None:
            raise TypeError(f"result_type(): unsupported numpy dtype {x.dtype!r} of argument {i}")
        return d
    if isinstance(x, type) and x in _PY_TYPES:
        # Ambiguous (weak or strong?), so Python types are refused here.
        raise TypeError(
            f"result_type(): argument {i} is the Python type {x.__name__!r}; "
            "pass a dtype or a Python scalar value")
    dt = getattr(x, "dtype", None)
    if type(dt) is DType:
        return dt
    if isinstance(dt, np.dtype):
        d = _from_np(dt)
        if d is None:
            raise TypeError(f"result_type(): unsupported numpy dtype {dt!r} of argument {i}")
        return d
    return to_dtype(x, arg=f"arrays_and_dtypes[{i}]", op="result_type")


_WEAK_OF_TYPE = {bool: _W_BOOL, int: _W_INT, float: _W_FLOAT, complex: _W_COMPLEX}
_WEAK_TABLE = {(d, w): _apply_weak(d, w) for d in ALL_DTYPES for w in _WEAK_ALONE}


def result_type(*args) -> DType:
    """Result dtype of an operation on ``args`` (dtypes, tensors, numpy
    arrays/scalars, dtype-likes, or weak Python scalar values)."""
    if len(args) == 2 and type(args[0]) is DType:
        # Fast paths: dtype op dtype, dtype op Python scalar.
        b = args[1]
        if type(b) is DType:
            return _PROMOTE[(args[0], b)]
        w = _WEAK_OF_TYPE.get(type(b))
        if w is not None:
            return _WEAK_TABLE[(args[0], w)]
    if not args:
        raise ValueError("result_type(): at least one array or dtype is required")
    strong = None
    weak = 0
    for i, x in enumerate(args):
        t = type(x)
        # Exact-type checks first: numpy scalars like np.float64 subclass float
        # but are strong.
        if t is bool:
            w = _W_BOOL
        elif t is int:
            w = _W_INT
        elif t is float:
            w = _W_FLOAT
        elif t is complex:
            w = _W_COMPLEX
        elif isinstance(x, np.generic) or t is DType:
            w = 0
        elif isinstance(x, bool):
            w = _W_BOOL
        elif isinstance(x, int):
            w = _W_INT
        elif isinstance(x, float):
            w = _W_FLOAT
        elif isinstance(x, complex):
            w = _W_COMPLEX
        else:
            w = 0
        if w:
            if w > weak:
                weak = w
            continue
        d = _strong_of(x, i)
        strong = d if strong is None else _PROMOTE[(strong, d)]
    if strong is None:
        return _WEAK_ALONE[weak]
    if weak:
        return _apply_weak(strong, weak)
    return strong



# --------------------------------------------------------------- casting

# Widest integer (in bits) each float format holds exactly, as NumPy's "safe"
# rule counts it (int64 -> float64 is deemed safe).
_FLOAT_INT_BITS = {float16: 8, bfloat16: 8, float32: 16, float64: 64}


def _compute_safe(a, b):
    if a is b or a.kind == "b":
        return True
    ka, kb = a.kind, b.kind
    if kb == "b":
        return False
    if ka in ("i", "u"):
        if kb == "u":
            return ka == "u" and b.bits >= a.bits
        if kb == "i":
            return b.bits >= a.bits if ka == "i" else b.bits > a.bits
        return a.bits <= _FLOAT_INT_BITS[real_for(b)]
    if ka == "f":
        if kb == "f":
            return b.bits > a.bits  # also rejects float16 <-> bfloat16
        if kb == "c":
            c = real_for(b)
            return c is a or c.bits > a.bits
        return False
    # complex
    return kb == "c" and b.bits >= a.bits


_KIND_RANK = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}

_SAFE = {(a, b): _compute_safe(a, b) for a in ALL_DTYPES for b in ALL_DTYPES}
_SAME_KIND = {
    (a, b): _SAFE[(a, b)] or _KIND_RANK[a.kind] <= _KIND_RANK[b.kind]
    for a in ALL_DTYPES for b in ALL_DTYPES
}
_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def can_cast(from_, to, casting: str = "safe") -> bool:
    """Whether ``from_`` (dtype or tensor/array) may be cast to ``to`` under
    ``casting`` ('no', 'equiv', 'safe', 'same_kind', 'unsafe')."""
    if type(casting) is not str or casting not in _CASTINGS:
        raise ValueError(
            f"can_cast(): casting must be one of {_CASTINGS}, got {casting!r}")
    if type(from_) is not DType:
        dt = getattr(from_, "dtype", None)
        if dt is not None and not isinstance(from_, (type, np.dtype)):
            from_ = dt
        from_ = to_dtype(from_, arg="from_", op="can_cast")
    to = to_dtype(to, arg="to", op="can_cast")
    if casting == "safe":
        return _SAFE[(from_, to)]
    if casting == "same_kind":
        return _SAME_KIND[(from_, to)]
    if casting == "unsafe":
        return True
    return from_ is to
