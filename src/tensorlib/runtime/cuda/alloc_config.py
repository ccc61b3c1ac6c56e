"""Policy of the CUDA caching allocator (``allocator.py``): its size constants, the
``TENSORLIB_CUDA_ALLOC_CONF`` options (:class:`AllocatorConfig`) and the rounding rules
(:func:`round_size` for blocks, :func:`allocation_size` for segments).

Config from ``TENSORLIB_CUDA_ALLOC_CONF``, e.g.
``max_split_size_mb:256,garbage_collection_threshold:0.8,roundup_power2_divisions:4``.
"""
from __future__ import annotations

import os

__all__ = ["AllocatorConfig", "round_size", "allocation_size", "format_size", "ENV_ALLOC_CONF",
           "MIN_BLOCK_SIZE", "SMALL_SIZE", "SMALL_BUFFER", "LARGE_BUFFER", "MIN_LARGE_ALLOC",
           "ROUND_LARGE"]

ENV_ALLOC_CONF = "TENSORLIB_CUDA_ALLOC_CONF"
MIN_BLOCK_SIZE = 512            # all sizes are rounded to at least this
SMALL_SIZE = 1 << 20            # largest "small" request
SMALL_BUFFER = 2 << 20          # small-pool segment size
LARGE_BUFFER = 20 << 20         # large-pool segment size for requests < 10 MiB
MIN_LARGE_ALLOC = 10 << 20      # from here, segments are the request rounded to 2 MiB
ROUND_LARGE = 2 << 20
_NO_LIMIT = 1 << 62             # max_split_size when unset


def format_size(n) -> str:
    """Human-readable bytes, PyTorch style ('20.00 MiB')."""
    n = float(n)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{int(n)} bytes" if unit == "bytes" else f"{n:.2f} {unit}"
        n /= 1024


class AllocatorConfig:
    """Parsed ``TENSORLIB_CUDA_ALLOC_CONF`` (comma-separated ``key:value`` pairs)."""

    __slots__ = ("max_split_size", "garbage_collection_threshold", "roundup_power2_divisions")

    def __init__(self, max_split_size=_NO_LIMIT, garbage_collection_threshold=0.0,
                 roundup_power2_divisions=0):
        self.max_split_size = max_split_size
        self.garbage_collection_threshold = garbage_collection_threshold
        self.roundup_power2_divisions = roundup_power2_divisions

    @classmethod
    def parse(cls, text: str | None, what: str = ENV_ALLOC_CONF) -> "AllocatorConfig":
        cfg = cls()
        if not text or not text.strip():
            return cfg
        for item in text.split(","):
            item = item.strip()
            if not item:
                continue
            key, sep, value = item.partition(":")
            key, value = key.strip(), value.strip()
            if not sep:
                raise ValueError(f"{what}: expected 'key:value', got {item!r}")
            try:
                if key == "max_split_size_mb":
                    mb = int(value)
                    if mb <= LARGE_BUFFER >> 20:
                        raise ValueError(f"{what}: max_split_size_mb must be > "
                                         f"{LARGE_BUFFER >> 20}, got {value!r}")
                    cfg.max_split_size = mb << 20
                elif key == "garbage_collection_threshold":
                    t = float(value)
                    if not 0.0 < t < 1.0:
                        raise ValueError(f"{what}: garbage_collection_threshold must be in "
                                         f"(0, 1), got {value!r}")
                    cfg.garbage_collection_threshold = t
                elif key == "roundup_power2_divisions":
                    d = int(value)
                    if d < 0 or (d & (d - 1)):
                        raise ValueError(f"{what}: roundup_power2_divisions must be a power of "
                                         f"two, got {value!r}")
                    cfg.roundup_power2_divisions = d
                elif key == "expandable_segments":
                    if value.lower() not in ("false", "0"):
                        raise ValueError(f"{what}: expandable_segments is not supported, got "
                                         f"{value!r}")
                else:
                    raise ValueError(f"{what}: unknown option {key!r} (known: "
                                     f"max_split_size_mb, garbage_collection_threshold, "
                                     f"roundup_power2_divisions)")
            except ValueError as e:
                if str(e).startswith(what):
                    raise
                raise ValueError(f"{what}: bad value {value!r} for {key!r}") from None
        return cfg

    @classmethod
    def from_env(cls) -> "AllocatorConfig":
        return cls.parse(os.environ.get(ENV_ALLOC_CONF))

    def __repr__(self):
        mss = "unlimited" if self.max_split_size >= _NO_LIMIT else self.max_split_size
        return (f"AllocatorConfig(max_split_size={mss}, garbage_collection_threshold="
                f"{self.garbage_collection_threshold}, roundup_power2_divisions="
                f"{self.roundup_power2_divisions})")


def round_size(size: int, divisions: int = 0) -> int:
    """The block size for a request of ``size`` bytes."""
    if size < MIN_BLOCK_SIZE:
        return MIN_BLOCK_SIZE
    if divisions > 1 and size > MIN_BLOCK_SIZE * divisions:
        # Round up to the next of `divisions` equal steps between two powers of two.
        floor = 1 << (size.bit_length() - 1)
        if floor == size:
            return size
        step = max(floor // divisions, MIN_BLOCK_SIZE)
        return -(-size // step) * step
    return (size + MIN_BLOCK_SIZE - 1) & -MIN_BLOCK_SIZE


def allocation_size(size: int) -> int:
    """The segment (device allocation) size for a rounded request of ``size`` bytes."""
    if size <= SMALL_SIZE:
        return SMALL_BUFFER
    if size < MIN_LARGE_ALLOC:
        return LARGE_BUFFER
    return (size + ROUND_LARGE - 1) & -ROUND_LARGE
