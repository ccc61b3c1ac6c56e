"""Tests for tensorlib.dtypes; NumPy is the oracle wherever it defines the answer."""

import copy
import itertools
import pickle
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tensorlib import dtypes as D

NON_BF16 = [d for d in D.ALL_DTYPES if d is not D.bfloat16]
INTEGRAL = {"b", "i", "u"}
FLOATS = [D.float16, D.bfloat16, D.float32, D.float64]
INTS = [D.int8, D.int16, D.int32, D.int64, D.uint8, D.uint16, D.uint32, D.uint64]


def _pairs(dts):
    return list(itertools.product(dts, dts))


# ----------------------------------------------------------------- DType

def test_all_dtypes_order_and_names():
    names = [d.name for d in D.ALL_DTYPES]
    assert names == ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                     "uint64", "float16", "bfloat16", "float32", "float64", "complex64",
                     "complex128"]
    assert D.bool_.name == "bool"


@pytest.mark.parametrize("d", NON_BF16, ids=str)
def test_attributes_match_numpy(d):
    npd = np.dtype(d.name)
    assert d.np_dtype == npd and d.storage_np_dtype == npd
    assert d.itemsize == npd.itemsize
    assert d.bits == 8 * npd.itemsize
    assert d.kind == npd.kind
    assert d.is_floating_point == (npd.kind == "f")
    assert d.is_complex == (npd.kind == "c")
    assert d.is_signed == (npd.kind in "ifc")
    assert repr(d) == f"tensorlib.{d.name}"
    assert str(d) == d.name


def test_bfloat16_attributes():
    b = D.bfloat16
    assert (b.name, b.itemsize, b.kind, b.bits) == ("bfloat16", 2, "f", 16)
    assert b.np_dtype is None
    assert b.storage_np_dtype == np.dtype(np.uint16)
    assert b.is_floating_point and b.is_signed and not b.is_complex


def test_identity_equality_and_hash():
    # issue 17: a dtype equals NumPy's spellings of the same type (tests/test_numpy_dtypes.py)
    assert D.float32 == D.float32
    assert D.float32 == "float32" and D.float32 != "float64"
    assert D.float32 == np.float32 and D.float32 != np.float64
    assert D.float32 == np.dtype("float32") and D.float32 != np.dtype("int32")
    assert D.float32 != D.float64
    assert len({d: 0 for d in D.ALL_DTYPES}) == len(D.ALL_DTYPES)


def test_immutable_and_no_new_instances():
    with pytest.raises(AttributeError, match="immutable"):
        D.float32.name = "x"
    with pytest.raises(AttributeError, match="immutable"):
        del D.float32.itemsize
    with pytest.raises(AttributeError):
        D.float32.extra = 1
    with pytest.raises(TypeError, match="cannot be created"):
        D.DType("float8", 1, "f", None, None, "float8")


@pytest.mark.parametrize("d", D.ALL_DTYPES, ids=str)
def test_pickle_and_copy_give_singleton(d):
    for proto in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(d, protocol=proto)) is d
    assert copy.copy(d) is d
    assert copy.deepcopy(d) is d


def test_import_does_not_pull_in_backends():
    src = str(Path(D.__file__).resolve().parents[1])
    code = ("import sys; sys.path.insert(0, %r); import tensorlib.dtypes; "
            "bad = [m for m in ('numba', 'triton', 'torch') if m in sys.modules]; "
            "assert not bad, bad" % src)
    subprocess.run([sys.executable, "-c", code], check=True)


# ----------------------------------------------------------------- lookup

@pytest.mark.parametrize("d", D.ALL_DTYPES, ids=str)
def test_to_dtype_identity_and_name(d):
    assert D.to_dtype(d) is d
    assert D.to_dtype(d.name) is d


@pytest.mark.parametrize("s,expected", [
    ("f4", "float32"), ("i8", "int64"), ("float", "float64"), ("int", "int64"),
    ("double", "float64"), ("half", "float16"), ("single", "float32"),
    ("csingle", "complex64"), ("?", "bool"), ("bool_", "bool"), ("u1", "uint8"),
    ("<f8", "float64"), (">f4", "float32"), ("c16", "complex128"), ("longlong", "int64"),
])
def test_to_dtype_numpy_strings(s, expected):
    assert D.to_dtype(s) is D.to_dtype(expected)
    assert D.to_dtype(s).np_dtype == np.dtype(s).newbyteorder("=")


@pytest.mark.parametrize("d", NON_BF16, ids=str)
def test_to_dtype_numpy_objects(d):
    assert D.to_dtype(d.np_dtype) is d
    assert D.to_dtype(d.np_dtype.type) is d
    assert D.from_numpy_dtype(d.np_dtype) is d


def test_to_dtype_python_types():
    assert D.to_dtype(bool) is D.bool_
    assert D.to_dtype(int) is D.int64
    assert D.to_dtype(float) is D.float64
    assert D.to_dtype(complex) is D.complex128
    assert D.to_dtype(np.float64) is D.float64  # subclass of float, still float64
    assert D.to_dtype(np.bool_) is D.bool_


@pytest.mark.parametrize("bad", [
    None, "foo", "cfloat", "bool8", "", "Float32", "object", "O", "U3", "M8", "m8[s]",
    "datetime64", "V4", "i4,i4", "g", "clongdouble", np.dtype(object), np.dtype("U5"),
    np.dtype("M8[ns]"), np.dtype([("a", "i4")]), np.longdouble, np.object_, np.str_,
    np.floating, str, object, 3, 1.5, True, [np.float32],
], ids=repr)
def test_to_dtype_rejects(bad):
    with pytest.raises(TypeError, match=r"^argument 'dtype' must be a tensorlib dtype, got "):
        D.to_dtype(bad)


def test_to_dtype_error_message_format():
    with pytest.raises(TypeError) as ei:
        D.to_dtype("foo", arg="out_dtype", op="zeros")
    assert str(ei.value) == "zeros(): argument 'out_dtype' must be a tensorlib dtype, got 'foo'"
    with pytest.raises(TypeError) as ei:
        D.to_dtype("foo")
    assert str(ei.value) == "argument 'dtype' must be a tensorlib dtype, got 'foo'"
    with pytest.raises(TypeError, match=r"got dtype\('O'\)"):
        D.to_dtype(np.dtype(object))
    with pytest.raises(TypeError, match="got None"):
        D.to_dtype(None)


def test_from_numpy_dtype():
    assert D.from_numpy_dtype(np.dtype(">i2")) is D.int16
    assert D.from_numpy_dtype("float32") is D.float32
    for bad in [np.dtype(object), np.dtype("U3"), np.dtype("f16"), np.dtype([("a", "f4")]),
                np.dtype(("i4", (2,))), "nope"]:
        with pytest.raises(TypeError, match=r"from_numpy_dtype\(\): unsupported numpy dtype"):
            D.from_numpy_dtype(bad)
    with pytest.raises(TypeError, match="float128"):
        D.from_numpy_dtype(np.dtype(np.longdouble))


# -------------------------------------------------------------- promotion

def _spec_promote_vs_numpy(a, b):
    """Expected promotion for non-bf16 dtypes: NumPy, except that integers
    (and bool) never widen a float/complex operand."""
    if a.kind in INTEGRAL and b.kind not in INTEGRAL:
        return b
    if b.kind in INTEGRAL and a.kind not in INTEGRAL:
        return a
    return D.from_numpy_dtype(np.promote_types(a.np_dtype, b.np_dtype))


def test_promote_types_vs_numpy():
    for a, b in _pairs(NON_BF16):
        assert D.promote_types(a, b) is _spec_promote_vs_numpy(a, b), (a, b)


def test_promote_types_deliberate_differences_from_numpy():
    assert np.promote_types(np.int64, np.float16) == np.float64
    assert D.promote_types(D.int64, D.float16) is D.float16
    assert D.promote_types(D.int32, D.float32) is D.float32
    assert D.promote_types(D.uint64, D.complex64) is D.complex64
    assert D.promote_types(D.bool_, D.float16) is D.float16


def test_promote_types_explicit_rows():
    P = D.promote_types
    assert P(D.bool_, D.bool_) is D.bool_
    assert P(D.int8, D.uint8) is D.int16
    assert P(D.uint8, D.int16) is D.int16
    assert P(D.uint16, D.int8) is D.int32
    assert P(D.uint32, D.int64) is D.int64
    assert P(D.uint32, D.int32) is D.int64
    assert P(D.int64, D.uint64) is D.float64
    assert P(D.int8, D.uint64) is D.float64
    assert P(D.complex64, D.float64) is D.complex128
    assert P(D.complex64, D.int64) is D.complex64


def test_promote_types_bfloat16_row():
    P = D.promote_types
    for d in [D.bool_] + INTS:
        assert P(D.bfloat16, d) is D.bfloat16
    assert P(D.bfloat16, D.bfloat16) is D.bfloat16
    assert P(D.bfloat16, D.float16) is D.float32
    assert P(D.bfloat16, D.float32) is D.float32
    assert P(D.bfloat16, D.float64) is D.float64
    assert P(D.bfloat16, D.complex64) is D.complex64
    assert P(D.bfloat16, D.complex128) is D.complex128
    assert P(D.float16, D.complex64) is D.complex64


def test_promote_types_symmetric():
    for a, b in _pairs(D.ALL_DTYPES):
        assert D.promote_types(a, b) is D.promote_types(b, a)


def test_promote_types_dtype_likes_and_errors():
    assert D.promote_types("float32", np.int8) is D.float32
    with pytest.raises(TypeError, match=r"promote_types\(\): argument 'type2' .* got 'nope'"):
        D.promote_types(D.float32, "nope")
    with pytest.raises(TypeError, match=r"argument 'type1' .* got \[1\]"):
        D.promote_types([1], D.float32)


# ------------------------------------------------------------ result_type

def test_result_type_strong_only():
    for a, b in _pairs(D.ALL_DTYPES):
        assert D.result_type(a, b) is D.promote_types(a, b)
    assert D.result_type(D.int8) is D.int8
    assert D.result_type(D.int8, D.uint8, D.float16) is D.float16
    assert D.result_type(np.zeros(2, np.int32), np.float16(1)) is D.float16
    assert D.result_type(np.zeros(2, ">f8")) is D.float64
    assert D.result_type("int16", np.uint8) is D.int16


def test_result_type_tensor_like():
    class T:
        def __init__(self, dtype):
            self.dtype = dtype

    assert D.result_type(T(D.bfloat16), T(D.float16)) is D.float32
    assert D.result_type(T(D.int8), 2.5) is D.float32


@pytest.mark.parametrize("strong", D.ALL_DTYPES, ids=str)
def test_result_type_weak_bool_and_int(strong):
    assert D.result_type(strong, True) is strong
    assert D.result_type(True, strong, False) is strong
    expected_int = D.int64 if strong is D.bool_ else strong
    assert D.result_type(strong, 7) is expected_int
    assert D.result_type(strong, 2**70) is expected_int  # range is the caller's check


@pytest.mark.parametrize("strong", D.ALL_DTYPES, ids=str)
def test_result_type_weak_float(strong):
    expected = strong if strong.kind in "fc" else D.float32
    assert D.result_type(strong, 1.5) is expected
    assert D.result_type(1.5, strong, 3) is expected


@pytest.mark.parametrize("strong,expected", [
    (D.bool_, D.complex64), (D.int8, D.complex64), (D.int64, D.complex64),
    (D.uint64, D.complex64), (D.float16, D.complex64), (D.bfloat16, D.complex64),
    (D.float32, D.complex64), (D.float64, D.complex128), (D.complex64, D.complex64),
    (D.complex128, D.complex128),
])
def test_result_type_weak_complex(strong, expected):
    assert D.result_type(strong, 1j) is expected
    assert D.result_type(1j, 2.0, strong, 1, True) is expected


def test_result_type_scalars_only():
    assert D.result_type(True) is D.bool_
    assert D.result_type(True, 1) is D.int64
    assert D.result_type(1) is D.int64
    assert D.result_type(1, 2.0) is D.float32
    assert D.result_type(1.0) is D.float32
    assert D.result_type(1j) is D.complex64
    assert D.result_type(False, 1j, 3) is D.complex64


def test_result_type_numpy_scalars_are_strong():
    # np.float64 subclasses float but is a strong float64.
    assert D.result_type(np.float64(1.0), D.float32) is D.float64
    assert D.result_type(np.int8(1), 1) is D.int8
    assert D.result_type(np.bool_(True), 1.0) is D.float32


def test_result_type_errors():
    with pytest.raises(ValueError, match="at least one"):
        D.result_type()
    for py in (bool, int, float, complex):
        with pytest.raises(TypeError, match=f"Python type '{py.__name__}'"):
            D.result_type(D.float32, py)
    with pytest.raises(TypeError, match=r"result_type\(\): argument 'arrays_and_dtypes\[1\]'.*'nope'"):
        D.result_type(D.float32, "nope")
    with pytest.raises(TypeError, match="got None"):
        D.result_type(None)
    with pytest.raises(TypeError, match=r"unsupported numpy dtype dtype\('<U1'\)"):
        D.result_type(np.array(["a"]))
    with pytest.raises(TypeError, match="float128"):
        D.result_type(np.longdouble(1))


def test_python_scalar_dtype():
    assert D.python_scalar_dtype(True) is D.bool_
    assert D.python_scalar_dtype(3) is D.int64
    assert D.python_scalar_dtype(3.0) is D.float32
    assert D.python_scalar_dtype(3j) is D.complex64
    assert D.python_scalar_dtype(np.float64(3.0)) is D.float64
    for bad in ("3", None, [1], np.str_("x")):
        with pytest.raises(TypeError, match=r"python_scalar_dtype\(\): .*got " + re.escape(repr(bad))):
            D.python_scalar_dtype(bad)


# ---------------------------------------------------------------- casting

def _numpy_same_kind(a, b):
    # Deliberate difference: signed -> unsigned integer is same_kind here
    # (NumPy ranks 'u' below 'i'); NumPy answers every other pair.
    if a.kind == "i" and b.kind == "u":
        return True
    return bool(np.can_cast(a.np_dtype, b.np_dtype, "same_kind"))


def test_can_cast_safe_vs_numpy():
    for a, b in _pairs(NON_BF16):
        assert D.can_cast(a, b) is bool(np.can_cast(a.np_dtype, b.np_dtype, "safe")), (a, b)


def test_can_cast_same_kind_vs_numpy():
    for a, b in _pairs(NON_BF16):
        assert D.can_cast(a, b, "same_kind") is _numpy_same_kind(a, b), (a, b)
    assert D.can_cast(D.int64, D.uint8, "same_kind")
    assert D.can_cast(D.uint64, D.int8, "same_kind")


def test_can_cast_bfloat16_safe():
    safe_to = {D.bfloat16, D.float32, D.float64, D.complex64, D.complex128}
    for d in D.ALL_DTYPES:
        assert D.can_cast(D.bfloat16, d) is (d in safe_to), d
    safe_from = {D.bool_, D.int8, D.uint8, D.bfloat16}
    for d in D.ALL_DTYPES:
        assert D.can_cast(d, D.bfloat16) is (d in safe_from), d


def test_can_cast_bfloat16_same_kind():
    assert D.can_cast(D.float16, D.bfloat16, "same_kind")
    assert D.can_cast(D.float64, D.bfloat16, "same_kind")
    assert D.can_cast(D.int64, D.bfloat16, "same_kind")
    assert not D.can_cast(D.bfloat16, D.int32, "same_kind")
    assert not D.can_cast(D.complex64, D.bfloat16, "same_kind")


def test_can_cast_other_modes():
    for a, b in _pairs(D.ALL_DTYPES):
        assert D.can_cast(a, b, "unsafe")
        assert D.can_cast(a, b, "no") is (a is b)
        assert D.can_cast(a, b, "equiv") is (a is b)


def test_can_cast_accepts_tensors_arrays_and_dtype_likes():
    class T:
        dtype = D.int8

    assert D.can_cast(T(), D.int16)
    assert not D.can_cast(np.zeros(1, np.float64), "float32")
    assert D.can_cast("int8", np.float16)
    assert D.can_cast(np.dtype("int8"), D.int16)


def test_can_cast_errors():
    with pytest.raises(ValueError, match="'sometimes'"):
        D.can_cast(D.int8, D.int16, "sometimes")
    with pytest.raises(ValueError, match="None"):
        D.can_cast(D.int8, D.int16, None)
    with pytest.raises(TypeError, match=r"can_cast\(\): argument 'to' .* got 'nope'"):
        D.can_cast(D.int8, "nope")
    with pytest.raises(TypeError, match=r"can_cast\(\): argument 'from_' .* got 3"):
        D.can_cast(3, D.int8)


# ------------------------------------------------------------ finfo/iinfo

@pytest.mark.parametrize("d", [D.float16, D.float32, D.float64, D.complex64, D.complex128], ids=str)
def test_finfo_vs_numpy(d):
    fi, nf = D.finfo(d), np.finfo(d.np_dtype)
    assert fi.bits == nf.bits
    assert fi.dtype is D.real_for(d)
    for attr in ("eps", "max", "min", "smallest_normal", "smallest_subnormal"):
        v = getattr(fi, attr)
        assert type(v) is float
        assert v == float(getattr(nf, attr)), attr
    assert fi.tiny == fi.smallest_normal
    assert type(fi.resolution) is float
    # NumPy stores resolution in the dtype itself (float32(1e-6) != 1e-6).
    assert nf.dtype.type(fi.resolution) == nf.resolution


def test_finfo_bfloat16():
    fi = D.finfo(D.bfloat16)
    assert fi.dtype is D.bfloat16
    assert fi.bits == 16
    assert fi.eps == 2.0 ** -7
    assert fi.max == (2 - 2.0 ** -7) * 2.0 ** 127 == -fi.min
    assert fi.smallest_normal == fi.tiny == 2.0 ** -126
    assert fi.smallest_subnormal == 2.0 ** -133
    assert fi.resolution == 0.01


def test_finfo_complex_describes_component():
    assert D.finfo(D.complex64).dtype is D.float32
    assert D.finfo(D.complex128) is D.finfo(D.float64)


def test_finfo_accepts_tensors_and_dtype_likes():
    class T:
        dtype = D.bfloat16

    assert D.finfo(T()) is D.finfo(D.bfloat16)
    assert D.finfo(np.zeros(1, np.float16)).bits == 16
    assert D.finfo("float32") is D.finfo(D.float32)


def test_finfo_immutable_and_repr():
    fi = D.finfo(D.float32)
    with pytest.raises(AttributeError):
        fi.eps = 1.0
    assert "dtype=tensorlib.float32" in repr(fi)
    assert pickle.loads(pickle.dumps(fi)) is fi


@pytest.mark.parametrize("d", [D.bool_] + INTS, ids=str)
def test_finfo_rejects(d):
    with pytest.raises(TypeError) as ei:
        D.finfo(d)
    assert str(ei.value) == (
        f"finfo(): argument 'type' must be a floating-point or complex dtype, got tensorlib.{d.name}")


def test_finfo_bad_dtype_like():
    with pytest.raises(TypeError, match=r"finfo\(\): argument 'type' must be a tensorlib dtype, got 'x'"):
        D.finfo("x")


@pytest.mark.parametrize("d", INTS, ids=str)
def test_iinfo_vs_numpy(d):
    ii, ni = D.iinfo(d), np.iinfo(d.np_dtype)
    assert (ii.bits, ii.min, ii.max) == (ni.bits, ni.min, ni.max)
    assert type(ii.min) is int and type(ii.max) is int
    assert ii.dtype is d
    assert D.iinfo(np.zeros(1, d.np_dtype)) is ii
    assert pickle.loads(pickle.dumps(ii)) is ii


@pytest.mark.parametrize("d", [D.bool_] + FLOATS + [D.complex64, D.complex128], ids=str)
def test_iinfo_rejects(d):
    with pytest.raises(TypeError) as ei:
        D.iinfo(d)
    assert str(ei.value) == f"iinfo(): argument 'type' must be an integer dtype, got tensorlib.{d.name}"


# --------------------------------------------------------------- isdtype

KIND_MEMBERS = {
    "bool": {D.bool_},
    "signed integer": {D.int8, D.int16, D.int32, D.int64},
    "unsigned integer": {D.uint8, D.uint16, D.uint32, D.uint64},
    "integral": set(INTS),
    "real floating": set(FLOATS),
    "complex floating": {D.complex64, D.complex128},
    "numeric": set(D.ALL_DTYPES) - {D.bool_},
}


@pytest.mark.parametrize("kind", list(KIND_MEMBERS))
def test_isdtype_kinds(kind):
    for d in D.ALL_DTYPES:
        assert D.isdtype(d, kind) is (d in KIND_MEMBERS[kind]), (d, kind)


def test_isdtype_vs_numpy():
    for d in NON_BF16:
        for kind in KIND_MEMBERS:
            assert D.isdtype(d, kind) == np.isdtype(d.np_dtype, kind), (d, kind)


def test_isdtype_dtype_and_tuple():
    assert D.isdtype(D.float32, D.float32)
    assert not D.isdtype(D.float32, D.float64)
    assert D.isdtype(D.bfloat16, ("bool", D.bfloat16))
    assert D.isdtype(D.uint8, ("signed integer", "unsigned integer"))
    assert not D.isdtype(D.float16, ("integral", D.complex64))
    assert not D.isdtype(D.float16, ())


def test_isdtype_errors():
    with pytest.raises(ValueError, match="'floating'"):
        D.isdtype(D.float32, "floating")
    with pytest.raises(ValueError, match="'float32'"):
        D.isdtype(D.float32, ("numeric", "float32"))
    with pytest.raises(TypeError, match="got 3"):
        D.isdtype(D.float32, 3)
    with pytest.raises(TypeError, match=r"got \('bool',\)"):
        D.isdtype(D.float32, (("bool",),))
    with pytest.raises(TypeError, match=r"isdtype\(\): argument 'dtype' .* got 'nope'"):
        D.isdtype("nope", "bool")


# --------------------------------------------------------------- defaults

def test_defaults():
    assert D.default_float() is D.float32
    assert D.default_int() is D.int64
    assert D.default_complex() is D.complex64
    assert D.default_index() is D.int64


def test_complex_for_and_real_for():
    assert D.complex_for(D.float32) is D.complex64
    assert D.complex_for(D.float16) is D.complex64
    assert D.complex_for(D.bfloat16) is D.complex64
    assert D.complex_for(D.float64) is D.complex128
    assert D.complex_for(D.complex128) is D.complex128
    with pytest.raises(TypeError, match=r"complex_for\(\).*got tensorlib.int32"):
        D.complex_for(D.int32)
    assert D.real_for(D.complex64) is D.float32
    assert D.real_for(D.complex128) is D.float64
    for d in D.ALL_DTYPES[:-2]:
        assert D.real_for(d) is d


def test_all_exports():
    for name in D.__all__:
        assert hasattr(D, name), name
    assert set(D.__all__) >= {d._attr for d in D.ALL_DTYPES}
