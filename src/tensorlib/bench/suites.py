"""The benchmark suites: which cases exist, their sizes, inputs and work counts.

A case names an operation that every implementation in ``impls.py`` exposes, its inputs (NumPy
arrays made here, converted by each implementation), how much work one call does (bytes moved
for memory-bound cases, floating-point operations for GEMM, nothing for latency cases) and how
its result is checked against the baseline before anything is timed.

Sizes come in three sets: ``full`` (the default run), ``quick`` and ``tiny`` (the CLI tests).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

import numpy as np

from .impls import host_dtype

__all__ = ["SUITES", "Case", "build_cases", "SIZE_SETS"]

SUITES = ("elementwise", "broadcast", "reduction", "matmul", "copy", "alloc", "dispatch",
          "random", "softmax")
SIZE_SETS = ("full", "quick", "tiny")


@dataclass
class Case:
    suite: str
    name: str
    shape: tuple             # what the table shows (the main operand's shape)
    dtype: str
    op: str                  # operation name in impls
    inputs: list             # [(shape, how)] how: "uniform" | "normal" | "zeros"
    kind: str                # "memory" | "compute" | "latency"
    work: float = 0.0        # bytes per call (memory) or flops per call (compute)
    size: int = 0            # x axis of the suite's plot (elements, or n for GEMM)
    kwargs: dict = field(default_factory=dict)
    views: tuple = ()        # per input: "" or "T" (transposed view of the stored array)
    check: str = "close"     # "close" | "stats" | "shape"
    rtol: float = 0.0        # 0: the dtype's default
    needs: tuple = ()        # tensorlib functions the case needs (skipped when absent)
    devices: tuple = ("cpu", "cuda")
    host_inputs: bool = False  # inputs stay in host memory (host -> device copies)
    roof: str = "memory"     # which roofline applies: "memory", "gemm", "pcie", or ""
    extra_args: tuple = ()   # Python scalars passed after the array inputs
    skip: str = ""           # a reason to skip known before anything runs

    @property
    def key(self) -> tuple:
        return (self.suite, self.name, self.dtype, tuple(self.shape))

    def make_inputs(self, seed: int = 0) -> list:
        rng = np.random.default_rng(seed)
        dt = host_dtype(self.dtype)
        out = []
        for shape, how in self.inputs:
            out.append(_array(rng, shape, dt, how))
        return out


def _array(rng, shape, dt, how):
    if how == "zeros":
        return np.zeros(shape, dt)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        return rng.integers(0, 100, size=shape).astype(dt)
    if how == "normal":
        a = rng.standard_normal(shape)
    else:
        a = rng.random(shape) + 0.5  # away from 0: relative checks of divisions stay tame
    if dt.kind == "c":
        a = a + 1j * rng.random(shape)
    return a.astype(dt)


_BASE = {
    # size set -> {suite: sizes}
    "full": {
        "elementwise": [1_000, 100_000, 1_000_000, 10_000_000],
        "broadcast": [(256, 256), (1024, 1024), (4000, 2500)],
        "reduction": [(256, 256), (1024, 1024), (4000, 2500)],
        "matmul": [128, 256, 512, 1024, 2048],
        "bmm": [(16, 128), (8, 512)],
        "copy": [(256, 256), (1024, 1024), (4000, 2500)],
        "alloc": [256, 262_144, 16_777_216],
        "random": [10_000, 1_000_000, 10_000_000],
        "softmax": [(1024, 1024), (4096, 1024), (64, 32768)],
    },
    "quick": {
        "elementwise": [1_000, 1_000_000, 10_000_000],
        "broadcast": [(1024, 1024), (4000, 2500)],
        "reduction": [(1024, 1024), (4000, 2500)],
        "matmul": [256, 1024],
        "bmm": [(16, 128)],
        "copy": [(1024, 1024), (4000, 2500)],
        "alloc": [256, 16_777_216],
        "random": [1_000_000],
        "softmax": [(1024, 1024)],
    },
    "tiny": {
        "elementwise": [64, 4096],
        "broadcast": [(16, 32)],
        "reduction": [(16, 32)],
        "matmul": [16, 32],
        "bmm": [(2, 8)],
        "copy": [(16, 32)],
        "alloc": [16, 1024],
        "random": [4096],
        "softmax": [(8, 16)],
    },
}

_FLOAT = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")


def _nbytes(dtype, n):
    return n * np.dtype(host_dtype(dtype)).itemsize if dtype != "bfloat16" else 2 * n


def _elementwise(sizes, dt):
    for n in sizes:
        yield Case("elementwise", "add", (n,), dt, "add", [((n,), "uniform")] * 2, "memory",
                   _nbytes(dt, 3 * n), n)
        yield Case("elementwise", "multiply", (n,), dt, "multiply", [((n,), "uniform")] * 2,
                   "memory", _nbytes(dt, 3 * n), n)
        if dt in _FLOAT:
            yield Case("elementwise", "exp", (n,), dt, "exp", [((n,), "uniform")], "memory",
                       _nbytes(dt, 2 * n), n)


def _broadcast(sizes, dt):
    for m, n in sizes:
        e = m * n
        yield Case("broadcast", "rows (M,N)+(N,)", (m, n), dt, "add",
                   [((m, n), "uniform"), ((n,), "uniform")], "memory", _nbytes(dt, 2 * e + n), e)
        yield Case("broadcast", "cols (M,N)+(M,1)", (m, n), dt, "add",
                   [((m, n), "uniform"), ((m, 1), "uniform")], "memory", _nbytes(dt, 2 * e + m),
                   e)
        yield Case("broadcast", "both transposed A.T+B.T", (m, n), dt, "add",
                   [((n, m), "uniform"), ((n, m), "uniform")], "memory", _nbytes(dt, 3 * e), e,
                   views=("T", "T"))
        yield Case("broadcast", "contig + transposed A+B.T", (m, n), dt, "add",
                   [((m, n), "uniform"), ((n, m), "uniform")], "memory", _nbytes(dt, 3 * e), e,
                   views=("", "T"))


def _reduction(sizes, dt):
    for m, n in sizes:
        e = m * n
        inp = [((m, n), "uniform")]
        yield Case("reduction", "sum all", (m, n), dt, "sum", inp, "memory", _nbytes(dt, e), e,
                   rtol=_red_rtol(dt, e))
        yield Case("reduction", "sum axis=0", (m, n), dt, "sum", inp, "memory",
                   _nbytes(dt, e + n), e, kwargs={"axis": 0}, rtol=_red_rtol(dt, m))
        yield Case("reduction", "sum axis=1", (m, n), dt, "sum", inp, "memory",
                   _nbytes(dt, e + m), e, kwargs={"axis": 1}, rtol=_red_rtol(dt, n))
        if not dt.startswith("complex"):
            yield Case("reduction", "max axis=1", (m, n), dt, "amax", inp, "memory",
                       _nbytes(dt, e + m), e, kwargs={"axis": 1})


def _red_rtol(dt, n):
    # Summation order differs between libraries: allow error growing with the reduced length.
    eps = {"float16": 1e-3, "bfloat16": 8e-3, "float32": 1.2e-7, "complex64": 1.2e-7}.get(dt,
                                                                                        2e-16)
    return max(10 * eps * float(np.sqrt(n)), 1e-5 if eps > 1e-10 else 1e-12)


def _matmul(sizes, bsizes, dt):
    for n in sizes:
        yield Case("matmul", "matmul (n,n)@(n,n)", (n, n), dt, "matmul",
                   [((n, n), "uniform")] * 2, "compute", 2.0 * n ** 3, n, roof="gemm",
                   rtol=_mm_rtol(dt, n))
    for b, n in bsizes:
        yield Case("matmul", "batched (b,n,n)@(b,n,n)", (b, n, n), dt, "matmul",
                   [((b, n, n), "uniform")] * 2, "compute", 2.0 * b * n ** 3, n,
                   roof="gemm", rtol=_mm_rtol(dt, n))


def _mm_rtol(dt, k):
    eps = {"float16": 1e-3, "bfloat16": 8e-3, "float32": 1.2e-7, "complex64": 1.2e-7}.get(dt,
                                                                                        2e-16)
    return max(20 * eps * k, 1e-12)


def _copy(sizes, dt, device):
    other = "float32" if dt == "float64" else "float64"
    for m, n in sizes:
        e = m * n
        inp = [((m, n), "uniform")]
        yield Case("copy", "clone", (m, n), dt, "clone", inp, "memory", _nbytes(dt, 2 * e), e)
        yield Case("copy", "transpose -> contiguous", (m, n), dt, "transpose_copy",
                   [((n, m), "uniform")], "memory", _nbytes(dt, 2 * e), e)
        yield Case("copy", "copy_ into existing", (m, n), dt, "copy_into",
                   [((m, n), "zeros"), ((m, n), "uniform")], "memory", _nbytes(dt, 2 * e), e)
        if dt != "bool":
            yield Case("copy", f"astype {other}", (m, n), dt, "astype", inp, "memory",
                       _nbytes(dt, e) + _nbytes(other, e), e, kwargs={"dtype": other})
        if device == "cuda":
            yield Case("copy", "host -> device", (m, n), dt, "h2d", inp, "memory",
                       _nbytes(dt, e), e, host_inputs=True, roof="pcie", devices=("cuda",))
            yield Case("copy", "device -> host", (m, n), dt, "d2h", inp, "memory",
                       _nbytes(dt, e), e, roof="pcie", devices=("cuda",))


def _alloc(sizes, dt):
    for n in sizes:
        yield Case("alloc", "empty (allocate + free)", (n,), dt, "empty", [], "latency", 0,
                   _nbytes(dt, n), kwargs={"shape": (n,), "dtype": dt}, check="shape", roof="")


def _dispatch(dt):
    one = [((1,), "uniform")]
    yield Case("dispatch", "add 1 element", (1,), dt, "add", one * 2, "latency", roof="", size=1)
    yield Case("dispatch", "add python scalar", (1,), dt, "add", one, "latency", roof="",
               size=1, extra_args=(1,))
    if dt in _FLOAT:
        yield Case("dispatch", "exp 1 element", (1,), dt, "exp", one, "latency", roof="", size=1)
    yield Case("dispatch", "sum 1 element", (1,), dt, "sum", one, "latency", roof="", size=1)
    yield Case("dispatch", "reshape (view)", (2, 3), dt, "reshape", [((2, 3), "uniform")],
               "latency", roof="", size=6, kwargs={"shape": (3, 2)})


def _random(sizes, dt):
    for n in sizes:
        for fn, label in (("randn", "randn (normal)"), ("rand", "rand (uniform)")):
            yield Case("random", label, (n,), dt, fn, [], "memory", _nbytes(dt, n), n,
                       kwargs={"shape": (n,), "dtype": dt}, check="stats", needs=(fn,))


def _softmax(sizes, dt):
    for m, n in sizes:
        e = m * n
        # The ideal traffic (read once, write once) is the roofline's reference, as for a fused
        # kernel: a composed softmax moves several times more and shows it as a low fraction.
        yield Case("softmax", "softmax last axis", (m, n), dt, "softmax", [((m, n), "normal")],
                   "memory", _nbytes(dt, 2 * e), e, kwargs={"axis": -1})


def build_cases(suites, dtypes, device, size_set="full") -> list:
    """Every case of ``suites`` x ``dtypes`` for ``device``, in suite order."""
    s = _BASE[size_set]
    out = []
    for suite in suites:
        for dt in dtypes:
            if suite == "elementwise":
                gen = _elementwise(s["elementwise"], dt)
            elif suite == "broadcast":
                gen = _broadcast(s["broadcast"], dt)
            elif suite == "reduction":
                gen = _reduction(s["reduction"], dt)
            elif suite == "matmul":
                gen = _matmul(s["matmul"], s["bmm"], dt)
            elif suite == "copy":
                gen = _copy(s["copy"], dt, device)
            elif suite == "alloc":
                gen = _alloc(s["alloc"], dt)
            elif suite == "dispatch":
                gen = _dispatch(dt)
            elif suite == "random":
                gen = (_random(s["random"], dt) if dt in _FLOAT and not dt.startswith("complex")
                       else _random_unsupported(dt))
            elif suite == "softmax":
                gen = (_softmax(s["softmax"], dt) if dt in _FLOAT and not dt.startswith("complex")
                       else _float_only("softmax", dt))
            else:  # the CLI validated the names
                raise ValueError(f"unknown suite {suite!r}")
            out.extend(c for c in gen if device in c.devices)
    return out


def _random_unsupported(dt):
    yield Case("random", "randn (normal)", (), dt, "randn", [], "memory",
               skip=f"random numbers are benchmarked for real floating dtypes, not {dt}")


def _float_only(suite, dt):
    yield Case(suite, f"{suite} last axis", (), dt, suite, [], "memory",
               skip=f"{suite} needs a real floating dtype, not {dt}")


def elements(shape) -> int:
    return prod(shape)
