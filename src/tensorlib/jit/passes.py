"""Graph passes, each a function over a Graph (in place; returns what it changed):
dead-code elimination, common-subexpression elimination, constant propagation, peephole
rewrites, shape/dtype propagation, and the alias analysis that keeps them correct around views
and in-place ops.

Alias analysis is deliberately simple and conservative: every tensor Value belongs to an alias
set (union-find); a view (schema return ``Tensor(a)``) joins its input's set, an in-place or
``out=`` op (``Tensor(a!)``) joins and marks the set *written*, lists join their elements, and
all graph inputs share one set (a caller may pass one tensor twice). A pass never removes,
merges, reorders or fuses a node that writes, nor one that reads a written set; DCE keeps
writers and random ops.
"""
from __future__ import annotations

from .. import dtypes as _dt
from ..dispatch import dispatcher
from ..shape import broadcast_shapes, normalize_axes
from .interpreter import op_entry
from .ir import Graph, Node, TensorType

__all__ = ["AliasDb", "dce", "cse", "constant_propagation", "peephole", "propagate_shapes",
           "pointwise_info", "run_standard_passes"]


def _schema(node: Node):
    name = node.op_name
    return dispatcher.get_op(name).schema if name is not None else None


def _is_random(node: Node) -> bool:
    s = _schema(node)
    return s is not None and any(a.type.base == "Generator" for a in s.arguments)


def pointwise_info(node: Node):
    """The PointwiseInfo of a node running a pointwise op in its functional form, else None."""
    from ..dispatch.registration import POINTWISE
    name = node.op_name
    if name is None or "." in name:
        return None
    return POINTWISE.get(name)


class AliasDb:
    """Alias sets of a graph's tensor Values (see the module docstring)."""

    def __init__(self, graph: Graph):
        self.parent = {}
        self.written = set()
        self.writers = set()  # nodes that write to some argument
        ins = [v for v in graph.inputs]
        for v in ins[1:]:
            self._union(ins[0], v)
        for n in graph.nodes:
            self._node(n)

    def _find(self, v):
        p = self.parent.get(v, v)
        while p is not v:
            nxt = self.parent.get(p, p)
            self.parent[v] = nxt
            v, p = p, nxt
        return v

    def _union(self, a, b):
        ra, rb = self._find(a), self._find(b)
        if ra is not rb:
            self.parent[ra] = rb
            if ra in self.written:
                self.written.add(rb)

    def _node(self, n):
        if n.kind == "prim::ListConstruct":
            for i in n.inputs:
                self._union(n.outputs[0], i)
            return
        if n.kind == "prim::ListUnpack":
            for o in n.outputs:
                self._union(o, n.inputs[0])
            return
        if n.kind == "prim::FusionGroup":
            return  # fusion groups read and make fresh tensors only
        s = _schema(n)
        if s is None:
            return
        sets = {}
        for arg, v in zip(s.arguments, n.inputs):
            if arg.alias is None:
                continue
            for name in arg.alias.sets:
                sets.setdefault(name, []).append(v)
            if arg.alias.is_write:
                self.writers.add(n)
                self.written.add(self._find(v))
        for ret, o in zip(s.returns, n.outputs):
            if ret.alias is None:
                continue
            for name in ret.alias.sets:
                for v in sets.get(name, ()):
                    self._union(o, v)
            if ret.alias.is_write:
                self.written.add(self._find(o))

    def may_alias(self, a, b) -> bool:
        return self._find(a) is self._find(b)

    def is_written(self, v) -> bool:
        return self._find(v) in self.written

    def writes(self, n) -> bool:
        return n in self.writers

    def pure(self, n) -> bool:
        """True when ``n`` neither writes nor reads/makes a value whose alias set is written
        anywhere in the graph, and is not random: it may be removed, merged or moved."""
        if n in self.writers or _is_random(n):
            return False
        return not any(self.is_written(v) for v in n.inputs + n.outputs)


# ---- dead-code elimination -------------------------------------------------------------------
def dce(graph: Graph, aliasdb: AliasDb | None = None) -> int:
    """Removes nodes whose outputs are unused (not writers, not random ops). Returns the count."""
    db = aliasdb or AliasDb(graph)
    live_out = set(graph.outputs)
    removed = 0
    for n in reversed(list(graph.nodes)):
        if db.writes(n) or _is_random(n):
            continue
        if any(o.uses or o in live_out for o in n.outputs):
            continue
        n.destroy()
        removed += 1
    return removed


# ---- common-subexpression elimination --------------------------------------------------------
def _const_key(v):
    if type(v).__name__ == "Tensor":
        return ("tensor", id(v))
    if isinstance(v, list):
        return ("list", tuple(_const_key(x) for x in v))
    if isinstance(v, tuple):
        return ("tuple", tuple(_const_key(x) for x in v))
    return (type(v), v)


def cse(graph: Graph, aliasdb: AliasDb | None = None) -> int:
    """Merges nodes of one kind with the same inputs (and equal constants of the same type);
    skips anything ``AliasDb.pure`` refuses. Returns how many nodes it removed."""
    db = aliasdb or AliasDb(graph)
    seen = {}
    removed = 0
    for n in list(graph.nodes):
        if n.kind == "prim::FusionGroup" or not db.pure(n):
            continue
        if n.kind == "prim::Constant":
            key = (n.kind, _const_key(n.attrs["value"]))
        else:
            key = (n.kind, tuple(id(i) for i in n.inputs))
        other = seen.get(key)
        if other is None:
            seen[key] = n
            continue
        for a, b in zip(n.outputs, other.outputs):
            a.replace_all_uses_with(b)
        n.destroy()
        removed += 1
    return removed


# ---- constant propagation --------------------------------------------------------------------
def constant_propagation(graph: Graph, aliasdb: AliasDb | None = None) -> int:
    """Runs pure nodes whose inputs are all constants at compile time and replaces their outputs
    with constants. Skips outputs that escape (a graph output: the caller would get one shared
    tensor on every call) and anything AliasDb refuses. Returns how many nodes it folded."""
    db = aliasdb or AliasDb(graph)
    folded = 0
    outs = set(graph.outputs)
    for n in list(graph.nodes):
        if n.kind in ("prim::Constant", "prim::FusionGroup") or not n.inputs:
            continue
        if not all(i.node is not None and i.node.kind == "prim::Constant" for i in n.inputs):
            continue
        if not db.pure(n) or any(o in outs for o in n.outputs):
            continue
        vals = [i.node.attrs["value"] for i in n.inputs]
        if n.kind == "prim::ListConstruct":
            results = [list(vals)]
        elif n.kind == "prim::ListUnpack":
            results = list(vals[0])
        else:
            r = op_entry(n.op_name)(*vals)
            results = list(r) if len(n.outputs) > 1 else [r]
        for o, r in zip(n.outputs, results):
            o.replace_all_uses_with(graph.constant(r, before=n))
        n.destroy()
        folded += 1
    return folded


# ---- peephole --------------------------------------------------------------------------------
def _const(v, default=None):
    if v.node is not None and v.node.kind == "prim::Constant":
        return v.node.attrs["value"]
    return default


def _same_type(a, b) -> bool:
    return (isinstance(a.type, TensorType) and isinstance(b.type, TensorType)
            and a.type.dtype is not None and a.type.dtype is b.type.dtype
            and a.type.shape is not None and a.type.shape == b.type.shape
            and a.type.device == b.type.device)


def _is_exact(v, number) -> bool:
    c = _const(v)
    return type(c) in (int, float) and c == number and not isinstance(c, bool)


def peephole(graph: Graph, aliasdb: AliasDb | None = None) -> int:
    """Local rewrites that give the same values bit for bit: ``x * 1``, ``x / 1``, ``x - 0``
    (and ``x + 0`` for integer x: for floats it would turn -0.0 into +0.0 as eager does), a
    transpose of a transpose over the same dims, and casts/contiguous to what x already is.
    Only where the result has x's type, nothing in its alias set is written, and it is not a
    graph output (eager would return a new tensor). Returns the number of rewrites."""
    db = aliasdb or AliasDb(graph)
    outs = set(graph.outputs)
    changed = 0
    for n in list(graph.nodes):
        if not n.outputs or n.kind == "prim::Constant" or not db.pure(n):
            continue
        y = n.outputs[0]
        if y in outs or not n.inputs:
            continue
        x = n.inputs[0]
        name = n.op_name
        repl = None
        if name in ("multiply", "divide") and _is_exact(n.inputs[1], 1):
            repl = x
        elif name == "subtract" and _is_exact(n.inputs[1], 0) and _is_exact(n.inputs[2], 1):
            repl = x
        elif (name == "add" and _is_exact(n.inputs[1], 0) and isinstance(x.type, TensorType)
              and x.type.dtype is not None and x.type.dtype.kind in "iu"):
            repl = x
        elif name == "multiply" and _is_exact(x, 1):
            repl = n.inputs[1]
        elif name == "transpose" and x.node is not None and x.node.kind == "tl::transpose":
            d = {_const(n.inputs[1]), _const(n.inputs[2])}
            if d == {_const(x.node.inputs[1]), _const(x.node.inputs[2])} and None not in d:
                repl = x.node.inputs[0]
        elif name == "astype" and isinstance(x.type, TensorType):
            if _const(n.inputs[1]) is x.type.dtype and _const(n.inputs[3]) is None:
                repl = x
        elif name == "contiguous" and isinstance(x.type, TensorType) and x.type.contiguous:
            repl = x
        if repl is not None and repl.is_tensor and _same_type(repl, y) and not db.is_written(repl):
            y.replace_all_uses_with(repl)
            changed += 1
    if changed:
        dce(graph)
    return changed


# ---- shape and dtype propagation -------------------------------------------------------------
_REDUCTIONS = {"sum", "prod", "mean", "max", "min", "any", "all", "var", "std"}


def _pointwise_type(info, node):
    s = _schema(node)
    args = {a.name: v for a, v in zip(s.arguments, node.inputs)}
    shapes, promoted, device = [], [], None
    for name in info.tensor_args:
        v = args[name]
        if isinstance(v.type, TensorType):
            t = v.type
            if t.shape is None or t.dtype is None:
                return None
            shapes.append(t.shape)
            device = device or t.device
            if name not in info.bool_args:
                promoted.append(t.dtype)
        else:
            c = _const(v)
            shapes.append(())
            if name not in info.bool_args:
                promoted.append(c)
    if any(None in sh for sh in shapes):
        return None
    shape = broadcast_shapes(*shapes, op=info.name)
    common = _dt.result_type(*promoted) if len(promoted) > 1 else (
        promoted[0] if isinstance(promoted[0], _dt.DType) else _dt.result_type(promoted[0]))
    if info.int_to_float and common.kind in "biu":
        common = _dt.default_float()
    out = {"bool": _dt.bool_, "real": _dt.real_for(common) if common.kind == "c" else common,
           "same": common}[info.output]
    return TensorType(out, shape, None, True, device)


def _reduction_type(node):
    x = node.inputs[0].type
    if not isinstance(x, TensorType) or x.shape is None or x.dtype is None:
        return None
    axis = _const(node.inputs[1])
    keep = _const(node.inputs[2])
    ndim = len(x.shape)
    axes = tuple(range(ndim)) if axis is None else normalize_axes(axis, ndim, node.op_name)
    shape = tuple((1 if keep else None) if d in axes else n for d, n in enumerate(x.shape))
    shape = tuple(n for n in shape if n is not None)
    # The dtype rule is the op's own: ask it with a one-element input of the same dtype.
    from ..allocation import empty
    probe = empty((1,) * ndim, dtype=x.dtype, device=x.device or "cpu")
    probe.fill_(0)
    vals = [probe] + [_const(v) for v in node.inputs[1:]]
    dtype = op_entry(node.op_name)(*vals)._dtype
    return TensorType(dtype, shape, None, True, x.device)


def propagate_shapes(graph: Graph, input_types=None) -> int:
    """Sets each tensor Value's type from its inputs' types: pointwise ops by the
    TensorIterator's rules (broadcast shapes, result_type with Python scalars weak,
    int_to_float, bool/real outputs), reductions by their axis rule (the dtype rule asked of
    the op itself on a one-element input), views and in-place ops by aliasing; other ops keep
    the type the trace recorded, with the shape forgotten when an input's shape changed.
    ``input_types``: new types for the graph inputs. Returns how many values changed type."""
    if input_types is not None:
        for v, t in zip(graph.inputs, input_types):
            v.type = t
    changed = 0
    for n in graph.nodes:
        if not n.kind.startswith("tl::"):
            continue
        name = n.op_name
        info = pointwise_info(n)
        base = name.split(".")[0]
        new = None
        if info is not None:
            new = _pointwise_type(info, n)
        elif name.endswith("_") and n.inputs and isinstance(n.inputs[0].type, TensorType):
            new = n.inputs[0].type  # in-place: the result is self
        elif base in _REDUCTIONS and "." not in name:
            new = _reduction_type(n)
        elif n.outputs and isinstance(n.outputs[0].type, TensorType):
            old = n.outputs[0].type
            if all(not isinstance(i.type, TensorType) or i.type.shape is not None
                   for i in n.inputs):
                new = old
            else:
                new = old.with_(shape=None, strides=None, contiguous=None)
        if new is not None and n.outputs and isinstance(n.outputs[0].type, TensorType):
            old = n.outputs[0].type
            if new.strides is None and old.strides is not None and new.shape == old.shape:
                new = new.with_(strides=old.strides, contiguous=old.contiguous)
            if old != new:
                n.outputs[0].type = new
                changed += 1
    return changed


def run_standard_passes(graph: Graph) -> Graph:
    """The optimization pipeline run before fusion: constant propagation, peephole, CSE, DCE."""
    constant_propagation(graph)
    peephole(graph)
    cse(graph)
    dce(graph)
    return graph

