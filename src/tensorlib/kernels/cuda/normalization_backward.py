"""CUDA kernels (Triton) for the fused backward of softmax, log_softmax and layer_norm (the
gradient of the input): one program per row.

Operands arrive as C-contiguous tensors (rows of ``n`` back to back) in the compute dtype (float32 or float64;
ops/normalization_backward.py widens half types first), so a row starts at ``row * n``.

* softmax:      gx = y * (g - sum(g * y))
* log_softmax:  gx = g - exp(y) * sum(g)
* layer_norm:   mean / rstd recomputed, xhat = (x - mean) rstd, gw = g * w,
                gx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)); and g * xhat, whose
                sum over rows is the weight's gradient (layer_norm_grad_xhat)

Single pass (``LOOP=False``): the row in one block of ``next_pow2(n)`` lanes. Looped (rows
longer than the largest block): the sums sweep the row in BLOCK chunks, then a last sweep
writes (layer_norm: one sweep for the mean, one for the variance and both gradient sums).
Reductions are the forward kernels' (``normalization._reduce``: tl.reduce on a GPU, a halving
tree in the interpreter); division and sqrt are IEEE, FMA contraction off.
"""
from __future__ import annotations

from ... import dtypes as _dt
from ...dispatch.stub import UnsupportedKernelError
from . import launch as _launch
from . import normalization as _fwd
from .normalization import _reduce, _warps
from .pointwise_source import VALUE_TL, scalar_code

__all__ = ["softmax_backward_kernel", "log_softmax_backward_kernel",
           "layer_norm_backward_kernel", "layer_norm_grad_xhat_kernel", "kernel_source"]

_I32_MAX = 2 ** 31 - 1


def _ld(ptr, acc_tl):
    return f"tl.load({ptr} + c, mask=mask, other=0.0).to({acc_tl})"


def _softmax_lines(op, acc_tl):
    log = op == "log_softmax_backward"
    term = "g" if log else "g * y"
    out = "g - exp(y) * s" if log else "y * (g - s)"
    loads = [f"g = {_ld('pg', acc_tl)}", f"y = {_ld('py', acc_tl)}"]
    lines = [
        "    if LOOP:",
        f"        sv = tl.full((BLOCK,), 0.0, {acc_tl})",
        "        for start in range(0, n, BLOCK):",
        "            c = start + cols",
        "            mask = c < n",
    ]
    lines += ["            " + ln for ln in loads]
    lines += [f"            sv = sv + tl.where(mask, {term}, 0.0)"]
    lines += _reduce("s", "sv", "_add", 8)
    lines += [
        "        for start in range(0, n, BLOCK):",
        "            c = start + cols",
        "            mask = c < n",
    ]
    lines += ["            " + ln for ln in loads]
    lines += [f"            tl.store(po + c, {out}, mask=mask)",
              "    else:",
              "        c = cols",
              "        mask = c < n"]
    lines += ["        " + ln for ln in loads]
    lines += [f"        t = tl.where(mask, {term}, 0.0)"]
    lines += _reduce("s", "t", "_add", 8)
    lines += [f"        tl.store(po + c, {out}, mask=mask)"]
    return lines


def _layer_norm_lines(acc_tl):
    eps = f"({scalar_code(_dt.float64, 'eps_lo', 'eps_hi')}).to({acc_tl})"
    loads = [f"x = {_ld('px', acc_tl)}", f"g = {_ld('pg', acc_tl)}",
             "if HAS_W:",
             f"    gw = g * {_ld('p_w', acc_tl)}",
             "else:",
             "    gw = g"]
    lines = [
        f"    nf = n.to({acc_tl})",
        f"    eps = {eps}",
        "    if LOOP:",
        f"        sv = tl.full((BLOCK,), 0.0, {acc_tl})",
        "        for start in range(0, n, BLOCK):",
        "            c = start + cols",
        "            mask = c < n",
        f"            sv = sv + {_ld('px', acc_tl)}",
    ]
    lines += _reduce("tot", "sv", "_add", 8)
    lines += [
        "        mean = fdiv_ieee(tot, nf)",
        f"        qv = tl.full((BLOCK,), 0.0, {acc_tl})",
        f"        av = tl.full((BLOCK,), 0.0, {acc_tl})",
        f"        bv = tl.full((BLOCK,), 0.0, {acc_tl})",
        "        for start in range(0, n, BLOCK):",
        "            c = start + cols",
        "            mask = c < n",
    ]
    lines += ["            " + ln for ln in loads]
    lines += [
        "            d = tl.where(mask, x - mean, 0.0)",
        "            qv = qv + d * d",
        "            av = av + gw",
        "            bv = bv + gw * d",
    ]
    lines += _reduce("q", "qv", "_add", 8)
    lines += _reduce("a", "av", "_add", 8)
    lines += _reduce("b", "bv", "_add", 8)
    lines += [
        "        rstd = rsqrt(fdiv_ieee(q, nf) + eps)",
        "        ma = fdiv_ieee(a, nf)",
        "        mb = fdiv_ieee(b, nf) * rstd",
        "        for start in range(0, n, BLOCK):",
        "            c = start + cols",
        "            mask = c < n",
    ]
    lines += ["            " + ln for ln in loads]
    lines += [
        "            xhat = (x - mean) * rstd",
        "            tl.store(po + c, rstd * (gw - ma - xhat * mb), mask=mask)",
        "    else:",
        "        c = cols",
        "        mask = c < n",
    ]
    lines += ["        " + ln for ln in loads]
    lines += _reduce("tot", "x", "_add", 8)
    lines += [
        "        mean = fdiv_ieee(tot, nf)",
        "        d = tl.where(mask, x - mean, 0.0)",
        "        dd = d * d",
    ]
    lines += _reduce("q", "dd", "_add", 8)
    lines += [
        "        rstd = rsqrt(fdiv_ieee(q, nf) + eps)",
        "        xhat = d * rstd",
        "        gwx = gw * xhat",
    ]
    lines += _reduce("a", "gw", "_add", 8)
    lines += _reduce("b", "gwx", "_add", 8)
    lines += [
        "        ma = fdiv_ieee(a, nf)",
        "        mb = fdiv_ieee(b, nf)",
        "        tl.store(po + c, rstd * (gw - ma - xhat * mb), mask=mask)",
    ]
    return lines


def _grad_xhat_lines(acc_tl):
    """out = g * (x - mean) * rstd (the weight gradient before its sum over rows)."""
    eps = f"({scalar_code(_dt.float64, 'eps_lo', 'eps_hi')}).to({acc_tl})"
    lines = [
        f"    nf = n.to({acc_tl})",
        f"    eps = {eps}",
        "    if LOOP:",
        f"        sv = tl.full((BLOCK,), 0.0, {acc_tl})",
        "        for start in range(0, n, BLOCK):",
        "            c = start + cols",
        "            mask = c < n",
        f"            sv = sv + {_ld('px', acc_tl)}",
    ]
    lines += _reduce("tot", "sv", "_add", 8)
    lines += [
        "        mean = fdiv_ieee(tot, nf)",
        f"        qv = tl.full((BLOCK,), 0.0, {acc_tl})",
        "        for start in range(0, n, BLOCK):",
        "            c = start + cols",
        "            mask = c < n",
        f"            d = tl.where(mask, {_ld('px', acc_tl)} - mean, 0.0)",
        "            qv = qv + d * d",
    ]
    lines += _reduce("q", "qv", "_add", 8)
    lines += [
        "        rstd = rsqrt(fdiv_ieee(q, nf) + eps)",
        "        for start in range(0, n, BLOCK):",
        "            c = start + cols",
        "            mask = c < n",
        f"            x = {_ld('px', acc_tl)}",
        f"            g = {_ld('pg', acc_tl)}",
        "            tl.store(po + c, g * ((x - mean) * rstd), mask=mask)",
        "    else:",
        "        c = cols",
        "        mask = c < n",
        f"        x = {_ld('px', acc_tl)}",
        f"        g = {_ld('pg', acc_tl)}",
    ]
    lines += _reduce("tot", "x", "_add", 8)
    lines += [
        "        mean = fdiv_ieee(tot, nf)",
        "        d = tl.where(mask, x - mean, 0.0)",
        "        dd = d * d",
    ]
    lines += _reduce("q", "dd", "_add", 8)
    lines += [
        "        rstd = rsqrt(fdiv_ieee(q, nf) + eps)",
        "        tl.store(po + c, g * (d * rstd), mask=mask)",
    ]
    return lines


def kernel_source(op, acc) -> str:
    acc_tl = VALUE_TL[acc]
    ln = op == "layer_norm_backward"
    xhat = op == "layer_norm_grad_xhat"
    params = ["p_out", "p_g", "p_x"] + (["p_w"] if ln else []) + ["n"]
    params += ["eps_lo", "eps_hi"] if ln or xhat else []
    params += ["BLOCK: tl.constexpr", "LOOP: tl.constexpr", "TREE: tl.constexpr",
               "IDX64: tl.constexpr"]
    params += ["HAS_W: tl.constexpr"] if ln else []
    lines = [
        f"# Generated by tensorlib.kernels.cuda.normalization_backward: {op} {acc.name}",
        "",
        "",
        "@jit",
        "def _add(a, b):",
        "    return a + b",
        "",
        "",
        # n == 1 must stay a runtime value (n.to() below); Triton would make it a constexpr
        "@jit(do_not_specialize=['n'" + (", 'eps_lo', 'eps_hi'" if ln or xhat else "") + "])",
        f"def kernel({', '.join(params)}):",
        "    pid = tl.program_id(0)",
        "    if IDX64:",
        "        pid = pid.to(tl.int64)",
        "        cols = tl.arange(0, BLOCK).to(tl.int64)",
        "    else:",
        "        cols = tl.arange(0, BLOCK)",
        "    row = pid * n",
        "    po = p_out + row",
        "    pg = p_g + row",
        "    px = p_x + row",
        "    py = px",
    ]
    lines += (_layer_norm_lines(acc_tl) if ln else _grad_xhat_lines(acc_tl) if xhat
              else _softmax_lines(op, acc_tl))
    return "\n".join(lines) + "\n"


def kernel_for(op, acc, mode):
    return _launch.cached_module((acc,), f"normbwd_{op}", lambda: kernel_source(op, acc),
                                 mode).kernel


def _blocks(n, acc, mode):
    """(BLOCK, LOOP, num_warps) for rows of n elements: the forward kernels' limits (read at
    call time, so tests that lower them reach the looped variants of both)."""
    nb = _launch.next_pow2(n)
    if mode == "interpret":
        if nb <= _fwd.INTERPRET_MAX_BLOCK:
            return nb, False, 4
        return _fwd.INTERPRET_LOOP_BLOCK, True, 4
    if nb <= _fwd.GPU_MAX_BLOCK[acc.itemsize]:
        return nb, False, _warps(nb)
    block = _fwd.GPU_LOOP_BLOCK[acc.itemsize]
    return block, True, _warps(block)


def _run(op, out, tensors, nrows, n, w=None, eps=0.0):
    acc = out._dtype
    if acc not in (_dt.float32, _dt.float64):
        raise UnsupportedKernelError(f"{op}(): no CUDA kernel computing in {acc}")
    if nrows == 0 or n == 0:
        return
    mode = _launch.current_mode()
    kernel = kernel_for(op, acc, mode)
    block, loop, warps = _blocks(n, acc, mode)
    args = [_launch.arg_for(t._storage.data_ptr(), t._dtype, t._offset)
            for t in (out,) + tuple(tensors)]
    extra = {}
    if op == "layer_norm_backward":
        args.append(_launch.arg_for(w._storage.data_ptr(), w._dtype, w._offset)
                    if w is not None else args[0])
        extra = {"HAS_W": w is not None}
    args.append(n)
    if op in ("layer_norm_backward", "layer_norm_grad_xhat"):
        args += list(_launch.pack_scalar(_dt.float64.np_dtype.type(eps), _dt.float64))
    idx64 = nrows * n + block > _I32_MAX
    _launch.launch(kernel, (nrows,), args, out.device.index, BLOCK=block, LOOP=loop,
                   TREE=mode == "interpret", IDX64=idx64, num_warps=warps,
                   enable_fp_fusion=False, **extra)


def softmax_backward_kernel(out, grad, result, nrows, n):
    """out, grad, result: C-contiguous tensors of one float dtype, ``nrows`` rows of ``n``."""
    _run("softmax_backward", out, (grad, result), nrows, n)


def log_softmax_backward_kernel(out, grad, result, nrows, n):
    _run("log_softmax_backward", out, (grad, result), nrows, n)


def layer_norm_backward_kernel(out, grad, x, weight, eps, nrows, n):
    _run("layer_norm_backward", out, (grad, x), nrows, n, weight, eps)


def layer_norm_grad_xhat_kernel(out, grad, x, eps, nrows, n):
    _run("layer_norm_grad_xhat", out, (grad, x), nrows, n, None, eps)
