"""TensorIterator: layout (reorder + coalesce), memory order of outputs, out= checks, overlap,
32-bit splitting."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib.iterator import Layout, TensorIterator, memory_overlap


def _t(shape, dtype=np.float32):
    return tl.from_numpy(np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape))


def test_contiguous_inputs_coalesce_to_one_dim():
    a, b = _t((3, 4, 5)), _t((3, 4, 5))
    lay = TensorIterator.binary("add", a, b).layout()
    assert lay.shape == (60,)
    assert lay.strides == ((1,), (1,), (1,))


def test_broadcast_row_keeps_two_dims_with_zero_stride():
    a, v = _t((4, 5)), _t((5,))
    it = TensorIterator.binary("add", a, v)
    lay = it.layout()
    assert lay.shape == (5, 4)
    assert lay.strides[2] == (1, 0)
    assert it.output().shape == (4, 5)


def test_transposed_input_gives_transposed_output_layout():
    a = _t((5, 4)).T
    it = TensorIterator.unary("negative", a)
    out = it.output()
    assert out.shape == (4, 5)
    assert out.stride() == (1, 4)
    assert it.layout().shape == (20,)


def test_reversed_input_iterates_without_coalescing_into_wrong_order():
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    a = tl.from_numpy(base[::-1])
    np.testing.assert_array_equal((a + 1).numpy(), base[::-1] + 1)


def test_broadcast_error_names_both_shapes():
    with pytest.raises(ValueError, match=r"add\(\): shapes \(3, 4\) and \(5,\)"):
        TensorIterator.binary("add", _t((3, 4)), _t((5,)))


def test_out_shape_and_dtype_checks():
    a = _t((2, 3))
    with pytest.raises(ValueError, match="output with shape"):
        TensorIterator.binary("add", a, a, out=tl.empty((3, 2)))
    with pytest.raises(TypeError, match="can't be cast"):
        TensorIterator.binary("add", a, a, out=tl.empty((2, 3), dtype=tl.int32))
    expanded = tl.zeros((1, 3)).expand((2, 3))
    with pytest.raises(RuntimeError, match="share memory"):
        TensorIterator.binary("add", a, a, out=expanded)


def test_mixed_devices_rejected_with_both_names():
    from tensorlib.device import Device
    a = _t((2,))
    other = tl.Tensor._make(a._storage, (2,), (1,), 0, a.dtype)

    class FakeStorage:  # stands in for CUDA memory: only its device is read before the check
        device = Device("cuda", 0)
    other._storage = FakeStorage()
    with pytest.raises(RuntimeError, match="'cpu' and 'cuda:0'"):
        TensorIterator.binary("add", a, other)


def test_memory_overlap_kinds():
    a = _t((10,))
    assert memory_overlap(a, a) == "full"
    assert memory_overlap(a[2:6], a[4:8]) == "partial"
    assert memory_overlap(a[:5], a[5:]) == "none"


def test_partially_overlapping_out_gives_out_of_place_answer():
    base = np.arange(10, dtype=np.float32)
    a = tl.from_numpy(base.copy())
    expected = base[:8] + base[2:]
    tl.add(a[:8], a[2:], out=a[2:])  # writes over its own second input
    np.testing.assert_array_equal(a.numpy()[2:], expected)


def test_python_scalars_are_weak_and_zero_d():
    a = _t((3,), np.int8)
    it = TensorIterator.binary("add", a, 1)
    assert it.common_dtype is tl.int8
    it = TensorIterator.binary("add", a, 1.5)
    assert it.common_dtype is tl.float32
    with pytest.raises(TypeError, match="at least one argument must be a Tensor"):
        TensorIterator.binary("add", 1, 2)


def test_split_32bit_pieces_cover_the_loop():
    # A fake layout reaching past 2**31 elements: pieces must each fit and tile the range.
    it = TensorIterator.unary("negative", _t((4,)))
    it._layout = Layout((2 ** 20, 2 ** 12), ((1, 2 ** 20), (1, 2 ** 20)), (0, 0))
    assert not it.can_use_32bit_indexing()
    pieces = list(it.split_32bit())
    assert len(pieces) >= 2
    limit = 2 ** 31 - 1
    total = 0
    starts = set()
    for p in pieces:
        assert p.numel <= limit and all(p.max_offset_span(k) <= limit for k in range(2))
        total += p.numel
        starts.add(p.offsets)
    assert total == 2 ** 32
    assert len(starts) == len(pieces)


def test_small_iterators_use_32bit_indexing():
    assert TensorIterator.binary("add", _t((3, 4)), _t((4,))).can_use_32bit_indexing()
