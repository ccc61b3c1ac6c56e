"""``tl.cpu``: the caching host allocator's statistics and cache control."""
from .runtime.cpu.allocator import empty_cache, host_allocator, memory_stats, reset_peak_stats

__all__ = ["memory_stats", "empty_cache", "reset_peak_stats", "host_allocator"]
