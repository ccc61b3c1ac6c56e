"""Autograd core: metadata, the engine, grad modes, version counters, views, hooks, custom
Functions, threads and the bad-input errors. Gradients are compared with finite differences
(gradcheck) or with closed forms computed in NumPy, never with themselves."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.autograd import Function, gradcheck


def leaf(values, dtype=tl.float64):
    return tl.asarray(np.asarray(values, dtype=np.float64), dtype=dtype).requires_grad_()


# ---- metadata -------------------------------------------------------------------------------
def test_leaf_metadata_and_grad_fn_names():
    x = leaf([1.0, 2.0])
    assert x.requires_grad and x.is_leaf and x.grad_fn is None and x.grad is None
    y = tl.exp(x)
    assert y.requires_grad and not y.is_leaf
    assert y.grad_fn.name() == "ExpBackward"
    (nxt, nr), = y.grad_fn.next_functions
    assert nxt.name() == "AccumulateGrad" and nr == 0
    z = y * 2.0
    assert z.grad_fn.next_functions[0][0] is y.grad_fn


def test_requires_grad_only_for_float_and_complex():
    for dt in (tl.int32, tl.int64, tl.bool, tl.uint8):
        with pytest.raises(RuntimeError, match="only float and complex"):
            tl.zeros((2,), dtype=dt).requires_grad_()
    tl.zeros((2,), dtype=tl.complex64).requires_grad_()
    t = tl.zeros((2,), dtype=tl.float16)
    t.requires_grad = True
    assert t.requires_grad


def test_factories_take_requires_grad():
    for t in (tl.zeros((2,), requires_grad=True), tl.ones_like(tl.ones((2,)), requires_grad=True),
              tl.asarray([1.0, 2.0], requires_grad=True), tl.randn((3,), requires_grad=True),
              tl.arange(3.0, requires_grad=True), tl.full((2,), 1.5, requires_grad=True)):
        assert t.requires_grad and t.is_leaf
    assert not tl.zeros((2,)).requires_grad
    with pytest.raises(RuntimeError, match=r"zeros\(\): requires_grad=True needs a float"):
        tl.zeros((2,), dtype=tl.int32, requires_grad=True)
    with pytest.raises(TypeError, match="requires_grad"):
        tl.ones((2,), requires_grad="yes")


def test_requires_grad_false_on_non_leaf_raises():
    y = leaf([1.0]) * 2
    with pytest.raises(RuntimeError, match="not a leaf"):
        y.requires_grad_(False)


def test_detach_shares_memory_and_leaves_graph():
    x = leaf([1.0, 2.0])
    y = x * 3
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None
    d[0] = 10.0
    assert y.numpy()[0] == 10.0  # same memory
    y2 = x * 2
    y2.detach_()
    assert not y2.requires_grad and y2.is_leaf


def test_integer_ops_on_grad_tensors_do_not_require_grad():
    x = leaf([1.0, -2.0])
    assert not (x > 0).requires_grad
    assert not tl.argmax(x).requires_grad


# ---- engine -----------------------------------------------------------------------------------
def test_gradients_accumulate_across_backward_calls():
    x = leaf([1.0, 2.0, 3.0])
    (x * x).sum().backward()
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.array([1, 2, 3]) + 3)


def test_shared_subexpression_sums_gradients():
    x = leaf([0.5, -1.0])
    y = tl.sin(x)
    z = (y * y + y).sum()
    z.backward()
    xv = np.array([0.5, -1.0])
    np.testing.assert_allclose(x.grad.numpy(), (2 * np.sin(xv) + 1) * np.cos(xv))


def test_leaf_used_twice_in_one_op():
    x = leaf([3.0])
    (x * x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0])


def test_grad_is_not_aliased_between_leaves():
    a, b = leaf([1.0]), leaf([2.0])
    (a + b).backward()
    a.grad.zero_()
    assert b.grad.numpy()[0] == 1.0


def test_one_gradient_object_reaching_two_leaves_is_not_shared():
    class Both(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, g):
            return g, g  # the same object for both inputs

    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    Both.apply(a, b).sum().backward()
    assert a.grad is not b.grad
    a.grad.zero_()
    np.testing.assert_allclose(b.grad.numpy(), [1.0, 1.0])
    c = leaf([1.0, 2.0])
    parts = tl.unbind(tl.stack([c, c * 2.0]), 0)  # gradients are views of one buffer
    (parts[0] + parts[1]).sum().backward()
    np.testing.assert_allclose(c.grad.numpy(), [3.0, 3.0])


def test_first_gradient_is_kept_without_a_copy_when_unshared():
    x = leaf([1.0, 2.0])
    ptrs = []
    x.register_hook(lambda g: ptrs.append(g.data_ptr()))  # keeps no reference to g
    tl.exp(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([1.0, 2.0]))
    assert x.grad.data_ptr() == ptrs[0]  # the engine's gradient became x.grad, no copy
    held = []
    w = leaf([1.0, 2.0])
    w.register_hook(lambda g: held.append(g))  # now somebody else holds it: copied
    tl.exp(w).sum().backward()
    assert w.grad.data_ptr() != held[0].data_ptr()


def test_second_backward_without_retain_graph_raises():
    x = leaf([1.0, 2.0])
    y = (tl.exp(x)).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_long_chain_has_no_recursion_limit():
    x = leaf([1.0])
    y = x
    for _ in range(100_000):
        y = y + 1.0
    y.backward()
    assert x.grad.numpy()[0] == 1.0


def test_autograd_grad_returns_without_touching_dot_grad():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    y = (x * w).sum()
    gx, gw = tl.autograd.grad(y, (x, w))
    np.testing.assert_allclose(gx.numpy(), [3, 4])
    np.testing.assert_allclose(gw.numpy(), [1, 2])
    assert x.grad is None and w.grad is None


def test_autograd_grad_of_non_leaf_input():
    x = leaf([1.0, 2.0])
    h = x * 2
    y = (h * h).sum()
    (gh,) = tl.autograd.grad(y, [h])
    np.testing.assert_allclose(gh.numpy(), [4, 8])


def test_autograd_grad_unused_input():
    x, u = leaf([1.0]), leaf([2.0])
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="allow_unused"):
        tl.autograd.grad(y, [x, u], retain_graph=True)
    gx, gu = tl.autograd.grad(y, [x, u], allow_unused=True)
    assert gu is None and gx.numpy()[0] == 2


def test_backward_inputs_restricts_accumulation():
    x, w = leaf([1.0]), leaf([2.0])
    (x * w).backward(inputs=[x])
    assert x.grad.numpy()[0] == 2.0 and w.grad is None


def test_double_backward_through_create_graph():
    x = leaf([0.3, 1.2])
    y = (x ** 3).sum()
    (g,) = tl.autograd.grad(y, [x], create_graph=True)
    np.testing.assert_allclose(g.numpy(), 3 * np.array([0.3, 1.2]) ** 2)
    (h,) = tl.autograd.grad(g.sum(), [x])
    np.testing.assert_allclose(h.numpy(), 6 * np.array([0.3, 1.2]))


def test_complex_gradient_convention():
    # L = |z|^2 = z * conj(z): the gradient under the conjugate-Wirtinger convention is 2z
    z = tl.asarray([1 + 2j, -0.5 + 0.25j], dtype=tl.complex128).requires_grad_()
    (tl.real(z * tl.conj(z))).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), 2 * np.array([1 + 2j, -0.5 + 0.25j]))


# ---- bad input ------------------------------------------------------------------------------
def test_backward_on_non_scalar_needs_gradient():
    y = leaf([1.0, 2.0]) * 2
    with pytest.raises(RuntimeError, match="scalar outputs"):
        y.backward()
    y.backward(tl.ones((2,), dtype=tl.float64))


@pytest.mark.parametrize("bad, match", [
    (lambda: tl.ones((3,), dtype=tl.float64), "shape"),
    (lambda: tl.ones((2,), dtype=tl.float32), "dtype"),
    (lambda: [1.0, 1.0], "must be a Tensor"),
])
def test_backward_gradient_checked(bad, match):
    y = leaf([1.0, 2.0]) * 2
    with pytest.raises((RuntimeError, TypeError), match=match):
        y.backward(bad())


def test_backward_of_tensor_without_graph():
    with pytest.raises(RuntimeError, match="does not require grad"):
        tl.ones((1,)).backward()


def test_inplace_on_leaf_that_requires_grad_raises():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"add_\(\): a leaf tensor that requires grad"):
        x.add_(1.0)
    with pytest.raises(RuntimeError, match="leaf"):
        x *= 2
    with tl.no_grad():
        x.add_(1.0)
    np.testing.assert_allclose(x.numpy(), [2.0, 3.0])


def test_out_argument_with_grad_raises():
    x = leaf([1.0])
    with pytest.raises(RuntimeError, match="out=.*automatic differentiation"):
        tl.exp(x, out=tl.empty((1,), dtype=tl.float64))


def test_saved_tensor_modified_inplace_raises():
    x = leaf([1.0, 2.0])
    h = x * 1.0
    y = tl.exp(h)  # saves its result
    y.add_(1.0)
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation: exp\(\) saved .result.*at version 0; it is now at version 2"):
        y.sum().backward()
    a = x * 1.0
    b = a * a  # saves a
    a.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        b.sum().backward()


def test_setitem_bumps_version():
    a = tl.zeros((3,))
    v0 = a._version
    a[0] = 1.0
    assert a._version > v0
    b = a[1:]
    assert b._version == a._version
    tl.exp(a, out=a)
    assert b._version == a._version
    a.copy_(tl.ones((3,)))
    assert b._version == a._version


def test_custom_function_wrong_gradient_count():
    class Bad(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g

    x, y = leaf([1.0]), leaf([2.0])
    with pytest.raises(RuntimeError, match="incorrect number of gradients.*expected 2, got 1"):
        Bad.apply(x, y).backward()


# ---- in-place and views ---------------------------------------------------------------------
def test_inplace_on_non_leaf_records():
    x = leaf([0.5, 2.0])
    y = x * 1.0
    y.mul_(x)  # y = x^2 via an in-place op on a non-leaf
    y.exp_()
    y.sum().backward()
    xv = np.array([0.5, 2.0])
    np.testing.assert_allclose(x.grad.numpy(), np.exp(xv ** 2) * 2 * xv)


def test_inplace_op_reading_its_own_output_is_caught():
    # y.mul_(y) saves y as 'other' and then overwrites it: backward must not read y^2 as y
    y = leaf([0.5, 2.0]) * 1.0
    y.mul_(y)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_inplace_through_view_rebases_base():
    x = leaf([1.0, 2.0, 3.0, 4.0])
    base = x * 1.0
    view = tl.narrow(base, 0, 1, 2)
    view.mul_(10.0)
    assert base.grad_fn.name() == "CopySlices"
    (base * tl.asarray([1.0, 2.0, 3.0, 4.0], dtype=tl.float64)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1, 20, 30, 4])


def test_view_sees_inplace_on_base():
    x = leaf([1.0, 2.0, 3.0])
    base = x * 1.0
    view = tl.narrow(base, 0, 0, 2)
    base.mul_(3.0)
    view.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3, 3, 0])


def test_views_share_version_counter():
    x = leaf([1.0, 2.0])
    y = x * 1
    v = tl.narrow(y, 0, 0, 1)
    y.add_(1.0)
    assert v._version == y._version


# ---- grad modes ------------------------------------------------------------------------------
def test_no_grad_and_enable_grad():
    x = leaf([1.0])
    with tl.no_grad():
        assert not tl.is_grad_enabled()
        y = x * 2
        with tl.enable_grad():
            z = x * 2
    assert not y.requires_grad and z.requires_grad and tl.is_grad_enabled()


def test_modes_as_decorators_and_set_grad_enabled():
    @tl.no_grad()
    def f(t):
        return t * 2

    x = leaf([1.0])
    assert not f(x).requires_grad
    tl.set_grad_enabled(False)
    try:
        assert not (x * 2).requires_grad
    finally:
        tl.set_grad_enabled(True)
    with tl.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad


def test_grad_mode_is_thread_local():
    seen = []
    x = leaf([1.0])

    def worker():
        seen.append((x * 2).requires_grad)

    with tl.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
    assert seen == [True]


def test_inference_mode_tensors_cannot_be_saved():
    with tl.inference_mode():
        assert tl.is_inference_mode_enabled()
        c = tl.ones((2,), dtype=tl.float64)
        y = leaf([1.0, 2.0]) * 3
        assert not y.requires_grad
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="inference tensor"):
        x * c
    x + c  # add saves nothing: allowed


# ---- hooks -----------------------------------------------------------------------------------
def test_hooks_observe_and_replace():
    x = leaf([1.0, 2.0])
    seen = []
    h = x.register_hook(lambda g: seen.append(g.numpy().copy()))
    y = x * 3
    y.register_hook(lambda g: g * 10)  # replaces the gradient flowing into y's grad_fn
    y.sum().backward()
    np.testing.assert_allclose(seen[0], [30, 30])
    np.testing.assert_allclose(x.grad.numpy(), [30, 30])
    h.remove()
    x.grad = None
    (x * 1).sum().backward()
    assert len(seen) == 1


def test_retain_grad_on_non_leaf():
    x = leaf([1.0, 2.0])
    y = x * 2
    y.retain_grad()
    (y * y).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), [4, 8])


# ---- custom functions ------------------------------------------------------------------------
class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x * x


def test_custom_function_gradcheck_and_needs_input_grad():
    x = leaf([0.3, -0.7])
    assert gradcheck(Cube.apply, [x])
    seen = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, a, b):
            seen.append(ctx.needs_input_grad)
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g, None

    Probe.apply(x, tl.ones((2,), dtype=tl.float64))
    assert seen == [(True, False)]


def test_custom_function_mark_dirty():
    class AddOne(Function):
        @staticmethod
        def forward(ctx, a):
            a.add_(1.0)
            ctx.mark_dirty(a)
            return a

        @staticmethod
        def backward(ctx, g):
            return g

    x = leaf([1.0])
    y = x * 2
    z = AddOne.apply(y)
    assert z is y and y.grad_fn.name() == "AddOneBackward"
    z.backward()
    assert x.grad.numpy()[0] == 2.0


def test_custom_function_grad_mode_aliases_and_missing_grads():
    """forward runs with recording off and the mode comes back (also when forward raises);
    under no_grad nothing is recorded; an input returned as is becomes a new alias with the
    node as its history; a second output whose gradient never arrives gets zeros."""
    modes = []

    class Split(Function):  # (a, b) -> (a, a * b)
        @staticmethod
        def forward(ctx, a, b):
            modes.append(tl.is_grad_enabled())
            assert (a * 2.0).grad_fn is None  # ops inside record nothing
            ctx.save_for_backward(a, b)
            return a, a * b

        @staticmethod
        def backward(ctx, ga, gab):
            a, b = ctx.saved_tensors
            return ga + gab * b, gab * a

    class Boom(Function):
        @staticmethod
        def forward(ctx, a):
            raise ValueError("boom")

    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    same, prod = Split.apply(x, y)
    assert modes == [False] and tl.is_grad_enabled()
    assert same is not x and same.grad_fn is prod.grad_fn
    np.testing.assert_array_equal(same.numpy(), x.numpy())
    prod.sum().backward()  # no gradient reaches `same`: it is materialized as zeros
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 4.0])
    np.testing.assert_array_equal(y.grad.numpy(), [1.0, 2.0])
    assert gradcheck(lambda a, b: Split.apply(a, b)[1], [leaf([0.5, -1.5]), leaf([2.0, 0.25])])
    with pytest.raises(ValueError, match="boom"):
        Boom.apply(x)
    assert tl.is_grad_enabled()
    with tl.no_grad():
        out = Split.apply(x, y)
    assert out[1].grad_fn is None and not out[1].requires_grad
    assert tl.is_grad_enabled()


def test_gradcheck_reports_mismatch():
    class Wrong(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3

    with pytest.raises(tl.autograd.GradcheckError, match="numerical 2.*analytical 3"):
        gradcheck(Wrong.apply, [leaf([1.0])])


# ---- threads ---------------------------------------------------------------------------------
def test_backward_in_two_threads_on_separate_graphs():
    results, errors = {}, []

    def run(k):
        try:
            for _ in range(20):
                x = leaf(np.arange(4.0) + k)
                (tl.sin(x) * x).sum().backward()
                xv = np.arange(4.0) + k
                np.testing.assert_allclose(x.grad.numpy(), np.cos(xv) * xv + np.sin(xv))
            results[k] = True
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    ts = [threading.Thread(target=run, args=(k,)) for k in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors and len(results) == 2


def test_dispatch_table_shows_autograd_kernel():
    text = tl.dispatch.table("exp", file=open("/dev/null", "w"))
    assert "Autograd" in text and "autograd_kernel" in text


def test_profiler_shows_backward_nodes():
    x = leaf([1.0, 2.0])
    y = (tl.exp(x) * 2.0).sum()
    with tl.profiler.profile() as prof:
        y.backward()
    names = {e.name for e in prof.events()}
    assert {"SumBackward", "MultiplyBackward", "ExpBackward"} <= names
    assert "multiply" in names  # the ops the formulas ran, inside their node's range


def test_backward_on_every_device(device):
    xv = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    wv = np.array([[1.0], [-2.0], [0.5]])
    x = tl.asarray(xv, device=device, requires_grad=True)
    w = tl.asarray(wv, device=device, requires_grad=True)
    y = tl.sum(tl.exp(x @ w) * 2.0)
    y.backward()
    assert x.grad.device.type == device and w.grad.device.type == device
    e = np.exp(xv @ wv) * 2.0
    np.testing.assert_allclose(x.grad.cpu().numpy(), e @ wv.T, rtol=1e-6)
    np.testing.assert_allclose(w.grad.cpu().numpy(), xv.T @ e, rtol=1e-6)
    if device == "cuda":
        assert y.grad_fn.stream is not None  # backward runs on the forward's stream


def test_inplace_on_view_of_leaf_raises():
    a = leaf([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="view of a leaf tensor that requires grad"):
        tl.narrow(a, 0, 0, 2).mul_(2.0)
    assert a.is_leaf


def test_double_backward_through_inplace_write_on_view():
    a = tl.asarray(np.random.default_rng(3).random((3, 2))).requires_grad_()

    def f(t):
        y = t * 1
        tl.select(y, 1, 0).mul_(2.0)
        return y * y

    assert gradcheck(f, [a])
    assert tl.autograd.gradgradcheck(f, [a])


def test_inplace_through_view_of_transposed_base():
    # x.T * 2 is laid out in x's memory order (a transposed, non-contiguous base); writes
    # through its row view and column view must route gradients to the right elements
    w = np.arange(12.0).reshape(4, 3)
    x = leaf(np.arange(12.0).reshape(3, 4))
    y = x.T * 2.0
    assert not y.is_contiguous()
    tl.select(y, 0, 1).mul_(3.0)
    (y * tl.asarray(w)).sum().backward()
    expected = 2 * w.T.copy()
    expected[:, 1] *= 3
    np.testing.assert_allclose(x.grad.numpy(), expected)

    def f(t):
        y = t.T * 2.0
        tl.select(y, 0, 1).mul_(3.0)
        tl.select(y, 1, 0).add_(tl.select(t, 0, 0))
        return y * y

    a = tl.asarray(np.random.default_rng(5).random((3, 4))).requires_grad_()
    assert gradcheck(f, [a])
    assert tl.autograd.gradgradcheck(f, [a])


@pytest.mark.parametrize("view", ["select", "narrow", "diagonal", "getitem"])
def test_double_backward_of_views_of_non_leaves(view):
    # a view's backward scatters into zeros that need no grad themselves: under create_graph
    # the result must still depend on the incoming gradient (it read 0 before)
    take = {"select": lambda t: tl.select(t, 1, 0),
            "narrow": lambda t: tl.narrow(t, 1, 1, 2),
            "diagonal": lambda t: tl.diagonal(t, 0, 0, 1),
            "getitem": lambda t: t[1:, ::2]}[view]
    a = tl.asarray(np.random.default_rng(7).random((3, 4))).requires_grad_()
    assert tl.autograd.gradgradcheck(lambda t: take(t * t), [a])


@pytest.mark.parametrize("transposed", [False, True])
def test_double_backward_through_two_overlapping_view_writes(transposed):
    def f(t):
        y = t.T * 2.0 if transposed else t.T.contiguous() * 2.0
        tl.select(y, 0, 1).mul_(3.0)
        tl.select(y, 1, 0).add_(tl.select(t, 0, 0))  # overlaps the first write at y[1, 0]
        return y * y

    a = tl.asarray(np.random.default_rng(5).random((3, 4))).requires_grad_()
    assert gradcheck(f, [a])
    assert tl.autograd.gradgradcheck(f, [a])


def test_every_formula_compiles():
    # formulas compile on an op's first recorded call; compile them all here so a broken one
    # fails a test, not a user's first backward
    from tensorlib.autograd import kernel
    kernel.prepare_all()
    assert kernel._SPEC_OF and all(op in kernel._BY_OP for op in kernel._SPEC_OF)


def test_saves_only_what_the_needed_formulas_read():
    x = leaf([1.0, 2.0])
    c = tl.asarray([3.0, 4.0], dtype=tl.float64)  # needs no gradient
    y = x * c  # x's gradient reads c; c's (not needed) would read x
    assert y.grad_fn.saved_names() == ["other"]
    z = x * 2.0
    assert z.grad_fn.saved_names() == []
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 4.0])
    w = x * c  # saves c: writing it voids this graph
    c.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        w.sum().backward()


# ---- memory: products written into the formula's own temporaries ---------------------------
_BIG = 1 << 17  # above formulas._IN_PLACE_MIN


def test_backward_product_is_written_into_the_formulas_temporary():
    # sin's gradient grad * cos(x): cos(x) is a temporary only the formula holds, so the
    # product goes into it; backward then needs one n-element buffer (it becomes x.grad)
    x = tl.asarray(np.linspace(-3, 3, _BIG)).requires_grad_()
    loss = tl.sin(x).sum()
    stats = tl.cpu.memory_stats
    tl.cpu.reset_peak_stats()
    before = stats()["allocated_bytes.current"]
    loss.backward()
    peak = stats()["allocated_bytes.peak"] - before
    assert peak < 2 * _BIG * 8, peak
    np.testing.assert_allclose(x.grad.numpy(), np.cos(np.linspace(-3, 3, _BIG)), rtol=1e-12)


def test_backward_never_writes_into_saved_outputs_or_recorded_temporaries():
    xs = np.linspace(-2, 2, _BIG)
    x = tl.asarray(xs).requires_grad_()
    y = tl.exp(x)                      # its formula is grad * result: result is the user's y
    before = y.numpy().copy()
    (y * 2.0).sum().backward()
    np.testing.assert_array_equal(y.numpy(), before)
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(xs), rtol=1e-12)
    # create_graph: the products are recorded, so nothing is written in place and the second
    # derivative still sees the first's graph
    x2 = tl.asarray(xs).requires_grad_()
    (g,) = tl.autograd.grad(tl.sin(x2).sum(), [x2], create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), np.cos(xs), rtol=1e-12)
    g.sum().backward()
    np.testing.assert_allclose(x2.grad.numpy(), -np.sin(xs), rtol=1e-12, atol=1e-15)


def _sin_chain(x, n):
    ys = [x]
    for _ in range(n):
        ys.append(tl.sin(ys[-1]))
    return ys


def _sin_chain_grad(xs, n):
    vals = [xs]
    for _ in range(n):
        vals.append(np.sin(vals[-1]))
    g = np.ones_like(xs)
    for i in range(n, 0, -1):
        g = g * np.cos(vals[i - 1])
    return g, vals


def test_backward_reuses_the_memory_of_saved_inputs_only_it_holds():
    # y_i = sin(y_{i-1}): each node's saved input is held by that node alone once the caller
    # keeps only the loss, so its cos and the product go into the input's own memory and the
    # backward needs no buffer beyond the forward's
    xs = np.linspace(-2, 2, _BIG)
    x = tl.asarray(xs).requires_grad_()
    y = x
    for _ in range(6):
        y = tl.sin(y)
    loss = y.sum()
    del y
    stats = tl.cpu.memory_stats
    tl.cpu.reset_peak_stats()
    before = stats()["allocated_bytes.current"]
    loss.backward()
    peak = stats()["allocated_bytes.peak"] - before
    assert peak <= _BIG * 8 * 1, peak  # at most x.grad's copy at the end
    expected, _ = _sin_chain_grad(xs, 6)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)
    np.testing.assert_array_equal(x.numpy(), xs)  # the leaf (held by us) is never reused


@pytest.mark.parametrize("holder", ["tensor", "view", "numpy", "retain_graph", "create_graph"])
def test_backward_never_reuses_memory_someone_else_can_see(holder):
    xs = np.linspace(-2, 2, _BIG)
    x = tl.asarray(xs).requires_grad_()
    ys = _sin_chain(x, 4)
    keep = {"tensor": ys[2], "view": ys[2][::2], "numpy": ys[2].numpy()}.get(holder)
    before = None if keep is None else np.array(keep.numpy() if holder != "numpy" else keep)
    loss = ys[-1].sum()
    del ys
    if holder == "create_graph":
        (g,) = tl.autograd.grad(loss, [x], create_graph=True)
        got = g.detach().numpy()
    else:
        loss.backward(retain_graph=holder == "retain_graph")
        got = x.grad.numpy()
    expected, vals = _sin_chain_grad(xs, 4)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    if keep is not None:
        after = keep.numpy() if holder != "numpy" else keep
        np.testing.assert_array_equal(after, before)
        np.testing.assert_allclose(before, vals[2][::2] if holder == "view" else vals[2],
                                   rtol=1e-15)
    if holder == "retain_graph":
        x.grad = None
        loss.backward()  # the saved tensors are intact for the second pass
        np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)


def test_recorded_inputs_of_every_kind_route_their_gradients():
    # the generated recorder's edge rules: a leaf that requires grad, a tensor that does not,
    # an op's output, and a view of an output (NumPy's derivative as the oracle)
    xs = np.array([0.5, -1.0, 2.0])
    x = leaf(xs)
    c = tl.asarray(np.array([3.0, 4.0, 5.0]))
    h = x * x                 # an output
    v = h[1:]                 # a view of an output
    y = tl.sin(x) * c + h * 2.0
    z = (y[1:] * v).sum()
    z.backward()
    h_np = xs * xs
    y_np = np.sin(xs) * c.numpy() + 2 * h_np
    dy = np.zeros(3)
    dy[1:] = h_np[1:]
    dh = 2 * dy
    dh[1:] += y_np[1:]
    np.testing.assert_allclose(x.grad.numpy(), np.cos(xs) * c.numpy() * dy + 2 * xs * dh,
                               rtol=1e-12)
    assert c.grad is None


def test_saved_result_is_checked_and_freed():
    x = leaf([0.5, 1.0])
    y = tl.exp(x)             # its formula reads the saved result
    loss = (y * 1.0).sum()
    y.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()
    y = tl.exp(x)
    loss = y.sum()
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.5, 1.0]), rtol=1e-12)
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()
