"""Fused optimizer steps: one kernel launch updates every parameter of one (device, dtype).

The launch gets tables, not tensors: per parameter the raw addresses of the parameter, its
gradient and its state buffers, the element count, and a row of float64 coefficients (learning
rate, betas, bias corrections... computed on the host per parameter, so parameter groups with
different hyperparameters and parameters at different step counts share one launch).

* CPU: a Numba kernel (generated per storage dtype, disk-cached) loops over a chunk table,
  rows (parameter, first element, end), turning addresses into arrays with
  ``kernels/cpu/addresses``: one row per parameter on one thread, or, from PARALLEL_WORK
  elements in all, rows of at most CHUNK elements shared by the threads of a parallel twin
  (the step is memory-bound: a second core adds bandwidth). The parallel twin compiles in the
  background (runtime/cpu/cores.parallel_ready); steps before that run serially, and so do
  steps within runtime/cpu/cores.BLAS_SPIN_S of a multi-threaded matmul (OpenBLAS's threads
  still spin on the cores: a training step's optimizer runs right after its backward).
* CUDA: a Triton kernel over a chunk table (PyTorch's multi_tensor_apply): program c updates
  elements [start, start + BLOCK) of parameter t, reading (t, start) from the table and the
  typed pointers from the address table. The tables travel to the device in one copy.

Parameters, gradients and states are read as flat arrays, which needs them dense with one
layout: states are made with the parameter's layout (zeros_like); a gradient in another layout
is copied into the parameter's first, and a parameter that is not dense (a strided view) is
packed into a dense copy and written back after the kernel. Half types compute in float32 and
round once on store; complex parameters are updated as (re, im) pairs of reals (PyTorch's
view_as_real rule). The optimizer calls check_writable on each parameter first (refusing
read-only ones, bumping the version counter autograd's saved-tensor check reads).

Kernels and their coefficient rows (``sign`` is -1 with maximize=True, else 1):
  sgd          (lr, wd, sign)                              p -= lr * (sign*g + wd*p)
  sgd_momentum (lr, wd, sign, mom_old, damp, momentum, nesterov)
               d = sign*g + wd*p; buf = mom_old*buf + damp*d (mom_old 0 and damp 1 on the first
               step, as PyTorch's clone); d = d + momentum*buf if nesterov else buf; p -= lr*d
  adam         (neg_step, wd, decay, 1-b1, b2, 1-b2, eps, sqrt(bc2), sign)
               p *= decay (AdamW: 1 - lr*wd); g = sign*g + wd*p (Adam's L2 wd; 0 for AdamW);
               m += (1-b1)*(g - m); v = b2*v + (1-b2)*g*g; [vmax = max(vmax, v)];
               p += neg_step * m / (sqrt(v or vmax)/sqrt(bc2) + eps), neg_step = -lr/bc1
"""
from __future__ import annotations

import threading

import numpy as np

from .. import dtypes as _dt
from ..shape import is_dense

__all__ = ["run", "NCOEF"]

NCOEF = {"sgd": 3, "sgd_momentum": 7, "adam": 9}
_NPTR = 5  # param, grad, state 0, state 1, state 2 (unused slots repeat the param's address)

_HALF = (_dt.float16, _dt.bfloat16)


def _storage_dtype(dtype):
    """The real dtype the kernel sees (complex as its component pairs)."""
    return _dt.real_for(dtype) if dtype.kind == "c" else dtype


def _layout(t):
    return tuple((n, s) for n, s in zip(t._shape, t._strides) if n != 1)


_dense_cache: dict = {}


def _dense(shape, strides) -> bool:
    """Dense with non-negative strides (the block starts at the first element); memoised per
    layout, as parameters keep theirs from step to step."""
    key = (shape, strides)
    d = _dense_cache.get(key)
    if d is None:
        if len(_dense_cache) > 4096:
            _dense_cache.clear()
        d = _dense_cache[key] = is_dense(shape, strides, allow_negative=False)
    return d


def run(opname, variant, device, dtype, items, state_names):
    """Updates ``items`` ((param, grad, state dict, coefficient row), all of ``dtype`` on
    ``device``) with one launch; ``variant``: (kernel name, flag): the flag is nesterov for
    sgd_momentum, amsgrad for adam. ``opname``: the optimizer, for errors."""
    from ..allocation import empty_like
    kname = variant[0]
    n_st = {"sgd": 0, "sgd_momentum": 1, "adam": 3 if variant[1] else 2}[kname]
    names = state_names[:n_st]
    addrs, sizes, rows = [], [], []
    keep = []        # temporaries alive until the launch (gradient copies, packed params)
    write_back = []  # (param, packed copy)
    mult = 2 if dtype.kind == "c" else 1
    for p, g, st, row in items:  # (the optimizer checked that each p may be written)
        work = p
        ws = p._strides
        if not _dense(p._shape, ws):
            work = p.contiguous()  # packed; written back after the kernel
            ws = work._strides
            write_back.append((p, work))
            keep.append(work)
        item = work._dtype.itemsize
        if g._strides != ws and (_layout(g) != _layout(work) or not _dense(g._shape, g._strides)):
            gg = empty_like(work)
            gg.copy_(g)
            g = gg
            keep.append(g)
        wp = work._storage.data_ptr() + work._offset * item
        ptr = [wp, g._storage.data_ptr() + g._offset * item]
        for n in names:
            t = st[n]
            if t._strides != ws and _layout(t) != _layout(work):
                t2 = empty_like(work)  # e.g. loaded from a state dict in another layout
                t2.copy_(t)
                st[n] = t = t2
            ptr.append(t._storage.data_ptr() + t._offset * item)
        while len(ptr) < _NPTR:
            ptr.append(wp)
        addrs.append(ptr)
        sizes.append(p._numel * mult)
        rows.append(row)
    if not addrs:
        return
    addr = np.asarray(addrs, dtype=np.int64)
    size = np.asarray(sizes, dtype=np.int64)
    coef = np.asarray(rows, dtype=np.float64)
    sdt = _storage_dtype(dtype)
    if device.type == "cpu":
        _run_cpu(kname, variant, sdt, addr, size, coef, items, keep)
    elif device.type == "cuda":
        _run_cuda(kname, variant, sdt, addr, size, coef, device)
    else:  # pragma: no cover - no other device types exist
        raise RuntimeError(f"{opname}.step(): no fused kernel for device '{device}'")
    for p, work in write_back:
        p.copy_(work)


# ---------------------------------------------------------------- CPU (Numba)
_HEADER = """\
# Generated by tensorlib.optim._fused: fused optimizer steps over {what} storage
import numpy as np
from numba import njit, prange
from tensorlib.kernels.cpu.scalar_math import *
from tensorlib.kernels.cpu.casting import *
from tensorlib.kernels.cpu.addresses import array_at

"""

# Each kernel's element loop over one chunk (parameter t, elements [lo, hi)); the drivers below
# run it over a chunk table, serially or with prange (one text, two drivers).
_CPU_BODIES = """
@njit(inline='always', error_model='numpy')
def load(x):
    return LOAD


@njit(inline='always', error_model='numpy')
def store(x):
    return STORE


@njit(inline='always', error_model='numpy')
def part(addr, t, k, lo, n):
    # elements [lo, lo + n) of parameter t's k-th array (param, grad, states)
    return array_at(addr[t, k] + lo * ITEM, n, ST)


@njit(inline='always', error_model='numpy')
def sgd_chunk(addr, coef, t, lo, hi, flag):
    n = hi - lo
    p = part(addr, t, 0, lo, n)
    g = part(addr, t, 1, lo, n)
    lr = ACC(coef[t, 0])
    wd = ACC(coef[t, 1])
    sign = ACC(coef[t, 2])
    for i in range(n):
        pi = load(p[i])
        d = sign * load(g[i]) + wd * pi
        p[i] = store(pi - lr * d)


@njit(inline='always', error_model='numpy')
def sgd_momentum_chunk(addr, coef, t, lo, hi, flag):
    n = hi - lo
    p = part(addr, t, 0, lo, n)
    g = part(addr, t, 1, lo, n)
    b = part(addr, t, 2, lo, n)
    lr = ACC(coef[t, 0])
    wd = ACC(coef[t, 1])
    sign = ACC(coef[t, 2])
    mom_old = ACC(coef[t, 3])
    damp = ACC(coef[t, 4])
    mom = ACC(coef[t, 5])
    if flag:  # nesterov
        for i in range(n):
            pi = load(p[i])
            d = sign * load(g[i]) + wd * pi
            bi = mom_old * load(b[i]) + damp * d
            b[i] = store(bi)
            p[i] = store(pi - lr * (d + mom * load(b[i])))
    else:
        for i in range(n):
            pi = load(p[i])
            d = sign * load(g[i]) + wd * pi
            bi = store(mom_old * load(b[i]) + damp * d)
            b[i] = bi
            p[i] = store(pi - lr * load(bi))


@njit(inline='always', error_model='numpy')
def adam_chunk(addr, coef, t, lo, hi, flag):
    n = hi - lo
    p = part(addr, t, 0, lo, n)
    g = part(addr, t, 1, lo, n)
    m = part(addr, t, 2, lo, n)
    v = part(addr, t, 3, lo, n)
    vmax = part(addr, t, 4, lo, n)
    neg_step = ACC(coef[t, 0])
    wd = ACC(coef[t, 1])
    decay = ACC(coef[t, 2])
    omb1 = ACC(coef[t, 3])
    b2 = ACC(coef[t, 4])
    omb2 = ACC(coef[t, 5])
    eps = ACC(coef[t, 6])
    sbc2 = ACC(coef[t, 7])
    sign = ACC(coef[t, 8])
    for i in range(n):
        pi = load(p[i]) * decay
        gi = sign * load(g[i]) + wd * pi
        mi = load(m[i])
        mi = store(mi + omb1 * (gi - mi))
        vi = store(b2 * load(v[i]) + omb2 * gi * gi)
        m[i] = mi
        v[i] = vi
        vv = load(vi)
        if flag:  # amsgrad
            vv = max(load(vmax[i]), vv)
            vmax[i] = store(vv)
        p[i] = store(pi + neg_step * (load(mi) / (np.sqrt(vv) / sbc2 + eps)))
"""

_CPU_DRIVER = """

@njit(cache=True, nogil=True, error_model='numpy', parallel={parallel})
def {name}_{variant}(addr, coef, chunks, flag):
    for c in {rng}(chunks.shape[0]):
        {name}_chunk(addr, coef, chunks[c, 0], chunks[c, 1], chunks[c, 2], flag)
"""

CHUNK = 1 << 15        # elements per chunk of a parallel step
PARALLEL_WORK = 1 << 18  # total elements from which a step runs in parallel

_cpu_mods: dict = {}
_cpu_lock = threading.Lock()


def _cpu_module(sdt):
    mod = _cpu_mods.get(sdt)
    if mod is None:
        from ..kernels.cpu.casting import cast_code
        from ..kernels.cpu.pointwise import load_generated_module
        acc = _dt.float32 if sdt in _HALF else sdt
        st = "np.uint16" if sdt in _HALF else f"np.{sdt.name}"
        src = _HEADER.format(what=sdt.name) + (
            _CPU_BODIES.replace("LOAD", cast_code(sdt, acc, "x"))
            .replace("STORE", cast_code(acc, sdt, "x"))
            .replace("ACC", f"np.{acc.name}").replace("ST)", f"{st})")
            .replace("ITEM", str(sdt.itemsize)))
        for name in NCOEF:
            for variant, par, rng in (("serial", False, "range"), ("parallel", True, "prange")):
                src += _CPU_DRIVER.format(name=name, variant=variant, parallel=par, rng=rng)
        with _cpu_lock:
            mod = _cpu_mods.get(sdt)
            if mod is None:
                mod = _cpu_mods[sdt] = load_generated_module("optim", src)
    return mod


_pairs: dict = {}


def _pair(mod, kname):
    """The (serial, parallel) twins of one kernel, as runtime/cpu/cores.parallel_ready takes
    them."""
    key = (mod, kname)
    pair = _pairs.get(key)
    if pair is None:
        import types
        pair = _pairs[key] = types.SimpleNamespace(serial=getattr(mod, kname + "_serial"),
                                                   parallel=getattr(mod, kname + "_parallel"))
    return pair


def _chunks(size, chunk):
    """(t, lo, hi) rows covering every parameter's elements, at most ``chunk`` per row."""
    counts = np.maximum(-(-size // chunk), 1)
    t = np.repeat(np.arange(size.size, dtype=np.int64), counts)
    first = np.repeat(np.cumsum(counts) - counts, counts)
    lo = (np.arange(t.size, dtype=np.int64) - first) * chunk
    hi = np.minimum(lo + chunk, size[t])
    return np.stack([t, lo, hi], axis=1)


def _run_cpu(kname, variant, sdt, addr, size, coef, items, keep):
    from ..runtime.cpu import cores
    from ..runtime.cpu.streams import launch
    pair = _pair(_cpu_module(sdt), kname)
    writes = [it[0] for it in items] + [s for it in items for s in it[2].values()
                                        if not isinstance(s, (int, float))]
    reads = [it[1] for it in items] + keep
    flag = bool(variant[1])  # nesterov / amsgrad (unused by sgd)
    total = int(size.sum())
    fn = pair.serial
    if total >= PARALLEL_WORK and cores.threads() > 1 and not cores.blas_team_spinning():
        # memory-bound: a second core adds bandwidth; chunks split big parameters between
        # threads. Not while OpenBLAS's threads spin after a backward's GEMMs: the team would
        # wait for a core they hold (runtime/cpu/cores.py BLAS_SPIN_S)
        chunks = _chunks(size, CHUNK)
        if cores.parallel_ready(pair, (addr, coef, chunks, flag), total):
            fn = pair.parallel
    else:
        chunks = np.stack([np.arange(size.size, dtype=np.int64), np.zeros_like(size), size],
                          axis=1)
    launch(fn, f"optim.{kname}_step", writes, reads, addr, coef, chunks, flag)


# ---------------------------------------------------------------- CUDA (Triton)
_BLOCK = 1024


def _cuda_source(sdt):
    from ..kernels.cuda.pointwise_source import load_code, store_code
    acc = _dt.float32 if sdt in _HALF else sdt
    ptr_t = {_dt.float16: "tl.float16", _dt.bfloat16: "tl.uint16"}.get(sdt, f"tl.{sdt.name}")
    acc_t = f"tl.{acc.name}"
    sqrt = "tl.sqrt_rn" if acc is _dt.float32 else "tl.sqrt"
    div = "fdiv_ieee"

    def ld(ptr):
        return load_code(sdt, f"tl.load({ptr} + offs, mask=mask, other=0)")

    def st(ptr, expr):
        return f"tl.store({ptr} + offs, {store_code(sdt, expr)}, mask=mask)"

    def rnd(expr):  # the value as stored and read back (rounding of a half-type state)
        return expr if sdt not in _HALF else load_code(sdt, store_code(sdt, expr))

    head = [
        "    c = tl.program_id(0)",
        "    t = tl.load(chunks + 2 * c)",
        "    offs = tl.load(chunks + 2 * c + 1) + tl.arange(0, BLOCK).to(tl.int64)",
        "    mask = offs < tl.load(sizes + t)",
        f"    p_ptr = tl.load(addr + t * {_NPTR}).to(tl.pointer_type({ptr_t}))",
        f"    g_ptr = tl.load(addr + t * {_NPTR} + 1).to(tl.pointer_type({ptr_t}))",
        f"    s0_ptr = tl.load(addr + t * {_NPTR} + 2).to(tl.pointer_type({ptr_t}))",
        f"    s1_ptr = tl.load(addr + t * {_NPTR} + 3).to(tl.pointer_type({ptr_t}))",
        f"    s2_ptr = tl.load(addr + t * {_NPTR} + 4).to(tl.pointer_type({ptr_t}))",
    ]

    def coefs(names, k):
        return [f"    {nm} = tl.load(coef + t * {k} + {i}).to({acc_t})"
                for i, nm in enumerate(names)]

    sig = "(addr, sizes, chunks, coef, BLOCK: tl.constexpr{})"
    lines = ["@jit", "def sgd" + sig.format("") + ":"] + head
    lines += coefs(["lr", "wd", "sign"], NCOEF["sgd"])
    lines += [f"    pv = {ld('p_ptr')}",
              f"    d = sign * {ld('g_ptr')} + wd * pv",
              "    " + st("p_ptr", "pv - lr * d"), "", ""]
    lines += ["@jit", "def sgd_momentum" + sig.format(", NESTEROV: tl.constexpr") + ":"] + head
    lines += coefs(["lr", "wd", "sign", "mom_old", "damp", "mom"], NCOEF["sgd_momentum"])
    lines += [f"    pv = {ld('p_ptr')}",
              f"    d = sign * {ld('g_ptr')} + wd * pv",
              f"    b = {rnd('mom_old * ' + ld('s0_ptr') + ' + damp * d')}",
              "    " + st("s0_ptr", "b"),
              "    if NESTEROV:",
              "        d = d + mom * b",
              "    else:",
              "        d = b",
              "    " + st("p_ptr", "pv - lr * d"), "", ""]
    lines += ["@jit", "def adam" + sig.format(", AMSGRAD: tl.constexpr") + ":"] + head
    lines += coefs(["neg_step", "wd", "decay", "omb1", "b2", "omb2", "eps", "sbc2", "sign"],
                   NCOEF["adam"])
    lines += [f"    pv = {ld('p_ptr')} * decay",
              f"    gv = sign * {ld('g_ptr')} + wd * pv",
              f"    m = {ld('s0_ptr')}",
              f"    m = {rnd('m + omb1 * (gv - m)')}",
              f"    v = {rnd('b2 * ' + ld('s1_ptr') + ' + omb2 * gv * gv')}",
              "    " + st("s0_ptr", "m"),
              "    " + st("s1_ptr", "v"),
              "    if AMSGRAD:",
              f"        v = tl.maximum({ld('s2_ptr')}, v)",
              "        " + st("s2_ptr", "v"),
              f"    den = {div}({sqrt}(v), sbc2) + eps",
              "    " + st("p_ptr", f"pv + neg_step * {div}(m, den)"), ""]
    return "\n".join(lines) + "\n"


def _cuda_kernels(sdt, mode):
    from ..kernels.cuda import launch as _launch
    return _launch.cached_module(sdt, "optim", lambda: _cuda_source(sdt), mode)


def _run_cuda(kname, variant, sdt, addr, size, coef, device):
    from ..kernels.cuda import launch as _launch
    from ..ops.creation import asarray
    mode = _launch.current_mode()
    nchunks = -(-size // _BLOCK)
    t_idx = np.repeat(np.arange(len(size), dtype=np.int64), nchunks)
    first = np.concatenate([[0], np.cumsum(nchunks)[:-1]]).astype(np.int64)
    starts = (np.arange(t_idx.size, dtype=np.int64) - first[t_idx]) * _BLOCK
    chunks = np.stack([t_idx, starts], axis=1).reshape(-1)
    if chunks.size == 0:
        return
    # one host -> device copy for every table: addresses, sizes, chunks, coefficient bits
    host = np.concatenate([addr.reshape(-1), size, chunks, coef.reshape(-1).view(np.int64)])
    buf = asarray(host, device=device)
    base = buf._storage.data_ptr() + buf._offset * 8
    i64 = _dt.int64
    o_size = addr.size
    o_chunks = o_size + size.size
    o_coef = o_chunks + chunks.size
    args = [_launch.arg_for(base, i64, 0), _launch.arg_for(base, i64, o_size),
            _launch.arg_for(base, i64, o_chunks), _launch.arg_for(base, _dt.float64, o_coef)]
    mod = _cuda_kernels(sdt, mode)
    extra = {}
    if kname == "sgd_momentum":
        extra["NESTEROV"] = bool(variant[1])
    elif kname == "adam":
        extra["AMSGRAD"] = bool(variant[1])
    _launch.launch(getattr(mod, kname), (t_idx.size,), args, device.index, BLOCK=_BLOCK,
                   num_warps=4, enable_fp_fusion=False, **extra)
    # buf may be freed now: the caching allocator hands its block out again only for work
    # queued on this stream after the launch (stream-ordered reuse, as in PyTorch)
