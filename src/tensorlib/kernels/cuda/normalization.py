"""CUDA kernels (Triton) for the fused row-wise ops: softmax, log_softmax, layer_norm (forward).

One program per row of the ``RowLayout`` (ops/normalization.py): the row is ``n`` elements
``col`` apart, its start found from two outer dims. Values are converted to the compute dtype
(float32 for half types) on load and rounded once on store.

* Single pass (``LOOP=False``): the whole row in one block of ``BLOCK = next_pow2(n)`` lanes,
  reduced in registers (max, then the sum of exp; mean, then the squared deviations).
* Looped (``LOOP=True``, rows longer than the largest block): softmax keeps a per-lane
  running max and running sum rescaled by ``exp(old max - new max)`` (online softmax), then a
  second sweep writes; layer_norm sweeps three times (sum, squared deviations, write).

Special values match the composed NumPy formula (and the CPU kernels): the max ignores nan but
a nan element makes the sum nan; a row whose max is +inf, or that holds only -inf, is nan. The
looped variant guards its rescaling so those cases cannot leak from one lane into a finite
row, then applies the rule once per row.

Row reductions are ``tl.reduce`` with a generated combine function on a GPU and a halving tree
(reshape / split) in the interpreter, whose ``tl.reduce`` calls the combine once per element.
Float32 division and sqrt are the IEEE ones (``fdiv_ieee``, ``rsqrt`` of scalar_math) and FMA
contraction is off, as in the other generated kernels.
"""
from __future__ import annotations


from ... import dtypes as _dt
from ...dispatch.stub import UnsupportedKernelError
from . import launch as _launch
from .pointwise_source import VALUE_TL, cast_code, load_code, scalar_code, store_code

__all__ = ["softmax_kernel", "log_softmax_kernel", "layer_norm_kernel", "kernel_source",
           "aot_jobs", "GPU_MAX_BLOCK", "GPU_LOOP_BLOCK"]

# Single-pass limit and looped chunk on a GPU, by compute itemsize (registers per thread stay
# at 16 values or fewer with 16 warps; aot.py checks there are no spills).
GPU_MAX_BLOCK = {4: 8192, 8: 4096}
GPU_LOOP_BLOCK = {4: 4096, 8: 2048}
# The interpreter runs one row per Python-level program: wide blocks are cheap there. Tests
# lower these to reach the looped variant with small rows.
INTERPRET_MAX_BLOCK = 1 << 14
INTERPRET_LOOP_BLOCK = 1 << 10
_I32_MAX = 2 ** 31 - 1


def _warps(block):
    return max(1, min(16, block // 256))


# ---- source ------------------------------------------------------------------------------------
def _reduce(dst, src, comb, indent):
    """Lines reducing the 1-D block ``src`` with ``comb`` into ``dst`` (a scalar on a GPU,
    a (1,) block in the interpreter: both broadcast against the row)."""
    p = " " * indent
    return [
        f"{p}if TREE:",
        f"{p}    {dst} = {src}",
        f"{p}    for _ in tl.static_range(BLOCK.bit_length() - 1):",
        f"{p}        _a, _b = tl.split(tl.reshape({dst}, ({dst}.shape[0] // 2, 2)))",
        f"{p}        {dst} = {comb}(_a, _b)",
        f"{p}else:",
        f"{p}    {dst} = tl.reduce({src}, 0, {comb})",
    ]


def online_max_sum(load, acc_tl, indent):
    """Lines sweeping a row of ``n`` in BLOCK chunks (``load``: the chunk's values, -inf where
    masked) with a per-lane running max and a running sum of exp rescaled to it (online
    softmax), then reducing both into the row's max ``m`` and sum ``s`` (needs ``NEG``)."""
    p = " " * indent
    lines = [
        f"{p}mv = tl.full((BLOCK,), NEG, {acc_tl})",
        f"{p}sv = tl.full((BLOCK,), 0.0, {acc_tl})",
        f"{p}for start in range(0, n, BLOCK):",
        f"{p}    c = start + cols",
        f"{p}    mask = c < n",
        f"{p}    v = {load}",
        f"{p}    nm = tl.where(v > mv, v, mv)",
        # equal maxima (also -inf == -inf) need no rescale; -inf elements add nothing
        f"{p}    alpha = tl.where(mv == nm, 1.0, exp(mv - nm))",
        f"{p}    sv = sv * alpha + tl.where(v == NEG, 0.0, exp(v - nm))",
        f"{p}    mv = nm",
    ]
    lines += _reduce("m", "mv", "_max", indent)
    lines += [f"{p}sv = tl.where(mv == m, sv, sv * exp(mv - m))"]
    lines += _reduce("s", "sv", "_add", indent)
    return lines


def _load(in_dt, acc, ptr, fill):
    raw = load_code(in_dt, f"tl.load({ptr}, mask=mask, other=0)")
    return f"tl.where(mask, {cast_code(in_dt, acc, raw)}, {fill})"


def _store(out_dt, acc, ptr, expr):
    return f"tl.store({ptr}, {store_code(out_dt, cast_code(acc, out_dt, expr))}, mask=mask)"


def _softmax_body(op, in_dt, acc, out_dt):
    acc_tl = VALUE_TL[acc]
    load = _load(in_dt, acc, "px + c * xc", "NEG")
    log = op == "log_softmax"
    out = "(v - m) - ls" if log else "fdiv_ieee(exp(v - m), s)"
    lines = ["    NEG = float('-inf')", "    if LOOP:"] + online_max_sum(load, acc_tl, 8)
    lines += [
        # the composed formula's rule: max +inf (inf - inf) or only -inf (-inf + inf) -> nan
        "        s = tl.where((m == float('inf')) | (m == NEG), float('nan'), s)",
    ]
    if log:
        lines.append("        ls = log(s)")
    lines += [
        "        for start in range(0, n, BLOCK):",
        "            c = start + cols",
        "            mask = c < n",
        f"            v = {load}",
        "            " + _store(out_dt, acc, "po + c * oc", out),
        "    else:",
        "        c = cols",
        "        mask = c < n",
        f"        v = {load}",
    ]
    lines += _reduce("m", "v", "_max", 8)
    lines += ["        e = tl.where(mask, exp(v - m), 0.0)"]
    lines += _reduce("s", "e", "_add", 8)
    if log:
        lines.append("        ls = log(s)")
        out = "(v - m) - ls"
    else:
        out = "fdiv_ieee(e, s)"
    lines.append("        " + _store(out_dt, acc, "po + c * oc", out))
    return lines


def _layer_norm_body(in_dt, acc, out_dt):
    acc_tl = VALUE_TL[acc]
    load = _load(in_dt, acc, "px + c * xc", "0.0")
    affine = [
        "y = d * rstd",
        "if HAS_W:",
        "    y = y * tl.load(p_w + c, mask=mask, other=0)",
        "if HAS_B:",
        "    y = y + tl.load(p_b + c, mask=mask, other=0)",
        _store(out_dt, acc, "po + c * oc", "y"),
    ]
    eps = f"({scalar_code(_dt.float64, 'eps_lo', 'eps_hi')}).to({acc_tl})"
    lines = [
        f"    nf = n.to({acc_tl})",
        f"    eps = {eps}",
        "    if LOOP:",
        f"        sv = tl.full((BLOCK,), 0.0, {acc_tl})",
        "        for start in range(0, n, BLOCK):",
        "            c = start + cols",
        "            mask = c < n",
        f"            sv = sv + {load}",
    ]
    lines += _reduce("tot", "sv", "_add", 8)
    lines += [
        "        mean = fdiv_ieee(tot, nf)",
        f"        qv = tl.full((BLOCK,), 0.0, {acc_tl})",
        "        for start in range(0, n, BLOCK):",
        "            c = start + cols",
        "            mask = c < n",
        f"            d = tl.where(mask, {load} - mean, 0.0)",
        "            qv = qv + d * d",
    ]
    lines += _reduce("q", "qv", "_add", 8)
    lines += [
        "        rstd = rsqrt(fdiv_ieee(q, nf) + eps)",
        "        for start in range(0, n, BLOCK):",
        "            c = start + cols",
        "            mask = c < n",
        f"            d = {load} - mean",
    ]
    lines += ["            " + a for a in affine]
    lines += [
        "    else:",
        "        c = cols",
        "        mask = c < n",
        f"        v = {load}",
    ]
    lines += _reduce("tot", "v", "_add", 8)
    lines += [
        "        mean = fdiv_ieee(tot, nf)",
        "        d = tl.where(mask, v - mean, 0.0)",
        "        dd = d * d",
    ]
    lines += _reduce("q", "dd", "_add", 8)
    lines += ["        rstd = rsqrt(fdiv_ieee(q, nf) + eps)"]
    lines += ["        " + a for a in affine]
    return lines


# the tl.reduce combine functions of the row max and sum (cross_entropy.py's kernels use them too)
COMBINE_LINES = [
    "@jit",
    "def _max(a, b):",
    "    return tl.where(b > a, b, a)",
    "",
    "",
    "@jit",
    "def _add(a, b):",
    "    return a + b",
    "",
    "",
]


def kernel_source(op, in_dt, acc, out_dt) -> str:
    ln = op == "layer_norm"
    params = ["p_out", "p_in"] + (["p_w", "p_b"] if ln else [])
    params += ["n1", "n", "xs0", "xs1", "xc", "os0", "os1", "oc"]
    params += ["eps_lo", "eps_hi"] if ln else []
    params += ["BLOCK: tl.constexpr", "LOOP: tl.constexpr", "TREE: tl.constexpr",
               "IDX64: tl.constexpr"]
    params += ["HAS_W: tl.constexpr", "HAS_B: tl.constexpr"] if ln else []
    lines = [
        f"# Generated by tensorlib.kernels.cuda.normalization: {op} {in_dt.name} -> "
        f"{acc.name} -> {out_dt.name}",
        "",
        "",
        *COMBINE_LINES,
        # n == 1 must stay a runtime value (n.to() below); Triton would make it a constexpr
        "@jit(do_not_specialize=['n'" + (", 'eps_lo', 'eps_hi'" if ln else "") + "])",
        f"def kernel({', '.join(params)}):",
        "    pid = tl.program_id(0)",
        "    if IDX64:",
        "        pid = pid.to(tl.int64)",
        "        cols = tl.arange(0, BLOCK).to(tl.int64)",
        "    else:",
        "        cols = tl.arange(0, BLOCK)",
        "    i0 = pid // n1",
        "    i1 = pid - i0 * n1",
        "    px = p_in + (i0 * xs0 + i1 * xs1)",
        "    po = p_out + (i0 * os0 + i1 * os1)",
    ]
    lines += _layer_norm_body(in_dt, acc, out_dt) if ln else _softmax_body(op, in_dt, acc,
                                                                           out_dt)
    return "\n".join(lines) + "\n"


def kernel_for(op, in_dt, acc, out_dt, mode):
    return _launch.cached_module((in_dt, acc, out_dt), f"norm_{op}",
                                 lambda: kernel_source(op, in_dt, acc, out_dt), mode).kernel


# ---- launching ---------------------------------------------------------------------------------
def _blocks(n, acc, mode):
    """(BLOCK, LOOP, num_warps) for rows of n elements."""
    nb = _launch.next_pow2(n)
    if mode == "interpret":
        if nb <= INTERPRET_MAX_BLOCK:
            return nb, False, 4
        return INTERPRET_LOOP_BLOCK, True, 4
    if nb <= GPU_MAX_BLOCK[acc.itemsize]:
        return nb, False, _warps(nb)
    block = GPU_LOOP_BLOCK[acc.itemsize]
    return block, True, _warps(block)


def _needs_idx64(rows, block):
    spans = [(rows.n0 - 1) * abs(rows.x_s0) + (rows.n1 - 1) * abs(rows.x_s1)
             + (max(rows.n, block) + block) * max(abs(rows.x_col), 1),
             (rows.n0 - 1) * abs(rows.out_s0) + (rows.n1 - 1) * abs(rows.out_s1)
             + (max(rows.n, block) + block) * max(abs(rows.out_col), 1)]
    return max(spans) > _I32_MAX or rows.n0 * rows.n1 > _I32_MAX


def _run(op, out, x, rows, acc, w=None, b=None, eps=0.0):
    if acc.kind != "f" or x._dtype.kind not in "fiub":
        raise UnsupportedKernelError(f"{op}(): no CUDA kernel for {x._dtype} computing in "
                                     f"{acc}")
    mode = _launch.current_mode()
    kernel = kernel_for(op, x._dtype, acc, out._dtype, mode)
    block, loop, warps = _blocks(rows.n, acc, mode)
    args = [_launch.arg_for(out._storage.data_ptr(), out._dtype, rows.out_offset),
            _launch.arg_for(x._storage.data_ptr(), x._dtype, rows.x_offset)]
    extra = {}
    if op == "layer_norm":
        for t in (w, b):
            args.append(_launch.arg_for(t._storage.data_ptr(), t._dtype, t._offset)
                        if t is not None else args[0])
        extra = {"HAS_W": w is not None, "HAS_B": b is not None}
    args += [rows.n1, rows.n, rows.x_s0, rows.x_s1, rows.x_col, rows.out_s0, rows.out_s1,
             rows.out_col]
    if op == "layer_norm":
        args += list(_launch.pack_scalar(_dt.float64.np_dtype.type(eps), _dt.float64))
    _launch.launch(kernel, (rows.n0 * rows.n1,), args, out.device.index, BLOCK=block,
                   LOOP=loop, TREE=mode == "interpret", IDX64=_needs_idx64(rows, block),
                   num_warps=warps, enable_fp_fusion=False, **extra)


def softmax_kernel(out, x, rows, acc):
    _run("softmax", out, x, rows, acc)


def log_softmax_kernel(out, x, rows, acc):
    _run("log_softmax", out, x, rows, acc)


def layer_norm_kernel(out, x, rows, acc, w, b, eps):
    _run("layer_norm", out, x, rows, acc, w, b, eps)


# ---- ahead-of-time compile check (kernels/cuda/aot.py) -----------------------------------------
def aot_jobs(quick=False):
    """aot.Jobs compiling each op per storage dtype in its GPU configurations: a small and
    the largest single-pass block, and the looped variant."""
    from .launch import Job, triton_type as _triton_type
    from .launch import _ARG_DTYPE
    f32, f64 = _dt.float32, _dt.float64
    dtypes = [f32] if quick else [f32, _dt.float16, _dt.bfloat16, f64]
    jobs = []
    for op in ("softmax", "layer_norm") if quick else ("softmax", "log_softmax", "layer_norm"):
        for dt in dtypes:
            acc = f64 if dt is f64 else f32
            configs = [(1024, False, False)]
            if not quick:
                configs += [(GPU_MAX_BLOCK[acc.itemsize], False, False),
                            (GPU_LOOP_BLOCK[acc.itemsize], True, False)]
                if dt is f32:
                    configs.append((GPU_LOOP_BLOCK[4], True, True))
            for block, loop, idx64 in configs:
                def build(op=op, dt=dt, acc=acc, block=block, loop=loop, idx64=idx64):
                    fn = kernel_for(op, dt, acc, dt, "compiled")
                    ptr = lambda d: "*" + _triton_type(_ARG_DTYPE.get(d, d.name))  # noqa: E731
                    sig = {"p_out": ptr(dt), "p_in": ptr(dt)}
                    const = {"BLOCK": block, "LOOP": loop, "TREE": False, "IDX64": idx64}
                    if op == "layer_norm":
                        sig.update(p_w=ptr(acc), p_b=ptr(acc))
                        const.update(HAS_W=True, HAS_B=True)
                    for p in fn.arg_names:
                        if p not in sig and p not in const:
                            sig[p] = "i32"
                    for c in const:
                        sig[c] = "constexpr"
                    attrs = {(fn.arg_names.index(p),): [["tt.divisibility", 16]]
                             for p in sig if p.startswith("p_")}
                    return fn, sig, const, attrs, {"num_warps": _warps(block),
                                                   "enable_fp_fusion": False}
                cfg = (f"{dt.name} BLOCK={block}{' looped' if loop else ''}"
                       f"{' i64' if idx64 else ''}")
                jobs.append(Job(op, cfg, build))
    return jobs
