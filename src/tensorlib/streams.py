"""Device-generic streams and events: ``tl.Stream``, ``tl.Event``, ``tl.stream(s)``.

``tl.Stream(device="cuda:0")`` returns a ``tl.cuda.Stream`` (a subclass of ``tl.Stream``);
``tl.Event(device=...)`` likewise. ``device=None`` means the current accelerator: CUDA when it is
available, else the CPU.

CPU streams are a synchronous stub for now: CPU work runs inline on the calling thread, so a
``CpuStream`` is always idle (``query()`` is True, ``synchronize()`` and waits return at once) and
a ``CpuEvent`` completes when recorded (``elapsed_time`` measures host time between records).
Worker-thread CPU streams come in a later change without changing this interface.

This module imports only the standard library at import time (the CUDA runtime is imported on
first use), so the CUDA runtime may subclass these types.
"""
from __future__ import annotations

import threading
import time

__all__ = ["Stream", "Event", "CpuStream", "CpuEvent", "stream", "current_stream",
           "default_stream", "synchronize", "record_stream"]


def _device(device, op):
    from .device import Device, to_device
    if device is None:
        from .runtime.cuda import context
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
            from .runtime.cuda.streams import Stream as CudaStream
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
            from .runtime.cuda.streams import Event as CudaEvent
            return CudaEvent(enable_timing=enable_timing, blocking=blocking,
                             interprocess=interprocess, device=dev)
        return CpuEvent(enable_timing=enable_timing, blocking=blocking,
                        interprocess=interprocess)

    def __init__(self, *args, **kwargs):
        pass


# ---- CPU stub ---------------------------------------------------------------------------------
class CpuStream(Stream):
    """CPU stream stub: work runs inline, so the stream is always idle."""

    __slots__ = ("priority", "__weakref__")

    def __new__(cls, device=None, priority=0):
        if device is not None and str(device) != "cpu":
            raise ValueError(f"CpuStream(): argument 'device' must be 'cpu', got {device!r}")
        self = object.__new__(cls)
        self.priority = int(priority)
        return self

    @property
    def device(self):
        from .device import CPU
        return CPU

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        pass

    def wait_event(self, event) -> None:
        _check_event(event, "wait_event")

    def wait_stream(self, stream) -> None:
        if not isinstance(stream, Stream):
            raise TypeError(f"wait_stream(): argument 'stream' must be a Stream, got "
                            f"{type(stream).__name__}")

    def record_event(self, event=None):
        event = CpuEvent() if event is None else event
        event.record(self)
        return event

    def __repr__(self):
        return f"<tensorlib.CpuStream device=cpu priority={self.priority} at 0x{id(self):x}>"


_DEFAULT_CPU_STREAM = CpuStream()


class CpuEvent(Event):
    """Completes when recorded (CPU work is inline)."""

    __slots__ = ("enable_timing", "blocking", "_t")

    def __new__(cls, device=None, enable_timing=False, blocking=False, interprocess=False):
        if interprocess:
            raise ValueError("Event(): interprocess events are not supported on the CPU")
        self = object.__new__(cls)
        self.enable_timing = bool(enable_timing)
        self.blocking = bool(blocking)
        self._t = None
        return self

    @property
    def device(self):
        from .device import CPU
        return CPU

    def record(self, stream=None):
        if stream is not None and not isinstance(stream, CpuStream):
            raise ValueError(f"record(): a CPU event cannot be recorded on {stream!r}")
        self._t = time.perf_counter()

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        pass

    def wait(self, stream=None) -> None:
        pass

    def elapsed_time(self, end_event) -> float:
        if not isinstance(end_event, CpuEvent):
            raise TypeError(f"elapsed_time(): argument 'end_event' must be a CPU Event, got "
                            f"{type(end_event).__name__}")
        for name, ev in (("start", self), ("end", end_event)):
            if not ev.enable_timing:
                raise RuntimeError(f"elapsed_time(): the {name} event was created without "
                                   f"enable_timing=True")
            if ev._t is None:
                raise RuntimeError(f"elapsed_time(): the {name} event was never recorded")
        return (end_event._t - self._t) * 1000.0

    def __repr__(self):
        return f"<tensorlib.CpuEvent recorded={self._t is not None}>"


def _check_event(event, op):
    if not isinstance(event, Event):
        raise TypeError(f"{op}(): argument 'event' must be an Event, got {type(event).__name__}")


class _CpuTLS(threading.local):
    def __init__(self):
        self.stream = _DEFAULT_CPU_STREAM


_cpu_tls = _CpuTLS()


class _CpuStreamContext:
    __slots__ = ("stream", "_prev")

    def __init__(self, s):
        self.stream = s
        self._prev = None

    def __enter__(self):
        self._prev = _cpu_tls.stream
        _cpu_tls.stream = self.stream
        return self.stream

    def __exit__(self, *exc):
        _cpu_tls.stream = self._prev
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
        from .runtime.cuda.streams import StreamContext
        return StreamContext(s)
    raise TypeError(f"stream(): argument 'stream' must be a Stream or None, got "
                    f"{type(s).__name__}")


def current_stream(device=None):
    dev = _device(device, "current_stream")
    if dev.type == "cuda":
        from .runtime.cuda.streams import current_stream as cuda_current
        return cuda_current(dev)
    return _cpu_tls.stream


def default_stream(device=None):
    dev = _device(device, "default_stream")
    if dev.type == "cuda":
        from .runtime.cuda.streams import default_stream as cuda_default
        return cuda_default(dev)
    return _DEFAULT_CPU_STREAM


def synchronize(device=None) -> None:
    """Wait for all work on ``device`` (CPU: nothing to wait for)."""
    dev = _device(device, "synchronize")
    if dev.type == "cuda":
        from .runtime.cuda.streams import synchronize as cuda_sync
        cuda_sync(dev)


def record_stream(tensor, stream) -> None:
    """Tensor.record_stream: mark ``tensor``'s memory as used by ``stream``, so the caching
    allocator does not reuse it until the work queued on ``stream`` so far has finished."""
    from .tensor import Tensor
    if not isinstance(tensor, Tensor):
        raise TypeError(f"record_stream(): argument 'self' must be a Tensor, got "
                        f"{type(tensor).__name__}")
    if not isinstance(stream, Stream):
        raise TypeError(f"record_stream(): argument 'stream' must be a Stream, got "
                        f"{type(stream).__name__}")
    if tensor.device.type != stream.device.type or (
            tensor.device.type == "cuda" and tensor.device.index != stream.device.index):
        raise RuntimeError(f"record_stream(): tensor on '{tensor.device}' and stream on "
                           f"'{stream.device}' are on different devices")
    if tensor.device.type == "cpu":
        return  # CPU work is inline: nothing can still be using the memory
    from .runtime.cuda.streams import record_storage_stream
    record_storage_stream(tensor.untyped_storage(), stream)
