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

Three modules, each readable alone: :mod:`.types` (the error, the vocabulary,
``NO_DEFAULT``, :class:`Type`, :class:`AliasInfo`, default values),
:mod:`.function` (:class:`Argument`, :class:`Return`, :class:`FunctionSchema`
and the cross-argument rules) and :mod:`.parser` (:func:`parse_schema`). This
package re-exports their public names. Only the standard library is used.
"""

from .function import Argument, FunctionSchema, Return
from .parser import parse_schema
from .types import (
    BASE_TYPES,
    LAYOUT_NAMES,
    MEMORY_FORMAT_NAMES,
    NO_DEFAULT,
    SCALAR_TYPE_NAMES,
    AliasInfo,
    SchemaError,
    Type,
)

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
