"""kernels/cpu/transpose_copy.py: both twins of the banded transposed copy, called directly (the
op-level tests in tests/ops/test_copy.py reach the parallel one only when the team is ready)."""
import numpy as np
import pytest

from tensorlib.kernels.cpu import transpose_copy


@pytest.mark.parametrize("twin", ["serial", "parallel"])
@pytest.mark.parametrize("word", [np.uint8, np.uint16, np.uint32, np.uint64])
@pytest.mark.parametrize("n0, n1", [(1, 1), (3, 5), (17, 300), (64, 64), (257, 1031),
                                    (1000, 7)])
@pytest.mark.parametrize("rows", [8, 16])
def test_bands_write_the_transpose_and_nothing_else(twin, word, n0, n1, rows):
    """Ragged bands and column blocks, a source window (row stride above its row length) at an
    offset, a destination at an offset: the transpose's bits, the words around it untouched."""
    rng = np.random.default_rng(n0 * 7 + n1)
    s0, a_off, o_off = n1 + 3, 5, 11
    src = rng.integers(1, 250, size=a_off + n0 * s0 + 7).astype(word)
    out = np.zeros(o_off + n0 * n1 + 4, word)
    getattr(transpose_copy._KERNELS[rows], twin)(out, o_off, src, a_off, n0, n1, s0, 1)
    want = src[a_off:a_off + n0 * s0].reshape(n0, s0)[:, :n1].T
    np.testing.assert_array_equal(out[o_off:o_off + n0 * n1].reshape(n1, n0), want)
    assert not out[:o_off].any() and not out[o_off + n0 * n1:].any()


@pytest.mark.parametrize("itemsize, row_bytes, rows", [
    (4, 2000, 16), (8, 4000, 8), (2, 1000, 16), (1, 500, 16),   # one output line, at most 16
    (4, 8192, 8), (1, 4096, 8), (8, 16384, 8),                   # one L1 set: 8 ways
    (1, 2048, 16), (4, 1024, 16)])                               # two sets or more
def test_band_rows(itemsize, row_bytes, rows):
    assert transpose_copy.band_rows(itemsize, row_bytes) == rows
