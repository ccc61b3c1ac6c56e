"""Parser and data model for operator schema strings.

Ops are declared once in YAML with a ``func:`` string written in PyTorch's
native_functions grammar, for example::

    add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)

:func:`parse_schema` turns such a string into a tree of frozen dataclasses
(:class:`FunctionSchema`, :class:`Argument`, :class:`Return`, :class:`Type`,
:class:`AliasInfo`) that the binder, code generator and dispatcher read.
``str()`` of every node gives the canonical spelling, and
``parse_schema(str(s)) == s`` holds for every valid schema.

Columns in error messages are 0-based character offsets into the schema text.

Only the standard library is used.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

__all__ = [
    "SchemaError",
    "Type",
    "AliasInfo",
    "NO_DEFAULT",
    "Argument",
    "Return",
    "FunctionSchema",
    "parse_schema",
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


def _located(problem: str, where: tuple[str, int] | None) -> SchemaError:
    err = SchemaError(problem)
    err._where = where
    return err


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
# PyTorch writes loss reductions as ``int reduction=Mean``; map to at::Reduction.
# ('None' = 0 is left out: it spells the None literal.)
_REDUCTION_NAMES = {"Mean": 1, "Sum": 2}

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
_ESCAPES_IN = {"\\": "\\", '"': '"', "'": "'", "n": "\n", "t": "\t", "r": "\r"}
_NEEDS_ESCAPE_RE = re.compile(r'[\\"\n\t\r]')


def _quote(s: str) -> str:
    return '"' + _NEEDS_ESCAPE_RE.sub(lambda m: _ESCAPES_OUT[m.group()], s) + '"'


# --------------------------------------------------------------------------
# Arguments, returns, schemas
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Argument:
    """One formal argument.

    ``default`` is the parsed Python value (None, bool, int, float, str, or a
    tuple for list literals) or :data:`NO_DEFAULT`. A scalar default for a
    fixed-size list (``int[1] dim=0``) stays a scalar; the binder broadcasts it.
    Float defaults keep the literal's Python type (``float x=1`` gives int 1).
    """

    name: str
    type: Type
    default: Any = NO_DEFAULT
    kwarg_only: bool = False
    alias: AliasInfo | None = None

    def __post_init__(self) -> None:
        if not _is_ident(self.name):
            raise SchemaError(f"argument name {self.name!r} is not an identifier")
        if not isinstance(self.type, Type):
            raise SchemaError(f"argument {self.name!r}: type must be a Type, got {self.type!r}")
        if self.alias is not None and self.type.base != "Tensor":
            raise SchemaError(
                f"argument {self.name!r}: alias annotations are only allowed on Tensor types, not {self.type}"
            )
        d = self.default
        if isinstance(d, (list, tuple)):
            # Tuples keep the node hashable; nan is swapped for the shared
            # math.nan object so parse(str(s)) == s (nan != nan otherwise).
            d = tuple(math.nan if type(v) is float and v != v else v for v in d)
            object.__setattr__(self, "default", d)
        elif type(d) is float and d != d:
            object.__setattr__(self, "default", math.nan)
        problem = _default_problem(self.type, self.default)
        if problem is not None:
            raise SchemaError(f"argument {self.name!r}: {problem}")

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT

    @property
    def is_write(self) -> bool:
        return self.alias is not None and self.alias.is_write

    @property
    def is_out(self) -> bool:
        return self.kwarg_only and self.is_write

    def __str__(self) -> str:
        s = f"{self.type.format(self.alias)} {self.name}"
        if self.has_default:
            s += "=" + _format_default(self.type, self.default)
        return s


@dataclass(frozen=True)
class Return:
    name: str | None
    type: Type
    alias: AliasInfo | None = None

    def __post_init__(self) -> None:
        if self.name is not None and not _is_ident(self.name):
            raise SchemaError(f"return name {self.name!r} is not an identifier")
        if not isinstance(self.type, Type):
            raise SchemaError(f"return type must be a Type, got {self.type!r}")
        if self.alias is not None and self.type.base != "Tensor":
            raise SchemaError(f"alias annotations are only allowed on Tensor types, not {self.type}")

    def __str__(self) -> str:
        s = self.type.format(self.alias)
        return s if self.name is None else f"{s} {self.name}"


@dataclass(frozen=True)
class FunctionSchema:
    name: str
    overload_name: str
    arguments: tuple[Argument, ...]
    returns: tuple[Return, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.arguments, tuple):
            object.__setattr__(self, "arguments", tuple(self.arguments))
        if not isinstance(self.returns, tuple):
            object.__setattr__(self, "returns", tuple(self.returns))
        _validate_schema(self)

    # -- names ---------------------------------------------------------------

    @property
    def full_name(self) -> str:
        return f"{self.name}.{self.overload_name}" if self.overload_name else self.name

    @property
    def is_inplace(self) -> bool:
        # 'add_' is in-place; dunders like '__iand__' and 'foo__' are not.
        n = self.name
        return len(n) > 1 and n.endswith("_") and not n.endswith("__")

    @property
    def base_name(self) -> str:
        return self.name[:-1] if self.is_inplace else self.name

    # -- argument groups -------------------------------------------------------

    @property
    def positional_arguments(self) -> tuple[Argument, ...]:
        return tuple(a for a in self.arguments if not a.kwarg_only)

    @property
    def kwarg_only_arguments(self) -> tuple[Argument, ...]:
        """Every argument after ``*``, out arguments included."""
        return tuple(a for a in self.arguments if a.kwarg_only)

    @property
    def out_arguments(self) -> tuple[Argument, ...]:
        return tuple(a for a in self.arguments if a.is_out)

    @property
    def non_out_arguments(self) -> tuple[Argument, ...]:
        return tuple(a for a in self.arguments if not a.is_out)

    @property
    def is_out(self) -> bool:
        return any(a.is_out for a in self.arguments)

    @property
    def mutates(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.arguments if a.is_write)

    @property
    def signature_kind(self) -> str:
        if self.is_out:
            return "out"
        if self.is_inplace:
            return "inplace"
        return "functional"

    def argument(self, name: str) -> Argument:
        """Look an argument up by name (KeyError if absent)."""
        for a in self.arguments:
            if a.name == name:
                return a
        raise KeyError(name)

    def __str__(self) -> str:
        parts = []
        star = False
        for a in self.arguments:
            if a.kwarg_only and not star:
                parts.append("*")
                star = True
            parts.append(str(a))
        if not self.returns:
            rets = "()"
        elif len(self.returns) == 1 and self.returns[0].name is None:
            rets = str(self.returns[0])
        else:
            rets = "(" + ", ".join(str(r) for r in self.returns) + ")"
        return f"{self.full_name}({', '.join(parts)}) -> {rets}"


def _validate_schema(s: FunctionSchema) -> None:
    """Cross-argument rules; errors carry ('arg'|'ret', index) for the parser."""
    if not _is_ident(s.name):
        raise _located(f"function name {s.name!r} is not an identifier", None)
    if s.overload_name and not _is_ident(s.overload_name):
        raise _located(f"overload name {s.overload_name!r} is not an identifier", None)

    seen: set[str] = set()
    seen_default = False
    seen_kwarg = False
    seen_out = False
    write_sets: dict[str, bool] = {}
    for i, a in enumerate(s.arguments):
        if not isinstance(a, Argument):
            raise _located(f"arguments must be Argument objects, got {a!r}", ("arg", i))
        if a.name in seen:
            raise _located(f"duplicate argument name {a.name!r}", ("arg", i))
        seen.add(a.name)
        if a.kwarg_only:
            seen_kwarg = True
            if a.is_out:
                if a.type.base != "Tensor":
                    raise _located(f"out argument {a.name!r} must be a Tensor, not {a.type}", ("arg", i))
                seen_out = True
            elif seen_out:
                raise _located(
                    f"keyword-only argument {a.name!r} must come before the out arguments", ("arg", i)
                )
        else:
            if seen_kwarg:
                raise _located(f"positional argument {a.name!r} follows keyword-only arguments", ("arg", i))
            if a.has_default:
                seen_default = True
            elif seen_default:
                raise _located(
                    f"non-default argument {a.name!r} follows default argument", ("arg", i)
                )
        if a.name == "out" and not a.is_out:
            if not a.kwarg_only:
                raise _located("out argument 'out' must be keyword-only (after '*')", ("arg", i))
            raise _located("out argument 'out' must have a write alias like Tensor(a!)", ("arg", i))
        if a.alias is not None:
            for name in a.alias.sets:
                write_sets[name] = write_sets.get(name, False) or a.alias.is_write

    rnames: set[str] = set()
    for j, r in enumerate(s.returns):
        if not isinstance(r, Return):
            raise _located(f"returns must be Return objects, got {r!r}", ("ret", j))
        if r.name is not None:
            if r.name in rnames:
                raise _located(f"duplicate return name {r.name!r}", ("ret", j))
            rnames.add(r.name)
        if r.alias is not None:
            for name in r.alias.sets:
                if name not in write_sets:
                    raise _located(
                        f"return alias set {name!r} does not appear on any argument", ("ret", j)
                    )
                if r.alias.is_write and not write_sets[name]:
                    raise _located(
                        f"return alias {name}! is written but no argument writes alias set {name!r}",
                        ("ret", j),
                    )

    if seen_out:
        n_out = sum(1 for a in s.arguments if a.is_out)
        if s.returns and len(s.returns) != n_out:
            raise _located(
                f"out function must return its {n_out} out argument(s) or nothing, "
                f"not {len(s.returns)} value(s)",
                ("ret", 0),
            )
    elif s.is_inplace:
        # Normally Tensor(a!) self; PyTorch's resize_ uses a plain Tensor(a).
        first = s.arguments[0] if s.arguments else None
        if first is None or first.kwarg_only or first.alias is None:
            raise _located(
                f"in-place function {s.name!r} must take an aliased first argument like Tensor(a!) self",
                ("arg", 0) if s.arguments else None,
            )


# --------------------------------------------------------------------------
# Parser
# --------------------------------------------------------------------------
#
# The schema is split into argument chunks with one regex; each chunk is parsed
# by a small hand-written parser whose result is cached by chunk text. Real op
# tables repeat the same arguments ('Tensor self', 'Scalar alpha=1', ...) over
# and over, so most chunks are cache hits and startup parsing stays cheap.


class _ParseError(Exception):
    """Internal: problem at an offset relative to the text being parsed."""

    def __init__(self, problem: str, pos: int):
        self.problem = problem
        self.pos = pos


_WS_RE = re.compile(r"[ \t\r\n]*")
_DIGITS_RE = re.compile(r"[0-9]+")
_NUMBER_RE = re.compile(
    r"[+-]?(?:(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+|(?P<int>[0-9]+))"
)
_SIGNED_WORD_RE = re.compile(r"[+-]?[A-Za-z_][A-Za-z0-9_]*")
# One argument: anything up to a top-level ',' or ')'. Parenthesised alias
# annotations, bracketed lists and quoted strings may contain those characters.
# An unterminated quote swallows the rest so the chunk parser reports it.
_STR_ALT = r'"(?:[^"\\]|\\[\s\S])*"|\'(?:[^\'\\]|\\[\s\S])*\''
_CHUNK_RE = re.compile(
    r"(?:[^,()\[\]\"']|\([^()]*\)|\[(?:[^\[\]\"']|\[[^\[\]]*\]|" + _STR_ALT + r")*\]|" + _STR_ALT + r"|[\"'][\s\S]*)*"
)
_HEADER_RE = re.compile(r"[ \t\r\n]*([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z_][A-Za-z0-9_]*))?[ \t\r\n]*\(")


def _skip_ws(text: str, pos: int) -> int:
    return _WS_RE.match(text, pos).end()


def _parse_type(text: str, pos: int) -> tuple[Type, AliasInfo | None, int]:
    m = _IDENT_RE.match(text, pos)
    if m is None:
        raise _ParseError("expected a type", pos)
    base = m.group()
    if base not in BASE_TYPES:
        raise _ParseError(f"unknown type {base!r}", pos)
    p = m.end()
    alias = None
    if p < len(text) and text[p] == "(":
        if base != "Tensor":
            raise _ParseError(f"alias annotations are only allowed on Tensor types, not {base}", p)
        alias, p = _parse_alias(text, p + 1)
    q_before = q_after = is_list = False
    size = None
    n = len(text)
    while p < n:
        c = text[p]
        if c == "?":
            if (q_after if is_list else q_before):
                raise _ParseError("repeated '?' in type", p)
            if is_list:
                q_after = True
            else:
                q_before = True
            p += 1
        elif c == "[":
            if is_list:
                raise _ParseError("nested list types are not supported", p)
            p += 1
            d = _DIGITS_RE.match(text, p)
            if d is not None:
                size = int(d.group())
                if size < 1:
                    raise _ParseError("list size must be a positive integer", p)
                p = d.end()
            if p >= n or text[p] != "]":
                raise _ParseError("expected ']' to close the list type", p)
            p += 1
            is_list = True
        else:
            break
    if is_list:
        t = Type(base, optional=q_after, is_list=True, list_size=size, elem_optional=q_before)
    else:
        t = Type(base, optional=q_before)
    return t, alias, p


def _parse_alias_set(text: str, pos: int) -> tuple[str, int]:
    m = _ALIAS_SET_RE.match(text, pos)
    if m is None:
        raise _ParseError("expected an alias set name like 'a' or '*'", pos)
    return m.group(), m.end()


def _parse_alias(text: str, pos: int) -> tuple[AliasInfo, int]:
    """Parse after '(' up to and including ')'."""
    p = _skip_ws(text, pos)
    before, p = _parse_alias_set(text, p)
    p = _skip_ws(text, p)
    is_write = False
    if text.startswith("!", p):
        is_write = True
        p = _skip_ws(text, p + 1)
    after = None
    if text.startswith("->", p):
        p = _skip_ws(text, p + 2)
        after, p = _parse_alias_set(text, p)
        p = _skip_ws(text, p)
    if not text.startswith(")", p):
        raise _ParseError("expected ')' to close the alias annotation", p)
    return AliasInfo(before, is_write, after), p + 1


def _parse_string(text: str, pos: int) -> tuple[str, int]:
    quote = text[pos]
    out = []
    p = pos + 1
    n = len(text)
    while p < n:
        c = text[p]
        if c == quote:
            return "".join(out), p + 1
        if c == "\\":
            if p + 1 >= n:
                break
            e = _ESCAPES_IN.get(text[p + 1])
            if e is None:
                raise _ParseError(f"unknown escape '\\{text[p + 1]}' in string literal", p)
            out.append(e)
            p += 2
        else:
            out.append(c)
            p += 1
    raise _ParseError("unterminated string literal", pos)


def _parse_scalar_literal(text: str, pos: int, t: Type) -> tuple[Any, int]:
    """One non-list literal, checked syntactically against the type's base."""
    if pos >= len(text):
        raise _ParseError("expected a default value", pos)
    c = text[pos]
    if c == '"' or c == "'":
        if t.base not in _STRING_BASES:
            raise _ParseError(f"string default does not match type {t}", pos)
        return _parse_string(text, pos)
    m = _NUMBER_RE.match(text, pos)
    if m is not None:
        s = m.group()
        return (int(s) if m.group("int") is not None else float(s)), m.end()
    m = _SIGNED_WORD_RE.match(text, pos)
    if m is None:
        raise _ParseError("expected a default value", pos)
    word = m.group()
    sign = word[0] if word[0] in "+-" else ""
    bare = word[len(sign):]
    if bare in ("inf", "nan"):
        v = float(word)
        return (math.nan if v != v else v), m.end()
    if sign:
        raise _ParseError(f"invalid default value {word!r}", pos)
    if word == "None":
        return None, m.end()
    if word == "True":
        return True, m.end()
    if word == "False":
        return False, m.end()
    names = _ENUM_NAMES.get(t.base)
    if names is not None:
        if word not in names:
            raise _ParseError(f"unknown {t.base} name {word!r}", pos)
        return word, m.end()
    if t.base in ("int", "SymInt") and word in _REDUCTION_NAMES:
        return _REDUCTION_NAMES[word], m.end()
    raise _ParseError(f"default {word!r} does not match type {t}", pos)


def _parse_literal(text: str, pos: int, t: Type) -> tuple[Any, int]:
    if not text.startswith("[", pos):
        return _parse_scalar_literal(text, pos, t)
    items = []
    p = _skip_ws(text, pos + 1)
    if text.startswith("]", p):
        return (), p + 1
    while True:
        if text.startswith("[", p):
            raise _ParseError("nested lists are not supported in defaults", p)
        v, p = _parse_scalar_literal(text, p, t)
        items.append(v)
        p = _skip_ws(text, p)
        if text.startswith(",", p):
            p = _skip_ws(text, p + 1)
        elif text.startswith("]", p):
            return tuple(items), p + 1
        else:
            raise _ParseError("expected ',' or ']' in list default", p)


@lru_cache(maxsize=4096)
def _parse_argument(chunk: str, kwarg_only: bool) -> Argument:
    t, alias, p = _parse_type(chunk, 0)
    q = _skip_ws(chunk, p)
    m = _IDENT_RE.match(chunk, q)
    if m is None or q == p:
        raise _ParseError("expected an argument name after the type", q)
    name = m.group()
    p = _skip_ws(chunk, m.end())
    default: Any = NO_DEFAULT
    default_pos = p
    if chunk.startswith("=", p):
        default_pos = _skip_ws(chunk, p + 1)
        default, p = _parse_literal(chunk, default_pos, t)
        p = _skip_ws(chunk, p)
    if p != len(chunk):
        raise _ParseError("expected '=', ',' or ')'", p)
    try:
        return Argument(name, t, default, kwarg_only, alias)
    except SchemaError as e:
        raise _ParseError(e.problem, default_pos) from None


@lru_cache(maxsize=1024)
def _parse_returns(text: str) -> tuple[tuple[Return, ...], tuple[int, ...]]:
    """Parse everything after '->'; also gives each return's offset."""
    p = _skip_ws(text, 0)
    rets: list[Return] = []
    offsets: list[int] = []
    if text.startswith("(", p):
        p = _skip_ws(text, p + 1)
        if text.startswith(")", p):
            p += 1
        else:
            while True:
                offsets.append(p)
                t, alias, e = _parse_type(text, p)
                q = _skip_ws(text, e)
                name = None
                m = _IDENT_RE.match(text, q)
                if m is not None and q > e:
                    name = m.group()
                    q = _skip_ws(text, m.end())
                rets.append(_make_return(name, t, alias, p))
                if text.startswith(",", q):
                    p = _skip_ws(text, q + 1)
                elif text.startswith(")", q):
                    p = q + 1
                    break
                elif q >= len(text):
                    raise _ParseError("expected ')' to close the returns", q)
                else:
                    raise _ParseError("expected ',' or ')' in returns", q)
    else:
        offsets.append(p)
        t, alias, p = _parse_type(text, p)
        rets.append(_make_return(None, t, alias, offsets[0]))
    q = _skip_ws(text, p)
    if q != len(text):
        if q > p and _IDENT_RE.match(text, q):
            raise _ParseError("a named return must be written in parentheses, like (Tensor name)", q)
        raise _ParseError("unexpected text after the returns", q)
    return tuple(rets), tuple(offsets)


def _make_return(name, t, alias, pos) -> Return:
    try:
        return Return(name, t, alias)
    except SchemaError as e:
        raise _ParseError(e.problem, pos) from None


def _parse(text: str) -> FunctionSchema:
    if not isinstance(text, str):
        raise TypeError(f"schema must be a str, not {type(text).__name__}")
    m = _HEADER_RE.match(text)
    if m is None:
        p = _skip_ws(text, 0)
        n = _IDENT_RE.match(text, p)
        if n is None:
            raise _ParseError("expected a function name", p)
        p = n.end()
        if text.startswith(".", p):
            if _IDENT_RE.match(text, p + 1) is None:
                raise _ParseError("expected an overload name after '.'", p + 1)
            p = _IDENT_RE.match(text, p + 1).end()
        raise _ParseError("expected '('", _skip_ws(text, p))
    name, overload = m.group(1), m.group(2) or ""

    args: list[Argument] = []
    arg_pos: list[int] = []
    kwarg_only = False
    star_pos = -1
    p = _skip_ws(text, m.end())
    n = len(text)
    if text.startswith(")", p):
        p += 1
    else:
        while True:
            if text.startswith("*", p):
                if kwarg_only:
                    raise _ParseError("'*' appears more than once", p)
                kwarg_only = True
                star_pos = p
                p = _skip_ws(text, p + 1)
            else:
                c = _CHUNK_RE.match(text, p)
                e = c.end()
                chunk = text[p:e]
                if not chunk:
                    raise _ParseError("expected an argument", p)
                try:
                    args.append(_parse_argument(chunk.rstrip(" \t\r\n"), kwarg_only))
                except _ParseError as err:
                    raise _ParseError(err.problem, p + err.pos) from None
                arg_pos.append(p)
                p = e
            if text.startswith(",", p):
                p = _skip_ws(text, p + 1)
            elif text.startswith(")", p):
                p += 1
                break
            elif p >= n:
                raise _ParseError("expected ')'", p)
            else:
                raise _ParseError("expected ',' or ')'", p)
    if kwarg_only and (not args or not args[-1].kwarg_only):
        raise _ParseError("'*' must be followed by at least one keyword-only argument", star_pos)

    p = _skip_ws(text, p)
    if not text.startswith("->", p):
        if text.startswith(")", p):
            raise _ParseError("unbalanced ')'", p)
        raise _ParseError("expected '->' and the returns", p)
    ret_start = p + 2
    try:
        returns, ret_offsets = _parse_returns(text[ret_start:])
    except _ParseError as err:
        raise _ParseError(err.problem, ret_start + err.pos) from None

    try:
        return FunctionSchema(name, overload, tuple(args), returns)
    except SchemaError as e:
        where = e._where
        if where is None:
            col = 0
        elif where[0] == "arg":
            col = arg_pos[where[1]] if where[1] < len(arg_pos) else 0
        else:
            col = ret_start + ret_offsets[where[1]] if where[1] < len(ret_offsets) else ret_start
        raise _ParseError(e.problem, col) from None


@lru_cache(maxsize=4096)
def parse_schema(text: str) -> FunctionSchema:
    """Parse a native_functions-style schema string into a FunctionSchema.

    Raises SchemaError naming the problem and its 0-based column.
    """
    try:
        return _parse(text)
    except _ParseError as err:
        raise SchemaError(err.problem, text, err.pos) from None
