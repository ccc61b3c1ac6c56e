"""The data structures of the CUDA caching allocator (``allocator.py``): segments, the blocks
they are carved into, the per-(pool, stream) free lists and the block a 0-byte request gets.

A :class:`Segment` is one device allocation; its blocks form a doubly linked list in address
order starting at ``Segment.head``, together covering the segment without gaps. A block is free,
allocated, or pending (freed, waiting for the events of streams ``record_stream`` added). Free
blocks of one pool and stream sit in a :class:`_FreeList`, sorted by one int key per block,
``size << _KEY_SHIFT | ptr``, so a bisect finds the best fit (smallest size, then lowest
address). Two adjacent free blocks never stay apart: the allocator merges them when the second
one is freed (``CUDACachingAllocator._free_block``); pending blocks are merged only once their
events have completed.
"""
from __future__ import annotations

__all__ = ["Segment", "Block"]

_KEY_SHIFT = 64                 # free-list key = size << 64 | ptr: one int orders (size, address)

# Block states (alloc_history.SNAPSHOT_STATES names them in snapshots)
_FREE, _ALLOCATED, _PENDING = 0, 1, 2

_MAX_SPARE = 4096  # recycled Block objects kept for splits


class Segment:
    """One device allocation (cudaMalloc) carved into blocks."""

    __slots__ = ("ptr", "size", "stream", "small", "buffer", "head")

    def __init__(self, ptr, size, stream, small, buffer):
        self.ptr = ptr
        self.size = size
        self.stream = stream  # driver stream handle it belongs to
        self.small = small
        self.buffer = buffer  # host view of the bytes (interpret) or None
        self.head = None      # lowest-address block


class Block:
    """A piece of a segment. ``buffer`` (interpret backend) views exactly its bytes while it is
    handed out through :meth:`CUDACachingAllocator.allocate`."""

    __slots__ = ("ptr", "size", "requested", "stream", "small", "state", "prev", "next",
                 "segment", "stream_uses", "event_count", "gc_base", "buffer")

    def __init__(self, ptr, size, stream, small, segment):
        self.ptr = ptr
        self.size = size
        self.requested = 0
        self.stream = stream  # stream id
        self.small = small
        self.state = _FREE
        self.prev = None
        self.next = None
        self.segment = segment
        self.stream_uses = None  # {stream id: handle} from record_stream
        self.event_count = 0
        self.gc_base = 0
        self.buffer = None

    @property
    def allocated(self) -> bool:
        return self.state == _ALLOCATED

    def __repr__(self):
        state = ("free", "allocated", "pending_free")[self.state]
        return (f"Block(ptr=0x{self.ptr:x}, size={self.size}, requested={self.requested}, "
                f"stream={self.stream}, {state})")


class _FreeList:
    """Free blocks of one (pool, stream), sorted by key = size << 64 | ptr."""

    __slots__ = ("keys", "blocks")

    def __init__(self):
        self.keys = []
        self.blocks = []


class _ZeroBlock:
    """What a 0-byte request gets: no memory, pointer 0 (as cudaMalloc(0) in PyTorch)."""

    __slots__ = ("ptr", "size", "requested", "buffer", "stream", "state")

    def __init__(self, buffer):
        self.state = -1  # never "allocated": free() recognises it by size 0
        self.ptr = 0
        self.size = 0
        self.requested = 0
        self.buffer = buffer
        self.stream = 0
