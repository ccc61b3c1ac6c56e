"""The dispatcher: tables, define/impl/fallback/fallthrough, functionality keys (include/exclude),
missing-kernel errors, and the argument checking of the generated public functions."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.dispatch import (FALLTHROUGH, DispatchError, DispatchKey, define, exclude_keys,
                                fallback, get_op, impl, include_keys, table)

_ids = itertools.count()


@pytest.fixture
def opname():
    """A fresh operator name per test (the registry is process-global)."""
    return f"test_ns_xyz_{next(_ids)}"


@pytest.fixture
def profiler():
    """A global Profiler fallback that records op names and redispatches; removed afterwards."""
    calls = []

    def record(op, keyset, args):
        calls.append(op.name)
        return op.redispatch(keyset, args)

    fallback(DispatchKey.Profiler, record)
    try:
        yield calls
    finally:
        fallback(DispatchKey.Profiler, None)


# ---------------------------------------------------------------- tables

def test_table_of_add():
    text = table("add", file=open("/dev/null", "w"))
    assert "add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor" in text
    assert "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)" \
        in text
    assert "add_(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)" in text
    lines = text.splitlines()
    assert any(line.split()[:2] == ["CPU", "kernel"] for line in lines)
    assert "add_structured" in text
    # only add's overloads, not e.g. addmm or logaddexp
    heads = [line for line in lines if not line.startswith(" ")]
    assert all(h.split("(")[0] in ("add", "add.out", "add_") for h in heads)


def test_table_prints(capsys):
    table("exp")
    out = capsys.readouterr().out
    assert out.startswith("exp(") and "CPU" in out


def test_table_unknown_op():
    with pytest.raises(DispatchError, match="no_such_op"):
        table("no_such_op")


def test_table_shows_fallbacks(opname, profiler):
    define(f"{opname}(Tensor self) -> Tensor")
    text = table(opname, file=open("/dev/null", "w"))
    assert "Profiler" in text and "fallback" in text


# ---------------------------------------------------------------- define / impl

def test_define_impl_call(opname):
    op = define(f"{opname}(Tensor self, int k=2) -> Tensor")
    assert get_op(opname) is op
    impl(opname, "CPU", lambda t, k: tl.multiply(t, k))
    t = tl.asarray([1.0, 2.0])
    assert op.call(t, 3).tolist() == [3.0, 6.0]
    assert op.call(t, 2).tolist() == [2.0, 4.0]


def test_duplicate_define_is_an_error(opname):
    define(f"{opname}(Tensor self) -> Tensor")
    with pytest.raises(DispatchError, match=opname):
        define(f"{opname}(Tensor self) -> Tensor")
    with pytest.raises(DispatchError):
        define("add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
    define(f"{opname}.other(Tensor self) -> Tensor")  # a new overload name is a new op


def test_impl_errors(opname):
    define(f"{opname}(Tensor self) -> Tensor")
    f = lambda t: t  # noqa: E731
    impl(opname, "CPU", f)
    impl(opname, "CPU", f)  # the same kernel again is harmless
    with pytest.raises(DispatchError, match="CPU"):
        impl(opname, "CPU", lambda t: t)
    with pytest.raises(ValueError, match="NoSuchKey"):
        impl(opname, "NoSuchKey", f)
    with pytest.raises(TypeError):
        impl(opname, 3.5, f)
    with pytest.raises(DispatchError, match="never_defined"):
        impl(f"{opname}_never_defined", "CPU", f)
    with pytest.raises(DispatchError):
        get_op(f"{opname}_never_defined")


def test_alias_key_registers_every_backend(opname):
    op = define(f"{opname}(Tensor self) -> Tensor")
    impl(opname, "CompositeExplicit", lambda t: t)
    assert {DispatchKey.CPU, DispatchKey.CUDA} <= set(op.kernels)


def test_missing_kernel_names_op_and_keys(opname):
    op = define(f"{opname}(Tensor self) -> Tensor")
    with pytest.raises(DispatchError) as e:
        op.call(tl.zeros(1))
    assert opname in str(e.value) and "CPU" in str(e.value)
    impl(opname, "CUDA", lambda t: t)
    with pytest.raises(DispatchError, match="CUDA"):  # lists what is registered
        op.call(tl.zeros(1))


def test_missing_kernel_without_tensor_arguments(opname):
    op = define(f"{opname}(int n) -> Tensor")
    with pytest.raises(DispatchError, match=opname):
        op.call(3)


# ---------------------------------------------------------------- functionality keys

def test_fallback_records_and_redispatches_only_when_included(opname, profiler):
    op = define(f"{opname}(Tensor self) -> Tensor")
    impl(opname, "CPU", lambda t: tl.negative(t))
    t = tl.asarray([1.0, -2.0])
    assert op.call(t).tolist() == [-1.0, 2.0]
    assert profiler == []  # key not included: skipped
    with include_keys(DispatchKey.Profiler):
        assert op.call(t).tolist() == [-1.0, 2.0]
        assert tl.add(t, t).tolist() == [2.0, -4.0]  # the fallback is global
    assert profiler[0] == opname
    assert "negative" in profiler  # the kernel's own op call is seen too
    assert "add" in profiler
    n = len(profiler)
    op.call(t)
    assert len(profiler) == n  # include set restored on exit


def test_exclude_keys_hides_the_fallback(opname, profiler):
    op = define(f"{opname}(Tensor self) -> Tensor")
    impl(opname, "CPU", lambda t: t)
    t = tl.zeros(1)
    with include_keys(DispatchKey.Profiler):
        with exclude_keys(DispatchKey.Profiler):
            op.call(t)
        assert profiler == []
        op.call(t)
    assert profiler == [opname]


def test_fallthrough_for_one_op(opname, profiler):
    op = define(f"{opname}(Tensor self) -> Tensor")
    impl(opname, "CPU", lambda t: t)
    impl(opname, DispatchKey.Profiler, FALLTHROUGH)
    other = define(f"{opname}_b(Tensor self) -> Tensor")
    impl(other.name, "CPU", lambda t: t)
    t = tl.zeros(1)
    with include_keys(DispatchKey.Profiler):
        op.call(t)
        other.call(t)
    assert profiler == [other.name]


def test_global_fallthrough_skips_the_key(opname):
    op = define(f"{opname}(Tensor self) -> Tensor")
    impl(opname, "CPU", lambda t: t + 1)
    fallback(DispatchKey.Tracer, FALLTHROUGH)
    try:
        with include_keys(DispatchKey.Tracer):
            assert op.call(tl.zeros(1)).tolist() == [1.0]
    finally:
        fallback(DispatchKey.Tracer, None)


def test_op_specific_functionality_kernel_beats_fallback(opname, profiler):
    op = define(f"{opname}(Tensor self) -> Tensor")
    impl(opname, "CPU", lambda t: t)
    seen = []

    def tracer(handle, keyset, args):
        seen.append(handle.name)
        return handle.redispatch(keyset, args)

    impl(opname, DispatchKey.Tracer, tracer)
    t = tl.zeros(1)
    with include_keys(DispatchKey.Tracer, DispatchKey.Profiler):
        op.call(t)
    assert seen == [opname]
    assert profiler == [opname]  # Profiler (higher) ran first, then redispatched to Tracer
    with include_keys(DispatchKey.Tracer):
        op.call(t)
    assert seen == [opname, opname]


def test_fallback_at_a_backend_key_is_refused():
    with pytest.raises(DispatchError):
        fallback(DispatchKey.CPU, lambda op, ks, args: None)


def test_fallback_removed_after_fixture(opname):
    op = define(f"{opname}(Tensor self) -> Tensor")
    impl(opname, "CPU", lambda t: t)
    with include_keys(DispatchKey.Profiler):
        assert op.call(tl.zeros(1)).shape == (1,)  # no Profiler fallback left behind


# ---------------------------------------------------------------- public function arguments

def test_unknown_keyword_argument():
    t = tl.zeros(2)
    for call in (lambda: tl.add(t, t, beta=2), lambda: tl.exp(t, where=True),
                 lambda: tl.reshape(t, (2,), order="C"), lambda: tl.zeros(2, dtyp=tl.int8),
                 lambda: t.add(t, alfa=1)):
        with pytest.raises(TypeError, match="unexpected keyword"):
            call()


def test_positional_and_keyword_rules():
    t = tl.zeros(2)
    with pytest.raises(TypeError):
        tl.add(self=t, other=t)  # the first tensor is positional-only
    with pytest.raises(TypeError):
        tl.add(t, t, 2)  # alpha is keyword-only
    with pytest.raises(TypeError):
        tl.add(t)
    assert tl.add(t, other=t).shape == (2,)
    assert tl.zeros(shape=(2,)).shape == (2,)


@pytest.mark.parametrize("call,arg", [
    (lambda t: tl.add(t, "x"), "other"),
    (lambda t: tl.add([1.0], t), "self"),
    (lambda t: tl.add(t, t, alpha="2"), "alpha"),
    (lambda t: tl.add(t, t, out=[0.0]), "out"),
    (lambda t: tl.exp(None), "self"),
    (lambda t: tl.reshape(t, "2"), "shape"),
    (lambda t: tl.reshape(t, (2.0,)), "shape"),
    (lambda t: tl.transpose(t, 0.5, 0), "dim0"),
    (lambda t: tl.narrow(t, 0, "1", 1), "start"),
    (lambda t: tl.squeeze(t, "a"), "axis"),
    (lambda t: tl.zeros("2"), "shape"),
    (lambda t: tl.zeros(2, dtype=3), "dtype"),
    (lambda t: tl.zeros(2, device=2.5), "device"),
    (lambda t: tl.full(2, "x"), "fill_value"),
    (lambda t: tl.full(2, [1]), "fill_value"),
    (lambda t: tl.arange(0, 5, "1"), "step"),
    (lambda t: tl.linspace(0, 1, 2.5), "num"),
    (lambda t: tl.eye(2.5), "n_rows"),
    (lambda t: tl.eye(2, k=0.5), "k"),
    (lambda t: tl.astype(t, "no_such_dtype"), "dtype"),
    (lambda t: tl.astype(t, tl.float32, copy="yes"), "copy"),
    (lambda t: tl.split(t, 1.5), "split_size_or_sections"),
    (lambda t: tl.as_strided(t, (2,), "1"), "stride"),
    (lambda t: t.copy_([1.0, 2.0]), "src"),
    (lambda t: t.fill_("x"), "value"),
    (lambda t: tl.where(t, t, "x"), "other"),
    (lambda t: tl.clip(t, "0"), "min"),
])
def test_wrong_argument_types_name_the_argument(call, arg):
    with pytest.raises(TypeError) as e:
        call(tl.zeros(2))
    assert f"'{arg}'" in str(e.value), str(e.value)


def test_all_scalar_call_is_a_type_error():
    # nothing to dispatch on: a TypeError naming the arguments, not a missing-kernel error
    with pytest.raises(TypeError, match="'self', 'other'"):
        tl.add(1, 2)
    with pytest.raises(TypeError, match="'self'"):
        tl.exp(1.0)
    with pytest.raises(TypeError, match="'condition'"):
        tl.where(True, 1.0, 2.0)
    out = tl.zeros(2)
    assert tl.add(1, 2, out=out) is out and out.tolist() == [3.0, 3.0]  # out is a tensor


def test_numpy_integers_are_accepted_as_ints():
    t = tl.zeros((2, 3))
    assert tl.transpose(t, np.int64(0), np.int32(1)).shape == (3, 2)
    assert tl.reshape(t, (np.int8(3), np.int64(2))).shape == (3, 2)
    assert tl.zeros(np.uint8(3)).shape == (3,)


def test_public_functions_document_their_schema():
    assert tl.add.__doc__.startswith("add(Tensor self, Tensor other")
    assert "add.out" in tl.add.__doc__
    assert tl.add.__name__ == "add" and tl.add.__module__ == "tensorlib"
