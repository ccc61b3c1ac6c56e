"""Every pointwise op declared in ops.yaml against its NumPy ufunc (layouts, broadcasting, special
values), plus out=, in-place, Python operators, weak scalars, alpha= and dtype errors.

The op list is read from ops.yaml, so a new pointwise op is covered as soon as it is declared
(and fails loudly here until it has a NumPy oracle in ORACLES or a same-named NumPy ufunc).
Kernel compiles dominate the runtime: the generic sweep uses float32, float64, int32 and bool
(complex64 for a few ops), every other test reuses those dtypes where it can.
"""
from __future__ import annotations

import math
import operator
import os

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tensorlib as tl
from tensorlib.dispatch.namespace import ops as _internal
from tensorlib.dispatch.schema import parse_schema
from helpers import (arrays, as_tensor, assert_close, broadcast_pair, check_op, host, layouts,
                     on_device, to_numpy)

# ---------------------------------------------------------------- the ops, from the YAML

_YAML = os.path.join(os.path.dirname(tl.__file__), "ops.yaml")
with open(_YAML) as _f:
    _ENTRIES = yaml.safe_load(_f)

# ops.yaml `dtypes:` classes -> accepted compute-dtype kinds (written out independently of
# ops/pointwise.py so a change there shows up here).
_CLASSES = {"all": "biufc", "numeric": "iufc", "real": "biuf", "real_numeric": "iuf",
            "integral": "biu", "integer": "iu", "float": "f", "float_complex": "fc"}


class Op:
    def __init__(self, entry):
        schema = parse_schema(entry["func"])
        self.name = schema.name
        args = [a for a in schema.arguments if not a.is_out]
        self.tensor_args = [a.name for a in args if a.type.base == "Tensor"]
        self.nargs = len(self.tensor_args)
        self.kinds = _CLASSES[entry.get("dtypes", "all")]
        self.int_to_float = entry.get("promote") == "int_to_float"
        self.output = entry.get("output", "same")
        self.bool_args = list(entry.get("bool_args", ()))
        variants = entry.get("variants", "function, method")
        if isinstance(variants, str):
            variants = variants.split(",")
        self.variants = {v.strip() for v in variants} - {""}
        self.aliases = list(entry.get("aliases", ()))
        self.operators = list(entry.get("operators", ()))
        self.fn = (getattr(tl, self.name) if "function" in self.variants
                   # an internal op (no variants): the internal op namespace's function
                   else getattr(_internal, self.name) if not self.variants else None)

    def __repr__(self):
        return self.name

    def call(self, *args, **kw):
        if self.fn is not None:
            return self.fn(*args, **kw)
        return getattr(args[0], self.name)(*args[1:], **kw)

    def promoted(self, dtypes):
        """(compute dtype, output dtype, supported) for tensor inputs of these dtype names."""
        strong = [tl.dtypes.to_dtype(d) for a, d in zip(self.tensor_args, dtypes)
                  if a not in self.bool_args]
        common = tl.result_type(*strong) if len(strong) > 1 else strong[0]
        if self.int_to_float and common.kind in "biu":
            common = tl.float32
        if self.output == "bool":
            out = tl.bool
        elif self.output == "real":
            out = tl.dtypes.real_for(common)
        else:
            out = common
        return common, out, common.kind in self.kinds


OPS = [Op(e) for e in _ENTRIES if "pointwise" in e]
OPS_BY_NAME = {op.name: op for op in OPS}
assert len(OPS) > 50, "ops.yaml parse found too few pointwise ops"


# ---------------------------------------------------------------- NumPy oracles

def _f64(fn):
    """An oracle evaluated in float64 and rounded to the input dtype (NumPy lacks the op)."""
    def run(*xs):
        with np.errstate(all="ignore"):
            return fn(*[x.astype(np.float64) for x in xs]).astype(xs[0].dtype)
    return run


def _reciprocal(x):
    if x.dtype.kind in "iu":  # C integer 1/x; NumPy's x == 0 is undefined, ours gives 0
        ones = (x == 1) | (x == -1) if x.dtype.kind == "i" else x == 1
        return np.where(ones, x, 0).astype(x.dtype)
    return np.reciprocal(x)


ORACLES = {
    "real": np.real,
    "imag": np.imag,
    "divide": np.true_divide,
    "pow": np.power,
    "abs": np.absolute,
    "reciprocal": _reciprocal,
    "where": lambda c, x, y: np.where(c, x, y),
    "clip_bounds": lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi),
    "bitwise_invert": np.invert,
    "bitwise_left_shift": np.left_shift,
    "bitwise_right_shift": np.right_shift,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "atan2": np.arctan2,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "rsqrt": lambda x: np.reciprocal(np.sqrt(x)),
    "sigmoid": _f64(lambda x: 1.0 / (1.0 + np.exp(-x))),
    "erf": _f64(np.vectorize(math.erf, otypes=[np.float64])),
    "round": np.rint,
}


def oracle(op: Op):
    fn = ORACLES.get(op.name)
    if fn is None:
        for n in [op.name] + op.aliases:
            fn = getattr(np, n, None)
            if isinstance(fn, np.ufunc):
                break
        else:
            pytest.fail(f"no NumPy oracle for pointwise op {op.name!r}: add one to ORACLES")
    return fn


def numpy_result(op: Op, arrays_, compute, out):
    """The oracle on the inputs converted to the compute dtype, converted to the output dtype."""
    fn = oracle(op)
    cast = [a.astype(bool) if name in op.bool_args else a.astype(compute.np_dtype)
            for name, a in zip(op.tensor_args, arrays_)]
    with np.errstate(all="ignore"):
        r = np.asarray(fn(*cast))
        if op.name == "floor_divide" and compute.kind == "f":
            # an inf / nan operand: the Array API's floor(a / b) (issue 17), not NumPy's
            a, b = cast
            r = np.where(np.isfinite(a) & np.isfinite(b), r, np.floor(a / b))
        return r.astype(out.np_dtype)


# ---------------------------------------------------------------- strategies

def broadcast_n(dtypes, elements):
    """Arrays (one per dtype) whose shapes broadcast together, each in a random layout."""
    if len(dtypes) == 1:
        return st.tuples(arrays(dtypes[0], max_dims=3, elements=elements[0]))
    if len(dtypes) == 2:
        return broadcast_pair(dtypes[0], dtypes[1], elements1=elements[0],
                              elements2=elements[1])
    return hnp.mutually_broadcastable_shapes(num_shapes=len(dtypes), max_dims=3,
                                             max_side=4).flatmap(
        lambda s: st.tuples(*[layouts(hnp.arrays(np.dtype(d), shp, elements=e))
                              for d, shp, e in zip(dtypes, s.input_shapes, elements)]))


_FLOATS = st.floats(-50, 50, width=32)
_SMALL_INTS = st.integers(-50, 50)


def elements_for(op: Op, dtype: str):
    """Value strategies per tensor argument: full range where NumPy and we define every
    value (integer wrap-around), narrowed where results would only test libm noise."""
    strategies = _elements(op, dtype)
    return [None if a in op.bool_args else e for a, e in zip(op.tensor_args, strategies)]


def _elements(op, dtype):
    n = op.nargs
    kind = np.dtype(dtype).kind
    if kind == "b":
        return [None] * n
    if kind == "f" or kind == "c":
        if op.name == "pow":
            return [st.floats(0, 10, width=32), st.floats(-4, 4, width=32)]
        return [_FLOATS] * n
    if op.name == "pow":
        return [st.integers(-10, 10), st.integers(0, 40)]
    if op.name in ("bitwise_left_shift", "bitwise_right_shift"):
        return [None, st.integers(-2, 40)]
    if op.int_to_float:
        return [_SMALL_INTS] * n
    return [None] * n  # full range: wrap-around must match NumPy


# ---------------------------------------------------------------- the generic sweep

GENERIC_DTYPES = ["float32", "float64", "int32", "bool"]
COMPLEX_OPS = {"add", "multiply", "divide", "abs", "sign", "exp", "sqrt", "equal", "isnan"}

# Integer/bool inputs of int_to_float ops all take the same load-and-convert path: values are
# compared on these few; the rest check the promoted dtype on empty tensors (no compile).
INT_TO_FLOAT_VALUES = {"divide", "reciprocal", "exp", "sqrt", "log", "sin", "atan2", "hypot",
                       "sigmoid", "erf"}
BOOL_TO_FLOAT_VALUES = {"divide", "exp"}
CASES = [(op, d) for op in OPS for d in GENERIC_DTYPES]
CASES += [(op, "complex64") for op in OPS if op.name in COMPLEX_OPS]


def _values_checked(op, dtype):
    if not op.int_to_float or np.dtype(dtype).kind not in "biu":
        return True
    return op.name in (BOOL_TO_FLOAT_VALUES if dtype == "bool" else INT_TO_FLOAT_VALUES)


def _arg_dtypes(op, dtype):
    return ["bool" if a in op.bool_args else dtype for a in op.tensor_args]


# a third of the profile's examples per (op, dtype): there are a few hundred of these
@pytest.mark.parametrize("op,dtype", CASES, ids=[f"{o.name}-{d}" for o, d in CASES])
@settings(max_examples=max(8, settings.default.max_examples // 3))
@given(data=st.data())
def test_op_matches_numpy(op, dtype, data):
    dtypes = _arg_dtypes(op, dtype)
    compute, out, ok = op.promoted(dtypes)
    args = data.draw(broadcast_n(dtypes, elements_for(op, dtype)))
    if not ok:
        with pytest.raises(TypeError, match=rf"{op.name}.*{compute.name}"):
            op.call(*[as_tensor(a) for a in args])
        return
    if not _values_checked(op, dtype):
        empties = [tl.empty(0, dtype=a.dtype.name) for a in args]
        assert op.call(*empties).dtype is out
        return
    check_op(op.call, lambda *xs: numpy_result(op, xs, compute, out), *args,
             expected_dtype=out.name)


@pytest.mark.parametrize("op", [o for o in OPS if "inplace" in o.variants], ids=repr)
def test_inplace_variant_matches_functional(op):
    dtype = "float64" if "f" in op.kinds else "int32"
    rng = np.random.default_rng(0)
    xs = [(rng.random((3, 4)) * 4 + 0.5).astype(dtype) for _ in range(op.nargs)]
    expected = to_numpy(op.call(*[tl.asarray(x) for x in xs]))
    t = tl.asarray(xs[0], copy=True)
    res = getattr(t, op.name + "_")(*[tl.asarray(x) for x in xs[1:]])
    assert res is t
    assert_close(to_numpy(t), expected, dtype)


@pytest.mark.parametrize("op", OPS, ids=repr)
def test_variants_and_aliases_are_bound(op):
    if "function" in op.variants:
        for alias in op.aliases:
            assert getattr(tl, alias) is op.fn, alias
    if "method" in op.variants:
        assert getattr(tl.Tensor, op.name) is not None
        for alias in op.aliases:
            assert getattr(tl.Tensor, alias) is getattr(tl.Tensor, op.name), alias
    for dunder in op.operators:
        assert dunder in tl.Tensor.__dict__, dunder


# ---------------------------------------------------------------- special values

SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 2.0, 3.0,
            1e-30, -1e30, 1e-40, 100.0]
# ops whose +-0 result sign NumPy leaves to the loop implementation
_ZERO_SIGN_FREE = {"maximum", "minimum"}
FLOAT_OPS = [o for o in OPS if "f" in o.kinds and o.nargs <= 2]  # (grids of one or two)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", FLOAT_OPS, ids=repr)
def test_special_values(op, dtype):
    v = np.array(SPECIALS, dtype)
    args = [v] if op.nargs == 1 else list(np.meshgrid(v, v, indexing="ij"))
    compute, out, _ = op.promoted([dtype] * op.nargs)
    got = to_numpy(op.call(*[tl.asarray(a) for a in args]))
    want = numpy_result(op, args, compute, out)
    assert_close(got, want, out.name)
    if out.kind == "f" and op.name not in _ZERO_SIGN_FREE:
        zero = want == 0
        np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]),
                                      err_msg=f"{op.name}: sign of zero results")


INT_EDGE = {
    "int8": [-128, -127, -7, -2, -1, 0, 1, 2, 3, 7, 126, 127],
    "int64": [-(2 ** 63), -(2 ** 63) + 1, -7, -2, -1, 0, 1, 2, 7, 2 ** 63 - 1],
    "uint8": [0, 1, 2, 3, 7, 128, 254, 255],
}
_INT_EDGE_CASES = [(n, "int8") for n in ["add", "subtract", "multiply", "floor_divide",
                                         "remainder", "negative", "abs", "square", "sign"]]
_INT_EDGE_CASES += [(n, "uint8") for n in ["add", "subtract", "multiply", "floor_divide",
                                          "remainder", "negative"]]
_INT_EDGE_CASES += [(n, "int64") for n in ["floor_divide", "remainder", "abs"]]


@pytest.mark.parametrize("name,dtype", _INT_EDGE_CASES)
def test_integer_edges_wrap_like_numpy(name, dtype):
    """Overflow wraps, x // 0 == x % 0 == 0, INT_MIN // -1 wraps, floor/remainder signs."""
    op = OPS_BY_NAME[name]
    v = np.array(INT_EDGE[dtype], dtype)
    args = [v] if op.nargs == 1 else list(np.meshgrid(v, v, indexing="ij"))
    compute, out, ok = op.promoted([dtype] * op.nargs)
    if not ok:  # e.g. negative of uint8 is fine, nothing here should be refused
        pytest.fail(f"{name} refused {dtype}")
    got = to_numpy(op.call(*[tl.asarray(a) for a in args]))
    np.testing.assert_array_equal(got, numpy_result(op, args, compute, out))


def test_floor_divide_and_remainder_signs():
    a = tl.asarray(np.array([7, -7, 7, -7, 0, 6, -6], np.int32))
    b = tl.asarray(np.array([2, 2, -2, -2, 3, -3, 3], np.int32))
    assert tl.floor_divide(a, b).tolist() == [3, -4, -4, 3, 0, -2, -2]
    assert tl.remainder(a, b).tolist() == [1, 1, -1, -1, 0, 0, 0]
    assert (a // b).tolist() == [3, -4, -4, 3, 0, -2, -2]
    assert (a % b).tolist() == [1, 1, -1, -1, 0, 0, 0]
    fa = tl.asarray([7.5, -7.5, 7.5, -7.5, 0.0, -0.0])
    fb = tl.asarray([2.0, 2.0, -2.0, -2.0, -3.0, 3.0])
    assert tl.floor_divide(fa, fb).tolist() == [3.0, -4.0, -4.0, 3.0, -0.0, -0.0]
    assert tl.remainder(fa, fb).tolist() == [1.5, 0.5, -0.5, -1.5, -0.0, 0.0]
    r = to_numpy(tl.remainder(fa, fb))
    assert list(np.signbit(r[4:])) == [True, False]


def test_integer_division_by_zero_gives_zero():
    a = tl.asarray(np.array([5, -5, 0, 127, -128], np.int8))
    z = tl.zeros(5, dtype=tl.int8)
    assert tl.floor_divide(a, z).tolist() == [0] * 5
    assert tl.remainder(a, z).tolist() == [0] * 5
    # true division of ints computes in float32: +-inf and nan
    r = to_numpy(tl.divide(a, z))
    assert r.dtype == np.float32
    np.testing.assert_array_equal(r, np.array([np.inf, -np.inf, np.nan, np.inf, -np.inf],
                                              np.float32))


def test_integer_pow_negative_exponent_follows_pytorch():
    base = tl.asarray(np.array([2, 1, -1, -1, 0, 3], np.int64))
    exp = tl.asarray(np.array([-1, -5, -2, -3, 2, 0], np.int64))
    assert tl.pow(base, exp).tolist() == [0, 1, 1, -1, 0, 1]


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_shift_counts_out_of_range(dtype):
    a = np.array([-128, -1, 1, 64, 127] if dtype == "int8" else [0, 1, 128, 255, 7], dtype)
    c = np.array([-1, 0, 1, 7, 8, 9, 100] if dtype == "int8" else [0, 1, 7, 8, 9, 100, 255],
                 dtype)
    A, C = np.meshgrid(a, c, indexing="ij")
    for name in ("bitwise_left_shift", "bitwise_right_shift"):
        op = OPS_BY_NAME[name]
        got = to_numpy(op.call(tl.asarray(A), tl.asarray(C)))
        np.testing.assert_array_equal(got, numpy_result(op, [A, C], *op.promoted([dtype] * 2)[:2]))


# ---------------------------------------------------------------- out=

def test_out_right_shape_returns_out():
    a = tl.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    out = tl.empty((2, 3))
    r = tl.add(a, a, out=out)
    assert r is out
    assert out.tolist() == [[0, 2, 4], [6, 8, 10]]


def test_out_noncontiguous_and_safe_upcast():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    base = tl.zeros((3, 2), dtype=tl.float64)
    out = base.T  # transposed view, float64 for a float32 result: same kind, allowed
    tl.multiply(tl.asarray(a), 2.0, out=out)
    np.testing.assert_array_equal(to_numpy(base), (a * 2).T)
    # an int32 result into a float32 out is a same-kind-or-safer cast too
    o = tl.empty(3)
    tl.add(tl.asarray(np.array([1, 2, 3], np.int32)), 1, out=o)
    assert o.tolist() == [2.0, 3.0, 4.0]


def test_out_wrong_shape_is_value_error():
    a = tl.asarray([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="add"):
        tl.add(a, a, out=tl.empty(2))
    with pytest.raises(ValueError):  # no resizing or broadcasting of out
        tl.add(a, a, out=tl.empty((2, 3)))
    with pytest.raises(ValueError):
        tl.exp(a, out=tl.empty(()))


def test_out_unsafe_dtype_is_type_error():
    a = tl.asarray([1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="int32"):
        tl.add(a, a, out=tl.empty(3, dtype=tl.int32))
    with pytest.raises(TypeError):
        tl.sqrt(tl.asarray([1, 4]), out=tl.empty(2, dtype=tl.int64))
    with pytest.raises(TypeError, match="out"):
        tl.add(a, a, out=np.empty(3, np.float32))


def test_out_with_internal_overlap_is_refused():
    a = tl.asarray([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError):
        tl.add(a, a, out=tl.zeros(1).expand((3,)))


@pytest.mark.parametrize("shift", [1, -1])
def test_out_partially_overlapping_an_input(shift):
    """out = buf[1:], input = buf[:-1] (and the reverse): the answer of the out-of-place op."""
    raw = np.arange(10, dtype=np.float64)
    buf = tl.asarray(raw, copy=True)
    src, dst = (buf[:-1], buf[1:]) if shift == 1 else (buf[1:], buf[:-1])
    expected = (raw[:-1] if shift == 1 else raw[1:]) * 2 + 1
    tl.add(src, tl.add(src, 1.0), out=dst)
    got = to_numpy(buf)
    np.testing.assert_array_equal(got[1:] if shift == 1 else got[:-1], expected)


def test_inplace_with_overlapping_other():
    a = tl.arange(6, dtype=tl.float64)
    a[1:] += a[:-1]  # NumPy semantics: as if the right side were read first
    n = np.arange(6.0)
    n[1:] += n[:-1]
    assert a.tolist() == n.tolist()


def test_out_overlapping_reversed_input():
    raw = np.arange(8, dtype=np.float64)
    buf = tl.asarray(raw, copy=True)
    tl.negative(buf[::-1], out=buf)  # full extent, different order: partial overlap
    np.testing.assert_array_equal(to_numpy(buf), -raw[::-1])


def test_out_exactly_aliasing_input():
    buf = tl.asarray([1.0, 2.0, 3.0], copy=True)
    tl.multiply(buf, buf, out=buf)
    assert buf.tolist() == [1.0, 4.0, 9.0]


# ---------------------------------------------------------------- in-place

def test_inplace_alias_methods_exist():
    missing = [f"{a}_" for op in OPS if "inplace" in op.variants for a in op.aliases
               if not hasattr(tl.Tensor, f"{a}_")]
    assert not missing, f"in-place alias methods missing: {missing}"


def test_inplace_method_and_operator_keep_identity():
    a = tl.asarray(np.arange(6, dtype=np.float32).reshape(2, 3), copy=True)
    b = tl.asarray(np.array([1.0, 2.0, 3.0], np.float32))
    ident = id(a)
    assert a.add_(b) is a
    a += b
    assert id(a) == ident
    a *= 2
    a -= 1.0
    a /= 2
    np.testing.assert_allclose(to_numpy(a), ((np.arange(6).reshape(2, 3) + 2 * np.array(
        [1, 2, 3])) * 2 - 1) / 2)


def test_inplace_writes_through_a_view():
    base = tl.zeros((3, 4))
    col = base[:, 1]
    col += 5.0
    col.multiply_(2)
    assert base[:, 1].tolist() == [10.0] * 3
    assert base[:, 0].tolist() == [0.0] * 3


def test_inplace_promotion_error():
    t = tl.asarray([1, 2, 3])
    with pytest.raises(TypeError):
        t += 1.5
    with pytest.raises(TypeError):
        t.add_(tl.asarray([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError):
        t /= 2  # true division gives float32
    assert t.tolist() == [1, 2, 3]
    i8 = tl.asarray(np.array([1, 2], np.int8))
    with pytest.raises(OverflowError):
        i8 += 1000
    f = tl.asarray([1.0, 2.0])
    f += tl.asarray([1, 2])  # int into float: fine
    assert f.tolist() == [2.0, 4.0]


def test_inplace_broadcast_to_larger_shape_is_value_error():
    a = tl.zeros(3)
    with pytest.raises(ValueError):
        a += tl.ones((2, 3))
    with pytest.raises(ValueError):
        a.multiply_(tl.ones((2, 3)))
    m = tl.zeros((2, 3))
    m += tl.asarray([1.0, 2.0, 3.0])  # the other way round broadcasts fine
    assert m.tolist() == [[1.0, 2.0, 3.0]] * 2


def test_inplace_on_expanded_tensor_is_refused():
    e = tl.zeros(1).expand((3,))
    with pytest.raises(RuntimeError):
        e.add_(1.0)


# ---------------------------------------------------------------- Python operators

_BINARY_DUNDERS = {
    "__add__": operator.add, "__sub__": operator.sub, "__mul__": operator.mul,
    "__truediv__": operator.truediv, "__floordiv__": operator.floordiv,
    "__mod__": operator.mod, "__pow__": operator.pow, "__and__": operator.and_,
    "__or__": operator.or_, "__xor__": operator.xor, "__lshift__": operator.lshift,
    "__rshift__": operator.rshift, "__eq__": operator.eq, "__ne__": operator.ne,
    "__lt__": operator.lt, "__le__": operator.le, "__gt__": operator.gt, "__ge__": operator.ge,
}
_UNARY_DUNDERS = {"__neg__": operator.neg, "__pos__": operator.pos, "__abs__": operator.abs,
                  "__invert__": operator.invert}
_DUNDER_OPS = [(d, op) for op in OPS for d in op.operators]


# the scalar-operand kernels are separate compiles: a few are enough
_SCALAR_DUNDERS = {"__add__", "__sub__", "__truediv__", "__floordiv__", "__pow__", "__lt__",
                   "__eq__", "__and__", "__lshift__"}


def want_dtype(op, dt):
    return op.promoted([dt, dt])[1]


def _operand_dtype(op):
    return "int32" if "f" not in op.kinds else "float32"


@pytest.mark.parametrize("dunder,op", [(d, o) for d, o in _DUNDER_OPS
                                       if d in _BINARY_DUNDERS or d in _UNARY_DUNDERS],
                         ids=lambda x: x if isinstance(x, str) else x.name)
def test_forward_operators(dunder, op):
    dt = _operand_dtype(op)
    x = np.array([[3, 5, 6], [1, 2, 7]], dt)
    y = np.array([1, 2, 3], dt)
    if dunder in _UNARY_DUNDERS:
        got = _UNARY_DUNDERS[dunder](tl.asarray(x))
        want = op.call(tl.asarray(x))
    else:
        f = _BINARY_DUNDERS[dunder]
        got = f(tl.asarray(x), tl.asarray(y))
        want = op.call(tl.asarray(x), tl.asarray(y))
        if dunder in _SCALAR_DUNDERS:  # and with a Python scalar on the right
            got_s = f(tl.asarray(x), 2)
            want_s = numpy_result(op, [x, np.array(2, dt)], *op.promoted([dt, dt])[:2])
            assert got_s.dtype == want_dtype(op, dt)
            np.testing.assert_allclose(to_numpy(got_s), want_s, rtol=1e-6)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(to_numpy(got), to_numpy(want))


_REFLECTED = {"__radd__": operator.add, "__rsub__": operator.sub, "__rmul__": operator.mul,
              "__rtruediv__": operator.truediv, "__rfloordiv__": operator.floordiv,
              "__rmod__": operator.mod, "__rpow__": operator.pow, "__rand__": operator.and_,
              "__ror__": operator.or_, "__rxor__": operator.xor,
              "__rlshift__": operator.lshift, "__rrshift__": operator.rshift}


@pytest.mark.parametrize("dunder,op", [(d, o) for d, o in _DUNDER_OPS if d in _REFLECTED],
                         ids=lambda x: x if isinstance(x, str) else x.name)
def test_reflected_operators(dunder, op):
    dt = _operand_dtype(op)
    x = np.array([1, 2, 3], dt)
    got = _REFLECTED[dunder](2, tl.asarray(x))  # Python calls x.__rop__(2)
    want_np = numpy_result(op, [np.array(2, dt), x], *op.promoted([dt, dt])[:2])
    np.testing.assert_allclose(to_numpy(got), want_np, rtol=1e-6)
    assert got.dtype.name == dt or op.int_to_float


def test_scalar_first_function_call():
    t = tl.asarray([1.0, 2.0, 4.0])
    assert (2 - t).tolist() == [1.0, 0.0, -2.0]
    assert (1 / t).tolist() == [1.0, 0.5, 0.25]
    assert tl.subtract(2, t).tolist() == [1.0, 0.0, -2.0]


def test_comparison_operators_with_scalars_both_sides():
    t = tl.asarray([1.0, 2.0, 3.0])
    assert (t < 2).tolist() == [True, False, False]
    assert (2 < t).tolist() == [False, False, True]   # -> t.__gt__(2)
    assert (2 >= t).tolist() == [True, True, False]
    assert (t == 2).tolist() == [False, True, False]
    assert (2 == t).tolist() == [False, True, False]
    assert (t != t).tolist() == [False] * 3
    assert (t < 2).dtype == tl.bool


def test_numpy_array_on_the_left_defers_to_tensor():
    # Tensor.__array_ufunc__ (issue 17) computes ndarray + tensor with tensorlib's add: a
    # tensor, not NumPy looping over the tensor as objects
    t = tl.asarray([1.0, 2.0])
    r = np.array([1.0, 2.0]) + t
    assert type(r) is tl.Tensor and r.tolist() == [2.0, 4.0] and r.dtype == tl.float64


# ---------------------------------------------------------------- weak Python scalars

_WEAK = [
    ("int8", 1, "int8"), ("uint8", 3, "uint8"), ("int16", True, "int16"),
    ("int8", 1.5, "float32"), ("int64", 2.0, "float32"), ("float32", 2.0, "float32"),
    ("float16", 2, "float16"), ("bfloat16", 2.5, "bfloat16"), ("float64", 1, "float64"),
    ("float32", 1j, "complex64"), ("float64", 1j, "complex128"), ("int32", 1j, "complex64"),
    ("bool", 1, "int64"), ("bool", True, "bool"), ("bool", 1.0, "float32"),
]


@pytest.mark.parametrize("dtype,scalar,expected", _WEAK)
def test_weak_scalar_result_dtype(dtype, scalar, expected):
    t = tl.empty(0, dtype=dtype)  # empty: the dtype logic without a kernel compile each
    assert tl.multiply(t, scalar).dtype.name == expected
    assert tl.add(t, scalar).dtype.name == expected
    assert tl.result_type(t, scalar).name == expected


@pytest.mark.parametrize("dtype,scalar,expected", [w for w in _WEAK if w[0] in
                                                   ("int8", "float32", "bool")])
def test_weak_scalar_values(dtype, scalar, expected):
    t = tl.asarray(np.array([1, 0, 1]).astype(dtype))
    r = tl.multiply(t, scalar)
    assert r.dtype.name == expected
    np.testing.assert_allclose(to_numpy(r).astype(np.complex128),
                               np.array([1, 0, 1]).astype(np.complex128) * scalar)


@pytest.mark.parametrize("scalar", [np.float64(2.0), np.float32(2.0), np.int64(2), np.int8(2),
                                    np.uint8(2), np.bool_(True), np.complex128(1j)], ids=repr)
@pytest.mark.parametrize("dtype", ["float32", "int8", "bool"])
def test_numpy_scalars_promote_like_python_scalars(dtype, scalar):
    # np.float64 subclasses float: it must not sneak through as a strong float64
    t = tl.empty(0, dtype=dtype)
    assert tl.add(t, scalar).dtype is tl.add(t, scalar.item()).dtype


def test_numpy_scalar_operand_values():
    t = tl.asarray(np.array([1.0, 2.0], np.float32))
    r = t * np.float64(0.5)
    assert r.dtype is tl.float32 and r.tolist() == [0.5, 1.0]
    assert tl.add(t, t, alpha=np.int64(2)).tolist() == [3.0, 6.0]


def test_weak_scalar_values_wrap_in_tensor_dtype():
    u = tl.asarray(np.array([200, 10], np.uint8))
    r = u + 100
    assert r.dtype == tl.uint8 and r.tolist() == [44, 110]
    i = tl.asarray(np.array([100, -100], np.int8))
    assert (i * 2).tolist() == [-56, 56]


@pytest.mark.parametrize("dtype,value", [("int8", 128), ("int8", -129), ("uint8", -1),
                                         ("uint8", 256), ("int64", 2 ** 63),
                                         ("uint64", 2 ** 64)])
def test_out_of_range_python_int_is_overflow_error(dtype, value):
    t = tl.asarray(np.array([1, 2]).astype(dtype))
    with pytest.raises(OverflowError, match=str(value)):
        tl.add(t, value)


def test_in_range_extreme_python_ints_are_fine():
    t = tl.asarray(np.array([0, 1], np.int8))
    assert (t + 127).tolist() == [127, -128]
    assert (t + -128).tolist() == [-128, -127]


# ---------------------------------------------------------------- alpha=

def test_scalars_alpha_inplace_and_out(device):
    # one body on every device (the CUDA kernels: kernels/cuda/pointwise.py)
    a = on_device(np.array([1.0, 2.0, 3.0], np.float32), device)
    b = on_device(np.array([10.0, 20.0, 30.0], np.float32), device)
    assert host(tl.add(a, b, alpha=2), device).tolist() == [21.0, 42.0, 63.0]
    assert host(tl.subtract(a, b, alpha=0.5), device).tolist() == [-4.0, -8.0, -12.0]
    assert host(a.add(b, alpha=-1), device).tolist() == [-9.0, -18.0, -27.0]
    ia = on_device(np.array([1, 2], np.int32), device)
    assert host(tl.add(ia, ia, alpha=3), device).tolist() == [4, 8]
    assert tl.sub(ia, ia, alpha=2).dtype == tl.int32
    with pytest.raises(TypeError, match="alpha"):
        tl.add(ia, ia, alpha=1.5)  # a fractional alpha can't scale an integer op
    with pytest.raises(TypeError, match="alpha"):
        tl.add(a, b, alpha="2")
    c = tl.zeros(3, device=device)
    a.add_(b, alpha=2)
    assert host(a, device).tolist() == [21.0, 42.0, 63.0]
    tl.add(a, b, alpha=0, out=c)
    assert host(c, device).tolist() == [21.0, 42.0, 63.0]
    # Python scalars on either side, where, weak scalars keep the tensor's dtype
    x = np.array([[1.5, -2.0, 3.25], [0.0, 7.0, -1.0]], np.float32)
    g = on_device(x, device)
    assert_close(host(g + 2, device), x + np.float32(2), "float32")
    assert_close(host(2.5 - g, device), np.float32(2.5) - x, "float32")
    assert_close(host(tl.add(g, g, alpha=3), device), x + 3 * x, "float32")
    assert_close(host(tl.where(g > 0, g, -1.0), device), np.where(x > 0, x, np.float32(-1)),
                 "float32")
    i = on_device(np.array([5, -7, 2**31 - 1], np.int32), device)
    assert_close(host(i * 3, device), np.array([5, -7, 2**31 - 1], np.int32) * np.int32(3),
                 "int32")
    with pytest.raises(OverflowError, match="out of bounds"):
        i + 2**40
    f64 = on_device(np.array([1.0, 2.0]), device)
    assert_close(host(f64 + 0.1, device), np.array([1.0, 2.0]) + 0.1, "float64")  # in float64
    bb = on_device(np.array([True, False, True]), device)
    assert_close(host(bb + bb, device), np.array([True, False, True]), "bool")  # logical or
    t = on_device(x, device)
    res = t.add_(g, alpha=2)
    assert res is t
    assert_close(host(t, device), x + 2 * x, "float32")
    out = tl.empty((2, 3), dtype=tl.float64, device=device)
    tl.multiply(g, g, out=out)
    assert_close(host(out, device), (x * x).astype(np.float64), "float64")
    h = on_device(x.astype(np.float16), device)
    assert_close(host(h * h, device), x.astype(np.float16) * x.astype(np.float16), "float16")


# ---------------------------------------------------------------- unsupported dtypes

@pytest.mark.parametrize("fn,dtype", [
    (tl.bitwise_and, "float32"), (tl.bitwise_or, "float64"), (tl.bitwise_invert, "float32"),
    (tl.bitwise_left_shift, "bool"), (tl.less, "complex64"), (tl.maximum, "complex64"),
    (tl.floor_divide, "complex64"), (tl.subtract, "bool"), (tl.negative, "bool"),
    (tl.sigmoid, "complex64"),
    (tl.floor, "complex64"), (tl.atan2, "complex64"),
])
def test_unsupported_dtype_names_op_and_dtype(fn, dtype):
    t = tl.asarray(np.ones(2, dtype))
    args = (t,) if fn in (tl.bitwise_invert, tl.negative, tl.sigmoid, tl.floor) else (t, t)
    with pytest.raises(TypeError) as e:
        fn(*args)
    assert fn.__name__ in str(e.value) and dtype in str(e.value)


def test_wrong_argument_types_name_the_argument():
    t = tl.asarray([1.0])
    with pytest.raises(TypeError, match="'other'"):
        tl.add(t, "x")
    with pytest.raises(TypeError, match="'self'"):
        tl.exp([1.0])
    with pytest.raises(TypeError):
        tl.add(t, t, bogus=1)


# ---------------------------------------------------------------- big and tiled loops

def test_parallel_path_with_broadcast_and_transposed_layout(monkeypatch):
    from tensorlib.kernels.cpu import pointwise
    monkeypatch.setattr(pointwise, "GRAIN", 1 << 15)  # 60000 elements: the threaded variant
    rng = np.random.default_rng(1)
    a = rng.random((300, 200), np.float32).T
    b = rng.random(300, np.float32)[::-1]
    check_op(tl.add, np.add, a, b)


def test_serial_path_spanning_several_tiles():
    a = np.arange(40000, dtype=np.float64)[::2]  # 20000 > one tile, strided
    check_op(tl.multiply, np.multiply, a, a)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "uint8", "float16", "bool",
                                   "complex64"])
def test_inner_broadcast_operands_match_numpy(dtype):
    """Inputs broadcast along the inner dim (stride 0 there: x - x.mean(1, keepdims=True), an
    outer product a[:, None] * b, where with a column condition) join the contiguous tile loop
    through a scratch tile of their value: every mix of column, row and full operands, in
    place and into out=, rows of several tiles, against NumPy."""
    rng = np.random.default_rng(11)

    def make(shape):
        x = rng.standard_normal(shape) * 20
        return x > 0 if dtype == "bool" else x.astype(dtype)

    binary = (tl.not_equal, np.not_equal) if dtype == "bool" else (tl.add, np.add)
    for rows, cols in ((37, 130), (3, 40000)):  # (40000: a row is three tiles)
        full, col, row = make((rows, cols)), make((rows, 1)), make((1, cols))
        for a, b in ((full, col), (col, full), (col, row), (row, col), (col, col[:1]),
                     (full[::-1], col), (col, full[:, ::-2])):
            check_op(binary[0], binary[1], a, b)
            cond = col > col.mean() if dtype != "bool" else col
            check_op(tl.where, np.where, cond, a, b)
        if dtype != "bool":
            t = tl.asarray(full.copy())
            t += tl.asarray(col)  # read through the output, the column from its scratch
            want = full.copy()
            want += col
            np.testing.assert_array_equal(host(t), want)
            out = tl.empty((rows, cols), dtype=getattr(tl, dtype))
            tl.add(tl.asarray(col), tl.asarray(row), out=out)
            np.testing.assert_array_equal(host(out), col + row)


@pytest.mark.parametrize("variant", ["serial", "parallel"])
def test_broadcast_tiles_in_both_loop_variants(variant):
    """The generated loop nest called directly on a column-broadcast layout (both twins: the
    serial one fills a scratch made once, the threaded one a scratch per tile): NumPy's
    product."""
    from tensorlib.dispatch.registration import POINTWISE
    from tensorlib.iterator import Layout
    from tensorlib.kernels.cpu.pointwise import combination_module, tile_meta
    f32 = tl.float32
    mod = combination_module(POINTWISE["multiply"], "TT", (f32, f32), f32, f32)
    rows, cols = 50, 20000
    x = np.random.default_rng(2).standard_normal((rows, cols)).astype(np.float32)
    c = np.arange(rows, dtype=np.float32) * 3
    out = np.zeros(rows * cols + 7, np.float32)
    lay = Layout((cols, rows), ((1, cols), (1, cols), (0, 1)), (0, 0, 0))  # innermost first
    getattr(mod, variant)(tile_meta(lay), out, x.ravel(), c)
    np.testing.assert_array_equal(out[:rows * cols].reshape(rows, cols), x * c[:, None])
    assert not out[rows * cols:].any()


def test_clip_composite():
    x = np.array([-3.0, 0.5, 4.0, np.nan], np.float32)
    got = tl.clip(tl.asarray(x), tl.asarray(np.float32(0.0)), tl.asarray(np.float32(1.0)))
    assert got.dtype == tl.float32
    np.testing.assert_array_equal(to_numpy(got), np.clip(x, 0, 1))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "float16"])
@pytest.mark.parametrize("bounds", [(-1, 2), (-0.5, 1.5), (None, 1), (-1, None), ("tensors", 0)])
def test_clip_leaves_its_input_alone(dtype, bounds):
    """clip's second step runs in place into the first step's fresh result: the input and the
    bounds are never written, the result is NumPy's (in x's dtype), and with one bound or
    requires_grad the steps stay out of place (gradients still flow)."""
    rng = np.random.default_rng(4)
    x = (rng.standard_normal(3000) * 3).astype(dtype)
    lo, hi = bounds
    if lo == "tensors":
        lo, hi = np.full(3000, -1, dtype), np.full(3000, 2, dtype)
        tlo, thi = tl.asarray(lo), tl.asarray(hi)
    else:
        tlo, thi = lo, hi
    t = tl.asarray(x)
    for _ in range(3):
        got = tl.clip(t, tlo, thi)
        assert got is not t and got.dtype == t.dtype
        np.testing.assert_array_equal(t.numpy(), x)
        with np.errstate(invalid="ignore"):
            want = np.clip(x, lo, hi).astype(dtype)
        np.testing.assert_array_equal(got.numpy(), want)
    if dtype in ("float32", "float64"):
        g = tl.asarray(x).requires_grad_()
        tl.clip(g, -1.0, 2.0).sum().backward()
        np.testing.assert_array_equal(g.grad.numpy(), ((x >= -1) & (x <= 2)).astype(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int16",
                                   "complex64", "bool"])
@pytest.mark.parametrize("n", [4096, 3 * 4096 + 5, 40_000, (1 << 18) + 5])
def test_inplace_over_dense_memory_writes_exactly_its_elements(dtype, n):
    """x op= y where the result is an operand (a dense run at a storage offset, below and above
    the parallel grain): exactly the view's elements change, to the functional result."""
    dt = getattr(tl, dtype)
    rng = np.random.default_rng(n)
    if dtype == "bool":
        host = rng.random(n + 10) < 0.5
    elif dtype.startswith("int"):
        host = rng.integers(-50, 50, n + 10)
    else:
        host = rng.standard_normal(n + 10) * 4
    base = tl.asarray(host).astype(dt)
    before = base.astype(tl.complex128 if dtype == "complex64" else tl.float64).numpy().copy()
    v = base[3:n + 3]
    other = base[7:n + 7].clone()
    ref_self = v.clone()
    if dtype == "bool":
        want = tl.logical_xor(ref_self, other)
        v.logical_xor_(other) if hasattr(v, "logical_xor_") else tl.logical_xor(v, other, out=v)
    else:
        want = tl.add(ref_self, other, alpha=2) if dtype != "complex64" else ref_self + other * 2
        v.add_(other, alpha=2)
    wide = tl.complex128 if dtype == "complex64" else tl.float64
    after = base.astype(wide).numpy()
    np.testing.assert_array_equal(after[:3], before[:3])
    np.testing.assert_array_equal(after[n + 3:], before[n + 3:])
    np.testing.assert_array_equal(v.astype(wide).numpy(), want.astype(wide).numpy())
    # the same op written x = x op y with the result a second name for x
    w = base[3:n + 3]
    tl.multiply(w, w, out=w) if dtype != "bool" else tl.logical_and(w, w, out=w)
    np.testing.assert_array_equal(
        w.astype(wide).numpy(),
        (want * want if dtype != "bool" else want).astype(wide).numpy())


@pytest.mark.parametrize("op", ["sin", "cos", "tan"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "float16"])
def test_block_fast_forms_run_per_block(op, dtype):
    """Ops with an ops.yaml block_fast form (sin / cos / tan: a cheaper form below
    vector_math.TRIG_SHORT_BOUND / TRIG_SHORT_BOUND_F64) run it over the blocks of a dense loop
    whose elements all pass the guard, the plain expression elsewhere, with huge values, inf
    and nan in some blocks, a length that is not a multiple of the block, at a storage offset,
    on the fast path and the out= path. The blocks holding a huge value, inf or nan have the
    bits of the plain expression (each element computed in a block that also holds a huge
    value); the others too for complex64 and float16, else (float32, float64) within 1 ulp
    (float32 tan: 1.1) of a wider result (float32 sin / cos / tan compute in float32 there,
    float64 reduce by Cody-Waite)."""
    from tensorlib.kernels.cpu.pointwise import BLOCK
    rng = np.random.default_rng(4)
    n = 5 * BLOCK + 37
    a = rng.uniform(-100, 100, n + 1)
    a[[BLOCK + 3, 3 * BLOCK]] = [3e7, -2e30]
    a[4 * BLOCK + 1:4 * BLOCK + 3] = [np.inf, np.nan]
    if dtype.startswith("complex"):
        a = a + 1j * rng.uniform(-2, 2, n + 1)
    fn = getattr(tl, op)
    dt = getattr(tl, dtype)
    base = tl.asarray(a).astype(dt)
    dense = base[1:]                                            # at a storage offset
    # the plain expression: every element in a block led by a huge value
    k = BLOCK - 1
    rows = -(-n // k)
    padded = np.concatenate([a[1:], np.zeros(rows * k - n, a.dtype)]).reshape(rows, k)
    lead = np.full((rows, 1), 3e30, a.dtype)
    want = fn(tl.asarray(np.concatenate([lead, padded], axis=1).reshape(-1)).astype(dt))
    want = tl.asarray(to_numpy(want).reshape(rows, BLOCK)[:, 1:].reshape(-1)[:n].copy())
    same_bits = np.ones(n, bool)
    if dtype in ("float32", "float64"):
        from tensorlib.kernels.cpu import vector_math as vm
        bound = vm.TRIG_SHORT_BOUND if dtype == "float32" else vm.TRIG_SHORT_BOUND_F64
        with np.errstate(invalid="ignore"):
            plain = ~(np.abs(a[1:]) < bound)                    # (3e7 is below float64's)
        same_bits = np.isin(np.arange(n) // BLOCK, np.unique(np.nonzero(plain)[0] // BLOCK))
        np_dt, wide = (np.float32, np.float64) if dtype == "float32" else (np.float64, np.longdouble)
        ref = getattr(np, op)(a[1:].astype(np_dt).astype(wide))
        with np.errstate(over="ignore"):
            spacing = np.spacing(np.abs(ref.astype(np_dt))).astype(wide)
    for got in (fn(dense), fn(dense), fn(dense), fn(dense, out=tl.empty_like(dense))):
        assert got.dtype == want.dtype
        g, w = to_numpy(got), to_numpy(want)
        assert np.array_equal(g[same_bits].view(np.uint8), w[same_bits].view(np.uint8))
        if not same_bits.all():
            err = np.abs(g[~same_bits].astype(wide) - ref[~same_bits]) / spacing[~same_bits]
            bound = 1.1 if op == "tan" and dtype == "float32" else 1.0
            assert err.max() <= bound, err.max()
            # the short form ran there: ~1-1.5% of these results differ in the last bit
            u = f"u{g.itemsize}"
            assert (g[~same_bits].view(u) != w[~same_bits].view(u)).any()



@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_parallel_loops_keep_the_serial_blocks(dtype, whole_team):
    """Above the grain the dense loop runs in tiles on the team; each block of BLOCK elements
    must be the serial loop's block (a block's form decides its bits), so a big call gives
    the bits of the same elements called block by block: sin with huge values in some blocks
    (the general form there, the short form elsewhere), x ** y with half-integer and general
    exponents in alternate blocks, at lengths that split the team's tiles off the blocks."""
    from tensorlib.kernels.cpu.pointwise import BLOCK
    rng = np.random.default_rng(7)
    for n in (300 * BLOCK + 517, 413 * BLOCK):
        a = rng.uniform(-100, 100, n)
        a[rng.choice(n, 40, replace=False)] = 3e30
        x = tl.asarray(a.astype(dtype))
        b = rng.uniform(0.5, 10, n)
        e = np.where((np.arange(n) // BLOCK) % 2 == 0, np.round(rng.uniform(0, 16, n)) / 2,
                     rng.uniform(-3, 3, n))
        xb, eb = tl.asarray(b.astype(dtype)), tl.asarray(e.astype(dtype))
        for big, piece in ((tl.sin(x), lambda s: tl.sin(x[s])),
                           (xb ** eb, lambda s: xb[s] ** eb[s])):
            got = to_numpy(big)
            for k in range(0, n, BLOCK):
                want = to_numpy(piece(slice(k, k + BLOCK)))
                assert got[k:k + BLOCK].tobytes() == want.tobytes(), k


@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "uint8", "float16"])
def test_clip_one_pass_matches_the_two_steps(dtype):
    """clip with both bounds keeping x's dtype runs its one-pass form (the internal op
    clip_bounds): the bits of maximum then minimum, nan / -0.0 / inf included, Python-scalar
    and tensor bounds, small and above the fast path's grain; other bounds take the two
    steps, with their own errors."""
    rng = np.random.default_rng(1)
    for n in (37, 300_000):
        if dtype.startswith("float"):
            a = (rng.standard_normal(n) * 4).astype(dtype)
            a[:6] = [np.nan, -0.0, 0.0, np.inf, -np.inf, 1.0]
            bounds = [(-1.5, 2.0), (0.0, -0.0), (np.nan, 1.0), (-np.inf, 0.5)]
        else:
            a = rng.integers(0, 200, n).astype(dtype)
            bounds = [(10, 100), (50, 20), (True, 3)]
        t = tl.asarray(a)
        for lo, hi in bounds:
            for _ in range(3):  # (the fast path's runner is made on the third call)
                got = tl.clip(t, lo, hi)
            want = to_numpy(tl.minimum(tl.maximum(t, lo), hi))  # the two steps
            assert got.dtype.name == dtype
            np.testing.assert_array_equal(to_numpy(got).view(np.uint8), want.view(np.uint8))
            d = np.dtype(dtype).type
            with np.errstate(invalid="ignore"):  # (NumPy leaves the sign of a zero free)
                np.testing.assert_array_equal(to_numpy(got), np.minimum(np.maximum(a, d(lo)),
                                                                        d(hi)))
        tlo = tl.asarray(a[:1].copy())
        np.testing.assert_array_equal(to_numpy(tl.clip(t, tlo, 100)),
                                      np.minimum(np.maximum(a, a[:1]), np.array(100, dtype)))
    if dtype == "uint8":
        # NumPy 2's rule for Python int bounds outside the dtype: one that cannot clamp is
        # dropped, one that would clamp to an unrepresentable value raises, naming clip
        x = np.arange(0, 250, 7, dtype=np.uint8)
        for lo, hi in ((-3, 4), (-3, 300), (5, 300), (None, 300), (-3, None)):
            got = tl.clip(tl.asarray(x), lo, hi)
            assert got.dtype.name == "uint8"
            np.testing.assert_array_equal(to_numpy(got), np.clip(x, lo, hi))
        for lo, hi, arg, value in ((300, 400, "min", 300), (-10, -5, "max", -5),
                                   (5, -5, "max", -5), (256, None, "min", 256)):
            with pytest.raises(OverflowError, match=rf"clip\(\): argument '{arg}' = {value} "):
                tl.clip(tl.asarray(x), lo, hi)


def test_integer_pow_refuses_a_negative_scalar_exponent(device):
    """An integer (or bool) tensor ** a negative Python int has no integer answer: a ValueError
    naming pow, the argument and the value on every route (operator, function, in place, out=,
    the dense fast path once warm), as NumPy and PyTorch refuse it; non-negative exponents,
    float bases and tensor exponents compute as before."""
    base = np.array([0, 1, 2, 3, -2], np.int32)
    t = tl.asarray(base, device=device)
    out = tl.empty((5,), dtype=tl.int32, device=device)
    t + (-1), t * -2  # (other ops' remembered scalars must not let pow's through)
    for _ in range(3):  # (the fast path's runner is made on the third call)
        np.testing.assert_array_equal(to_numpy(t ** 3), base ** 3)
    calls = [lambda: t ** -1, lambda: tl.pow(t, -2), lambda: t.__ipow__(-1),
             lambda: tl.pow(t, -1, out=out),
             lambda: tl.asarray(np.array([True, False]), device=device) ** -1]
    for call in calls:
        with pytest.raises(ValueError, match=r"pow\(\): argument 'exponent' = -\d is below 0"):
            call()
    np.testing.assert_array_equal(to_numpy(t), base)  # the refused in-place call wrote nothing
    np.testing.assert_array_equal(to_numpy(t ** 0), np.ones(5, np.int32))
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(to_numpy(tl.asarray(base.astype(np.float32),
                                                          device=device) ** -1),
                                      base.astype(np.float32) ** -1)
    # a tensor exponent is not scanned: PyTorch's integer answers for its negative elements
    e = tl.asarray(np.array([1, -1, 2, -3, -1], np.int32), device=device)
    np.testing.assert_array_equal(to_numpy(t ** e), [0, 1, 4, 0, 0])


_COMPARISONS = {"equal": operator.eq, "not_equal": operator.ne, "less": operator.lt,
                "less_equal": operator.le, "greater": operator.gt, "greater_equal": operator.ge}


def test_comparisons_take_any_python_int(device):
    """A Python int outside an integer tensor's range compares as the number it is, as in NumPy
    2 (``uint8_x != -1``, ``uint8_x < 300``): every element gets the same answer, on every
    route (function, operator, the int first, out= of another dtype, strided and transposed
    views, 0-d and empty tensors, after the fast path's runner is made), and in a traced
    function; other ops still refuse it (OverflowError), as NumPy 2's do. (NumPy refuses a
    bool array beside an int beyond int64, converting the int first; here it compares too.)"""
    cases = {"uint8": (-1, -2 ** 70, 256, 2 ** 64), "int8": (-129, 128, 2 ** 70),
             "int64": (2 ** 63, -2 ** 63 - 1, 2 ** 64), "uint64": (-1, 2 ** 64),
             "bool": (2 ** 63, -2 ** 70)}
    for dtype, values in cases.items():
        info = np.iinfo(dtype) if dtype != "bool" else np.iinfo(np.uint8)
        edges = np.array([info.min, info.min + 1, 0, 1, info.max], np.int64
                         if dtype != "uint64" else np.uint64)
        base = np.resize(edges, (3, 5)).astype(dtype)
        t = tl.asarray(base, device=device)
        for name, compare in _COMPARISONS.items():
            fn = getattr(tl, name)
            for _ in range(3):  # (the dense fast path's runner is made on the third call)
                fn(t, 1)
            for v in values:
                want = np.vectorize(lambda e: compare(int(e), v), otypes=[bool])(base)
                mirror = np.vectorize(lambda e: compare(v, int(e)), otypes=[bool])(base)
                if dtype != "bool":
                    np.testing.assert_array_equal(getattr(np, name)(base, v), want)
                assert want.all() or not want.any()  # (the case is one answer throughout)
                for got, ref in ((fn(t, v), want), (fn(v, t), mirror),
                                 (fn(t[:, ::2], v), want[:, ::2]), (fn(t.T, v), want.T),
                                 (fn(t[0, 0], v), want[0, 0]), (fn(t[:0], v), want[:0])):
                    assert got.dtype == tl.bool and got.shape == ref.shape, (name, v)
                    np.testing.assert_array_equal(to_numpy(got), ref, err_msg=f"{name} {v}")
                out = tl.empty((3, 5), dtype=tl.float32, device=device)
                assert fn(t, v, out=out) is out
                np.testing.assert_array_equal(to_numpy(out), want.astype(np.float32))
        with pytest.raises(ValueError, match="out"):
            tl.less(t, values[0], out=tl.empty((4,), dtype=tl.bool, device=device))
        if dtype != "bool":
            for v in values:
                with pytest.raises(OverflowError, match=f"Python integer {v} is out of bounds"):
                    tl.maximum(t, v)
                with pytest.raises(OverflowError, match="out of bounds"):
                    t + v
    x = np.arange(12, dtype=np.uint8).reshape(3, 4)
    traced = tl.jit.trace(lambda a: (a < 300) & (a != -1) & (a > 2),
                          (tl.asarray(x, device=device),))
    for _ in range(2):  # (the second call runs the optimized graph)
        np.testing.assert_array_equal(to_numpy(traced(tl.asarray(x, device=device))),
                                      (x < 300) & (x != -1) & (x > 2))


def test_clip_of_integers_by_float_bounds_is_exact(device):
    """A Python float bound of an integer tensor clamps as the number it is and the result
    keeps the dtype: x where it is inside, else the bound truncated toward zero, exactly (the
    two float32 steps before rounded x: clip(int64 2**40 + 1, 0.5) gave 2**40); an infinite
    bound that cannot clamp is dropped, one that would clamp is an OverflowError naming the
    bound as given, a nan bound a ValueError."""
    def ref(v, lo, hi):
        if lo is not None and v < lo:
            v = lo
        if hi is not None and v > hi:
            v = hi
        return math.trunc(v)
    cases = {"int64": [2 ** 40 + 1, 16777217, -3, 5, 0, -1, 2 ** 62, -2 ** 63],
             "uint64": [0, 1, 2 ** 63 + 5, 2 ** 64 - 1], "int32": [2 ** 31 - 1, -2 ** 31, 7, -7],
             "int8": [127, -128, 3, -3], "uint8": [0, 5, 255]}
    bounds = [(0.5, None), (None, 1e12), (-2.5, 2.5), (-0.5, 0.5), (2.0, 2.0), (-math.inf, 3.7),
              (None, math.inf), (1, 2.9), (-1.5, 100), (0.25, 1e19)]
    for dtype, values in cases.items():
        x = np.array(values, dtype)
        t = tl.asarray(x, device=device)
        info = np.iinfo(dtype)
        for lo, hi in bounds:
            want = [ref(int(v), lo, hi) for v in x]
            if any(not info.min <= w <= info.max for w in want):
                continue  # (a clamp to a value the dtype cannot hold: the error below)
            got = tl.clip(t, lo, hi)
            assert got.dtype.name == dtype
            np.testing.assert_array_equal(to_numpy(got), np.array(want, dtype),
                                          err_msg=f"{dtype} {lo} {hi}")
        with pytest.raises(OverflowError, match=r"clip\(\): argument 'min' = 1e\+30 is out"):
            tl.clip(t, 1e30, None)
        with pytest.raises(OverflowError, match=r"clip\(\): argument 'max' = -inf is out"):
            tl.clip(t, None, -math.inf)
        with pytest.raises(ValueError, match=r"clip\(\): argument 'min' = nan cannot bound"):
            tl.clip(t, math.nan, 1.0)
    # float tensors keep the float steps' answers
    f = np.array([0.2, -3.5, 7.25, np.nan], np.float32)
    np.testing.assert_array_equal(to_numpy(tl.clip(tl.asarray(f, device=device), 0.5, 2.5)),
                                  np.clip(f, np.float32(0.5), np.float32(2.5)))
