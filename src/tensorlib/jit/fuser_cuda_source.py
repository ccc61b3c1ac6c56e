"""Triton source of tl.jit's CUDA fusion groups: one generated kernel module per group, from
the ops' YAML expressions through the eager CUDA generator's pieces
(kernels/cuda/pointwise_source.py: ``translate`` for the expression, ``load_code`` /
``store_code`` / ``cast_code`` / ``scalar_code`` for values). fuser_cuda.py builds, caches and
launches them.

As on the CPU, each node's result is kept as the value eager would read back after storing it
(``load_code(store_code(...))``: half types round, bool becomes 0/1), so a fused chain gives
what the chain of eager kernels gives. Real dtypes only (complex groups are not formed on
CUDA).

Groups with reductions (fuser.py's modes) follow the eager CUDA reductions
(kernels/cuda/reduction.py): the accumulator is the iterator's compute dtype (float32 for the
half types), per-lane partial sums over column blocks then a tree across lanes, max / min
propagate nan (``tl.where((b > a) | (b != b), b, a)``), mean divides the sum in float64.
- ``pw_source`` (*pw*): the pointwise kernel, contiguous or over the coalesced N-d layout.
- ``rows_source`` (*rows*: a reduction over the last axis, and the softmax / normalization
  pattern): each program owns RB rows, a loop over [RB, BLOCK] column blocks per reduction
  (recomputing the element values it reduces: registers, no memory traffic), row-level nodes
  as [RB, 1] columns once their inputs exist, and a last loop storing the element outputs.
- ``all_source`` (*all*: a pointwise group ending in a reduction over every axis): stage 1
  walks the elements in chunks, storing element outputs and one partial accumulator per
  program; stage 2 (``<name>_fin``), one program, combines the partials and finishes.

The generated text is the kernel cache's key: its header still names jit.fuser_cuda (where
these templates lived before the split), so the text is unchanged.
"""
from __future__ import annotations

from .. import dtypes as _dt
from ..kernels.cuda import pointwise_source as cp
from .fuser_groups import REDUCE_OPS, ROW_VIEWS
from .ir import Graph

__all__ = ["pw_source", "rows_source", "all_source", "acc_dtype"]


# ---- pointwise groups --------------------------------------------------------------------------
class _Code:
    """Per-node statements of a subgraph (``stmts[node]``), the variable holding each value
    (external inputs ``x<j>``, node results ``v<k>``, in the value type of the dtype eager
    stores) and the scalar operands passed as (lo, hi) words."""

    def __init__(self, sub: Graph):
        from ..dispatch import dispatcher
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


def pw_source(sub: Graph, ndim: int, fname: str):
    """A pointwise group's kernel: (source, scalar values [(value, dtype)] in word order)."""
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
def acc_dtype(dtype):
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
    out_dt = red.outputs[0].type.dtype
    acc = acc_dtype(red.inputs[0].type.dtype)
    if red.op_name == "mean":
        val, val_dt = f"({tot}).to(tl.float64) / {count}", _dt.float64
    else:
        val, val_dt = tot, acc
    stored = cp.store_code(out_dt, cp.cast_code(val_dt, out_dt, val))
    return f"{code.var[red.outputs[0]]} = {cp.load_code(out_dt, stored)}"


def _acc_update(code, red, acc, ind, tile="(BLOCK,)"):
    x = red.inputs[0]
    acc_dt = acc_dtype(x.type.dtype)
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


def rows_source(sub: Graph, nlead: int, fname: str):
    """A rows group's kernel: each program owns RB rows (a [RB, BLOCK] tile per column block:
    short rows share a program); row-level values are [RB, 1] columns."""
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
        acc_dt = acc_dtype(red.inputs[0].type.dtype)
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


def all_source(sub: Graph, ndim: int, fname: str):
    """An all-axes group's two kernels ``fname`` (stage 1) and ``fname_fin`` (stage 2)."""
    code = _Code(sub)
    outs, ins = sub.outputs, sub.inputs
    red = next(n for n in sub.nodes if n.op_name in REDUCE_OPS)
    x = red.inputs[0]
    ridx = outs.index(red.outputs[0])
    elem = [(i, o) for i, o in enumerate(outs) if i != ridx]
    ops = [f"o{i}" for i, _ in elem] + [f"a{j}" for j in range(len(ins))]
    acc_dt = acc_dtype(x.type.dtype)
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
