"""kernels/cpu/small_copy.py: small same-dtype copies from strided sources on raw addresses
(what ``contiguous()`` / ``clone()`` / ``copy_`` of a few thousand elements run)."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib.kernels.cpu import small_copy


@pytest.mark.parametrize("shape, strides, fold", [
    ((40, 25), (1, 40), (40, 25, 1, 40)),          # a transpose
    ((7,), (3,), (1, 7, 0, 3)),                     # 1-D with a step
    ((), (), (1, 1, 0, 0)),                         # 0-d
    ((1, 5, 1), (99, -2, 7), (1, 5, 0, -2)),        # size-1 dims dropped
    ((4, 6, 5), (30, 5, 1), (1, 120, 0, 1)),        # C order merges to one dim
    ((4, 6, 5), (60, 10, 2), (1, 120, 0, 2)),       # every other element: one dim
    ((4, 6, 5), (60, 5, 1), (4, 30, 60, 1)),        # the last two merge
    ((4, 6, 5), (1, 20, 4), (4, 30, 1, 4)),         # the inner two merge whatever the outer
    ((4, 6, 5), (1, 30, 4), None),                  # three dims left
    ((3, 4), (0, 1), (3, 4, 0, 1)),                 # a broadcast row
])
def test_fold_2d(shape, strides, fold):
    assert small_copy.fold_2d(shape, strides) == fold
    assert small_copy.fold_2d(shape, strides) == fold  # (remembered)


_DTYPES = [np.bool_, np.int8, np.uint16, np.float16, np.float32, np.int32, np.float64, np.int64,
           np.complex64, np.complex128]


@pytest.mark.parametrize("dtype", _DTYPES, ids=lambda d: np.dtype(d).name)
def test_small_strided_copies_match_numpy(dtype):
    """Every layout the loop takes (transposed, stepped, reversed, sliced, broadcast, 0-d) and
    ones it leaves to NumPy (three dims left, complex128's 16-byte elements, a strided
    destination), for every element width: the bits NumPy's copy gives, and the source is
    left as it was."""
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((6, 7, 5)) * 100).astype(dtype)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * a[::-1]
    t = tl.asarray(a)
    for _ in range(small_copy.HOT_CALLS):  # the width's loop is made after as many copies
        t[0].T.contiguous()
    assert (a.itemsize in small_copy._loops) == (a.itemsize <= 8)
    views = [(t.permute(2, 1, 0), a.transpose(2, 1, 0)), (t[::2, ::-1, 1:], a[::2, ::-1, 1:]),
             (t[::-1, :, ::-2], a[::-1, :, ::-2]), (t[:, 2, :], a[:, 2, :]),
             (t[:, :, 3], a[:, :, 3]), (t.permute(1, 0, 2), a.transpose(1, 0, 2)),
             (t.reshape(-1)[::3], a.reshape(-1)[::3]), (t.reshape(-1)[::-1], a.reshape(-1)[::-1]),
             (t[0, 0].expand(4, 5), np.broadcast_to(a[0, 0], (4, 5))),
             (t[2, :, 1:3].T, a[2, :, 1:3].T)]
    # short rows, the long dim run innermost: repeat's broadcast (steps 1 and -1), a slim
    # transpose, every other column; and steps over LONG_STEP_MAX, which keep the row order
    ft, fa = t.reshape(-1), a.reshape(-1)  # 210 elements
    views += [(ft[:50, None].expand(50, 3), np.broadcast_to(fa[:50, None], (50, 3))),
              (ft[::-1][:40, None].expand(40, 2), np.broadcast_to(fa[::-1][:40, None], (40, 2))),
              (ft[:120].reshape(3, 40).T, fa[:120].reshape(3, 40).T),
              (ft.reshape(70, 3)[::-1, ::2], fa.reshape(70, 3)[::-1, ::2])]
    bt = tl.concat([ft] * 5)  # 1050 elements: 10 rows 100 apart
    ba = np.concatenate([fa] * 5)
    views += [(bt[::100, None].expand(11, 2), np.broadcast_to(ba[::100, None], (11, 2)))]
    for tv, av in views:
        got = tv.contiguous()
        assert got.is_contiguous()
        assert np.array_equal(got.numpy().view(np.uint8), np.ascontiguousarray(av).view(np.uint8))
        assert np.array_equal(tv.clone().numpy(), av)
    assert np.array_equal(t[1, 2, 3].clone().numpy(), a[1, 2, 3])
    dst = tl.zeros((7, 12), dtype=t.dtype)
    dst[:, ::2].copy_(t[:, :, 0].T)  # a strided destination: NumPy's copy
    want = np.zeros((7, 12), dtype)
    want[:, ::2] = a[:, :, 0].T
    assert np.array_equal(dst.numpy(), want)
    assert np.array_equal(t.numpy(), a)


def test_larger_copies_keep_numpys_path():
    """Above MAX_ELEMENTS the loop is not used (NumPy's assignment orders its loops by the
    strides); the result is the same either side of the bound."""
    for n in (small_copy.MAX_ELEMENTS, small_copy.MAX_ELEMENTS + 1):
        a = np.arange(2 * n, dtype=np.float32)
        assert np.array_equal(tl.asarray(a)[::2].contiguous().numpy(), a[::2])
        m = np.arange(n * 2, dtype=np.int16).reshape(2, n)
        assert np.array_equal(tl.asarray(m).T.contiguous().numpy(), m.T)


def test_a_width_gets_its_loop_once_hot():
    """A script that copies a few times never compiles the loop (NumPy's copy serves it); the
    HOT_CALLS-th copy of a width makes it."""
    small_copy._calls.pop(2, None)
    small_copy._loops.pop(2, None)
    t = tl.asarray(np.arange(60, dtype=np.int16).reshape(6, 10))
    for i in range(1, small_copy.HOT_CALLS + 1):
        assert np.array_equal(t.T.contiguous().numpy(), t.numpy().T)
        assert (2 in small_copy._loops) == (i >= small_copy.HOT_CALLS)
