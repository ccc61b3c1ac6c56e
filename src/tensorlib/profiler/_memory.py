"""Allocation hooks: the memory timeline (``profile_memory``) and the bytes allocated when
profiling started."""
from __future__ import annotations

from ._common import _ns, _tls


def _memory_hook(p):
    append = p._memory.append
    seen = set()  # allocators that went through Storage.allocate (pinned memory does not)

    def hook(storage, sign):
        # Atomic values only (the GC then stops tracking the record); names are made later.
        if sign > 0:
            seen.add(id(storage._allocator))
        elif id(storage._allocator) not in seen and not _counted(storage._allocator):
            return
        dev = storage.device
        t = _tls
        append((_ns(), dev.type, dev.index, sign * storage._block.size, t.cur, t.tid))
    return hook


def _counted(allocator) -> bool:
    """Whether frees from ``allocator`` count in the memory timeline (caching allocators
    that Storage.allocate uses; memory allocated before profiling started is freed here)."""
    from ..runtime.cpu.allocator import HostCachingAllocator
    if isinstance(allocator, HostCachingAllocator):
        return True
    return type(allocator).__name__ == "CUDACachingAllocator"


def _memory_baseline():
    base = {}
    try:
        from ..runtime.cpu.allocator import host_allocator
        base["cpu"] = host_allocator.memory_stats()["allocated_bytes.current"]
    except Exception:  # noqa: BLE001
        base["cpu"] = 0
    try:
        from ..runtime.cuda import context
        for idx, a in list(context.state.allocators.items()):
            base[f"cuda:{idx}"] = a.allocated_bytes()
    except Exception:  # noqa: BLE001
        pass
    return base
