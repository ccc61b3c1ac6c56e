"""Numba CPU kernels for the plain case of cross_entropy (class-index targets, no weights, no
ignored targets, no smoothing): a forward and a backward pass over the rows of (N, C) logits.

Per (input dtype, compute dtype) one generated module (kernel cache dir, ``@njit(cache=True,
nogil=True)``) holds a serial and a parallel variant of each kernel. They share the fused
softmax kernels' helpers (normalization.py: ``vexp32``, the 16-lane ``row_max``, the
``reassoc`` ``row_sum``), so the exp loop vectorizes in float32 as there.

* forward, per row r with target t = target[r]:
  m = max(x), ls = log(sum(exp(x - m))), nll = ls - (x[t] - m) (the rounding order of
  log_softmax's ``(x - m) - ls``), and (m, ls) saved in ``stats[r]`` for the backward (not
  m + ls: for logits of 1e4 that sum loses the bits exp needs); then the reduction: 'none'
  stores each nll, 'sum' / 'mean' add them in float64 (per chunk, then across chunks) and store
  one value. A target outside [0, C) is never read through: the row is skipped and counted,
  and the caller raises (or takes the general path when it is the ignore_index).
* backward: out[r, j] = (exp((x[r, j] - m) - ls) - (j == t)) * g[r] / div, each element
  written once (the one-hot is a select in the vectorized loop).

Special values follow plain IEEE arithmetic as in the composed log_softmax formula: a nan
logit makes its row's loss and gradient nan, a +inf or all -inf row gives nan, a -inf
non-target logit contributes 0, a -inf target logit gives an infinite loss.
"""
from __future__ import annotations

import threading
import types

import numpy as np

from ... import dtypes as _dt
from ...runtime.cpu import cores
from ...runtime.cpu.streams import host_sync, inline_call, launch
from .casting import kernel_array
from .normalization import _HEADER, _HELPERS, _np_type, load_row, prologue
from .pointwise import load_generated_module

__all__ = ["cross_entropy_kernel", "cross_entropy_backward_kernel", "PAR_GRAIN"]

PAR_GRAIN = 1 << 15   # elements: below this, threads cost more than they save
_CHUNKS_PER_THREAD = 4
MODES = {"none": 0, "sum": 1, "mean": 2}

_lock = threading.Lock()
_mods: dict = {}

# meta: rows, classes, x offset, x row stride, x column stride, target offset, target stride,
# mode (forward) / grad stride (backward), chunks
_FORWARD = """
@njit(cache=True, nogil=True, error_model='numpy'PARALLEL)
def forward_KNAME(meta, out, stats, inp, tgt, bad, part):
    n = meta[0]
    c = meta[1]
    xo = meta[2]
    xs = meta[3]
    xc = meta[4]
    to = meta[5]
    ts = meta[6]
    mode = meta[7]
    nchunk = meta[8]
    for k in RANGE(nchunk):
        buf = np.empty(c, ACCT)
        tmp = np.empty(c, ACCT)
        ksum = 0.0
        kbad = 0
        for r in range(n * k // nchunk, n * (k + 1) // nchunk):
            ti = np.int64(tgt[np.uint64(to + r * ts)])
            if ti < 0 or ti >= c:
                kbad += 1  # never read through a bad index; the caller raises
                continue
            qx = xo + r * xs
@LOAD_ROW
            if c >= 64:
                m = row_max(src)
            else:  # a short row: row_max's 16-lane buffer costs more than it saves
                m = ACCT(-np.inf)  # row_max's rule: nan ignored here, caught by the sum
                for i in range(c):
                    v = src[i]
                    m = v if v > m else m
            row_exp(tmp, src, m)
            ls = np.log(row_sum(tmp))
            nll = ls - (src[ti] - m)
            stats[2 * r] = m
            stats[2 * r + 1] = ls
            if mode == 0:
                out[r] = store(nll)
            else:
                ksum += np.float64(nll)
        bad[k] = kbad
        part[k] = ksum
    if mode != 0:
        total = 0.0
        for k in range(nchunk):
            total += part[k]
        if mode == 2:
            total = total / np.float64(n)  # n == 0: nan, as the mean of nothing
        out[0] = store(ACCT(total))
""".replace("@LOAD_ROW\n", load_row("c"))

_BACKWARD = """
@njit(cache=True, nogil=True, error_model='numpy'PARALLEL)
def backward_KNAME(meta, out, stats, inp, tgt, g, div):
    n = meta[0]
    c = meta[1]
    xo = meta[2]
    xs = meta[3]
    xc = meta[4]
    to = meta[5]
    ts = meta[6]
    gs = meta[7]
    nchunk = meta[8]
    for k in RANGE(nchunk):
        for r in range(n * k // nchunk, n * (k + 1) // nchunk):
            ti = np.int64(tgt[np.uint64(to + r * ts)])
            m = stats[2 * r]
            ls = stats[2 * r + 1]
            sc = g[np.uint64(r * gs)] / div
            qx = xo + r * xs
            dst = out[r * c:(r + 1) * c]
            if xc == 1:
                seg = inp[qx:qx + c]
                for i in range(c):
                    oh = ACCT(1) if i == ti else ACCT(0)
                    dst[i] = store((fexp((load(seg[i]) - m) - ls) - oh) * sc)
            else:
                for i in range(c):
                    oh = ACCT(1) if i == ti else ACCT(0)
                    v = load(inp[np.uint64(qx + i * xc)])
                    dst[i] = store((fexp((v - m) - ls) - oh) * sc)
"""


def _source(in_dt, acc):
    src = _HEADER.format(what=f"cross_entropy {in_dt.name} -> {acc.name}")
    src += _HELPERS + prologue(in_dt, acc, in_dt)
    for template in (_FORWARD, _BACKWARD):
        for fname, par in (("serial", False), ("parallel", True)):
            k = (template.replace("KNAME", fname)
                 .replace("PARALLEL", ", parallel=True" if par else "")
                 .replace("RANGE", "prange" if par else "range")
                 .replace("DIRECT", str(in_dt is acc)))
            src += "\n" + k.replace("ACCT", _np_type(acc))
    return src


def _module(in_dt, acc):
    key = (in_dt, acc)
    mod = _mods.get(key)
    if mod is None:
        with _lock:
            mod = _mods.get(key)
            if mod is None:
                m = load_generated_module("xent", _source(in_dt, acc))
                mod = (types.SimpleNamespace(serial=m.forward_serial, parallel=m.forward_parallel),
                       types.SimpleNamespace(serial=m.backward_serial,
                                             parallel=m.backward_parallel))
                _mods[key] = mod
    return mod


def _check_acc(op, acc):
    if acc.kind != "f" or acc.itemsize not in (4, 8):
        raise TypeError(f"{op}(): no CPU kernel computing in {acc}")


def _plan(pair, n, c, args_of):
    """(kernel, chunks): the parallel variant for big calls once it is ready."""
    nthreads = cores.threads()
    if nthreads > 1 and n > 1 and n * c >= PAR_GRAIN:
        nchunk = min(n, nthreads * _CHUNKS_PER_THREAD)
        if cores.parallel_ready(pair, args_of(nchunk), n * c):
            return pair.parallel, nchunk
    return pair.serial, 1


def _meta(n, c, x, xs, xc, target, ts, last, nchunk):
    return np.array([n, c, x._offset, xs, xc, target._offset, ts, last, nchunk], np.int64)


def cross_entropy_kernel(out, stats, x, target, n, c, xs, xc, ts, reduction, acc):
    """out: the loss (x's dtype; ``n`` elements for 'none', else one), stats: C-contiguous
    (n, 2) of ``acc``; x: n rows of c logits (row stride ``xs``, column stride ``xc``),
    target: n class indices ``ts`` apart. Returns how many targets are outside [0, c) (their
    rows are skipped: nothing is read through them)."""
    op = "cross_entropy"
    _check_acc(op, acc)
    fwd, _ = _module(x._dtype, acc)
    # the count is needed on the host at once: run inline, in stream order
    host_sync(x, target)
    arrays = (kernel_array(out)[out._offset:], kernel_array(stats)[stats._offset:],
              kernel_array(x), kernel_array(target))
    mode = MODES[reduction]

    def args_of(nchunk):
        return ((_meta(n, c, x, xs, xc, target, ts, mode, nchunk),) + arrays
                + (np.zeros(nchunk, np.int64), np.zeros(nchunk, np.float64)))

    fn, nchunk = _plan(fwd, n, c, args_of)
    args = args_of(nchunk)
    if fn is fwd.parallel:
        cores.call(fn, args)
    else:  # (recorded by the profiler when it runs; host_sync ordered it on a user stream)
        (inline_call(fn, op) or fn)(*args)
    bad = args[5]
    return int(bad[0] if nchunk == 1 else bad.sum())


def cross_entropy_backward_kernel(out, x, target, stats, grad, n, c, xs, xc, ts, gs, div, acc):
    """out: C-contiguous (n, c) in x's dtype; grad: the loss gradient in ``acc`` (``gs``
    apart per row; 0 for a reduced loss), divided by ``div`` (n for 'mean', else 1)."""
    op = "cross_entropy_backward"
    _check_acc(op, acc)
    _, bwd = _module(x._dtype, acc)
    if n == 0 or c == 0:
        return
    arrays = (kernel_array(out)[out._offset:], kernel_array(stats)[stats._offset:],
              kernel_array(x), kernel_array(target), kernel_array(grad)[grad._offset:])
    div = acc.np_dtype.type(div)

    def args_of(nchunk):
        return (_meta(n, c, x, xs, xc, target, ts, gs, nchunk),) + arrays + (div,)

    fn, nchunk = _plan(bwd, n, c, args_of)
    launch(fn, op, out, (x, target, stats, grad), *args_of(nchunk))
