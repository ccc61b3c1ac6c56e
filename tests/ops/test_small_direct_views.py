"""The small-call routes that hand NumPy views of tensors made directly (issue 13): 2-D matmul's
direct route (kernels/cpu/matmul.new_matmul: a per-layout plan, views without
strided_array) and the same-dtype strided copy behind ``x.T.contiguous()``
(kernels/cpu/pointwise_fast.copy_strided). Each must give the general path's bits, for any
layout, and keep the CPU-stream and profiler hand-offs. NumPy is the oracle."""
import threading

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.iterator import TensorIterator
from tensorlib.ops import matmul as om
from helpers import gated


def _rand(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        v = v + 1j * rng.standard_normal(shape)
    return v.astype(dtype)


def _no_general_matmul(monkeypatch):
    def general(*args, **kwargs):
        raise AssertionError("general path")
    monkeypatch.setattr(om, "_run", general)


def _count_builds(monkeypatch):
    seen = []
    build = TensorIterator.build.__func__

    def counting(cls, *args, **kwargs):
        seen.append(1)
        return build(cls, *args, **kwargs)
    monkeypatch.setattr(TensorIterator, "build", classmethod(counting))
    return seen


# (a, b) NumPy views of one layout each: every one BLAS takes as it is
_LAYOUTS = {
    "nn": lambda a, b: (a, b),
    "tn": lambda a, b: (np.ascontiguousarray(a.T).T, b),
    "nt": lambda a, b: (a, np.ascontiguousarray(b.T).T),
    "tt": lambda a, b: (np.ascontiguousarray(a.T).T, np.ascontiguousarray(b.T).T),
    "row_gap": lambda a, b: (np.pad(a, ((0, 0), (0, 3)))[:, :a.shape[1]], b),
}


def _tensor_like(v):
    """A tensor with v's values and layout (strides and offset over a padded buffer)."""
    pad = 2
    flat = np.zeros(v.size * 4 + 8 + pad, v.dtype)
    base = tl.asarray(flat)
    t = base._view(v.shape, tuple(s // v.itemsize for s in v.strides), pad)
    t.copy_(tl.asarray(np.ascontiguousarray(v)))
    return t


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("layout", sorted(_LAYOUTS))
def test_direct_matmul_layouts_match_general_path_and_numpy(dtype, layout, monkeypatch):
    a, b = _LAYOUTS[layout](_rand((6, 5), dtype, 1), _rand((5, 4), dtype, 2))
    ta, tb = _tensor_like(a), _tensor_like(b)
    assert ta.stride() == tuple(s // a.itemsize for s in a.strides)
    ref = tl.empty((6, 4), dtype=ta.dtype)
    tl.matmul(ta, tb, out=ref)  # out= takes the general path
    _no_general_matmul(monkeypatch)
    for _ in range(2):  # the first call makes the layout's plan, the second uses it
        got = ta @ tb
        assert got.shape == (6, 4) and got.stride() == (4, 1) and got.dtype == ta.dtype
        np.testing.assert_array_equal(got.numpy(), ref.numpy())
        np.testing.assert_array_equal(got.numpy(), np.matmul(a, b))


def test_direct_matmul_plans_are_per_layout(monkeypatch):
    """One shape in several layouts, and one layout at several offsets: each call gets its
    own operand views."""
    base = _rand((8, 8), np.float32, 3)
    x = tl.asarray(base)
    cases = [(x, x), (x.T, x), (x, x.T), (x[1:], x[:, 1:]), (x[1:].T, x[:, 1:].T), (x[2:7], x[:, 5:])]
    for ta, tb in cases:
        want = np.matmul(ta.numpy(), tb.numpy())
        np.testing.assert_array_equal((ta @ tb).numpy(), want)
        np.testing.assert_array_equal((ta @ tb).numpy(), want)


def test_direct_matmul_declines_what_blas_cannot_take():
    """Negative, non-unit and zero strides, empty operands, mismatched K: the general path
    (dense copies for BLAS, zeros for K = 0, its errors)."""
    base = _rand((9, 9), np.float64, 4)
    x = tl.asarray(base)
    for ta, tb in [(x[::-1], x), (x, x[:, ::-1]), (x[::2, ::2], x[:5, ::3]),
                   (x[:, :1].broadcast_to((9, 4)), x[:4])]:
        for _ in range(2):
            np.testing.assert_array_equal((ta @ tb).numpy(), np.matmul(ta.numpy(), tb.numpy()))
    assert (x[:, :0] @ x[:0]).tolist() == np.zeros((9, 9)).tolist()
    assert (x[:0] @ x).shape == (0, 9) and (x @ x[:, :0]).shape == (9, 0)
    for _ in range(2):
        with pytest.raises(ValueError, match=r"matmul\(\): contraction dimensions differ"):
            x[:, :3] @ x[:4]


def test_direct_matmul_on_a_user_stream_and_after_queued_writes():
    base = tl.asarray(_rand((6, 6), np.float32, 5))
    (base @ base.T).numpy()  # warm the route
    s = tl.Stream(device="cpu")
    gate = gated(s)
    with tl.stream(s):
        x = base * 3  # queued behind the gate
        y = x @ x.T  # declined: the general path queues it on s
        assert not gate.is_set()
    threading.Timer(0.2, gate.set).start()
    z = x @ x.T  # on the default stream: waits for x's queued writer
    s.synchronize()
    want = np.matmul(base.numpy() * 3, (base.numpy() * 3).T)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-6)
    np.testing.assert_array_equal(z.numpy(), y.numpy())


def test_direct_matmul_and_transposed_copy_under_the_profiler():
    x = tl.asarray(_rand((5, 7), np.float32, 6))
    x @ x.T, x.T.contiguous()
    with tl.profiler.profile() as prof:
        y = x @ x.T
        c = x.T.contiguous()
    keys = [r.key for r in prof.key_averages()]
    assert any("matmul" in k for k in keys) and any("copy" in k for k in keys)
    np.testing.assert_array_equal(y.numpy(), np.matmul(x.numpy(), x.numpy().T))
    np.testing.assert_array_equal(c.numpy(), x.numpy().T)


# ---------------------------------------------------------------- strided copies
def _sources():
    b = _rand((6, 10), np.float32, 7)
    x = tl.asarray(b)
    c = tl.asarray(_rand((3, 4, 5), np.float64, 8))
    return {
        "transposed": x.T,
        "strided": x[::2, 1::3],
        "negative": x[::-1, ::-2],
        "offset": x[2:5, 3:].T,
        "broadcast": x[1].broadcast_to((4, 10)),
        "3d_permuted": c.permute((2, 0, 1)),
        "half": x.astype(tl.float16).T,
        "bfloat16": x.astype(tl.bfloat16)[:, ::-3],
        "bool": (x > 0).T,
        "int8_1d": x.astype(tl.int8)[0, ::-1],
    }


@pytest.mark.parametrize("name", sorted(_sources()))
def test_contiguous_strided_sources_bit_for_bit(name, monkeypatch):
    src = _sources()[name]
    # (bfloat16, which NumPy lacks, as float32: an exact, one-to-one conversion)
    host = (lambda t: t.astype(tl.float32).numpy()) if src.dtype == tl.bfloat16 else tl.Tensor.numpy
    want = np.ascontiguousarray(host(src))
    builds = _count_builds(monkeypatch)
    results = [src.contiguous() for _ in range(2)]
    assert not builds  # the strided copy, no TensorIterator
    monkeypatch.undo()
    for got in results:
        assert got.is_contiguous() and got.shape == src.shape and got.dtype == src.dtype
        assert host(got).tobytes() == want.tobytes()


def test_copy_into_dense_non_c_destination_and_empty():
    x = tl.asarray(_rand((4, 6), np.float32, 9))
    dst = tl.empty((6, 4), dtype=tl.float32).T  # dense, not C order
    dst.copy_(x[:, ::-1])
    np.testing.assert_array_equal(dst.numpy(), x.numpy()[:, ::-1])
    e = x[:, :0].T.contiguous()
    assert e.shape == (0, 4) and e.is_contiguous()


def test_transposed_copy_on_a_user_stream_and_after_queued_writes():
    base = tl.asarray(_rand((5, 8), np.float32, 10))
    base.T.contiguous()
    s = tl.Stream(device="cpu")
    gate = gated(s)
    with tl.stream(s):
        x = base * 2  # queued behind the gate
        y = x.T.contiguous()  # declined: the general path queues the copy on s
        assert not gate.is_set()
    threading.Timer(0.2, gate.set).start()
    z = x.T.contiguous()  # on the default stream: waits for x's queued writer
    s.synchronize()
    want = (base.numpy() * 2).T
    np.testing.assert_array_equal(y.numpy(), want)
    np.testing.assert_array_equal(z.numpy(), want)
