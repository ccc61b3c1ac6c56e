"""Device-generic streams and events: ``tl.Stream``, ``tl.Event``, ``tl.stream(s)``.

``tl.Stream(device="cuda:0")`` returns a ``tl.cuda.Stream`` (a subclass of ``tl.Stream``);
``tl.Event(device=...)`` likewise. ``device=None`` means the current accelerator: CUDA when it is
available, else the CPU.

CPU streams run their work on worker threads (``runtime/cpu/streams.py``); the default CPU stream
is the calling thread (inline, no overhead). Events, ``wait_event`` / ``wait_stream`` and
``elapsed_time`` behave as on CUDA. Host reads of a tensor (``numpy()``, ``item()``, printing, a
host-to-device copy) wait for queued CPU-stream work that uses its storage.

This module imports only the standard library and the (stdlib-only) CPU stream runtime at import
time (the CUDA runtime is imported on first use), so the CUDA runtime may subclass these types.
It sits in the runtime layer, below the tensors; ``tensorlib/streams.py`` is the public module
(these names and ``record_stream``, which takes a Tensor).
"""
from __future__ import annotations

from functools import partial

from .cpu import streams as _cs

__all__ = ["Stream", "Event", "CpuStream", "CpuEvent", "stream", "current_stream",
           "default_stream", "synchronize"]


def _device(device, op):
    from ..device import Device, to_device
    if device is None:
        from .cuda import context
        return Device("cuda") if context.is_available() else Device("cpu")
    return to_device(device, op=op)


class Stream:
    """A queue of device work. Construct with ``tl.Stream(device=None, priority=0)``."""

    __slots__ = ()

    def __new__(cls, device=None, priority=0, **kwargs):
        if cls is not Stream:
            return object.__new__(cls)
        dev = _device(device, "Stream")
        if dev.type == "cuda":
            from .cuda.streams import Stream as CudaStream
            return CudaStream(device=dev, priority=priority, **kwargs)
        return CpuStream(priority=priority)

    def __init__(self, *args, **kwargs):
        pass  # construction happens in __new__ (it may return a device-specific subclass)

    # The interface every device's stream implements.
    def query(self) -> bool:
        raise NotImplementedError

    def synchronize(self) -> None:
        raise NotImplementedError

    def wait_event(self, event) -> None:
        raise NotImplementedError

    def wait_stream(self, stream) -> None:
        raise NotImplementedError

    def record_event(self, event=None):
        raise NotImplementedError


class Event:
    """A marker in a stream: ``record``, ``query``, ``synchronize``, ``wait``, ``elapsed_time``."""

    __slots__ = ()

    def __new__(cls, device=None, enable_timing=False, blocking=False, interprocess=False):
        if cls is not Event:
            return object.__new__(cls)
        dev = _device(device, "Event")
        if dev.type == "cuda":
            from .cuda.streams import Event as CudaEvent
            return CudaEvent(enable_timing=enable_timing, blocking=blocking,
                             interprocess=interprocess, device=dev)
        return CpuEvent(enable_timing=enable_timing, blocking=blocking,
                        interprocess=interprocess)

    def __init__(self, *args, **kwargs):
        pass


# ---- CPU streams --------------------------------------------------------------------------------
class CpuStream(Stream):
    """A CPU stream. The default one (``tl.default_stream("cpu")``, id 0) is the calling thread:
    its work runs inline. Every other one queues its kernels for a worker thread (see
    ``runtime/cpu/streams.py``); streams come from a pool of 32 queues, round robin."""

    __slots__ = ("_handle", "_priority", "__weakref__")

    def __new__(cls, device=None, priority=0, **kwargs):
        handle = kwargs.pop("_handle", None)
        if kwargs:
            raise TypeError(f"Stream(): unexpected keyword argument {next(iter(kwargs))!r}")
        if device is not None and str(device) != "cpu":
            raise ValueError(f"CpuStream(): argument 'device' must be 'cpu', got {device!r}")
        if handle is None:
            try:
                priority = int(priority)
            except (TypeError, ValueError):
                raise TypeError(f"Stream(): argument 'priority' must be an int, got "
                                f"{priority!r}") from None
            handle = _cs.pool_queue()
        self = object.__new__(cls)
        self._handle = handle
        self._priority = priority  # recorded only: CPU workers have no priorities
        return self

    @property
    def device(self):
        from ..device import CPU
        return CPU

    @property
    def priority(self) -> int:
        return self._priority

    @property
    def stream_id(self) -> int:
        """0 for the default stream, 1.. for pooled streams (the trace's ``stream N``)."""
        return self._handle.id

    def query(self) -> bool:
        """True when all work queued so far has finished."""
        return self._handle.query()

    def synchronize(self) -> None:
        self._handle.synchronize()

    def wait_event(self, event) -> None:
        """Work queued on this stream later waits for ``event``'s last record (the default
        stream is the host: it waits now)."""
        _check_event(event, "wait_event")
        if not isinstance(event, CpuEvent):
            # A CUDA event: this stream's later work waits for its record as of when the wait
            # runs (the CUDA event API has no host-side capture).
            _stream_wait(self, event.synchronize, ())
            return
        event.wait(self)

    def wait_stream(self, stream) -> None:
        """Work queued on this stream later waits for the work queued on ``stream`` so far."""
        if not isinstance(stream, Stream):
            raise TypeError(f"wait_stream(): argument 'stream' must be a Stream, got "
                            f"{type(stream).__name__}")
        if stream is self or getattr(stream, "_handle", None) is self._handle:
            return
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        event = CpuEvent() if event is None else event
        _check_event(event, "record_event")
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, CpuStream) and other._handle is self._handle

    def __hash__(self):
        return hash(("cpu", self._handle.id))

    def __repr__(self):
        return (f"<tensorlib.CpuStream device=cpu stream_id={self._handle.id} "
                f"priority={self._priority}>")


def _default_cpu_stream():
    return CpuStream(_handle=_cs.DEFAULT)


_DEFAULT_CPU_STREAM = _default_cpu_stream()


class CpuEvent(Event):
    """A marker in a CPU stream: completes when the stream's worker reaches it (at once on the
    default stream or an idle one)."""

    __slots__ = ("enable_timing", "blocking", "_mark")

    def __new__(cls, device=None, enable_timing=False, blocking=False, interprocess=False):
        if interprocess:
            raise ValueError("Event(): interprocess events are not supported on the CPU")
        self = object.__new__(cls)
        self.enable_timing = bool(enable_timing)
        self.blocking = bool(blocking)
        self._mark = None
        return self

    @property
    def device(self):
        from ..device import CPU
        return CPU

    def record(self, stream=None):
        """Capture the work queued on ``stream`` (default: the current CPU stream) so far."""
        if stream is None:
            stream = current_stream("cpu")
        elif not isinstance(stream, CpuStream):
            raise ValueError(f"record(): a CPU event cannot be recorded on {stream!r}")
        self._mark = stream._handle.mark()

    def query(self) -> bool:
        """True when the captured work has finished (or the event was never recorded)."""
        m = self._mark
        return m is None or m.done()

    def synchronize(self) -> None:
        m = self._mark
        if m is not None:
            m.wait()

    def wait(self, stream=None) -> None:
        """Make ``stream`` (default: the current CPU stream) wait for this event; no-op if never
        recorded."""
        if stream is None:
            stream = current_stream("cpu")
        elif not isinstance(stream, Stream):
            raise TypeError(f"wait(): argument 'stream' must be a Stream, got "
                            f"{type(stream).__name__}")
        m = self._mark
        if m is None or m.done():
            return
        _stream_wait(stream, m.queue.wait, (m.seq, False))

    def elapsed_time(self, end_event) -> float:
        """Milliseconds between this event's record and ``end_event``'s (both completed)."""
        if not isinstance(end_event, CpuEvent):
            raise TypeError(f"elapsed_time(): argument 'end_event' must be a CPU Event, got "
                            f"{type(end_event).__name__}")
        for name, ev in (("start", self), ("end", end_event)):
            if not ev.enable_timing:
                raise RuntimeError(f"elapsed_time(): the {name} event was created without "
                                   f"enable_timing=True")
            if ev._mark is None:
                raise RuntimeError(f"elapsed_time(): the {name} event was never recorded")
            if not ev._mark.done():
                raise RuntimeError(f"elapsed_time(): the {name} event has not completed yet; "
                                   f"synchronize it first")
        return (end_event._mark.t - self._mark.t) / 1e6

    def __repr__(self):
        m = self._mark
        state = "unrecorded" if m is None else f"stream {m.queue.id}"
        return f"<tensorlib.CpuEvent {state} enable_timing={self.enable_timing}>"


def _stream_wait(stream, fn, args):
    """Make ``stream`` run ``fn(*args)`` (a blocking wait) before its later work."""
    if isinstance(stream, CpuStream):
        q = stream._handle
        if q is _cs.DEFAULT:
            fn(*args)  # the default stream is the host: wait now
        else:
            q.submit((fn, args, (), None))
        return
    # A CUDA stream waiting for CPU work: the wait runs as host work in its order (interpret
    # backend), else the host waits now.
    from .cuda import context
    driver = context.require("wait_event")
    if driver.host_visible:
        wait = partial(fn, *args)
        wait._tl_wait = True  # the profiler does not count a wait as stream work
        driver.launch_host_func(stream._handle, wait)
    else:
        fn(*args)


def _check_event(event, op):
    if not isinstance(event, Event):
        raise TypeError(f"{op}(): argument 'event' must be an Event, got {type(event).__name__}")


class _CpuStreamContext:
    __slots__ = ("stream", "_prev")

    def __init__(self, s):
        self.stream = s
        self._prev = None

    def __enter__(self):
        s = self.stream
        self._prev = _cs.set_current(s._handle, s)
        return s

    def __exit__(self, *exc):
        _cs.set_current(*self._prev)
        return False


class _NullContext:
    __slots__ = ()

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def stream(s):
    """``with tl.stream(s):`` makes ``s`` current on its device for this thread (None: no-op)."""
    if s is None:
        return _NullContext()
    if isinstance(s, CpuStream):
        return _CpuStreamContext(s)
    if isinstance(s, Stream):
        from .cuda.streams import StreamContext
        return StreamContext(s)
    raise TypeError(f"stream(): argument 'stream' must be a Stream or None, got "
                    f"{type(s).__name__}")


def current_stream(device=None):
    dev = _device(device, "current_stream")
    if dev.type == "cuda":
        from .cuda.streams import current_stream as cuda_current
        return cuda_current(dev)
    s = _cs.tls.stream
    return _DEFAULT_CPU_STREAM if s is None else s


def default_stream(device=None):
    dev = _device(device, "default_stream")
    if dev.type == "cuda":
        from .cuda.streams import default_stream as cuda_default
        return cuda_default(dev)
    return _DEFAULT_CPU_STREAM


def synchronize(device=None) -> None:
    """Wait for all work on ``device``: every stream of a CUDA device, or every CPU stream.
    ``None``: the CPU streams and, when CUDA is in use, the current CUDA device. A failure in
    queued work is raised here (after everything has drained)."""
    if device is None:
        from .cuda import context
        first = None
        try:
            _cs.synchronize_all()
        except RuntimeError as e:
            first = e
        if context.state.initialized and context.state.driver is not None:
            from .cuda.streams import synchronize as cuda_sync
            cuda_sync(None)
        if first is not None:
            raise first
        return
    dev = _device(device, "synchronize")
    if dev.type == "cuda":
        from .cuda.streams import synchronize as cuda_sync
        cuda_sync(dev)
    else:
        _cs.synchronize_all()
