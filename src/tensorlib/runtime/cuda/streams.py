"""CUDA streams, events, the current stream per device per thread, and the device guard.

As in PyTorch, user streams come from per-device pools (32 per priority level, handed out round
robin, created on first use) so creating a ``Stream`` is cheap and the number of driver streams
(interpret: worker threads) stays bounded. The default stream of each device is the driver's
default stream (id 0). A thread's current stream starts as the default stream.
"""
from __future__ import annotations

from ...device import Device
from ..streams import Event as _BaseEvent
from ..streams import Stream as _BaseStream
from . import context
from .context import _fresh_tls, require, resolve_index, state
from .driver import CudaError

__all__ = ["Stream", "Event", "StreamContext", "DeviceGuard", "current_stream",
           "default_stream", "set_stream", "synchronize", "sleep", "current_handle",
           "record_storage_stream", "STREAMS_PER_POOL"]

STREAMS_PER_POOL = 32


class Stream(_BaseStream):
    """``tl.cuda.Stream(device=None, priority=0)``: a stream from the device's pool.

    ``priority``: 0 is the default (lowest); negative numbers are higher priorities, clamped to
    the device's range (``tl.cuda.Stream.priority_range()``).
    """

    __slots__ = ("_handle", "device", "__weakref__")

    def __new__(cls, device=None, priority=0, **kwargs):
        handle = kwargs.pop("_handle", None)
        if kwargs:
            raise TypeError(f"Stream(): unexpected keyword argument {next(iter(kwargs))!r}")
        if handle is None:
            idx = resolve_index(device, "Stream")
            handle = _pool_stream(idx, priority)
        self = object.__new__(cls)
        self._handle = handle
        self.device = Device("cuda", handle.device)
        return self

    @staticmethod
    def priority_range(device=None) -> tuple:
        """(least, greatest) priority, e.g. (0, -5): lower numbers run first."""
        idx = resolve_index(device, "priority_range")
        return state.driver.priority_range(idx)

    @property
    def priority(self) -> int:
        return self._handle.priority

    @property
    def cuda_stream(self) -> int:
        """The driver handle as an int (0 for the default stream)."""
        return self._handle.id

    stream_id = cuda_stream

    def query(self) -> bool:
        """True when all work queued so far has finished."""
        return state.driver.stream_query(self._handle)

    def synchronize(self) -> None:
        state.driver.stream_synchronize(self._handle)

    def wait_event(self, event) -> None:
        """Work queued on this stream later waits for ``event``'s last record."""
        if not isinstance(event, Event):
            raise TypeError(f"wait_event(): argument 'event' must be a tl.cuda.Event, got "
                            f"{type(event).__name__}")
        event.wait(self)

    def wait_stream(self, stream) -> None:
        """Work queued on this stream later waits for the work queued on ``stream`` so far."""
        if not isinstance(stream, Stream):
            raise TypeError(f"wait_stream(): argument 'stream' must be a tl.cuda.Stream, got "
                            f"{type(stream).__name__}")
        if stream._handle is not self._handle:
            self.wait_event(stream.record_event())

    def record_event(self, event=None):
        if event is None:
            event = Event()
        elif not isinstance(event, Event):
            raise TypeError(f"record_event(): argument 'event' must be a tl.cuda.Event, got "
                            f"{type(event).__name__}")
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream) and other._handle is self._handle

    def __hash__(self):
        return hash((self._handle.device, self._handle.id))

    def __repr__(self):
        return (f"<tensorlib.cuda.Stream device={self.device} cuda_stream=0x"
                f"{self._handle.id:x} priority={self._handle.priority}>")


def _pool_stream(idx: int, priority) -> object:
    try:
        priority = int(priority)
    except (TypeError, ValueError):
        raise TypeError(f"Stream(): argument 'priority' must be an int, got "
                        f"{priority!r}") from None
    driver = state.driver
    least, greatest = driver.priority_range(idx)
    priority = min(least, max(greatest, priority))
    key = (idx, priority)
    with state.lock:
        pool = state.pools.get(key)
        if pool is None:
            pool = state.pools[key] = [[], 0]  # handles, next index
        handles, nxt = pool
        if len(handles) < STREAMS_PER_POOL:
            handle = driver.stream_create(idx, priority)
            handles.append(handle)
        else:
            handle = handles[nxt % STREAMS_PER_POOL]
        pool[1] = nxt + 1
    return handle


class Event(_BaseEvent):
    """``tl.cuda.Event(enable_timing=False, blocking=False)``. The driver event is made on first
    ``record`` (on the recording stream's device) unless ``device`` is given."""

    __slots__ = ("enable_timing", "blocking", "_handle", "_recorded", "_device")

    def __new__(cls, enable_timing=False, blocking=False, interprocess=False, device=None):
        if interprocess:
            raise ValueError("Event(): interprocess events are not supported")
        self = object.__new__(cls)
        self.enable_timing = bool(enable_timing)
        self.blocking = bool(blocking)
        self._handle = None
        self._recorded = False
        self._device = None if device is None else resolve_index(device, "Event")
        return self

    @property
    def device(self):
        idx = self._device
        return None if idx is None else Device("cuda", idx)

    @property
    def cuda_event(self) -> int:
        return 0 if self._handle is None else self._handle.id

    def record(self, stream=None) -> None:
        """Capture the work queued on ``stream`` (default: the current stream) so far."""
        if stream is None:
            stream = current_stream(self._device)
        elif not isinstance(stream, Stream):
            raise TypeError(f"record(): argument 'stream' must be a tl.cuda.Stream, got "
                            f"{type(stream).__name__}")
        sdev = stream._handle.device
        if self._handle is None:
            self._handle = state.driver.event_create(sdev, self.enable_timing, self.blocking)
            self._device = sdev
        elif self._device != sdev:
            raise CudaError(f"record(): event on 'cuda:{self._device}' cannot be recorded on a "
                            f"stream of 'cuda:{sdev}'")
        state.driver.event_record(self._handle, stream._handle)
        self._recorded = True

    def query(self) -> bool:
        """True when the captured work has finished (or the event was never recorded)."""
        return not self._recorded or state.driver.event_query(self._handle)

    def synchronize(self) -> None:
        if self._recorded:
            state.driver.event_synchronize(self._handle)

    def wait(self, stream=None) -> None:
        """Make ``stream`` (default: current) wait for this event; no-op if never recorded."""
        if stream is None:
            stream = current_stream(self._device)
        elif not isinstance(stream, Stream):
            raise TypeError(f"wait(): argument 'stream' must be a tl.cuda.Stream, got "
                            f"{type(stream).__name__}")
        if self._recorded:
            state.driver.stream_wait_event(stream._handle, self._handle)

    def elapsed_time(self, end_event) -> float:
        """Milliseconds between this event's record and ``end_event``'s (both completed)."""
        if not isinstance(end_event, Event):
            raise TypeError(f"elapsed_time(): argument 'end_event' must be a tl.cuda.Event, "
                            f"got {type(end_event).__name__}")
        for name, ev in (("start", self), ("end", end_event)):
            if not ev.enable_timing:
                raise RuntimeError(f"elapsed_time(): the {name} event was created without "
                                   f"enable_timing=True")
            if not ev._recorded:
                raise RuntimeError(f"elapsed_time(): the {name} event was never recorded")
        return state.driver.event_elapsed_ms(self._handle, end_event._handle)

    def __repr__(self):
        where = "unrecorded" if not self._recorded else f"cuda:{self._device}"
        return f"<tensorlib.cuda.Event {where} enable_timing={self.enable_timing}>"


# ---- current / default streams ----------------------------------------------------------------
def default_stream(device=None) -> Stream:
    idx = resolve_index(device, "default_stream")
    s = state.default_streams.get(idx)
    if s is None:
        s = Stream(_handle=state.driver.default_stream(idx))
        state.default_streams[idx] = s
    return s


def current_stream(device=None) -> Stream:
    idx = resolve_index(device, "current_stream")
    s = _fresh_tls().streams.get(idx)
    return default_stream(idx) if s is None else s


def current_handle(idx: int):
    """The driver handle of the current stream of device ``idx`` (hot path for allocations)."""
    t = context.tls
    if t.gen == state.gen:
        s = t.streams.get(idx)
        if s is not None:
            return s._handle
    else:
        _fresh_tls()
    s = state.default_streams.get(idx)
    if s is None:
        s = default_stream(idx)
    return s._handle


def set_stream(stream) -> None:
    """Make ``stream`` the current stream of its device for this thread."""
    if stream is None:
        return
    if not isinstance(stream, Stream):
        raise TypeError(f"set_stream(): argument 'stream' must be a tl.cuda.Stream, got "
                        f"{type(stream).__name__}")
    t = _fresh_tls()
    t.streams[stream._handle.device] = stream
    t.fast = None


class StreamContext:
    """``with tl.cuda.stream(s):`` — ``s`` becomes current on its device, and its device the
    current device, until the block ends (both restored after)."""

    __slots__ = ("stream", "_prev_device", "_prev_stream")

    def __init__(self, stream):
        if stream is not None and not isinstance(stream, Stream):
            raise TypeError(f"stream(): argument 'stream' must be a tl.cuda.Stream or None, got "
                            f"{type(stream).__name__}")
        self.stream = stream
        self._prev_device = None
        self._prev_stream = None

    def __enter__(self):
        s = self.stream
        if s is None:
            return None
        idx = s._handle.device
        t = _fresh_tls()
        self._prev_device = t.device
        self._prev_stream = t.streams.get(idx)
        if t.device != idx:
            context.set_device(idx)
        t.streams[idx] = s
        t.fast = None
        return s

    def __exit__(self, *exc):
        s = self.stream
        if s is None:
            return False
        t = _fresh_tls()
        idx = s._handle.device
        if self._prev_stream is None:
            t.streams.pop(idx, None)
        else:
            t.streams[idx] = self._prev_stream
        t.fast = None
        if t.device != self._prev_device:
            context.set_device(self._prev_device)
        return False


class DeviceGuard:
    """``with tl.cuda.device(i):`` — ``i`` (int, 'cuda:i', Device; None or -1: no change) is the
    current device inside the block."""

    __slots__ = ("idx", "prev_idx")

    def __init__(self, device):
        if device is None or (isinstance(device, int) and not isinstance(device, bool)
                              and device < 0):
            self.idx = -1
        else:
            self.idx = resolve_index(device, "device")
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev_idx = context.current_device()
            if self.prev_idx != self.idx:
                context.set_device(self.idx)
        return self

    def __exit__(self, *exc):
        if self.idx >= 0 and self.prev_idx != self.idx:
            context.set_device(self.prev_idx)
        return False


def synchronize(device=None) -> None:
    """Wait for all work on all streams of ``device`` (default: current)."""
    idx = resolve_index(device, "synchronize")
    state.driver.device_synchronize(idx)


def sleep(seconds: float) -> None:
    """Keep the current stream busy for ``seconds`` (tests of stream ordering)."""
    require("_sleep")
    try:
        seconds = float(seconds)
    except (TypeError, ValueError):
        raise TypeError(f"_sleep(): argument 'seconds' must be a number, got "
                        f"{seconds!r}") from None
    if not seconds >= 0:
        raise ValueError(f"_sleep(): argument 'seconds' must be >= 0, got {seconds!r}")
    idx = context.current_device()
    state.driver.sleep(current_handle(idx), seconds)


def record_storage_stream(storage, stream: Stream) -> None:
    """Storage-level record_stream (the tensor function checks the devices)."""
    block = storage._block
    alloc = storage._allocator
    if block is None or alloc is None or not hasattr(alloc, "record_stream"):
        return  # borrowed memory: tensorlib does not reuse it
    alloc.record_stream(block, stream._handle)
