"""The fuser's graph pass: groups connected pointwise ops (and a trailing last-axis reduction,
with the softmax / normalization pattern of pointwise work over the reduced rows) into
``prim::FusionGroup`` nodes (jit/fuser.py compiles each group; jit/fuser_source.py writes its
kernel).

Grouping is greedy in node order. A node joins a group that produced one of its inputs when
(a) it is pointwise (an op with a ``pointwise:`` expression in ops.yaml, functional form) with
the group's element shape, or, in a *rows* group, the reduced-row shape (..., 1); or (b) it
is a sum / mean / max / min over the last axis of an element value (the group becomes a rows
group), or over all axes as a pointwise group's last node (an *all* group: the elements read
flat in blocks reduced in parallel, so on the CPU its outside inputs must be contiguous with its
shape or single elements; fuser_cuda.py indexes any layout); and no
node outside the group that runs before it uses a group value (the group runs
where its last member was). Every node must be pure by the alias analysis (no writes, nothing
read from a written alias set), on one device (CPU, or CUDA: fuser_cuda.py generates the
Triton kernels), with complete observed types.
"""
from __future__ import annotations

from .. import dtypes as _dt
from ..iterator import compute_dtype_for
from ..tensor import Tensor
from .ir import Graph, TensorType
from .passes import AliasDb, dce, pointwise_info

__all__ = ["fuse", "node_dtypes", "const_value", "FusionError", "REDUCE_OPS", "ROW_VIEWS"]

REDUCE_OPS = ("sum", "mean", "max", "min")
# Views that only re-index a reduced row value to its keepdims shape (x.sum(-1)[..., None]):
# inside a rows group they are the same register.
ROW_VIEWS = ("unsqueeze", "reshape", "view", "expand_dims")
_PY_SCALARS = (bool, int, float, complex)
# Reductions in groups sum in float64 (max / min compare there) and round once to the input
# dtype; eager accumulates half types in float32: both agree within the half type's rounding.
_REDUCE_DTYPES = (_dt.float32, _dt.float64, _dt.float16, _dt.bfloat16)


class FusionError(RuntimeError):
    pass


# ---- what eager computes per node ------------------------------------------------------------
def const_value(v):
    n = v.node
    if n is not None and n.kind == "prim::Constant":
        return n.attrs["value"]
    raise KeyError


def _is_py_scalar_const(v) -> bool:
    try:
        c = const_value(v)
    except KeyError:
        return False
    return type(c) in _PY_SCALARS


def node_dtypes(info, node):
    """(compute dtype, dtype eager stores) of a pointwise node, by the TensorIterator's rules,
    or None when eager would refuse it (the interpreter then raises eager's error)."""
    from ..dispatch import dispatcher
    args = dict(zip([a.name for a in dispatcher.get_op(node.op_name).schema.arguments],
                    node.inputs))
    promoted = []
    for name in info.tensor_args:
        v = args[name]
        if name in info.bool_args:
            continue
        promoted.append(v.type.dtype if v.is_tensor else const_value(v))
    common = (_dt.result_type(*promoted) if len(promoted) > 1 else
              (promoted[0] if isinstance(promoted[0], _dt.DType)
               else _dt.result_type(promoted[0])))
    if info.int_to_float and common.kind in "biu":
        common = _dt.default_float()
    if common.kind not in info.kinds:
        return None
    if info.no_half and common.itemsize == 2 and common.kind == "f":
        return None
    out = {"bool": _dt.bool_, "same": common,
           "real": _dt.real_for(common) if common.kind == "c" else common}[info.output]
    return compute_dtype_for(common), out


def _reduce_axis(node, ndim) -> str | None:
    """'last' (a reduction over the last axis), 'all' (over every axis) or None."""
    try:
        axis = const_value(node.inputs[1])
        keep = const_value(node.inputs[2])
        dtype = const_value(node.inputs[3]) if node.op_name == "sum" else None
    except KeyError:
        return None
    if dtype is not None or not isinstance(keep, bool):
        return None
    if axis is None or (isinstance(axis, (list, tuple))
                        and sorted(a % ndim for a in axis) == list(range(ndim))):
        return "all"
    if isinstance(axis, (list, tuple)):
        if len(axis) != 1:
            return None
        axis = axis[0]
    return "last" if isinstance(axis, int) and axis in (-1, ndim - 1) else None


def _eligible(node, db) -> str | None:
    """'pw', 'red' or None."""
    if not node.kind.startswith("tl::") or len(node.outputs) != 1:
        return None
    out = node.outputs[0].type
    if not isinstance(out, TensorType) or not out.complete or out.device is None:
        return None
    cuda = out.device.startswith("cuda")
    if not (cuda or out.device == "cpu") or not db.pure(node):
        return None
    if out.requires_grad or any(v.is_tensor and v.type.requires_grad for v in node.inputs):
        return None  # autograd records eager ops; a fused kernel has no backward
    info = pointwise_info(node)
    if info is not None:
        from ..dispatch import dispatcher
        schema = dispatcher.get_op(node.op_name).schema
        args = dict(zip([a.name for a in schema.arguments], node.inputs))
        for name in info.tensor_args:
            v = args[name]
            if v.is_tensor:
                if not v.type.complete or v.type.device != out.device:
                    return None
                if cuda and v.type.dtype.kind == "c":
                    return None
            elif not _is_py_scalar_const(v):
                return None
        for name in info.scalar_args:
            if not _is_py_scalar_const(args[name]):
                return None
        d = node_dtypes(info, node)
        if d is None or d[1] is not out.dtype:
            return None
        for name in info.tensor_args:
            v = args[name]
            if not v.is_tensor:
                target = _dt.bool_ if name in info.bool_args else d[0]
                try:
                    _dt.scalar_to_compute(const_value(v), target, info.name, name)
                except (OverflowError, TypeError, ValueError):
                    # eager refuses the value, or a comparison answers it without a kernel
                    # (dtype_scalars.ScalarOutOfRange): the interpreter runs the node
                    return None
        if cuda and (d[0].kind == "c" or d[1].kind == "c"):
            return None  # complex groups: CPU only (the CUDA generator's pairs are per op)
        return "pw"
    if node.op_name in ROW_VIEWS and node.inputs[0].is_tensor:
        x = node.inputs[0].type
        if x.complete and out.shape == tuple(x.shape) + (1,):
            return "row_view"  # (..., ) -> (..., 1): the same values, re-indexed
    if node.op_name in REDUCE_OPS:
        x = node.inputs[0].type
        if (isinstance(x, TensorType) and x.complete and x.device == out.device
                and x.dtype in _REDUCE_DTYPES and len(x.shape) >= 1
                and x.shape[-1] > 1 and out.dtype is x.dtype):
            how = _reduce_axis(node, len(x.shape))
            if how == "last":
                return "red"
            if how == "all" and x.numel > 1:
                return "red_all"
    return None


# ---- grouping --------------------------------------------------------------------------------
class _Group:
    def __init__(self, mode, shape, device):
        self.mode = mode          # 'pw' | 'rows' | 'all' (a trailing all-axes reduction)
        self.shape = tuple(shape)  # element shape
        self.device = device
        self.nodes = []
        self.members = set()

    def level(self, shape):
        if shape == self.shape:
            return "elem"
        if self.mode == "rows" and shape == self.shape[:-1] + (1,):
            return "row"
        if self.mode == "rows" and shape == self.shape[:-1]:
            return "row0"
        return None


def _blocked(group, node, pos) -> bool:
    """True when a node outside ``group`` placed before ``node`` uses a group value."""
    p = pos[node]
    for m in group.nodes:
        for o in m.outputs:
            for u, _ in o.uses:
                if u not in group.members and pos[u] < p:
                    return True
    return False


def _internal_levels_ok(group, node, out_level) -> bool:
    for v in node.inputs:
        if v.node in group.members:
            lv = group.level(v.type.shape)
            if lv == "row0" or lv is None:
                return False
            if out_level == "row" and lv != "row":
                return False
    return True


def _flat_inputs_ok(group, red) -> bool:
    """An all-axes reduction reads the group's elements flat: each tensor the group reads from
    outside must be contiguous with the group's shape, or a single element."""
    for m in group.nodes:
        for v in m.inputs:
            if v.node in group.members or not v.is_tensor:
                continue
            t = v.type
            if t.numel != 1 and not (t.shape == group.shape and t.contiguous):
                return False
    return True


def _find_groups(graph, db):
    pos = {n: i for i, n in enumerate(graph.nodes)}
    group_of = {}
    groups = []
    for n in graph.nodes:
        kind = _eligible(n, db)
        if kind is None:
            continue
        shape = n.outputs[0].type.shape
        device = n.outputs[0].type.device
        cands = []
        if kind == "red_all":
            # joins the pointwise group making its input, as the group's last node
            g = group_of.get(n.inputs[0].node)
            if (g is not None and g.mode == "pw" and n.inputs[0].type.shape == g.shape
                    and not _blocked(g, n, pos)
                    and (device != "cpu" or _flat_inputs_ok(g, n))):
                g.mode = "all"
                g.nodes.append(n)
                g.members.add(n)
                group_of[n] = g
            continue
        if kind == "row_view":
            g = group_of.get(n.inputs[0].node)
            if (g is not None and g.mode == "rows" and g.level(n.inputs[0].type.shape) == "row0"
                    and g.level(shape) == "row" and not _blocked(g, n, pos)):
                g.nodes.append(n)
                g.members.add(n)
                group_of[n] = g
            continue
        for v in n.inputs:
            g = group_of.get(v.node)
            if (g is None or g in cands or g.device != device or g.mode == "all"
                    or _blocked(g, n, pos)):
                continue
            if kind == "pw":
                lv = g.level(shape)
                if lv in ("elem", "row") and _internal_levels_ok(g, n, lv):
                    cands.append(g)
            else:
                xin = n.inputs[0]
                if (xin.node in g.members and xin.type.shape == g.shape
                        and g.shape[-1] > 1):
                    cands.append(g)
        # A node whose inputs come from several groups of one element shape merges them
        # (each was checked unblocked: no outside node before n uses its values).
        cands = [g for g in cands if g.shape == (cands[0].shape if cands else None)]
        if cands:
            chosen = cands[0]
            for g in cands[1:]:
                chosen.nodes = sorted(chosen.nodes + g.nodes, key=pos.__getitem__)
                chosen.members |= g.members
                if g.mode == "rows":
                    chosen.mode = "rows"
                for m in g.nodes:
                    group_of[m] = chosen
                groups.remove(g)
            if kind == "red":
                chosen.mode = "rows"
        elif kind == "pw":
            chosen = _Group("pw", shape, device)
            groups.append(chosen)
        else:
            chosen = _Group("rows", n.inputs[0].type.shape, device)
            groups.append(chosen)
        chosen.nodes.append(n)
        chosen.members.add(n)
        group_of[n] = chosen
    return [g for g in groups if len(g.nodes) >= 2]


def fuse(graph: Graph) -> list:
    """Replaces fusible chains by prim::FusionGroup nodes; returns the new nodes."""
    db = AliasDb(graph)
    made = []
    for grp in _find_groups(graph, db):
        made.append(_make_group_node(graph, grp))
    if made:
        dce(graph)
    return made


def _make_group_node(graph, grp):
    sub = Graph()
    vmap = {}
    ext = []
    for m in grp.nodes:
        for v in m.inputs:
            if v in vmap:
                continue
            if (v.node is not None and v.node.kind == "prim::Constant"
                    and not isinstance(v.node.attrs["value"], Tensor)):
                vmap[v] = sub.constant(v.node.attrs["value"])
            else:
                ext.append(v)
                vmap[v] = sub.add_input(v.type)
        c = sub.create(m.kind, [vmap[v] for v in m.inputs], [o.type for o in m.outputs])
        sub.append(c)
        for o, p in zip(m.outputs, c.outputs):
            vmap[o] = p
    outs = []
    gouts = set(graph.outputs)
    for m in grp.nodes:
        for o in m.outputs:
            if o in gouts or any(u not in grp.members for u, _ in o.uses):
                outs.append(o)
    sub.outputs = [vmap[o] for o in outs]
    node = graph.create("prim::FusionGroup", ext, [o.type for o in outs], subgraph=sub,
                        mode=grp.mode)
    last = grp.nodes[-1]
    graph.insert_before(node, last)
    for o, p in zip(outs, node.outputs):
        o.replace_all_uses_with(p)
    for m in reversed(grp.nodes):
        m.destroy()
    return node

