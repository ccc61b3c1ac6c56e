"""Array API 2024.12 coverage of the namespace (``import tensorlib as tl``).

* every function, constant and dtype of the standard (and of its linalg extension) exists with the
  standard's parameters: positional parameters in order (names where they are not
  positional-only), keyword parameters by name with the standard's defaults;
* the array object's attributes, methods and operators;
* the elementwise ops added for it (conj, real, imag, nextafter, signbit) against NumPy, on the CPU
  and on CUDA through the Triton interpreter;
* unstack, expand_dims, Tensor.to_device, tensordot's pair of axis sequences, concat / stack of
  nothing, clip with Python scalar bounds, and x[idx] for an index view into a larger buffer.

Run as a script, it prints every deviation from the standard's signatures, including the strict
ones (positional-only / keyword-only markers) that the tests allow.
"""
from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

import tensorlib as tl

# ---------------------------------------------------------------- the standard, written out
# name -> parameters as the 2024.12 specification spells them ('/' and '*' markers included)
FUNCTIONS = {
    # creation
    "arange": "start, /, stop=None, step=1, *, dtype=None, device=None",
    "asarray": "obj, /, *, dtype=None, device=None, copy=None",
    "empty": "shape, *, dtype=None, device=None",
    "empty_like": "x, /, *, dtype=None, device=None",
    "eye": "n_rows, n_cols=None, /, *, k=0, dtype=None, device=None",
    "from_dlpack": "x, /, *, device=None, copy=None",
    "full": "shape, fill_value, *, dtype=None, device=None",
    "full_like": "x, /, fill_value, *, dtype=None, device=None",
    "linspace": "start, stop, /, num, *, dtype=None, device=None, endpoint=True",
    "meshgrid": "*arrays, indexing='xy'",
    "ones": "shape, *, dtype=None, device=None",
    "ones_like": "x, /, *, dtype=None, device=None",
    "tril": "x, /, *, k=0",
    "triu": "x, /, *, k=0",
    "zeros": "shape, *, dtype=None, device=None",
    "zeros_like": "x, /, *, dtype=None, device=None",
    # data types
    "astype": "x, dtype, /, *, copy=True, device=None",
    "can_cast": "from_, to, /",
    "finfo": "type, /",
    "iinfo": "type, /",
    "isdtype": "dtype, kind",
    "result_type": "*arrays_and_dtypes",
    # indexing
    "take": "x, indices, /, *, axis=None",
    "take_along_axis": "x, indices, /, *, axis=-1",
    # inspection
    "__array_namespace_info__": "",
    # linear algebra (main namespace)
    "matmul": "x1, x2, /",
    "matrix_transpose": "x, /",
    "tensordot": "x1, x2, /, *, axes=2",
    "vecdot": "x1, x2, /, *, axis=-1",
    # manipulation
    "broadcast_arrays": "*arrays",
    "broadcast_to": "x, /, shape",
    "concat": "arrays, /, *, axis=0",
    "expand_dims": "x, /, *, axis=0",
    "flip": "x, /, *, axis=None",
    "moveaxis": "x, source, destination, /",
    "permute_dims": "x, /, axes",
    "repeat": "x, repeats, /, *, axis=None",
    "reshape": "x, /, shape, *, copy=None",
    "roll": "x, /, shift, *, axis=None",
    "squeeze": "x, /, axis",
    "stack": "arrays, /, *, axis=0",
    "tile": "x, repetitions, /",
    "unstack": "x, /, *, axis=0",
    # searching
    "argmax": "x, /, *, axis=None, keepdims=False",
    "argmin": "x, /, *, axis=None, keepdims=False",
    "count_nonzero": "x, /, *, axis=None, keepdims=False",
    "nonzero": "x, /",
    "searchsorted": "x1, x2, /, *, side='left', sorter=None",
    "where": "condition, x1, x2, /",
    # set
    "unique_all": "x, /",
    "unique_counts": "x, /",
    "unique_inverse": "x, /",
    "unique_values": "x, /",
    # sorting
    "argsort": "x, /, *, axis=-1, descending=False, stable=True",
    "sort": "x, /, *, axis=-1, descending=False, stable=True",
    # statistical
    "cumulative_prod": "x, /, *, axis=None, dtype=None, include_initial=False",
    "cumulative_sum": "x, /, *, axis=None, dtype=None, include_initial=False",
    "max": "x, /, *, axis=None, keepdims=False",
    "mean": "x, /, *, axis=None, keepdims=False",
    "min": "x, /, *, axis=None, keepdims=False",
    "prod": "x, /, *, axis=None, dtype=None, keepdims=False",
    "std": "x, /, *, axis=None, correction=0.0, keepdims=False",
    "sum": "x, /, *, axis=None, dtype=None, keepdims=False",
    "var": "x, /, *, axis=None, correction=0.0, keepdims=False",
    # utility
    "all": "x, /, *, axis=None, keepdims=False",
    "any": "x, /, *, axis=None, keepdims=False",
    "diff": "x, /, *, axis=-1, n=1, prepend=None, append=None",
    # elementwise with more than arrays
    "clip": "x, /, min=None, max=None",
}
UNARY = """abs acos acosh asin asinh atan atanh bitwise_invert ceil conj cos cosh exp expm1 floor
imag isfinite isinf isnan log log1p log2 log10 logical_not negative positive real reciprocal round
sign signbit sin sinh square sqrt tan tanh trunc""".split()
BINARY = """add atan2 bitwise_and bitwise_left_shift bitwise_or bitwise_right_shift bitwise_xor
copysign divide equal floor_divide greater greater_equal hypot less less_equal logaddexp
logical_and logical_or logical_xor maximum minimum multiply nextafter not_equal pow remainder
subtract""".split()
FUNCTIONS.update({n: "x, /" for n in UNARY})
FUNCTIONS.update({n: "x1, x2, /" for n in BINARY})

LINALG = {
    "cholesky": "x, /, *, upper=False",
    "cross": "x1, x2, /, *, axis=-1",
    "det": "x, /",
    "diagonal": "x, /, *, offset=0",
    "eigh": "x, /",
    "eigvalsh": "x, /",
    "inv": "x, /",
    "matmul": "x1, x2, /",
    "matrix_norm": "x, /, *, keepdims=False, ord='fro'",
    "matrix_power": "x, n, /",
    "matrix_rank": "x, /, *, rtol=None",
    "matrix_transpose": "x, /",
    "outer": "x1, x2, /",
    "pinv": "x, /, *, rtol=None",
    "qr": "x, /, *, mode='reduced'",
    "slogdet": "x, /",
    "solve": "x1, x2, /",
    "svd": "x, /, *, full_matrices=True",
    "svdvals": "x, /",
    "tensordot": "x1, x2, /, *, axes=2",
    "trace": "x, /, *, offset=0, dtype=None",
    "vecdot": "x1, x2, /, *, axis=-1",
    "vector_norm": "x, /, *, axis=None, keepdims=False, ord=2",
}
CONSTANTS = {"e": math.e, "pi": math.pi, "inf": math.inf, "newaxis": None}
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64", "complex64", "complex128"]
ARRAY_ATTRIBUTES = ["dtype", "device", "mT", "ndim", "shape", "size", "T"]
ARRAY_METHODS = {
    "__array_namespace__": "self, /, *, api_version=None",
    "__dlpack__": "self, /, *, stream=None, max_version=None, dl_device=None, copy=None",
    "__dlpack_device__": "self, /",
    "to_device": "self, device, /, *, stream=None",
}
OPERATORS = """abs add and bool complex eq float floordiv ge getitem gt index int invert le lshift
lt matmul mod mul ne neg or pos pow rshift setitem sub truediv xor iadd isub imul itruediv
ifloordiv ipow imod imatmul iand ior ixor ilshift irshift radd rsub rmul rtruediv rfloordiv rpow
rmod rmatmul rand ror rxor rlshift rrshift""".split()

_EMPTY = inspect.Parameter.empty


def _parse(spec):
    """[(name, kind, default)], kind: 'pos' (positional-only), 'pk', 'kw', 'var'."""
    parts = [p.strip() for p in spec.split(",") if p.strip()]
    kind = "pos" if "/" in parts else "pk"
    out = []
    for p in parts:
        if p == "/":
            kind = "pk"
        elif p == "*":
            kind = "kw"
        elif p.startswith("*"):
            out.append((p[1:], "var", _EMPTY))
            kind = "kw"
        else:
            name, _, default = p.partition("=")
            out.append((name, kind, eval(default) if default else _EMPTY))  # noqa: S307
    return out


def deviations(fn, spec, method=False):
    """(errors, strict): errors break the standard's calls; strict are only stricter markers
    (a parameter the standard makes positional-only / keyword-only also taken the other way)."""
    errors, strict = [], []
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError) as e:
        return [f"no signature ({e})"], []
    want = _parse(spec)
    if method:
        want, params = want[1:], params[1:]
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    by_name = {p.name: p for p in params}
    i = 0
    for name, kind, default in want:
        if kind == "var":
            if not any(p.kind == p.VAR_POSITIONAL for p in params):
                errors.append(f"*{name}: no varargs")
            continue
        if kind in ("pos", "pk"):
            if i >= len(positional):
                errors.append(f"positional '{name}' missing")
                continue
            p = positional[i]
            i += 1
            if kind == "pk" and p.name != name:
                errors.append(f"positional #{i} is '{p.name}', the standard's is '{name}'")
            if kind == "pos" and p.kind != p.POSITIONAL_ONLY:
                strict.append(f"'{p.name}' is not positional-only")
        else:
            p = by_name.get(name)
            if p is None or p.kind not in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD):
                errors.append(f"keyword '{name}' missing")
                continue
            if p.kind != p.KEYWORD_ONLY:
                strict.append(f"'{name}' is not keyword-only")
        if default is not _EMPTY and p.default != default:
            errors.append(f"'{name}' defaults to {p.default!r}, the standard's is {default!r}")
    named = {n for n, _, _ in want}
    for p in positional[i:] + [p for p in params if p.kind == p.KEYWORD_ONLY]:
        if p.default is _EMPTY and p.name not in named:
            errors.append(f"extra required parameter '{p.name}'")
    return errors, strict


def _report():
    for ns, table, prefix in ((tl, FUNCTIONS, ""), (tl.linalg, LINALG, "linalg.")):
        for name, spec in table.items():
            if not hasattr(ns, name):
                yield f"{prefix}{name}", ["missing"], []
            else:
                yield (f"{prefix}{name}",) + deviations(getattr(ns, name), spec)
    for name, spec in ARRAY_METHODS.items():
        if not hasattr(tl.Tensor, name):
            yield f"Tensor.{name}", ["missing"], []
        else:
            yield (f"Tensor.{name}",) + deviations(getattr(tl.Tensor, name), spec, method=True)


# Markers looser than the standard's, by choice (every call the standard allows works; more are
# accepted for PyTorch / NumPy habits such as tl.sum(x, 0) or tl.add(x, other=y)): only the first
# tensor is positional-only, and the reductions' schemas take axis / keepdims positionally.
_STRICT_OK = ("is not positional-only", "'axis' is not keyword-only",
              "'keepdims' is not keyword-only")


_KNOWN_GAPS = {}


@pytest.mark.parametrize("name,spec", [
    pytest.param(n, s, marks=pytest.mark.xfail(strict=True, reason=_KNOWN_GAPS[n]))
    if n in _KNOWN_GAPS else (n, s) for n, s in FUNCTIONS.items()], ids=list(FUNCTIONS))
def test_function_exists_with_the_standards_parameters(name, spec):
    assert hasattr(tl, name), f"tl.{name} is missing"
    errors, strict = deviations(getattr(tl, name), spec)
    assert not errors, f"{name}: {errors}"
    assert all(s.endswith(_STRICT_OK) for s in strict), f"{name}: {strict}"
    assert name in tl.__all__ or name == "__array_namespace_info__"


@pytest.mark.parametrize("name,spec", list(LINALG.items()), ids=list(LINALG))
def test_linalg_function_exists_with_the_standards_parameters(name, spec):
    fn = getattr(tl.linalg, name, None)
    assert fn is not None, f"tl.linalg.{name} is missing"
    errors, strict = deviations(fn, spec)
    assert not errors and not strict, f"linalg.{name}: {errors + strict}"


def test_constants_dtypes_and_version():
    for name, value in CONSTANTS.items():
        assert getattr(tl, name) == value or getattr(tl, name) is value, name
    assert math.isnan(tl.nan)
    for name in DTYPES:
        assert isinstance(getattr(tl, name), tl.dtypes.DType), name
    assert tl.__array_api_version__ == "2024.12"
    info = tl.__array_namespace_info__()
    for method in ("capabilities", "default_device", "default_dtypes", "devices", "dtypes"):
        assert callable(getattr(info, method)), method


def test_array_object_attributes_methods_and_operators():
    x = tl.asarray([[1.0, 2.0, 3.0]])
    assert x.dtype is tl.float32 and x.device == tl.Device("cpu")
    assert x.ndim == 2 and x.shape == (1, 3) and x.size == 3
    assert x.T.shape == (3, 1) and x.mT.shape == (3, 1)
    assert x.__array_namespace__() is tl
    assert x.__array_namespace__(api_version="2024.12") is tl
    with pytest.raises(ValueError, match="api_version"):
        x.__array_namespace__(api_version="1999.01")
    for name, spec in ARRAY_METHODS.items():
        errors, strict = deviations(getattr(tl.Tensor, name), spec, method=True)
        assert not errors and not strict, f"Tensor.{name}: {errors + strict}"
    missing = [f"__{op}__" for op in OPERATORS if not hasattr(tl.Tensor, f"__{op}__")]
    assert not missing


# ---------------------------------------------------------------- the new elementwise ops (CPU)
def _np(t):
    return np.array(t.numpy(), copy=True)


def _bits(a):
    """Raw bits of a float / complex array (complex as its two components)."""
    a = np.ascontiguousarray(a)
    if a.dtype.kind == "c":
        a = a.view(a.real.dtype)
    return a.view(f"u{a.itemsize}")


_CSPECIAL = np.array([1 + 2j, -3 - 0j, complex(0.0, -0.0), complex(-0.0, 0.0),
                      complex(np.inf, -1), complex(np.nan, 2), complex(1, np.nan),
                      complex(-np.inf, np.inf)])


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_conj_real_imag_of_complex(dtype):
    z = _CSPECIAL.astype(dtype).reshape(2, 4)
    t = tl.asarray(z)
    for name, want in (("conj", np.conj(z)), ("real", np.real(z)), ("imag", np.imag(z))):
        got = _np(getattr(tl, name)(t))
        assert got.dtype == want.dtype, name
        # bit-exact, signs of zeros and nan payload positions included
        np.testing.assert_array_equal(_bits(got), _bits(want), err_msg=name)
    # strided input, out= into a real tensor
    out = tl.empty((2,), dtype=tl.dtypes.real_for(t.dtype))
    tl.imag(t.mT[1], out=out)
    np.testing.assert_array_equal(_np(out), np.imag(z.T[1]))
    np.testing.assert_array_equal(_np(t.conj()), np.conj(z))


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_conj_real_imag_of_real_input(dtype):
    x = np.array([1.5, -0.0, np.inf, np.nan, -2.0, 3.0]).astype(dtype) if dtype[0] == "f" \
        else np.array([-(2 ** 31), -1, 0, 7, 2 ** 31 - 1], dtype)
    t = tl.asarray(x)
    for name, fn in (("conj", np.conj), ("real", np.real), ("imag", np.imag)):
        got, want = _np(getattr(tl, name)(t)), fn(x)
        assert got.dtype == want.dtype, name
        np.testing.assert_array_equal(got, want, err_msg=name)
        if dtype[0] == "f":
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want), err_msg=name)
    with pytest.raises(TypeError, match=r"real.*bool"):
        tl.real(tl.asarray([True]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nextafter_and_signbit(dtype):
    fi = np.finfo(dtype)
    v = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, fi.max, fi.smallest_subnormal,
                  -fi.smallest_subnormal, fi.smallest_normal], dtype)
    a, b = np.meshgrid(v, v, indexing="ij")
    got = _np(tl.nextafter(tl.asarray(a), tl.asarray(b)))
    with np.errstate(over="ignore"):
        want = np.nextafter(a, b)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    # signbit reads the bit: -0.0 and -nan are negative
    s = np.concatenate([v, -v])
    np.testing.assert_array_equal(_np(tl.signbit(tl.asarray(s))), np.signbit(s))


def test_nextafter_signbit_promotion():
    i = tl.asarray(np.array([-3, 0, 5], np.int32))
    assert tl.nextafter(i, i).dtype is tl.float32  # int_to_float, as divide
    assert tl.signbit(i).tolist() == [True, False, False]
    assert tl.signbit(tl.asarray([True, False])).tolist() == [False, False]
    assert tl.nextafter(tl.asarray([1.0], dtype=tl.float64),
                        tl.asarray([2.0], dtype=tl.float64)).tolist() == [np.nextafter(1.0, 2.0)]


# ---------------------------------------------------------------- manipulation, devices
def test_unstack_matches_numpy():
    a = np.arange(24).reshape(2, 3, 4)
    t = tl.asarray(a)
    for axis in (0, 1, 2, -1, -3):
        got = tl.unstack(t, axis=axis)
        want = np.unstack(a, axis=axis)
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(_np(g), w)
    assert len(tl.unstack(t)) == 2
    views = tl.unstack(t, axis=1)
    views[0][0, 0] = -5  # views share memory with the input
    assert int(t[0, 0, 0].item()) == -5
    with pytest.raises(IndexError, match=r"unstack\(\).*'axis' = 3"):
        tl.unstack(t, axis=3)
    with pytest.raises(ValueError, match=r"unstack\(\).*0-d"):
        tl.unstack(tl.asarray(1.0))
    with pytest.raises(TypeError):
        tl.unstack(t, 1)  # axis is keyword-only


def test_expand_dims():
    t = tl.ones((2, 3))
    assert tl.expand_dims(t).shape == (1, 2, 3)
    assert tl.expand_dims(t, axis=-1).shape == (2, 3, 1)
    assert tl.expand_dims(t, 1).shape == (2, 1, 3)  # positional, as NumPy's
    assert tl.expand_dims(t, axis=-3).shape == (1, 2, 3)
    with pytest.raises(IndexError, match=r"expand_dims\(\).*'axis' = 3"):
        tl.expand_dims(t, axis=3)
    with pytest.raises(IndexError, match=r"expand_dims\(\).*'axis' = -4"):
        tl.expand_dims(t, axis=-4)


def test_to_device_on_the_cpu():
    x = tl.asarray([1.0, 2.0])
    assert x.to_device("cpu") is x
    assert x.to_device(tl.Device("cpu")) is x
    s = tl.Stream(device="cpu")
    y = x.to_device("cpu", stream=s)
    assert y.tolist() == [1.0, 2.0]
    with pytest.raises(TypeError, match=r"to_device\(\).*'stream'.*int"):
        x.to_device("cpu", stream=7)
    with pytest.raises((TypeError, ValueError), match="tpu"):
        x.to_device("tpu")


def test_concat_and_stack_of_nothing():
    for name in ("concat", "stack"):
        for empty in ([], ()):
            with pytest.raises(ValueError, match=rf"{name}\(\): argument 'arrays'.*at least one"):
                getattr(tl, name)(empty)
    with pytest.raises(TypeError, match=r"concat\(\).*'arrays'"):
        tl.concat([tl.ones(2), 3])
    assert tl.concat([tl.ones(2), tl.zeros(1)], axis=0).tolist() == [1.0, 1.0, 0.0]
    assert tl.stack((tl.ones(2),), axis=-1).shape == (2, 1)


def test_tensordot_takes_a_pair_of_axis_sequences():
    a = np.arange(24.0).reshape(2, 3, 4)
    b = np.arange(24.0).reshape(4, 3, 2)
    for axes in (((1, 2), (1, 0)), ([2], [0]), 1, (2, 0)):
        want = np.tensordot(a, b, axes=axes)
        for fn in (tl.tensordot, tl.linalg.tensordot):
            np.testing.assert_array_equal(_np(fn(tl.asarray(a), tl.asarray(b), axes=axes)), want)
    with pytest.raises(TypeError, match=r"tensordot\(\).*'axes'"):
        tl.tensordot(tl.asarray(a), tl.asarray(b), axes="x")
    with pytest.raises(TypeError, match=r"tensordot\(\).*'x2'"):
        tl.tensordot(tl.asarray(a), b)


def test_clip_with_python_scalars():
    x = tl.asarray([0.5, -1.0, 2.0, np.nan])
    np.testing.assert_array_equal(_np(tl.clip(x, 0, 1)), np.clip(_np(x), 0, 1))
    i = tl.asarray(np.array([-5, 3, 9], np.int8))
    assert tl.clip(i, max=4).tolist() == [-5, 3, 4]
    assert tl.clip(i, -1).dtype is tl.int8


def test_clip_kernel_takes_python_scalars():
    # what the binding should forward once it lets scalars through (test above)
    from tensorlib.dispatch.dispatcher import get_op
    x = tl.asarray([0.5, -1.0, 2.0, np.nan])
    np.testing.assert_array_equal(_np(get_op("clip").call(x, 0, 1)), np.clip(_np(x), 0, 1))
    r = get_op("clip").call(x, None, 0.25)
    assert r.dtype is tl.float32 and _np(r)[:3].tolist() == [0.25, -1.0, 0.25]
    np.testing.assert_array_equal(_np(tl.clip(x, tl.asarray(0.0), tl.asarray(1.0))),
                                  np.clip(_np(x), 0, 1))


# ---------------------------------------------------------------- x[idx], idx a view
@pytest.mark.parametrize("dtype", [tl.int64, tl.int32])
def test_gather_with_an_index_view_into_a_larger_buffer(dtype):
    # The direct gather kernel must read the view's elements only, not its whole storage:
    # the out-of-range values after the view would otherwise raise (or be written past out).
    buf = tl.asarray([0, 1, 2, 100, 100, 100, 100, 100], dtype=dtype)
    x = tl.arange(0, 50, 10)
    assert x[buf[0:3]].tolist() == [0, 10, 20]
    assert x[buf[1:3]].tolist() == [10, 20]
    idx = tl.arange(10, dtype=dtype)[2:5]
    assert tl.arange(0, 40, 2)[idx].tolist() == [4, 6, 8]
    m = tl.reshape(tl.arange(20), (5, 4))
    assert m[idx].tolist() == [[8, 9, 10, 11], [12, 13, 14, 15], [16, 17, 18, 19]]
    assert m[:, buf[1:3]].tolist() == [[1, 2], [5, 6], [9, 10], [13, 14], [17, 18]]
    assert tl.take(x, buf[0:3]).tolist() == [0, 10, 20]
    # a bad index inside the view is still reported, at its position in the view
    with pytest.raises(IndexError, match="100"):
        x[buf[2:4]]


# ---------------------------------------------------------------- CUDA (Triton interpreter)


def _cuda(a):
    return tl.asarray(np.ascontiguousarray(a), device="cuda")


def _host(t):
    return np.array(t.cpu().numpy(), copy=True)


_F32 = np.array([[1.5, -0.0, np.inf, -np.inf], [np.nan, 0.0, -2.0, 3.0e-41]], np.float32)


@pytest.mark.parametrize("name", ["conj", "real", "imag"])
def test_cuda_complex_parts(cuda_interpret, name):
    fn = {"conj": np.conj, "real": np.real, "imag": np.imag}[name]
    z = np.array([1 + 2j, -0.0 - 0.0j, np.nan - 3j, np.inf + 0.0j], np.complex64)
    for a in (_F32, z):
        got = _host(getattr(tl, name)(_cuda(a)))
        want = fn(a)
        assert got.dtype == want.dtype, name
        np.testing.assert_array_equal(_bits(got), _bits(want), err_msg=name)


def test_cuda_nextafter(cuda_interpret):
    a, b = _F32, _F32[:, ::-1]
    np.testing.assert_array_equal(_host(tl.nextafter(_cuda(a), _cuda(b))), np.nextafter(a, b))


def test_cuda_signbit(cuda_interpret):
    s = np.concatenate([_F32, -_F32])
    np.testing.assert_array_equal(_host(tl.signbit(_cuda(s))), np.signbit(s))


def test_cuda_to_device_and_linalg_refusal(cuda_interpret):
    x = tl.asarray([[2.0, 1.0], [1.0, 3.0]])
    g = x.to_device("cuda")
    assert g.device == tl.Device("cuda:0") and g.to_device("cuda") is g
    assert g.to_device("cpu").tolist() == x.tolist()
    with pytest.raises(RuntimeError, match=r"linalg\.inv\(\).*CPU only.*cuda"):
        tl.linalg.inv(g)


if __name__ == "__main__":
    for name, errors, strict in _report():
        if errors or strict:
            print(f"{name}: " + "; ".join(errors + [f"(strict) {s}" for s in strict]))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_nextafter_refuses_half_precision(dtype):
    # computing in float32 would step one float32 ulp, which rounds back to x1: refuse instead
    x = tl.asarray([1.0, 2.0], dtype=dtype)
    with pytest.raises(TypeError, match=f"nextafter.*{dtype}"):
        tl.nextafter(x, x)


# ---------------------------------------------------------------- reshape copy=, varargs methods
def test_reshape_copy_keyword():
    a = np.arange(12.0).reshape(3, 4)
    t = tl.asarray(a)
    view = tl.reshape(t, (4, 3), copy=False)
    view[0, 0] = -1.0  # shares memory
    assert _np(t)[0, 0] == -1.0
    copied = tl.reshape(t, (2, 6), copy=True)
    copied[0, 0] = 7.0  # a copy even where a view was possible
    assert _np(t)[0, 0] == -1.0
    np.testing.assert_array_equal(_np(copied)[0, 1:], _np(t).reshape(2, 6)[0, 1:])
    # a transposed tensor cannot be flattened without a copy
    with pytest.raises(ValueError, match=r"reshape\(\): argument 'copy' is False"):
        tl.reshape(t.mT, (12,), copy=False)
    np.testing.assert_array_equal(_np(tl.reshape(t.mT, (12,))), _np(t).T.reshape(12))
    np.testing.assert_array_equal(_np(tl.reshape(t.mT, (12,), copy=True)), _np(t).T.reshape(12))
    with pytest.raises(TypeError, match="'copy'"):
        tl.reshape(t, (12,), copy="yes")


@pytest.mark.parametrize("method,args,want", [
    ("reshape", (2, 6), (2, 6)), ("reshape", ((6, 2),), (6, 2)), ("reshape", (12,), (12,)),
    ("reshape", (-1, 3), (4, 3)), ("view", (4, 3), (4, 3)), ("permute", (1, 0), (4, 3)),
    ("expand", (2, 3, 4), (2, 3, 4)),
])
def test_size_methods_take_separate_ints(method, args, want):
    t = tl.asarray(np.arange(12.0).reshape(3, 4))
    assert getattr(t, method)(*args).shape == want


def test_size_methods_by_keyword_and_bad_sizes():
    t = tl.asarray(np.arange(6))
    assert t.reshape(shape=(3, 2)).shape == (3, 2)
    assert t.reshape(3, 2, copy=True).shape == (3, 2)
    with pytest.raises(TypeError, match=r"reshape\(\): argument 'shape'"):
        t.reshape(2, "3")
    with pytest.raises(TypeError):
        t.reshape()
    with pytest.raises(ValueError, match="reshape"):
        t.reshape(4, 2)
