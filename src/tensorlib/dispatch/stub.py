"""DispatchStub: per-op-family tables device type -> kernel (PyTorch's DECLARE/REGISTER_DISPATCH).

A structured op's device-generic ``impl`` calls ``stub(iter_or_args...)`` with the device type;
the registered device kernel then picks its per-dtype specialisation. Kernel files register with
:func:`register`, so ``kernels/cpu`` and ``kernels/cuda`` never import each other.
"""
from __future__ import annotations

__all__ = ["DispatchStub", "get_stub", "register", "UnsupportedKernelError"]


class UnsupportedKernelError(TypeError):
    """No kernel for this (op, device, dtype) combination."""


class DispatchStub:
    __slots__ = ("name", "kernels")

    def __init__(self, name: str):
        self.name = name
        self.kernels: dict[str, object] = {}

    def register(self, device_type: str, fn) -> None:
        if device_type in self.kernels and self.kernels[device_type] is not fn:
            raise RuntimeError(f"{self.name}_stub: a {device_type} kernel is already registered")
        self.kernels[device_type] = fn

    def kernel_for(self, device_type: str, dtype=None):
        fn = self.kernels.get(device_type)
        if fn is None:
            _load_backend(device_type)
            fn = self.kernels.get(device_type)
        if fn is None:
            what = f" and dtype {dtype}" if dtype is not None else ""
            raise UnsupportedKernelError(f"{self.name}(): no kernel for device '{device_type}'{what}")
        return fn

    def __call__(self, device_type: str, *args, **kwargs):
        return self.kernel_for(device_type)(*args, **kwargs)

    def __repr__(self):
        return f"DispatchStub({self.name!r}, devices={sorted(self.kernels)})"


_STUBS: dict[str, DispatchStub] = {}
_LOADED: set[str] = set()


def get_stub(name: str) -> DispatchStub:
    stub = _STUBS.get(name)
    if stub is None:
        stub = _STUBS[name] = DispatchStub(name)
    return stub


def register(name: str, device_type: str, fn) -> None:
    get_stub(name).register(device_type, fn)


def _load_backend(device_type: str) -> None:
    # Kernel packages register on import; import them on first use so `import tensorlib` stays light.
    if device_type in _LOADED:
        return
    if device_type == "cpu":
        from ..kernels import cpu  # noqa: F401
    elif device_type == "cuda":
        from ..kernels import cuda  # noqa: F401
    _LOADED.add(device_type)
