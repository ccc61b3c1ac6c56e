"""Recording: the ``profile`` context, the Profiler dispatch-key kernel, the CPU-stream kernel
sink and user ranges; the CUDA driver tap is in ``_cuda_tap.py``, the allocation hooks in
``_memory.py``. Everything here appends tuples to lists while profiling; the lists become a
``Trace`` (``_build.py``, ``_trace.py``) when the profiler stops.

Costs while off: none on the op path (the Profiler key is only in the include set of a thread
that entered ``profile``), none in the allocator (``Storage`` methods are swapped in and out),
none in the driver (methods are shadowed on the driver instance while profiling).
"""
from __future__ import annotations

import os
import sys
import threading

from ..dispatch.keys import DispatchKey
from ..dispatch.keys import set_tls_keys as _set_tls_keys, tls as _keys_tls
from ..runtime.cpu import streams as _cs
from ..tensor import Tensor as _Tensor
from ._build import build_trace
from ._common import _ids, _ns, _tid, _tls
from ._cuda_tap import _DriverTap
from ._memory import _memory_baseline, _memory_hook

__all__ = ["ProfilerError", "profile", "record_function"]

_PROFILER_BIT = 1 << DispatchKey.Profiler
_CUDA_BIT = 1 << DispatchKey.CUDA
_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

_active = None            # the running profile
_state_lock = threading.Lock()


class ProfilerError(RuntimeError):
    """Misuse of the profiler: nested profilers, results asked for before profiling ended."""


# ---- ops: the Profiler dispatch key ------------------------------------------------------------
def _op_kernel(op, ks, args):
    p = _active
    if p is None:
        return op.redispatch(ks, args)
    if p._extra:
        return _op_kernel_full(p, op, ks, args)
    t = _tls
    parent = t.cur
    t.cur = oid = next(_ids)
    place = _cuda_place(args) if ks & _CUDA_BIT else _cs.tls.queue.id
    t0 = _ns()
    try:
        return op.redispatch(ks, args)
    finally:
        t1 = _ns()
        t.cur = parent
        p._ops.append(("op", oid, parent, op.name, t.tid, t0, t1, place, None))


def _op_kernel_full(p, op, ks, args):
    """With record_shapes / with_stack / NVTX."""
    t = _tls
    parent = t.cur
    t.cur = oid = next(_ids)
    place = _cuda_place(args) if ks & _CUDA_BIT else _cs.tls.queue.id
    extra = (_shapes(args) if p.record_shapes else None,
             _user_stack() if p.with_stack else None)
    nv = p._nvtx
    if nv is not None:
        nv.push_range(op.name)
    t0 = _ns()
    try:
        return op.redispatch(ks, args)
    finally:
        t1 = _ns()
        t.cur = parent
        if nv is not None:
            nv.pop_range()
        p._ops.append(("op", oid, parent, op.name, t.tid, t0, t1, place, extra))


def _cuda_place(args):
    idx = None
    for a in args:
        st = getattr(a, "_storage", None)
        if st is not None and st.device.type == "cuda":
            idx = st.device.index
            break
        if getattr(a, "type", None) == "cuda" and hasattr(a, "index"):
            idx = a.index
            break
    try:
        from ..runtime.cuda import context
        from ..runtime.cuda.streams import current_handle
        if idx is None:
            idx = context.current_device()
        return f"cuda:{idx}", current_handle(idx).id
    except Exception:  # noqa: BLE001 - the op itself reports CUDA errors
        return "cuda", 0


def _shapes(args):
    shapes, dtypes = [], []
    for a in args:
        if type(a) is _Tensor:
            shapes.append(a._shape)
            dtypes.append(a._dtype.name)
        elif isinstance(a, (list, tuple)) and a and all(type(t) is _Tensor for t in a):
            shapes.append(tuple(t._shape for t in a))
            dtypes.append("TensorList")
        else:
            shapes.append(())
            dtypes.append("None" if a is None else "Scalar" if isinstance(
                a, (bool, int, float, complex)) else type(a).__name__)
    return tuple(shapes), tuple(dtypes)


def _user_stack(depth=3, limit=8):
    """'file:line(function)' of the caller's frames outside tensorlib, innermost first."""
    f = sys._getframe(depth)
    out = []
    while f is not None and len(out) < limit:
        fn = f.f_code.co_filename
        if not (fn.startswith(_PKG_DIR) or fn.startswith("<dispatch ")
                or fn.startswith("<tensorlib.")):
            out.append(f"{fn}:{f.f_lineno}({f.f_code.co_name})")
        f = f.f_back
    return tuple(out)


# ---- kernels on CPU streams (the launch helper calls these) -------------------------------------
class _KernelSink:
    """What ``runtime/cpu/streams.launch`` reports to while profiling (see its
    ``set_profiler``)."""

    __slots__ = ("tls", "inline", "p")

    def __init__(self, p):
        self.p = p
        self.tls = _tls
        self.inline = p._inline.append

    def launch(self, q, fn, name, nbytes):
        t = _tls
        t0 = _ns()
        return (self.p._worker_done, name, nbytes, t.cur, t.tid, t0, _ns())


# ---- the profile context ------------------------------------------------------------------------
def _register_fallback():
    # Checked at every start, not once: whoever removed or replaced the Profiler fallback since
    # (a test fixture, another tool) must not leave this profiler recording nothing.
    from ..dispatch.dispatcher import fallback, get_fallback
    if get_fallback(DispatchKey.Profiler) is not _op_kernel:
        fallback(DispatchKey.Profiler, _op_kernel)


class profile:
    """``with tl.profiler.profile(record_shapes=False, profile_memory=False, with_stack=False)
    as prof:`` records every op dispatched on this thread, every kernel / copy on every stream
    (CPU streams, CUDA streams), allocations (``profile_memory``) and ``record_function``
    ranges. Results once the block has ended: ``prof.key_averages()``, ``prof.overlap()``,
    ``prof.export_chrome_trace(path)``, ``prof.plot_timeline(path)``.

    ``activities``: None (CPU, and CUDA when it is available) or a subset of ``{"cpu",
    "cuda"}``. ``use_nvtx``: None (NVTX ranges on a real GPU when the ``nvtx`` package is
    installed), True or False. Only one profiler may run at a time.
    """

    def __init__(self, record_shapes=False, profile_memory=False, with_stack=False,
                 activities=None, use_nvtx=None):
        self.record_shapes = bool(record_shapes)
        self.profile_memory = bool(profile_memory)
        self.with_stack = bool(with_stack)
        if activities is not None:
            activities = {str(a).lower().split(".")[-1] for a in activities}
            bad = activities - {"cpu", "cuda"}
            if bad:
                raise ValueError(f"profile(): unknown activities {sorted(bad)}; expected "
                                 f"'cpu' and/or 'cuda'")
        self.activities = activities
        self.use_nvtx = use_nvtx
        self._trace = None
        self._running = False
        self._nvtx = None
        self._extra = False

    # -- lifecycle ------------------------------------------------------------------------------
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        global _active
        with _state_lock:
            if _active is not None:
                what = "this profiler is" if _active is self else "another profiler is"
                raise ProfilerError(f"profile(): {what} already running; profilers cannot be "
                                    f"nested")
            _active = self
        try:
            self._begin()
        except BaseException:
            with _state_lock:
                _active = None
            raise

    def _begin(self):
        _register_fallback()
        self._ops, self._inline, self._cpu_async, self._dev_kernels = [], [], [], []
        self._memory = []
        self._trace = None
        self._tap = None
        self._nvtx = None
        driver = None
        if self.activities is None or "cuda" in self.activities:
            from ..runtime.cuda import context
            if self.activities is not None or context.is_available():
                driver = context.get_driver()
        if driver is not None:
            self._tap = _DriverTap(self, driver)
            if self.use_nvtx is not False and driver.name == "real":
                try:
                    import nvtx
                    self._nvtx = nvtx
                except ImportError:
                    if self.use_nvtx:
                        raise ProfilerError("profile(use_nvtx=True): the 'nvtx' package is "
                                            "not installed") from None
        self._extra = self.record_shapes or self.with_stack or self._nvtx is not None
        self._mem_base = _memory_baseline() if self.profile_memory else {}
        self._thread_names = {_tid(): threading.current_thread().name}
        self._start_ns = _ns()
        if self._tap is not None:
            self._tap.install()
            tap = self._tap
            from ..kernels.cuda import launch as cuda_launch
            cuda_launch.set_kernel_timer(lambda stream, name, fn: tap._timed(
                stream, name, "kernel", 0, "", "cudaLaunchKernel", fn, ()))
        if self.profile_memory:
            from ..storage import set_memory_hook
            set_memory_hook(_memory_hook(self))
        _cs.set_profiler(_KernelSink(self))
        from ..autograd import engine as _autograd_engine
        _autograd_engine.set_node_observer(record_function)  # backward nodes as ranges
        self._saved_include = _keys_tls.included & _PROFILER_BIT
        _set_tls_keys(_keys_tls.included | _PROFILER_BIT, _keys_tls.excluded)
        self._running = True

    def stop(self):
        global _active
        if not self._running:
            raise ProfilerError("profile.stop(): the profiler is not running")
        _set_tls_keys((_keys_tls.included & ~_PROFILER_BIT) | self._saved_include,
                      _keys_tls.excluded)
        self._running = False
        try:
            # Queued work launched while profiling must finish before its records are read
            # (errors stay with the streams' owners).
            _cs.synchronize_all(raise_error=False)
            if self._tap is not None:
                self._tap.drain()
                self._tap.collect()
        finally:
            end = _ns()
            _cs.set_profiler(None)
            from ..autograd import engine as _autograd_engine
            _autograd_engine.set_node_observer(None)
            if self.profile_memory:
                from ..storage import set_memory_hook
                set_memory_hook(None)
            if self._tap is not None:
                from ..kernels.cuda import launch as cuda_launch
                cuda_launch.set_kernel_timer(None)
                self._tap.uninstall()
            with _state_lock:
                _active = None
        self._end_ns = end
        self._build()

    def _device_kernel(self, item):
        # Another thread's work launched while this profiler ran may finish after it stopped
        # (the driver tap sees every thread): drop its record, never fail the user's stream.
        kernels = self._dev_kernels
        if kernels is not None:
            kernels.append(item)

    def _worker_done(self, sid, t0, t1, rec):
        # Only atomic values in what is kept: the GC then stops tracking the tuples, so
        # long profiles do not slow every collection down.
        done = self._cpu_async
        if done is not None:  # None: finished after the profiler stopped (another thread's)
            done.append((sid, t0, t1) + rec[1:])

    def _build(self):
        self._trace = build_trace(self)
        self._ops = self._inline = self._cpu_async = self._dev_kernels = self._memory = None

    # -- results --------------------------------------------------------------------------------
    def _finished(self, what):
        if self._running:
            raise ProfilerError(f"{what}(): the profiler is still running; call it after the "
                                f"`with profile()` block has ended")
        if self._trace is None:
            raise ProfilerError(f"{what}(): nothing was profiled yet; use it after a "
                                f"`with tl.profiler.profile() as prof:` block")
        return self._trace

    @property
    def trace(self):
        """The recorded ``Trace`` (ops, kernels, copies, memory)."""
        return self._finished("trace")

    def events(self):
        """The recorded ops and ranges, in start order."""
        return self._finished("events").ops

    def key_averages(self, group_by_input_shape=False):
        return self._finished("key_averages").key_averages(group_by_input_shape)

    def overlap(self):
        return self._finished("overlap").overlap()

    def export_chrome_trace(self, path):
        self._finished("export_chrome_trace").export_chrome_trace(path)

    def plot_timeline(self, path):
        self._finished("plot_timeline").plot_timeline(path)

    def __repr__(self):
        state = "running" if self._running else "finished" if self._trace else "not started"
        return f"<tensorlib.profiler.profile {state}>"


# ---- user ranges --------------------------------------------------------------------------------
class record_function:
    """``with tl.profiler.record_function("name"):`` (or as a decorator) marks a range shown on
    the host thread's track, with the ops inside it as children. Free when no profiler runs."""

    __slots__ = ("name", "_p", "_id", "_parent", "_t0")

    def __init__(self, name):
        if not isinstance(name, str):
            raise TypeError(f"record_function(): argument 'name' must be a str, got "
                            f"{type(name).__name__}")
        self.name = name
        self._p = None

    def __enter__(self):
        p = _active
        if p is None or not p._running:
            self._p = None
            return self
        self._p = p
        t = _tls
        self._parent = t.cur
        t.cur = self._id = next(_ids)
        if p._nvtx is not None:
            p._nvtx.push_range(self.name)
        self._t0 = _ns()
        return self

    def __exit__(self, *exc):
        p = self._p
        if p is None:
            return False
        t1 = _ns()
        t = _tls
        if t.cur == self._id:
            t.cur = self._parent
        if p._nvtx is not None:
            p._nvtx.pop_range()
        ops = p._ops
        if ops is not None:
            extra = (None, _user_stack(2)) if p.with_stack else None
            ops.append(("range", self._id, self._parent, self.name, t.tid, self._t0, t1,
                        _cs.tls.queue.id, extra))
        self._p = None
        return False

    def __call__(self, fn):
        import functools
        name = self.name

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record_function(name):
                return fn(*args, **kwargs)
        return wrapper
