"""The schema-string parser: :func:`parse_schema` reads PyTorch's native_functions grammar,
for example::

    add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)

into a :class:`~.function.FunctionSchema`. Errors are :class:`~.types.SchemaError` naming the
problem and its 0-based column in the text.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any

from .function import Argument, FunctionSchema, Return
from .types import (
    _ALIAS_SET_RE,
    _ENUM_NAMES,
    _IDENT_RE,
    _STRING_BASES,
    BASE_TYPES,
    NO_DEFAULT,
    AliasInfo,
    SchemaError,
    Type,
)

__all__ = ["parse_schema"]

# The schema is split into argument chunks with one regex; each chunk is parsed
# by a small hand-written parser whose result is cached by chunk text. Real op
# tables repeat the same arguments ('Tensor self', 'Scalar alpha=1', ...) over
# and over, so most chunks are cache hits and startup parsing stays cheap.


class _ParseError(Exception):
    """Internal: problem at an offset relative to the text being parsed."""

    def __init__(self, problem: str, pos: int):
        self.problem = problem
        self.pos = pos


# PyTorch writes loss reductions as ``int reduction=Mean``; map to at::Reduction.
# ('None' = 0 is left out: it spells the None literal.)
_REDUCTION_NAMES = {"Mean": 1, "Sum": 2}
_ESCAPES_IN = {"\\": "\\", '"': '"', "'": "'", "n": "\n", "t": "\t", "r": "\r"}
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
