"""The dtype objects: the ``DType`` singletons, the default dtypes and the lookup from names,
NumPy dtypes and Python types (``to_dtype``). The bottom of the dtype family; ``dtypes.py`` is
its public face.

Only NumPy is imported here so that the dtype machinery stays usable (and
cheap to import) without the compiled backends.
"""

from __future__ import annotations

import numpy as np

_SEALED = False  # set once the module-level singletons exist


class DType:
    """A tensorlib data type. There is exactly one object per dtype, so
    compare with ``is`` / ``==`` (identity)."""

    __module__ = "tensorlib.dtypes"  # its public home: pickles and reprs name it there

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
