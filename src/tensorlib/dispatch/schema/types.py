"""The schema type grammar: the error type, the vocabulary of base types and enum names, the
``NO_DEFAULT`` sentinel, :class:`Type` and :class:`AliasInfo`, and which default values a type
takes and how they are spelled.

These are the leaves of a schema; :mod:`.function` builds arguments and whole schemas from them
and :mod:`.parser` reads them from text. The underscored names are shared with those two modules
only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = [
    "SchemaError",
    "Type",
    "AliasInfo",
    "NO_DEFAULT",
    "BASE_TYPES",
    "SCALAR_TYPE_NAMES",
    "LAYOUT_NAMES",
    "MEMORY_FORMAT_NAMES",
]


# --------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------


class SchemaError(ValueError):
    """A schema string (or a hand-built schema node) is invalid.

    Attributes: ``problem`` (what is wrong), ``schema`` (the text, if known)
    and ``column`` (0-based offset into ``schema``, if known).
    """

    def __init__(self, problem: str, schema: str | None = None, column: int | None = None):
        self.problem = problem
        self.schema = schema
        self.column = column
        # Where inside a schema a node-level error came from; the parser uses
        # it to turn a dataclass validation error into a column.
        self._where: tuple[str, int] | None = None
        if schema is None:
            msg = f"invalid schema: {problem}"
        else:
            msg = f"invalid schema {schema!r} : {problem}"
            if column is not None:
                msg += f" at column {column}"
        super().__init__(msg)

    def __reduce__(self):
        # Default exception pickling would call cls(message) and lose fields.
        return (SchemaError, (self.problem, self.schema, self.column))


# --------------------------------------------------------------------------
# Vocabulary
# --------------------------------------------------------------------------

BASE_TYPES = frozenset(
    {
        "Tensor",
        "Scalar",
        "int",
        "SymInt",
        "float",
        "bool",
        "str",
        "ScalarType",
        "Device",
        "Layout",
        "MemoryFormat",
        "Generator",
        "Dimname",
        "Storage",
    }
)

# Bare-identifier defaults accepted for enum-like types (``ScalarType dtype=float``).
SCALAR_TYPE_NAMES = frozenset(
    {
        "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
        "float32", "float64", "complex64", "complex128", "byte", "char", "short",
        "int", "long", "half", "float", "double", "cfloat", "cdouble",
        "uint16", "uint32", "uint64",
    }
)
LAYOUT_NAMES = frozenset(
    {"strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc", "jagged"}
)
MEMORY_FORMAT_NAMES = frozenset(
    {"contiguous_format", "channels_last", "channels_last_3d", "preserve_format"}
)
_ENUM_NAMES = {
    "ScalarType": SCALAR_TYPE_NAMES,
    "Layout": LAYOUT_NAMES,
    "MemoryFormat": MEMORY_FORMAT_NAMES,
}
# Types whose defaults are written as quoted string literals.
_STRING_BASES = frozenset({"str", "Dimname", "Device"})

_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ALIAS_SET_RE = re.compile(r"\*|[A-Za-z_][A-Za-z0-9_]*(?:\|[A-Za-z_][A-Za-z0-9_]*)*")


def _is_ident(s: Any) -> bool:
    return isinstance(s, str) and _IDENT_RE.fullmatch(s) is not None


# --------------------------------------------------------------------------
# NO_DEFAULT sentinel
# --------------------------------------------------------------------------


class _NoDefaultType:
    """Marks an argument without a default (None is a real default)."""

    __slots__ = ()
    _instance: _NoDefaultType | None = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NO_DEFAULT"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self):
        # Pickle/copy by name so the singleton stays a singleton.
        return "NO_DEFAULT"


NO_DEFAULT = _NoDefaultType()


# --------------------------------------------------------------------------
# Types and alias annotations
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Type:
    """A schema type such as ``Tensor``, ``int[1]?`` or ``Tensor?[]``.

    ``optional`` applies to the whole type (``int[]?``: the list may be None);
    ``elem_optional`` applies to list elements (``Tensor?[]``).
    """

    base: str
    optional: bool = False
    is_list: bool = False
    list_size: int | None = None
    elem_optional: bool = False

    def __post_init__(self) -> None:
        if self.base not in BASE_TYPES:
            raise SchemaError(f"unknown type {self.base!r}")
        if self.list_size is not None:
            if not self.is_list:
                raise SchemaError("list_size given for a non-list type")
            if type(self.list_size) is not int or self.list_size < 1:
                raise SchemaError(f"list size must be a positive integer, got {self.list_size!r}")
        if self.elem_optional and not self.is_list:
            raise SchemaError("elem_optional given for a non-list type")

    def format(self, alias: AliasInfo | None = None) -> str:
        """Spell the type, with an alias annotation placed after the base."""
        parts = [self.base]
        if alias is not None:
            parts.append(f"({alias})")
        if self.elem_optional:
            parts.append("?")
        if self.is_list:
            parts.append("[]" if self.list_size is None else f"[{self.list_size}]")
        if self.optional:
            parts.append("?")
        return "".join(parts)

    def __str__(self) -> str:
        return self.format()

    @property
    def is_tensor_like(self) -> bool:
        return self.base == "Tensor"

    @property
    def element(self) -> Type:
        """The element type of a list (the type itself for non-lists)."""
        if not self.is_list:
            return self
        return Type(self.base, optional=self.elem_optional)


@dataclass(frozen=True)
class AliasInfo:
    """Alias annotation: ``a`` (view), ``a!`` (written), ``a -> *`` (views into a set)."""

    before: str
    is_write: bool = False
    after: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.before, str) or not _ALIAS_SET_RE.fullmatch(self.before):
            raise SchemaError(f"invalid alias set {self.before!r}")
        if self.after is not None and (
            not isinstance(self.after, str) or not _ALIAS_SET_RE.fullmatch(self.after)
        ):
            raise SchemaError(f"invalid alias set {self.after!r}")

    def __str__(self) -> str:
        s = self.before + ("!" if self.is_write else "")
        if self.after is not None:
            s += f" -> {self.after}"
        return s

    @property
    def sets(self) -> tuple[str, ...]:
        """Names in the 'before' set, without the wildcard."""
        return tuple(s for s in self.before.split("|") if s != "*")


# --------------------------------------------------------------------------
# Default values
# --------------------------------------------------------------------------


def _default_problem(t: Type, value: Any) -> str | None:
    """Why ``value`` is not a valid default for ``t`` (None if it is)."""
    if value is NO_DEFAULT:
        return None
    if value is None:
        return None if t.optional else f"default None requires an optional type, not {t}"
    if t.is_list:
        if isinstance(value, tuple):
            for v in value:
                if v is None:
                    if not t.elem_optional:
                        return f"list default {_format_default(t, value)} contains None but {t} elements are not optional"
                elif not _scalar_ok(t.base, v):
                    return f"default {_format_default(t, value)} does not match type {t}"
            return None
        # A scalar default for a fixed-size list is broadcast (``int[2] stride=1``).
        if t.list_size is None:
            return f"scalar default {_format_scalar(t.base, value)} for list type {t} needs a fixed size like {t.base}[2]"
        if not _scalar_ok(t.base, value):
            return f"default {_format_scalar(t.base, value)} does not match type {t}"
        return None
    if isinstance(value, tuple):
        return f"list default {_format_default(t, value)} for non-list type {t}"
    if not _scalar_ok(t.base, value):
        return f"default {_format_scalar(t.base, value)} does not match type {t}"
    return None


def _scalar_ok(base: str, v: Any) -> bool:
    tv = type(v)
    if base in ("int", "SymInt"):
        return tv is int
    if base == "float":
        return tv is int or tv is float  # an int literal is a fine float default
    if base == "bool":
        return tv is bool
    if base == "Scalar":
        return tv is int or tv is float or tv is bool
    if base in _STRING_BASES:
        return tv is str
    names = _ENUM_NAMES.get(base)
    if names is not None:
        return tv is str and v in names
    return False  # Tensor, Generator, Storage only take None


def _format_scalar(base: str, v: Any) -> str:
    if v is None:
        return "None"
    if v is True:
        return "True"
    if v is False:
        return "False"
    if isinstance(v, str):
        if base in _ENUM_NAMES:
            return v  # enum names are written bare
        return _quote(v)
    if isinstance(v, float):
        return repr(v)  # shortest round-tripping spelling; inf/-inf/nan parse back
    return repr(v)


def _format_default(t: Type, value: Any) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(_format_scalar(t.base, v) for v in value) + "]"
    return _format_scalar(t.base, value)


_ESCAPES_OUT = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}
_NEEDS_ESCAPE_RE = re.compile(r'[\\"\n\t\r]')


def _quote(s: str) -> str:
    return '"' + _NEEDS_ESCAPE_RE.sub(lambda m: _ESCAPES_OUT[m.group()], s) + '"'

