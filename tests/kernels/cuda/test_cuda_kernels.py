"""The Triton CUDA kernels (kernels/cuda) on the interpret backend, against NumPy.

Every pointwise op of ops.yaml on device="cuda" (contiguous fast path and strided / broadcast
N-d path, 32- and 64-bit indexing), casts between every pair of dtypes, fill / fill_range,
matmul / mm / bmm for every supported dtype, and stream ordering of launches. The Triton
interpreter is slow per program, so shapes are small; host-side data is made and checked with
NumPy only (no CPU kernels, whose compiles would dominate).
"""
from __future__ import annotations

import math
import os

import numpy as np
import pytest
import yaml

import tensorlib as tl
import tensorlib.cuda as tc
from tensorlib.dispatch.namespace import ops as _internal
from tensorlib.dispatch.schema import parse_schema
from helpers import bf16_exact as _bf16_exact


pytestmark = pytest.mark.usefixtures("cuda_interpret")  # conftest.py


# ---- helpers -----------------------------------------------------------------------------------
def dev(arr, device="cuda"):
    """A contiguous NumPy array on the device (a plain memcpy, no kernel)."""
    return tl.asarray(np.ascontiguousarray(arr), device=device)


def host(t) -> np.ndarray:
    """Values of a CUDA tensor (bfloat16 widened to float32)."""
    return np.array(t.cpu()._to_host_numpy(), copy=True)


def bf16_round(x) -> np.ndarray:
    """float32 -> nearest-even bfloat16 value, as float32 (NumPy has no bfloat16)."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint32)
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    r = np.where(nan, ((u >> 16) & 0x8000) | 0x7FC0, r).astype(np.uint32)
    return (r << 16).view(np.float32)


def to_device(arr, dtype):
    """arr on the device as tensorlib dtype name ``dtype`` (bfloat16: cast on the device)."""
    if dtype == "bfloat16":
        return dev(arr.astype(np.float32)).astype(tl.bfloat16)
    return dev(arr.astype(dtype))


def check(got, want, dtype, rtol=None, atol=0.0):
    if dtype in ("bfloat16",):
        rtol = 1e-2 if rtol is None else rtol
    elif dtype == "float16":
        rtol = 2e-3 if rtol is None else rtol
    elif dtype in ("float32", "complex64"):
        rtol = 2e-6 if rtol is None else rtol
    elif dtype in ("float64", "complex128"):
        rtol = 1e-12 if rtol is None else rtol
    if np.asarray(want).dtype.kind in "fc":
        np.testing.assert_allclose(got, np.asarray(want).astype(got.dtype), rtol=rtol,
                                   atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


# ---- the pointwise ops, from the YAML ----------------------------------------------------------
_YAML = os.path.join(os.path.dirname(tl.__file__), "ops.yaml")
with open(_YAML) as _f:
    _ENTRIES = [e for e in yaml.safe_load(_f) if "pointwise" in e]
_CLASSES = {"all": "biufc", "numeric": "iufc", "real": "biuf", "real_numeric": "iuf",
            "integral": "biu", "integer": "iu", "float": "f", "float_complex": "fc"}


class Op:
    def __init__(self, entry):
        schema = parse_schema(entry["func"])
        self.name = schema.name
        args = [a for a in schema.arguments if not a.is_out]
        self.tensor_args = [a.name for a in args if a.type.base == "Tensor"]
        self.kinds = _CLASSES[entry.get("dtypes", "all")]
        self.no_half = "no_half" in entry.get("tags", ())
        self.int_to_float = entry.get("promote") == "int_to_float"
        self.output = entry.get("output", "same")
        self.bool_args = list(entry.get("bool_args", ()))
        variants = entry.get("variants", "function, method")
        self.function = "function" in variants
        self.internal = not variants.strip()  # (no variants: the internal op namespace's)
        self.aliases = list(entry.get("aliases", ()))

    def __repr__(self):
        return self.name

    def call(self, *args, **kw):
        if self.function:
            return getattr(tl, self.name)(*args, **kw)
        if self.internal:
            return getattr(_internal, self.name)(*args, **kw)
        return getattr(args[0], self.name)(*args[1:], **kw)

    def compute(self, dtype):
        """(compute dtype name, output dtype name) of tensor inputs of ``dtype``."""
        c = dtype
        if self.int_to_float and np.dtype(c if c != "bfloat16" else "float32").kind in "biu":
            c = "float32"
        if c in ("float16", "bfloat16"):
            return "float32", ("bool" if self.output == "bool" else dtype)
        return c, ("bool" if self.output == "bool" else c)


OPS = [Op(e) for e in _ENTRIES]


def _int_identity(fn):
    def run(x):
        return x.copy() if x.dtype.kind in "biu" else fn(x)
    return run


def _reciprocal(x):
    if x.dtype.kind in "iu":
        ones = (x == 1) | (x == -1) if x.dtype.kind == "i" else x == 1
        return np.where(ones, x, 0).astype(x.dtype)
    return np.reciprocal(x)


def _f64(fn):
    def run(*xs):
        return fn(*[x.astype(np.float64) for x in xs]).astype(xs[0].dtype)
    return run


ORACLES = {
    "real": np.real, "imag": np.imag,
    "divide": np.true_divide, "pow": np.power, "abs": np.absolute, "reciprocal": _reciprocal,
    "where": lambda c, x, y: np.where(c, x, y), "bitwise_invert": np.invert,
    "clip_bounds": lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi),
    "bitwise_left_shift": np.left_shift, "bitwise_right_shift": np.right_shift,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "atan2": np.arctan2,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "rsqrt": lambda x: np.reciprocal(np.sqrt(x)),
    "sigmoid": _f64(lambda x: 1.0 / (1.0 + np.exp(-x))),
    "erf": _f64(np.vectorize(math.erf, otypes=[np.float64])),
    "round": _int_identity(np.rint), "floor": _int_identity(np.floor),
    "ceil": _int_identity(np.ceil), "trunc": _int_identity(np.trunc),
}


def oracle(op):
    fn = ORACLES.get(op.name)
    if fn is None:
        for n in [op.name] + op.aliases:
            fn = getattr(np, n, None)
            if isinstance(fn, np.ufunc):
                return fn
        pytest.fail(f"no NumPy oracle for pointwise op {op.name!r}")
    return fn


_RNG = np.random.default_rng(1234)
_FSPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-30, 100.0]


def values(op, dtype, shape, which):
    """Deterministic inputs: specials first, then random values in a range where the op is
    defined everywhere (integers: the full range, so wrapping is checked)."""
    n = math.prod(shape)
    if dtype == "bool":
        return _RNG.random(shape) > 0.5
    kind = "f" if dtype == "bfloat16" else np.dtype(dtype).kind
    if kind in "iu":
        info = np.iinfo(dtype)
        if op.name == "pow":
            lo, hi = ((-10, 10) if kind == "i" else (0, 10)) if which == 0 else (0, 40)
        elif op.name.startswith("bitwise_") and "shift" in op.name and which == 1:
            lo, hi = (-2 if kind == "i" else 0), 40
        elif op.int_to_float:
            lo, hi = max(info.min, -50), 50
        else:
            lo, hi = info.min, info.max
        return _RNG.integers(lo, hi, shape, dtype=dtype, endpoint=True)
    if op.name == "pow":
        x = _RNG.uniform(0, 10, n) if which == 0 else _RNG.uniform(-4, 4, n)
    else:
        x = _RNG.uniform(-50, 50, n)
        k = min(n, len(_FSPECIAL))
        x[:k] = np.roll(_FSPECIAL, which)[:k]
    x = x.astype(np.float32 if dtype == "bfloat16" else dtype).reshape(shape)
    return bf16_round(x) if dtype == "bfloat16" else x


def expected(op, arrays, dtype):
    compute, out = op.compute(dtype)
    npc = np.float32 if compute == "float32" else compute
    cast = [a.astype(bool) if name in op.bool_args else a.astype(npc)
            for name, a in zip(op.tensor_args, arrays)]
    with np.errstate(all="ignore"):
        r = np.asarray(oracle(op)(*cast))
        if op.name == "floor_divide" and np.dtype(npc).kind == "f":
            # an inf / nan operand: the Array API's floor(a / b) (issue 17), not NumPy's
            a, b = cast
            r = np.where(np.isfinite(a) & np.isfinite(b), r, np.floor(a / b))
        if out == "bfloat16":
            return bf16_round(r.astype(np.float32)), out
        return r.astype(out), out


SWEEP_DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "int32", "int64",
                "uint8", "uint64", "bool"]
CASES = [(op, d) for op in OPS for d in SWEEP_DTYPES]


def _supported(op, dtype):
    compute, _ = op.compute(dtype)
    kind = "f" if compute == "bfloat16" else np.dtype(compute).kind
    if op.no_half and dtype in ("float16", "bfloat16"):
        return False
    return kind in op.kinds


def _layouts(arrays, dtypes, shape):
    """(contiguous tensors, their values) and (strided / broadcast views, their values)."""
    dense = [to_device(a, d) for a, d in zip(arrays, dtypes)]
    views, vals = [], []
    for i, (a, d) in enumerate(zip(arrays, dtypes)):
        if i == 0:  # transposed storage, read in reverse along dim 0
            t = to_device(a[::-1].T.copy(), d).T[::-1]
            views.append(t)
            vals.append(a)
        elif i == 1:  # broadcast along dim 0 (stride 0)
            t = to_device(a[:1], d).expand(shape)
            views.append(t)
            vals.append(np.broadcast_to(a[:1], shape))
        else:  # every other element of a wider buffer
            wide = np.repeat(a, 2, axis=-1)
            views.append(to_device(wide, d)[..., ::2])
            vals.append(a)
    return dense, list(arrays), views, vals


@pytest.mark.parametrize("op,dtype", CASES, ids=[f"{o.name}-{d}" for o, d in CASES])
def test_pointwise_matches_numpy(op, dtype):
    dtypes = ["bool" if n in op.bool_args else dtype for n in op.tensor_args]
    shape = (3, 5)
    arrays = [values(op, d, shape, i) for i, d in enumerate(dtypes)]
    if not _supported(op, dtype):
        with pytest.raises(TypeError, match=op.name):
            op.call(*[to_device(a, d) for a, d in zip(arrays, dtypes)])
        return
    dense, dvals, views, vvals = _layouts(arrays, dtypes, shape)
    for tensors, vals in ((dense, dvals), (views, vvals)):
        want, out = expected(op, vals, dtype)
        got = op.call(*tensors)
        assert got.device == tl.Device("cuda:0")
        assert got.dtype.name == out and got.shape == shape
        check(host(got), want, out)


# Python scalars, alpha=, in-place and out=: one body on every device in test_pointwise.py
# (test_scalars_alpha_inplace_and_out)


def test_64bit_indexing_path(monkeypatch):
    """Layouts past int32 cannot be allocated here; lowering the limit runs the same
    kernels with IDX64=True."""
    from tensorlib.kernels.cuda import matmul, pointwise
    monkeypatch.setattr(pointwise, "_I32_MAX", 7)
    monkeypatch.setattr(matmul, "_I32_MAX", 7)
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    g = dev(x)
    check(host(g * 2 + 1), x * 2 + 1, "float32")
    check(host(g.T * 2 + g.T), x.T * 3, "float32")
    check(host(g[::-1, ::2].astype(tl.int16)), x[::-1, ::2].astype(np.int16), "int16")
    check(host(tl.arange(12, device="cuda", dtype=tl.int64)), np.arange(12), "int64")
    check(host(g @ g.T), x @ x.T, "float32")


# ---- casts, copy, fill -------------------------------------------------------------------------
ALL = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
       "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]


_FLOAT_CAST_VALUES = [0.0, -0.0, 1.5, -2.75, 300.7, 65519.99, 1 + 2**-11 + 2**-40, 100.0, -7.9,
                      2.5, 1e30, -3e38, np.nan, np.inf, -np.inf]
_INT_CAST_VALUES = [0, 1, -1, 7, 100, 255, 256, 65535, 65537, 2**24 + 2**16 + 1, 2**31 - 1,
                    -2**31, 2**53 + 1, 2**62 + 2**39 + 1, 2**63 - 1, -2**63, 2**64 - 1]


def _cast_source(dtype):
    if dtype == "bool":
        return np.array([True, False, True, True, False])
    if dtype == "bfloat16":
        return bf16_round(np.array(_FLOAT_CAST_VALUES, np.float32))
    kind = np.dtype(dtype).kind
    if kind in "iu":
        info = np.iinfo(dtype)
        return np.array([v for v in _INT_CAST_VALUES if info.min <= v <= info.max], dtype)
    vals = np.array(_FLOAT_CAST_VALUES)
    with np.errstate(over="ignore", invalid="ignore"):
        if kind == "c":
            return (vals + 1j * vals[::-1]).astype(dtype)
        return vals.astype(dtype)


def _numpy_cast(src_vals, src, dst):
    """NumPy's cast src -> dst of values given as NumPy arrays (bfloat16 as float32 values)."""
    with np.errstate(all="ignore"):
        if dst == "bfloat16":
            if src == "bfloat16":
                return src_vals
            # round once from the exact value: via float64 for integers and floats alike
            v = src_vals.real if np.iscomplexobj(src_vals) else src_vals
            if src == "bool":
                v = v.astype(np.float32)
            return _bf16_from_any(v)
        v = src_vals
        if src == "bfloat16":
            v = v.astype(np.float32)
        if np.iscomplexobj(v) and np.dtype(dst).kind != "c":
            if dst == "bool":
                return (v != 0).astype(bool)
            v = v.real
        return v.astype(dst)


def _bf16_from_any(v):
    """Correctly rounded bfloat16 value of ints / floats (NumPy has no bfloat16)."""
    v = np.asarray(v)
    if v.dtype.kind in "iu":
        out = np.empty(v.shape, np.float32)
        for i, x in np.ndenumerate(v):
            out[i] = _bf16_exact(int(x))
        return out
    if v.dtype == np.float64:
        out = np.empty(v.shape, np.float32)
        for i, x in np.ndenumerate(v):
            out[i] = _bf16_exact(float(x))
        return out
    return bf16_round(v.astype(np.float32))


def _comparable(vals, src, dst):
    """Elements whose NumPy cast is defined: a float (or complex real part) converted to an
    integer type must be finite and in range (NumPy leaves the rest to the C compiler; the
    kernels follow x86, checked in test_float_to_int_special_values)."""
    if dst == "bool" or src in ("bool",) or np.dtype(dst if dst != "bfloat16" else "f4").kind \
            not in "iu" or np.dtype(src if src != "bfloat16" else "f4").kind in "iu":
        return np.ones(len(vals), bool)
    v = np.asarray(vals).real.astype(np.float64)
    info = np.iinfo(dst)
    with np.errstate(invalid="ignore"):
        return np.isfinite(v) & (v > info.min - 1.0) & (v < info.max + 1.0)


@pytest.mark.parametrize("src", ALL)
def test_casts_between_every_dtype(src):
    vals = _cast_source(src)
    g = to_device(vals, src) if src != "bfloat16" else dev(vals).astype(tl.bfloat16)
    rev = g[::-1]  # a strided (negative stride) source
    for dst in ALL:
        want = _numpy_cast(vals, src, dst)
        ok = _comparable(vals, src, dst)
        for t, w, m in ((g, want, ok), (rev, want[::-1], ok[::-1])):
            got = host(t.astype(tl.dtypes.to_dtype(dst)))
            np.testing.assert_array_equal(got[m], np.asarray(w).astype(got.dtype)[m],
                                          err_msg=f"{src}->{dst}")


# float -> int special values, copy_ into broadcast / strided destinations, fill of every dtype
# and its errors: one body on every device in test_copy.py


@pytest.mark.parametrize("dtype", ["int64", "int16", "uint8", "float32", "float64", "float16",
                                   "bfloat16", "complex64"])
def test_arange_linspace(dtype):
    got = host(tl.arange(3, 40, 3, dtype=dtype, device="cuda"))
    if dtype == "bfloat16":
        want = bf16_round(np.arange(3, 40, 3).astype(np.float32))
    else:
        want = np.arange(3, 40, 3, dtype=dtype)
    check(got, want, dtype)
    if dtype in ("float32", "float64", "complex64"):
        check(host(tl.linspace(-1, 2, 7, dtype=dtype, device="cuda")),
              np.linspace(-1, 2, 7, dtype=dtype), dtype)


# ---- matmul ------------------------------------------------------------------------------------
MM_DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "uint8", "int16", "int32",
             "int64", "uint64", "bool"]
MM_SHAPES = [((5, 7), (7, 3)), ((2, 33, 17), (2, 17, 40)), ((3, 4, 6), (6, 5)),
             ((6,), (6, 4)), ((2, 1, 3, 5), (4, 5, 2)), ((4, 3), (3,))]


def _mm_values(dtype, shape):
    if dtype == "bool":
        return _RNG.random(shape) > 0.5
    if dtype in ("float32", "float64", "float16"):
        return _RNG.standard_normal(shape).astype(dtype)
    if dtype == "bfloat16":
        return bf16_round(_RNG.standard_normal(shape).astype(np.float32))
    info = np.iinfo(dtype)
    return _RNG.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def _mm_expected(a, b, dtype):
    if dtype in ("float16", "bfloat16"):
        r = np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
        return bf16_round(r) if dtype == "bfloat16" else r.astype(np.float16)
    if dtype == "bool":
        return np.matmul(a.astype(np.int64), b.astype(np.int64)) != 0
    with np.errstate(over="ignore"):
        return np.matmul(a, b)  # integer products wrap, as ours do


@pytest.mark.parametrize("dtype", MM_DTYPES)
def test_matmul_matches_numpy(dtype):
    for sa, sb in MM_SHAPES:
        a, b = _mm_values(dtype, sa), _mm_values(dtype, sb)
        ga, gb = to_device(a, dtype), to_device(b, dtype)
        if len(sa) == 2:  # a column-major a
            ga = to_device(a.T.copy(), dtype).T
        got = tl.matmul(ga, gb)
        assert got.device == tl.Device("cuda:0") and got.dtype.name == dtype
        want = _mm_expected(a, b, dtype)
        tol = {"float16": 5e-3, "bfloat16": 2e-2, "float32": 1e-5}.get(dtype)
        check(host(got), want, dtype, rtol=tol, atol=1e-5 if dtype == "float32" else 1e-2
              if dtype in ("float16", "bfloat16") else 0.0)


def test_mm_bmm_out_and_flags():
    a = _RNG.standard_normal((3, 4, 5))
    b = _RNG.standard_normal((3, 5, 2))
    check(host(tl.bmm(dev(a), dev(b))), a @ b, "float64")
    check(host(tl.mm(dev(a[0]), dev(b[0]))), a[0] @ b[0], "float64")
    out = tl.empty((4, 2), dtype=tl.float64, device="cuda")
    tl.matmul(dev(a[1]), dev(b[1]), out=out)
    check(host(out), a[1] @ b[1], "float64")
    x = dev(a[0].astype(np.float32))
    x @= dev(np.eye(5, dtype=np.float32))  # a @= b reads a while writing it
    check(host(x), a[0].astype(np.float32), "float32")
    check(host(tl.vecdot(dev(a[0]), dev(a[0]))), (a[0] * a[0]).sum(-1), "float64")

    from tensorlib.kernels.cuda import matmul
    from tensorlib.kernels.cuda.flags import backends
    assert backends.matmul.allow_tf32 is False
    assert matmul.dtype_class(tl.float32) == "fp32"
    backends.matmul.allow_tf32 = True
    try:
        assert matmul.dtype_class(tl.float32) == "tf32"
        f = a[0].astype(np.float32)
        check(host(dev(f) @ dev(f.T)), f @ f.T, "float32", rtol=1e-2, atol=1e-2)
    finally:
        backends.matmul.allow_tf32 = False
    with pytest.raises(TypeError, match="allow_tf32"):
        backends.matmul.allow_tf32 = 1


def test_matmul_empty_and_zero_k():
    a = dev(np.zeros((3, 0), np.float32))
    b = dev(np.zeros((0, 4), np.float32))
    np.testing.assert_array_equal(host(a @ b), np.zeros((3, 4), np.float32))
    assert (dev(np.zeros((0, 3), np.float32)) @ dev(np.ones((3, 2), np.float32))).shape == (0, 2)


# ---- streams and devices -----------------------------------------------------------------------
def test_launches_follow_the_current_stream():
    x = dev(np.arange(8, dtype=np.float32))
    s = tc.Stream()
    with tc.stream(s):
        tc._sleep(0.3)
        y = x * 2          # queued behind the sleep on s
        assert not s.query()
        assert tc.default_stream().query()  # nothing was put on the default stream
        z = host(y + 1)    # the copy back is ordered after both kernels on s
    np.testing.assert_array_equal(z, np.arange(8, dtype=np.float32) * 2 + 1)


def test_second_device():
    g = dev(np.arange(5, dtype=np.int32), device="cuda:1")
    r = g * g
    assert r.device == tl.Device("cuda:1")
    np.testing.assert_array_equal(host(r), np.arange(5) ** 2)
    m = dev(np.eye(3), device="cuda:1")
    assert (m @ m).device == tl.Device("cuda:1")


def test_kernels_are_cached():
    from tensorlib.kernels.cuda import launch
    x = dev(np.arange(4, dtype=np.float32))
    host(x + x)
    before = len(launch._built)
    host(x + x)
    host(dev(np.ones(9, np.float32)) + dev(np.ones(9, np.float32)))
    assert len(launch._built) == before


_BAD_KERNEL = """
@jit
def kernel(p_out, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(p_out + offs, offs.to(tl.float32), mask=offs < n)
"""


def test_launch_errors_name_the_kernel_and_its_arguments():
    """A kernel that fails (here: a block size Triton refuses) surfaces at the stream's next
    synchronize as a CudaError caused by a KernelLaunchError naming the kernel and arguments."""
    from tensorlib.kernels.cuda import launch
    mode = launch.current_mode()
    k = launch.generated_module("test_bad_block", launch.module_header(mode) + _BAD_KERNEL,
                                mode).kernel
    x = tl.zeros((4,), dtype="float32", device="cuda")
    launch.launch(k, (1,), [launch.arg_for(x._storage.data_ptr(), x.dtype), 4], 0, BLOCK=3)
    with pytest.raises(tl.cuda.CudaError) as e:
        tl.cuda.synchronize()
    assert isinstance(e.value.__cause__, tl.cuda.KernelLaunchError)
    msg = str(e.value.__cause__)
    assert "test_bad_block" in msg and "BLOCK=3" in msg and "grid (1,)" in msg
    assert "power of 2" in msg
    tl.cuda.synchronize()  # the error was reported once; the stream works again
    np.testing.assert_array_equal(host(x + 1), np.ones(4, np.float32))


# ---- reductions --------------------------------------------------------------------------------
RED_DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "int32", "int64", "uint8",
              "bool"]
RED_OPS = ["sum", "prod", "mean", "max", "min", "any", "all", "var", "std"]


def _red_expected(name, x, dtype, axis):
    """NumPy's answer with tensorlib's accumulators: half types accumulate in float32 and
    round once; mean / var / std of integers are float32."""
    v = x.astype(np.float32) if dtype in ("float16", "bfloat16") else x
    with np.errstate(all="ignore"):
        r = np.asarray(getattr(np, name)(v, axis=axis))
        if dtype in ("float16", "bfloat16") and name not in ("any", "all"):
            return bf16_round(r.astype(np.float32)) if dtype == "bfloat16" else \
                r.astype(np.float16)
        if name in ("mean", "var", "std") and x.dtype.kind in "biu":
            return r.astype(np.float32)
        return r


@pytest.mark.parametrize("dtype", RED_DTYPES)
def test_reductions_match_numpy(dtype):
    shape = (3, 4, 5)
    if dtype == "bool":
        x = _RNG.random(shape) > 0.3
    elif dtype in ("float32", "float64", "float16", "bfloat16"):
        x = _RNG.uniform(-2, 2, shape).astype(np.float32 if dtype == "bfloat16" else dtype)
        x.flat[7] = np.nan if dtype != "bfloat16" else x.flat[7]
        if dtype == "bfloat16":
            x = bf16_round(x)
    else:
        info = np.iinfo(dtype)
        x = _RNG.integers(max(info.min, -3), min(info.max, 3), shape, dtype=dtype, endpoint=True)
    g = to_device(x, dtype)
    gt = tl.permute(to_device(x.transpose(2, 0, 1).copy(), dtype), (1, 2, 0))  # same values
    for name in RED_OPS:
        if name in ("mean", "var", "std") and dtype == "bool":
            continue
        for axis in (None, 0, 2, (0, 2)):
            want = _red_expected(name, x, dtype, axis)
            for t in (g, gt):
                got = getattr(tl, name)(t, axis=axis)
                assert got.device == tl.Device("cuda:0")
                out_dtype = {"bool": "bool"}.get(np.asarray(want).dtype.name, None)
                res = host(got)
                assert res.shape == np.shape(want), (name, axis)
                if out_dtype is None and np.asarray(want).dtype.kind == "f":
                    tol = {"float16": 2e-3, "bfloat16": 1e-2, "float32": 2e-5}.get(
                        got.dtype.name, 1e-12)
                    np.testing.assert_allclose(res, np.asarray(want).astype(res.dtype),
                                               rtol=tol, atol=tol, equal_nan=True,
                                               err_msg=f"{name} {axis}")
                else:
                    np.testing.assert_array_equal(res, want, err_msg=f"{name} {axis}")


def test_reduction_keepdims_out_and_empty():
    x = _RNG.standard_normal((4, 6))
    g = dev(x)
    check(host(tl.sum(g, axis=1, keepdims=True)), x.sum(1, keepdims=True), "float64")
    out = tl.empty((6,), dtype=tl.float32, device="cuda")
    tl.mean(g, axis=0, out=out)
    check(host(out), x.mean(0).astype(np.float32), "float32")
    check(host(tl.var(g, axis=0, correction=1)), x.var(0, ddof=1), "float64")
    check(host(tl.std(g[:, ::2])), x[:, ::2].std(), "float64")
    e = dev(np.zeros((0, 3)))
    check(host(tl.sum(e, axis=0)), np.zeros(3), "float64")
    check(host(tl.prod(e, axis=0)), np.ones(3), "float64")
    big = dev(np.arange(3000, dtype=np.int64))  # several BLOCK_R chunks
    assert int(host(tl.sum(big))) == 3000 * 2999 // 2


def test_exit_with_kernels_in_flight():
    """Interpreted kernels still queued at exit finish first (a daemon stream thread killed
    inside the interpreter's C++ code would abort the process)."""
    import subprocess
    import sys
    src = os.path.dirname(os.path.dirname(tl.__file__))
    code = ("import numpy as np, tensorlib as tl\n"
            "x = tl.asarray(np.ones((64, 64), np.float32), device='cuda')\n"
            "y = tl.matmul(x, x); z = tl.sum(x, axis=1); w = x.astype(tl.bfloat16)\n")
    env = dict(os.environ, TENSORLIB_CUDA_BACKEND="interpret",
               PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
