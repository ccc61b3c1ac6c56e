"""CUDA caching allocator benchmark (interpret backend; prints figures, asserts nothing).

Run: python benchmarks/cuda_allocator.py [--quick]

1. Cost of a cached ``tl.cuda.caching_allocator_alloc`` + ``caching_allocator_delete`` pair, in
   Python, for several sizes (small pool with split/merge, large pool with split/merge, a large
   exact-size segment without split). Target: <= 3 us per pair.
2. Fragmentation on a replayed transformer-like training trace (parameters, Adam state, per-layer
   saved activations, attention scores, logits, gradients, per-op temporaries), for a few model
   shapes: peak reserved / peak allocated. Target: <= 1.15.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time

os.environ["TENSORLIB_CUDA_BACKEND"] = "interpret"  # before tensorlib reads it
os.environ.setdefault("TENSORLIB_CUDA_MEMORY", str(64 << 30))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import tensorlib.cuda as tc  # noqa: E402
from tensorlib.runtime.cuda.allocator import (AllocatorConfig, CUDACachingAllocator,  # noqa: E402
                                              replay_trace)
from tensorlib.runtime.cuda.interpret import InterpretDriver  # noqa: E402

MiB = 1 << 20


# ---- 1. cached alloc/delete pair ---------------------------------------------------------------
def pair_cost(size: int, n: int, repeats: int) -> tuple:
    """(best CPU-time us, median wall-clock us) per pair over ``repeats`` runs of ``n`` pairs.
    The best-of-runs CPU time of this thread is the figure to read on a shared, loaded machine
    (other processes only ever add to a run's time)."""
    alloc, delete = tc.caching_allocator_alloc, tc.caching_allocator_delete
    tc.empty_cache()  # start from no segments, so each case measures what its label says
    delete(alloc(size))  # the segment now exists: every pair below is a cache hit
    wall, cpu = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter_ns(), time.thread_time_ns()
        for _ in range(n):
            delete(alloc(size))
        wall.append((time.perf_counter_ns() - t0) / n)
        cpu.append((time.thread_time_ns() - c0) / n)
    return min(cpu) / 1e3, statistics.median(wall) / 1e3


# ---- 2. fragmentation on a transformer-like trace ------------------------------------------------
class _AddressDriver(InterpretDriver):
    """Hands out addresses only (no host memory): the replay measures the allocator alone."""

    def __init__(self):
        super().__init__(memory=1 << 46)
        self._next = 1 << 32

    def mem_alloc(self, device, size):
        ptr = self._next
        self._next += (size + 4095) & -4096
        return ptr, None

    def mem_free(self, device, ptr):
        pass

    def mem_get_info(self, device):
        return 1 << 46, 1 << 46


def transformer_trace(layers, batch, seq, hidden, heads, vocab, steps, itemsize, seed=0):
    """('alloc', key, bytes) / ('free', key) events of a few training steps."""
    rng = random.Random(seed)
    trace = []
    key = [0]

    def alloc(nbytes):
        k = key[0]
        key[0] += 1
        trace.append(("alloc", k, int(nbytes)))
        return k

    def free(k):
        trace.append(("free", k))

    def temp(nbytes):  # a short-lived per-op buffer
        free(alloc(nbytes))

    tok = batch * seq
    act = tok * hidden * itemsize
    params = []
    for shape in [(vocab, hidden), (seq, hidden)]:
        params.append(alloc(shape[0] * shape[1] * itemsize))
    layer_shapes = [(hidden, 3 * hidden), (3 * hidden,), (hidden, hidden), (hidden,),
                    (hidden, 4 * hidden), (4 * hidden,), (4 * hidden, hidden), (hidden,),
                    (hidden,), (hidden,), (hidden,), (hidden,)]
    param_sizes = [(vocab * hidden) * itemsize, seq * hidden * itemsize]
    for _ in range(layers):
        for shape in layer_shapes:
            n = 1
            for d in shape:
                n *= d
            params.append(alloc(n * itemsize))
            param_sizes.append(n * itemsize)
    optim = []
    for step in range(steps):
        tokens = alloc(tok * 8)
        x = alloc(act)
        temp(tok * 8)
        saved = []
        for _ in range(layers):
            ln = alloc(act)
            stats = alloc(tok * 4 * 2)
            qkv = alloc(3 * act)
            temp(3 * act)  # the q/k/v head transposes
            scores = alloc(batch * heads * seq * seq * itemsize)
            probs = alloc(batch * heads * seq * seq * itemsize)
            free(scores)
            mask = alloc(batch * heads * seq * seq)  # dropout mask (bytes)
            ctx = alloc(act)
            temp(act)
            out = alloc(act)
            res1 = alloc(act)
            ln2 = alloc(act)
            stats2 = alloc(tok * 4 * 2)
            h1 = alloc(4 * act)
            h2 = alloc(4 * act)  # gelu
            o2 = alloc(act)
            res2 = alloc(act)
            free(x)
            x = res2
            saved.append([ln, stats, qkv, probs, mask, ctx, out, res1, ln2, stats2, h1, h2, o2])
        logits = alloc(tok * vocab * itemsize)
        lse = alloc(tok * 4)
        grad_logits = alloc(tok * vocab * itemsize)
        free(logits)
        free(lse)
        grads = [None] * len(params)
        gx = alloc(act)
        grads[0] = alloc(param_sizes[0])
        free(grad_logits)
        free(x)
        for li in reversed(range(layers)):
            base = 2 + li * len(layer_shapes)
            ln, stats, qkv, probs, mask, ctx, out, res1, ln2, stats2, h1, h2, o2 = saved.pop()
            for j, nbytes in enumerate(param_sizes[base:base + len(layer_shapes)]):
                grads[base + j] = alloc(nbytes)
            g4 = alloc(4 * act)
            temp(4 * act)
            free(h2)
            free(h1)
            g = alloc(act)
            temp(rng.choice([act, 2 * act]))
            free(o2)
            free(ln2)
            free(stats2)
            gprobs = alloc(batch * heads * seq * seq * itemsize)
            free(g4)
            gscores = alloc(batch * heads * seq * seq * itemsize)
            free(gprobs)
            free(probs)
            free(mask)
            gqkv = alloc(3 * act)
            free(gscores)
            temp(3 * act)
            free(qkv)
            free(ctx)
            free(out)
            free(res1)
            free(ln)
            free(stats)
            free(gqkv)
            free(gx)
            gx = g
        grads[1] = alloc(param_sizes[1])
        free(gx)
        free(tokens)
        if not optim:  # Adam state, created at the first step
            optim = [(alloc(n), alloc(n)) for n in param_sizes]
        for gi, nbytes in zip(grads, param_sizes):
            temp(nbytes)  # the update's temporary
            free(gi)
    for k in params:
        free(k)
    for m, v in optim:
        free(m)
        free(v)
    return trace


MODELS = [
    # name, layers, batch, seq, hidden, heads, vocab, itemsize
    ("GPT-2 small fp16  (12L, 768, b8 s512)", 12, 8, 512, 768, 12, 50257, 2),
    ("GPT-2 medium fp32 (24L, 1024, b4 s1024)", 24, 4, 1024, 1024, 16, 50257, 4),
    ("BERT-base fp32    (12L, 768, b32 s128)", 12, 32, 128, 768, 12, 30522, 4),
    ("small LM fp16     (6L, 512, b16 s256)", 6, 16, 256, 512, 8, 32000, 2),
]


def fragmentation(model, steps, conf=None):
    name, layers, batch, seq, hidden, heads, vocab, itemsize = model
    trace = transformer_trace(layers, batch, seq, hidden, heads, vocab, steps, itemsize)
    driver = _AddressDriver()
    alloc = CUDACachingAllocator(driver, 0, config=AllocatorConfig.parse(conf))
    t0 = time.perf_counter()
    stats = replay_trace(alloc, trace)
    dt = time.perf_counter() - t0
    n_alloc = sum(1 for e in trace if e[0] == "alloc")
    peak_alloc = stats["allocated_bytes.all.peak"]
    peak_req = stats["requested_bytes.all.peak"]
    peak_res = stats["reserved_bytes.all.peak"]
    driver.shutdown()
    return name, n_alloc, peak_req, peak_alloc, peak_res, dt


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and steps")
    args = parser.parse_args(argv)
    n, repeats, steps = (2_000, 30, 2) if args.quick else (5_000, 200, 3)

    print(f"backend: {tc.backend()}  (Python {sys.version.split()[0]})")
    print("\n1. cached caching_allocator_alloc + caching_allocator_delete pair (target <= 3 us)")
    for label, size in (("512 B   (small pool, split + merge)", 512),
                        ("100 KiB (small pool, split + merge)", 100 << 10),
                        ("2 MiB   (large pool, split + merge)", 2 * MiB),
                        ("16 MiB  (large pool, exact segment)", 16 * MiB)):
        cpu, wall = pair_cost(size, n, repeats)
        print(f"   {label}: {cpu:5.2f} us per pair (best CPU time; median wall {wall:5.2f} us)"
              f"  [{'ok' if cpu <= 3.0 else 'OVER'}]")

    print("\n2. fragmentation on replayed transformer-like traces (target peak reserved / peak "
          "allocated <= 1.15)")
    print(f"   {'model':42s} {'allocs':>7s} {'peak req':>10s} {'peak alloc':>11s} "
          f"{'peak resv':>10s} {'resv/alloc':>10s} {'resv/req':>9s} {'replay':>8s}")
    worst = 0.0
    for model in MODELS:
        name, n_alloc, req, al, res, dt = fragmentation(model, steps)
        ratio = res / al
        worst = max(worst, ratio)
        print(f"   {name:42s} {n_alloc:7d} {req / MiB:8.0f}Mi {al / MiB:9.0f}Mi "
              f"{res / MiB:8.0f}Mi {ratio:10.3f} {res / req:9.3f} {dt * 1e3:6.0f}ms")
    print(f"   worst resv/alloc: {worst:.3f}  [{'ok' if worst <= 1.15 else 'OVER'}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
