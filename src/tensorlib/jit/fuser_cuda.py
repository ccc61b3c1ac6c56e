"""Fusion groups on CUDA: one generated Triton kernel per group, from the ops' YAML
expressions through the eager CUDA generator's pieces (kernels/cuda/pointwise.py: ``translate``
for the expression, ``load_code`` / ``store_code`` / ``cast_code`` / ``scalar_code`` for
values, the same launch plumbing, block sizes and 32/64-bit index choice).

As on the CPU, each node's result is kept as the value eager would read back after storing it
(``load_code(store_code(...))``: half types round, bool becomes 0/1), so a fused chain gives
what the chain of eager kernels gives. Real dtypes only (complex groups are not formed on
CUDA).

Groups with reductions (fuser.py's modes) follow the eager CUDA reductions
(kernels/cuda/reduction.py): the accumulator is the iterator's compute dtype (float32 for the
half types), per-lane partial sums over column blocks then a tree across lanes, max / min
propagate nan (``tl.where((b > a) | (b != b), b, a)``), mean divides the sum in float64.
- *rows* (a reduction over the last axis, and the softmax / normalization pattern): each
  program owns RB rows (1 for rows of 1024+ elements; short rows share a program), a loop over
  [RB, BLOCK] column blocks per reduction (recomputing the element values it reduces:
  registers, no memory traffic), row-level nodes as [RB, 1] columns once their inputs exist,
  and a last loop storing the element outputs.
- *all* (a pointwise group ending in a reduction over every axis): stage 1 walks the elements
  in chunks (the pointwise kernel's coalesced N-d indexing), storing element outputs and one
  partial accumulator per program; stage 2, one program, combines the partials and finishes.
"""
from __future__ import annotations

import math

from .. import dtypes as _dt
from ..allocation import empty_strided_like_order
from ..shape import broadcast_strides, coalesce
from .fuser_groups import REDUCE_OPS, ROW_VIEWS
from .ir import Graph

__all__ = ["compile_group_cuda"]


# (BLOCK, num_warps) of the reduction kernels on a GPU: rows (a program's tile: RB rows times
# a column block, RB * BLOCK elements), all (stage 1's block), fin (stage 2: the partials, at
# most 4 programs per SM)
RED_CONFIG = {"rows": (1024, 8), "all": (1024, 8), "fin": (1024, 4)}


class _Code:
    """Per-node statements of a subgraph (``stmts[node]``), the variable holding each value
    (external inputs ``x<j>``, node results ``v<k>``, in the value type of the dtype eager
    stores) and the scalar operands passed as (lo, hi) words."""

    def __init__(self, sub: Graph):
        from ..dispatch import dispatcher
        from ..kernels.cuda import pointwise_source as cp
        from .fuser_groups import const_value, node_dtypes
        from .passes import pointwise_info
        self.sub = sub
        self.scalars, self.words = [], []
        self.var, self.dtype, self.stmts = {}, {}, {}
        for j, v in enumerate(sub.inputs):
            self.var[v], self.dtype[v] = f"x{j}", v.type.dtype
        for k, n in enumerate(sub.nodes):
            if n.kind == "prim::Constant":
                continue
            out = n.outputs[0]
            if n.op_name in REDUCE_OPS:
                self.var[out], self.dtype[out] = f"v{k}", out.type.dtype
                continue  # emitted by the reduction kernels
            if n.op_name in ROW_VIEWS:  # a row value re-indexed: the same register
                self.var[out], self.dtype[out] = f"v{k}", out.type.dtype
                self.stmts[n] = [f"v{k} = {self.var[n.inputs[0]]}"]
                continue
            info = pointwise_info(n)
            schema = dispatcher.get_op(n.op_name).schema
            args = dict(zip([a.name for a in schema.arguments], n.inputs))
            compute, store = node_dtypes(info, n)
            body, names = [], {}
            for name in info.tensor_args:
                v = args[name]
                target = _dt.bool_ if name in info.bool_args else compute
                local = f"n{k}_{name}"
                if v.is_tensor:
                    body.append(f"{local} = {cp.cast_code(self.dtype[v], target, self.var[v])}")
                else:
                    sv = _dt.scalar_to_compute(const_value(v), target, info.name, name)
                    body.append(f"{local} = {self._param(sv, target)}")
                names[name] = local
            for name in info.scalar_args:
                sv = _dt.scalar_to_compute(const_value(args[name]), compute, info.name, name)
                names[name] = f"n{k}_{name}"
                body.append(f"{names[name]} = {self._param(sv, compute)}")
            bool_arith = compute is _dt.bool_
            body.append(f"r{k} = {cp.translate(info.expr, names, bool_arith)}")
            result = info.result_dtype(compute)
            if bool_arith and result is _dt.bool_:
                body.append(f"r{k} = to_bool(r{k})")
            stored = cp.store_code(store, cp.cast_code(result, store, f"r{k}"))
            self.var[out], self.dtype[out] = f"v{k}", store
            body.append(f"v{k} = {cp.load_code(store, stored)}")
            self.stmts[n] = body

    def _param(self, value, dtype):
        from ..kernels.cuda import pointwise_source as cp
        name = f"s{len(self.scalars)}"
        self.scalars.append((value, dtype))
        self.words.extend((f"{name}_lo", f"{name}_hi"))
        return cp.scalar_code(dtype, f"{name}_lo", f"{name}_hi")

    def deps(self, targets, stop=()):
        """Nodes needed for ``targets`` (values), in order, not crossing ``stop`` values."""
        need, stack = set(), list(targets)
        while stack:
            v = stack.pop()
            n = v.node
            if n is None or n.kind == "prim::Constant" or v in stop or n in need:
                continue
            need.add(n)
            stack += n.inputs
        return [n for n in self.sub.nodes if n in need]

    def inputs_of(self, nodes, targets=()):
        ins = []
        for v in [v for n in nodes for v in n.inputs] + list(targets):
            if v.node is None and v not in ins:
                ins.append(v)
        return ins


def _source(sub: Graph, ndim: int, fname: str):
    """A pointwise group's kernel: (source, scalar values [(value, dtype)] in word order)."""
    from ..kernels.cuda import pointwise_source as cp
    code = _Code(sub)
    outs, ins = sub.outputs, sub.inputs
    ops = [f"o{i}" for i in range(len(outs))] + [f"a{j}" for j in range(len(ins))]
    body = []
    index, offs = cp._offsets(ndim, ops)
    body += index
    for j, v in enumerate(ins):
        ld = f"tl.load(p_a{j} + {offs['a' + str(j)]}, mask=mask)"
        body.append(f"x{j} = {cp.load_code(v.type.dtype, ld)}")
    for n in code.deps(outs):
        body += code.stmts[n]
    for i, o in enumerate(outs):
        body.append(f"tl.store(p_o{i} + {offs['o' + str(i)]}, "
                    f"{cp.store_code(code.dtype[o], code.var[o])}, mask=mask)")
    words = code.words
    params = [f"p_{o}" for o in ops] + words + ["n"]
    if ndim:
        params += [f"size{d}" for d in range(ndim)]
        params += [f"st_{o}_{d}" for o in ops for d in range(ndim)]
    params += ["BLOCK: tl.constexpr", "IDX64: tl.constexpr"]
    layout = f"nd{ndim}" if ndim else "contig"
    lines = [f"# Generated by tensorlib.jit.fuser_cuda: {fname}, {layout}",
             "", "", f"@jit(do_not_specialize={words!r})",
             f"def {fname}({', '.join(params)}):",
             "    pid = tl.program_id(0)",
             "    if IDX64:",
             "        lin = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)",
             "    else:",
             "        lin = pid * BLOCK + tl.arange(0, BLOCK)",
             "    mask = lin < n"]
    lines += ["    " + b for b in body]
    return "\n".join(lines) + "\n", code.scalars


# ---- reductions --------------------------------------------------------------------------------
def _acc_dtype(dtype):
    # the eager iterator's compute dtype of a float reduction: half types accumulate in float32
    return _dt.float32 if dtype in (_dt.float16, _dt.bfloat16) else dtype


def _combine_defs():
    """The combine functions (nan propagates through max / min, as eager's)."""
    return ["@jit", "def comb_sum(a, b):", "    return a + b", "", "",
            "@jit", "def comb_max(a, b):", "    return tl.where((b > a) | (b != b), b, a)", "",
            "", "@jit", "def comb_min(a, b):", "    return tl.where((b < a) | (b != b), b, a)",
            "", ""]


def _init_lit(op):
    return {"sum": "0.0", "mean": "0.0", "max": "float('-inf')", "min": "float('inf')"}[op]


def _comb(op):
    return "comb_sum" if op in ("sum", "mean") else f"comb_{op}"


def _lane_reduce(acc, op, out, ind, block="BLOCK"):
    """Statements reducing the lanes of vector ``acc`` into scalar ``out``: a halving tree in
    the interpreter (its tl.reduce calls the combine once per element in Python), tl.reduce
    on a GPU."""
    c = _comb(op)
    return [f"{ind}if TREE:",
            f"{ind}    t_{out} = {acc}",
            f"{ind}    for _ in tl.static_range({block}.bit_length() - 1):",
            f"{ind}        ta_{out}, tb_{out} = tl.split(tl.reshape(t_{out}, "
            f"(t_{out}.shape[0] // 2, 2)))",
            f"{ind}        t_{out} = {c}(ta_{out}, tb_{out})",
            f"{ind}    {out} = tl.reshape(t_{out}, ())",  # one element left
            f"{ind}else:",
            f"{ind}    {out} = tl.reduce({acc}, 0, {c})"]


def _finish(code, red, tot, count):
    """The statement giving the reduction's result variable from accumulator scalar ``tot``:
    what eager stores (mean: the sum in float64 divided by ``count``), read back."""
    from ..kernels.cuda import pointwise_source as cp
    out_dt = red.outputs[0].type.dtype
    acc = _acc_dtype(red.inputs[0].type.dtype)
    if red.op_name == "mean":
        val, val_dt = f"({tot}).to(tl.float64) / {count}", _dt.float64
    else:
        val, val_dt = tot, acc
    stored = cp.store_code(out_dt, cp.cast_code(val_dt, out_dt, val))
    return f"{code.var[red.outputs[0]]} = {cp.load_code(out_dt, stored)}"


def _acc_update(code, red, acc, ind, tile="(BLOCK,)"):
    from ..kernels.cuda import pointwise_source as cp
    x = red.inputs[0]
    acc_dt = _acc_dtype(x.type.dtype)
    tlt = cp.VALUE_TL[acc_dt]
    val = f"({cp.cast_code(code.dtype[x], acc_dt, code.var[x])}).to({tlt})"
    return [f"{ind}{acc} = {_comb(red.op_name)}({acc}, tl.where(mask, {val}, "
            f"tl.full({tile}, {_init_lit(red.op_name)}, {tlt})))"]


def _row_lane_reduce(acc, op, out, ind):
    """Statements reducing the [RB, BLOCK] tile ``acc`` along its columns into ``out``, an
    [RB, 1] column (the interpreter: a halving tree, as _lane_reduce)."""
    c = _comb(op)
    return [f"{ind}if TREE:",
            f"{ind}    {out} = {acc}",
            f"{ind}    for _ in tl.static_range(BLOCK.bit_length() - 1):",
            f"{ind}        ta_{out}, tb_{out} = tl.split(tl.reshape({out}, "
            f"(RB, {out}.shape[1] // 2, 2)))",
            f"{ind}        {out} = {c}(ta_{out}, tb_{out})",
            f"{ind}else:",
            f"{ind}    {out} = tl.reduce({acc}, 1, {c})[:, None]"]


def _rows_source(sub: Graph, nlead: int, fname: str):
    """A rows group's kernel: each program owns RB rows (a [RB, BLOCK] tile per column block:
    short rows share a program); row-level values are [RB, 1] columns."""
    from ..kernels.cuda import pointwise_source as cp
    code = _Code(sub)
    outs, ins = sub.outputs, sub.inputs
    reds = [n for n in sub.nodes if n.op_name in REDUCE_OPS]
    shape = tuple(reds[0].inputs[0].type.shape)
    ops = [f"o{i}" for i in range(len(outs))] + [f"a{j}" for j in range(len(ins))]

    def is_elem(v):
        return tuple(v.type.shape) == shape

    row_in = {v for v in ins if (v.type.shape[-1] if v.type.shape else 1) == 1}
    params = [f"p_{o}" for o in ops] + code.words + ["R", "C"]
    params += [f"ls{d}" for d in range(nlead)]
    params += [f"st_{o}_{d}" for o in ops for d in range(nlead)]
    params += [f"cs_{o}" for o in ops]
    params += ["RB: tl.constexpr", "BLOCK: tl.constexpr", "TREE: tl.constexpr",
               "IDX64: tl.constexpr"]
    L = [f"# Generated by tensorlib.jit.fuser_cuda: {fname}, rows, {nlead} leading dims", "",
         ""] + _combine_defs()
    L += [f"@jit(do_not_specialize={code.words!r})",
          f"def {fname}({', '.join(params)}):",
          "    pid = tl.program_id(0)",
          "    if IDX64:",
          "        row = pid.to(tl.int64) * RB + tl.arange(0, RB).to(tl.int64)",
          "        cols = tl.arange(0, BLOCK).to(tl.int64)",
          "    else:",
          "        row = pid * RB + tl.arange(0, RB)",
          "        cols = tl.arange(0, BLOCK)",
          "    rmask = (row < R)[:, None]",
          "    rem = row"]
    # leading coordinates, innermost first, dotted with each operand's strides
    for d in range(nlead - 1):
        L += [f"    j{d} = rem % ls{d}", f"    rem = rem // ls{d}"]
    if nlead:
        L.append(f"    j{nlead - 1} = rem")
    for o in ops:
        terms = " + ".join(f"j{d} * st_{o}_{d}" for d in range(nlead)) if nlead else "row * 0"
        L.append(f"    b_{o} = ({terms})[:, None]")
    for v in ins:
        if v in row_in:
            j = ins.index(v)
            ld = f"tl.load(p_a{j} + b_a{j}, mask=rmask, other=0)"
            L.append(f"    x{j} = {cp.load_code(v.type.dtype, ld)}")
    done = set()

    def row_values():
        return {o for n in done for o in n.outputs} | set(row_in)

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
                    L.extend("    " + s for s in code.stmts[n])
                    done.add(n)
                    progress = True

    def emit_pass(targets):
        """A loop over the row's column blocks computing ``targets`` (element values)."""
        nodes = [n for n in code.deps(targets, stop=row_values()) if n not in done]
        L.extend(["    for cb in range(0, C, BLOCK):",
                  "        c = (cb + cols)[None, :]",
                  "        mask = rmask & (c < C)"])
        for v in code.inputs_of(nodes, [t for t in targets if t.node is None]):
            if v not in row_in:
                j = ins.index(v)
                ld = f"tl.load(p_a{j} + b_a{j} + c * cs_a{j}, mask=mask, other=0)"
                L.append(f"        x{j} = {cp.load_code(v.type.dtype, ld)}")
        for n in nodes:
            L.extend("        " + s for s in code.stmts[n])

    emit_row_nodes()
    for r, red in enumerate(reds):
        acc_dt = _acc_dtype(red.inputs[0].type.dtype)
        L.append(f"    acc{r} = tl.full((RB, BLOCK), {_init_lit(red.op_name)}, "
                 f"{cp.VALUE_TL[acc_dt]})")
        emit_pass([red.inputs[0]])
        L += _acc_update(code, red, f"acc{r}", "        ", "(RB, BLOCK)")
        L += _row_lane_reduce(f"acc{r}", red.op_name, f"tot{r}", "    ")
        L.append("    " + _finish(code, red, f"tot{r}", "C"))
        done.add(red)
        emit_row_nodes()
    elem_outs = [(i, o) for i, o in enumerate(outs) if is_elem(o)]
    if elem_outs:
        emit_pass([o for _, o in elem_outs])
        for i, o in elem_outs:
            L.append(f"        tl.store(p_o{i} + b_o{i} + c * cs_o{i}, "
                     f"{cp.store_code(code.dtype[o], code.var[o])}, mask=mask)")
    for i, o in enumerate(outs):
        if not is_elem(o):
            L.append(f"    tl.store(p_o{i} + b_o{i}, "
                     f"{cp.store_code(code.dtype[o], code.var[o])}, mask=rmask)")
    return "\n".join(L) + "\n", code.scalars


def _all_source(sub: Graph, ndim: int, fname: str):
    """An all-axes group's two kernels ``fname`` (stage 1) and ``fname_fin`` (stage 2)."""
    from ..kernels.cuda import pointwise_source as cp
    code = _Code(sub)
    outs, ins = sub.outputs, sub.inputs
    red = next(n for n in sub.nodes if n.op_name in REDUCE_OPS)
    x = red.inputs[0]
    ridx = outs.index(red.outputs[0])
    elem = [(i, o) for i, o in enumerate(outs) if i != ridx]
    ops = [f"o{i}" for i, _ in elem] + [f"a{j}" for j in range(len(ins))]
    acc_dt = _acc_dtype(x.type.dtype)
    tlt = cp.VALUE_TL[acc_dt]
    params = [f"p_{o}" for o in ops] + ["p_part"] + code.words + ["n", "chunk"]
    if ndim:
        params += [f"size{d}" for d in range(ndim)]
        params += [f"st_{o}_{d}" for o in ops for d in range(ndim)]
    params += ["BLOCK: tl.constexpr", "TREE: tl.constexpr", "IDX64: tl.constexpr"]
    L = [f"# Generated by tensorlib.jit.fuser_cuda: {fname}, all-axes {red.op_name}, "
         f"{f'nd{ndim}' if ndim else 'contig'}", "", ""] + _combine_defs()
    L += [f"@jit(do_not_specialize={code.words!r})",
          f"def {fname}({', '.join(params)}):",
          "    pid = tl.program_id(0)",
          "    if IDX64:",
          "        lo = pid.to(tl.int64) * chunk",
          "        ar = tl.arange(0, BLOCK).to(tl.int64)",
          "    else:",
          "        lo = pid * chunk",
          "        ar = tl.arange(0, BLOCK)",
          f"    acc = tl.full((BLOCK,), {_init_lit(red.op_name)}, {tlt})",
          "    for start in range(lo, lo + chunk, BLOCK):",
          "        lin = start + ar",
          "        mask = lin < n"]
    index, offs = cp._offsets(ndim, ops)
    L += ["        " + s for s in index]
    nodes = code.deps([x] + [o for _, o in elem])
    for v in code.inputs_of(nodes, [x]):
        j = ins.index(v)
        ld = f"tl.load(p_a{j} + {offs['a' + str(j)]}, mask=mask, other=0)"
        L.append(f"        x{j} = {cp.load_code(v.type.dtype, ld)}")
    for n in nodes:
        L += ["        " + s for s in code.stmts[n]]
    for i, o in elem:
        L.append(f"        tl.store(p_o{i} + {offs['o' + str(i)]}, "
                 f"{cp.store_code(code.dtype[o], code.var[o])}, mask=mask)")
    L += _acc_update(code, red, "acc", "        ")
    L += _lane_reduce("acc", red.op_name, "tot", "    ")
    L += ["    tl.store(p_part + pid, tot)", "", "",
          "@jit",
          f"def {fname}_fin(p_out, p_part, nparts, n, BLOCK: tl.constexpr, "
          "TREE: tl.constexpr):",
          "    i = tl.arange(0, BLOCK)",
          "    mask = i < nparts",
          f"    acc = tl.where(mask, tl.load(p_part + i, mask=mask, other=0), "
          f"tl.full((BLOCK,), {_init_lit(red.op_name)}, {tlt}))"]
    L += _lane_reduce("acc", red.op_name, "tot", "    ")
    L.append("    " + _finish(code, red, "tot", "n"))
    res = red.outputs[0]
    L.append(f"    tl.store(p_out, {cp.store_code(code.dtype[res], code.var[res])})")
    return "\n".join(L) + "\n", code.scalars


def compile_group_cuda(node, name):
    """The runner of a prim::FusionGroup on CUDA: ``run(*inputs) -> outputs``."""
    mode = node.attrs.get("mode", "pw")
    fname = name if len(name) <= 60 else name[:60].rstrip("_")
    if mode == "rows":
        run = _rows_runner(node, fname)
    elif mode == "all":
        run = _all_runner(node, fname)
    else:
        run = _pw_runner(node, fname)
    run.__name__ = name
    return run


def _module_for(kernels, key, make):
    """(module, words) of the source ``make()`` gives, built once per ``key``."""
    from ..kernels.cuda import launch as _launch
    from ..kernels.cuda import pointwise as cp
    k = kernels.get(key)
    if k is None:
        src, scalars = make()
        mod = _launch.generated_module("jit", src, key[-1])
        words = []
        for value, dtype in scalars:
            words += cp._scalar_words(value, dtype)
        k = kernels[key] = (mod, words)
    return k


def _pw_runner(node, fname):
    from ..kernels.cuda import launch as _launch
    from ..kernels.cuda import pointwise as cp
    sub = node.attrs["subgraph"]
    out_types = [o.type for o in sub.outputs]
    shape = out_types[0].shape
    nd = len(shape)
    numel = math.prod(shape)
    kernels = {}

    def run(*ins):
        order = next((t for t in ins if t._shape == shape), None)
        dev = order.device if order is not None else ins[0].device
        outs = [empty_strided_like_order(shape, t.dtype, dev, order) for t in out_types]
        if numel == 0:
            return tuple(outs)
        ops = outs + list(ins)
        strides = [o._strides for o in outs] + [
            tuple(broadcast_strides(t._shape, t._strides, nd)) for t in ins]
        o0 = outs[0]._strides
        perm = sorted((d for d in range(nd) if shape[d] != 1), key=lambda d: abs(o0[d]))
        cshape, cstr = coalesce([shape[d] for d in perm], [[s[d] for d in perm] for s in strides])
        contig = len(cshape) == 1 and all(s == (1,) for s in cstr)
        ndim = 0 if contig else len(cshape)
        mode = _launch.current_mode()
        mod, words = _module_for(kernels, (ndim, mode), lambda: _source(sub, ndim, fname))
        operands = [cp._operand(t, s, t._offset) for t, s in zip(ops, cstr)]
        tail = [numel]
        if ndim:
            tail += list(cshape)
            for s in cstr:
                tail += list(s)
        block, warps = cp._block(numel, "nd" if ndim else "contig", mode)
        _launch.launch(getattr(mod, fname), (_launch.cdiv(numel, block),),
                       [op.arg for op in operands] + words + tail, dev.index or 0,
                       BLOCK=block, IDX64=not cp._fits_32bit(cshape, operands),
                       num_warps=warps, enable_fp_fusion=False)
        return tuple(outs)
    return run


def _rows_warps(rb, block):
    tile, warps = RED_CONFIG["rows"]
    return warps if rb == 1 else max(1, min(warps, rb * block // 64))


def _rows_runner(node, fname):
    from ..kernels.cuda import launch as _launch
    from ..kernels.cuda import pointwise as cp
    sub = node.attrs["subgraph"]
    out_types = [o.type for o in sub.outputs]
    shape = tuple(next(n.inputs[0].type.shape for n in sub.nodes if n.op_name in REDUCE_OPS))
    nd = len(shape)
    lead = shape[:-1]
    R, C = math.prod(lead), shape[-1]
    nlead = nd - 1
    kernels = {}

    def run(*ins):
        dev = ins[0].device
        outs = [empty_strided_like_order(t.shape, t.dtype, dev, None) for t in out_types]
        if R == 0:
            return tuple(outs)
        mode = _launch.current_mode()
        mod, words = _module_for(kernels, (mode,), lambda: _rows_source(sub, nlead, fname))
        full = [tuple(t._strides) + (0,) if tuple(t._shape) == lead  # non-keepdims row
                else tuple(broadcast_strides(t._shape, t._strides, nd)) for t in outs]
        full += [tuple(broadcast_strides(t._shape, t._strides, nd)) for t in ins]
        operands = [cp._operand(t, s, t._offset) for t, s in zip(outs + list(ins), full)]
        args = [op.arg for op in operands] + words + [R, C]
        args += [lead[nlead - 1 - d] for d in range(nlead)]  # innermost first
        for s in full:
            args += [s[nlead - 1 - d] for d in range(nlead)]
        args += [s[-1] for s in full]
        if mode == "interpret":  # a few rows per program, so tests reach masked rows
            block, warps = min(_launch.next_pow2(C), cp.INTERPRET_MAX_BLOCK), 4
            rb = min(_launch.next_pow2(R), 4)
        else:
            tile, warps = RED_CONFIG["rows"]
            block = min(tile, max(16, _launch.next_pow2(C)))
            # short rows share a program: tiles of half as many elements, 2 per thread
            # (a full tile of several rows spilled a row norm's registers on sm_80)
            rb = 1 if block == tile else min(tile // 2 // block, _launch.next_pow2(R))
            warps = _rows_warps(rb, block)
        # rows past R (the last program's tail) index within int32 too
        idx64 = not cp._fits_32bit(shape, operands) or R + rb > 2 ** 31 - 1
        _launch.launch(getattr(mod, fname), (_launch.cdiv(R, rb),), args, dev.index or 0,
                       RB=rb, BLOCK=block, TREE=mode == "interpret", IDX64=idx64,
                       num_warps=warps, enable_fp_fusion=False)
        return tuple(outs)
    return run


def _all_runner(node, fname):
    from ..allocation import empty
    from ..kernels.cuda import launch as _launch
    from ..kernels.cuda import pointwise as cp
    sub = node.attrs["subgraph"]
    out_types = [o.type for o in sub.outputs]
    red = next(n for n in sub.nodes if n.op_name in REDUCE_OPS)
    ridx = list(sub.outputs).index(red.outputs[0])
    shape = tuple(red.inputs[0].type.shape)
    acc_dt = _acc_dtype(red.inputs[0].type.dtype)
    nd = len(shape)
    numel = math.prod(shape)
    kernels = {}

    def run(*ins):
        order = next((t for t in ins if t._shape == shape), None)
        dev = order.device if order is not None else ins[0].device
        outs = [empty_strided_like_order(t.shape, t.dtype, dev,
                                         order if i != ridx else None)
                for i, t in enumerate(out_types)]
        elem = [o for i, o in enumerate(outs) if i != ridx]
        ops = elem + list(ins)
        strides = [tuple(broadcast_strides(t._shape, t._strides, nd)) for t in ops]
        # the loop layout: the first full-shape operand's memory order
        ref = next((s for t, s in zip(ops, strides) if t._shape == shape), strides[0])
        perm = sorted((d for d in range(nd) if shape[d] != 1), key=lambda d: abs(ref[d]))
        cshape, cstr = coalesce([shape[d] for d in perm], [[s[d] for d in perm] for s in strides])
        contig = len(cshape) == 1 and all(s == (1,) for s in cstr)
        ndim = 0 if contig else len(cshape)
        mode = _launch.current_mode()
        mod, words = _module_for(kernels, (ndim, mode), lambda: _all_source(sub, ndim, fname))
        operands = [cp._operand(t, s, t._offset) for t, s in zip(ops, cstr)]
        if mode == "interpret":  # a few programs, so tests reach the two-stage path
            block = min(_launch.next_pow2(_launch.cdiv(numel, 4)), cp.INTERPRET_MAX_BLOCK)
            warps, target, min_chunk = 4, 4, block
        else:
            from ..kernels.cuda.reduce_plan import _sm_count
            block, warps = RED_CONFIG["all"]
            target, min_chunk = 4 * _sm_count(dev.index or 0), 8 * block
        nparts = max(1, min(target, _launch.cdiv(numel, min_chunk)))
        chunk = _launch.cdiv(_launch.cdiv(numel, nparts), block) * block
        nparts = _launch.cdiv(numel, chunk)
        part = empty((nparts,), dtype=acc_dt, device=dev)
        part_arg = _launch.arg_for(part._storage.data_ptr(), acc_dt)
        tail = [numel, chunk]
        if ndim:
            tail += list(cshape)
            for s in cstr:
                tail += list(s)
        idx64 = not cp._fits_32bit(cshape, operands) or numel + chunk > 2 ** 31 - 1
        di = dev.index or 0
        _launch.launch(getattr(mod, fname), (nparts,),
                       [op.arg for op in operands] + [part_arg] + words + tail, di,
                       BLOCK=block, TREE=mode == "interpret", IDX64=idx64, num_warps=warps,
                       enable_fp_fusion=False)
        fblock = max(2, _launch.next_pow2(nparts))
        out = outs[ridx]
        _launch.launch(getattr(mod, fname + "_fin"), (1,),
                       [_launch.arg_for(out._storage.data_ptr(), out.dtype, out._offset),
                        part_arg, nparts, numel], di, BLOCK=fblock,
                       TREE=mode == "interpret",
                       num_warps=RED_CONFIG["fin"][1] if mode != "interpret" else 4,
                       enable_fp_fusion=False)
        del part  # the stream orders both launches; the allocator keeps the block for it
        return tuple(outs)
    return run


# ---- ahead-of-time compile jobs (kernels/cuda/aot.py) ------------------------------------------
def _gelu(tl, x):
    return 0.5 * x * (1.0 + tl.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


def _softmax(tl, x):
    e = tl.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _rownorm(tl, x):
    d = x - x.mean(-1, keepdims=True)
    return d / tl.sqrt((d * d).mean(-1, keepdims=True) + 1e-5)


def _sum_all(tl, x):
    return (x * x).sum(), x * 2.0  # an element output stored in stage 1 too


def _max_all(tl, x):
    return (x - 1.0).max()


# name -> (traced function, mode, element shape traced (its rank sets the kernel's dims))
_AOT_CHAINS = {"gelu": (_gelu, "pw"), "softmax": (_softmax, "rows"),
               "rownorm": (_rownorm, "rows"), "sum_all": (_sum_all, "all"),
               "max_all": (_max_all, "all")}


def _aot_job(chain, dtype, ndim, idx64, stage="", rows=(1, 1024)):
    """One fused kernel of ``chain`` (traced on a (4, 4) tensor): ``ndim`` is the pointwise /
    all-axes kernels' coalesced dims (0: contiguous) and the rows kernels' leading dims;
    ``stage`` '_fin' is an all-axes group's combining kernel; ``rows``: a rows kernel's
    (RB, BLOCK) tile."""
    from ..kernels.cuda.launch import Job
    fn_py, mode = _AOT_CHAINS[chain]
    fname = f"fused_{chain}"

    def build():
        import tensorlib as tl
        from ..kernels.cuda import launch as _launch
        from ..kernels.cuda import pointwise as cp
        from ..kernels.cuda.launch import _ARG_DTYPE, triton_type
        from .fuser_groups import fuse
        from .passes import run_standard_passes
        from .tracer import trace_graph
        x = tl.zeros((4, 4), dtype=dtype)
        g, _, _ = trace_graph(lambda x: fn_py(tl, x), (x,), chain)
        run_standard_passes(g)
        (node,) = fuse(g)
        if node.attrs["mode"] != mode:
            raise RuntimeError(f"{chain}: fused as {node.attrs['mode']}, expected {mode}")
        sub = node.attrs["subgraph"]
        make = {"pw": _source, "rows": _rows_source, "all": _all_source}[mode]
        src, _ = make(sub, ndim, fname)
        fn = getattr(_launch.generated_module("jit", src, "compiled"), fname + stage)
        idx = "i64" if idx64 else "i32"
        acc = _acc_dtype(dtype)

        def ptr(dt):
            return "*" + triton_type(_ARG_DTYPE.get(dt, dt.name))
        outs = sub.outputs
        if mode == "all":  # stage 1 stores only the element outputs; stage 2 the reduction
            red = next(n for n in sub.nodes if n.op_name in REDUCE_OPS)
            ridx = list(outs).index(red.outputs[0])
            elem = [o for i, o in enumerate(outs) if i != ridx]
            outs = [outs[ridx]] if stage else elem
        sig, attrs = {}, {}
        for i, name in enumerate(fn.arg_names):
            if name in ("p_part",):
                sig[name] = ptr(acc)
            elif name == "p_out":
                sig[name] = ptr(outs[0].type.dtype)
            elif name.startswith("p_"):
                dt = (outs if name.startswith("p_o") else sub.inputs)[int(name[3:])].type.dtype
                sig[name] = ptr(dt)
            elif name.endswith("_lo") or name.endswith("_hi") or name == "nparts":
                sig[name] = "i32"
            elif name in ("BLOCK", "IDX64", "TREE"):
                sig[name] = "constexpr"
            else:
                sig[name] = idx
            if sig[name].startswith("*"):
                attrs[(i,)] = [["tt.divisibility", 16]]
        if mode == "pw":
            block, warps = cp.GPU_CONFIG["nd" if ndim else "contig"]
        else:
            block, warps = RED_CONFIG["fin" if stage else mode]
        rb = 1
        if mode == "rows":  # the runner's choice for this tile
            rb, block = rows
            warps = _rows_warps(rb, block)
        const = {"RB": rb, "BLOCK": block, "TREE": False, "IDX64": idx64}
        const = {k: v for k, v in const.items() if k in fn.arg_names}
        return fn, sig, const, attrs, {"num_warps": warps, "enable_fp_fusion": False}

    layout = ({"rows": f"lead{ndim} {rows[0]}x{rows[1]}"}.get(mode)
              or (f"nd{ndim}" if ndim else "contig"))
    return Job(f"jit_{fname}{stage}", f"{dtype.name} {layout} {'i64' if idx64 else 'i32'}",
               build)


def aot_jobs(quick=False) -> list:
    """Representative fused kernels per dtype: GELU (tanh form, 9 ops: the pointwise kernel on
    the contiguous and the 2-d strided path), softmax and a row normalization (rows kernels:
    several passes over a row), and all-axes sum / max (stage 1 on both paths, stage 2).
    Fused kernels are generated per traced graph, so this is what AOT can check ahead of
    time (registers, spills)."""
    dtypes = (_dt.float32,) if quick else (_dt.float32, _dt.float16, _dt.bfloat16, _dt.float64)
    idxs = (False,) if quick else (False, True)
    jobs = [_aot_job("gelu", dt, nd, i64) for dt in dtypes for nd in (0, 2) for i64 in idxs]
    tiles = ((8, 64),) if quick else ((1, 1024), (8, 64), (32, 16))  # long / short rows
    jobs += [_aot_job(c, dt, 1, i64, rows=t) for c in ("softmax", "rownorm") for dt in dtypes
             for i64 in idxs for t in tiles]
    for c in ("sum_all", "max_all"):
        for dt in dtypes:
            jobs += [_aot_job(c, dt, nd, i64) for nd in (0, 2) for i64 in idxs]
            jobs += [_aot_job(c, dt, 0, i64, "_fin") for i64 in idxs]
    return jobs
