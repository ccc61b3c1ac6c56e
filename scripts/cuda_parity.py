"""CPU/CUDA parity check: every (op, dtype) that works on the CPU must give the same result on
CUDA (interpret backend: Triton's interpreter on host memory, no GPU needed).

    PYTHONPATH=src python scripts/cuda_parity.py [--quick] [--shard I/N] [op ...]

On a machine with a GPU, ``TENSORLIB_CUDA_BACKEND=real`` runs the same cases through the
compiled kernels instead (the interpreter and the GPU differ in pointer types, bf16 handling
and reduction trees, so both are worth running). ``--shard I/N`` runs every N-th case from
the I-th (0-based), for parallel processes. ``--quick`` runs one op of each kernel family in
two dtypes (``QUICK_OPS`` x ``QUICK_DTYPES``): the form tests/test_cuda_parity.py runs in CI.

Prints a GAP line for an (op, dtype) the CPU runs and CUDA refuses, a DIFF line where the
results differ (shape, dtype, or values beyond half-precision tolerance); exits 1 if any.
Slow on a cold kernel cache (every kernel goes through Triton's interpreter): minutes.
"""
import os
import sys
import warnings

os.environ.setdefault("TENSORLIB_CUDA_BACKEND", "interpret")
warnings.simplefilter("ignore")

import numpy as np  # noqa: E402

import tensorlib as tl  # noqa: E402

DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "uint64", "float16", "bfloat16",
          "float32", "float64", "complex64", "complex128"]

UNARY = """abs negative positive sign square sqrt exp log sin cos tanh conj real imag isnan isinf
isfinite round floor ceil trunc logical_not reciprocal expm1 log1p tan asin sinh atanh acosh
signbit bitwise_invert""".split()
BINARY = """add subtract multiply divide pow equal not_equal less maximum minimum floor_divide
remainder logical_and bitwise_and atan2 hypot copysign logaddexp nextafter""".split()
REDUCTIONS = {"sum": {}, "prod": {}, "mean": {}, "max": {}, "min": {}, "var": {}, "std": {},
              "any": {}, "all": {}, "argmax": {}, "argmin": {}, "count_nonzero": {},
              "cumulative_sum": {"axis": 1}, "cumulative_prod": {"axis": 1}}


# --quick: one op per kernel family (pointwise unary / binary / comparison, value and arg
# reductions, scans, sort, search, matmul, gather, masks, scatter, where, normalization)
QUICK_OPS = ["exp", "add", "less", "sum", "argmax", "cumulative_sum", "sort", "searchsorted",
             "matmul", "take", "getitem_mask", "setitem", "where", "softmax"]
QUICK_DTYPES = ["int64", "float32"]


def _index(x, values):
    return tl.asarray(values, device=x.device)


OTHERS = {
    "sort": lambda x: tl.sort(x, axis=-1),
    "argsort": lambda x: tl.argsort(x, axis=-1),
    "unique_values": tl.unique_values,
    "unique_counts": lambda x: tl.unique_counts(x)[1],
    "searchsorted": lambda x: tl.searchsorted(tl.sort(tl.reshape(x, (-1,))), x),
    "matmul": lambda x: tl.matmul(x, x.mT),
    "vecdot": lambda x: tl.vecdot(x, x),
    "take": lambda x: tl.take(x, _index(x, [0, 2]), axis=1),
    "getitem_mask": lambda x: x[x != x[0, 0]],
    "nonzero": lambda x: tl.nonzero(x)[0],
    "setitem": lambda x: (x.__setitem__(_index(x, [0]), x[1]), x)[1],
    "where": lambda x: tl.where(x != x[0, 0], x, x[1, 1]),
    "clip": lambda x: tl.clip(x, x[0, 0], x[2, 2]),
    "flip": tl.flip,
    "roll": lambda x: tl.roll(x, 1, axis=1),
    "concat": lambda x: tl.concat([x, x]),
    "repeat": lambda x: tl.repeat(x, 2, axis=0),
    "tile": lambda x: tl.tile(x, (2, 1)),
    "diff": lambda x: tl.diff(x, axis=1),
    "tril": tl.tril,
    "astype_float32": lambda x: tl.astype(x, tl.float32),
    "softmax": tl.softmax,
    "layer_norm": lambda x: tl.layer_norm(x, (4,)),
    "linalg.vector_norm": lambda x: tl.linalg.vector_norm(x),
    "linalg.matrix_norm": lambda x: tl.linalg.matrix_norm(x),
    "linalg.trace": lambda x: tl.linalg.trace(x),
    "linalg.outer": lambda x: tl.linalg.outer(x[0], x[1]),
    "linalg.cross": lambda x: tl.linalg.cross(x[:, :3], x[:, 1:]),
    "zeros_like": tl.zeros_like,
    "full_like": lambda x: tl.full_like(x, 1),
    "meshgrid": lambda x: tl.meshgrid(x[0], x[1])[0],
}


def operand(dtype, device):
    """A (3, 4) tensor of small positive values (every dtype holds them exactly)."""
    a = np.arange(12).reshape(3, 4) % 5 + 1
    if dtype == "bfloat16":
        return tl.asarray(a.astype(np.float32)).astype(tl.bfloat16).to(device)
    return tl.asarray(a.astype(dtype)).to(device)


def result(fn, x):
    r = fn(x)
    if isinstance(r, tuple):
        r = r[0]
    return np.asarray(r.cpu().numpy())


def same(got, want):
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    wide = np.complex128 if want.dtype.kind == "c" else np.float64
    return np.allclose(got.astype(wide), want.astype(wide), rtol=1e-2, atol=1e-3,
                       equal_nan=True)


def cases():
    for name in UNARY:
        yield name, lambda x, n=name: getattr(tl, n)(x)
    for name in BINARY:
        yield name, lambda x, n=name: getattr(tl, n)(x, x)
    for name, kwargs in REDUCTIONS.items():
        yield name, lambda x, n=name, k=kwargs: getattr(tl, n)(x, **k)
    yield from OTHERS.items()


def main(argv):
    shard, count = 0, 1
    dtypes = DTYPES
    if argv[:1] == ["--quick"]:
        argv = argv[1:] + QUICK_OPS
        dtypes = QUICK_DTYPES
    if argv[:1] == ["--shard"]:
        shard, count = (int(v) for v in argv[1].split("/"))
        argv = argv[2:]
    only = set(argv)
    problems = 0
    for i, (name, fn) in enumerate(cases()):
        if (only and name not in only) or i % count != shard:
            continue
        for dtype in dtypes:
            try:
                want = result(fn, operand(dtype, "cpu"))
            except Exception:
                continue  # not supported on the CPU either
            try:
                got = result(fn, operand(dtype, "cuda"))
                tl.cuda.synchronize()
            except Exception as e:
                print(f"GAP {name} {dtype}: {type(e).__name__}: {str(e)[:110]}", flush=True)
                problems += 1
                continue
            if not same(got, want):
                print(f"DIFF {name} {dtype}: got {got.dtype}{got.shape}, "
                      f"want {want.dtype}{want.shape}", flush=True)
                problems += 1
    print(f"{problems} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
