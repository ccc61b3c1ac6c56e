"""kernels/cpu/short_rows_copy.py: both twins of the short-rows copy, called directly, for row
lengths with a kernel of their own and the looped one; and the ops that reach it."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib.kernels.cpu import short_rows_copy


@pytest.mark.parametrize("twin", ["serial", "parallel"])
@pytest.mark.parametrize("word", [np.uint8, np.uint16, np.uint32, np.uint64])
@pytest.mark.parametrize("n0", [1, 2, 3, 7, 8, 9, 12, 15])
@pytest.mark.parametrize("steps", ["broadcast", "columns", "reversed", "every other"])
@pytest.mark.parametrize("kernel", ["chosen", "looped"])
def test_rows_write_the_copy_and_nothing_else(twin, word, n0, steps, kernel):
    """n1 rows of n0 elements from a source read with steps (s0 along a row, s1 between rows):
    a broadcast column, a slice of columns, rows walked backwards, every other column; a
    destination at an offset, the words around it untouched. Both the kernel chosen for the
    row length and step (a constant length, halves, a constant step) and the looped one."""
    rng = np.random.default_rng(n0)
    n1, o_off, width = 9000 + n0, 13, n0 + 5
    src = rng.integers(1, 250, size=n1 * width + 8).astype(word)
    if steps == "broadcast":
        a_off, s0, s1 = 3, 0, width
        want = np.repeat(src[a_off:a_off + n1 * width:width], n0)
    elif steps == "columns":
        a_off, s0, s1 = 2, 1, width
        want = src[:n1 * width].reshape(n1, width)[:, 2:2 + n0].reshape(-1)
    elif steps == "reversed":  # the last row first
        a_off, s0, s1 = (n1 - 1) * width + 1, 1, -width
        want = src[:n1 * width].reshape(n1, width)[::-1, 1:1 + n0].reshape(-1)
    else:
        n1, width = n1 // 2, 2 * width
        a_off, s0, s1 = 1, 2, width
        want = src[:n1 * width].reshape(n1, width)[:, 1:1 + 2 * n0:2].reshape(-1)
    out = np.zeros(o_off + n0 * n1 + 5, word)
    kernels = (short_rows_copy._kernels_for(n0, s0) if kernel == "chosen"
               else short_rows_copy._kernels_for(16, -1))  # (no constant: the loop)
    getattr(kernels, twin)(out, o_off, src, a_off, n0, n1, s0, s1)
    np.testing.assert_array_equal(out[o_off:o_off + n0 * n1], want)
    assert not out[:o_off].any() and not out[o_off + n0 * n1:].any()


@pytest.mark.parametrize("dtype", ["bool", "int8", "float16", "int32", "float32", "float64",
                                   "int64", "complex64"])
@pytest.mark.parametrize("n", [6000, 40000, 300000])
def test_repeats_expands_and_column_slices_match_numpy(dtype, n):
    """tl.repeat by 2 to 12, a column expanded to 7 and made contiguous, and column slices
    (with negative steps) made contiguous, below and above the copy's grain: NumPy's bits."""
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n) * 50
    x = x > 0 if dtype == "bool" else x.astype(np.float32 if dtype == "float16" else dtype)
    t = tl.asarray(x).astype(getattr(tl, dtype))
    host = t.astype(tl.float32).numpy() if dtype == "float16" else t.numpy()
    for r in (2, 3, 5, 8, 9, 12, 15):
        got = tl.repeat(t, r)
        want = np.repeat(host, r)
        assert (got.astype(tl.float32).numpy() if dtype == "float16" else got.numpy()
                ).tobytes() == want.tobytes()
    m = n // 6 * 6
    t2, h2 = t[:m].reshape((-1, 6)), host[:m].reshape(-1, 6)
    cases = [(tl.broadcast_to(t2[:, 2:3], (m // 6, 7)), np.broadcast_to(h2[:, 2:3], (m // 6, 7))),
             (t2[:, 1:4], h2[:, 1:4]), (t2[::-1, ::-2], h2[::-1, ::-2])]
    m16 = n // 16 * 16
    t16, h16 = t[:m16].reshape((-1, 16)), host[:m16].reshape(-1, 16)
    cases += [(t16[:, 2:14], h16[:, 2:14]), (t16[::-1, 1:10], h16[::-1, 1:10]),
              (t16[:, ::-1][:, :15], h16[:, ::-1][:, :15]),
              (tl.broadcast_to(t16[:, 3:4], (m16 // 16, 11)),
               np.broadcast_to(h16[:, 3:4], (m16 // 16, 11)))]
    for view, expect in cases:
        got = view.contiguous()
        got = got.astype(tl.float32).numpy() if dtype == "float16" else got.numpy()
        assert got.tobytes() == np.ascontiguousarray(expect).tobytes()


@pytest.mark.parametrize("n", [30, 3000, 12000])
@pytest.mark.parametrize("dtype", ["float32", "int64", "int8"])
def test_single_column_copies_write_their_column_only(n, dtype):
    """A column of one element per row (x[:, k:k + 1].contiguous(), a copy_ into an (n, 1)
    tensor) is no short-rows copy: declined by the rows kernels (their halves write 8 elements
    a row), copied right by the other paths, with nothing written past the destination."""
    x = np.arange(n * 4).astype(dtype).reshape(n, 4)
    t = tl.asarray(x)
    word = np.dtype(dtype)
    assert not short_rows_copy._fits(word.itemsize, 1, n, 1)
    assert short_rows_copy._kernel_key(1, 1) == (0, 1)
    dst = tl.empty((n, 1), dtype=getattr(tl, dtype))
    assert short_rows_copy.copy_short_rows_serial(dst, t[:, 1:2]) is False
    for _ in range(40):  # (past the small copies' compile thresholds)
        got = t[:, 1:2].contiguous()
        assert got.numpy().tobytes() == np.ascontiguousarray(x[:, 1:2]).tobytes()
    guard = tl.zeros((n + 8, 1), dtype=getattr(tl, dtype))
    guard[:n].copy_(t[:, 2:3])
    assert guard.numpy()[:n].tobytes() == np.ascontiguousarray(x[:, 2:3]).tobytes()
    assert not guard.numpy()[n:].any()
