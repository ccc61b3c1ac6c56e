"""Data types of tensorlib: the DType singletons, lookup, promotion and casting.

Only NumPy is imported here so that the dtype machinery stays usable (and
cheap to import) without the compiled backends.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "DType",
    "bool_",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "ALL_DTYPES",
    "to_dtype",
    "from_numpy_dtype",
    "to_numpy_dtype",
    "promote_types",
    "result_type",
    "can_cast",
    "finfo",
    "iinfo",
    "isdtype",
    "default_float",
    "default_int",
    "default_complex",
    "default_index",
    "complex_for",
    "real_for",
    "python_scalar_dtype",
]

_SEALED = False  # set once the module-level singletons exist


class DType:
    """A tensorlib data type. There is exactly one object per dtype, so
    compare with ``is`` / ``==`` (identity)."""

    __slots__ = ("name", "itemsize", "kind", "np_dtype", "storage_np_dtype", "_attr")

    def __new__(cls, *args, **kwargs):
        if _SEALED:
            raise TypeError("tensorlib DType objects cannot be created; use the module constants")
        return super().__new__(cls)

    def __init__(self, name, itemsize, kind, np_dtype, storage_np_dtype, attr):
        set_ = object.__setattr__
        set_(self, "name", name)
        set_(self, "itemsize", itemsize)
        set_(self, "kind", kind)
        set_(self, "np_dtype", np_dtype)
        set_(self, "storage_np_dtype", storage_np_dtype)
        set_(self, "_attr", attr)  # module attribute name, used for pickling

    def __setattr__(self, key, value):
        raise AttributeError(f"tensorlib.{self.name} is immutable")

    def __delattr__(self, key):
        raise AttributeError(f"tensorlib.{self.name} is immutable")

    # Pickle/copy by reference so unpickling yields the same singleton.
    def __reduce__(self):
        return self._attr

    # NumPy interop: equal to every spelling of the same type (a NumPy dtype, a scalar type such
    # as np.float32, a name); ``np.dtype(tl.float32)`` reads the ``dtype`` property. The hash
    # stays the identity's (as np.dtype's, it differs from the hash of the equal name string):
    # dtypes key many hot dicts.
    def __eq__(self, other):
        if type(other) is DType:
            return self is other
        if isinstance(other, (str, np.dtype, type)):
            try:
                return to_dtype(other) is self
            except TypeError:
                return False
        return NotImplemented

    __hash__ = object.__hash__

    @property
    def dtype(self) -> np.dtype:
        """The equal NumPy dtype (bfloat16: ``ml_dtypes.bfloat16``; TypeError without that
        package)."""
        return to_numpy_dtype(self)

    @property
    def type(self) -> type:
        """The NumPy scalar type (``np.float32``...), as ``np.dtype.type``: dask reads it from
        a dask array's dtype, which is its tensorlib chunks' dtype."""
        return to_numpy_dtype(self).type

    @property
    def is_floating_point(self) -> bool:
        return self.kind == "f"

    @property
    def is_complex(self) -> bool:
        return self.kind == "c"

    @property
    def is_signed(self) -> bool:
        # Like torch: floats and complex count as signed, bool/unsigned do not.
        return self.kind in ("i", "f", "c")

    @property
    def bits(self) -> int:
        return self.itemsize * 8

    def __repr__(self) -> str:
        return f"tensorlib.{self.name}"

    def __str__(self) -> str:
        return self.name


def _make(name, itemsize, kind, np_name, attr):
    npd = np.dtype(np_name) if np_name is not None else None
    storage = npd if npd is not None else np.dtype(np.uint16)  # bfloat16 raw bits
    return DType(name, itemsize, kind, npd, storage, attr)


bool_ = _make("bool", 1, "b", "bool", "bool_")
int8 = _make("int8", 1, "i", "int8", "int8")
int16 = _make("int16", 2, "i", "int16", "int16")
int32 = _make("int32", 4, "i", "int32", "int32")
int64 = _make("int64", 8, "i", "int64", "int64")
uint8 = _make("uint8", 1, "u", "uint8", "uint8")
uint16 = _make("uint16", 2, "u", "uint16", "uint16")
uint32 = _make("uint32", 4, "u", "uint32", "uint32")
uint64 = _make("uint64", 8, "u", "uint64", "uint64")
float16 = _make("float16", 2, "f", "float16", "float16")
bfloat16 = _make("bfloat16", 2, "f", None, "bfloat16")
float32 = _make("float32", 4, "f", "float32", "float32")
float64 = _make("float64", 8, "f", "float64", "float64")
complex64 = _make("complex64", 8, "c", "complex64", "complex64")
complex128 = _make("complex128", 16, "c", "complex128", "complex128")

ALL_DTYPES = (
    bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
    float16, bfloat16, float32, float64, complex64, complex128,
)

_SEALED = True

_BY_NAME = {d.name: d for d in ALL_DTYPES}
# (numpy kind, itemsize) -> DType; covers every byte order / alias NumPy has.
_BY_KIND_SIZE = {(d.kind, d.itemsize): d for d in ALL_DTYPES if d.np_dtype is not None}


def default_float() -> DType:
    return float32


def default_int() -> DType:
    return int64


def default_complex() -> DType:
    return complex64


def default_index() -> DType:
    return int64


def complex_for(real_dtype: DType) -> DType:
    """Complex dtype whose components hold ``real_dtype`` (complex -> itself)."""
    d = to_dtype(real_dtype, op="complex_for")
    if d.kind == "c":
        return d
    if d.kind != "f":
        raise TypeError(f"complex_for(): argument 'dtype' must be a floating-point dtype, got {d!r}")
    return complex128 if d is float64 else complex64


def real_for(complex_dtype: DType) -> DType:
    """Component dtype of a complex dtype; any other dtype maps to itself."""
    d = to_dtype(complex_dtype, op="real_for")
    if d is complex64:
        return float32
    if d is complex128:
        return float64
    return d


# ---------------------------------------------------------------- lookup

def _bad_dtype(x, arg, op):
    prefix = f"{op}(): " if op else ""
    why = ""
    try:  # a real NumPy type tensorlib lacks (datetime64, str, object...) is said as such
        if not isinstance(x, DType) and isinstance(x, (str, np.dtype, type)):
            why = f" (NumPy dtype {np.dtype(x)} has no tensorlib equivalent)"
    except Exception:
        pass
    return TypeError(f"{prefix}argument '{arg}' must be a tensorlib dtype, got {x!r}{why}")


def _from_np(npd):
    """DType for a numpy dtype, or None if tensorlib has no equivalent."""
    # Structured and subarray dtypes have kind 'V', so they never match here.
    d = _BY_KIND_SIZE.get((npd.kind, npd.itemsize))
    if d is not None:
        return d
    # ml_dtypes' bfloat16 (a 2-byte 'V' dtype) stores the same bits we do.
    if npd.name == "bfloat16" and npd.itemsize == 2:
        return bfloat16
    return None


def from_numpy_dtype(np_dtype) -> DType:
    """DType for a NumPy dtype (or anything ``np.dtype()`` accepts).

    Non-native byte orders map to the logical type ('>f4' -> float32);
    converting the data itself is the caller's job."""
    if not isinstance(np_dtype, np.dtype):
        try:
            np_dtype = np.dtype(np_dtype)
        except Exception:
            raise TypeError(f"from_numpy_dtype(): unsupported numpy dtype {np_dtype!r}") from None
    d = _from_np(np_dtype)
    if d is None:
        raise TypeError(f"from_numpy_dtype(): unsupported numpy dtype {np_dtype!r}")
    return d


def to_numpy_dtype(dtype, op: str = "to_numpy_dtype") -> np.dtype:
    """The NumPy dtype equal to a tensorlib dtype. NumPy has no bfloat16: it maps to
    ``ml_dtypes.bfloat16`` when that package is installed, else TypeError."""
    d = to_dtype(dtype, op=op)
    if d.np_dtype is not None:
        return d.np_dtype
    try:
        import ml_dtypes
    except ImportError:
        raise TypeError(f"{op}(): NumPy has no bfloat16; install the 'ml_dtypes' package for "
                        f"its bfloat16 dtype, or convert first, e.g. x.astype(tl.float32)") \
            from None
    return np.dtype(ml_dtypes.bfloat16)


_STR_CACHE = dict(_BY_NAME)

_PY_TYPES = {bool: bool_, int: int64, float: float64, complex: complex128}


def to_dtype(x, *, arg: str = "dtype", op: str | None = None) -> DType:
    """Convert a dtype-like (DType, name string, numpy dtype or scalar type,
    Python type) to a DType; TypeError otherwise."""
    if type(x) is DType:
        return x
    if type(x) is str:
        d = _STR_CACHE.get(x)
        if d is not None:
            return d
        try:
            npd = np.dtype(x)
        except Exception:  # NumPy raises TypeError (and others for odd input)
            raise _bad_dtype(x, arg, op) from None
        d = _from_np(npd)
        if d is None:
            raise _bad_dtype(x, arg, op)
        if len(_STR_CACHE) < 1024:  # bounded: keys come from user input
            _STR_CACHE[x] = d
        return d
    if isinstance(x, np.dtype):
        d = _from_np(x)
        if d is None:
            raise _bad_dtype(x, arg, op)
        return d
    if isinstance(x, type):
        d = _PY_TYPES.get(x)  # exact builtins only; np.float64 subclasses float
        if d is not None:
            return d
        if issubclass(x, np.generic):
            try:
                d = _from_np(np.dtype(x))  # abstract types (np.floating) raise
            except Exception:
                d = None
            if d is not None:
                return d
    raise _bad_dtype(x, arg, op)


# ------------------------------------------------------------- promotion

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


def python_scalar_dtype(value) -> DType:
    """Default dtype of a Python scalar value: bool, int64, float32, complex64.
    NumPy scalars keep their own dtype."""
    if isinstance(value, np.generic):
        d = _from_np(value.dtype)
        if d is not None:
            return d
    elif isinstance(value, bool):
        return bool_
    elif isinstance(value, int):
        return int64
    elif isinstance(value, float):
        return float32
    elif isinstance(value, complex):
        return complex64
    raise TypeError(f"python_scalar_dtype(): expected a Python bool, int, float or complex, got {value!r}")


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


def scalar_to_compute(value, compute, op, arg):
    """A Python scalar as a NumPy scalar of the compute dtype, for every backend's kernels.

    Out-of-range ints are an error (as in NumPy 2) rather than a silent wrap; a float that is
    not integral, or complex into a real op, is a TypeError."""
    if compute.kind in "iu":
        if isinstance(value, float):
            if not value.is_integer():  # also False for nan and inf
                raise TypeError(f"{op}(): argument '{arg}' = {value!r} is not an integer, but "
                                f"the op computes in {compute}")
            value = int(value)
        info = iinfo(compute)
        if not info.min <= value <= info.max:
            raise OverflowError(f"{op}(): Python integer {value} is out of bounds for {compute}")
    if compute is bool_ and not isinstance(value, bool):
        if isinstance(value, (float, complex)) or value not in (0, 1):
            raise TypeError(f"{op}(): argument '{arg}' = {value!r} can't be used with bool "
                            f"tensors")
    if compute.kind != "c" and isinstance(value, complex):
        raise TypeError(f"{op}(): argument '{arg}' = {value!r} is complex but the op computes "
                        f"in {compute}")
    with np.errstate(all="ignore"):
        return compute.np_dtype.type(value)
