"""Fusion groups on CUDA: the runner of each prim::FusionGroup (``compile_group_cuda``), which
builds the group's Triton kernel once per layout class (source: fuser_cuda_source.py) and
launches it with the eager kernels' plumbing (kernels/cuda/pointwise.py: operands, block
sizes and the 32/64-bit index choice), and the AOT jobs of representative fused kernels.

- *pw*: the eager pointwise kernel's layout (coalesced dims in the first output's memory
  order; contiguous when that leaves one unit-stride dim).
- *rows*: RB rows per program (1 for rows of 1024+ elements; short rows share a program).
- *all*: stage 1 over about 4 programs per SM (the eager split reductions' target), one
  partial accumulator each, then one program combining them (stage 2).
"""
from __future__ import annotations

import math

from .. import dtypes as _dt
from ..allocation import empty_strided_like_order
from ..shape import broadcast_strides, coalesce
from .fuser_cuda_source import acc_dtype, all_source, pw_source, rows_source
from .fuser_groups import REDUCE_OPS

__all__ = ["compile_group_cuda"]


# (BLOCK, num_warps) of the reduction kernels on a GPU: rows (a program's tile: RB rows times
# a column block, RB * BLOCK elements), all (stage 1's block), fin (stage 2: the partials, at
# most 4 programs per SM)
RED_CONFIG = {"rows": (1024, 8), "all": (1024, 8), "fin": (1024, 4)}


# ---- runners -----------------------------------------------------------------------------------
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
        mod, words = _module_for(kernels, (ndim, mode), lambda: pw_source(sub, ndim, fname))
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
        mod, words = _module_for(kernels, (mode,), lambda: rows_source(sub, nlead, fname))
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
    acc_dt = acc_dtype(red.inputs[0].type.dtype)
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
        mod, words = _module_for(kernels, (ndim, mode), lambda: all_source(sub, ndim, fname))
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
        make = {"pw": pw_source, "rows": rows_source, "all": all_source}[mode]
        src, _ = make(sub, ndim, fname)
        fn = getattr(_launch.generated_module("jit", src, "compiled"), fname + stage)
        idx = "i64" if idx64 else "i32"
        acc = acc_dtype(dtype)

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
