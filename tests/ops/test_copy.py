"""Copies, casts and fills (ops/copy.py; the kernels: kernels/cpu/pointwise.py and
kernels/cuda/pointwise.py), one body on every device (the ``device`` fixture: CPU and CUDA on
the interpret backend), against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from helpers import ALL_DTYPES, bf16_exact, gated, host, on_device


def test_float_to_int_special_values(device):
    """nan / inf / out of range -> INT64_MIN (then wrapped to narrower types), as x86's
    cvttsd2si gives NumPy; uint64 takes values >= 2**63 exactly."""
    x = on_device(np.array([np.nan, np.inf, -np.inf, 1e30, 2.0**63, 1.5e19, -3.0]), device)
    np.testing.assert_array_equal(host(x.astype(tl.int64), device), [-2**63] * 5 + [-2**63, -3])
    np.testing.assert_array_equal(host(x.astype(tl.uint64), device),
                                  np.array([2**63, 2**63, 2**63, 2**63, 2**63,
                                            15000000000000000000, 2**64 - 3], np.uint64))
    np.testing.assert_array_equal(host(x.astype(tl.int16), device), [0, 0, 0, 0, 0, 0, -3])


def test_copy_broadcast_and_strided_destination(device):
    src = np.arange(4, dtype=np.int16)
    dst = tl.zeros((3, 8), dtype=tl.float64, device=device)
    view = dst[:, ::2]
    view.copy_(on_device(src, device))
    want = np.zeros((3, 8))
    want[:, ::2] = src
    np.testing.assert_array_equal(host(dst, device), want)
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    g = on_device(a, device)
    np.testing.assert_array_equal(host(g.T.contiguous(), device), a.T)
    np.testing.assert_array_equal(host(g.T.clone(), device), a.T)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_fill(dtype, device):
    value = {"bool": True, "complex64": 1.5 - 2j, "complex128": -0.25 + 3j}.get(
        dtype, 1 + 2**-11 + 2**-40 if np.dtype(dtype if dtype != "bfloat16" else "f4").kind
        == "f" else 7)
    t = tl.full((2, 3), value, dtype=dtype, device=device)
    if dtype == "bfloat16":
        want = np.full((2, 3), bf16_exact(value), np.float32)
    else:
        want = np.full((2, 3), value, dtype=dtype)  # NumPy rounds once, from the Python float
    np.testing.assert_array_equal(host(t, device), want)
    z = tl.zeros((4,), dtype=dtype, device=device)
    np.testing.assert_array_equal(host(z, device), np.zeros(4, np.float32 if dtype == "bfloat16"
                                                            else dtype))


def test_fill_errors_name_the_value(device):
    t = tl.empty((3,), dtype=tl.int8, device=device)
    with pytest.raises(OverflowError, match="300"):
        t.fill_(300)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int8", "bool",
                                   "complex128"])
@pytest.mark.parametrize("layout", ["transpose", "flip", "step", "broadcast", "offset_3d"])
def test_small_strided_copies_give_every_element(dtype, layout, monkeypatch):
    """contiguous() / clone() / copy_ of a strided source of the destination's dtype below the
    parallel grain take the CPU kernel's strided copy (NumPy's over the storages' bytes); the
    result equals the source element for element, and the full path is not entered."""
    from tensorlib.iterator import TensorIterator
    dt = getattr(tl, dtype)
    rng = np.random.default_rng(5)
    host = rng.standard_normal((6, 7, 5)) * 10
    base = tl.asarray(host).astype(dt)
    src = {"transpose": lambda b: tl.permute(b, (2, 0, 1)),
           "flip": lambda b: tl.flip(b, axis=1),
           "step": lambda b: b[::2, 1::3, ::-2],
           "broadcast": lambda b: tl.broadcast_to(b[:, :1, :], (6, 7, 5)),
           "offset_3d": lambda b: b[1:5, 2:6, 1:4]}[layout](base)
    assert not src.is_contiguous()
    wide = tl.complex128 if dtype == "complex128" else tl.float64
    expected = src.astype(wide).numpy()  # each element read through the source's strides

    def no_iterator(*args, **kwargs):
        raise AssertionError("TensorIterator.build was called")
    monkeypatch.setattr(TensorIterator, "build", classmethod(no_iterator))
    outs = [src.contiguous(), src.clone()]
    dst = tl.empty(src.shape, dtype=dt)
    outs.append(dst.copy_(src))
    monkeypatch.undo()
    assert outs[0].is_contiguous() and outs[2].is_contiguous()  # clone keeps a dense order
    for out in outs:
        assert out.dtype == dt and out.shape == src.shape
        np.testing.assert_array_equal(out.astype(wide).numpy(), expected)
    assert base.astype(wide).numpy().tolist() == tl.asarray(host).astype(dt).astype(
        wide).numpy().tolist()  # the source's storage unchanged


# ---- transposed 2-D copies (kernels/cpu/transpose_copy.py: bands on the CPU) -----------------
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (3, 5), (33, 70), (64, 32), (257, 5), (200, 150)])
def test_transposed_copies_match_numpy(device, dtype, shape):
    """x.T.contiguous(), transposed views with steps, negative steps and offsets, and a copy_ of
    a transposed source into a strided window of a bigger tensor: NumPy's bits (same dtype)."""
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(shape) * 50).astype(np.float64)
    if dtype == "bool":
        x = x > 0
    t = on_device(x.astype(np.float32) if dtype in ("float16", "bfloat16") else x, device)
    t = t.astype(getattr(tl, dtype))
    want = host(t, device)  # this dtype's values as NumPy holds them (bfloat16: as float32)
    cases = [(t.T, want.T), (t[1:, ::2].T, want[1:, ::2].T), (t[::-1, 1:].T, want[::-1, 1:].T)]
    for view, expect in cases:
        got = host(view.contiguous(), device)
        assert got.shape == expect.shape
        assert got.tobytes() == np.ascontiguousarray(expect).tobytes()
    big = tl.zeros((shape[1] + 4, 2 * shape[0] + 3), dtype=t.dtype, device=device)
    big[2:2 + shape[1], 1:1 + 2 * shape[0]:2].copy_(t.T)
    expect = np.zeros((shape[1] + 4, 2 * shape[0] + 3), want.dtype)
    expect[2:2 + shape[1], 1:1 + 2 * shape[0]:2] = want.T
    assert host(big, device).tobytes() == expect.tobytes()


@pytest.mark.parametrize("dtype", ["bool", "float16", "bfloat16", "float32", "int64", "complex64",
                                   "complex128"])
def test_big_transposed_copies_in_bands_match_numpy(dtype):
    """Above the copy fast path's grain a transposed copy runs in bands (one loop per element
    width; 16-byte elements take the pointwise loop): ragged edges, steps, negative steps,
    offsets and a strided destination window, bit for bit."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((700, 530)) * 50
    t = tl.asarray(x > 0 if dtype == "bool" else
                   x.astype(np.float32 if dtype in ("float16", "bfloat16") else dtype))
    t = t.astype(getattr(tl, dtype))
    want = host(t)
    for view, expect in [(t.T, want.T), (t[3:, 1:].T, want[3:, 1:].T),
                         (t[::-1, ::2].T, want[::-1, ::2].T)]:
        assert host(view.contiguous()).tobytes() == np.ascontiguousarray(expect).tobytes()
    big = tl.zeros((540, 1405), dtype=t.dtype)
    big[5:535, 3:1403:2].copy_(t.T)
    expect = np.zeros((540, 1405), want.dtype)
    expect[5:535, 3:1403:2] = want.T
    assert host(big).tobytes() == expect.tobytes()


def test_transposed_copy_keeps_nan_payloads_and_runs_in_stream_order():
    bits = np.array([0x7FC00001, 0xFFC00002, 0x7F800001, 0x3F800000] * 75000, np.uint32)
    x = tl.asarray(bits.view(np.float32).reshape(600, 500))
    assert (x.T.contiguous().numpy().view(np.uint32) == bits.reshape(600, 500).T).all()
    big = tl.asarray(np.arange(600 * 700, dtype=np.float32).reshape(600, 700))
    s = tl.Stream(device="cpu")
    gate = gated(s)
    with tl.stream(s):
        y = big * 2.0  # queued behind the gate: the tiles must read it after it ran
        out = y.T.contiguous()
        assert not s.query()
    gate.set()
    s.synchronize()
    assert (out.numpy() == (np.arange(600 * 700, dtype=np.float32).reshape(600, 700) * 2).T).all()
