"""Loop nests over layouts whose innermost dim is short (kernels/cpu/pointwise._long_inner): an
(n, 3) image times a per-channel scale, broadcast expands and ``repeat`` run the longest dim
innermost. The element order of a pointwise loop does not change its bits: each result must
be NumPy's (or the same op's on a copy), at sizes around the tile and the parallel grain."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib.iterator import Layout
from tensorlib.kernels.cpu import pointwise
from tensorlib.kernels.cpu.pointwise import LONG_STEP_MAX, SHORT_INNER, TILE, _long_inner, \
    tile_meta


def test_long_inner_reorders_only_short_inner_dims():
    lay = Layout((3, 1000), ((1, 3), (1, 0)), (0, 5))
    assert _long_inner(lay).shape == (1000, 3)
    assert _long_inner(lay).strides == ((3, 1), (0, 1))
    assert _long_inner(lay).offsets == (0, 5)
    assert list(tile_meta(lay)) == [2, 1000, 3, 3, 1, 0, 1, 0, 5]
    for keep in (Layout((SHORT_INNER, 1000), ((1, SHORT_INNER),), (0,)),  # not short
                 Layout((3, 12), ((1, 3),), (0,)),                        # not 4x longer
                 Layout((1000,), ((1,),), (0,)),                          # one dim
                 Layout((3, 1000), ((1, 3), (1, LONG_STEP_MAX + 1)), (0, 0))):  # wide steps
        assert _long_inner(keep) is keep
    # the longest of several outer dims goes innermost, the others keep their order
    lay = Layout((2, 5, 700, 9), ((1, 2, 10, 7000),), (0,))
    assert _long_inner(lay).shape == (700, 2, 5, 9)
    assert _long_inner(lay).strides == ((10, 1, 2, 7000),)


@pytest.mark.parametrize("n", [7, 1000, TILE + 3, 3 * TILE + 1, (1 << 18) // 3 + 5])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "complex64"])
def test_short_inner_layouts_match_numpy(n, dtype):
    rng = np.random.default_rng(n)
    img = (rng.standard_normal((n, 3)) * 50).astype(dtype)
    scale = np.array([2, -3, 5], dtype)
    col = (rng.standard_normal((n, 1)) * 50).astype(dtype)
    t_img, t_scale, t_col = tl.asarray(img), tl.asarray(scale), tl.asarray(col)
    with np.errstate(all="ignore"):
        cases = [
            (t_img * t_scale, img * scale),
            (t_col + t_scale[:2], col + scale[:2]),
            (t_img[::-2] - t_scale[::-1], img[::-2] - scale[::-1]),   # reversed, stepped
            (t_img[:, 1:] * t_col, img[:, 1:] * col),
        ]
    for got, want in cases:
        assert got.dtype.name == want.dtype.name and got.shape == want.shape
        np.testing.assert_array_equal(got.numpy(), want)
    flat = img[:, 0].copy()
    np.testing.assert_array_equal(tl.repeat(tl.asarray(flat), 3).numpy(), np.repeat(flat, 3))
    np.testing.assert_array_equal(tl.broadcast_to(t_col, (n, 2)).contiguous().numpy(),
                                  np.broadcast_to(col, (n, 2)))
    inplace = t_img.clone()
    inplace *= t_scale  # the in-place loop reads through the output in the new order too
    np.testing.assert_array_equal(inplace.numpy(), img * scale)


def test_short_broadcast_copies_leave_numpy(monkeypatch):
    """copy_strided hands short 2-D rows to the short-rows kernel (kernels/cpu/
    short_rows_copy.py) and a short broadcast last dim of a layout that stays 3-D to the full
    path's loop nest (NumPy's copy would run n short rows either way)."""
    from tensorlib.kernels.cpu import short_rows_copy
    nests, rows = [], []
    monkeypatch.setattr(pointwise, "tile_meta",
                        lambda lay: nests.append(lay.shape) or tile_meta(lay))
    kernels_for = short_rows_copy._kernels_for
    monkeypatch.setattr(short_rows_copy, "_kernels_for",
                        lambda n0, s0: rows.append(n0) or kernels_for(n0, s0))
    n = 20000
    values = np.arange(n, dtype=np.float32)
    col = tl.asarray(values.reshape(n, 1))
    got = tl.broadcast_to(col, (n, 2)).contiguous()
    np.testing.assert_array_equal(got.numpy(), np.repeat(values, 2).reshape(n, 2))
    assert rows == [2] and not nests, "the (n, 2) broadcast copy did not run the rows kernel"
    rows.clear()
    # rows of 2 whose source steps 2 within groups of 4 and 9 between them: three dims that
    # do not merge, so the layout stays 3-D
    base = np.arange(n // 4 * 9, dtype=np.float32).reshape(n // 4, 9)
    view = tl.asarray(base)[:, :8:2].reshape((n // 4, 4, 1))
    got = tl.broadcast_to(view, (n // 4, 4, 2)).contiguous()
    np.testing.assert_array_equal(got.numpy(), np.repeat(base[:, :8:2], 2, axis=1)
                                  .reshape(n // 4, 4, 2))
    assert nests and not rows, "the 3-D broadcast copy did not run the loop nest"
