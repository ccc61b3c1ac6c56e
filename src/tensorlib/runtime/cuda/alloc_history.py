"""What the CUDA caching allocator (``allocator.py``) reports about its past and present: the
recorded history, replayable traces of it, and segment snapshots.

History (``CUDACachingAllocator.record_history``) is a bounded deque of tuples
``(action, ptr, size, requested, stream id, perf_counter time)``, with action one of ``alloc``,
``free``, ``segment_alloc``, ``segment_free``, ``oom``; the allocator appends them in place (a
deque append on its paths while recording). :func:`history_to_trace` turns a history into a
trace of ``('alloc', key, size)`` / ``('free', key)`` items that :func:`replay_trace` runs through
any allocator (e.g. one with another config) to compare their statistics.
"""
from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .allocator import CUDACachingAllocator

__all__ = ["new_history", "history_to_trace", "replay_trace", "segment_snapshot",
           "SNAPSHOT_STATES"]

# Snapshot name of each Block.state (alloc_blocks.py's _FREE, _ALLOCATED, _PENDING = 0, 1, 2).
SNAPSHOT_STATES = ("inactive", "active_allocated", "active_pending_free")


def new_history(enabled: bool, max_entries: int):
    """The allocator's history buffer: a deque keeping the last ``max_entries`` records, or None
    when recording is off."""
    return deque(maxlen=max_entries) if enabled else None


def segment_snapshot(segments, device: int) -> list:
    """One dict per segment, by address (PyTorch's memory_snapshot() layout). ``segments`` are
    the allocator's Segment objects; its lock is held by the caller."""
    out = []
    for seg in sorted(segments, key=lambda s: s.ptr):
        blocks = []
        allocated = active = requested = 0
        b = seg.head
        while b is not None:
            state = SNAPSHOT_STATES[b.state]
            is_allocated = state == "active_allocated"
            req = b.requested if is_allocated else 0
            blocks.append({"address": b.ptr, "size": b.size, "requested_size": req,
                           "state": state})
            if is_allocated:
                allocated += b.size
                requested += req
            if state != "inactive":
                active += b.size
            b = b.next
        out.append({"device": device, "address": seg.ptr, "total_size": seg.size,
                    "stream": seg.stream.id,
                    "segment_type": "small" if seg.small else "large",
                    "segment_pool_id": (0, 0), "is_expandable": False,
                    "allocated_size": allocated, "active_size": active,
                    "requested_size": requested, "blocks": blocks})
    return out


def history_to_trace(history) -> list:
    """Recorded history -> a replayable trace of ('alloc', key, size) / ('free', key)."""
    trace, live, next_key = [], {}, 0
    for action, ptr, _size, requested, _sid, _t in history:
        if action == "alloc":
            live[ptr] = next_key
            trace.append(("alloc", next_key, requested))
            next_key += 1
        elif action == "free" and ptr in live:
            trace.append(("free", live.pop(ptr)))
    return trace


def replay_trace(allocator: "CUDACachingAllocator", trace, stream=None) -> dict:
    """Run a trace through ``allocator``; returns its memory_stats() afterwards (blocks still
    live at the end of the trace are freed first)."""
    stream = stream or allocator._driver.default_stream(allocator.device)
    live = {}
    malloc, free = allocator.malloc, allocator.free
    for item in trace:
        if item[0] == "alloc":
            live[item[1]] = malloc(max(1, item[2]), stream)
        else:
            free(live.pop(item[1]))
    for b in live.values():
        free(b)
    return allocator.memory_stats()

