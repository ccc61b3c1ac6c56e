"""Double-buffered pipeline: copy chunk i+1 while chunk i is computed, on two streams.

    PYTHONPATH=src python examples/pipeline_overlap.py              # CPU streams
    PYTHONPATH=src python examples/pipeline_overlap.py --device cuda  # CUDA (real or interpret)
    TENSORLIB_CUDA_BACKEND=interpret PYTHONPATH=src python examples/pipeline_overlap.py \
        --device cuda --chunks 6 --size 65536

Two streams share two buffers. The copy stream fills buffer i % 2 once the compute stream has
released it (event ``free``); the compute stream starts on it once the copy is done (event
``ready``). So while chunk i is computed, chunk i+1 is already being copied. The profiler's
overlap report shows how much of the copy time was hidden under compute; ``--trace`` saves a
Chrome trace (open it in https://ui.perfetto.dev), ``--png`` a timeline (needs matplotlib).

On the CPU the "copy" is a copy kernel from pageable source arrays into the working buffers
(what an H2D staging copy is); on CUDA it is a host-to-device copy from pinned memory.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import tensorlib as tl
from tensorlib import profiler
from tensorlib import streams as gs


def compute(x):
    """A few pointwise kernels per chunk (enough work to hide a copy under)."""
    y = x * 1.5 + 0.25
    y = y * y - x
    y = tl.sin(y) * 0.5 + y
    return y * 0.125 + x


def reference(x):
    y = x * np.float32(1.5) + np.float32(0.25)
    y = y * y - x
    y = np.sin(y) * np.float32(0.5) + y
    return y * np.float32(0.125) + x


def run_cpu(chunks):
    """The pipeline on two CPU streams; returns the results (one tensor per chunk)."""
    copy_s, compute_s = tl.Stream(device="cpu"), tl.Stream(device="cpu")
    n = chunks[0].shape[0]
    bufs = [tl.empty((n,), dtype=tl.float32) for _ in range(2)]
    ready = [tl.Event(device="cpu") for _ in range(2)]
    free = [tl.Event(device="cpu") for _ in range(2)]
    out = []
    for i, src in enumerate(chunks):
        b = i % 2
        copy_s.wait_event(free[b])        # the compute stream is done with this buffer
        with tl.stream(copy_s):
            bufs[b].copy_(src)
        ready[b].record(copy_s)
        compute_s.wait_event(ready[b])    # the copy has landed
        with tl.stream(compute_s):
            out.append(compute(bufs[b]))
        free[b].record(compute_s)
    gs.synchronize("cpu")
    return out


def run_serial_cpu(chunks):
    """The same work on the default stream, one step after the other (the baseline)."""
    n = chunks[0].shape[0]
    buf = tl.empty((n,), dtype=tl.float32)
    out = []
    for src in chunks:
        buf.copy_(src)
        out.append(compute(buf))
    return out


def run_cuda(pinned, emulate_ms):
    """The pipeline on two CUDA streams (H2D copies from pinned memory); returns the device
    results. Without CUDA compute kernels, ``emulate_ms`` of device sleep stands in for the
    compute."""
    import tensorlib.cuda as tc
    copy_s, compute_s = tc.Stream(), tc.Stream()
    ready = [tc.Event() for _ in range(2)]
    free = [tc.Event() for _ in range(2)]
    out = []
    for i, src in enumerate(pinned):
        b = i % 2
        copy_s.wait_event(free[b])
        with tc.stream(copy_s):
            dev = src.to("cuda", non_blocking=True)
        ready[b].record(copy_s)
        compute_s.wait_event(ready[b])
        dev.record_stream(compute_s)      # allocated on copy_s, used on compute_s
        with tc.stream(compute_s):
            if emulate_ms:
                tc._sleep(emulate_ms / 1e3)
                out.append(dev)
            else:
                out.append(compute(dev))
        free[b].record(compute_s)
    tc.synchronize()
    return out


def cuda_compute_works() -> bool:
    from tensorlib.dispatch.stub import UnsupportedKernelError
    try:
        x = tl.asarray(np.ones(4, np.float32)).cuda()
        compute(x).cpu()
        return True
    except (UnsupportedKernelError, ImportError, RuntimeError):
        return False


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=["cpu", "cuda", "auto"], default="cpu",
                        help="cpu streams (default), cuda, or cuda when available")
    parser.add_argument("--chunks", type=int, default=8)
    parser.add_argument("--size", type=int, default=1 << 20, help="elements per chunk")
    parser.add_argument("--trace", help="write a Chrome trace here")
    parser.add_argument("--png", help="write a timeline PNG here (matplotlib)")
    args = parser.parse_args(argv)
    if args.chunks < 1 or args.size < 1:
        parser.error("--chunks and --size must be positive")

    device = args.device
    if device == "auto":
        device = "cuda" if tl.cuda.is_available() else "cpu"
    if device == "cuda" and not tl.cuda.is_available():
        print("CUDA is not available (set TENSORLIB_CUDA_BACKEND=interpret to use the "
              "interpret backend)", file=sys.stderr)
        return 2

    rng = np.random.default_rng(0)
    host = [rng.random(args.size, dtype=np.float32) for _ in range(args.chunks)]
    chunks = [tl.asarray(h) for h in host]

    emulate_ms = 0.0
    if device == "cpu":
        run = lambda: run_cpu(chunks)  # noqa: E731
    else:
        if not cuda_compute_works():
            emulate_ms = 5.0
            print(f"(no CUDA compute kernels on this backend: {emulate_ms} ms of device "
                  f"sleep per chunk stands in for the compute)")
        pinned = [c.pin_memory() for c in chunks]  # async H2D copies need pinned memory
        run = lambda: run_cuda(pinned, emulate_ms)  # noqa: E731

    run()  # warm-up: kernel compiles, allocator caches
    with profiler.profile() as prof:
        t0 = time.perf_counter()
        with profiler.record_function("pipeline"):
            results = run()
        wall = (time.perf_counter() - t0) * 1e3
    results = [r.cpu() for r in results]

    for h, r in zip(host, results):
        expect = h if emulate_ms else reference(h)
        np.testing.assert_allclose(r.numpy(), expect, rtol=2e-5, atol=1e-6)

    print(f"pipeline on {device}: {args.chunks} chunks of {args.size} float32, "
          f"{wall:.1f} ms (profiled), results checked against NumPy")
    if device == "cpu":
        best = {}
        for name, fn in (("one stream", lambda: run_serial_cpu(chunks)), ("two streams", run)):
            fn()
            times = []
            for _ in range(3):
                t0 = time.perf_counter()
                fn()
                times.append((time.perf_counter() - t0) * 1e3)
            best[name] = min(times)
        print(f"unprofiled, best of 3: one stream {best['one stream']:.1f} ms, two streams "
              f"{best['two streams']:.1f} ms")
    print()
    report = prof.overlap()
    print(report)
    if args.trace:
        prof.export_chrome_trace(args.trace)
        print(f"Chrome trace: {args.trace}  (python -m tensorlib.profiler summary "
              f"{args.trace})")
    if args.png:
        try:
            prof.plot_timeline(args.png)
            print(f"timeline: {args.png}")
        except RuntimeError as e:
            print(f"no timeline: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
