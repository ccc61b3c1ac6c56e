"""The fused backward of softmax / log_softmax / layer_norm (ops/normalization_backward.py: Numba
on the CPU, Triton on CUDA, interpreted here): against NumPy's closed forms and the composite
formulas, gradcheck (finite differences) through autograd on the fused path, and double
backward (the composite path, taken under create_graph)."""
from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.autograd import formulas as F
from tensorlib.autograd import gradcheck, gradgradcheck
from tensorlib.ops import normalization_backward as NB

DEVICES = ["cpu", "cuda"]


@pytest.fixture(params=["cpu", "cuda", "cuda-looped"])
def where(request, monkeypatch):
    """The device, CUDA in both Triton variants: rows in one block, or (tiny limits) looped
    over 4-lane chunks."""
    if request.param == "cpu":
        return "cpu"
    request.getfixturevalue("cuda_interpret")
    if request.param == "cuda-looped":
        from tensorlib.kernels.cuda import normalization as CN
        monkeypatch.setattr(CN, "INTERPRET_MAX_BLOCK", 4)
        monkeypatch.setattr(CN, "INTERPRET_LOOP_BLOCK", 4)
    return "cuda"


def _dev(request_device, request):
    if request_device == "cuda":
        request.getfixturevalue("cuda_interpret")
    return request_device


def _host(t):
    return np.array(t.detach().cpu().numpy() if t.device.type != "cpu" else t.detach().numpy())


def _softmax_np(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _layer_norm_grad_np(g, x, w, k, eps):
    """Closed form of d layer_norm / dx (float64), independent of tensorlib."""
    axes = tuple(range(x.ndim - k, x.ndim))
    mu = x.mean(axis=axes, keepdims=True)
    xc = x - mu
    rstd = 1 / np.sqrt((xc * xc).mean(axis=axes, keepdims=True) + eps)
    xhat = xc * rstd
    gw = g * w if w is not None else g
    return rstd * (gw - gw.mean(axis=axes, keepdims=True)
                   - xhat * (gw * xhat).mean(axis=axes, keepdims=True))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_backward_matches_numpy(where, dtype, axis):
    device = where
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 7, 5))
    g = rng.standard_normal((3, 7, 5))
    y = _softmax_np(x, axis)
    tol = 1e-12 if dtype == "float64" else 2e-6
    yt = tl.asarray(y.astype(dtype), device=device)
    gt = tl.asarray(g.astype(dtype), device=device)
    got = _host(NB.softmax_backward(gt, yt, axis))
    yd, gd = y.astype(dtype).astype(np.float64), g.astype(dtype).astype(np.float64)
    np.testing.assert_allclose(got, yd * (gd - (gd * yd).sum(axis=axis, keepdims=True)),
                               rtol=tol, atol=tol)
    ly = np.log(y)
    lyt = tl.asarray(ly.astype(dtype), device=device)
    got = _host(NB.log_softmax_backward(gt, lyt, axis))
    lyd = ly.astype(dtype).astype(np.float64)
    np.testing.assert_allclose(got, gd - np.exp(lyd) * gd.sum(axis=axis, keepdims=True),
                               rtol=tol * 4, atol=tol * 4)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("weighted", [True, False])
def test_layer_norm_backward_matches_numpy(where, dtype, weighted):
    device = where
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 2, 5)) * 3 + 1
    g = rng.standard_normal((4, 2, 5))
    w = rng.standard_normal((2, 5)) if weighted else None
    cast = (lambda a: tl.asarray(a.astype(dtype), device=device))
    got = _host(NB.layer_norm_backward(cast(g), cast(x), cast(w) if weighted else None,
                                       (2, 5), 1e-5))
    r = lambda a: None if a is None else a.astype(dtype).astype(np.float64)  # noqa: E731
    expect = _layer_norm_grad_np(r(g), r(x), r(w), 2, 1e-5)
    tol = 1e-11 if dtype == "float64" else 2e-5
    np.testing.assert_allclose(got, expect, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_layer_norm_grad_xhat_matches_numpy(where, dtype):
    # g * xhat per element: summed over rows it is the weight's gradient
    rng = np.random.default_rng(8)
    x = rng.standard_normal((3, 2, 7)) * 2 - 1
    g = rng.standard_normal((3, 2, 7))
    cast = (lambda a: tl.asarray(a.astype(dtype), device=where))  # noqa: E731
    got = _host(NB.layer_norm_grad_xhat(cast(g), cast(x), (7,), 1e-5))
    xd, gd = x.astype(dtype).astype(np.float64), g.astype(dtype).astype(np.float64)
    mu = xd.mean(axis=-1, keepdims=True)
    xhat = (xd - mu) / np.sqrt(((xd - mu) ** 2).mean(axis=-1, keepdims=True) + 1e-5)
    tol = 1e-12 if dtype == "float64" else 2e-6
    np.testing.assert_allclose(got, gd * xhat, rtol=tol, atol=tol)


@pytest.mark.parametrize("device", DEVICES)
def test_fused_equals_composite_formulas(device, request):
    """The fused kernels against the composite helpers (run with create_graph semantics:
    grad mode on and an input requiring grad, which selects the composite path)."""
    device = _dev(device, request)
    rng = np.random.default_rng(3)
    x = tl.asarray(rng.standard_normal((6, 9)), device=device)
    g = tl.asarray(rng.standard_normal((6, 9)), device=device)
    w = tl.asarray(rng.standard_normal((9,)), device=device)
    y = tl.softmax(x, axis=0)
    ly = tl.log_softmax(x, axis=1)
    with tl.no_grad():  # fused
        fused = [F.softmax_backward(g, y, 0), F.log_softmax_backward(g, ly, 1),
                 F.layer_norm_backward(g, x, w, (9,), 1e-5, "x"),
                 F.layer_norm_backward(g, x, w, (9,), 1e-5, "weight")]
    gr = g.detach().requires_grad_()  # grad mode on + requires_grad: composite
    comp = [F.softmax_backward(gr, y, 0), F.log_softmax_backward(gr, ly, 1),
            F.layer_norm_backward(gr, x, w, (9,), 1e-5, "x"),
            F.layer_norm_backward(gr, x, w, (9,), 1e-5, "weight")]
    for a, b in zip(fused, comp):
        assert not a.requires_grad and b.requires_grad  # the two paths were taken
        np.testing.assert_allclose(_host(a), _host(b), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_gradcheck_fused_path(device, request):
    device = _dev(device, request)
    rng = np.random.default_rng(4)

    def leaf(*shape):
        return tl.asarray(rng.standard_normal(shape), device=device, requires_grad=True)

    # (small on CUDA: every output element is one interpreted backward)
    assert gradcheck(lambda a: tl.softmax(a, axis=0), [leaf(3, 2)])
    assert gradcheck(lambda a: tl.log_softmax(a, axis=-1), [leaf(2, 3)])
    if device == "cuda":
        assert gradcheck(lambda a, w: tl.layer_norm(a, (3,), w), [leaf(2, 3), leaf(3)])
        return
    assert gradcheck(lambda a, w, b: tl.layer_norm(a, (2, 3), w, b),
                     [leaf(2, 2, 3), leaf(2, 3), leaf(2, 3)])
    assert gradcheck(lambda a: tl.layer_norm(a.mT, (2,)), [leaf(2, 3)])  # non-contiguous x


def test_gradgradcheck_composite_path():
    rng = np.random.default_rng(5)

    def leaf(*shape):
        return tl.asarray(rng.standard_normal(shape), requires_grad=True)

    assert gradgradcheck(lambda a: tl.softmax(a, axis=1), [leaf(2, 3)])
    assert gradgradcheck(lambda a: tl.log_softmax(a, axis=0), [leaf(3, 2)])
    assert gradgradcheck(lambda a, w: tl.layer_norm(a, (3,), w), [leaf(2, 3), leaf(3)])


def test_edge_shapes_and_dtypes():
    # 0-d softmax (gradient 0), empty rows, float16 through float32
    x = tl.asarray(1.5, requires_grad=True)
    tl.softmax(x, axis=0).backward()
    assert float(x.grad.numpy()) == 0.0
    e = tl.zeros((0, 4), dtype=tl.float64)
    assert NB.softmax_backward(e, e, -1).shape == (0, 4)
    rng = np.random.default_rng(6)
    xv = rng.standard_normal((3, 8)).astype(np.float16)
    xh = tl.asarray(xv, requires_grad=True)
    gv = rng.standard_normal((3, 8)).astype(np.float16)
    tl.layer_norm(xh, (8,)).backward(tl.asarray(gv))
    assert xh.grad.dtype == tl.float16
    expect = _layer_norm_grad_np(gv.astype(np.float64), xv.astype(np.float64), None, 1, 1e-5)
    np.testing.assert_allclose(xh.grad.numpy().astype(np.float64), expect, rtol=2e-2,
                               atol=2e-2)


def test_bad_input():
    a = tl.zeros((2, 3), dtype=tl.float64)
    with pytest.raises(ValueError, match=r"softmax_backward\(\): argument 'grad' has shape"):
        NB.softmax_backward(tl.zeros((3, 2), dtype=tl.float64), a, -1)
    with pytest.raises(TypeError, match=r"log_softmax_backward\(\): argument 'grad' has dtype"):
        NB.log_softmax_backward(tl.zeros((2, 3), dtype=tl.int32), a, -1)
    with pytest.raises(ValueError, match=r"layer_norm_backward\(\): argument "
                                         r"'normalized_shape'"):
        NB.layer_norm_backward(a, a, None, (2,), 1e-5)


@pytest.mark.parametrize("op", ["softmax_backward", "log_softmax_backward",
                                "layer_norm_backward", "layer_norm_grad_xhat"])
def test_cuda_kernels_compile_for_gpu(op, cuda_interpret, monkeypatch):
    """The GPU path without a GPU: the launches captured in compiled mode (single pass and
    looped) compile for sm_90 with the signature Triton derives from the arguments."""
    pytest.importorskip("triton")
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.runtime.jit import mangle_type
    from tensorlib.kernels.cuda import launch
    from tensorlib.kernels.cuda import normalization as CN

    captured = []
    monkeypatch.setattr(launch, "_forced", "compiled")
    monkeypatch.setattr(launch, "launch", lambda kernel, grid, args, device, **kw:
                        captured.append((kernel, grid, args, kw)))
    x = tl.asarray(np.ones((3, 40), np.float32), device="cuda")
    w = tl.asarray(np.ones((40,), np.float32), device="cuda")
    fn = {"softmax_backward": lambda: NB.softmax_backward(x, x, -1),
          "log_softmax_backward": lambda: NB.log_softmax_backward(x, x, -1),
          "layer_norm_backward": lambda: NB.layer_norm_backward(x, x, w, (40,), 1e-5),
          "layer_norm_grad_xhat": lambda: NB.layer_norm_grad_xhat(x, x, (40,), 1e-5)}[op]
    fn()
    monkeypatch.setattr(CN, "GPU_MAX_BLOCK", {4: 16, 8: 16})  # looped on these short rows
    monkeypatch.setattr(CN, "GPU_LOOP_BLOCK", {4: 32, 8: 32})
    fn()
    mine = [c for c in captured if c[0].fn.__module__.startswith("tlcuda_normbwd_")]
    assert len(mine) == 2 and {c[3]["LOOP"] for c in mine} == {False, True}
    for kernel, grid, args, kw in mine:
        assert grid == (3,)
        options = {k: kw[k] for k in ("num_warps", "enable_fp_fusion")}
        const = {k: v for k, v in kw.items() if k not in options}
        sig = {name: "constexpr" if name in const else mangle_type(value)
               for name, value in zip(kernel.arg_names, list(args) + [None] * len(const))}
        assert set(sig) == set(kernel.arg_names)
        triton.compile(ASTSource(kernel, sig, const), target=GPUTarget("cuda", 90, 32),
                       options=options)


def test_cpu_parallel_rows(whole_team):
    # above the CPU kernels' parallel grain: rows split into chunks over threads (one op: each
    # parallel variant is a slow compile)
    from tensorlib.kernels.cpu import normalization_backward as K
    from tensorlib.runtime.cpu import cores
    rng = np.random.default_rng(7)
    x = rng.standard_normal((97, 520))
    g = rng.standard_normal((97, 520))
    w = rng.standard_normal((520,))
    assert x.size >= K.PAR_GRAIN
    got = NB.layer_norm_backward(tl.asarray(g), tl.asarray(x), tl.asarray(w), (520,), 1e-5)
    np.testing.assert_allclose(got.numpy(), _layer_norm_grad_np(g, x, w, 1, 1e-5),
                               rtol=1e-10, atol=1e-10)
    if cores.threads() > 1:
        assert K._LAYER_NORM.parallel.signatures  # the parallel twin ran
