"""derivatives.yaml: each op's backward formulas, compiled once at import into OpGrad specs.

An entry is keyed by the op's name (``exp``, ``add``; one entry covers the functional, ``out=``
and in-place overloads) and gives, per differentiable Tensor argument, a Python expression in
tensorlib ops and the helpers of ``formulas/``. Names an expression may use: the schema's
arguments, ``grad`` (the gradient of the single output), ``grads`` (one per output, for ops with
several), ``result`` / ``results`` (the op's outputs). An argument used only as ``x.shape``,
``x.dtype``, ``x.ndim`` or ``x.device`` is saved as metadata, not as a tensor, so backward keeps
no memory alive that it does not read.

Other fields: ``not_differentiable: true`` (integer/bool outputs, sampling, creation: nothing
flows back), ``output_differentiability: [true, false]`` (which outputs carry gradients).
"""
from __future__ import annotations

import ast
import builtins
import dataclasses
import os

from ..runtime.import_cache import compile_source, load_yaml

__all__ = ["OpGrad", "load_derivatives", "DerivativesError"]

# attributes of a saved argument that need no tensor: kernel.py's _TensorMeta carries them
_META_ATTRS = {"shape", "dtype", "ndim", "device", "strides", "offset", "storage_size"}
_SPECIAL = {"grad", "grads", "result", "results"}
_FIELDS = {"name", "not_differentiable", "output_differentiability"}


class DerivativesError(ValueError):
    pass


@dataclasses.dataclass
class OpGrad:
    """One op's backward: formulas per argument and what the forward must save."""
    name: str
    node_name: str
    not_differentiable: bool
    formulas: dict            # argument name -> expression source
    output_differentiability: tuple | None
    saved_args: dict = dataclasses.field(default_factory=dict)   # arg -> "tensor" | "meta" | "value"
    # tensor arg -> indices of the formulas reading it: saved only when one of them will run
    saved_for: dict = dataclasses.field(default_factory=dict)
    saves_result: bool = False
    # formula -> (names it reads, {name: read only as metadata}), parsed when the YAML loads:
    # Python 3.11's ast objects are not safe to build in two threads at once (a later first
    # recorded call may run beside Triton's interpreter parsing a kernel on a stream thread)
    uses: dict = dataclasses.field(default_factory=dict)
    # compiled: fn(grads, saved, needs, results) -> tuple per formula argument; ``saved`` holds
    # the saved_args' values in saved_args order (None where not saved)
    fn: object = None
    exprs: tuple = ()          # the formulas as compiled (after the in-place rewrites)


def _camel(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in name.split("_") if p)


def _uses(expr: str, where: str):
    """Names read by ``expr``; for each, whether every use is a metadata attribute."""
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as e:
        raise DerivativesError(f"{where}: formula {expr!r} is not a Python expression: {e}") \
            from None
    meta_only, names = {}, set()
    parents = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
            p = parents.get(node)
            is_meta = isinstance(p, ast.Attribute) and p.value is node and p.attr in _META_ATTRS
            meta_only[node.id] = meta_only.get(node.id, True) and is_meta
    return names, meta_only


def load_derivatives(path=None) -> dict[str, OpGrad]:
    path = path or os.path.join(os.path.dirname(os.path.dirname(__file__)), "derivatives.yaml")
    raw = load_yaml(path)  # (parsed once per content: import_cache.py)
    specs = {}
    for i, item in enumerate(raw):
        where = f"{os.path.basename(path)} entry {i}"
        if not isinstance(item, dict) or "name" not in item:
            raise DerivativesError(f"{where}: each entry needs a 'name', got {item!r}")
        name = item["name"]
        if name in specs:
            raise DerivativesError(f"{where}: '{name}' is declared twice")
        formulas = {k: str(v) for k, v in item.items() if k not in _FIELDS}
        nd = bool(item.get("not_differentiable", False))
        if nd and formulas:
            raise DerivativesError(f"{where} ({name}): not_differentiable with formulas "
                                   f"{sorted(formulas)}")
        if not nd and not formulas:
            raise DerivativesError(f"{where} ({name}): needs formulas or not_differentiable")
        od = item.get("output_differentiability")
        spec = specs[name] = OpGrad(name, _camel(name) + "Backward", nd, formulas,
                                    tuple(bool(x) for x in od) if od is not None else None)
        spec.uses = {arg: _uses(expr, f"{where} ({name})") for arg, expr in formulas.items()}
    return specs


class _FreshProducts(ast.NodeTransformer):
    """``grad * E`` / ``grad * conj(E)`` where E is a call of a pointwise op or arithmetic (a
    tensor the formula has just made, never a saved or shared one) becomes
    ``mul_into_temp(grad, E)``, which may write the product into E's memory (formulas/common.py says
    when): a gradient of an n-element tensor then takes n elements, not 2n."""

    def __init__(self, fresh_calls, donate_calls, donatable):
        self.fresh_calls = fresh_calls
        self.donate_calls = donate_calls
        self.donatable = donatable

    def _fresh(self, node):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "conj" and len(node.args) == 1:
                return self._fresh(node.args[0])
            return node.func.id in self.fresh_calls or node.func.id == "unary_into_saved"
        return isinstance(node, ast.BinOp)

    def visit_Call(self, node):
        # f(x) of a saved tensor argument read nowhere else: unary_into_saved may compute it
        # in x's own memory (formulas/common.py says when)
        self.generic_visit(node)
        if (isinstance(node.func, ast.Name) and node.func.id in self.donate_calls
                and len(node.args) == 1 and not node.keywords
                and isinstance(node.args[0], ast.Name) and node.args[0].id in self.donatable):
            return ast.Call(ast.Name("unary_into_saved", ast.Load()),
                            [ast.Name(node.func.id, ast.Load()), node.args[0]], [])
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Mult):
            for g, e in ((node.left, node.right), (node.right, node.left)):
                if isinstance(g, ast.Name) and g.id == "grad" and self._fresh(e):
                    return ast.Call(ast.Name("mul_into_temp", ast.Load()), [g, e], [])
        return node


def _with_fresh_products(expr: str, fresh_calls, donate_calls, donatable) -> str:
    tree = _FreshProducts(fresh_calls, donate_calls, donatable).visit(
        ast.parse(expr, mode="eval"))
    return ast.unparse(ast.fix_missing_locations(tree))


def _read_once(spec: OpGrad, tensor_args) -> set:
    """Tensor arguments that appear exactly once in all of the op's formulas together."""
    counts = {}
    for expr in spec.formulas.values():
        for node in ast.walk(ast.parse(expr, mode="eval")):
            if isinstance(node, ast.Name) and node.id in tensor_args:
                counts[node.id] = counts.get(node.id, 0) + 1
    return {name for name, n in counts.items() if n == 1}


def compile_spec(spec: OpGrad, arg_names, tensor_args, namespace, fresh_calls=(),
                 donate_calls=()) -> None:
    """Checks ``spec``'s formulas against the op's schema and compiles them into ``spec.fn``.
    ``fresh_calls``: names of ops whose result is always a new tensor (pointwise ops);
    ``donate_calls``: those of them whose result has their input's dtype."""
    where = f"derivatives.yaml ({spec.name})"
    for arg in spec.formulas:
        if arg not in tensor_args:
            raise DerivativesError(f"{where}: '{arg}' is not a Tensor argument of the op "
                                   f"(its Tensor arguments: {sorted(tensor_args)})")
    used, meta, readers = set(), {}, {}
    for i, arg in enumerate(spec.formulas):
        names, m = spec.uses[arg]
        used |= names
        for n in names:
            readers.setdefault(n, []).append(i)
        for k, v in m.items():
            meta[k] = meta.get(k, True) and v
    for n in sorted(used):  # saved_args in name order: the nodes' saved tuples follow it
        if n in arg_names:
            if n in tensor_args:
                spec.saved_args[n] = "meta" if meta[n] else "tensor"
                spec.saved_for[n] = tuple(readers[n])
            else:
                spec.saved_args[n] = "value"
        elif n in ("result", "results"):
            spec.saves_result = True
        elif n not in _SPECIAL and n not in namespace and not hasattr(builtins, n):
            raise DerivativesError(f"{where}: formula uses unknown name '{n}'")
    donatable = _read_once(spec, tensor_args) if "unary_into_saved" in namespace else set()
    lines = ["def backward(grads, saved, needs, results):", "    grad = grads[0]"]
    for i, n in enumerate(spec.saved_args):
        lines.append(f"    {n} = saved[{i}]")  # None: only read by formulas not needed
    if spec.saves_result:
        lines.append("    result = results[0]")
    outs, exprs = [], []
    for i, (arg, expr) in enumerate(spec.formulas.items()):
        if "mul_into_temp" in namespace:
            expr = _with_fresh_products(expr, fresh_calls, donate_calls, donatable)
        exprs.append(expr)
        lines.append(f"    g{i} = ({expr}) if needs[{i}] else None")
        outs.append(f"g{i}")
    spec.exprs = tuple(exprs)
    lines.append(f"    return ({', '.join(outs)},)")
    src = "\n".join(lines) + "\n"
    scope = dict(namespace)
    exec(compile_source(src, f"<derivatives {spec.name}>"), scope)
    spec.fn = scope["backward"]
