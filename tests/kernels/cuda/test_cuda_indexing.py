"""Advanced indexing and nonzero on device="cuda" (kernels/cuda/indexing.py) on the interpret
backend, against NumPy: gather (integer arrays of every index dtype, several / separated /
broadcast index arrays, masks, strided sources and index tensors), scatter (broadcast and cast
values, repeated indices: last write wins, as on the CPU), out-of-range indices (the CPU's
IndexError, nothing written), nonzero (every storage class, multi-block count + scan + write).
Shapes are small: the Triton interpreter runs each program in Python."""
from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.kernels.cuda import indexing as cuda_indexing
from helpers import ptxas_available
from test_cuda_sorting import compile_captured


pytestmark = pytest.mark.usefixtures("cuda_interpret")  # conftest.py


def dev(arr, dtype=None):
    """arr on the device (bfloat16: float32 values cast on the device)."""
    if dtype == "bfloat16":
        return tl.asarray(np.ascontiguousarray(arr, np.float32), device="cuda").astype(
            tl.bfloat16)
    return tl.asarray(np.array(arr, order="C"), device="cuda")


def host(t) -> np.ndarray:
    assert t.device.type == "cuda"
    return np.array(t.cpu()._to_host_numpy(), copy=True)


def same(got, want):
    assert got.shape == want.shape, f"shape {got.shape} != {want.shape}"
    np.testing.assert_array_equal(host(got), want)


def values(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(-40, 40, size=shape)
    if dtype == "bool":
        return x > 0
    if dtype.startswith("complex"):
        return (x / 4 + 1j * rng.integers(-9, 9, size=shape) / 2).astype(dtype)
    if dtype in ("float16", "bfloat16", "float32", "float64"):
        return (x / 4).astype("float32" if dtype == "bfloat16" else dtype)
    if dtype.startswith("uint"):
        return np.abs(x).astype(dtype)
    return x.astype(dtype)


# ---- gather ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["bool", "int8", "float16", "bfloat16", "float32", "int64",
                                   "complex64", "complex128"])
def test_gather_every_item_size(dtype):
    a = values(dtype, (4, 3, 5))
    x = dev(a, dtype)
    i = np.array([[3, 0], [-1, 1]])
    same(x[dev(i)], a[i])                    # index block first, 2 post dims
    same(x[:, [2, 0, 2], 1:4], a[:, [2, 0, 2], 1:4])   # a pre and a post dim


# index dtypes: test_indexing.py::test_index_dtypes (one body on every device)


def test_gather_several_index_arrays_and_placement():
    a = values("int32", (4, 5, 6))
    x = dev(a)
    i, j = np.array([[0, 3], [2, 1]]), np.array([4, -1])      # broadcast (2, 2) with (2,)
    same(x[i, j], a[i, j])
    same(x[i, :, j], a[i, :, j])             # separated: index dims first (NumPy's rule)
    same(x[..., i, j], a[..., i, j])
    same(x[None, 1, [0, 2], ::-2], a[None, 1, [0, 2], ::-2])
    same(x[True, 2], a[True, 2])


def test_gather_strided_source_and_index():
    a = values("float64", (6, 8))
    x = dev(a).transpose(1, 0)[::2]          # (4, 6), non-contiguous
    i = np.arange(12).reshape(3, 4) % 6
    it = dev(i.T.copy()).transpose(1, 0)     # a transposed (strided) index tensor
    same(x[:, it], a.T[::2][:, i])
    same(x[dev(np.array([3, 1]))[:, None], dev(np.array([5, 0, 2]))],
         a.T[::2][np.array([3, 1])[:, None], np.array([5, 0, 2])])


def test_gather_masks():
    a = values("float32", (3, 4, 5))
    x = dev(a)
    m = a > 0
    same(x[dev(m)], a[m])                    # lone full mask: offsets from nonzero
    m2 = m[:, :, 0]
    same(x[dev(m2)], a[m2])
    same(x[1, dev(m[0, :, 0]), 1:], a[1, m[0, :, 0], 1:])
    same(x[dev(m2), dev(np.array([4]))], a[m2, np.array([4])])   # mask + array: indices
    same(x[dev(np.zeros((3, 4), bool))], a[np.zeros((3, 4), bool)])


# empty results (still bounds-checked) and the out-of-range message: one body on every device
# in test_indexing.py (test_empty_and_zero_size, test_gather_out_of_range_names_the_first_bad_index)


# ---- scatter -----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["bool", "int8", "bfloat16", "float32", "complex128"])
def test_scatter_every_item_size(dtype):
    a = values(dtype, (4, 3, 2))
    v = values(dtype, (2, 3, 2), seed=1)
    x = dev(a, dtype)
    x[dev(np.array([3, -4]))] = dev(v, dtype)
    a[np.array([3, -4])] = v
    same(x, a)
    x[:, [2, 0], 1] = dev(v[0, 0, :1], dtype)     # one value broadcast
    a[:, [2, 0], 1] = v[0, 0, :1]
    same(x, a)


def test_scatter_broadcast_and_cast():
    a = np.zeros((3, 4, 5), np.int32)
    x = dev(a)
    v = np.arange(5, dtype=np.float64) * 1.5
    x[[0, 2]] = dev(v)                       # float64 values cast into int32, broadcast
    a[[0, 2]] = v
    same(x, a)
    x[1, [3, 1], 2:] = 7
    a[1, [3, 1], 2:] = 7
    same(x, a)
    x[dev(a > 3)] = -1
    a[a > 3] = -1
    same(x, a)
    m = a[:, :, 0] == 0
    x[dev(m)] = dev(np.arange(5, dtype=np.int16))
    a[m] = np.arange(5)
    same(x, a)


# repeated indices (last write wins): test_indexing.py::test_setitem_repeated_indices_last_wins
# (one body on every device)


def test_scatter_winners_mark_the_last_repeat(monkeypatch):
    # GPU lanes write in no order, so only the last position of each repeated offset writes
    # (the interpreter runs lanes in order: check the flags themselves)
    from tensorlib.kernels.cuda import sorting
    adv = np.array([7, 3, 7, 7, 0, 3, 9, 0, 7])
    want = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1], np.uint8)
    same(cuda_indexing._winners(dev(adv), "interpret", 0), want)          # by sorting
    same(cuda_indexing._winners(dev(adv + 5), "interpret", 0, 5, 10), want)  # atomic_max
    monkeypatch.setattr(sorting, "MAX_BLOCK", 2)   # the multi-pass sort path
    same(cuda_indexing._winners(dev(adv), "interpret", 0), want)


def test_scatter_strided_target_writes_through():
    a = np.zeros((4, 6), np.float32)
    x = dev(a)
    view = x[:, ::2]                         # (4, 3), strides (6, 2)
    view[[2, 0], 1] = dev(np.array([5.0, 6.0], np.float32))
    a[:, ::2][[2, 0], 1] = [5.0, 6.0]
    same(x, a)


# out-of-range indices write nothing: one body on every device in test_indexing.py
# (test_setitem_out_of_range_leaves_target_unchanged)


# ---- nonzero -----------------------------------------------------------------------------------
# every storage class, -0.0 / nan / inf: one body on every device in test_indexing.py
# (test_nonzero_dtypes_negative_zero_and_nan)


def test_nonzero_strided_and_edge_cases():
    a = values("int32", (4, 5, 6), seed=3)
    x = tl.permute_dims(dev(a), (2, 0, 1))[:, ::-1]
    want = np.nonzero(a.transpose(2, 0, 1)[:, ::-1])
    for g, w in zip(tl.nonzero(x), want):
        same(g, w)
    for g, w in zip(tl.nonzero(dev(np.zeros((2, 3)))), np.nonzero(np.zeros((2, 3)))):
        same(g, w)
    (g,) = tl.nonzero(dev(np.zeros(0, np.int8)))
    same(g, np.zeros(0, np.int64))
    (g,) = tl.nonzero(dev(np.ones(5, bool)))
    same(g, np.arange(5))


def test_nonzero_many_blocks(monkeypatch):
    # tiny blocks: 32 counts, scanned in chunks of 16 with a carry
    monkeypatch.setattr(cuda_indexing, "INTERPRET_BLOCK", 16)
    a = np.random.default_rng(4).random((8, 64)) > 0.7
    for g, w in zip(tl.nonzero(dev(a)), np.nonzero(a)):
        same(g, w)
    b = values("float32", (8, 64), seed=5)
    x = dev(b)
    same(x[dev(a)], b[a])                    # mask offsets through the same passes


# ---- the compiled (GPU) launch path, without a GPU ---------------------------------------------
@pytest.mark.skipif(not ptxas_available(), reason="Triton's ptxas is not available")
def test_compiled_launch_path_compiles(monkeypatch):
    from tensorlib.kernels.cuda import launch
    captured = []
    monkeypatch.setattr(launch, "_forced", "compiled")
    monkeypatch.setattr(launch, "launch", lambda kernel, grid, args, device, **kw:
                        captured.append((kernel, grid, args, kw)))
    # nothing runs, so nothing can be read back: no bad-index check, no nonzero count
    monkeypatch.setattr(cuda_indexing, "_raise_bad", lambda plan, bad: None)
    x = dev(np.zeros((4, 6), np.float32))
    x[dev(np.array([1, 3], np.int32)), 2:]                 # offsets, gather
    x[:, dev(np.array([0, 5, 0]))] = 1.0                   # offsets, winners, scatter
    names = {k.fn.__name__ for k, _, _, _ in captured}
    assert {"offsets", "gather", "last_writer", "winners_from_last", "scatter"} <= names
    assert compile_captured([c for c in captured if c[0].fn.__name__ != "kernel"]) >= 5
