"""The benchmark suites: which cases exist, their sizes, inputs and work counts.

A case names an operation that every implementation in ``impls.py`` exposes, its inputs (NumPy
arrays made here, converted by each implementation), how much work one call does (bytes moved
for memory-bound cases, floating-point operations for GEMM, nothing for latency cases) and how
its result is checked against the baseline before anything is timed.

Sizes come in three sets: ``full`` (the default run), ``quick`` and ``tiny`` (the CLI tests).

The ``everyday`` suite is a breadth survey: thirty common operations at 1e3, 1e5 and 2e6
elements (``quick``: 1e3 and 1e5; ``tiny``: 1e3), compared with the faster of NumPy and (when
installed) PyTorch-CPU. Its cases carry the nominal element count as ``size``, so the summary
can give a geometric mean per size.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from math import isqrt, prod

import numpy as np

from .impls import host_dtype

__all__ = ["SUITES", "Case", "build_cases", "SIZE_SETS"]

SUITES = ("elementwise", "broadcast", "reduction", "matmul", "copy", "alloc", "dispatch",
          "random", "softmax", "everyday", "fusion")
SIZE_SETS = ("full", "quick", "tiny")


@dataclass
class Case:
    suite: str
    name: str
    shape: tuple             # what the table shows (the main operand's shape)
    dtype: str
    op: str                  # operation name in impls
    inputs: list             # [(shape, how)] how: "uniform" | "normal" | "zeros", or (in any
                             # dtype) "mask": random bools, "index": int64 in [0, elements)
    kind: str                # "memory" | "compute" | "latency"
    work: float = 0.0        # bytes per call (memory) or flops per call (compute)
    size: int = 0            # x axis of the suite's plot (elements, or n for GEMM)
    kwargs: dict = field(default_factory=dict)
    views: tuple = ()        # per input: "" or "T" (transposed view of the stored array)
    check: str = "close"     # "close" | "stats" | "shape" | "argsort" (a valid permutation
                             # that sorts the first input; ties may be ordered differently)
    rtol: float = 0.0        # 0: the dtype's default
    needs: tuple = ()        # tensorlib functions the case needs (skipped when absent)
    devices: tuple = ("cpu", "cuda")
    host_inputs: bool = False  # inputs stay in host memory (host -> device copies)
    roof: str = "memory"     # which roofline applies: "memory", "gemm", "pcie", or ""
    extra_args: tuple = ()   # Python scalars passed after the array inputs
    skip: str = ""           # a reason to skip known before anything runs
    budget_scale: float = 1.0  # times the run's timing budget (big suites spend less per case)

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

    def input_dtypes(self) -> list:
        """The dtype name each input is handed to the implementations in: the case's dtype,
        except masks (bool) and index arrays (int64)."""
        return [{"mask": "bool", "index": "int64"}.get(how, self.dtype)
                for _, how in self.inputs]


def _array(rng, shape, dt, how):
    if how == "mask":
        return rng.random(shape) < 0.5
    if how == "index":
        return rng.integers(0, max(prod(shape), 1), size=shape, dtype=np.int64)
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
        "everyday": [1_000, 100_000, 2_000_000],
        "fusion": ([4_000_000], [(4096, 1024)]),
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
        "everyday": [1_000, 100_000],
        "fusion": ([1_000_000], [(1024, 1024)]),
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
        "everyday": [1_000],
        "fusion": ([4096], [(16, 32)]),
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


def _fusion(sizes, dt):
    """tl.jit: GELU (tanh form, 9 pointwise ops) and a composed row normalization, each traced
    (one fused kernel) and eager (one kernel per op), against the same expression in NumPy.
    The work is the ideal traffic (inputs read once, output written once)."""
    gelu_sizes, norm_sizes = sizes
    for n in gelu_sizes:
        for how in ("traced", "eager"):
            yield Case("fusion", f"gelu tanh, {how}", (n,), dt, f"gelu_{how}",
                       [((n,), "normal")], "memory", _nbytes(dt, 2 * n), n, rtol=1e-6,
                       devices=("cpu",))
    for m, n in norm_sizes:
        for how in ("traced", "eager"):
            yield Case("fusion", f"row norm, {how}", (m, n), dt, f"rownorm_{how}",
                       [((m, n), "normal"), ((n,), "normal"), ((n,), "normal")], "memory",
                       _nbytes(dt, 2 * m * n + 2 * n), m * n, rtol=1e-4, devices=("cpu",))


#: The everyday suite's matmul multiplies two k x k matrices, k = round(sqrt(elements)), at most
#: this (2e6 elements: 1024 x 1024, ~2.1 GFLOP, tens of ms a call on 2 cores).
EVERYDAY_MATMUL_CAP = 1024
#: Everyday cases spend this fraction of the run's per-case timing budget: ninety cases at the
#: full budget would triple the default run, and the survey's figures are geometric means over
#: many cases, less sensitive to each case's sample count.
EVERYDAY_BUDGET_SCALE = 0.5


def square_ish(n: int) -> tuple:
    """(m, k) with m * k == n, m <= k and m the largest divisor of n up to sqrt(n)."""
    m = max(isqrt(n), 1)
    while n % m:
        m -= 1
    return (m, n // m)


def _everyday(sizes, dt):
    if dt not in ("float32", "float64"):
        yield Case("everyday", "everyday ops", (), dt, "add", [], "memory",
                   skip=f"the everyday survey runs float32 and float64, not {dt}")
        return
    b = _nbytes(dt, 1)
    for n in sizes:
        v = [((n,), "uniform")]
        vv = [((n,), "uniform")] * 2
        mn = square_ish(n)
        m2 = [(mn, "uniform")]
        k = min(int(round(n ** 0.5)), EVERYDAY_MATMUL_CAP)
        m, cols = mn

        def case(name, op, inputs, work, shape=(n,), **kw):
            kw.setdefault("budget_scale", EVERYDAY_BUDGET_SCALE)
            return Case("everyday", name, shape, dt, op, inputs, kw.pop("kind", "memory"),
                        work, n, **kw)

        yield case("add", "add", vv, 3 * n * b)
        yield case("multiply by python scalar", "multiply", v, 2 * n * b, extra_args=(2.5,))
        for fn in ("exp", "log", "sin", "tanh", "sqrt"):
            yield case(fn, fn, v, 2 * n * b)
        yield case("pow 2.5", "pow", v, 2 * n * b, extra_args=(2.5,))
        yield case("where", "where", [((n,), "mask")] + vv, n + 3 * n * b)
        yield case("maximum", "maximum", vv, 3 * n * b)
        yield case("less", "less", vv, 2 * n * b + n)
        other = "float64" if dt == "float32" else "float32"
        yield case(f"astype {other}", "astype", v, n * b + n * _nbytes(other, 1),
                   kwargs={"dtype": other})
        yield case("sum", "sum", v, n * b, rtol=_red_rtol(dt, n))
        yield case("mean axis=0", "mean", m2, n * b + cols * b, shape=mn, kwargs={"axis": 0},
                   rtol=_red_rtol(dt, m))
        yield case("sum axis=1", "sum", m2, n * b + m * b, shape=mn, kwargs={"axis": 1},
                   rtol=_red_rtol(dt, cols))
        yield case("max", "amax", v, n * b)
        yield case("argmax", "argmax", v, n * b)
        yield case("std", "std", v, n * b, rtol=_red_rtol(dt, n))
        yield case("cumsum", "cumsum", v, 2 * n * b, rtol=_scan_rtol(dt, n))
        yield case("sort", "sort", v, 2 * n * b, roof="")
        yield case("argsort", "argsort", v, n * b + 8 * n, roof="", check="argsort")
        yield case("take (int64 indices)", "take", [((n,), "uniform"), ((n,), "index")],
                   2 * n * b + 8 * n)
        yield case("boolean mask", "mask_select", [((n,), "uniform"), ((n,), "mask")],
                   n * b + n + n * b // 2)
        yield case("transpose -> contiguous", "transpose_copy", [((cols, m), "uniform")],
                   2 * n * b, shape=mn)
        yield case("matmul", "matmul", [((k, k), "uniform")] * 2, 2.0 * k ** 3, shape=(k, k),
                   kind="compute", roof="gemm", rtol=_mm_rtol(dt, k))
        yield case("softmax last axis", "softmax", [(mn, "normal")], 2 * n * b, shape=mn,
                   kwargs={"axis": -1})
        yield case("concat", "concat", [((n // 2,), "uniform"), ((n - n // 2,), "uniform")],
                   2 * n * b)
        yield case("linspace", "linspace", [], n * b, kwargs={"num": n, "dtype": dt})
        yield case("zeros", "zeros", [], n * b, kwargs={"shape": (n,), "dtype": dt})
        yield case("strided slice multiply a[::2]*b[::2]", "strided_multiply", vv,
                   2 * n * b + (n // 2) * b)


def _scan_rtol(dt, n):
    # A running sum's error grows with its length and depends on the order of additions
    # (sequential or blocked); norm-wise against the last (largest) partial sum, the random-walk
    # growth of a sum's error is the reduction's allowance, doubled.
    return 2 * _red_rtol(dt, n)


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
            elif suite == "everyday":
                gen = _everyday(s["everyday"], dt)
            elif suite == "fusion":
                gen = (_fusion(s["fusion"], dt) if dt in ("float32", "float64")
                       else _float_only("fusion", dt))
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
