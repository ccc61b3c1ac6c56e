"""Arguments, returns and whole function schemas (:class:`Argument`, :class:`Return`,
:class:`FunctionSchema`), with the cross-argument rules a schema must keep.

Every node checks itself when built, so a hand-built schema is held to the same rules as a
parsed one; a rule broken across arguments names the argument or return it found it at, which
the parser turns into a column.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .types import (
    NO_DEFAULT,
    AliasInfo,
    SchemaError,
    Type,
    _default_problem,
    _format_default,
    _is_ident,
)

__all__ = ["Argument", "Return", "FunctionSchema"]


def _located(problem: str, where: tuple[str, int] | None) -> SchemaError:
    err = SchemaError(problem)
    err._where = where
    return err


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
