"""The fuser: groups connected pointwise ops (and a trailing last-axis reduction, with the
softmax / normalization pattern of pointwise work over the reduced rows) into
``prim::FusionGroup`` nodes, and compiles each group into ONE generated Numba kernel.

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

Code generation is the eager kernels' (kernels/cpu/pointwise.py): each op's YAML expression
with its arguments renamed, operands converted by ``casting.cast_code`` exactly as the eager
kernel loads them (from the dtype eager would have stored, so float16 / bfloat16
intermediates round where eager rounds), each result converted to the dtype eager would store
and kept in a register. Pointwise groups loop like the eager kernel (coalesced dims, tiles,
a contiguous branch LLVM vectorizes, a parallel twin); rows groups run one row per iteration
of a parallel loop, a pass over the row per reduction (recomputing the element values it
needs) and a last pass that stores.
"""
from __future__ import annotations

import ast
import math
import threading
import types

import numpy as np

from .. import dtypes as _dt
from ..allocation import empty_strided_like_order
from ..iterator import compute_dtype_for
from ..shape import broadcast_strides, coalesce, contiguous_strides
from ..storage import Storage
from ..tensor import Tensor
from .ir import Graph, TensorType
from .passes import AliasDb, dce, pointwise_info

__all__ = ["fuse", "fuse_and_compile", "compile_group", "FusionError"]

GRAIN = 1 << 15
TILE = 1 << 14
_REDUCE_OPS = ("sum", "mean", "max", "min")
# Views that only re-index a reduced row value to its keepdims shape (x.sum(-1)[..., None]):
# inside a rows group they are the same register.
_ROW_VIEWS = ("unsqueeze", "reshape", "view", "expand_dims")
_PY_SCALARS = (bool, int, float, complex)
# Reductions in groups sum in float64 (max / min compare there) and round once to the input
# dtype; eager accumulates half types in float32: both agree within the half type's rounding.
_REDUCE_DTYPES = (_dt.float32, _dt.float64, _dt.float16, _dt.bfloat16)


class FusionError(RuntimeError):
    pass


# ---- what eager computes per node ------------------------------------------------------------
def _const(v):
    n = v.node
    if n is not None and n.kind == "prim::Constant":
        return n.attrs["value"]
    raise KeyError


def _is_py_scalar_const(v) -> bool:
    try:
        c = _const(v)
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
        promoted.append(v.type.dtype if v.is_tensor else _const(v))
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
        axis = _const(node.inputs[1])
        keep = _const(node.inputs[2])
        dtype = _const(node.inputs[3]) if node.op_name == "sum" else None
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
        if cuda and (d[0].kind == "c" or d[1].kind == "c"):
            return None  # complex groups: CPU only (the CUDA generator's pairs are per op)
        return "pw"
    if node.op_name in _ROW_VIEWS and node.inputs[0].is_tensor:
        x = node.inputs[0].type
        if x.complete and out.shape == tuple(x.shape) + (1,):
            return "row_view"  # (..., ) -> (..., 1): the same values, re-indexed
    if node.op_name in _REDUCE_OPS:
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


# ---- code generation -------------------------------------------------------------------------
class _Rename(ast.NodeTransformer):
    def __init__(self, mapping):
        self.mapping = mapping

    def visit_Name(self, node):
        new = self.mapping.get(node.id)
        if new is not None:
            return ast.copy_location(ast.Name(id=new, ctx=node.ctx), node)
        return node


def _rename(expr, mapping) -> str:
    tree = ast.parse(expr, mode="eval")
    return ast.unparse(_Rename(mapping).visit(tree))


class _Gen:
    """Per-node statements of a subgraph, shared by both kernel shapes. ``ref(v)`` gives the
    variable holding a value (external inputs are loaded into ``x<j>``, node results are
    ``v<k>``), in the dtype eager stores it in (raw uint16 for the half types)."""

    def __init__(self, sub):
        from ..dispatch import dispatcher
        from ..kernels.cpu.casting import cast_code
        self.cast_code = cast_code
        self.sub = sub
        self.params = []      # (name, value) scalars passed to the kernel
        self.var = {}
        self.dtype = {}
        for j, v in enumerate(sub.inputs):
            self.var[v] = f"x{j}"
            self.dtype[v] = v.type.dtype
        self.stmts = {}       # node -> list of lines computing it
        self.names = []
        for k, n in enumerate(sub.nodes):
            if n.kind == "prim::Constant":
                continue
            schema = dispatcher.get_op(n.op_name).schema
            args = dict(zip([a.name for a in schema.arguments], n.inputs))
            out = n.outputs[0]
            self.var[out] = f"v{k}"
            self.dtype[out] = out.type.dtype
            info = pointwise_info(n)
            if n.op_name in _ROW_VIEWS:
                self.names.append(n.op_name)
                self.stmts[n] = [f"v{k} = {self.var[n.inputs[0]]}"]
                continue
            if info is None:
                self.names.append(n.op_name)
                continue  # reductions: emitted by the rows kernel
            self.names.append(info.name)
            compute, store = node_dtypes(info, n)
            lines, mapping = [], {}
            for name in info.tensor_args:
                v = args[name]
                target = _dt.bool_ if name in info.bool_args else compute
                local = f"n{k}_{name}"
                if v.is_tensor:
                    lines.append(f"{local} = {cast_code(self.dtype[v], target, self.var[v])}")
                else:
                    local = self._param(_dt.scalar_to_compute(_const(v), target, info.name,
                                                              name))
                mapping[name] = local
            for name in info.scalar_args:
                mapping[name] = self._param(_dt.scalar_to_compute(
                    _const(args[name]), compute, info.name, name))
            body = _rename(info.expr, mapping)
            # Named conversion to the stored dtype: Numba widens small-integer arithmetic to
            # int64, where eager truncates when it stores; the register must hold what eager
            # stored (a no-op for the float types).
            stored = cast_code(info.result_dtype(compute), store, f"({body})")
            lines.append(f"v{k} = np.{_np_kernel_name(store)}({stored})")
            self.stmts[n] = lines

    def _param(self, value) -> str:
        name = f"p{len(self.params)}"
        self.params.append((name, value))
        return name

    def deps(self, targets, stop=()):
        """Nodes of the subgraph needed for ``targets`` (values), in order, not crossing
        ``stop`` values (already available)."""
        need = set()
        stack = [v for v in targets]
        while stack:
            v = stack.pop()
            n = v.node
            if n is None or n.kind == "prim::Constant" or v in stop or n in need:
                continue
            need.add(n)
            stack += n.inputs
        return [n for n in self.sub.nodes if n in need]

    def inputs_of(self, nodes):
        ins = []
        for n in nodes:
            for v in n.inputs:
                if v.node is None and v not in ins:
                    ins.append(v)
        return ins


_HEADER = """\
# Generated by tensorlib.jit.fuser for: {what}
import numpy as np
from numba import njit, prange
from tensorlib.kernels.cpu.scalar_math import *
from tensorlib.kernels.cpu.casting import *

"""


def _pointwise_source(gen, sub, what):
    outs = sub.outputs
    ins = sub.inputs
    nops = len(outs) + len(ins)
    onames = [f"o{i}" for i in range(len(outs))]
    anames = [f"a{j}" for j in range(len(ins))]
    arrays = onames + anames
    params = [p for p, _ in gen.params]
    body_nodes = gen.deps(outs)
    src = _HEADER.format(what=what)
    for fname, par in (("serial", False), ("parallel", True)):
        rng = "prange" if par else "range"
        L = [f"@njit(cache=True, nogil=True, error_model='numpy', parallel={par})",
             f"def {fname}({', '.join(['meta'] + arrays + params)}):",
             "    ndim = meta[0]",
             "    n0 = meta[1]",
             "    outer = 1",
             "    for d in range(1, ndim):",
             "        outer *= meta[1 + d]",
             f"    ntiles = (n0 + {TILE - 1}) // {TILE}",
             "    sb = 1 + ndim",
             f"    ob = 1 + ndim + {nops} * ndim",
             f"    for t in {rng}(outer * ntiles):",
             "        j = t // ntiles",
             "        tile = t - j * ntiles"]
        L += [f"        q{k} = meta[ob + {k}]" for k in range(nops)]
        L += ["        rem = j",
              "        for d in range(1, ndim):",
              "            size = meta[1 + d]",
              "            idx = rem % size",
              "            rem //= size"]
        L += [f"            q{k} += idx * meta[sb + {k} * ndim + d]" for k in range(nops)]
        L += [f"        s{k} = meta[sb + {k} * ndim]" for k in range(nops)]
        L += [f"        start = tile * {TILE}",
              f"        stop = min(n0, start + {TILE})",
              f"        if {' and '.join(f's{k} == 1' for k in range(nops))}:"]
        L += [f"            w{k} = {arr}[q{k} + start:q{k} + stop]" for k, arr in enumerate(arrays)]
        L.append("            for i in range(stop - start):")
        ind = " " * 16
        L += [f"{ind}x{j} = w{len(outs) + j}[i]" for j in range(len(ins))]
        for n in body_nodes:
            L += [ind + s for s in gen.stmts[n]]
        L += [f"{ind}w{i}[i] = {gen.var[o]}" for i, o in enumerate(outs)]
        L += ["        else:", "            for i in range(start, stop):"]
        L += [f"{ind}x{j} = a{j}[np.uint64(q{len(outs) + j} + i * s{len(outs) + j})]"
              for j in range(len(ins))]
        for n in body_nodes:
            L += [ind + s for s in gen.stmts[n]]
        L += [f"{ind}o{i}[np.uint64(q{i} + i * s{i})] = {gen.var[o]}" for i, o in enumerate(outs)]
        src += "\n" + "\n".join(L) + "\n"
    # The dense twin: every operand contiguous with the group's shape (the common case, and
    # what the guard's contiguity makes likely): one tiled loop over n elements, the body
    # once instead of in both branches above, so a cold first call compiles about half as much.
    offs = [f"f{k}" for k in range(nops)]
    for fname, par in (("flat_serial", False), ("flat_parallel", True)):
        rng = "prange" if par else "range"
        L = [f"@njit(cache=True, nogil=True, error_model='numpy', parallel={par})",
             f"def {fname}({', '.join(['n'] + arrays + offs + params)}):",
             f"    ntiles = (n + {TILE - 1}) // {TILE}",
             f"    for t in {rng}(ntiles):",
             f"        start = t * {TILE}",
             f"        stop = min(n, start + {TILE})"]
        L += [f"        w{k} = {arr}[f{k} + start:f{k} + stop]" for k, arr in enumerate(arrays)]
        L.append("        for i in range(stop - start):")
        ind = " " * 12
        L += [f"{ind}x{j} = w{len(outs) + j}[i]" for j in range(len(ins))]
        for n in body_nodes:
            L += [ind + s for s in gen.stmts[n]]
        L += [f"{ind}w{i}[i] = {gen.var[o]}" for i, o in enumerate(outs)]
        src += "\n" + "\n".join(L) + "\n"
    return src


def _np_kernel_name(dtype) -> str:
    return "uint16" if dtype.itemsize == 2 and dtype.kind == "f" else dtype.storage_np_dtype.name


def _rows_source(gen, sub, what):
    """One row per iteration: a pass over the row per reduction (the values it reduces into a
    row buffer, then an 8-lane float64 sum or a NaN-propagating max/min scan), row-level
    nodes as soon as their inputs exist, and a last pass storing the element outputs.
    Element values a pass needs are recomputed in it (registers, no memory traffic)."""
    outs = sub.outputs
    ins = sub.inputs
    sig = ["R", "C", "RB", "CB"]
    for i in range(len(outs)):
        sig += [f"ro{i}", f"cso{i}", f"o{i}"]
    for j in range(len(ins)):
        sig += [f"ri{j}", f"csi{j}", f"a{j}"]
    sig += [p for p, _ in gen.params]
    reds = [n for n in sub.nodes if n.op_name in _REDUCE_OPS]
    shape = reds[0].inputs[0].type.shape

    def is_elem(v):
        return v.type.shape == shape

    ind, ind2 = " " * 12, " " * 16
    L = ["@njit(cache=True, nogil=True, error_model='numpy', parallel={par})",
         f"def {{fname}}({', '.join(sig)}):",
         "    nchunks = (R + RB - 1) // RB",
         "    for ch in {rng}(nchunks):",
         f"        buf = np.empty(min(C, CB), np.float64)",
         "        for r in range(ch * RB, min(R, ch * RB + RB)):"]
    # Per input, by its observed type (the guard fixes shape and contiguity): a row value
    # (last dim broadcast) is loaded once per row; a contiguous one is sliced to the row, so
    # the passes index from 0 with unit stride (no wraparound checks; LLVM vectorizes);
    # anything else is indexed with its column stride.
    access = []
    for j, v in enumerate(ins):
        t = v.type
        last = t.shape[-1] if t.shape else 1
        if last == 1:
            access.append("row")
            L.append(f"            x{j} = a{j}[ri{j}[r]]")
        elif t.contiguous:
            access.append("unit")
            L.append(f"            w{j} = a{j}[ri{j}[r]:ri{j}[r] + C]")
        else:
            access.append("strided")
            L.append(f"            b{j} = ri{j}[r]")
    for i, o in enumerate(outs):
        if is_elem(o):  # outputs are allocated C-contiguous
            L.append(f"            u{i} = o{i}[ro{i}[r]:ro{i}[r] + C]")
    done = set()
    loaded = {v for j, v in enumerate(ins) if access[j] == "row"}

    def load(j, blocked):
        # In a column block, unit-stride inputs are sliced to the block and indexed from 0:
        # an index LLVM can prove non-negative (no wraparound branch), so the loop
        # vectorizes (indexing w[c] with c from cb measured 5x slower per reduction pass).
        if access[j] == "unit":
            return f"x{j} = cbw{j}[c]" if blocked else f"x{j} = w{j}[c]"
        col = "(cb + c)" if blocked else "c"
        return f"x{j} = a{j}[b{j} + {col} * csi{j}]"

    def row_values():
        return {o for n in done for o in n.outputs}

    def emit_row_nodes():
        progress = True
        while progress:
            progress = False
            for n in sub.nodes:
                if (n in done or n.kind == "prim::Constant" or n.op_name in _REDUCE_OPS
                        or is_elem(n.outputs[0])):
                    continue
                if all(v.node is None or v.node.kind == "prim::Constant" or v.node in done
                       for v in n.inputs):
                    for v in n.inputs:
                        if v.node is None and v not in loaded:
                            j = ins.index(v)
                            L.append(f"{ind}x{j} = a{j}[ri{j}[r]]")
                            loaded.add(v)
                    L.extend(ind + s for s in gen.stmts[n])
                    done.add(n)
                    progress = True

    def emit_pass(targets, head, body_ind, blocked=False):
        nodes = [n for n in gen.deps(targets, stop=row_values()) if n not in done]
        used = [ins.index(v) for v in dict.fromkeys(
            gen.inputs_of(nodes) + [v for v in targets if v.node is None])]
        if blocked:
            L.extend(f"{head}cbw{j} = w{j}[cb:ce]" for j in used if access[j] == "unit")
        L.append(f"{head}for c in {'range(ce - cb)' if blocked else 'range(C)'}:")
        for j in used:
            if access[j] != "row":
                L.append(body_ind + load(j, blocked))
        for n in nodes:
            L.extend(body_ind + s for s in gen.stmts[n])

    def ref(v):
        return gen.var[v]

    emit_row_nodes()
    ind3 = ind2 + "    "
    for red in reds:
        x = red.inputs[0]
        op = red.op_name
        # Column blocks of CB: the values into a cache-resident buffer (vectorizable), then
        # folded: eight independent float64 sums (no serial dependency chain), or a max/min
        # scan where NaN propagates (once tot is NaN it stays; a NaN element replaces tot).
        if op in ("sum", "mean"):
            L.append(f"{ind}" + " = ".join(f"s{q}" for q in range(8)) + " = 0.0")
        else:
            L.append(f"{ind}tot = {'-' if op == 'max' else ''}np.inf")
        L += [f"{ind}for cb in range(0, C, CB):", f"{ind2}ce = min(C, cb + CB)"]
        emit_pass([x], ind2, ind3, blocked=True)
        L.append(f"{ind3}buf[c] = {gen.cast_code(gen.dtype[x], _dt.float64, ref(x))}")
        L.append(f"{ind2}m = ce - cb")
        if op in ("sum", "mean"):
            L += [f"{ind2}m8 = m - m % 8", f"{ind2}for q in range(0, m8, 8):"]
            L += [f"{ind3}s{q} += buf[q + {q}]" for q in range(8)]
            L += [f"{ind2}for q in range(m8, m):", f"{ind3}s0 += buf[q]"]
            L.append(f"{ind}tot = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))")
            if op == "mean":
                L.append(f"{ind}tot = tot / C")
        else:
            cmp = ">" if op == "max" else "<"
            L += [f"{ind2}for q in range(m):",
                  f"{ind3}e = buf[q]",
                  f"{ind3}if (e {cmp} tot or e != e) and tot == tot:",
                  f"{ind3}    tot = e"]
        k = sub.nodes.index(red)
        L.append(f"{ind}v{k} = {gen.cast_code(_dt.float64, gen.dtype[red.outputs[0]], 'tot')}")
        done.add(red)
        emit_row_nodes()
    elem_outs = [o for o in outs if is_elem(o)]
    if elem_outs:
        emit_pass(elem_outs, ind, ind2)
        for i, o in enumerate(outs):
            if is_elem(o):
                L.append(f"{ind2}u{i}[c] = {ref(o)}")
    for i, o in enumerate(outs):
        if not is_elem(o):
            L.append(f"{ind}o{i}[ro{i}[r]] = {ref(o)}")
    body = "\n".join(L) + "\n"
    src = _HEADER.format(what=what)
    for fname, par in (("serial", False), ("parallel", True)):
        src += "\n" + body.format(fname=fname, par=par, rng="prange" if par else "range")
    return src


ALL_BLOCK = 1 << 16  # elements per partial of an all-axes reduction


def _all_source(gen, sub, what):
    """An all-axes group: the elements in blocks of ALL_BLOCK, each reduced (a parallel loop)
    into one float64 partial (column blocks through a buffer, as the rows kernels do), the
    partials then folded in order: the same bits serial or parallel, on any thread count.
    Inputs are single elements (loaded once) or contiguous with the group's shape (read
    flat); element outputs are stored flat in the same pass."""
    outs, ins = sub.outputs, sub.inputs
    red = next(n for n in sub.nodes if n.op_name in _REDUCE_OPS)
    x, op = red.inputs[0], red.op_name
    elem = [(i, o) for i, o in enumerate(outs) if o is not red.outputs[0]]
    ridx = outs.index(red.outputs[0])
    single = [v.type.numel == 1 for v in ins]
    sig = ["N", "BL", "CB"] + [f"o{i}, qo{i}" for i in range(len(outs))]
    sig += [f"a{j}, q{j}" for j in range(len(ins))] + [p for p, _ in gen.params]
    nodes = gen.deps([x] + [o for _, o in elem])
    used = [ins.index(v) for v in dict.fromkeys(gen.inputs_of(nodes)
                                                + [v for v in [x] if v.node is None])]
    i1, i2, i3, i4 = (" " * k for k in (8, 12, 16, 20))
    L = ["@njit(cache=True, nogil=True, error_model='numpy', parallel={par})",
         f"def {{fname}}({', '.join(sig)}):",
         "    nb = (N + BL - 1) // BL",
         "    part = np.empty(nb, np.float64)",
         "    for b in {rng}(nb):",
         f"{i1}buf = np.empty(min(BL, CB), np.float64)",
         f"{i1}bs = b * BL",
         f"{i1}be = min(N, bs + BL)"]
    L += [f"{i1}x{j} = a{j}[q{j}]" for j in used if single[j]]
    if op in ("sum", "mean"):
        L.append(f"{i1}" + " = ".join(f"s{q}" for q in range(8)) + " = 0.0")
    else:
        L.append(f"{i1}tot = {'-' if op == 'max' else ''}np.inf")
    L += [f"{i1}for cb in range(bs, be, CB):", f"{i2}ce = min(be, cb + CB)"]
    # slices indexed from 0: LLVM vectorizes (see _rows_source)
    L += [f"{i2}cbw{j} = a{j}[q{j} + cb:q{j} + ce]" for j in used if not single[j]]
    L += [f"{i2}cbu{i} = o{i}[qo{i} + cb:qo{i} + ce]" for i, _ in elem]
    L.append(f"{i2}for c in range(ce - cb):")
    L += [f"{i3}x{j} = cbw{j}[c]" for j in used if not single[j]]
    for n in nodes:
        L += [i3 + st for st in gen.stmts[n]]
    L.append(f"{i3}buf[c] = {gen.cast_code(gen.dtype[x], _dt.float64, gen.var[x])}")
    L += [f"{i3}cbu{i}[c] = {gen.var[o]}" for i, o in elem]
    L.append(f"{i2}m = ce - cb")
    if op in ("sum", "mean"):
        L += [f"{i2}m8 = m - m % 8", f"{i2}for q in range(0, m8, 8):"]
        L += [f"{i3}s{q} += buf[q + {q}]" for q in range(8)]
        L += [f"{i2}for q in range(m8, m):", f"{i3}s0 += buf[q]"]
        L.append(f"{i1}part[b] = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))")
        L += ["    tot = part[0]", "    for b in range(1, nb):", "        tot += part[b]"]
        if op == "mean":
            L.append("    tot = tot / N")
    else:
        cmp = ">" if op == "max" else "<"
        L += [f"{i2}for q in range(m):", f"{i3}e = buf[q]",
              f"{i3}if (e {cmp} tot or e != e) and tot == tot:", f"{i4}tot = e",
              f"{i1}part[b] = tot",
              "    tot = part[0]", "    for b in range(1, nb):", "        e = part[b]",
              f"        if (e {cmp} tot or e != e) and tot == tot:", "            tot = e"]
    L.append(f"    o{ridx}[qo{ridx}] = "
             f"{gen.cast_code(_dt.float64, gen.dtype[red.outputs[0]], 'tot')}")
    body = "\n".join(L) + "\n"
    src = _HEADER.format(what=what)
    for fname, par in (("serial", False), ("parallel", True)):
        src += "\n" + body.format(fname=fname, par=par, rng="prange" if par else "range")
    return src


# ---- runners ---------------------------------------------------------------------------------
_row_cache: dict = {}
_cache_lock = threading.Lock()


def _row_offsets(lead, strides, offset):
    key = (lead, strides, offset)
    ro = _row_cache.get(key)
    if ro is None:
        ro = np.full(lead if lead else (1,), offset, np.int64)
        for d, (n, s) in enumerate(zip(lead, strides)):
            shp = [1] * len(lead)
            shp[d] = n
            ro = ro + (np.arange(n, dtype=np.int64) * s).reshape(shp)
        ro = np.ascontiguousarray(ro.reshape(-1))
        with _cache_lock:
            if len(_row_cache) > 256:
                _row_cache.clear()
            _row_cache[key] = ro
    return ro


def _kind_of(t) -> str:
    return f"{t.dtype.name}[{len(t.shape)}d]"


def compile_group(node):
    """The callable running a prim::FusionGroup node: ``run(*inputs) -> tuple of outputs``."""
    from ..kernels.cpu.casting import kernel_array
    from ..kernels.cpu.pointwise import load_generated_module
    from ..runtime.cpu import cores
    from ..runtime.cpu.streams import launch
    sub = node.attrs["subgraph"]
    mode = node.attrs.get("mode", "pw")
    if sub.outputs[0].type.device != "cpu":
        from .fuser_cuda import compile_group_cuda
        names = [n.op_name for n in sub.nodes if n.kind != "prim::Constant"]
        return compile_group_cuda(node, "fused_" + "_".join(names))
    gen = _Gen(sub)
    name = "fused_" + "_".join(gen.names)
    # No shapes in the source (the kernels take them as arguments): the same chain specialized
    # for another shape is the same module, compiled once per process and cached once on disk.
    what = (f"{name} {[_kind_of(v.type) for v in sub.inputs]} -> "
            f"{[_kind_of(o.type) for o in sub.outputs]}")
    values = [v for _, v in gen.params]
    out_types = [o.type for o in sub.outputs]
    src = {"pw": _pointwise_source, "rows": _rows_source, "all": _all_source}[mode](
        gen, sub, what)
    mod = load_generated_module("jit", src)
    label = name if len(name) <= 120 else name[:117] + "..."

    if mode == "pw":
        shape = out_types[0].shape
        ndim = len(shape)
        numel = math.prod(shape)

        layouts = {}  # per inputs' (strides, offsets): outputs' strides, loop meta, dense?
        flat = types.SimpleNamespace(serial=mod.flat_serial, parallel=mod.flat_parallel)
        nbytes = [numel * t.dtype.itemsize for t in out_types]
        dtypes = [t.dtype for t in out_types]

        def layout(ins):
            order = next((t for t in ins if t._shape == shape), None)
            dev = order.device if order is not None else ins[0].device
            # the eager output's layout: the first full-shape input's memory order
            ostr = empty_strided_like_order(shape, dtypes[0], dev, order)._strides
            strides = [ostr] * len(out_types) + [
                tuple(broadcast_strides(t._shape, t._strides, ndim)) for t in ins]
            perm = sorted((d for d in range(ndim) if shape[d] != 1), key=lambda d: abs(ostr[d]))
            cshape, cstr = coalesce([shape[d] for d in perm], [[s[d] for d in perm]
                                                                for s in strides])
            meta = np.array((len(cshape),) + cshape + sum(cstr, ()) +
                            (0,) * len(out_types) + tuple(t._offset for t in ins), np.int64)
            dense = all(t._shape == shape and t.is_contiguous() for t in ins) and (
                ostr == contiguous_strides(shape))
            return ostr, meta, dense

        def run(*ins):
            key = tuple((t._strides, t._offset) for t in ins)
            lay = layouts.get(key)
            if lay is None:
                if len(layouts) > 64:
                    layouts.clear()
                lay = layouts[key] = layout(ins)
            ostr, meta, _ = lay
            dev = ins[0]._storage.device
            outs = [Tensor._make(Storage.allocate(nb, dev), shape, ostr, 0, dt)
                    for nb, dt in zip(nbytes, dtypes)]
            if numel == 0:
                return tuple(outs)
            ops = outs + list(ins)
            arrays = [kernel_array(t) for t in ops]
            if lay[2]:
                args = (numel, *arrays, *[t._offset for t in ops], *values)
                m = flat
            else:
                args = (meta, *arrays, *values)
                m = mod
            fn = m.serial
            if numel >= GRAIN and cores.parallel_ready(m, args, numel):
                fn = m.parallel
            launch(fn, label, outs, ops, *args)
            return tuple(outs)
    else:
        shape = next(n.inputs[0].type.shape for n in sub.nodes if n.op_name in _REDUCE_OPS)
        R = math.prod(shape[:-1])
        C = shape[-1]
        lead = tuple(shape[:-1])
        nd = len(shape)
        if mode == "all":
            # C elements read flat (_all_source): the grouping admitted only inputs that are
            # contiguous with the group's shape or single elements
            R, C, lead = 1, math.prod(shape), ()
        RB = max(1, min(64, R // 32))
        CB = 4096  # column block: the reduction buffer stays in L1/L2

        def operand(t, output=False):
            if output and t._shape == lead:  # a non-keepdims reduction result
                full = tuple(t._strides) + (0,)
            else:
                full = broadcast_strides(t._shape, t._strides, nd)
            return _row_offsets(lead, tuple(full[:-1]), t._offset), full[-1], kernel_array(t)

        # The kernel was generated for the observed layouts: inputs read with unit column
        # stride (contiguous when specialized) or, in an all-axes group, as one flat row. A
        # call whose inputs are laid out otherwise (not expected: the guard fixes the graph
        # inputs' contiguity) runs the group's ops one by one instead of reading wrongly.
        unit = [v.type.contiguous and (v.type.shape[-1] if v.type.shape else 1) != 1
                for v in sub.inputs]
        fallback = None

        def layout_ok(ins):
            for t, u in zip(ins, unit):
                if mode == "all":
                    if t._numel > 1 and not (t._shape == shape and t.is_contiguous()):
                        return False
                elif u and t._strides[-1] != 1:
                    return False
            return True

        def run(*ins):
            nonlocal fallback
            if not layout_ok(ins):
                if fallback is None:
                    from .interpreter import Interpreter
                    fallback = Interpreter(sub)
                return tuple(fallback(*ins))
            dev = ins[0].device
            outs = [empty_strided_like_order(t.shape, t.dtype, dev, None) for t in out_types]
            if mode == "all":  # flat operands: (array, element offset) each
                args = [C, ALL_BLOCK, CB]
                for t in outs + list(ins):
                    args += (kernel_array(t), t._offset)
            else:
                args = [R, C, RB, CB]
                for o in outs:
                    args += operand(o, True)
                for t in ins:
                    args += operand(t)
            args += values
            fn = mod.serial
            if R * C >= GRAIN and cores.parallel_ready(mod, tuple(args), R * C):
                fn = mod.parallel
            launch(fn, label, outs, list(ins), *args)
            return tuple(outs)
    run.__name__ = name
    run.source = src
    return run


def fuse_and_compile(graph: Graph) -> dict:
    """Fuses ``graph`` (in place) and compiles every group: {FusionGroup node: runner}."""
    return {n: compile_group(n) for n in fuse(graph)}

