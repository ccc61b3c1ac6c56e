"""Ahead-of-time compile check of every registered CUDA kernel, no GPU needed.

    python -m tensorlib.kernels.cuda.aot --arch sm_80,sm_90 [--quick] [--match REGEX] [--jobs N]

Compiles each kernel in its standard configurations (pointwise ops per accepted dtype class on
the contiguous and strided paths, casts between dtypes, fill, fill_range, reductions on inner
and outer layouts, every matmul config per dtype class) to cubin with
``triton.compile(ASTSource(...), target=GPUTarget(...))``, reads registers / spills / shared
memory from the ptxas log (cuobjdump when the compile came from Triton's cache), prints a
table and exits 1 on any compile error or register spill. Pointer arguments are compiled as
16-byte aligned (what the caching allocator hands out).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import subprocess
import sys
import tempfile
import time
import traceback
from concurrent.futures import ProcessPoolExecutor

from .launch import Job
from .launch import triton_type as _triton_type

__all__ = ["standard_kernels", "compile_one", "main"]

_QUICK_OPS = ("add", "divide", "floor_divide", "exp", "where", "equal", "bitwise_left_shift")
# kernels: pointwise ops, copy, fill, fill_range, reductions, matmul


# ---- what to compile ---------------------------------------------------------------------------
def _pointwise_job(name, expr, inputs, scalar_args, compute, result, out, ndim, idx64,
                   config):
    def build():
        from . import pointwise as P
        spec = P.ElementwiseSpec(name, expr, inputs, scalar_args, compute, result, out, ndim)
        fn = P._kernel_for(spec, "compiled")
        return _elementwise_signature(fn, spec, idx64)
    return Job(name, config, build)


def _elementwise_signature(fn, spec, idx64):
    from .launch import _ARG_DTYPE
    from . import pointwise as P
    idx = "i64" if idx64 else "i32"
    ptr = lambda dt: "*" + _triton_type(_ARG_DTYPE.get(dt, dt.name))  # noqa: E731
    sig, attrs = {}, {}
    names = fn.arg_names

    def add(name, ty):
        sig[name] = ty
        if ty.startswith("*"):
            attrs[(names.index(name),)] = [["tt.divisibility", 16]]

    add("p_out", ptr(spec.out))
    for n, kind, dt, _ in spec.inputs:
        if kind == "T":
            add(f"p_{n}", ptr(dt))
    for p in names:  # scalar bit words: two per real, four per complex scalar
        if p.endswith("_lo") or p.endswith("_hi"):
            add(p, "i32")
    add("n", idx)
    for p in names:
        if p.startswith("size") or p.startswith("st_"):
            add(p, idx)
    block, warps = P.gpu_config(spec)
    sig["BLOCK"] = sig["IDX64"] = "constexpr"
    const = {"BLOCK": block, "IDX64": idx64}
    return fn, sig, const, attrs, {"num_warps": warps, "enable_fp_fusion": False}


def _range_job(acc, dtype):
    def build():
        from . import pointwise as P
        from .launch import _ARG_DTYPE
        fn = P._range_kernel(acc, dtype, "compiled")
        sig = {"p_out": "*" + _triton_type(_ARG_DTYPE.get(dtype, dtype.name)), "s_lo": "i32",
               "s_hi": "i32", "d_lo": "i32", "d_hi": "i32", "n": "i32", "stride": "i32",
               "BLOCK": "constexpr", "IDX64": "constexpr"}
        block, warps = P.GPU_CONFIG["contig"]
        return (fn, sig, {"BLOCK": block, "IDX64": False},
                {(0,): [["tt.divisibility", 16]]}, {"num_warps": warps, "enable_fp_fusion": False})
    return Job("fill_range", f"{acc.name}->{dtype.name}", build)


def _matmul_job(dtype, cls, cfg):
    def build():
        from . import matmul as MM
        ptr, const = MM.kernel_args(dtype, cls, interpret=False)
        p = "*" + _triton_type(ptr)
        fn = MM.mm_kernel("compiled")
        sig = {"a_ptr": p, "b_ptr": p, "c_ptr": p}
        for name in ("M", "N", "K", "sa_b", "sa_m", "sa_k", "sb_b", "sb_k", "sb_n", "sc_b",
                     "sc_m", "sc_n"):
            sig[name] = "i32"
        const = dict(const, BLOCK_M=cfg.BLOCK_M, BLOCK_N=cfg.BLOCK_N, BLOCK_K=cfg.BLOCK_K,
                     GROUP_M=cfg.GROUP_M, EVEN_K=True, IDX64=False)
        for c in const:
            sig[c] = "constexpr"
        attrs = {(i,): [["tt.divisibility", 16]] for i in range(3)}
        # unit inner strides and 16-divisible leading ones: the common dense case
        for name in ("sa_k", "sb_n", "sc_n"):
            sig[name] = "constexpr"
            const[name] = 1
        for name in ("sa_m", "sb_k", "sc_m", "K", "N"):
            attrs[(fn.arg_names.index(name),)] = [["tt.divisibility", 16]]
        return fn, sig, const, attrs, {"num_warps": cfg.num_warps, "num_stages": cfg.num_stages,
                                       "enable_fp_fusion": True}
    label = (f"{dtype.name} {cls} {cfg.BLOCK_M}x{cfg.BLOCK_N}x{cfg.BLOCK_K} "
             f"w{cfg.num_warps} s{cfg.num_stages}")
    return Job("matmul", label, build)


def _reduction_job(name, in_dt, out_dt, compute, nkept, nred, tiles, aux_dt=None,
                   partial=False):
    def build():
        from . import reduction as R
        from .launch import _ARG_DTYPE
        from .reduce_plan import GPU_TILES, _kernel_for
        from .reduce_source import ReductionSpec
        captured = {}

        # the spec the real kernel entry point would build, without launching anything
        def fake_run(it, spec_args, div=1.0):
            captured.update(spec_args)
        real_run, R._run = R._run, fake_run
        try:
            getattr(R, f"{name}_kernel")(_FakeIter(name, in_dt, out_dt, compute, aux_dt),
                                         *((2.0,) if name in ("var", "std") else ()))
        finally:
            R._run = real_run
        spec = ReductionSpec(nkept=nkept, nred=nred, **captured)
        fn = _kernel_for(spec, "compiled")
        ptr = lambda dt: "*" + _triton_type(_ARG_DTYPE.get(dt, dt.name))  # noqa: E731
        sig = {"p_out": ptr(spec.acc if partial else out_dt)}  # partial: the chunk buffer
        if aux_dt is not None:
            sig["p_aux"] = ptr(aux_dt)
        sig["p_in"] = ptr(in_dt)
        for p in fn.arg_names:
            if p not in sig and p not in ("BLOCK_O", "BLOCK_R", "TREE", "IDX64", "PARTIAL"):
                sig[p] = "i32"
        bo, br, warps = GPU_TILES[tiles]
        for c in ("BLOCK_O", "BLOCK_R", "TREE", "IDX64", "PARTIAL"):
            sig[c] = "constexpr"
        const = {"BLOCK_O": bo, "BLOCK_R": br, "TREE": False, "IDX64": False,
                 "PARTIAL": partial}
        attrs = {(fn.arg_names.index(p),): [["tt.divisibility", 16]]
                 for p in ("p_out", "p_aux", "p_in") if p in sig}
        return fn, sig, const, attrs, {"num_warps": warps, "enable_fp_fusion": False}
    cfg = (f"{in_dt.name}->{out_dt.name} kept{nkept} red{nred} {tiles}"
           + (" partial" if partial else ""))
    return Job(name, cfg, build)


class _FakeIter:
    """Just what the reduction entry points read before launching (for _reduction_job)."""

    def __init__(self, name, in_dt, out_dt, compute, aux_dt):
        self.op = name
        self.compute_dtype = compute
        self.reduced_numel = 2
        self.naux = int(aux_dt is not None)
        dts = [out_dt] + ([aux_dt] if aux_dt is not None else []) + [in_dt]
        self.operands = [_FakeTensor(d) for d in dts]


class _FakeTensor:
    def __init__(self, dtype):
        self._dtype = dtype


def _complex_pointwise_jobs(pointwise, quick):
    """Complex pointwise kernels (configs say 'complex'): every op accepting complex64 /
    complex128 on the contiguous path, complex64 strided too, a real second operand and a
    Python complex scalar for binary ops."""
    from ... import dtypes as _dt
    jobs = []
    c64, c128 = _dt.complex64, _dt.complex128
    for name, info in sorted(pointwise.items()):
        if "c" not in info.kinds or (quick and name not in _QUICK_OPS):
            continue
        for compute in ([c64] if quick else [c64, c128]):
            result = info.result_dtype(compute)
            scal = [(n, compute) for n in info.scalar_args]
            inputs = [(n, "T", _dt.bool_ if n in info.bool_args else compute,
                       _dt.bool_ if n in info.bool_args else compute) for n in info.tensor_args]
            variants = [(inputs, 0, "contig")]
            if compute is c64 and not quick:
                variants.append((inputs, 3, "nd3"))
            if len(info.tensor_args) == 2 and not info.bool_args and not quick:
                n0, n1 = info.tensor_args
                comp = _dt.real_for(compute)
                variants.append(([inputs[0], (n1, "T", comp, compute)], 0, "contig"))
                variants.append(([inputs[0], (n1, "S", compute, compute)], 0, "contig"))
            for ins, ndim, path in variants:
                cfg = (f"{'/'.join(d.name if k == 'T' else 'scalar' for _, k, d, _ in ins)}"
                       f"->{result.name} {path} complex")
                jobs.append(_pointwise_job(name, info.expr, ins, scal, compute, result, result,
                                           ndim, False, cfg))
    return jobs


def standard_kernels(quick=False):
    """The Jobs of every registered kernel's standard configurations (``quick``: a few)."""
    import tensorlib  # noqa: F401  (loads ops.yaml: fills POINTWISE)
    from ... import dtypes as _dt
    from ...dispatch.registration import POINTWISE
    from ...dispatch.pointwise_info import COPY, FILL
    jobs = []
    by_kind = {"f": [_dt.float32, _dt.float64], "i": [_dt.int32, _dt.int64],
               "u": [_dt.uint8], "b": [_dt.bool_]}
    if quick:
        by_kind = {"f": [_dt.float32], "i": [_dt.int32], "u": [], "b": [_dt.bool_]}
    for name, info in sorted(POINTWISE.items()):
        if quick and name not in _QUICK_OPS:
            continue
        kinds = "f" if info.int_to_float else info.kinds
        computes = [d for k in "fiub" if k in kinds for d in by_kind[k]]
        for compute in computes:
            result = info.result_dtype(compute)
            stores = [compute]
            if compute is _dt.float32 and not quick:
                stores += [_dt.float16, _dt.bfloat16]  # half tensors compute in float32
            for store in stores:
                inputs = [(n, "T", _dt.bool_ if n in info.bool_args else store,
                           _dt.bool_ if n in info.bool_args else compute)
                          for n in info.tensor_args]
                out = store if result is compute else result
                scal = [(n, compute) for n in info.scalar_args]
                shapes = [(0, False), (3, False)] if store is compute else [(0, False)]
                if compute is _dt.float32 and store is compute and not quick:
                    shapes.append((3, True))
                for ndim, idx64 in shapes:
                    cfg = (f"{'/'.join(d.name for _, _, d, _ in inputs)}->{out.name} "
                           f"{'contig' if not ndim else f'nd{ndim}'}"
                           f"{' i64' if idx64 else ''}")
                    jobs.append(_pointwise_job(name, info.expr, inputs, scal, compute, result,
                                               out, ndim, idx64, cfg))
                # a Python scalar second operand (x + 2)
                if len(info.tensor_args) == 2 and store is compute and not quick and \
                        not info.bool_args:
                    n0, n1 = info.tensor_args
                    inputs = [(n0, "T", compute, compute), (n1, "S", compute, compute)]
                    jobs.append(_pointwise_job(name, info.expr, inputs, scal, compute, result,
                                               out, 0, False,
                                               f"{compute.name},scalar->{out.name} contig"))
    jobs += _complex_pointwise_jobs(POINTWISE, quick)
    real = [d for d in _dt.ALL_DTYPES if d.kind != "c"]
    if quick:
        pairs = [(_dt.float32, _dt.bfloat16), (_dt.float64, _dt.float16), (_dt.int64, _dt.uint8),
                 (_dt.float32, _dt.int64)]
    else:
        pairs = sorted({(s, d) for s in real for d in real
                        if s in (d, _dt.float32, _dt.float64, _dt.int64, _dt.bool_)
                        or d in (_dt.float32, _dt.float64, _dt.int64, _dt.bool_)},
                       key=lambda p: (p[0].name, p[1].name))
    for src, dst in pairs:
        cdt = _dt.float32 if src in (_dt.float16, _dt.bfloat16) else src
        inputs = [("self", "T", src, cdt)]
        for ndim in ((0,) if src is not dst or quick else (0, 3)):
            cfg = f"{src.name}->{dst.name} {'contig' if not ndim else f'nd{ndim}'}"
            jobs.append(_pointwise_job("copy", COPY.expr, inputs, [], cdt, cdt, dst, ndim,
                                       False, cfg))
    fills = [_dt.float16, _dt.int8] if quick else real
    for dst in fills:
        cdt = _dt.float64 if dst in (_dt.float16, _dt.bfloat16) else dst
        jobs.append(_pointwise_job("fill", FILL.expr, [("value", "S", cdt, cdt)], [], cdt, cdt,
                                   dst, 0, False, f"{dst.name} contig"))
    for dst in ([_dt.float32] if quick else real):
        jobs.append(_range_job(_dt.float64, dst))
        if dst.kind in "iu":
            jobs.append(_range_job(_dt.int64, dst))
    f32, f64 = _dt.float32, _dt.float64
    reductions = [("sum", f32, f32, f32), ("sum", _dt.float16, _dt.float16, f32),
                  ("sum", _dt.int32, _dt.int64, _dt.int64),
                  ("sum", _dt.bool_, _dt.int64, _dt.int64),
                  ("prod", f32, f32, f32), ("mean", f32, f32, f32),
                  ("mean", _dt.int32, f32, f64), ("max", f32, f32, f32),
                  ("max", _dt.int8, _dt.int8, _dt.int8), ("min", f64, f64, f64),
                  ("min", _dt.bool_, _dt.bool_, _dt.uint8), ("any", f32, _dt.bool_, _dt.bool_),
                  ("all", _dt.bool_, _dt.bool_, _dt.bool_), ("var", f32, f32, f32),
                  ("std", _dt.bfloat16, _dt.bfloat16, f32)]
    # (kept dims, reduced dims, tiles, partial): partial = stage 1 of a split reduction
    layouts = [(0, 1, "full", False), (0, 1, "full", True), (1, 1, "inner", True),
               (1, 1, "inner", False), (1, 1, "outer", False), (2, 2, "outer", False)]
    if quick:
        reductions, layouts = reductions[:1] + reductions[-2:-1], layouts[1:5]
    else:
        c64, c128 = _dt.complex64, _dt.complex128  # (re, im) pair accumulators
        reductions += [("sum", c64, c64, c64), ("prod", c64, c64, c64),
                       ("prod", c128, c128, c128), ("mean", c128, c128, c128),
                       ("var", c64, f32, c64), ("std", c128, f64, c128),
                       ("any", c64, _dt.bool_, _dt.bool_)]
    for name, in_dt, out_dt, compute in reductions:
        aux = compute if name in ("var", "std") else None
        for nk, nr, tiles, partial in layouts:
            jobs.append(_reduction_job(name, in_dt, out_dt, compute, nk, nr, tiles, aux,
                                       partial))
    from .matmul import CONFIGS
    classes = [(_dt.float16, "half"), (_dt.bfloat16, "half"), (_dt.float32, "tf32"),
               (_dt.float32, "fp32"), (_dt.float64, "fp64"), (_dt.int8, "int8"),
               (_dt.int16, "generic"), (_dt.int32, "generic"), (_dt.int64, "generic"),
               (_dt.bool_, "generic"), (_dt.complex64, "c64"), (_dt.complex128, "c128")]
    for dtype, cls in classes:
        configs = CONFIGS[cls]
        if quick:
            if dtype not in (_dt.float16, _dt.int64):
                continue
            configs = configs[-1:]
        for cfg in configs:
            jobs.append(_matmul_job(dtype, cls, cfg))
    # Kernel modules beyond the pointwise / copy / matmul core list their own configurations.
    from . import cross_entropy, indexing, normalization, random, reduction, scan, sorting
    for module in (reduction, scan, normalization, cross_entropy, indexing, sorting, random):
        jobs += module.aot_jobs(quick)
    from ...jit import fuser_cuda  # tl.jit's fused kernels: a representative traced chain
    jobs += fuser_cuda.aot_jobs(quick)
    return jobs


# ---- compiling ---------------------------------------------------------------------------------
_PTXAS_REGS = re.compile(r"Used (\d+) registers")
_PTXAS_SPILL = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")


def _resource_usage(cubin: bytes):
    """(registers, local bytes) from cuobjdump, for compiles that skipped ptxas (cache)."""
    from triton import knobs
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(cubin)
    try:
        res = subprocess.run([knobs.nvidia.cuobjdump.path, "-res-usage", f.name],
                             capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(f.name)
    regs = re.search(r"REG:(\d+)", res)
    local = re.search(r"LOCAL:(\d+)", res)
    return (int(regs.group(1)) if regs else -1), (int(local.group(1)) if local else 0)


def compile_one(job_index, quick, arch):
    """Compiles job ``job_index`` of standard_kernels(quick) for ``arch`` (e.g. 90); returns a
    result row. Runs in worker processes."""
    from . import launch
    launch.force_compiled()
    import triton
    from triton import knobs
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    job = standard_kernels(quick)[job_index]
    row = {"kernel": job.kernel, "config": job.config, "arch": f"sm_{arch}", "regs": None,
           "spills": None, "smem": None, "seconds": None, "error": None}
    t0 = time.perf_counter()
    try:
        fn, sig, const, attrs, options = job.build()
        src = ASTSource(fn, sig, const, attrs)
        knobs.nvidia.dump_ptxas_log = True
        log = io.StringIO()
        with contextlib.redirect_stdout(log):
            compiled = triton.compile(src, target=GPUTarget("cuda", arch, 32), options=options)
        row["seconds"] = time.perf_counter() - t0
        text = log.getvalue()
        regs = _PTXAS_REGS.findall(text)
        spills = _PTXAS_SPILL.findall(text)
        if regs:
            row["regs"] = max(int(r) for r in regs)
            row["spills"] = sum(int(a) + int(b) for a, b in spills)
        else:
            row["regs"], row["spills"] = _resource_usage(compiled.asm["cubin"])
        row["smem"] = compiled.metadata.shared
    except Exception as e:  # noqa: BLE001 - reported in the table
        row["seconds"] = time.perf_counter() - t0
        row["error"] = f"{type(e).__name__}: {e}".strip()
        row["trace"] = traceback.format_exc()
    return row


def _init_worker(cache_dir):
    os.environ["TRITON_CACHE_DIR"] = cache_dir
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # silences Triton 3.9's warning


def _parse_arch(text):
    archs = []
    for a in text.split(","):
        a = a.strip().lower()
        m = re.fullmatch(r"(?:sm_?)?(\d+)a?", a)
        if not m:
            raise SystemExit(f"aot: bad --arch entry {a!r}; expected e.g. sm_80,sm_90")
        archs.append(int(m.group(1)))
    return archs


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tensorlib.kernels.cuda.aot",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", default="sm_80,sm_90", help="comma-separated, e.g. sm_80,sm_90")
    ap.add_argument("--quick", action="store_true", help="a small representative subset")
    ap.add_argument("--match", default=None, help="only kernels whose 'kernel config' matches")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--keep-cache", action="store_true",
                    help="use Triton's cache dir (faster reruns; compile seconds then lie)")
    ap.add_argument("--verbose", action="store_true", help="print tracebacks of failures")
    args = ap.parse_args(argv)
    archs = _parse_arch(args.arch)

    from . import launch
    launch.force_compiled()
    jobs = standard_kernels(args.quick)
    selected = [i for i, j in enumerate(jobs)
                if args.match is None or re.search(args.match, f"{j.kernel} {j.config}")]
    tasks = [(i, arch) for i in selected for arch in archs]
    cache_ctx = (contextlib.nullcontext(os.environ.get("TRITON_CACHE_DIR", ""))
                 if args.keep_cache else tempfile.TemporaryDirectory(prefix="tl-aot-"))
    t0 = time.perf_counter()
    with cache_ctx as cache_dir:
        if args.keep_cache and not cache_dir:
            cache_dir = os.path.join(os.path.expanduser("~"), ".triton", "cache")
        if args.jobs > 1 and len(tasks) > 1:
            import multiprocessing as mp
            with ProcessPoolExecutor(args.jobs, mp_context=mp.get_context("fork"),
                                     initializer=_init_worker, initargs=(cache_dir,)) as ex:
                rows = list(ex.map(compile_one, [i for i, _ in tasks],
                                   [args.quick] * len(tasks), [a for _, a in tasks]))
        else:
            _init_worker(cache_dir)
            rows = [compile_one(i, args.quick, a) for i, a in tasks]
    wall = time.perf_counter() - t0
    return _report(rows, wall, args.verbose)


def _report(rows, wall, verbose):
    headers = ("kernel", "config", "arch", "regs", "spills", "smem", "secs")
    table = []
    for r in rows:
        if r["error"]:
            table.append((r["kernel"], r["config"], r["arch"], "-", "-", "-",
                          f"{r['seconds']:.2f}"))
        else:
            table.append((r["kernel"], r["config"], r["arch"], str(r["regs"]), str(r["spills"]),
                          str(r["smem"]), f"{r['seconds']:.2f}"))
    widths = [max(len(h), *(len(t[i]) for t in table)) if table else len(h)
              for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths))
    print(line)
    print("-" * len(line))
    for t in table:
        print("  ".join(c.ljust(w) for c, w in zip(t, widths)))
    errors = [r for r in rows if r["error"]]
    spills = [r for r in rows if not r["error"] and r["spills"]]
    ok = [r for r in rows if not r["error"]]
    print()
    if ok:
        regs = [r["regs"] for r in ok]
        print(f"{len(rows)} compiles ({len({(r['kernel'], r['config']) for r in rows})} kernel "
              f"configs x {len({r['arch'] for r in rows})} archs) in {wall:.1f} s wall; "
              f"registers {min(regs)}..{max(regs)}, max shared memory "
              f"{max(r['smem'] for r in ok)} B, {len(spills)} with spills, "
              f"{len(errors)} errors")
    for r in errors:
        print(f"ERROR {r['kernel']} [{r['config']}] {r['arch']}: {r['error'][:2000]}")
        if verbose:
            print(r.get("trace", ""))
    for r in spills:
        print(f"SPILL {r['kernel']} [{r['config']}] {r['arch']}: {r['spills']} bytes")
    return 1 if errors or spills or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
