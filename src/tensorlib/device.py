"""Device: a value naming where a tensor's memory lives ("cpu", "cuda", "cuda:1")."""
from __future__ import annotations

import re

__all__ = ["Device", "to_device", "plain_cpu", "DEVICE_TYPES"]

DEVICE_TYPES = ("cpu", "cuda")
_PATTERN = re.compile(r"^([a-z]+)(?::(\d+))?$")


class Device:
    """Immutable (type, index) pair; ``index`` is None when not given ("cuda" means the current one)."""

    __slots__ = ("type", "index")

    def __new__(cls, spec, index=None):
        if isinstance(spec, Device):
            if index is not None:
                raise ValueError(f"Device(): index given twice for {spec!r}")
            return spec
        key = (spec, index)
        cached = _CACHE.get(key)
        if cached is not None:
            return cached
        if not isinstance(spec, str):
            raise TypeError(f"Device(): expected a device string such as 'cpu' or 'cuda:0', got {spec!r}")
        m = _PATTERN.match(spec.strip())
        if m is None or m.group(1) not in DEVICE_TYPES:
            raise ValueError(f"Device(): invalid device string {spec!r}; expected one of "
                             f"'cpu', 'cuda', 'cuda:N'")
        dtype, idx = m.group(1), m.group(2)
        if idx is not None:
            if index is not None:
                raise ValueError(f"Device(): index given twice in {spec!r} and index={index!r}")
            index = int(idx)
        if index is not None:
            # name the whole request: the user may have written either 'cpu:1' or ('cpu', 1)
            what = repr(spec) if idx is not None else f"{spec!r} with index={index!r}"
            if type(index) is not int or index < 0:
                raise ValueError(f"Device(): device index must be a non-negative int, got {what}")
            if dtype == "cpu" and index != 0:
                raise ValueError(f"Device(): cpu has only index 0, got {what}")
            if dtype == "cpu":
                index = None
        self = object.__new__(cls)
        object.__setattr__(self, "type", dtype)
        object.__setattr__(self, "index", index)
        _CACHE[key] = self
        return self

    def __setattr__(self, name, value):
        raise AttributeError("Device is immutable")

    def __eq__(self, other):
        if isinstance(other, str):
            try:
                other = Device(other)
            except (TypeError, ValueError):
                return False
        return isinstance(other, Device) and self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (Device, (str(self),))

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"


_CACHE: dict = {}
CPU = Device("cpu")


def plain_cpu(device) -> bool:
    """True for the spellings of the CPU that need no resolving: None (the default device),
    "cpu" and CPU itself; the creation ops' direct paths take these (a user's or a library's
    ``device="cpu"`` is as common as no device at all)."""
    return device is None or device is CPU or device == "cpu"


def to_device(x, *, op=None, arg="device") -> Device:
    """Coerce ``x`` (Device, str, None -> cpu) to a Device, naming op and argument on failure."""
    if x is None:
        return CPU
    if type(x) is Device:
        return x
    if type(x) is str:
        d = _CACHE.get((x, None))  # a spelling Device() has seen: its cached result
        if d is not None:
            return d
    try:
        if isinstance(x, int) and not isinstance(x, bool):
            return Device("cuda", x)
        return Device(x)
    except (TypeError, ValueError) as e:
        prefix = f"{op}(): " if op else ""
        raise type(e)(f"{prefix}argument '{arg}': {e}") from None
