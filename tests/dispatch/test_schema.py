"""Tests for tensorlib.dispatch.schema (schema-string parser and data model)."""

import copy
import math
import pickle
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tensorlib.dispatch import schema as S
from tensorlib.dispatch.schema import (
    NO_DEFAULT,
    AliasInfo,
    Argument,
    FunctionSchema,
    Return,
    SchemaError,
    Type,
    parse_schema,
)

EXAMPLES = [
    "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor",
    "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
    "transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
    "split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
    "full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
    "arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
    "clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
    "where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
    "cat(Tensor[] tensors, int dim=0) -> Tensor",
    'unique(Tensor self, bool sorted=True, str reduce="mean", float eps=1e-05, int[] dims=[0, 1]) -> Tensor',
    "foo(Tensor? weight=None, Generator? generator=None, bool[3] mask=[True, False, True], float x=-inf) -> ()",
]

TENSOR = Type("Tensor")


def _uncached(text):
    return parse_schema.__wrapped__(text)


# --------------------------------------------------------------------------
# The spec examples
# --------------------------------------------------------------------------


@pytest.mark.parametrize("text", EXAMPLES)
def test_examples_round_trip(text):
    s = parse_schema(text)
    assert str(s) == text
    assert _uncached(str(s)) == s
    assert hash(_uncached(text)) == hash(s)


def test_add_out():
    s = parse_schema(EXAMPLES[0])
    assert (s.name, s.overload_name, s.full_name, s.base_name) == ("add", "out", "add.out", "add")
    assert [a.name for a in s.arguments] == ["self", "other", "alpha", "out"]
    self_, other, alpha, out = s.arguments
    assert self_.type == Type("Tensor") and not self_.kwarg_only and self_.alias is None
    assert alpha.type == Type("Scalar") and alpha.kwarg_only and alpha.default == 1
    assert type(alpha.default) is int and alpha.has_default
    assert out.alias == AliasInfo("a", is_write=True) and out.kwarg_only and out.is_out
    assert not out.has_default and out.default is NO_DEFAULT
    assert s.returns == (Return(None, TENSOR, AliasInfo("a", True)),)
    assert s.is_out and not s.is_inplace and s.signature_kind == "out"
    assert s.out_arguments == (out,)
    assert s.non_out_arguments == (self_, other, alpha)
    assert s.positional_arguments == (self_, other)
    assert s.kwarg_only_arguments == (alpha, out)
    assert s.mutates == ("out",)


def test_add_tensor_functional():
    s = parse_schema(EXAMPLES[1])
    assert s.full_name == "add.Tensor" and s.signature_kind == "functional"
    assert not s.is_out and not s.is_inplace and s.mutates == ()
    assert s.out_arguments == () and len(s.non_out_arguments) == 3


def test_add_inplace():
    s = parse_schema(EXAMPLES[2])
    assert s.name == "add_" and s.base_name == "add" and s.full_name == "add_.Tensor"
    assert s.is_inplace and not s.is_out and s.signature_kind == "inplace"
    assert s.mutates == ("self",)
    assert s.arguments[0].alias == AliasInfo("a", True) and not s.arguments[0].is_out
    assert str(s.returns[0]) == "Tensor(a!)"


def test_sum_dim_intlist():
    s = parse_schema(EXAMPLES[3])
    dim, keepdim, dtype = s.arguments[1:]
    assert dim.type == Type("int", optional=True, is_list=True, list_size=1)
    assert str(dim.type) == "int[1]?" and dim.default is NO_DEFAULT
    assert keepdim.type == Type("bool") and keepdim.default is False
    assert dtype.type == Type("ScalarType", optional=True) and dtype.default is None
    assert dtype.kwarg_only and dtype.has_default


def test_var_correction():
    s = parse_schema(EXAMPLES[4])
    dim, corr, keepdim = s.arguments[1:]
    assert dim.default is None and not dim.kwarg_only
    assert corr.type == Type("Scalar", optional=True) and corr.kwarg_only
    assert keepdim.kwarg_only and keepdim.default is False


def test_max_dim_named_returns():
    s = parse_schema(EXAMPLES[5])
    assert [(r.name, str(r.type)) for r in s.returns] == [("values", "Tensor"), ("indices", "Tensor")]


def test_transpose_view():
    s = parse_schema(EXAMPLES[6])
    assert s.arguments[0].alias == AliasInfo("a") and not s.arguments[0].is_write
    assert s.returns[0].alias == AliasInfo("a")
    assert s.mutates == () and s.signature_kind == "functional"


def test_split_alias_wildcard():
    s = parse_schema(EXAMPLES[7])
    self_, size, dim = s.arguments
    assert self_.alias == AliasInfo("a", False, "*") and str(self_.alias) == "a -> *"
    assert size.type.base == "SymInt" and dim.default == 0
    r = s.returns[0]
    assert r.type == Type("Tensor", is_list=True) and r.alias == AliasInfo("a")
    assert str(r) == "Tensor(a)[]"


def test_full_and_arange():
    s = parse_schema(EXAMPLES[8])
    assert s.arguments[0].type == Type("SymInt", is_list=True)
    assert s.arguments[3].type == Type("Device", optional=True) and s.arguments[3].default is None
    s = parse_schema(EXAMPLES[9])
    assert [a.name for a in s.positional_arguments] == ["start", "end", "step"]
    assert s.arguments[2].default == 1
    assert [a.name for a in s.kwarg_only_arguments] == ["dtype", "device"]


def test_clamp_where_cat():
    s = parse_schema(EXAMPLES[10])
    assert all(a.type == Type("Scalar", optional=True) and a.default is None for a in s.arguments[1:])
    s = parse_schema(EXAMPLES[11])
    assert [a.name for a in s.arguments] == ["condition", "self", "other"]
    assert s.overload_name == "self"
    s = parse_schema(EXAMPLES[12])
    assert s.arguments[0].type == Type("Tensor", is_list=True) and s.overload_name == ""
    assert s.full_name == "cat"


def test_unique_literals():
    s = parse_schema(EXAMPLES[13])
    d = {a.name: a.default for a in s.arguments}
    assert d["sorted"] is True
    assert d["reduce"] == "mean"
    assert d["eps"] == 1e-05 and type(d["eps"]) is float
    assert d["dims"] == (0, 1) and type(d["dims"]) is tuple


def test_foo_literals_and_empty_returns():
    s = parse_schema(EXAMPLES[14])
    w, g, mask, x = s.arguments
    assert w.type == Type("Tensor", optional=True) and w.default is None
    assert g.type == Type("Generator", optional=True)
    assert mask.type == Type("bool", is_list=True, list_size=3)
    assert mask.default == (True, False, True)
    assert x.default == -math.inf
    assert s.returns == ()


# --------------------------------------------------------------------------
# Types, aliases, literals
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, fields",
    [
        ("Tensor", dict(base="Tensor")),
        ("Tensor?", dict(base="Tensor", optional=True)),
        ("Tensor[]", dict(base="Tensor", is_list=True)),
        ("Tensor?[]", dict(base="Tensor", is_list=True, elem_optional=True)),
        ("int[]?", dict(base="int", is_list=True, optional=True)),
        ("int[2]", dict(base="int", is_list=True, list_size=2)),
        ("SymInt[1]?", dict(base="SymInt", is_list=True, list_size=1, optional=True)),
        ("Tensor?[]?", dict(base="Tensor", is_list=True, elem_optional=True, optional=True)),
        ("MemoryFormat?", dict(base="MemoryFormat", optional=True)),
    ],
)
def test_type_spellings(text, fields):
    s = parse_schema(f"f({text} x) -> ()")
    t = s.arguments[0].type
    assert t == Type(**fields)
    assert str(t) == text


def test_type_helpers():
    t = Type("Tensor", is_list=True, elem_optional=True)
    assert t.element == Type("Tensor", optional=True) and t.is_tensor_like
    assert Type("int").element == Type("int")
    assert Type("Tensor").format(AliasInfo("a", True)) == "Tensor(a!)"
    assert t.format(AliasInfo("b")) == "Tensor(b)?[]"


def test_alias_forms():
    s = parse_schema("f(Tensor(a! -> a|b) self, Tensor( b ) other) -> Tensor(a|b)")
    assert s.arguments[0].alias == AliasInfo("a", True, "a|b")
    assert s.arguments[1].alias == AliasInfo("b")
    assert s.returns[0].alias.sets == ("a", "b")
    assert str(s) == "f(Tensor(a! -> a|b) self, Tensor(b) other) -> Tensor(a|b)"


def test_whitespace_is_tolerated_and_normalised():
    s = parse_schema("  add.out ( Tensor self ,Tensor other,*,Scalar alpha = 1 , Tensor(a!) out )->Tensor(a!) ")
    assert s == parse_schema(EXAMPLES[0])
    assert str(s) == EXAMPLES[0]


@pytest.mark.parametrize(
    "decl, value",
    [
        ("int x=-3", -3),
        ("float x=1", 1),  # int literal is fine for a float
        ("float x=2.5", 2.5),
        ("float x=inf", math.inf),
        ("float x=1e+16", 1e16),
        ("Scalar x=1", 1),
        ("Scalar x=1.0", 1.0),
        ("Scalar x=True", True),
        ("Tensor? x=None", None),
        ("ScalarType? x=None", None),
        ("ScalarType x=float", "float"),
        ("Layout x=strided", "strided"),
        ("MemoryFormat? x=contiguous_format", "contiguous_format"),
        ("int reduction=Mean", 1),
        ("str x='it'", "it"),
        (r'str x="a\"b\\c\n"', 'a"b\\c\n'),
        ('str x="a, (b) [c]"', "a, (b) [c]"),
        ('Device x="cpu"', "cpu"),
        ("int[2] stride=1", 1),  # scalar stays scalar; the binder broadcasts
        ("int[1] stride=[]", ()),
        ("Tensor?[] x=[None]", (None,)),
        ("float[] x=[1, 2.5, -inf]", (1, 2.5, -math.inf)),
        ('str[] x=["a]", "b"]', ("a]", "b")),
        ("ScalarType[] x=[long, half]", ("long", "half")),
    ],
)
def test_default_literals(decl, value):
    s = parse_schema(f"f({decl}) -> ()")
    d = s.arguments[0].default
    assert d == value and type(d) is type(value)
    assert _uncached(str(s)) == s


def test_nan_default_round_trips():
    s = parse_schema("f(float x=nan, float[] y=[nan]) -> ()")
    assert math.isnan(s.arguments[0].default)
    assert str(s) == "f(float x=nan, float[] y=[nan]) -> ()"
    assert _uncached(str(s)) == s


def test_returns_forms():
    assert parse_schema("f() -> ()").returns == ()
    assert parse_schema("f() -> (Tensor)").returns == (Return(None, TENSOR),)
    assert str(parse_schema("f() -> (Tensor)")) == "f() -> Tensor"
    assert parse_schema("f() -> Tensor[]").returns[0].type == Type("Tensor", is_list=True)
    s = parse_schema("f() -> (Tensor a, Tensor b)")
    assert [r.name for r in s.returns] == ["a", "b"]
    s = parse_schema("f() -> (Tensor, Tensor, float, int)")
    assert [str(r) for r in s.returns] == ["Tensor", "Tensor", "float", "int"]
    assert str(parse_schema("f() -> (Tensor out)")) == "f() -> (Tensor out)"


def test_multi_out():
    s = parse_schema(
        "max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, Tensor(b!) max_values)"
        " -> (Tensor(a!) values, Tensor(b!) indices)"
    )
    assert [a.name for a in s.out_arguments] == ["max", "max_values"]
    assert s.mutates == ("max", "max_values") and s.signature_kind == "out"
    s = parse_schema("_foreach_add.out(Tensor[] self, Scalar scalar, *, Tensor(a!)[] out) -> ()")
    assert s.is_out and s.out_arguments[0].type == Type("Tensor", is_list=True)


def test_inplace_and_dunder_names():
    s = parse_schema("__and__.Tensor(Tensor self, Tensor other) -> Tensor")
    assert not s.is_inplace and s.base_name == "__and__"
    s = parse_schema("__iand__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)")
    assert not s.is_inplace and s.base_name == "__iand__" and s.mutates == ("self",)
    s = parse_schema("_foreach_zero_(Tensor(a!)[] self) -> ()")
    assert s.is_inplace and s.base_name == "_foreach_zero"
    # PyTorch's resize_ only declares a view alias on self.
    assert parse_schema("resize_(Tensor(a) self, SymInt[] size) -> Tensor(a)").is_inplace


def test_mutable_non_inplace_is_functional():
    s = parse_schema("_amp_update(Tensor(a!) self, Tensor(b!) other) -> ()")
    assert s.mutates == ("self", "other") and s.signature_kind == "functional"


def test_argument_lookup():
    s = parse_schema(EXAMPLES[0])
    assert s.argument("alpha").default == 1
    with pytest.raises(KeyError):
        s.argument("nope")


def test_no_default_sentinel():
    assert repr(NO_DEFAULT) == "NO_DEFAULT" and not NO_DEFAULT
    assert type(NO_DEFAULT)() is NO_DEFAULT
    assert copy.deepcopy(NO_DEFAULT) is NO_DEFAULT
    assert pickle.loads(pickle.dumps(NO_DEFAULT)) is NO_DEFAULT


def test_nodes_are_frozen_hashable_picklable():
    s = parse_schema(EXAMPLES[13])
    with pytest.raises(AttributeError):
        s.name = "x"
    assert {s: 1}[parse_schema(EXAMPLES[13])] == 1
    assert pickle.loads(pickle.dumps(s)) == s


def test_hand_built_schema_matches_parsed():
    s = FunctionSchema(
        "add",
        "out",
        [
            Argument("self", TENSOR),
            Argument("other", TENSOR),
            Argument("alpha", Type("Scalar"), 1, kwarg_only=True),
            Argument("out", TENSOR, kwarg_only=True, alias=AliasInfo("a", True)),
        ],
        [Return(None, TENSOR, AliasInfo("a", True))],
    )
    assert s == parse_schema(EXAMPLES[0]) and str(s) == EXAMPLES[0]
    assert Argument("d", Type("int", is_list=True), [0, 1]).default == (0, 1)


def test_parse_is_cached():
    # Speed is a benchmark matter, not a test: only the caching behaviour is asserted here.
    assert parse_schema(EXAMPLES[0]) is parse_schema(EXAMPLES[0])


# --------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------


def test_error_message_format():
    with pytest.raises(SchemaError) as info:
        parse_schema("add(Tensor self")
    assert str(info.value) == "invalid schema 'add(Tensor self' : expected ')' at column 15"
    assert info.value.column == 15 and info.value.problem == "expected ')'"
    assert isinstance(info.value, ValueError)
    e = pickle.loads(pickle.dumps(info.value))
    assert str(e) == str(info.value)


ERRORS = [
    # structure / balance
    ("add(Tensor self", r"expected '\)' at column 15"),
    ("add(Tensor self))", r"unbalanced '\)' at column 16"),
    ("add(Tensor self) -> (Tensor", r"expected '\)' to close the returns"),
    ("add(Tensor self)", r"expected '->'"),
    ("add Tensor self) -> Tensor", r"expected '\(' at column 4"),
    ("add(Tensor self Tensor other) -> Tensor", r"expected '=', ',' or '\)' at column 16"),
    ("add(Tensor self,) -> Tensor", r"expected an argument at column 16"),
    ("add(Tensor self] -> Tensor", r"expected ',' or '\)' at column 15"),
    # names
    ("3add(Tensor self) -> Tensor", r"expected a function name at column 0"),
    ("add.4x(Tensor self) -> Tensor", r"expected an overload name"),
    ("add(Tensor 3x) -> Tensor", r"expected an argument name"),
    ("add(Tensorself) -> Tensor", r"unknown type 'Tensorself'"),
    ("add(Tensor a, Tensor a) -> Tensor", r"duplicate argument name 'a' at column 14"),
    ("f() -> (Tensor a, Tensor a)", r"duplicate return name 'a'"),
    # ordering and '*'
    ("f(int a=1, int b) -> ()", r"non-default argument 'b' follows default argument"),
    ("f(*, int a, *, int b) -> ()", r"'\*' appears more than once"),
    ("f(int a, *) -> ()", r"'\*' must be followed by at least one keyword-only argument"),
    # types
    ("f(Foo x) -> ()", r"unknown type 'Foo' at column 2"),
    ("f(int?? x) -> ()", r"repeated '\?'"),
    ("f(int[][] x) -> ()", r"nested list types"),
    ("f(int[0] x) -> ()", r"list size must be a positive integer"),
    ("f(int[x] x) -> ()", r"expected '\]'"),
    ("f(int(a) x) -> ()", r"alias annotations are only allowed on Tensor"),
    ("f(Tensor(a x) -> ()", r"expected '\)' to close the alias annotation"),
    ("f(Tensor(!) x) -> ()", r"expected an alias set name"),
    # out arguments
    ("f(Tensor self, Tensor(a!) out) -> Tensor(a!)", r"out argument 'out' must be keyword-only"),
    ("f(Tensor self, *, Tensor out) -> Tensor", r"out argument 'out' must have a write alias"),
    ("f(Tensor self, *, Tensor(a!) out, int x) -> Tensor(a!)", r"'x' must come before the out arguments"),
    ("f(*, Tensor(a!) a, Tensor(b!) b) -> Tensor(a!)", r"must return its 2 out argument\(s\) or nothing"),
    # returns
    ("f(Tensor self) -> Tensor(a)", r"return alias set 'a' does not appear on any argument"),
    ("f(Tensor(a) self) -> Tensor(a!)", r"return alias a! is written"),
    ("f(Tensor self) -> Tensor x", r"named return must be written in parentheses"),
    ("f(Tensor self) -> Tensor Tensor", r"named return must be written in parentheses"),
    ("f(Tensor self) -> Tensor)", r"unexpected text after the returns"),
    ("f(Tensor self) -> (Tensor x=1)", r"expected ',' or '\)' in returns"),
    ("f(Tensor self) -> Foo", r"unknown type 'Foo'"),
    ("f(Tensor self) -> ", r"expected a type"),
    # in-place
    ("add_(Tensor self, Tensor other) -> Tensor", r"in-place function 'add_' must take an aliased first argument"),
    # defaults that do not match the type
    ("f(bool x=3) -> ()", r"default 3 does not match type bool at column 9"),
    ("f(int x=1.5) -> ()", r"default 1\.5 does not match type int"),
    ("f(Tensor x=1) -> ()", r"default 1 does not match type Tensor"),
    ("f(int x=True) -> ()", r"default True does not match type int"),
    ("f(Scalar x=\"a\") -> ()", r"string default does not match type Scalar"),
    ("f(int x=None) -> ()", r"default None requires an optional type"),
    ("f(Tensor?[] x=None) -> ()", r"default None requires an optional type"),
    ("f(int[] x=0) -> ()", r"scalar default 0 for list type int\[\] needs a fixed size"),
    ("f(int x=[1]) -> ()", r"list default \[1\] for non-list type int"),
    ("f(bool[3] m=[True, 1]) -> ()", r"does not match type bool\[3\]"),
    ("f(int[] x=[None]) -> ()", r"contains None but int\[\] elements are not optional"),
    ("f(int[] x=[1, [2]]) -> ()", r"nested lists are not supported"),
    ("f(int[] x=[1 2]) -> ()", r"expected ',' or '\]' in list default"),
    ("f(str x=abc) -> ()", r"default 'abc' does not match type str"),
    ("f(ScalarType x=foo) -> ()", r"unknown ScalarType name 'foo'"),
    ("f(str x=\"abc) -> ()", r"unterminated string literal at column 8"),
    ("f(str x=\"a\\q\") -> ()", r"unknown escape"),
    ("f(int x=) -> ()", r"expected a default value"),
    ("f(int x=-foo) -> ()", r"invalid default value '-foo'"),
]


@pytest.mark.parametrize("text, pattern", ERRORS)
def test_errors(text, pattern):
    with pytest.raises(SchemaError, match=pattern) as info:
        parse_schema(text)
    msg = str(info.value)
    assert msg.startswith(f"invalid schema {text!r} : ")
    assert info.value.schema == text


def test_errors_are_not_cached_as_results():
    for _ in range(2):
        with pytest.raises(SchemaError):
            parse_schema("f(bool x=3) -> ()")


@pytest.mark.parametrize(
    "build, pattern",
    [
        (lambda: Type("Foo"), r"unknown type 'Foo'"),
        (lambda: Type("int", list_size=2), r"list_size given for a non-list type"),
        (lambda: Type("int", elem_optional=True), r"elem_optional given for a non-list type"),
        (lambda: AliasInfo("a b"), r"invalid alias set"),
        (lambda: Argument("1x", TENSOR), r"not an identifier"),
        (lambda: Argument("x", Type("bool"), 3), r"does not match type bool"),
        (lambda: Argument("x", Type("int"), alias=AliasInfo("a")), r"only allowed on Tensor"),
        (lambda: Return("1x", TENSOR), r"not an identifier"),
        (
            lambda: FunctionSchema("f", "", (Argument("a", TENSOR), Argument("a", TENSOR)), ()),
            r"duplicate argument name 'a'",
        ),
        (
            lambda: FunctionSchema("f", "", (Argument("a", TENSOR, kwarg_only=True), Argument("b", TENSOR)), ()),
            r"positional argument 'b' follows keyword-only",
        ),
        (lambda: FunctionSchema("f-g", "", (), ()), r"function name 'f-g' is not an identifier"),
        (lambda: FunctionSchema("f", "o.x", (), ()), r"overload name 'o.x' is not an identifier"),
        (
            lambda: FunctionSchema("f", "", (Argument("o", Type("int"), kwarg_only=True,),
                                             Argument("p", TENSOR, kwarg_only=True, alias=AliasInfo("a", True))),
                                   ()),
            None,
        ),
    ],
)
def test_hand_built_errors(build, pattern):
    if pattern is None:
        build()  # valid control case
        return
    with pytest.raises(SchemaError, match=pattern) as info:
        build()
    assert str(info.value).startswith("invalid schema: ")


# --------------------------------------------------------------------------
# Round trip on generated schemas
# --------------------------------------------------------------------------

_idents = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(
    lambda s: s not in ("out",) and not s.endswith("_")
)

_ints = st.integers(min_value=-(2**70), max_value=2**70)
_floats = st.floats(allow_nan=True, allow_infinity=True)
_text = st.text(max_size=8)
_SCALARS = {
    "int": _ints,
    "SymInt": _ints,
    "float": st.one_of(_floats, _ints),
    "bool": st.booleans(),
    "Scalar": st.one_of(_ints, _floats, st.booleans()),
    "str": _text,
    "Dimname": _text,
    "Device": _text,
    "ScalarType": st.sampled_from(sorted(S.SCALAR_TYPE_NAMES)),
    "Layout": st.sampled_from(sorted(S.LAYOUT_NAMES)),
    "MemoryFormat": st.sampled_from(sorted(S.MEMORY_FORMAT_NAMES)),
}
_BASES = sorted(S.BASE_TYPES)


@st.composite
def _types(draw, bases=_BASES):
    base = draw(st.sampled_from(bases))
    shape = draw(st.sampled_from(["plain", "opt", "list", "sized", "optlist", "listopt", "both"]))
    if shape == "plain":
        return Type(base)
    if shape == "opt":
        return Type(base, optional=True)
    size = draw(st.one_of(st.none(), st.integers(1, 4))) if shape != "sized" else draw(st.integers(1, 4))
    return Type(
        base,
        optional=shape in ("optlist", "both"),
        is_list=True,
        list_size=size,
        elem_optional=shape in ("listopt", "both"),
    )


def _defaults(t):
    """Strategy for a valid default of type t (never NO_DEFAULT)."""
    options = []
    if t.optional:
        options.append(st.none())
    elem = _SCALARS.get(t.base)
    if t.is_list:
        if elem is not None:
            item = st.one_of(st.none(), elem) if t.elem_optional else elem
        else:
            item = st.none() if t.elem_optional else None
        options.append(st.lists(item, max_size=4).map(tuple) if item is not None else st.just(()))
        if t.list_size is not None and elem is not None:
            options.append(elem)
    elif elem is not None:
        options.append(elem)
    return st.one_of(options) if options else None


@st.composite
def _arguments(draw, name, kwarg_only, need_default, alias_pool):
    while True:
        t = draw(_types())
        strat = _defaults(t)
        if need_default is None or (need_default and strat is not None) or need_default is False:
            break
    if need_default is False:
        default = NO_DEFAULT
    elif need_default:
        default = draw(strat)
    else:
        default = draw(st.one_of(st.just(NO_DEFAULT), strat)) if strat is not None else NO_DEFAULT
    alias = None
    if t.base == "Tensor" and draw(st.booleans()):
        # Only read aliases here; writes on kwarg-only args would make them outs.
        before = draw(st.sampled_from(["a", "b", "c"]))
        after = draw(st.sampled_from([None, "*"]))
        alias = AliasInfo(before, False, after)
        alias_pool.append(before)
    return Argument(name, t, default, kwarg_only, alias)


@st.composite
def _schemas(draw):
    n_pos = draw(st.integers(0, 4))
    n_kw = draw(st.integers(0, 3))
    n_out = draw(st.integers(0, 2))
    inplace = n_out == 0 and draw(st.booleans())
    names = draw(st.lists(_idents, min_size=n_pos + n_kw + 1, max_size=n_pos + n_kw + 1, unique=True))
    alias_pool: list[str] = []
    args = []
    if inplace:
        args.append(Argument("self", TENSOR, alias=AliasInfo("w", True)))
        names = [n for n in names if n != "self"]
    first_default = draw(st.integers(0, n_pos))
    for i in range(n_pos):
        args.append(draw(_arguments(names[i], False, i >= first_default, alias_pool)))
    for i in range(n_pos, n_pos + n_kw):
        args.append(draw(_arguments(names[i], True, None, alias_pool)))
    out_sets = ["o", "p"][:n_out]
    for k, s in enumerate(out_sets):
        t = Type("Tensor", is_list=draw(st.booleans()))
        args.append(Argument("out" if n_out == 1 else f"out{k}", t, kwarg_only=True, alias=AliasInfo(s, True)))

    returns = []
    if n_out:
        if draw(st.booleans()):
            named = draw(st.booleans())
            for k, a in enumerate(args[-n_out:]):
                returns.append(Return(f"r{k}" if named else None, a.type, a.alias))
    else:
        n_ret = draw(st.integers(0, 3))
        named = draw(st.booleans())
        for k in range(n_ret):
            t = draw(_types())
            alias = None
            if t.base == "Tensor":
                pool = alias_pool + (["w!"] if inplace else [])
                pick = draw(st.sampled_from([None] + pool))
                if pick == "w!":
                    alias = AliasInfo("w", True)
                elif pick is not None:
                    alias = AliasInfo(pick)
            returns.append(Return(f"r{k}" if named else None, t, alias))

    fname = draw(_idents) + ("_" if inplace else "")
    overload = draw(st.one_of(st.just(""), _idents))
    return FunctionSchema(fname, overload, tuple(args), tuple(returns))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_schemas())
def test_round_trip_generated(s):
    text = str(s)
    parsed = _uncached(text)
    assert parsed == s
    assert str(parsed) == text
    assert parse_schema(text) == s  # cached path (argument chunks are shared)
    assert parsed.signature_kind == s.signature_kind
    assert parsed.mutates == s.mutates


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="Tensor(a!)[]?*,= ->intfloatbool1.0\"'_xyz", max_size=40))
def test_fuzz_only_schema_errors(text):
    # Arbitrary junk must either parse or raise SchemaError, never anything else.
    try:
        s = _uncached(text)
    except SchemaError as e:
        assert re.search(r"at column \d+$", str(e))
        assert 0 <= e.column <= len(text)
    else:
        assert _uncached(str(s)) == s
