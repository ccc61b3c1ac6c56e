"""tensorlib.shape: the base layer's shape and stride arithmetic, with NumPy (or brute force over
every element offset) as the oracle; hypothesis over shapes including 0-d and empty ones."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from numpy.lib.array_utils import normalize_axis_index

import tensorlib as tl
from tensorlib import shape as S

SETTINGS = settings(max_examples=300, deadline=None)

dims = st.integers(0, 4)
shapes = st.lists(dims, min_size=0, max_size=4).map(tuple)
nonempty_shapes = st.lists(st.integers(1, 4), min_size=0, max_size=4).map(tuple)


@st.composite
def layouts(draw, min_stride=-6, max_stride=6):
    shape = draw(shapes)
    strides = tuple(draw(st.integers(min_stride, max_stride)) for _ in shape)
    return shape, strides


def offsets(shape, strides):
    """Element offsets of every index of a layout, C order (last dim fastest)."""
    return [sum(i * s for i, s in zip(idx, strides))
            for idx in itertools.product(*(range(n) for n in shape))]


# ---- axes ---------------------------------------------------------------------------------------
@given(st.integers(-7, 7), st.integers(0, 5))
@SETTINGS
def test_normalize_axis_matches_numpy(axis, ndim):
    if ndim == 0:
        if axis in (0, -1):  # the one extension: a 0-d tensor's "whole scalar" axis
            assert S.normalize_axis(axis, 0, "op") == 0
        else:
            with pytest.raises(IndexError):
                S.normalize_axis(axis, 0, "op")
        return
    try:
        want = normalize_axis_index(axis, ndim)
    except IndexError:  # numpy's AxisError is an IndexError
        with pytest.raises(IndexError):
            S.normalize_axis(axis, ndim, "op")
    else:
        assert S.normalize_axis(axis, ndim, "op") == want


def test_normalize_axis_messages():
    with pytest.raises(IndexError, match=r"^sum\(\): argument 'axis' = 3 is out of range for a "
                                         r"tensor of 2 dimensions$"):
        S.normalize_axis(3, 2, "sum")
    with pytest.raises(IndexError, match=r"^f\(\): argument 'dim' = -2 is out of range for a "
                                         r"tensor of 1 dimension$"):
        S.normalize_axis(-2, 1, "f", "dim")
    with pytest.raises(IndexError, match="tensor of 0 dimensions"):
        S.normalize_axis(1, 0, "f")


def test_normalize_axes():
    assert S.normalize_axes((-1, 0), 3, "op") == (2, 0)
    assert S.normalize_axes((), 3, "op") == ()
    with pytest.raises(ValueError, match=r"^op\(\): argument 'axes' has duplicate axes: "
                                         r"\(1, -2\)$"):
        S.normalize_axes((1, -2), 3, "op", "axes")


def test_views_reexports_the_same_functions():
    # ops and kernels import these from ops.views; they are the shape layer's, not copies
    import importlib
    from tensorlib.ops import views
    tensor = importlib.import_module("tensorlib.tensor")
    for name in ("normalize_axis", "normalize_axes", "infer_shape", "broadcast_shapes"):
        assert getattr(views, name) is getattr(S, name)
    assert tensor.contiguous_strides is S.contiguous_strides


# ---- infer_shape --------------------------------------------------------------------------------
@given(shapes, shapes, st.integers(-1, 4))
@SETTINGS
def test_infer_shape_matches_numpy_reshape(old, new, hole):
    numel = math.prod(old)
    if new and hole >= 0:
        new = new[:hole % len(new)] + (-1,) + new[hole % len(new) + 1:]
    try:
        want = np.empty(old).reshape(new).shape
    except ValueError:
        with pytest.raises(ValueError, match=r"^reshape\(\): "):
            S.infer_shape(new, numel, "reshape")
    else:
        assert S.infer_shape(new, numel, "reshape") == want


def test_infer_shape_errors():
    with pytest.raises(ValueError, match="only one dimension can be -1"):
        S.infer_shape((-1, -1), 4, "view")
    with pytest.raises(ValueError, match="invalid negative size -2"):
        S.infer_shape((-2, 2), 4, "view")
    with pytest.raises(ValueError, match=r"shape \(0, -1\) is invalid for a tensor of 0"):
        S.infer_shape((0, -1), 0, "view")  # -1 next to a 0 is ambiguous
    with pytest.raises(ValueError, match=r"shape \(3,\) is invalid for a tensor of 4 elements"):
        S.infer_shape([3], 4, "view")
    assert S.infer_shape([], 1, "view") == ()


# ---- broadcasting -------------------------------------------------------------------------------
@given(st.lists(shapes, min_size=0, max_size=4))
@SETTINGS
def test_broadcast_shapes_matches_numpy(shape_list):
    try:
        want = np.broadcast_shapes(*shape_list)
    except ValueError:
        with pytest.raises(ValueError, match="cannot be broadcast together"):
            S.broadcast_shapes(*shape_list)
    else:
        assert S.broadcast_shapes(*shape_list) == want


@given(shapes, shapes)
@SETTINGS
def test_broadcast_shapes_pairs_of_related_shapes(a, b):
    # related shapes broadcast more often than independent draws: replace some of b's dims by
    # a's or by 1
    b = tuple(1 if j % 2 else (a[i] if i < len(a) else n) for j, (i, n) in enumerate(
        zip(range(len(b)), b)))
    try:
        want = np.broadcast_shapes(a, b)
    except ValueError:
        with pytest.raises(ValueError):
            S.broadcast_shapes(a, b)
    else:
        assert S.broadcast_shapes(a, b) == want


def test_broadcast_shapes_message():
    with pytest.raises(ValueError, match=r"^add\(\): shapes \(2, 3\) and \(4,\) cannot be "
                                         r"broadcast together$"):
        S.broadcast_shapes((2, 3), [4], op="add")
    with pytest.raises(ValueError, match=r"^broadcast_shapes\(\): shapes \(2,\) and \(1,\) and "
                                         r"\(3,\) cannot"):
        S.broadcast_shapes((2,), (1,), (3,))
    assert S.broadcast_shapes() == ()
    assert S.broadcast_shapes((), (0,), (1, 1)) == (1, 0)


@given(shapes, shapes)
@SETTINGS
def test_broadcast_strides_match_numpy(shape, lead):
    out = S.broadcast_shapes(lead, shape) if _broadcasts(lead, shape) else None
    if out is None:
        return
    a = np.empty(shape, dtype=np.int8)
    got = S.broadcast_strides(shape, a.strides, len(out))
    want = np.broadcast_to(a, out).strides
    assert len(got) == len(out)
    for n, g, w, i in zip(out, got, want, range(len(out))):
        k = i - (len(out) - len(shape))  # the input's dim, if any
        if k < 0 or shape[k] == 1:
            assert g == 0  # new or stretched dims (numpy keeps a size-1 dim's stride; we zero it)
        elif n != 1:
            assert g == w


def _broadcasts(a, b):
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


# ---- strides ------------------------------------------------------------------------------------
@given(shapes)
@SETTINGS
def test_contiguous_strides(shape):
    got = S.contiguous_strides(shape)
    if 0 not in shape:
        assert got == tuple(s // 8 for s in np.empty(shape).strides)
    # a size-0 dim counts as 1 (PyTorch's convention; NumPy 2 gives empty arrays zero strides)
    want, acc = [], 1
    for n in reversed(shape):
        want.append(acc)
        acc *= max(n, 1)
    assert got == tuple(reversed(want))


def _np_view(shape, strides, itemsize=1):
    """A NumPy array with this layout (element strides) over a buffer that holds its span."""
    if 0 in shape:
        return np.empty(shape, dtype=np.int8)
    lo, end = S.span(shape, strides, 0)
    base = np.zeros(end - lo, dtype=np.int8)
    return np.lib.stride_tricks.as_strided(base[-lo:], shape, strides)


@given(layouts())
@SETTINGS
def test_is_contiguous_matches_numpy_flag(layout):
    shape, strides = layout
    if 0 in shape:
        assert S.is_contiguous(shape, strides)
        return
    assert S.is_contiguous(shape, strides) == _np_view(shape, strides).flags.c_contiguous


def _dense_oracle(shape, strides, allow_negative):
    if 0 in shape:
        return True
    offs = sorted(offsets(shape, strides))
    if offs != list(range(offs[0], offs[0] + len(offs))):
        return False  # a gap or a repeat
    return allow_negative or offs[0] == 0  # the block must start at the first element


@given(layouts(), st.booleans())
@SETTINGS
def test_is_dense_brute_force(layout, allow_negative):
    shape, strides = layout
    assert S.is_dense(shape, strides, allow_negative) == \
        _dense_oracle(shape, strides, allow_negative)


@given(nonempty_shapes, st.data())
@SETTINGS
def test_is_dense_permuted_and_flipped(shape, data):
    # every permutation of contiguous strides is dense; flips are dense only with negatives
    perm = data.draw(st.permutations(range(len(shape))))
    flips = [data.draw(st.booleans()) for _ in shape]
    c = S.contiguous_strides([shape[p] for p in perm])
    strides = [0] * len(shape)
    for k, p in enumerate(perm):
        strides[p] = -c[k] if flips[p] else c[k]
    assert S.is_dense(shape, strides)
    flipped = any(f and n > 1 for f, n in zip(flips, shape))
    assert S.is_dense(shape, strides, allow_negative=False) is not flipped


@pytest.mark.parametrize("shape,strides,signed,positive", [
    ((), (), True, True),                     # 0-d: one element
    ((1, 1), (7, -3), True, True),            # size-1 dims: any stride
    ((0,), (5,), True, True),                 # size 0: no elements
    ((3, 0), (2, 100), True, True),           # empty, strides that fit no block
    ((0, 3), (-1, 0), True, True),            # empty, negative and zero strides
    ((4,), (0,), False, False),               # expanded: elements repeat
    ((2, 3), (0, 1), False, False),
    ((1, 3), (0, 1), True, True),             # zero stride on a size-1 dim is fine
    ((4,), (-1,), True, False),               # flipped
    ((2, 3), (-3, 1), True, False),
    ((2, 3), (1, 2), True, True),             # transposed
    ((2, 3), (1, -2), True, False),
    ((4,), (2,), False, False),               # a gap
    ((2, 3), (4, 1), False, False),
    ((2, 2), (1, 1), False, False),           # overlapping
    ((2, 2), (2, 2), False, False),
])
def test_is_dense_edge_cases(shape, strides, signed, positive):
    assert S.is_dense(shape, strides) is signed
    assert S.is_dense(shape, strides, allow_negative=False) is positive
    assert _dense_oracle(shape, strides, True) is signed
    assert _dense_oracle(shape, strides, False) is positive


@given(layouts())
@SETTINGS
def test_span(layout):
    shape, strides = layout
    if 0 in shape:
        return
    offs = offsets(shape, strides)
    assert S.span(shape, strides, 10) == (10 + min(offs), 10 + max(offs) + 1)


@given(layouts(min_stride=0), shapes)
@SETTINGS
def test_view_strides(layout, new):
    shape, strides = layout
    numel = math.prod(shape)
    if math.prod(new) != numel:
        return
    got = S.view_strides(shape, strides, new)
    if got is not None:
        # the view visits the same offsets in the same (C) order
        assert offsets(new, got) == offsets(shape, strides)
    if numel > 1 and min(strides) > 0:
        # NumPy's no-copy reshape agrees on whether a view exists
        a = _np_view(shape, strides)
        try:
            np.reshape(a, new, copy=False)
            possible = True
        except ValueError:
            possible = False
        assert (got is not None) == possible


# ---- coalesce -----------------------------------------------------------------------------------
@st.composite
def loop_layouts(draw):
    shape = draw(st.lists(st.integers(2, 4), min_size=0, max_size=4).map(tuple))
    nops = draw(st.integers(1, 3))
    per_op = []
    for _ in range(nops):
        kind = draw(st.sampled_from(["dense", "random", "zero"]))
        if kind == "dense":
            acc, s = 1, []
            for n in shape:  # innermost first
                s.append(acc)
                acc *= n
        elif kind == "zero":
            s = [0] * len(shape)
        else:
            s = [draw(st.integers(-8, 8)) for _ in shape]
        per_op.append(s)
    return shape, per_op


def _loop_offsets(shape, strides):
    """Offsets in loop order: shape[0] innermost."""
    return [sum(i * s for i, s in zip(reversed(idx), strides))
            for idx in itertools.product(*(range(n) for n in reversed(shape)))]


@given(loop_layouts())
@SETTINGS
def test_coalesce_keeps_the_iteration_order(layout):
    shape, per_op = layout
    cshape, cstrides = S.coalesce(shape, per_op)
    assert math.prod(cshape) == math.prod(shape) and len(cstrides) == len(per_op)
    if not shape:
        assert cshape == (1,) and cstrides == tuple((0,) for _ in per_op)
        return
    for s, c in zip(per_op, cstrides):
        assert len(c) == len(cshape)
        assert _loop_offsets(cshape, c) == _loop_offsets(shape, s)
    # nothing left to merge
    for j in range(1, len(cshape)):
        assert not all(c[j] == c[j - 1] * cshape[j - 1] for c in cstrides)


def test_coalesce_examples():
    assert S.coalesce([4, 3, 2], [[1, 4, 12]]) == ((24,), ((1,),))
    assert S.coalesce([4, 3], [[1, 4], [0, 0]]) == ((12,), ((1,), (0,)))
    assert S.coalesce([4, 3], [[1, 4], [3, 1]]) == ((4, 3), ((1, 4), (3, 1)))
    assert S.coalesce([4, 3], [[2, 8]]) == ((12,), ((2,),))  # uniform gaps still merge
    assert S.coalesce([], [[], []]) == ((1,), ((0,), (0,)))


# ---- the callers --------------------------------------------------------------------------------
def test_callers_dense_semantics():
    # empty_like keeps a dense layout's order, flips included (any stride signs)...
    from tensorlib.ops.transfer import _is_dense as transfer_dense
    x = tl.asarray(np.arange(12, dtype=np.float32).reshape(3, 4)).T  # (4, 3), strides (1, 4)
    assert tl.empty_like(x).stride() == (1, 4)
    f = tl.flip(x, axis=0)  # strides (-1, 4): still one block
    assert f.stride() == (-1, 4)
    assert tl.empty_like(f).stride() == (1, 4)
    # ...while a transfer memcpys from the data pointer up: positive strides only
    assert transfer_dense(x) and not transfer_dense(f)
    assert transfer_dense(tl.empty((0, 3))) and transfer_dense(x[:1, :1])
    assert not transfer_dense(x[::2])
