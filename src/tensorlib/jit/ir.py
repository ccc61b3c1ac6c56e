"""The JIT's graph IR: Graph, Node, Value with use-def lists, typed Values, TorchScript-style
printing and a verifier (``Graph.lint``). Reading the printed form back: jit/ir_parse.py.

A Graph is straight-line SSA code (tracing records no control flow): graph inputs, a node list
in execution order, graph outputs. Node kinds are ``tl::<op name>`` for dispatcher ops (the name
as the dispatcher spells it: ``add``, ``add.out``, ``add_``) and ``prim::*`` for structure
(``prim::Constant``, ``prim::ListConstruct``, ``prim::ListUnpack``, ``prim::FusionGroup`` whose
``subgraph`` attribute is a Graph of its own).
"""
from __future__ import annotations

import itertools
import math

from .. import dtypes as _dt

__all__ = ["TensorType", "ScalarKind", "Value", "Node", "Graph", "LintError", "TYPE_NAMES"]


class LintError(AssertionError):
    """A graph broke an IR invariant (raised by ``Graph.lint``)."""


# TorchScript's scalar-type names (Float(2, 3) ...), keyed by tensorlib dtype name.
TYPE_NAMES = {
    "bool": "Bool", "int8": "Char", "uint8": "Byte", "int16": "Short", "uint16": "UInt16",
    "int32": "Int", "uint32": "UInt32", "int64": "Long", "uint64": "UInt64",
    "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double",
    "complex64": "ComplexFloat", "complex128": "ComplexDouble",
}


class TensorType:
    """What is known about a tensor Value: dtype, shape (a tuple whose entries may be None for
    unknown sizes, or None for unknown rank), strides (or None), contiguity, device (a string
    such as 'cpu' / 'cuda:0') and requires_grad. Unknown fields are None."""

    __slots__ = ("dtype", "shape", "strides", "contiguous", "device", "requires_grad")

    def __init__(self, dtype=None, shape=None, strides=None, contiguous=None, device=None,
                 requires_grad=False):
        self.dtype = dtype
        self.shape = None if shape is None else tuple(shape)
        self.strides = None if strides is None else tuple(strides)
        self.contiguous = contiguous
        self.device = device
        self.requires_grad = bool(requires_grad)

    @classmethod
    def of(cls, t) -> "TensorType":
        """The complete type of a concrete tensor."""
        return cls(t._dtype, t._shape, t._strides, t.is_contiguous(), str(t.device),
                   t.requires_grad)

    @property
    def complete(self) -> bool:
        return (self.dtype is not None and self.shape is not None
                and all(s is not None for s in self.shape) and self.device is not None)

    @property
    def numel(self):
        if self.shape is None or any(s is None for s in self.shape):
            return None
        return math.prod(self.shape)

    def with_(self, **kw) -> "TensorType":
        d = {k: getattr(self, k) for k in self.__slots__}
        d.update(kw)
        return TensorType(**d)

    def __eq__(self, other):
        return isinstance(other, TensorType) and all(
            getattr(self, k) == getattr(other, k) for k in self.__slots__)

    def __hash__(self):
        return hash((self.dtype, self.shape, self.strides, self.device))

    def __str__(self):
        if self.dtype is None and self.shape is None:
            return "Tensor"
        head = TYPE_NAMES[self.dtype.name] if self.dtype is not None else "Tensor"
        parts = []
        if self.shape is not None:
            parts += ["*" if s is None else str(s) for s in self.shape]
        if self.strides is not None:
            parts.append("strides=[" + ", ".join(map(str, self.strides)) + "]")
        if self.requires_grad:
            parts.append("requires_grad=1")
        if self.device is not None:
            parts.append(f"device={self.device}")
        return f"{head}({', '.join(parts)})"

    __repr__ = __str__

    def to_json(self):
        return {"dtype": None if self.dtype is None else self.dtype.name,
                "shape": None if self.shape is None else list(self.shape),
                "strides": None if self.strides is None else list(self.strides),
                "contiguous": self.contiguous, "device": self.device,
                "requires_grad": self.requires_grad}

    @classmethod
    def from_json(cls, d) -> "TensorType":
        return cls(None if d["dtype"] is None else _dt.to_dtype(d["dtype"]), d["shape"],
                   d["strides"], d["contiguous"], d["device"], d["requires_grad"])


class ScalarKind:
    """The type of a non-tensor Value: 'int', 'float', 'bool', 'complex', 'str', 'NoneType',
    'int[]', 'Tensor[]', 'ScalarType', 'Device', 'Any'..."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __eq__(self, other):
        return isinstance(other, ScalarKind) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def __str__(self):
        return self.name

    __repr__ = __str__


def type_of_constant(v) -> ScalarKind:
    if v is None:
        return ScalarKind("NoneType")
    if isinstance(v, bool):
        return ScalarKind("bool")
    for t, n in ((int, "int"), (float, "float"), (complex, "complex"), (str, "str")):
        if isinstance(v, t):
            return ScalarKind(n)
    if isinstance(v, _dt.DType):
        return ScalarKind("ScalarType")
    if isinstance(v, (list, tuple)):
        kinds = {type_of_constant(x).name for x in v}
        return ScalarKind((kinds.pop() if len(kinds) == 1 else "Any") + "[]")
    if type(v).__name__ == "Device":
        return ScalarKind("Device")
    return ScalarKind("Any")


class Value:
    """An SSA value: produced by exactly one node (or a graph input), used by ``uses``
    (a list of (node, input index))."""

    __slots__ = ("graph", "unique", "debug_name", "type", "node", "offset", "uses")

    def __init__(self, graph, node, offset, type_):
        self.graph = graph
        self.unique = next(graph._ids)
        self.debug_name = None
        self.type = type_
        self.node = node          # the producing Node, None for graph inputs
        self.offset = offset
        self.uses: list = []

    @property
    def name(self) -> str:
        return self.debug_name if self.debug_name is not None else str(self.unique)

    @property
    def is_tensor(self) -> bool:
        return isinstance(self.type, TensorType)

    def replace_all_uses_with(self, other: "Value") -> None:
        for node, i in list(self.uses):
            node.replace_input(i, other)
        g = self.graph
        g.outputs = [other if o is self else o for o in g.outputs]

    def __repr__(self):
        return f"%{self.name}"


class Node:
    """One operation: ``kind`` ('tl::add', 'prim::Constant'...), input Values, output Values and
    attributes (``value`` of a constant, ``subgraph`` of a fusion group...)."""

    __slots__ = ("graph", "kind", "inputs", "outputs", "attrs")

    def __init__(self, graph, kind: str):
        self.graph = graph
        self.kind = kind
        self.inputs: list = []
        self.outputs: list = []
        self.attrs: dict = {}

    @property
    def op_name(self) -> str | None:
        """The dispatcher op name of a ``tl::`` node ('add', 'add.out', 'add_')."""
        return self.kind[4:] if self.kind.startswith("tl::") else None

    def add_input(self, v: Value) -> None:
        v.uses.append((self, len(self.inputs)))
        self.inputs.append(v)

    def add_output(self, type_) -> Value:
        v = Value(self.graph, self, len(self.outputs), type_)
        self.outputs.append(v)
        return v

    def replace_input(self, i: int, v: Value) -> None:
        old = self.inputs[i]
        old.uses.remove((self, i))
        self.inputs[i] = v
        v.uses.append((self, i))

    def drop_inputs(self) -> None:
        for i, v in enumerate(self.inputs):
            v.uses.remove((self, i))
        self.inputs = []

    def destroy(self) -> None:
        """Removes the node (its outputs must be unused)."""
        for o in self.outputs:
            if o.uses or o in self.graph.outputs:
                raise LintError(f"destroy(): output %{o.name} of {self.kind} is still used")
        self.drop_inputs()
        self.graph.nodes.remove(self)

    def __repr__(self):
        return _node_line(self, {}).strip()


def _fmt_value(v) -> str:
    """An attribute value as text ``parse_graph`` reads back (Python literals; dtypes and
    devices by their reprs); tensors and other objects print as ``<TypeName>``, which it
    refuses (their data lives only in a saved file)."""
    if v is None or isinstance(v, (bool, int, float, complex, str)):
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(_fmt_value(x) for x in v) + "]"
    if isinstance(v, tuple):
        return "(" + ", ".join(_fmt_value(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    if isinstance(v, _dt.DType) or type(v).__name__ == "Device":
        return repr(v)
    return f"<{type(v).__name__}>"


def _attr_text(k, v):
    if k == "subgraph":
        return None
    return f"{k}={_fmt_value(v)}"


def _node_line(node, names) -> str:
    outs = ", ".join(f"%{o.name} : {o.type}" for o in node.outputs)
    attrs = [a for a in (_attr_text(k, v) for k, v in node.attrs.items()) if a]
    kind = node.kind
    if kind == "prim::FusionGroup":
        kind = f"prim::FusionGroup_{names.get(id(node), 0)}"
    a = f"[{', '.join(attrs)}]" if attrs else ""
    ins = ", ".join(f"%{i.name}" for i in node.inputs)
    lhs = f"{outs} = " if outs else ""
    return f"  {lhs}{kind}{a}({ins})"


class Graph:
    """Inputs, nodes in execution order, outputs. Values get graph-unique numbers; traced
    inputs keep their Python parameter names."""

    def __init__(self):
        self._ids = itertools.count()
        self.inputs: list = []
        self.nodes: list = []
        self.outputs: list = []

    # ---- building ------------------------------------------------------------------------
    def add_input(self, type_, name=None) -> Value:
        v = Value(self, None, len(self.inputs), type_)
        v.debug_name = name
        self.inputs.append(v)
        return v

    def create(self, kind, inputs=(), ntypes=(), **attrs) -> Node:
        """A node (not inserted); ``ntypes``: one type per output."""
        n = Node(self, kind)
        for v in inputs:
            n.add_input(v)
        for t in ntypes:
            n.add_output(t)
        n.attrs.update(attrs)
        return n

    def append(self, node: Node) -> Node:
        self.nodes.append(node)
        return node

    def insert_before(self, node: Node, anchor: Node) -> Node:
        self.nodes.insert(self.nodes.index(anchor), node)
        return node

    def constant(self, value, before: Node | None = None) -> Value:
        """A prim::Constant node holding ``value`` (appended, or inserted before ``before``)."""
        if type(value).__name__ == "Tensor":
            t = TensorType.of(value)
        else:
            t = type_of_constant(value)
        n = self.create("prim::Constant", (), (t,), value=value)
        if before is None:
            self.append(n)
        else:
            self.insert_before(n, before)
        return n.outputs[0]

    def add_output(self, v: Value) -> None:
        self.outputs.append(v)

    # ---- queries -------------------------------------------------------------------------
    def fusion_groups(self) -> list:
        return [n for n in self.nodes if n.kind == "prim::FusionGroup"]

    def kinds(self) -> list:
        return [n.kind for n in self.nodes]

    def copy(self) -> "Graph":
        """A deep copy (constants' values and subgraphs shared: both are immutable here)."""
        g = Graph()
        vmap = {}
        for v in self.inputs:
            vmap[v] = g.add_input(v.type, v.debug_name)
            vmap[v].unique = v.unique
        for n in self.nodes:
            m = g.create(n.kind, [vmap[i] for i in n.inputs], [o.type for o in n.outputs],
                         **n.attrs)
            if "subgraph" in n.attrs:
                m.attrs["subgraph"] = n.attrs["subgraph"].copy()
            for o, p in zip(n.outputs, m.outputs):
                p.debug_name = o.debug_name
                p.unique = o.unique  # same names as the original
                vmap[o] = p
            g.append(m)
        g.outputs = [vmap[v] for v in self.outputs]
        g.continue_numbering(next(self._ids))
        return g

    def continue_numbering(self, start: int) -> None:
        """New values get numbers from ``start`` on (after copying / loading numbered values)."""
        self._ids = itertools.count(start)

    # ---- printing ------------------------------------------------------------------------
    def __str__(self):
        groups = []
        text = self._text("graph", groups)
        i = 0
        while i < len(groups):
            node = groups[i]
            text += _subgraph_text(node, i, groups)
            i += 1
        return text

    def _text(self, head, groups) -> str:
        names = {}
        for n in self.nodes:
            if n.kind == "prim::FusionGroup":
                names[id(n)] = len(groups)
                groups.append(n)
        pad = " " * (len(head) + 1)
        params = f",\n{pad}".join(f"%{v.name} : {v.type}" for v in self.inputs)
        lines = [f"{head}({params}):"]
        lines += [_node_line(n, names) for n in self.nodes]
        lines.append(f"  return ({', '.join('%' + o.name for o in self.outputs)})")
        return "\n".join(lines) + "\n"

    __repr__ = __str__

    # ---- verification --------------------------------------------------------------------
    def lint(self) -> "Graph":
        """Checks the IR invariants; raises LintError naming the first broken one."""
        defined = set()
        names = set()

        def name_ok(v):
            if v.name in names:
                raise LintError(f"value name %{v.name} defined twice")
            names.add(v.name)

        for i, v in enumerate(self.inputs):
            if v.node is not None or v.offset != i or v.graph is not self:
                raise LintError(f"graph input %{v.name} is not input {i} of this graph")
            name_ok(v)
            defined.add(v)
        seen_nodes = set()
        for n in self.nodes:
            if n.graph is not self:
                raise LintError(f"{n.kind} belongs to another graph")
            if id(n) in seen_nodes:
                raise LintError(f"{n.kind} appears twice in the node list")
            seen_nodes.add(id(n))
            for i, v in enumerate(n.inputs):
                if v not in defined:
                    raise LintError(f"{n.kind} uses %{v.name} before its definition")
                if (n, i) not in v.uses:
                    raise LintError(f"use of %{v.name} by {n.kind} (input {i}) missing from its "
                                    f"use list")
            for j, o in enumerate(n.outputs):
                if o.node is not n or o.offset != j:
                    raise LintError(f"output {j} of {n.kind} does not point back to its node")
                name_ok(o)
                defined.add(o)
            if n.kind == "prim::Constant":
                if n.inputs or len(n.outputs) != 1 or "value" not in n.attrs:
                    raise LintError("prim::Constant needs no inputs, one output and a value")
            if n.kind == "prim::FusionGroup":
                sub = n.attrs.get("subgraph")
                if not isinstance(sub, Graph):
                    raise LintError("prim::FusionGroup without a subgraph")
                if len(sub.inputs) != len(n.inputs) or len(sub.outputs) != len(n.outputs):
                    raise LintError("prim::FusionGroup's inputs/outputs do not match its "
                                    "subgraph's")
                sub.lint()
            if n.kind.startswith("tl::"):
                from ..dispatch import dispatcher
                if not dispatcher.has_op(n.op_name):
                    raise LintError(f"{n.kind}: no such operator")
        all_vals = set(defined)
        for v in all_vals:
            for node, i in v.uses:
                if id(node) not in seen_nodes or node.inputs[i] is not v:
                    raise LintError(f"%{v.name} lists a use by {node.kind} that does not use it")
        for o in self.outputs:
            if o not in defined:
                raise LintError(f"graph output %{o.name} is not defined in the graph")
        return self


def _subgraph_text(node, i, groups) -> str:
    return "with " + node.attrs["subgraph"]._text(f"prim::FusionGroup_{i} = graph", groups)
