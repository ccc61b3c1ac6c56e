"""Reads ops.yaml once at import: defines the operators, registers their kernels, and builds the
public functions and Tensor methods (see the field list at the top of ops.yaml).

The structured kernel of a ``pointwise:`` op is made by the factory the caller hands to
:func:`load` (the package's top level passes ``ops.pointwise.make_pointwise_kernel``), so this
layer never imports the ops above it."""
from __future__ import annotations

import ast
import dataclasses
import importlib
import os

from .. import dtypes as _dt
from ..runtime.import_cache import load_yaml
from . import dispatcher
from .binding import make_function
from .pointwise_helpers import BLOCK_HELPERS as _BLOCK_HELPERS, NAMES as _HELPER_NAMES
from .pointwise_info import DTYPE_CLASSES, PointwiseInfo
from .schema.function import Argument, FunctionSchema, Return
from .schema.parser import parse_schema
from .schema.types import AliasInfo

__all__ = ["load", "POINTWISE", "OpEntry", "YamlError"]

_FIELDS = {"func", "structured", "pointwise", "dtypes", "promote", "output", "bool_args",
           "block_fast", "value_forms", "integer_scalar_min", "kernel", "variants", "aliases",
           "operators", "tags"}
_VARIANTS = {"function", "method", "inplace"}

POINTWISE: dict[str, PointwiseInfo] = {}  # op base name -> info, read by the kernel packages
INTERNAL: dict = {}  # name -> function of the ops ops.yaml declares with no variants


class YamlError(ValueError):
    pass


@dataclasses.dataclass(frozen=True)
class OpEntry:
    schema: FunctionSchema
    variants: frozenset
    aliases: tuple
    operators: tuple
    structured: bool
    pointwise: PointwiseInfo | None
    kernel: dict
    tags: tuple


def _parse_entry(raw, where) -> OpEntry:
    if not isinstance(raw, dict) or "func" not in raw:
        raise YamlError(f"{where}: each entry must be a mapping with a 'func' key, got {raw!r}")
    unknown = set(raw) - _FIELDS
    if unknown:
        raise YamlError(f"{where} ({raw['func'][:40]}...): unknown fields {sorted(unknown)}")
    try:
        schema = parse_schema(raw["func"])
    except ValueError as e:
        raise YamlError(f"{where}: {e}") from None
    where = f"{where} ({schema.full_name})"
    variants = frozenset(filter(None, (v.strip() for v in str(
        raw.get("variants", "function, method")).split(","))))  # ("": an internal op)
    if variants - _VARIANTS:
        raise YamlError(f"{where}: unknown variants {sorted(variants - _VARIANTS)}")
    structured = bool(raw.get("structured", False))
    if structured and not schema.is_out:
        raise YamlError(f"{where}: 'structured' needs the .out schema (with a Tensor(a!) out)")
    if not structured and "kernel" not in raw:
        raise YamlError(f"{where}: needs 'kernel' (or structured + pointwise)")
    info = None
    if "pointwise" in raw:
        if not structured:
            raise YamlError(f"{where}: 'pointwise' needs 'structured: true'")
        kinds = DTYPE_CLASSES.get(raw.get("dtypes", "all"))
        if kinds is None:
            raise YamlError(f"{where}: unknown dtypes class {raw.get('dtypes')!r}; known: "
                            f"{sorted(DTYPE_CLASSES)}")
        if raw.get("output", "same") not in ("same", "bool", "real"):
            raise YamlError(f"{where}: unknown output {raw.get('output')!r}")
        if raw.get("promote") not in (None, "int_to_float"):
            raise YamlError(f"{where}: unknown promote {raw.get('promote')!r}")
        args = [a for a in schema.arguments if not a.is_out]
        tree = _check_expression(str(raw["pointwise"]), where)
        block = raw.get("block_fast")
        # one form, or forms in order (absent or null: none)
        blocks = [] if block is None else block if isinstance(block, list) else [block]
        for form in blocks:
            if not isinstance(form, dict) or set(form) != {"when", "pointwise"}:
                raise YamlError(f"{where}: 'block_fast' needs exactly 'when' and 'pointwise' "
                                f"(each form of a list), got {form!r}")
            for part in ("when", "pointwise"):
                _check_expression(str(form[part]), where, _HELPER_NAMES | _BLOCK_HELPERS,
                                  f"block_fast {part}")
        forms = []
        for form in raw.get("value_forms", ()):
            if not isinstance(form, dict) or set(form) != {"when", "pointwise", "dtypes"}:
                raise YamlError(f"{where}: each of 'value_forms' needs exactly 'when', "
                                f"'pointwise' and 'dtypes', got {form!r}")
            _check_expression(str(form["when"]), where, frozenset(), "value_forms when")
            _check_expression(str(form["pointwise"]), where, _HELPER_NAMES,
                              "value_forms pointwise")
            names = tuple(str(d) for d in form["dtypes"])
            unknown = [d for d in names if d not in _dt._BY_NAME]
            if unknown:
                raise YamlError(f"{where}: value_forms dtypes {unknown} are not dtypes")
            forms.append((str(form["when"]), str(form["pointwise"]), names))
        for arg, low in dict(raw.get("integer_scalar_min", {})).items():
            if arg not in {a.name for a in args} or type(low) is not int:
                raise YamlError(f"{where}: integer_scalar_min needs argument names of the "
                                f"schema and int values, got {arg!r}: {low!r}")
            _dt.INTEGER_SCALAR_MIN[(schema.name, arg)] = low
        info = PointwiseInfo(
            name=schema.name, expr=str(raw["pointwise"]),
            tensor_args=tuple(a.name for a in args if a.type.base == "Tensor"),
            scalar_args=tuple(a.name for a in args if a.type.base == "Scalar"),
            kinds=kinds, int_to_float=raw.get("promote") == "int_to_float",
            output=raw.get("output", "same"), bool_args=tuple(raw.get("bool_args", ())),
            no_half="no_half" in raw.get("tags", ()),
            wide_vectors="wide_vectors" in raw.get("tags", ()),
            gathers=bool({"gathers", "wide_vectors"} & set(raw.get("tags", ()))),
            block_forms=tuple((str(f["when"]), str(f["pointwise"])) for f in blocks),
            value_forms=tuple(forms), compares=_compares(tree.body, args))
    elif structured and "kernel" not in raw:
        raise YamlError(f"{where}: structured op needs 'pointwise' or 'kernel'")
    return OpEntry(schema, variants, tuple(raw.get("aliases", ())),
                   tuple(raw.get("operators", ())), structured, info,
                   dict(raw.get("kernel", {})), tuple(raw.get("tags", ())))


def _check_expression(expr: str, where: str, names=_HELPER_NAMES, what="pointwise"):
    """A pointwise expression parses as Python and calls only the shared helper vocabulary
    (dispatch/pointwise_helpers.py), which both backends implement (block forms: also the
    CPU's block helpers). Returns the parsed expression."""
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as e:
        raise YamlError(f"{where}: '{what}' expression {expr!r} does not parse: {e.msg}") \
            from None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", None)
            if name not in names:
                raise YamlError(f"{where}: '{what}' expression {expr!r} calls "
                                f"{ast.unparse(node.func)!r}, which is not a scalar helper "
                                f"(dispatch/pointwise_helpers.py lists them)")
    return tree


def _compares(node, args) -> bool:
    """Whether a pointwise expression (``node``, its parsed body) is one comparison of the op's
    two tensor arguments (``self < other``, ``self == other``...)."""
    names = [a.name for a in args if a.type.base == "Tensor"]
    return (isinstance(node, ast.Compare) and len(node.ops) == 1 and len(names) == 2
            and isinstance(node.ops[0], (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq))
            and sorted(str(getattr(n, "id", "")) for n in (node.left, node.comparators[0]))
            == sorted(names))


def _functional_schema(out_schema: FunctionSchema) -> FunctionSchema:
    args = tuple(a for a in out_schema.arguments if not a.is_out)
    rets = tuple(Return(None, r.type, None) for r in out_schema.returns)
    return FunctionSchema(out_schema.name, "", args, rets)


def _inplace_schema(out_schema: FunctionSchema) -> FunctionSchema:
    args = [a for a in out_schema.arguments if not a.is_out]
    write = AliasInfo("a", True, None)
    args[0] = Argument(args[0].name, args[0].type, args[0].default, args[0].kwarg_only, write)
    rets = tuple(Return(None, r.type, write) for r in out_schema.returns)
    return FunctionSchema(out_schema.name + "_", "", tuple(args), rets)


def _resolve(path: str):
    module, _, attr = path.rpartition(".")
    return getattr(importlib.import_module(module), attr)


def _structured_variants(kernel):
    """The functional and in-place calling conventions of one structured kernel (out last)."""
    def functional(*args):
        return kernel(*args, None)

    fast = getattr(kernel, "functional", None)  # pointwise ops' dense fast path
    if fast is not None:
        functional = fast

    def inplace(*args):
        return kernel(*args, args[0])

    name = getattr(kernel, "__name__", "kernel")
    if fast is None:
        functional.__qualname__ = functional.__name__ = f"{name}[out=None]"
    inplace.__qualname__ = inplace.__name__ = f"{name}[out=self]"
    fast_inplace = getattr(kernel, "inplace", None)  # pointwise ops' dense in-place path
    return functional, (fast_inplace if fast_inplace is not None else inplace)


def load(make_pointwise_kernel, path=None):
    """Registers every op; returns (functions, methods) name -> callable for the namespace.
    ``make_pointwise_kernel(info, out_schema)`` returns the structured kernel of a pointwise op
    (``kernel(*args, out)``, optionally with a ``functional`` dense fast path)."""
    path = path or os.path.join(os.path.dirname(os.path.dirname(__file__)), "ops.yaml")
    raw = load_yaml(path)  # (parsed once per content: import_cache.py)
    functions, methods = {}, {}
    for i, item in enumerate(raw):
        entry = _parse_entry(item, f"{os.path.basename(path)} entry {i}")
        _register(entry, functions, methods, make_pointwise_kernel)
    return functions, methods


def _register(entry: OpEntry, functions, methods, make_pointwise_kernel):
    schema = entry.schema
    name = schema.name
    if entry.structured:
        out_op = dispatcher.define(schema)
        func_op = dispatcher.define(_functional_schema(schema))
        if entry.pointwise is not None:
            POINTWISE[name] = entry.pointwise
            kernel = make_pointwise_kernel(entry.pointwise, schema)
        else:
            kernel = _resolve(entry.kernel["CompositeExplicit"])
        functional, inplace = _structured_variants(kernel)
        # (pointwise ops' dense out= path, when the kernel has one)
        dispatcher.impl(out_op.name, "CompositeExplicit", getattr(kernel, "with_out", None)
                        or kernel)
        dispatcher.impl(func_op.name, "CompositeExplicit", functional)
        allow_scalar = entry.pointwise is not None
        fn = make_function(name, func_op, out_op, allow_scalar=allow_scalar)
        if "inplace" in entry.variants:
            inplace_op = dispatcher.define(_inplace_schema(schema))
            dispatcher.impl(inplace_op.name, "CompositeExplicit", inplace)
            inplace_fn = make_function(name + "_", inplace_op, allow_scalar=allow_scalar)
            for public in (name,) + entry.aliases:
                methods[public + "_"] = inplace_fn
    else:
        op = dispatcher.define(schema)
        for key, target in entry.kernel.items():
            dispatcher.impl(op.name, key, _resolve(target))
        fn = make_function(name, op, allow_scalar="scalar_operands" in entry.tags,
                           requires_grad="requires_grad" in entry.tags)
    if not entry.variants:
        INTERNAL[name] = fn  # (the internal op namespace's only: dispatch/namespace.py)
    if "function" in entry.variants:
        for public in (name,) + entry.aliases:
            functions[public] = fn
    if "method" in entry.variants or "inplace" in entry.variants:
        method = _varargs_method(fn) if "varargs_method" in entry.tags else fn
        for public in (name,) + entry.aliases:
            methods[public] = method
    for dunder in entry.operators:
        methods[dunder] = _operator(dunder, fn, methods.get(name + "_"))


def _varargs_method(fn):
    """The method for a (self, int[] sizes, *, ...) op that also takes the sizes as separate
    ints: x.reshape(2, 3), x.reshape((2, 3)) and x.reshape(6) all work."""
    def method(self, *sizes, **kwargs):
        if not sizes:  # the sizes by keyword, or missing: the function says which
            return fn(self, **kwargs)
        return fn(self, sizes[0] if len(sizes) == 1 else sizes, **kwargs)
    method.__name__ = method.__qualname__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


def _operator(dunder, fn, inplace_fn):
    if dunder.startswith("__r") and dunder not in ("__rshift__",):
        def reflected(self, other):
            return fn(other, self)
        reflected.__name__ = dunder
        return reflected
    if dunder.startswith("__i") and dunder not in ("__invert__",):
        if inplace_fn is None:
            raise YamlError(f"{dunder} needs the op's 'inplace' variant")
        return inplace_fn
    return fn
