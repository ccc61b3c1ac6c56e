"""Shared test helpers: NumPy is the oracle (check_op) and hypothesis strategies for arrays with
every kind of layout (contiguous, transposed, negative and zero strides, 0-d, empty)."""
from __future__ import annotations

import math
import os

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tensorlib as tl
from tensorlib.shape import is_contiguous

NUMPY_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                "float16", "float32", "float64", "complex64", "complex128"]
ALL_DTYPES = NUMPY_DTYPES + ["bfloat16"]
FLOAT_DTYPES = ["float16", "float32", "float64"]
INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]

# Tolerances for comparing against NumPy (half types compute in float32 and round once).
_TOL = {"float16": (2e-3, 1e-3), "bfloat16": (1e-2, 1e-2), "float32": (2e-6, 1e-6),
        "complex64": (2e-6, 1e-6), "float64": (1e-12, 1e-13), "complex128": (1e-12, 1e-13)}


def to_numpy(t) -> np.ndarray:
    """Tensor -> NumPy values (bfloat16 widened to float32), copied."""
    return np.array(t._to_host_numpy(), copy=True)


def on_device(arr, device="cpu", dtype=None):
    """A copy of NumPy values as a contiguous tensor on ``device`` ("cpu" or "cuda": the
    ``device`` fixture's values) as tensorlib dtype name ``dtype`` (default: arr's dtype);
    bfloat16 takes float32 values it holds exactly, cast on the device. Never shares arr's
    memory, so a test may go on changing arr as its expected result."""
    arr = np.asarray(arr)
    if dtype == "bfloat16":
        return tl.asarray(np.ascontiguousarray(arr, np.float32), device=device,
                          copy=True).astype(tl.bfloat16)
    return tl.asarray(np.ascontiguousarray(arr, dtype), device=device, copy=True)


def host(t, device=None) -> np.ndarray:
    """A tensor's values on the host (bfloat16 widened to float32), copied; with ``device``,
    checks the tensor is on that device type first."""
    if device is not None:
        assert t.device.type == device, f"result on {t.device}, expected {device}"
    return np.array(t.cpu()._to_host_numpy(), copy=True)


def bf16_exact(x):
    """Round-to-nearest-even bfloat16 of a Python int or float (exact arithmetic)."""
    from fractions import Fraction
    if isinstance(x, float) and (x != x or x in (math.inf, -math.inf)):
        return np.float32(x)
    if x == 0:
        return np.float32(x)
    f = Fraction(x)
    sign = -1 if f < 0 else 1
    f = abs(f)
    e = math.floor(math.log2(f))
    while Fraction(2) ** e > f:
        e -= 1
    while Fraction(2) ** (e + 1) <= f:
        e += 1
    e = max(e, -126)
    q = f / Fraction(2) ** (e - 7)  # 8 significant bits
    n = math.floor(q)
    rem = q - n
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1):
        n += 1
    val = sign * n * Fraction(2) ** (e - 7)
    if abs(val) >= Fraction(2) ** 128:
        return np.float32(sign * math.inf)
    return np.float32(float(val))


def as_tensor(x):
    """NumPy array -> tensor sharing its memory and strides (so layouts are tested as built)."""
    if isinstance(x, np.ndarray):
        return tl.from_numpy(x)
    return x


def assert_close(actual: np.ndarray, expected: np.ndarray, dtype_name: str, rtol=None,
                 atol=None):
    assert actual.shape == expected.shape, f"shape {actual.shape} != {expected.shape}"
    r, a = _TOL.get(dtype_name, (0, 0))
    rtol = r if rtol is None else rtol
    atol = a if atol is None else atol
    if actual.dtype.kind in "fc" or expected.dtype.kind in "fc":
        np.testing.assert_allclose(actual.astype(expected.dtype) if expected.dtype.kind in "fc"
                                   else actual, expected, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(actual, expected)


def check_op(tl_fn, np_fn, *args, expected_dtype=None, rtol=None, atol=None, **kwargs):
    """Runs tl_fn on tensors made from the NumPy args (zero-copy, same strides) and np_fn on the
    arrays; compares shape, values and the result dtype (NumPy's unless expected_dtype given).
    Also checks the inputs were not modified."""
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    expected = np_fn(*args, **kwargs)
    got = tl_fn(*[as_tensor(a) for a in args], **kwargs)
    results = got if isinstance(got, tuple) else (got,)
    expects = expected if isinstance(expected, tuple) else (expected,)
    for g, e in zip(results, expects):
        e = np.asarray(e)
        want = expected_dtype or e.dtype.name
        want = want.name if isinstance(want, tl.dtypes.DType) else want
        assert g.dtype.name == want, f"dtype {g.dtype.name} != {want}"
        assert g.shape == e.shape, f"shape {g.shape} != {e.shape}"
        assert_close(to_numpy(g), e.astype(np.float32) if want == "bfloat16" else e, want,
                     rtol, atol)
    for a, b in zip(args, before):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
    return got


@st.composite
def layouts(draw, arr_strategy):
    """The drawn array's values, placed in a random layout of the same shape: transposed
    storage, reversed (negative stride), every other element (step 2), or broadcast (stride 0)."""
    buf = draw(arr_strategy)
    shape, dtype = buf.shape, buf.dtype
    if buf.ndim >= 2 and draw(st.booleans()):
        b = np.empty(shape[::-1], dtype).T
        b[...] = buf
        buf = b
    if buf.ndim >= 1 and draw(st.booleans()):
        b = np.empty_like(buf)[::-1]
        b[...] = buf
        buf = b
    if buf.ndim >= 1 and draw(st.booleans()):
        b = np.empty(shape[:-1] + (shape[-1] * 2,), dtype)[..., ::2]
        b[...] = buf
        buf = b
    if buf.ndim >= 1 and shape[0] > 1 and draw(st.integers(0, 3)) == 0:
        buf = np.broadcast_to(buf[:1], shape)
    return buf


def arrays(dtype, shape=None, *, min_dims=0, max_dims=4, max_side=5, elements=None):
    """Hypothesis arrays of a NumPy dtype name in a random layout (incl. 0-d and empty)."""
    shape = shape if shape is not None else hnp.array_shapes(min_dims=min_dims,
                                                             max_dims=max_dims, min_side=0,
                                                             max_side=max_side)
    base = hnp.arrays(np.dtype(dtype), shape, elements=elements)
    return layouts(base)


def broadcast_pair(dtype1, dtype2, max_dims=3, elements1=None, elements2=None):
    """Two arrays whose shapes broadcast together (one side may have size-1 / missing dims)."""
    return hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=max_dims, max_side=4).flatmap(
        lambda s: st.tuples(layouts(hnp.arrays(np.dtype(dtype1), s.input_shapes[0],
                                               elements=elements1)),
                            layouts(hnp.arrays(np.dtype(dtype2), s.input_shapes[1],
                                               elements=elements2))))


def ptxas_available() -> bool:
    """Whether Triton ships its NVIDIA toolchain (the ahead-of-time compile tests need ptxas).
    A Triton without the NVIDIA backend skips those tests; one whose ptxas is missing fails
    them loudly: that is a broken install, not a machine without a GPU."""
    try:
        from triton import knobs
        ptxas = knobs.nvidia.ptxas
    except (ImportError, AttributeError):
        return False
    if not os.path.exists(ptxas.path):
        raise RuntimeError(f"Triton's ptxas is missing at {ptxas.path}: a broken Triton install")
    return True


def np_argsort_desc(x):
    """Stable descending argsort along the last axis (ties in input order, nan first)."""
    n = x.shape[-1]
    return n - 1 - np.flip(np.argsort(np.flip(x, -1), axis=-1, kind="stable"), -1)


def assert_bits(got, want):
    """Same dtype, shape and bytes (nan payloads and the sign of zero count)."""
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.ascontiguousarray(got).view(np.uint8),
                                  np.ascontiguousarray(want).view(np.uint8))


def pointwise_layouts(arr):
    """Named operand pairs of the layouts a pointwise op's dense and 1-D paths leave to its
    loop nest: broadcast rows / columns, an outer product, transposed, 2-D slices, negative
    strides, an offset 3-D view. ``arr(shape, seed)`` makes a C-order tensor."""
    a = arr((6, 7), 0)
    big = arr((12, 15), 1)
    return {
        "row broadcast": (a, arr((7,), 2)),
        "column broadcast": (a, arr((6, 1), 3)),
        "outer": (arr((6, 1), 4), arr((1, 7), 5)),
        "transposed": (a, arr((7, 6), 6).T),
        "2-D slices": (big[::2, 1::2], big[1::2, ::2][:, :7]),
        "negative strides": (big[::-2, ::-2][:6, :7], a),
        "offset 3-D": (arr((2, 3, 4, 5), 7)[1, :, 1:], arr((3, 1, 5), 8)),
    }


def tensor_bits(t):
    """A tensor's elements as bytes (bfloat16 through float32, exact), for bit comparisons."""
    a = t.astype(tl.float32).numpy() if t.dtype is tl.bfloat16 else t.numpy()
    return np.ascontiguousarray(a).view(np.uint8) if a.dtype != np.bool_ and a.size else a


def assert_same_tensor(got, want):
    """Same dtype, shape, strides and bits (nan payloads and the sign of zero count)."""
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.stride() == want.stride()
    for t in (got, want):  # a contiguity flag a fast path set on its result must be the truth
        assert t._contiguous in (None, is_contiguous(t._shape, t._strides))
    np.testing.assert_array_equal(tensor_bits(got), tensor_bits(want))


def sort_test_integers(rng, dtype, shape, kind):
    """Integers of ``dtype`` for the sort tests: the whole range, or (kind "ties") few
    distinct small values."""
    info = np.iinfo(dtype)
    if kind == "ties":
        return rng.integers(max(info.min, -3), 4, shape).astype(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def gated(stream):
    """Queues a host wait on CPU ``stream``: work queued on it afterwards runs only once the
    returned threading.Event is set (what a slow producer looks like to stream ordering)."""
    import threading

    from tensorlib.runtime.cpu import streams as cpu_streams
    gate = threading.Event()
    with tl.stream(stream):
        cpu_streams.launch(gate.wait, "gate", (), ())
    return gate
