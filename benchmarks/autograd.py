"""Autograd costs (issue 15's speed targets), as ratios measured in one run.

Run: python benchmarks/autograd.py [--rounds N] [--only overhead,chain,mlp,xent,memory]

* overhead: a 1-element float32 ``mul`` whose inputs require grad (the graph is recorded and
  dropped) against the same call without grad. Target: ratio <= 1.5 (PyTorch: ~1.4).
* chain: ``backward()`` of a chain of 1,000 1-element ops (mul / add by a scalar, sin),
  per node. Target: <= 10 us per node.
* mlp: one training step of a 784-512-512-10 ReLU MLP, batch 256, float32 (forward,
  cross-entropy, backward, Adam step), in ms, against the same step written by hand in NumPy
  (forward, backward and Adam as NumPy expressions on the same BLAS). Target: <= 1.0x
  PyTorch-CPU (its column appears only when PyTorch is installed; it is not a dependency).
* xent: ``F.cross_entropy`` forward + backward on (256, 10) float32 logits (the MLP's loss;
  the plain case's fused kernel pair), in us per call, against the same by hand in NumPy and
  PyTorch-CPU when installed.
* memory: peak allocated bytes of the host allocator (tl.cpu.memory_stats) during the forward
  of a 200-op pointwise chain (sin, which saves its input) over 1e6 float32, and during its
  backward, with the chain's last output held by the caller and released. Target: backward
  peak <= forward peak (saved tensors freed as their node runs).

PyTorch may live in a separate virtual environment: --torch-venv PATH (or
TENSORLIB_TORCH_VENV=PATH) appends its site-packages to sys.path for this run only.

--threads N runs both libraries on N threads (on a busy machine one thread each gives the
steadier ratio: a parallel team waits for its slowest, descheduled thread).

Timings are the best of N rounds (on a shared machine only the minimum is stable). Small
matmuls are very sensitive to BLAS threads on a busy machine: the OpenBLAS thread setting is
printed; compare runs only with the same setting.
"""
from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np


def _best(fn, rounds, number):
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def _torch(venv=None):
    """PyTorch for the optional baseline column, or None. ``venv`` (or the environment variable
    TENSORLIB_TORCH_VENV): a separate virtual environment holding torch, so that it need not be
    installed beside tensorlib; its site-packages go at the END of sys.path, so this
    interpreter's own packages (NumPy...) still win."""
    import glob
    import sys
    from tensorlib.bench.impls import optional_module
    venv = venv or os.environ.get("TENSORLIB_TORCH_VENV")
    if venv:
        sites = sorted(glob.glob(os.path.join(venv, "lib", "python*", "site-packages")))
        if not sites:
            raise SystemExit(f"--torch-venv {venv!r}: no lib/python*/site-packages in it")
        sys.path.extend(s for s in sites if s not in sys.path)
    return optional_module("torch")  # the optional baseline column only


# ---------------------------------------------------------------- overhead
def bench_overhead(tl, torch, rounds):
    a = tl.asarray(np.array([1.5], np.float32))
    b = tl.asarray(np.array([0.5], np.float32))
    ag = tl.asarray(np.array([1.5], np.float32)).requires_grad_()
    bg = tl.asarray(np.array([0.5], np.float32)).requires_grad_()
    for _ in range(2000):  # warm: hot paths, kernel compiles, allocator caches
        a * b
        ag * bg
    plain = grad = float("inf")
    for _ in range(rounds):  # interleaved, so load changes hit both alike
        plain = min(plain, _best(lambda: a * b, 1, 2000))
        grad = min(grad, _best(lambda: ag * bg, 1, 2000))
    print(f"overhead  mul 1-elem, no grad        {plain * 1e6:8.2f} us")
    print(f"overhead  mul 1-elem, requires_grad  {grad * 1e6:8.2f} us   ratio "
          f"{grad / plain:5.2f}x  (target <= 1.5x)")
    if torch is not None:
        ta, tb = torch.tensor([1.5]), torch.tensor([0.5])
        tag, tbg = ta.clone().requires_grad_(), tb.clone().requires_grad_()
        tp = _best(lambda: ta * tb, rounds, 2000)
        tg = _best(lambda: tag * tbg, rounds, 2000)
        print(f"overhead  torch: {tp * 1e6:.2f} / {tg * 1e6:.2f} us, ratio {tg / tp:.2f}x")
    return grad / plain


# ---------------------------------------------------------------- backward chain
def bench_chain(tl, torch, rounds, n=1000):
    def build(lib, x):
        y = x
        for i in range(n):
            k = i % 3
            y = y * 1.0001 if k == 0 else (y + 0.5 if k == 1 else lib.sin(y))
        return y.sum()

    x = tl.asarray(np.array([0.3], np.float32)).requires_grad_()
    build(tl, x).backward()  # warm
    best = float("inf")
    for _ in range(rounds):
        x.grad = None
        loss = build(tl, x)
        t0 = time.perf_counter()
        loss.backward()
        best = min(best, time.perf_counter() - t0)
    per = best / (n + 1) * 1e6
    # one plain 1-element op in this run, to tell the engine's cost from the machine's speed
    a = tl.asarray(np.array([1.5], np.float32))
    plain = _best(lambda: a * 1.0001, rounds, 2000) * 1e6
    print(f"chain     backward of {n} 1-elem ops     {best * 1e3:8.2f} ms   {per:6.2f} us/node "
          f"(target <= 10 us) = {per / plain:.1f}x a plain 1-elem mul ({plain:.2f} us)")
    if torch is not None:
        tx = torch.tensor([0.3], requires_grad=True)
        tb = float("inf")
        for _ in range(rounds):
            loss = build(torch, tx)
            t0 = time.perf_counter()
            loss.backward()
            tb = min(tb, time.perf_counter() - t0)
        print(f"chain     torch: {tb / (n + 1) * 1e6:.2f} us/node")
    return per


# ---------------------------------------------------------------- MLP step
_SIZES = (784, 512, 512, 10)
_BATCH = 256


def _mlp_data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((_BATCH, _SIZES[0])).astype(np.float32)
    y = rng.integers(0, _SIZES[-1], _BATCH)
    params = []
    for fi, fo in zip(_SIZES[:-1], _SIZES[1:]):
        bound = 1 / math.sqrt(fi)
        params.append(rng.uniform(-bound, bound, (fo, fi)).astype(np.float32))
        params.append(rng.uniform(-bound, bound, fo).astype(np.float32))
    return x, y, params


class _NumpyMLP:
    """The same step by hand: ReLU MLP forward, softmax cross-entropy, backward, Adam."""

    def __init__(self, params):
        self.p = [p.copy() for p in params]
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.t = 0

    def step(self, x, y, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8):
        p = self.p
        acts = [x]
        h = x
        n_layers = len(p) // 2
        for i in range(n_layers):
            h = h @ p[2 * i].T + p[2 * i + 1]
            if i < n_layers - 1:
                h = np.maximum(h, 0)
            acts.append(h)
        z = h - h.max(axis=1, keepdims=True)
        e = np.exp(z)
        s = e.sum(axis=1, keepdims=True)
        loss = float(np.mean(np.log(s[:, 0]) - z[np.arange(len(y)), y]))
        g = e / s
        g[np.arange(len(y)), y] -= 1
        g /= len(y)
        grads = [None] * len(p)
        for i in reversed(range(n_layers)):
            a_in = acts[i]
            grads[2 * i] = g.T @ a_in
            grads[2 * i + 1] = g.sum(axis=0)
            if i:
                g = (g @ p[2 * i]) * (acts[i] > 0)
        self.t += 1
        bc1, bc2 = 1 - b1 ** self.t, math.sqrt(1 - b2 ** self.t)
        for w, m, v, gr in zip(p, self.m, self.v, grads):
            m += (1 - b1) * (gr - m)
            v *= b2
            v += (1 - b2) * gr * gr
            w -= (lr / bc1) * (m / (np.sqrt(v) / bc2 + eps))
        return loss


def _phases(F, relu, x, y, params, opt):
    """One step, timed by phase: (forward incl. the loss, backward, optimizer step) in s, with
    either library's ``nn.functional`` ``F`` and ``relu``."""
    opt.zero_grad()
    t0 = time.perf_counter()
    h = x
    for i in range(0, len(params), 2):
        h = F.linear(h, params[i], params[i + 1])
        if i + 2 < len(params):
            h = relu(h)
    loss = F.cross_entropy(h, y)
    t1 = time.perf_counter()
    loss.backward()
    t2 = time.perf_counter()
    opt.step()
    t3 = time.perf_counter()
    return t1 - t0, t2 - t1, t3 - t2


def bench_mlp(tl, torch, rounds):
    xn, yn, pn = _mlp_data()
    x, y = tl.asarray(xn), tl.asarray(yn)
    params = [tl.asarray(p).requires_grad_() for p in pn]
    opt = tl.optim.Adam(params, lr=1e-3)
    ref = _NumpyMLP(pn)
    F = tl.nn.functional
    steps = {"tensorlib": lambda: _phases(F, F.relu, x, y, params, opt),
             "numpy": lambda: ref.step(xn, yn)}
    if torch is not None:
        tp = [torch.tensor(p, requires_grad=True) for p in pn]
        topt = torch.optim.Adam(tp, lr=1e-3)
        tx, ty = torch.tensor(xn), torch.tensor(yn)
        steps["torch"] = lambda: _phases(torch.nn.functional, torch.relu, tx, ty, tp, topt)
    for _ in range(3):  # warm
        for step in steps.values():
            step()
    # interleaved: each round runs 3 steps of each, so load changes hit all alike; a pause
    # before each library's turn lets the previous one's idle worker threads go to sleep
    # (OpenBLAS's spin ~0.1 s after a multi-threaded call, and would hold a core the next
    # library's thread team waits for)
    best = {k: float("inf") for k in steps}
    phases = {k: [float("inf")] * 3 for k in steps if k != "numpy"}
    for _ in range(rounds):
        for k, step in steps.items():
            time.sleep(0.2)
            for _ in range(3):
                t0 = time.perf_counter()
                ph = step()
                best[k] = min(best[k], time.perf_counter() - t0)
                if k in phases:
                    phases[k] = [min(a, b) for a, b in zip(phases[k], ph)]
    ours, theirs = best["tensorlib"], best["numpy"]
    print(f"mlp       784-512-512-10 b256 f32 step  {ours * 1e3:8.2f} ms   NumPy by hand "
          f"{theirs * 1e3:.2f} ms   ratio {ours / theirs:5.2f}x")
    for k, ph in phases.items():  # where the time goes (best of each phase on its own)
        print(f"mlp       {k} phases: " + ", ".join(
            f"{n} {v * 1e3:.2f} ms" for n, v in zip(("forward", "backward", "step"), ph)))
    ratio_torch = None
    if torch is not None:
        tt = best["torch"]
        ratio_torch = ours / tt
        print(f"mlp       torch: {tt * 1e3:.2f} ms/step, ratio {ratio_torch:.2f}x (target <= 1.0x)")
    return ours / theirs, ratio_torch


# ---------------------------------------------------------------- cross-entropy
def bench_xent(tl, torch, rounds, n=_BATCH, c=_SIZES[-1]):
    rng = np.random.default_rng(1)
    xn = rng.standard_normal((n, c)).astype(np.float32)
    yn = rng.integers(0, c, n)
    x, y = tl.asarray(xn).requires_grad_(), tl.asarray(yn)
    F = tl.nn.functional
    rows = np.arange(n)

    def ours():
        x.grad = None
        F.cross_entropy(x, y).backward()

    def numpy_ref():  # loss and its input gradient by hand
        z = xn - xn.max(axis=1, keepdims=True)
        e = np.exp(z)
        s = e.sum(axis=1, keepdims=True)
        loss = np.mean(np.log(s[:, 0]) - z[rows, yn])
        g = e / s
        g[rows, yn] -= 1
        g /= n
        return loss, g

    for _ in range(200):  # warm: compiles, hot paths, allocator caches
        ours()
        numpy_ref()
    t_ours = t_np = float("inf")
    for _ in range(rounds):  # interleaved
        t_ours = min(t_ours, _best(ours, 1, 300))
        t_np = min(t_np, _best(numpy_ref, 1, 300))
    print(f"xent      cross_entropy ({n}, {c}) f32 fwd+bwd  {t_ours * 1e6:8.1f} us   NumPy by hand "
          f"{t_np * 1e6:.1f} us   ratio {t_ours / t_np:5.2f}x")
    ratio_torch = None
    if torch is not None:
        tx, ty = torch.tensor(xn, requires_grad=True), torch.tensor(yn)

        def theirs():
            tx.grad = None
            torch.nn.functional.cross_entropy(tx, ty).backward()
        for _ in range(200):
            theirs()
        tt = _best(theirs, rounds, 300)
        ratio_torch = t_ours / tt
        print(f"xent      torch: {tt * 1e6:.1f} us, ratio {ratio_torch:.2f}x")
    return t_ours / t_np, ratio_torch


# ---------------------------------------------------------------- memory
def bench_memory(tl, n_ops=200, n=1_000_000):
    """Run twice: with the chain's last output still held by the caller during backward (then
    one buffer more than the forward's peak is unavoidable: every saved input and that output
    are alive when the first node needs room for its result), and released before backward,
    as a training loop that keeps only the loss does."""
    ratios = []
    for hold in (True, False):
        stats = tl.cpu.memory_stats
        x = tl.asarray(np.linspace(-1, 1, n, dtype=np.float32)).requires_grad_()
        tl.cpu.reset_peak_stats()
        start = stats()["allocated_bytes.current"]
        y = x
        for _ in range(n_ops):
            y = tl.sin(y)
        loss = y.sum()
        if not hold:
            del y
        fwd_peak = stats()["allocated_bytes.peak"] - start
        at_backward = stats()["allocated_bytes.current"] - start
        tl.cpu.reset_peak_stats()
        loss.backward()
        bwd_peak = stats()["allocated_bytes.peak"] - start
        after = stats()["allocated_bytes.current"] - start
        mb = 1 / 2 ** 20
        print(f"memory    {n_ops}-op sin chain over {n:.0e} f32, last output "
              f"{'held' if hold else 'released'} (MiB above the input): forward peak "
              f"{fwd_peak * mb:.1f}, held at backward {at_backward * mb:.1f}, backward peak "
              f"{bwd_peak * mb:.1f}, after {after * mb:.1f}; backward/forward peak "
              f"{bwd_peak / fwd_peak:.3f} (target <= 1)")
        ratios.append(bwd_peak / fwd_peak)
        del x, loss
        y = None
    return ratios


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", default="overhead,chain,mlp,xent,memory")
    parser.add_argument("--torch-venv", default=None,
                        help="a virtual environment holding torch for the baseline column "
                             "(default: $TENSORLIB_TORCH_VENV, else torch if importable)")
    parser.add_argument("--threads", type=int, default=0,
                        help="threads for both libraries (tensorlib's Numba team and BLAS, "
                             "PyTorch's intra-op pool); default: every core")
    args = parser.parse_args(argv)
    which = set(args.only.split(","))
    if args.threads:  # before tensorlib imports Numba, which reads it once
        os.environ["NUMBA_NUM_THREADS"] = str(args.threads)

    import tensorlib as tl
    torch = _torch(args.torch_venv)
    if torch is not None and args.threads:
        torch.set_num_threads(args.threads)
    if hasattr(os, "getloadavg"):
        print("load average %.2f %.2f %.2f (1, 5, 15 min)" % os.getloadavg())
    print(f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '(unset)')}, "
          f"{os.cpu_count()} CPUs; PyTorch column: {'yes' if torch else 'no (not installed)'}")
    # the machine's speed right now, for reading the absolute figures (a shared machine under
    # load can be several times slower than an idle one; the ratios are what to compare)
    one = np.ones(1, np.float32)
    np_mul = _best(lambda: one * one, args.rounds, 5000)
    py_sum = _best(lambda: sum(range(1000)), args.rounds, 500)
    print(f"scale     NumPy 1-elem multiply {np_mul * 1e6:.2f} us; Python sum(range(1000)) "
          f"{py_sum * 1e6:.1f} us (compare these across runs before comparing timings)")
    if "overhead" in which:
        bench_overhead(tl, torch, args.rounds)
    if "chain" in which:
        bench_chain(tl, torch, args.rounds)
    if "mlp" in which:
        bench_mlp(tl, torch, args.rounds)
    if "xent" in which:
        bench_xent(tl, torch, args.rounds)
    if "memory" in which:
        bench_memory(tl)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
