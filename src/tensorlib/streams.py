"""``tl.Stream``, ``tl.Event``, ``tl.stream(s)`` and the rest of the device-generic stream API
(defined in ``runtime/streams.py``, below the tensors, so the CUDA runtime can subclass them),
and ``Tensor.record_stream``."""
from __future__ import annotations

from .runtime.cpu import streams as _cs
from .runtime.streams import (CpuEvent, CpuStream, Event, Stream, current_stream,  # noqa: F401
                              default_stream, stream, synchronize)

__all__ = ["Stream", "Event", "CpuStream", "CpuEvent", "stream", "current_stream",
           "default_stream", "synchronize", "record_stream"]


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
        _record_cpu_stream(tensor.untyped_storage(), stream)
        return
    from .runtime.cuda.streams import record_storage_stream
    record_storage_stream(tensor.untyped_storage(), stream)


def _record_cpu_stream(storage, stream) -> None:
    """Keep ``storage``'s block from reuse until ``stream``'s work so far has run: one entry per
    stream in the CPU allocator's ``block.pending`` (moved forward on each call, so a tensor
    recorded in a loop does not grow the list). Work launched through the launch helper keeps
    its Storages alive anyway; this covers memory handed to a stream any other way."""
    block = storage._block
    q = stream._handle
    pending = getattr(block, "pending", None)
    if pending is None or q.inline:
        return  # borrowed memory, or the default stream (inline: nothing outstanding)
    seq = q._submitted
    if q._completed >= seq:
        return
    for m in pending:
        if getattr(m, "queue", None) is q:
            if m.seq < seq:
                m.seq = seq
            return
    pending.append(_cs.Mark(q, seq))
    _cs.record_use(storage, q, seq)
