"""``tl.profiler``: what ran where and when — ops, kernels and copies on every stream, memory.

    with tl.profiler.profile(record_shapes=True, profile_memory=True) as prof:
        with tl.profiler.record_function("step"):
            y = model(x)
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
    print(prof.overlap())                      # busy / overlapped / hidden-copy time per stream
    prof.export_chrome_trace("trace.json")     # Perfetto / chrome://tracing

``python -m tensorlib.profiler summary trace.json`` prints the overlap report of a saved trace.

Ops are recorded through the Profiler dispatch key on the thread that entered ``profile``
(nothing is added to dispatch while no profiler runs). Kernels are timed where they run: inline
on the default CPU stream, by the worker of a CPU stream, by marker host functions on interpret
CUDA streams, by CUDA events on a real GPU. Recording never changes what is computed.
"""
from ._analysis import (SORT_KEYS, DeviceOverlap, FunctionEventAvg, KeyAverages, OverlapReport,
                        PairOverlap, StreamStats)
from ._record import ProfilerError, profile, record_function
from ._trace import KernelEvent, MemoryEvent, OpEvent, Trace, TraceFormatError, load_trace

__all__ = ["profile", "record_function", "ProfilerError", "TraceFormatError", "load_trace",
           "summary", "Trace", "OpEvent", "KernelEvent", "MemoryEvent", "KeyAverages",
           "FunctionEventAvg", "OverlapReport", "DeviceOverlap", "StreamStats", "PairOverlap",
           "SORT_KEYS"]


def summary(path) -> OverlapReport:
    """The overlap report of a Chrome trace file saved by ``export_chrome_trace``."""
    return load_trace(path).overlap()
