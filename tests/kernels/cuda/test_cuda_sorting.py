"""sort / argsort / searchsorted / unique_* on device="cuda" (kernels/cuda/sorting.py) on the
interpret backend, against NumPy: every real dtype and bool, stability (ties keep index
order, ascending and descending), nan last ascending / first descending, -0.0 == +0.0, bit
patterns preserved, the bitonic block sort and the merge passes of long rows (MAX_BLOCK made
tiny), searchsorted left / right / sorter. Shapes are small: the Triton interpreter runs each
program in Python."""
from __future__ import annotations

import os

import numpy as np
import pytest

import tensorlib as tl
from helpers import ptxas_available
from tensorlib.kernels.cuda import sorting as cuda_sorting


pytestmark = pytest.mark.usefixtures("cuda_interpret")  # conftest.py


def dev(arr, dtype=None):
    """arr on the device (bfloat16: float32 values, exact in bfloat16, cast on the device)."""
    if dtype == "bfloat16":
        return tl.asarray(np.ascontiguousarray(arr, np.float32), device="cuda").astype(
            tl.bfloat16)
    return tl.asarray(np.array(arr, order="C"), device="cuda")


def host(t) -> np.ndarray:
    assert t.device.type == "cuda"
    return np.array(t.cpu()._to_host_numpy(), copy=True)


def np_argsort(a, axis=-1, descending=False):
    """Stable argsort; descending = the exact reverse order with ties still in index order."""
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    idx = np.argsort(np.flip(a, axis), axis=axis, kind="stable")
    return a.shape[axis] - 1 - np.flip(idx, axis)


def check_sort(x, a, axis=-1, descending=False):
    want = np_argsort(a, axis, descending)
    got = tl.argsort(x, axis=axis, descending=descending)
    assert got.dtype == tl.int64 and got.shape == a.shape
    np.testing.assert_array_equal(host(got), want)
    vals = tl.sort(x, axis=axis, descending=descending)
    assert vals.dtype == x.dtype and vals.shape == a.shape
    np.testing.assert_array_equal(host(vals), np.take_along_axis(a, want, axis))


def ties(dtype, shape, seed=0):
    """Values with many ties (and the extremes of integer dtypes)."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    x = rng.integers(-3, 4, size=shape)
    if dtype in ("float16", "bfloat16", "float32", "float64"):
        return (x / 4).astype("float32" if dtype == "bfloat16" else dtype)
    info = np.iinfo(dtype)
    out = (np.abs(x) if info.min == 0 else x).astype(dtype)
    out.flat[0], out.flat[-1] = info.max, info.min
    return out


# ---- sort / argsort ----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32",
                                   "int64", "uint64", "float16", "bfloat16", "float32",
                                   "float64"])
def test_sort_every_dtype_stable_both_directions(dtype):
    a = ties(dtype, (3, 11))
    x = dev(a, dtype)
    check_sort(x, a)
    check_sort(x, a, descending=True)


# nan / -0.0 order and bits kept: one body on every device in test_sorting.py
# (test_nan_and_signed_zero_order_and_bits)


def test_sort_axes_layouts_and_edge_shapes():
    a = ties("int32", (4, 3, 5), seed=1)
    x = dev(a)
    for axis in (0, 1, -1):
        check_sort(x, a, axis=axis)
    xt = tl.permute_dims(x, (2, 0, 1))[:, ::-1]   # strided input
    check_sort(xt, a.transpose(2, 0, 1)[:, ::-1], axis=1, descending=True)
    for shape in ((0,), (3, 0), (1,), (2, 1)):
        b = ties("float32", shape)
        check_sort(dev(b), b)
    s = tl.sort(dev(np.float32(2.5)))
    assert s.shape == () and host(s) == 2.5
    assert host(tl.argsort(dev(np.float32(2.5)))) == 0


@pytest.mark.parametrize("n", [17, 33])
def test_sort_long_rows_merge_passes(monkeypatch, n):
    # 8-element bitonic blocks, then 2 (n=17) or 3 (n=33) merge passes: both buffer
    # parities, ragged last runs, a run without a partner
    monkeypatch.setattr(cuda_sorting, "MAX_BLOCK", 8)
    a = ties("int8", (3, n), seed=n)
    np.testing.assert_array_equal(host(tl.argsort(dev(a))), np_argsort(a))
    b = ties("float64", (2, n), seed=n + 1)
    b[0, ::5] = np.nan
    want = np.take_along_axis(b, np_argsort(b, descending=True), -1)
    np.testing.assert_array_equal(host(tl.sort(dev(b), descending=True)), want)


def test_sort_row_longer_than_the_real_block():
    a = np.random.default_rng(7).integers(0, 1000, 5000).astype(np.float32)
    # a 4096-wide bitonic block, then one merge pass with a ragged partner run
    np.testing.assert_array_equal(host(tl.argsort(dev(a))), np_argsort(a))


# ---- complex: composed from the real kernels on part views (tensorlib.ops.sorting) ----------
def cx(re, im, dtype=np.complex64):
    """Complex values built part by part (``re + 1j * im`` makes nan + ... of an inf/nan im)."""
    out = np.empty(np.shape(re), dtype)
    out.real, out.imag = re, im
    return out


def test_complex_sort_nan_classes_ties_both_directions():
    # NumPy: lexicographic within [R + Rj, R + nanj, nan + Rj, nan + nanj]; 2 + nanj > 3 + 1j
    re = [[2.0, 3.0, np.nan, np.nan, 1.0, -0.0], [0.0, np.nan, np.inf, 0.0, 2.0, 2.0]]
    im = [[np.nan, 1.0, 5.0, np.nan, np.nan, 0.0], [-0.0, -1.0, np.nan, 0.0, 1.0, np.nan]]
    a = cx(re, im)
    x = dev(a)
    for desc in (False, True):
        check_sort(x, a, descending=desc)
    np.testing.assert_array_equal(host(tl.argsort(x, axis=0)), np_argsort(a, axis=0))
    b = cx([[1.0, np.nan, 1.0], [0.0, -0.0, 1.0]], [[2.0, 0.0, -2.0], [1.0, 1.0, 2.0]],
           np.complex128)   # no nan imaginary part: two passes
    check_sort(dev(b), b, descending=True)


def test_complex_searchsorted_unique_count_nonzero():
    x1 = cx([1.0, 0.0, 2.0, 0.0, np.nan, 1.0], [0.0, 1.0, np.nan, 1.0, 0.0, -1.0])
    perm = np.argsort(x1, kind="stable")
    x2 = cx([0.0, 1.0, 5.0, np.nan], [1.0, np.nan, 0.0, 0.0])
    for side in ("left", "right"):
        got = tl.searchsorted(dev(x1), dev(x2), side=side, sorter=dev(perm))
        np.testing.assert_array_equal(host(got), np.searchsorted(x1, x2, side=side,
                                                                 sorter=perm))
    want = np.unique_all(x1)   # nan parts distinct, as real nans are
    r = tl.unique_all(dev(x1))
    for got, exp in zip(r, want):
        np.testing.assert_array_equal(host(got), exp)
    assert host(tl.count_nonzero(dev(cx([0.0, -0.0, 0.0], [0.0, 1.0, np.nan])))) == 2


# ---- searchsorted: one body on every device in test_sorting.py ---------------------------------
# (test_searchsorted_sides_specials_and_promotion, test_searchsorted_with_sorter_edges_and_errors)


# ---- unique_*, count_nonzero -------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_unique_family(dtype):
    a = np.array([[3, 1, 2, 1], [0, 0, 3, 2]], dtype)
    if dtype == "float32":
        a[0, 2], a[1, 3], a[1, 0] = np.nan, np.nan, -0.0   # nans are distinct; -0.0 == 0.0
    x = dev(a)
    vals, index, inverse, counts = np.unique(a, return_index=True, return_inverse=True,
                                             return_counts=True, equal_nan=False)
    np.testing.assert_array_equal(host(tl.unique_values(x)), vals)
    r = tl.unique_all(x)
    np.testing.assert_array_equal(host(r.values), vals)
    np.testing.assert_array_equal(host(r.indices), index)
    assert r.inverse_indices.shape == a.shape
    np.testing.assert_array_equal(host(r.inverse_indices).reshape(-1), inverse.reshape(-1))
    np.testing.assert_array_equal(host(r.counts), counts)
    c = tl.unique_counts(x)
    np.testing.assert_array_equal(host(c.counts), counts)
    assert host(tl.count_nonzero(x)) == np.count_nonzero(a)


# ---- the compiled (GPU) launch path, without a GPU ---------------------------------------------


def compile_captured(captured):
    """Compiles each captured (kernel, grid, args, kwargs) launch for sm_90 with the
    signature Triton's JIT would derive from its arguments."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.runtime.jit import mangle_type
    done = set()
    for kernel, grid, args, kw in captured:
        assert all(isinstance(g, int) and g > 0 for g in grid)
        options = {k: kw[k] for k in ("num_warps", "num_stages", "enable_fp_fusion") if k in kw}
        const = {k: v for k, v in kw.items() if k not in options}
        sig = {name: mangle_type(value) for name, value in zip(kernel.arg_names, args)}
        sig.update({name: "constexpr" for name in kernel.arg_names if name in const})
        assert set(sig) == set(kernel.arg_names), kernel
        key = (kernel, tuple(sorted(sig.items())), tuple(sorted(map(str, const.items()))))
        if key not in done:
            done.add(key)
            triton.compile(ASTSource(kernel, sig, const), target=GPUTarget("cuda", 90, 32),
                           options=options)
    return len(done)


@pytest.mark.skipif(not ptxas_available(), reason="Triton's ptxas is not available")
def test_compiled_launch_path_compiles(monkeypatch):
    from tensorlib.kernels.cuda import launch
    captured = []
    monkeypatch.setattr(launch, "_forced", "compiled")
    monkeypatch.setattr(launch, "launch", lambda kernel, grid, args, device, **kw:
                        captured.append((kernel, grid, args, kw)))
    monkeypatch.setattr(cuda_sorting, "MAX_BLOCK", 8)    # small networks compile fast
    x = dev(np.arange(24, dtype=np.float16).reshape(2, 12))
    tl.sort(x, descending=True)                            # keys, block_sort, merge, take
    tl.searchsorted(dev(np.arange(5, dtype=np.uint32)), dev(np.ones(3, np.uint32)),
                    side="right")
    names = {k.fn.__name__ for k, _, _, _ in captured}
    assert {"keys", "block_sort", "merge", "take", "search"} <= names
    assert compile_captured(captured) >= 6
