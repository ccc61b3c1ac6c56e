"""GEMM on the GPU: tl.matmul (the autotuned Triton kernel) against cuBLAS, in TFLOP/s.

Run: python benchmarks/cuda_gemm.py [--quick] [--dtypes fp16,bf16,fp32,tf32,fp64]
                                    [--shapes 4096x4096x11008,...] [--json out.json]

cuBLAS (``cublasGemmEx``) runs on tensorlib's own device pointers and on tensorlib's current
stream, through nvmath-python's cuBLAS bindings (``nvmath.bindings.cublas``) or else CuPy's
(``cupy_backends.cuda.libs.cublas``, under an ExternalStream), whichever is installed
(``pip install nvmath-python[cu12]`` or ``pip install cupy-cuda12x``; never torch). Both
sides are timed by tensorlib's benchmarker (``tensorlib.kernels.cuda.autotune.benchmark``:
timing events on the current stream, a 256 MiB L2 flush before each rep, warm-up, median of
the reps). Shapes are M x N x K (C[M, N] =
A[M, K] @ B[K, N], all row-major): squares 512..8192 and LLM-like projections. Each row prints
our and cuBLAS's TFLOP/s, the ratio ours / cuBLAS (higher is better; 1.0 = parity), the
relative difference of the two results, the one-off autotuning seconds of the first call and
the config chosen. fp32 is IEEE on both sides (cuBLAS COMPUTE_32F); tf32 sets
``tl.backends.matmul.allow_tf32`` and COMPUTE_32F_FAST_TF32. Small GEMMs include tl.matmul's
Python dispatch when it outlasts the flush (the figure a user of tl.matmul sees).

Without a CUDA GPU it prints ``no CUDA GPU present: skipped`` and exits 0.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

os.environ["TENSORLIB_CUDA_BACKEND"] = "real"  # a benchmark means a GPU, never the interpreter
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

SQUARES = [512, 1024, 2048, 4096, 8192]
LLM = [(4096, 4096, 11008), (4096, 11008, 4096), (8192, 1024, 4096), (8192, 8192, 1024)]

# cuBLAS / CUDA library enum values (cublas_api.h, library_types.h)
_OP_N = 0
_GEMM_DEFAULT = -1
_CUDA_R = {"fp16": 2, "bf16": 14, "fp32": 0, "tf32": 0, "fp64": 1}
_COMPUTE = {"fp16": 68, "bf16": 68, "fp32": 68, "tf32": 77, "fp64": 70}  # 32F, 32F_FAST_TF32, 64F


class Cublas:
    """``cublasGemmEx`` on raw device pointers. Row-major C = A @ B is the column-major product
    C^T = B^T A^T, so B goes first and no transpose is needed."""

    def __init__(self):
        try:
            from nvmath.bindings import cublas as cb
            import nvmath
            self.label = f"cuBLAS via nvmath-python {getattr(nvmath, '__version__', '?')}"
            self._gemm, self._set_stream = cb.gemm_ex, cb.set_stream
            self.handle = cb.create()
            self._destroy = cb.destroy
        except ImportError:
            try:
                import cupy
                from cupy_backends.cuda.libs import cublas as cb
            except ImportError:
                raise RuntimeError("no cuBLAS binding: pip install nvmath-python[cu12] "
                                   "(or cupy-cuda12x)") from None
            self.label = f"cuBLAS via CuPy {cupy.__version__}"
            self._gemm = cb.gemmEx
            # CuPy's gemmEx sets the handle's stream to CuPy's current stream itself: make
            # that tensorlib's stream (an ExternalStream over its handle) around each call
            self._set_stream = self._cupy_stream
            self._cupy, self._streams = cupy, {}
            self.handle = cb.create()
            self._destroy = cb.destroy
        self._scalars = {}
        self._ctx = None

    def _cupy_stream(self, handle, stream):
        s = self._streams.get(stream)
        if s is None:
            cs = self._cupy.cuda
            s = self._streams[stream] = cs.Stream.null if stream == 0 else \
                cs.ExternalStream(stream)
        self._ctx = s

    def gemm(self, kind, a_ptr, b_ptr, c_ptr, m, n, k, stream):
        import numpy as np
        if kind not in self._scalars:   # host alpha = 1, beta = 0 in the compute type
            dt = np.float64 if kind == "fp64" else np.float32
            self._scalars[kind] = (np.ones(1, dt), np.zeros(1, dt))
        alpha, beta = self._scalars[kind]
        self._set_stream(self.handle, stream)
        t = _CUDA_R[kind]
        args = (self.handle, _OP_N, _OP_N, n, m, k, alpha.ctypes.data, b_ptr, t, n, a_ptr, t,
                k, beta.ctypes.data, c_ptr, t, n, _COMPUTE[kind], _GEMM_DEFAULT)
        if self._ctx is None:
            self._gemm(*args)
        else:
            with self._ctx:
                self._gemm(*args)

    def close(self):
        self._destroy(self.handle)


def _parse_shapes(text):
    shapes = []
    for item in text.split(","):
        parts = item.lower().split("x")
        try:
            m, n, k = (int(p) for p in parts)
            if min(m, n, k) < 1:
                raise ValueError
        except ValueError:
            raise SystemExit(f"cuda_gemm: --shapes: expected MxNxK with positive ints, got "
                             f"{item!r}") from None
        shapes.append((m, n, k))
    return shapes


def _device_tensor(tl, rng, shape, kind):
    import numpy as np
    host = rng.uniform(-1, 1, size=shape).astype(np.float64 if kind == "fp64" else np.float32)
    t = tl.asarray(host, device="cuda")
    if kind == "fp16":
        return t.astype(tl.float16)
    if kind == "bf16":
        return t.astype(tl.bfloat16)
    return t


def _host(tl, t):
    import numpy as np
    if t.dtype in (tl.float16, tl.bfloat16):
        t = t.astype(tl.float32)
    return np.asarray(t.cpu().numpy(), np.float64)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer shapes, fp16 and bf16 only")
    ap.add_argument("--dtypes", default=None, help="comma list of fp16,bf16,fp32,tf32,fp64")
    ap.add_argument("--shapes", default=None, help="comma list of MxNxK (default: the set)")
    ap.add_argument("--budget-ms", type=float, default=200.0, help="timing budget per side")
    ap.add_argument("--json", default=None, help="also write the rows to this file")
    args = ap.parse_args(argv)

    from _gpu import gpu_unavailable  # benchmarks/_gpu.py
    code = gpu_unavailable("cuda_gemm")
    if code is not None:
        return code
    import tensorlib as tl
    import numpy as np
    from tensorlib.kernels.cuda import autotune as A
    from tensorlib.kernels.cuda import matmul as MM

    kinds = (args.dtypes or ("fp16,bf16" if args.quick else "fp16,bf16,fp32")).split(",")
    for kd in kinds:
        if kd not in _CUDA_R:
            raise SystemExit(f"cuda_gemm: --dtypes: unknown {kd!r}; choose from "
                             f"{','.join(_CUDA_R)}")
    if args.shapes:
        shapes = _parse_shapes(args.shapes)
    elif args.quick:
        shapes = [(s, s, s) for s in (1024, 4096)] + LLM[:1]
    else:
        shapes = [(s, s, s) for s in SQUARES] + LLM
    try:
        blas = Cublas()
    except Exception as e:  # noqa: BLE001 - ours alone is still worth printing
        print(f"(no cuBLAS baseline: {e})")
        blas = None

    props = tl.cuda.get_device_properties()
    print(f"device: {props.name} (sm_{props.major}{props.minor}, "
          f"{props.multi_processor_count} SMs); baseline: "
          f"{blas.label if blas else 'none'}; autotune "
          f"{'on' if A.enabled() else 'off (TENSORLIB_AUTOTUNE=0)'}")
    head = (f"{'dtype':5} {'M':>6} {'N':>6} {'K':>6} {'ours ms':>9} {'TFLOP/s':>8} "
            f"{'cuBLAS ms':>9} {'TFLOP/s':>8} {'ours/cuBLAS':>11} {'rel diff':>9} "
            f"{'tune s':>7}  config")
    print(head)
    print("-" * len(head))
    rng = np.random.default_rng(0)
    rows = []
    stream = tl.cuda.current_stream()
    for kind in kinds:
        tl.backends.matmul.allow_tf32 = kind == "tf32"
        for m, n, k in shapes:
            a = _device_tensor(tl, rng, (m, k), kind)
            b = _device_tensor(tl, rng, (k, n), kind)
            c = tl.empty((m, n), dtype=a.dtype, device="cuda")
            t0 = time.perf_counter()
            tl.matmul(a, b, out=c)          # first call of the shape class: autotunes
            tl.cuda.synchronize()
            tune_s = time.perf_counter() - t0
            ours = A.benchmark(lambda: tl.matmul(a, b, out=c), budget_ms=args.budget_ms)
            cls = MM.dtype_class(a.dtype)
            cfg = (MM.TUNER.cached(cls, MM.shape_key(m, n, k, 1, True, True),
                                   tl.cuda.current_device())
                   if A.enabled() else MM._pick(cls, m, n, 1))
            flop = 2.0 * m * n * k
            row = {"dtype": kind, "M": m, "N": n, "K": k, "ours_ms": ours.median_ms,
                   "ours_iqr_ms": ours.iqr_ms, "ours_tflops": flop / ours.median_ms / 1e9,
                   "tune_s": tune_s,
                   "config": "?" if cfg is None else
                             f"{cfg.BLOCK_M}x{cfg.BLOCK_N}x{cfg.BLOCK_K} g{cfg.GROUP_M} "
                             f"w{cfg.num_warps} s{cfg.num_stages}"}
            if blas is not None:
                ref = tl.empty((m, n), dtype=a.dtype, device="cuda")
                pa, pb, pr = a.data_ptr(), b.data_ptr(), ref.data_ptr()

                def cublas():
                    blas.gemm(kind, pa, pb, pr, m, n, k, stream.cuda_stream)
                base = A.benchmark(cublas, budget_ms=args.budget_ms)
                got, want = _host(tl, c), _host(tl, ref)
                scale = float(np.max(np.abs(want))) or 1.0
                row.update(cublas_ms=base.median_ms, cublas_iqr_ms=base.iqr_ms,
                           cublas_tflops=flop / base.median_ms / 1e9,
                           ratio=base.median_ms / ours.median_ms,
                           rel_diff=float(np.max(np.abs(got - want))) / scale)
                ref = None
            rows.append(row)
            print(f"{kind:5} {m:>6} {n:>6} {k:>6} {row['ours_ms']:>9.3f} "
                  f"{row['ours_tflops']:>8.1f} "
                  + (f"{row['cublas_ms']:>9.3f} {row['cublas_tflops']:>8.1f} "
                     f"{row['ratio']:>11.2f} {row['rel_diff']:>9.1e} " if blas else
                     f"{'-':>9} {'-':>8} {'-':>11} {'-':>9} ")
                  + f"{tune_s:>7.1f}  {row['config']}", flush=True)
            a = b = c = None   # free before the next shape allocates
    tl.backends.matmul.allow_tf32 = False
    if blas is not None:
        ratios = [r["ratio"] for r in rows]
        gm = float(np.exp(np.mean(np.log(ratios))))
        print(f"\ngeometric mean ours/cuBLAS (TFLOP/s ratio): {gm:.2f} over {len(rows)} rows")
        blas.close()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": props.name, "baseline": blas.label if blas else None,
                       "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
