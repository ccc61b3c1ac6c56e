"""tl.optim: SGD / Adam / AdamW against NumPy reference implementations of PyTorch's update
rules, one fused launch per (device, dtype), state dicts, zero_grad, bad input; CUDA on the
interpret backend against the CPU kernels."""
import os
import subprocess
import sys

import numpy as np
import pytest

import tensorlib as tl
from helpers import ptxas_available
from tensorlib.runtime.cpu import streams as cpu_streams


# ---------------------------------------------------------------- NumPy references
def sgd_ref(p, grads, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
            maximize=False):
    p = p.copy()
    buf = None
    for g in grads:
        d = -g if maximize else g
        d = d + weight_decay * p
        if momentum:
            buf = d.copy() if buf is None else momentum * buf + (1 - dampening) * d
            d = d + momentum * buf if nesterov else buf
        p = p - lr * d
    return p


def adam_ref(p, grads, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
             amsgrad=False, maximize=False, decoupled=False):
    p = p.copy()
    m = np.zeros_like(p)
    v = np.zeros_like(p)
    vmax = np.zeros_like(p)
    b1, b2 = betas
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        m = m + (1 - b1) * (g - m)
        v = b2 * v + (1 - b2) * g * g
        if amsgrad:
            vmax = np.maximum(vmax, v)
        denom = np.sqrt(vmax if amsgrad else v) / np.sqrt(1 - b2 ** t) + eps
        p = p - lr / (1 - b1 ** t) * (m / denom)
    return p


def _run(opt_cls, p0, grads, dtype=tl.float64, device="cpu", **kw):
    p = tl.asarray(p0, device=device).astype(dtype).requires_grad_()
    opt = opt_cls([p], **kw)
    for g in grads:
        p.grad = tl.asarray(g, device=device).astype(dtype)
        opt.step()
    return p


def _host(t):
    return np.asarray(t.detach().cpu().astype(tl.float64).numpy())


SGD_CASES = [dict(lr=0.1), dict(lr=0.1, weight_decay=0.01), dict(lr=0.05, momentum=0.9),
             dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.1),
             dict(lr=0.05, momentum=0.8, nesterov=True),
             dict(lr=0.05, momentum=0.5, maximize=True)]
ADAM_CASES = [dict(), dict(lr=0.01, weight_decay=0.1), dict(lr=0.01, amsgrad=True),
              dict(lr=0.02, betas=(0.8, 0.99), eps=1e-6, maximize=True),
              dict(lr=0.01, betas=(0.0, 0.5))]


def _grads(rng, shape, n=4):
    return [rng.standard_normal(shape) for _ in range(n)]


@pytest.mark.parametrize("kw", SGD_CASES)
@pytest.mark.parametrize("dtype", [tl.float64, tl.float32])
def test_sgd_matches_reference(kw, dtype):
    rng = np.random.default_rng(0)
    p0 = rng.standard_normal((3, 5))
    grads = _grads(rng, p0.shape)
    got = _host(_run(tl.optim.SGD, p0, grads, dtype, **kw))
    tol = 1e-13 if dtype is tl.float64 else 2e-6
    np.testing.assert_allclose(got, sgd_ref(p0, grads, **kw), rtol=tol, atol=tol)


@pytest.mark.parametrize("kw", ADAM_CASES)
@pytest.mark.parametrize("cls,decoupled", [(tl.optim.Adam, False), (tl.optim.AdamW, True)])
@pytest.mark.parametrize("dtype", [tl.float64, tl.float32])
def test_adam_matches_reference(kw, cls, decoupled, dtype):
    rng = np.random.default_rng(1)
    p0 = rng.standard_normal((4, 3))
    grads = _grads(rng, p0.shape, 5)
    kw = dict(kw)
    if decoupled:
        kw.setdefault("weight_decay", 1e-2)  # AdamW's default
    got = _host(_run(cls, p0, grads, dtype, **kw))
    want = adam_ref(p0, grads, decoupled=decoupled, **kw)
    tol = 1e-12 if dtype is tl.float64 else 2e-6
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("name,kw", [("SGD", dict(lr=0.05, momentum=0.9, nesterov=True)),
                                     ("Adam", dict(lr=0.01, amsgrad=True)),
                                     ("AdamW", dict(lr=0.01))])
def test_big_steps_run_in_chunks_like_small_ones(monkeypatch, name, kw, parallel):
    # above PARALLEL_WORK the step runs over CHUNK-sized rows, on the parallel twin once it is
    # ready (else on the serial one): the same values as the reference for parameters that
    # span several chunks, end mid-chunk, or are tiny / empty
    from tensorlib.optim import _fused
    from tensorlib.runtime.cpu import cores
    monkeypatch.setattr(_fused, "CHUNK", 1000)
    monkeypatch.setattr(_fused, "PARALLEL_WORK", 2000)
    monkeypatch.setattr(cores, "parallel_ready", lambda *a: parallel)
    monkeypatch.setattr(cores, "threads", lambda own=False: 2)  # no one-thread cool-down on a busy machine
    monkeypatch.setattr(cores, "_blas_team_end", float("-inf"))  # no BLAS team spinning
    used = []
    real_launch = cpu_streams.launch
    monkeypatch.setattr(cpu_streams, "launch",
                        lambda fn, name, *a: (used.append(fn) if name.startswith("optim.")
                                              else None) or real_launch(fn, name, *a))
    rng = np.random.default_rng(9)
    shapes = [(3001,), (7,), (0,), (40, 50)]
    p0s = [rng.standard_normal(s) for s in shapes]
    grads = [_grads(rng, s, 3) for s in shapes]
    ps = [tl.asarray(p).astype(tl.float32).requires_grad_() for p in p0s]
    opt = getattr(tl.optim, name)(ps, **kw)
    for k in range(3):
        for p, g in zip(ps, grads):
            p.grad = tl.asarray(g[k]).astype(tl.float32)
        opt.step()
    for p, p0, g in zip(ps, p0s, grads):
        if name == "SGD":
            want = sgd_ref(p0, g, **kw)
        else:
            want = adam_ref(p0, g, decoupled=name == "AdamW",
                            **dict(kw, weight_decay=1e-2) if name == "AdamW" else kw)
        np.testing.assert_allclose(_host(p), want, rtol=2e-6, atol=2e-6)
    kname = {"SGD": "sgd_momentum", "Adam": "adam", "AdamW": "adam"}[name]
    pair = _fused._pair(_fused._cpu_module(tl.float32), kname)
    assert len(used) == 3 and all(
        fn is (pair.parallel if parallel else pair.serial) for fn in used)


def test_step_after_a_multithreaded_matmul_runs_serially(monkeypatch):
    """OpenBLAS's threads spin for ~0.1 s after a matmul they ran: a step within BLAS_SPIN_S of
    one takes the serial twin (a parallel team would wait for a core a spinner holds), later
    steps the parallel one again; the values match the reference either way."""
    from tensorlib.optim import _fused
    from tensorlib.runtime.cpu import cores
    monkeypatch.setattr(_fused, "CHUNK", 1000)
    monkeypatch.setattr(_fused, "PARALLEL_WORK", 2000)
    monkeypatch.setattr(cores, "parallel_ready", lambda *a: True)
    monkeypatch.setattr(cores, "threads", lambda own=False: 2)  # as on an idle 2-core machine
    monkeypatch.setattr(cores, "team_size", lambda: 2)
    monkeypatch.setattr(cores, "_until", 0.0)  # no cool-down from an earlier test
    monkeypatch.setattr(cores, "_blas_team_end", float("-inf"))
    clock = [1000.0]
    monkeypatch.setattr(cores, "_mono", lambda: clock[0])
    used = []
    real_launch = cpu_streams.launch
    monkeypatch.setattr(cpu_streams, "launch",
                        lambda fn, name, *a: (used.append(fn) if name.startswith("optim.")
                                              else None) or real_launch(fn, name, *a))
    # a matmul below BLAS_PARALLEL_WORK runs on one BLAS thread: no spinner left behind
    a = tl.asarray(np.ones((4, 4), np.float32))
    tl.matmul(a, a)
    assert not cores.blas_team_spinning()
    # one at or above it runs on the team
    n = 128
    assert n ** 3 >= cores.BLAS_PARALLEL_WORK
    big = tl.asarray(np.ones((n, n), np.float32))
    np.testing.assert_array_equal(tl.matmul(big, big).numpy(), np.full((n, n), n, np.float32))
    assert cores.blas_team_spinning()
    rng = np.random.default_rng(21)
    p0 = rng.standard_normal(3001)
    grads = _grads(rng, (3001,), 2)
    p = tl.asarray(p0).astype(tl.float32).requires_grad_()
    opt = tl.optim.Adam([p], lr=0.01)
    p.grad = tl.asarray(grads[0]).astype(tl.float32)
    opt.step()  # right after the team's matmul
    clock[0] += 2 * cores.BLAS_SPIN_S
    assert not cores.blas_team_spinning()
    p.grad = tl.asarray(grads[1]).astype(tl.float32)
    opt.step()  # the spinners are asleep by now
    pair = _fused._pair(_fused._cpu_module(tl.float32), "adam")
    assert used == [pair.serial, pair.parallel]
    np.testing.assert_allclose(_host(p), adam_ref(p0, grads, lr=0.01), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("dtype", [tl.float16, tl.bfloat16])
def test_half_params(dtype):
    # half types compute in float32 and round on store: close to the float64 reference at the
    # dtype's precision (states are kept in the parameter's dtype, as PyTorch does)
    rng = np.random.default_rng(2)
    p0 = rng.standard_normal(64)
    grads = _grads(rng, p0.shape, 3)
    rtol = 4e-3 if dtype is tl.float16 else 3e-2
    got = _host(_run(tl.optim.SGD, p0, grads, dtype, lr=0.1, momentum=0.9))
    want = sgd_ref(_host(tl.asarray(p0).astype(dtype)), grads, lr=0.1, momentum=0.9)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)
    got = _host(_run(tl.optim.Adam, p0, grads, dtype, lr=0.01))
    want = adam_ref(_host(tl.asarray(p0).astype(dtype)), grads, lr=0.01)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)


def test_complex_params_are_real_pairs():
    # PyTorch updates complex parameters as view_as_real: each component on its own
    rng = np.random.default_rng(3)
    p0 = rng.standard_normal(6) + 1j * rng.standard_normal(6)
    grads = [rng.standard_normal(6) + 1j * rng.standard_normal(6) for _ in range(3)]
    p = _run(tl.optim.Adam, p0, grads, tl.complex128, lr=0.05)
    as_real = lambda z: np.stack([z.real, z.imag], -1)  # noqa: E731
    want = adam_ref(as_real(p0), [as_real(g) for g in grads], lr=0.05)
    got = p.detach().numpy()
    np.testing.assert_allclose(as_real(got), want, rtol=1e-12)


# ---------------------------------------------------------------- fusion and bookkeeping
def test_one_launch_per_dtype(monkeypatch):
    calls = []
    real_launch = cpu_streams.launch

    def counting(fn, name, *args):
        calls.append(name)
        return real_launch(fn, name, *args)

    rng = np.random.default_rng(4)
    ps32 = [tl.asarray(rng.standard_normal((i + 1, 3)).astype(np.float32)).requires_grad_()
            for i in range(10)]
    ps64 = [tl.asarray(rng.standard_normal(i + 2)).requires_grad_() for i in range(3)]
    # two groups with different learning rates still share their dtype's launch
    opt = tl.optim.Adam([{"params": ps32[:5] + ps64[:1]},
                         {"params": ps32[5:] + ps64[1:], "lr": 0.1}], lr=0.01)
    grads = {id(p): rng.standard_normal(p.shape) for p in ps32 + ps64}
    for p in ps32 + ps64:
        p.grad = tl.asarray(grads[id(p)]).astype(p.dtype)
    before = [_host(p) for p in ps32 + ps64]
    versions = [p._version for p in ps32 + ps64]
    monkeypatch.setattr(cpu_streams, "launch", counting)
    opt.step()
    assert sorted(calls) == ["optim.adam_step", "optim.adam_step"]
    for i, p in enumerate(ps32 + ps64):
        lr = 0.01 if any(p is q for q in ps32[:5] + ps64[:1]) else 0.1
        want = adam_ref(before[i], [grads[id(p)]], lr=lr)
        tol = 2e-6 if p.dtype is tl.float32 else 1e-12
        np.testing.assert_allclose(_host(p), want, rtol=tol, atol=tol)
        assert p._version > versions[i]  # the write is counted
        assert p.is_leaf and p.requires_grad


def test_params_without_grad_are_skipped_and_strided_layouts():
    rng = np.random.default_rng(5)
    a = tl.asarray(rng.standard_normal((4, 3))).requires_grad_()
    b = tl.asarray(rng.standard_normal(3)).requires_grad_()
    # a parameter that is a transposed view (dense, other order) and one with a step (not
    # dense: packed, updated, written back)
    base = tl.asarray(rng.standard_normal((3, 4)))
    c = tl.matrix_transpose(base).requires_grad_()
    big = tl.asarray(rng.standard_normal(10))
    d = big[::2].requires_grad_()
    opt = tl.optim.SGD([a, b, c, d], lr=0.5, momentum=0.9)
    ga = rng.standard_normal((4, 3))
    a.grad = tl.matrix_transpose(tl.asarray(ga.T.copy()))  # a gradient in another layout
    gc = rng.standard_normal((4, 3))
    c.grad = tl.asarray(gc)
    gd = rng.standard_normal(5)
    d.grad = tl.asarray(gd)
    a0, b0, c0, d0, big0 = _host(a), _host(b), _host(c), _host(d), _host(big)
    opt.step()
    assert all(k is not b for k in opt.state) and _host(b).tolist() == b0.tolist()
    np.testing.assert_allclose(_host(a), a0 - 0.5 * ga, rtol=1e-14)
    np.testing.assert_allclose(_host(c), c0 - 0.5 * gc, rtol=1e-14)
    np.testing.assert_allclose(_host(base), (c0 - 0.5 * gc).T, rtol=1e-14)
    np.testing.assert_allclose(_host(d), d0 - 0.5 * gd, rtol=1e-14)
    np.testing.assert_array_equal(_host(big)[1::2], big0[1::2])  # untouched in between


def test_training_loop_with_backward_and_zero_grad():
    rng = np.random.default_rng(6)
    w = tl.asarray(rng.standard_normal((3, 2))).requires_grad_()
    x = tl.asarray(rng.standard_normal((8, 3)))
    target = tl.asarray(rng.standard_normal((8, 2)))
    opt = tl.optim.SGD([w], lr=0.1)
    losses = []
    for _ in range(20):
        opt.zero_grad()
        loss = tl.nn.functional.mse_loss(tl.matmul(x, w), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.7 * losses[0]
    opt.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(_host(w.grad), np.zeros((3, 2)))
    opt.zero_grad()
    assert w.grad is None


def test_closure():
    w = tl.asarray(np.array([3.0])).requires_grad_()
    opt = tl.optim.SGD([w], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss
    with tl.no_grad():  # step turns grad mode on for the closure
        loss = opt.step(closure)
    assert loss.item() == 9.0
    np.testing.assert_allclose(_host(w), [3.0 - 0.25 * 6.0])


def test_state_dict_round_trip():
    rng = np.random.default_rng(7)
    p0 = [rng.standard_normal((2, 3)), rng.standard_normal(4)]
    grads = [[rng.standard_normal(a.shape) for a in p0] for _ in range(6)]

    def make():
        ps = [tl.asarray(a).requires_grad_() for a in p0]
        return ps, tl.optim.AdamW([{"params": ps[:1]}, {"params": ps[1:], "lr": 0.05}],
                                  lr=0.01, amsgrad=True)

    ps_a, opt_a = make()
    for g in grads[:3]:
        for p, gi in zip(ps_a, g):
            p.grad = tl.asarray(gi)
        opt_a.step()
    sd = opt_a.state_dict()
    assert sd["param_groups"][1]["lr"] == 0.05 and sd["param_groups"][1]["params"] == [1]
    assert sd["state"][0]["step"] == 3
    assert set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}
    ps_b, opt_b = make()
    for pb, pa in zip(ps_b, ps_a):
        with tl.no_grad():
            pb.copy_(pa)
    opt_b.load_state_dict(sd)
    for opt, ps in ((opt_a, ps_a), (opt_b, ps_b)):
        for g in grads[3:]:
            for p, gi in zip(ps, g):
                p.grad = tl.asarray(gi)
            opt.step()
    for pa, pb in zip(ps_a, ps_b):
        np.testing.assert_array_equal(_host(pa), _host(pb))
    # the loaded state is a copy: stepping one optimizer leaves the other's state alone
    assert opt_b.state[ps_b[0]]["exp_avg"] is not opt_a.state[ps_a[0]]["exp_avg"]


def test_load_state_dict_bad_input():
    p = tl.asarray(np.ones(3)).requires_grad_()
    opt = tl.optim.Adam([p])
    with pytest.raises(ValueError, match=r"Adam.load_state_dict\(\).*'state'"):
        opt.load_state_dict({"param_groups": []})
    with pytest.raises(ValueError, match=r"Adam.load_state_dict\(\).*2 parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": [{"params": [0]}, {"params": [1]}]})
    good = opt.state_dict()
    bad = {"state": {0: {"step": 1, "exp_avg": tl.zeros((4,)), "exp_avg_sq": tl.zeros((3,))}},
           "param_groups": good["param_groups"]}
    with pytest.raises(ValueError, match=r"parameter 0: state 'exp_avg' has shape \(4,\)"):
        opt.load_state_dict(bad)
    bad = {"state": {0: {"step": -2}}, "param_groups": good["param_groups"]}
    with pytest.raises(ValueError, match=r"'step' must be a non-negative integer"):
        opt.load_state_dict(bad)


def test_bad_input():
    p = tl.asarray(np.ones(3)).requires_grad_()
    with pytest.raises(ValueError, match=r"SGD\(\): invalid 'lr'"):
        tl.optim.SGD([p], lr=-1.0)
    with pytest.raises(ValueError, match=r"SGD\(\): invalid 'momentum'"):
        tl.optim.SGD([p], momentum=float("nan"))
    with pytest.raises(ValueError, match=r"SGD\(\): nesterov"):
        tl.optim.SGD([p], nesterov=True)
    with pytest.raises(ValueError, match=r"Adam\(\): invalid 'betas\[1\]'"):
        tl.optim.Adam([p], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match=r"AdamW\(\): argument 'betas'"):
        tl.optim.AdamW([p], betas=0.9)
    with pytest.raises(ValueError, match=r"Adam\(\): invalid 'eps'"):
        tl.optim.Adam([p], eps=-1e-8)
    with pytest.raises(TypeError, match=r"Adam\(\): argument 'amsgrad' must be a bool"):
        tl.optim.Adam([p], amsgrad=1)
    with pytest.raises(TypeError, match=r"SGD\(\).*single Tensor"):
        tl.optim.SGD(p)
    with pytest.raises(ValueError, match=r"SGD\(\): got an empty parameter list"):
        tl.optim.SGD([])
    with pytest.raises(TypeError, match=r"SGD\(\): parameter 0 must be floating"):
        tl.optim.SGD([tl.asarray(np.arange(3))])
    with pytest.raises(TypeError, match=r"SGD\(\): parameter 1 must be a Tensor"):
        tl.optim.SGD([p, np.ones(3)])
    with pytest.raises(ValueError, match=r"SGD\(\): parameter 0 is not a leaf"):
        tl.optim.SGD([p * 2])
    with pytest.raises(ValueError, match=r"more than one group"):
        tl.optim.SGD([{"params": [p]}, {"params": [p]}])
    arr = np.ones(3)
    arr.flags.writeable = False
    ro2 = tl.asarray(arr).requires_grad_()
    opt = tl.optim.SGD([ro2], lr=0.1)
    ro2.grad = tl.asarray(np.ones(3))
    with pytest.raises(ValueError, match=r"SGD.step\(\): argument 'params' is read-only"):
        opt.step()
    assert all(st["step"] == 0 for st in opt.state.values())  # refused before any change
    with pytest.raises(TypeError, match=r"SGD\(\): parameters must be an ordered collection"):
        tl.optim.SGD({p})


def test_step_refuses_a_gradient_not_matching_its_parameter():
    # the .grad setter refuses these; a gradient put there another way is still caught
    p = tl.asarray(np.ones(3)).requires_grad_()
    opt = tl.optim.Adam([p])
    for bad in (tl.asarray(np.ones(4)), tl.asarray(np.ones(3, np.float32)), np.ones(3)):
        p._autograd.grad = bad
        err = TypeError if isinstance(bad, np.ndarray) else ValueError
        with pytest.raises(err, match=r"Adam.step\(\): a parameter's"):
            opt.step()
    assert not opt.state  # nothing changed


def test_step_bumps_version_seen_by_saved_tensors():
    # a graph that saved the parameter before the step can't silently use the new values
    p = tl.asarray(np.array([1.0, 2.0])).requires_grad_()
    opt = tl.optim.SGD([p], lr=0.1)
    (p * p).sum().backward()
    y = (p * p).sum()
    opt.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


# ---------------------------------------------------------------- CUDA (interpret backend)
@pytest.mark.usefixtures("cuda_interpret")
@pytest.mark.parametrize("dtype", [tl.float32, tl.float64, tl.float16, tl.bfloat16])
def test_cuda_matches_cpu(dtype):
    rng = np.random.default_rng(8)
    p0 = [rng.standard_normal((3, 700)), rng.standard_normal(5)]  # > 1 chunk, and a tiny one
    grads = [[rng.standard_normal(a.shape) for a in p0] for _ in range(3)]
    for cls, kw in ((tl.optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True)),
                    (tl.optim.SGD, dict(lr=0.1, weight_decay=0.1)),
                    (tl.optim.AdamW, dict(lr=0.01, amsgrad=True))):
        out = {}
        for dev in ("cpu", "cuda"):
            ps = [tl.asarray(a, device=dev).astype(dtype).requires_grad_() for a in p0]
            opt = cls(ps, **kw)
            for g in grads:
                for p, gi in zip(ps, g):
                    p.grad = tl.asarray(gi, device=dev).astype(dtype)
                opt.step()
            out[dev] = [_host(p) for p in ps]
        for a, b in zip(out["cpu"], out["cuda"]):
            np.testing.assert_array_equal(a, b)  # the same float arithmetic on both devices


_AOT = """
from tensorlib.kernels.cuda import launch
launch.force_compiled()
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
import tensorlib as tl
from tensorlib.optim import _fused
for dt in (tl.float32, tl.bfloat16, tl.float64):
    mod = _fused._cuda_kernels(dt, "compiled")
    for name, flag in (("sgd", None), ("sgd_momentum", "NESTEROV"), ("adam", "AMSGRAD")):
        sig = {"addr": "*i64", "sizes": "*i64", "chunks": "*i64", "coef": "*fp64",
               "BLOCK": "constexpr"}
        const = {"BLOCK": 1024}
        if flag:
            sig[flag] = "constexpr"
            const[flag] = True
        triton.compile(ASTSource(getattr(mod, name), sig, const, {}),
                       target=GPUTarget("cuda", 90, 32),
                       options={"num_warps": 4, "enable_fp_fusion": False})
        print("compiled", dt.name, name)
"""


@pytest.mark.skipif(not ptxas_available(), reason="Triton's ptxas is not available")
def test_cuda_kernels_compile_for_sm90():
    # the interpreter accepts more than the compiler: compile the real kernels to cubin
    # (no GPU needed), in a child process since compiled mode is process-wide
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(tl.__file__)) + os.pathsep + \
        env.get("PYTHONPATH", "")
    env.pop("TRITON_INTERPRET", None)
    env.pop("TENSORLIB_CUDA_BACKEND", None)
    proc = subprocess.run([sys.executable, "-c", _AOT], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    assert proc.stdout.count("compiled") == 9
