"""Finalizers inside locks: run the cyclic GC at every few lines of tensorlib's runtime code
(allocators, pinned cache, streams, events, DLPack, profiler) while reference cycles holding
tensors die, in several threads at once. Run by tests/runtime/test_finalizer_safety.py in a child
process: ``python finalizer_torture.py DEVICE ITERATIONS THREADS TIMEOUT_S``.

A finalizer that waits for a lock its own thread holds hangs; faulthandler then prints every
thread's stack and exits 1, so a regression fails with a traceback instead of hanging the suite.
On success it checks that no memory was lost or double-counted and prints "ok".
"""
import faulthandler
import gc
import os
import sys
import threading

device, iterations, nthreads, timeout_s = (sys.argv[1], int(sys.argv[2]), int(sys.argv[3]),
                                           float(sys.argv[4]))
WARMUP_LIMIT_S = 600  # first-use compiles on a cold cache; the traced phase gets timeout_s
faulthandler.dump_traceback_later(WARMUP_LIMIT_S, exit=True)
if device == "cuda":
    os.environ["TENSORLIB_CUDA_BACKEND"] = "interpret"
    os.environ.setdefault("TENSORLIB_CUDA_MEMORY", str(1 << 30))

import numpy as np  # noqa: E402

import tensorlib as tl  # noqa: E402

# Frames of these files get line events; every few of them the tracer collects garbage.
_LOCKED_CODE = tuple(os.path.join("tensorlib", p) for p in (
    "runtime", "storage.py", "dlpack.py", "profiler", "streams.py", "cuda.py", "random.py",
    os.path.join("kernels", "cuda", "launch.py"), os.path.join("dispatch", "keys.py")))
_collections = [0]


def _tracer():
    count = [0]

    def local(frame, event, arg):
        count[0] += 1
        if count[0] % 4 == 0:
            _collections[0] += 1
            gc.collect()
        return local

    def global_(frame, event, arg):
        return local if frame.f_code.co_filename.endswith(".py") and \
            any(p in frame.f_code.co_filename for p in _LOCKED_CODE) else None
    return global_


class Cycle:
    """Garbage only the cyclic GC frees: it holds tensors (and a NumPy view of one)."""

    def __init__(self, *payload):
        self.me = self
        self.payload = payload


def _work(seed, errors, profile=False):
    try:
        rng = np.random.default_rng(seed)
        side = tl.Stream(device=device)
        for i in range(iterations):
            n = int(rng.integers(1, 2000))
            ref = rng.standard_normal(n).astype(np.float32)
            x = tl.asarray(ref).to(device)
            Cycle(x, tl.empty((n,), device=device), tl.ones((3, 5), device=device))
            y = x * 2.0 + 1.0
            Cycle(y[::2], tl.zeros((7,), device=device))
            side.wait_stream(tl.streams.current_stream(device))  # y is written on the current stream
            with tl.stream(side):
                z = tl.add(y, 1.0)
                Cycle(tl.empty((64,), device=device))
            if device == "cuda":
                y.record_stream(side)  # freeing y records an event on `side`
                pinned = tl.asarray(ref).pin_memory()
                Cycle(pinned.to(device, non_blocking=True), pinned)
            side.synchronize()
            Cycle(np.from_dlpack(z.cpu()), z)
            if profile and i % 5 == 0:  # one profiler at a time, process-wide
                with tl.profiler.profile(profile_memory=True):
                    Cycle(tl.sum(x * x), tl.empty((32,), device=device))
            got = z.cpu().numpy()
            want = ref * np.float32(2.0) + np.float32(1.0) + np.float32(1.0)
            if not np.array_equal(got, want):
                raise AssertionError(f"iteration {i}: wrong result (memory reused too early?)")
            del x, y, z
    except BaseException as e:  # noqa: BLE001 - reported by the main thread
        errors.append(e)


def _allocated():
    gc.collect()
    stats = {"cpu": tl.cpu.memory_stats()["allocation.current"]}
    if device == "cuda":
        stats["cuda"] = tl.cuda.memory_stats()["allocation.all.current"]
        stats["pinned"] = tl.cuda.host_memory_stats()["allocation.current"]
    return stats


def main():
    errors = []
    _work(0, errors, profile=True)  # warm up: compiles and first-use imports outside the tracer
    if errors:
        raise errors[0]
    tl.synchronize(device)
    before = _allocated()
    gc.freeze()  # what exists now is never garbage: keeps each collection cheap
    faulthandler.dump_traceback_later(timeout_s, exit=True)
    tracer = _tracer()
    threading.settrace(tracer)
    threads = [threading.Thread(target=_work, args=(s, errors)) for s in range(1, nthreads)]
    for t in threads:
        t.start()
    sys.settrace(tracer)
    _work(nthreads, errors, profile=True)
    sys.settrace(None)
    threading.settrace(None)
    for t in threads:
        t.join()
    gc.unfreeze()
    if errors:
        raise errors[0]
    tl.synchronize(device)
    after = _allocated()
    if after != before:
        raise AssertionError(f"allocations before {before} != after {after}: lost or "
                             f"double-counted frees")
    if device == "cuda":
        from tensorlib.runtime.cuda import context
        for alloc in list(context.state.allocators.values()):
            alloc.check_invariants()
    faulthandler.cancel_dump_traceback_later()
    print(f"ok: {_collections[0]} collections inside runtime code")


if __name__ == "__main__":
    main()
