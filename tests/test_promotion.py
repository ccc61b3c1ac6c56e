"""Type promotion of binary ops over every dtype pair.

`add` runs on tiny arrays for all 15 x 15 pairs (result dtype == tl.result_type, values == NumPy
computed in that dtype); the other binary ops are checked on empty tensors, which exercises the
whole dtype logic without a kernel compile per pair.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import tensorlib as tl
from helpers import ALL_DTYPES, assert_close, to_numpy

PAIRS = list(itertools.product(ALL_DTYPES, ALL_DTYPES))
_A = [0, 1, 2, 3, 5, 7]
_B = [1, 0, 4, 2, 3, 1]  # every value (and every sum) is exact in every dtype, int8 included


def _tensor(values, dtype):
    if dtype == "bfloat16":
        return tl.asarray(np.array(values, np.float32)).astype(tl.bfloat16)
    return tl.from_numpy(np.array(values).astype(dtype))


def _np_values(values, dtype):
    return np.array(values).astype("float32" if dtype == "bfloat16" else dtype)


_INTEGRAL = "biu"


def _expected_promotion(a, b):
    """The documented rules, written out independently of dtypes.py."""
    da, db = tl.dtypes.to_dtype(a), tl.dtypes.to_dtype(b)
    if da is db:
        return da
    if da.kind in _INTEGRAL and db.kind not in _INTEGRAL:
        return db  # integers never widen a float/complex operand
    if db.kind in _INTEGRAL and da.kind not in _INTEGRAL:
        return da
    if {a, b} == {"float16", "bfloat16"}:
        return tl.float32
    if "bfloat16" in (a, b):
        other = b if a == "bfloat16" else a
        if other in ("bool", "bfloat16"):
            return tl.bfloat16
        if other == "float16":
            return tl.float32
        if tl.dtypes.to_dtype(other).kind == "c":
            return tl.dtypes.to_dtype(other)
        return tl.dtypes.to_dtype(other)  # float32 / float64
    # everything else is NumPy's table
    return tl.dtypes.to_dtype(np.result_type(a, b).name)


@pytest.mark.parametrize("a,b", PAIRS)
def test_result_type_table(a, b):
    assert tl.result_type(a, b) is _expected_promotion(a, b)
    assert tl.result_type(a, b) is tl.result_type(b, a)


@pytest.mark.parametrize("a,b", PAIRS)
def test_add_all_pairs_matches_numpy(a, b):
    x, y = _tensor(_A, a), _tensor(_B, b)
    rt = tl.result_type(x, y)
    got = tl.add(x, y)
    assert got.dtype is rt
    assert got.shape == (6,)
    if rt is tl.bfloat16:
        want = _np_values(_A, a).astype(np.float32) + _np_values(_B, b).astype(np.float32)
        assert_close(to_numpy(got), want, "bfloat16")
        return
    want = _np_values(_A, a).astype(rt.np_dtype) + _np_values(_B, b).astype(rt.np_dtype)
    assert_close(to_numpy(got), want, rt.name)


def test_add_pair_broadcast_and_layout():
    # one mixed pair with broadcasting and non-contiguous operands (the kernel casts on load)
    a = np.arange(12, dtype=np.int16).reshape(3, 4).T          # (4, 3), transposed
    b = np.linspace(0, 1, 3).astype(np.float64)[::-1]          # (3,), reversed
    got = tl.add(tl.from_numpy(a), tl.from_numpy(b))
    assert got.dtype is tl.float64
    np.testing.assert_allclose(to_numpy(got), a.astype(np.float64) + b)


# ---------------------------------------------------------------- other binary ops (no compile)

def _binary_pointwise():
    import os

    import yaml
    from tensorlib.dispatch.schema import parse_schema
    with open(os.path.join(os.path.dirname(tl.__file__), "ops.yaml")) as f:
        entries = yaml.safe_load(f)
    out = []
    for e in entries:
        if "pointwise" not in e:
            continue
        s = parse_schema(e["func"])
        if sum(a.type.base == "Tensor" and not a.is_out for a in s.arguments) == 2:
            out.append((s.name, e))
    return out


_KINDS = {"all": "biufc", "numeric": "iufc", "real": "biuf", "real_numeric": "iuf",
          "integral": "biu", "integer": "iu", "float": "f", "float_complex": "fc"}
BINARY = _binary_pointwise()


@pytest.mark.parametrize("name,entry", BINARY, ids=[n for n, _ in BINARY])
def test_binary_result_dtypes_all_pairs(name, entry):
    fn = getattr(tl, name)
    kinds = _KINDS[entry.get("dtypes", "all")]
    for a, b in PAIRS:
        x, y = tl.empty(0, dtype=a), tl.empty(0, dtype=b)
        common = tl.result_type(a, b)
        if entry.get("promote") == "int_to_float" and common.kind in _INTEGRAL:
            common = tl.float32
        refused = "no_half" in entry.get("tags", ()) and common.itemsize == 2 \
            and common.kind == "f"
        if common.kind not in kinds or refused:
            with pytest.raises(TypeError, match=name):
                fn(x, y)
            continue
        out = fn(x, y)
        if entry.get("output") == "bool":
            assert out.dtype is tl.bool, (a, b)
        else:
            assert out.dtype is common, (a, b)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("scalar", [True, 2, 2.5, 1j], ids=["bool", "int", "float", "complex"])
def test_weak_python_scalars(dtype, scalar):
    d = tl.dtypes.to_dtype(dtype)
    if isinstance(scalar, bool):
        want = d
    elif isinstance(scalar, int):
        want = tl.int64 if d is tl.bool else d
    elif isinstance(scalar, float):
        want = d if d.kind in "fc" else tl.float32
    else:
        want = d if d.kind == "c" else (tl.complex128 if d is tl.float64 else tl.complex64)
    assert tl.result_type(d, scalar) is want
    assert tl.add(tl.empty(0, dtype=d), scalar).dtype is want


def test_scalars_alone_use_defaults():
    assert tl.result_type(1, 2) is tl.int64
    assert tl.result_type(1.0, 2) is tl.float32
    assert tl.result_type(True) is tl.bool
    assert tl.result_type(1j, 1.0) is tl.complex64
