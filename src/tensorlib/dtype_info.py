"""Machine limits (``finfo``, ``iinfo``) and the Array API kind test ``isdtype``."""

from __future__ import annotations

import math

import numpy as np

from .dtype_table import DType, bfloat16, float16, float32, float64, real_for, to_dtype

# ------------------------------------------------------------ finfo/iinfo

class _Info:
    __slots__ = ()

    def __setattr__(self, key, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __delattr__(self, key):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __reduce__(self):
        return (type(self), (self.dtype,))

    def __repr__(self):
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._repr_fields)
        return f"{type(self).__name__}({fields})"


class finfo(_Info):
    """Machine limits of a floating-point dtype (Python floats).

    For complex dtypes the limits (and ``dtype``) are those of the component
    float type, as the Array API specifies."""

    # Its public home, tensorlib.dtypes, is what pickles and reprs name (DType's very string:
    # pickle's memo then finds it once, as when all lived in dtypes.py)
    __module__ = DType.__module__

    __slots__ = ("bits", "eps", "max", "min", "smallest_normal",
                 "smallest_subnormal", "resolution", "dtype")
    _repr_fields = ("resolution", "min", "max", "eps", "smallest_normal", "bits", "dtype")
    _cache: dict = {}

    # (mantissa bits, max exponent) of each IEEE-style format.
    _FORMATS = {float16: (10, 15), bfloat16: (7, 127), float32: (23, 127), float64: (52, 1023)}

    def __new__(cls, dtype_or_tensor):
        d = _info_arg(dtype_or_tensor, "finfo")
        if d.kind not in ("f", "c"):
            raise TypeError(
                f"finfo(): argument 'type' must be a floating-point or complex dtype, got {d!r}")
        d = real_for(d)
        obj = cls._cache.get(d)
        if obj is not None:
            return obj
        obj = super().__new__(cls)
        mant, emax = cls._FORMATS[d]
        set_ = object.__setattr__
        mx = math.ldexp(2.0 - math.ldexp(1.0, -mant), emax)
        eps = math.ldexp(1.0, -mant)
        set_(obj, "bits", d.bits)
        set_(obj, "eps", eps)
        set_(obj, "max", mx)
        set_(obj, "min", -mx)
        set_(obj, "smallest_normal", math.ldexp(1.0, 1 - emax))
        set_(obj, "smallest_subnormal", math.ldexp(1.0, 1 - emax - mant))
        # Decimal resolution 10**-p, p = digits the mantissa resolves (NumPy's rule).
        set_(obj, "resolution", float(f"1e-{int(-math.log10(eps))}"))
        set_(obj, "dtype", d)
        cls._cache[d] = obj
        return obj

    def __init__(self, dtype_or_tensor):
        pass

    @property
    def tiny(self) -> float:
        return self.smallest_normal


class iinfo(_Info):
    """Machine limits of an integer dtype (Python ints)."""

    # Its public home, tensorlib.dtypes, is what pickles and reprs name (DType's very string:
    # pickle's memo then finds it once, as when all lived in dtypes.py)
    __module__ = DType.__module__

    __slots__ = ("bits", "min", "max", "dtype")
    _repr_fields = ("min", "max", "bits", "dtype")
    _cache: dict = {}

    def __new__(cls, dtype_or_tensor):
        d = _info_arg(dtype_or_tensor, "iinfo")
        if d.kind not in ("i", "u"):
            raise TypeError(f"iinfo(): argument 'type' must be an integer dtype, got {d!r}")
        obj = cls._cache.get(d)
        if obj is not None:
            return obj
        obj = super().__new__(cls)
        bits = d.bits
        set_ = object.__setattr__
        set_(obj, "bits", bits)
        if d.kind == "i":
            set_(obj, "min", -(1 << (bits - 1)))
            set_(obj, "max", (1 << (bits - 1)) - 1)
        else:
            set_(obj, "min", 0)
            set_(obj, "max", (1 << bits) - 1)
        set_(obj, "dtype", d)
        cls._cache[d] = obj
        return obj

    def __init__(self, dtype_or_tensor):
        pass


def _info_arg(x, op):
    if type(x) is DType:
        return x
    dt = getattr(x, "dtype", None)
    if dt is not None and not isinstance(x, (type, np.dtype)):
        x = dt  # tensor / numpy array
    return to_dtype(x, arg="type", op=op)


# ---------------------------------------------------------------- isdtype

_KIND_NAMES = {
    "bool": ("b",),
    "signed integer": ("i",),
    "unsigned integer": ("u",),
    "integral": ("i", "u"),
    "real floating": ("f",),
    "complex floating": ("c",),
    "numeric": ("i", "u", "f", "c"),
}


def _isdtype_one(d, kind):
    if type(kind) is DType:
        return d is kind
    if type(kind) is str:
        kinds = _KIND_NAMES.get(kind)
        if kinds is None:
            raise ValueError(
                f"isdtype(): unknown kind {kind!r}; expected a dtype or one of {tuple(_KIND_NAMES)}")
        return d.kind in kinds
    raise TypeError(
        f"isdtype(): kind must be a dtype, a kind name or a tuple of those, got {kind!r}")


def isdtype(dtype, kind) -> bool:
    """Array API ``isdtype``: whether ``dtype`` is ``kind`` (a DType, a kind
    name such as 'real floating', or a tuple of those)."""
    d = to_dtype(dtype, op="isdtype")
    if type(kind) is tuple:
        # Evaluate every entry so a bad one is reported even after a match.
        return any([_isdtype_one(d, k) for k in kind])
    return _isdtype_one(d, kind)
