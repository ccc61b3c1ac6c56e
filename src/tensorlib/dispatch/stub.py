"""DispatchStub: per-op-family tables device type -> kernel (PyTorch's DECLARE/REGISTER_DISPATCH).

A structured op's device-generic ``impl`` calls ``stub(iter_or_args...)`` with the device type;
the registered device kernel then picks its per-dtype specialisation. Kernel files register with
:func:`register`, so ``kernels/cpu`` and ``kernels/cuda`` never import each other. Every op
declared ``pointwise:`` in ops.yaml (and copy / fill) shares the one ``pointwise`` stub: a
backend's pointwise kernel reads the op from the PointwiseInfo it is handed.

This module imports no backend: the package's top level hands it one loader per device type
(:func:`add_backend`, as ATen's REGISTER_DISPATCH fills a declared stub), run on the first
lookup for that device type, so ``import tensorlib`` stays light and the table never calls up.
"""
from __future__ import annotations

__all__ = ["DispatchStub", "get_stub", "register", "add_backend", "UnsupportedKernelError"]


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
_LOADERS: dict = {}  # device type -> loader (add_backend)


def get_stub(name: str) -> DispatchStub:
    stub = _STUBS.get(name)
    if stub is None:
        stub = _STUBS[name] = DispatchStub(name)
    return stub


def register(name: str, device_type: str, fn) -> None:
    get_stub(name).register(device_type, fn)


def add_backend(device_type: str, loader) -> None:
    """``loader()`` registers ``device_type``'s kernels (it imports the backend package); it runs
    at the first lookup of a kernel for that device type."""
    _LOADERS[device_type] = loader


def _load_backend(device_type: str) -> None:
    if device_type in _LOADED:
        return
    loader = _LOADERS.get(device_type)
    if loader is not None:
        loader()
    _LOADED.add(device_type)
