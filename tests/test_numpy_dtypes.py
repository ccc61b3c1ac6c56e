"""tensorlib dtypes convert to and compare with NumPy dtypes and names (issue 17 item 1)."""
import pickle
import sys

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import dtypes as D

NUMPY_BACKED = [d for d in D.ALL_DTYPES if d is not D.bfloat16]


@pytest.mark.parametrize("d", NUMPY_BACKED, ids=str)
def test_convertible_and_equal_to_numpy(d):
    npd = np.dtype(d.name)
    assert np.dtype(d) == npd
    assert d.dtype == npd
    assert d == npd and npd == d
    assert d == npd.type and npd.type == d
    assert d == d.name and d.name == d
    assert not (d != npd)
    assert np.zeros(2, dtype=d).dtype == npd
    assert tl.zeros(2, dtype=d).dtype == npd


def test_unequal_to_every_other_type():
    for a in D.ALL_DTYPES:
        for b in NUMPY_BACKED:
            if a is not b:
                assert a != np.dtype(b.name) and a != b.name and a != np.dtype(b.name).type
                assert a != b


def test_tensor_dtype_comparisons():
    x = tl.ones(3)
    assert x.dtype == np.float32 and x.dtype == "float32" and x.dtype == np.dtype("float32")
    assert x.dtype != np.float64 and x.dtype != "float64"
    assert x.dtype is tl.float32  # still the Array API dtype object
    assert tl.isdtype(x.dtype, "real floating")
    assert np.issubdtype(tl.int32, np.integer) and not np.issubdtype(tl.int32, np.floating)


def test_python_types_and_other_objects():
    assert tl.float64 == float and tl.int64 == int and tl.bool == bool
    assert tl.complex128 == complex
    assert tl.float32 != float
    assert tl.float32 != 3 and tl.float32 != None  # noqa: E711
    assert tl.float32 != "no such dtype" and tl.float32 != "datetime64"
    assert tl.float32 != np.dtype("M8[s]")


def test_hash_and_pickle_stay_identity_based():
    table = {d: i for i, d in enumerate(D.ALL_DTYPES)}
    assert len(table) == len(D.ALL_DTYPES)
    assert all(table[d] == i for i, d in enumerate(D.ALL_DTYPES))
    for d in D.ALL_DTYPES:
        assert pickle.loads(pickle.dumps(d)) is d


def test_numpy_dtype_without_equivalent_is_a_typed_error():
    with pytest.raises(TypeError, match=r"asarray\(\): argument 'dtype'.*datetime64.*no "
                                        r"tensorlib equivalent"):
        tl.asarray([1], dtype=np.dtype("M8[s]"))
    with pytest.raises(TypeError, match=r"zeros\(\): argument 'dtype'.*<U3"):
        tl.zeros(2, dtype="U3")
    with pytest.raises(TypeError, match="tensorlib dtype"):
        D.to_dtype(np.dtype([("a", "f4")]))


def test_bfloat16_maps_to_ml_dtypes():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf = np.dtype(ml_dtypes.bfloat16)
    assert np.dtype(tl.bfloat16) == bf and tl.bfloat16.dtype == bf
    assert tl.bfloat16 == bf and bf == tl.bfloat16 and tl.bfloat16 == "bfloat16"
    assert D.to_dtype(bf) is tl.bfloat16
    assert D.to_numpy_dtype("bfloat16") == bf
    assert tl.bfloat16 != np.float16 and tl.float16 != bf


def test_ml_dtypes_bfloat16_arrays_convert_without_a_copy():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    a = np.array([1.5, 2.25, -3.0], dtype=ml_dtypes.bfloat16)
    t = tl.asarray(a)
    assert t.dtype is tl.bfloat16 and t.tolist() == [1.5, 2.25, -3.0]
    a[0] = 7.0  # the tensor views the array's memory
    assert t.tolist()[0] == 7.0
    s = tl.add(t, a)  # an ml_dtypes array as an operand
    assert s.dtype is tl.bfloat16 and s.tolist() == [14.0, 4.5, -6.0]
    with pytest.raises(TypeError, match="unsupported array dtype"):
        tl.asarray(np.zeros(2, dtype="V2"))


def test_bfloat16_without_ml_dtypes(monkeypatch):
    monkeypatch.setitem(sys.modules, "ml_dtypes", None)  # import raises ImportError
    with pytest.raises(TypeError, match="NumPy has no bfloat16.*ml_dtypes"):
        np.dtype(tl.bfloat16)
    with pytest.raises(TypeError, match=r"to_numpy_dtype\(\): NumPy has no bfloat16"):
        D.to_numpy_dtype(tl.bfloat16)
    assert tl.bfloat16 == "bfloat16" and tl.bfloat16 != np.float32
