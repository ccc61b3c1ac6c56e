"""CPU code generation for fusion groups: the Numba source of one prim::FusionGroup's kernel
(jit/fuser.py loads and runs it).

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

from .. import dtypes as _dt
from ..kernels.cpu.pointwise import TILE as _EAGER_TILE, tile_loop_head
from .fuser_groups import REDUCE_OPS, ROW_VIEWS, const_value, node_dtypes
from .passes import pointwise_info

__all__ = ["Gen", "pointwise_source", "rows_source", "all_source", "TILE"]

TILE = _EAGER_TILE  # the fused loops tile as the eager kernels do (tile_loop_head)


class _Rename(ast.NodeTransformer):
    def __init__(self, mapping, units=()):
        self.mapping = mapping
        self.units = units

    def visit_Name(self, node):
        new = self.mapping.get(node.id)
        if new is not None:
            return ast.copy_location(ast.Name(id=new, ctx=node.ctx), node)
        return node

    def visit_Call(self, node):
        # scale(alpha, other) with a constant alpha of 1 is other, bit for bit (1 * y == y for
        # every real y, quiet NaNs keep their payload; `1 and b` is b): one multiply fewer
        # per element in a compute-bound group (add / subtract's default alpha)
        if (isinstance(node.func, ast.Name) and node.func.id == "scale" and len(node.args) == 2
                and isinstance(node.args[0], ast.Name) and node.args[0].id in self.units):
            return self.visit(node.args[1])
        return self.generic_visit(node)


def _rename(expr, mapping, units=()) -> str:
    """``expr`` with its argument names replaced by ``mapping``'s; ``units`` names the Scalar
    arguments whose constant is exactly 1 in a real compute dtype."""
    tree = ast.parse(expr, mode="eval")
    return ast.unparse(_Rename(mapping, units).visit(tree))


class Gen:
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
            if n.op_name in ROW_VIEWS:
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
                    local = self._param(_dt.scalar_to_compute(const_value(v), target, info.name,
                                                              name))
                mapping[name] = local
            units = set()
            for name in info.scalar_args:
                value = _dt.scalar_to_compute(const_value(args[name]), compute, info.name, name)
                if compute.kind != "c" and value == 1:
                    units.add(name)
                else:
                    mapping[name] = self._param(value)
            body = _rename(info.expr, mapping, units)
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


def pointwise_source(gen, sub, what):
    outs = sub.outputs
    ins = sub.inputs
    nops = len(outs) + len(ins)
    onames = [f"o{i}" for i in range(len(outs))]
    anames = [f"a{j}" for j in range(len(ins))]
    arrays = onames + anames
    params = [p for p, _ in gen.params]
    body_nodes = gen.deps(outs)
    src = _HEADER.format(what=what) + "from tensorlib.kernels.cpu.addresses import array_at\n"
    for fname, par in (("serial", False), ("parallel", True)):
        L = tile_loop_head(fname, par, arrays + params, nops, p="q")
        L += [f"        if {' and '.join(f's{k} == 1' for k in range(nops))}:"]
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
    # The tile's loop is a function of its own: inlined into the tile loop, LLVM ran out of
    # vector registers for the body's constants and reloaded them on every iteration (the
    # tanh-GELU's loop: 78 instructions instead of 52, 2.4 instead of 2.2 ms on 4e6, 1 thread).
    wins = [f"w{k}" for k in range(nops)]
    ind = " " * 8
    L = ["@njit(cache=True, nogil=True, error_model='numpy')",
         f"def flat_tile({', '.join(['m'] + wins + params)}):",
         "    for i in range(m):"]
    L += [f"{ind}x{j} = w{len(outs) + j}[i]" for j in range(len(ins))]
    for n in body_nodes:
        L += [ind + s for s in gen.stmts[n]]
    L += [f"{ind}w{i}[i] = {gen.var[o]}" for i, o in enumerate(outs)]
    src += "\n" + "\n".join(L) + "\n"
    # Its operands come as raw addresses (kernels/cpu/addresses.py), as the eager flat loops'
    # do: an int argument passes in ~50 ns, an array several times that (a traced call on
    # small tensors is mostly such set-up).
    elems = [_np_kernel_name(v.type.dtype) for v in list(outs) + list(ins)]
    tile_args = ["stop - start"] + [f"{arr}[start:stop]" for arr in arrays] + params
    for fname, par in (("flat_serial", False), ("flat_parallel", True)):
        rng = "prange" if par else "range"
        L = [f"@njit(cache=True, nogil=True, error_model='numpy', parallel={par})",
             f"def {fname}({', '.join(['n'] + [a + '_addr' for a in arrays] + params)}):"]
        L += [f"    {arr} = array_at({arr}_addr, n, np.{el})" for arr, el in zip(arrays, elems)]
        L += [f"    ntiles = (n + {TILE - 1}) // {TILE}",
              f"    for t in {rng}(ntiles):",
              f"        start = t * {TILE}",
              f"        stop = min(n, start + {TILE})",
              f"        flat_tile({', '.join(tile_args)})"]
        src += "\n" + "\n".join(L) + "\n"
    return src


def _np_kernel_name(dtype) -> str:
    return "uint16" if dtype.itemsize == 2 and dtype.kind == "f" else dtype.storage_np_dtype.name


def rows_source(gen, sub, what):
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
    reds = [n for n in sub.nodes if n.op_name in REDUCE_OPS]
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
                if (n in done or n.kind == "prim::Constant" or n.op_name in REDUCE_OPS
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



def all_source(gen, sub, what):
    """An all-axes group: the elements in blocks of ALL_BLOCK (jit/fuser.py passes it as BL),
    each reduced (a parallel loop) into one float64 partial (column blocks through a buffer, as
    the rows kernels do), the partials then folded in order: the same bits serial or parallel,
    on any thread count. Inputs are single elements (loaded once) or contiguous with the
    group's shape (read flat); element outputs are stored flat in the same pass."""
    outs, ins = sub.outputs, sub.inputs
    red = next(n for n in sub.nodes if n.op_name in REDUCE_OPS)
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
    # slices indexed from 0: LLVM vectorizes (see rows_source)
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
