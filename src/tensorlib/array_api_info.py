"""Array API inspection namespace: ``tl.__array_namespace_info__()`` (Array API 2023.12+).

The returned object answers what this library supports: capabilities, the default device, the
default dtypes, the supported dtypes (optionally by kind) and the devices present now.
"""
from __future__ import annotations

from . import dtypes as _dt
from .device import CPU, Device, to_device

__all__ = ["__array_namespace_info__", "Info"]

# The Array API dtypes, in the spec's order. float16 / bfloat16 are tensorlib extensions and
# are left out: the standard's inspection API lists only the standard's dtypes.
_API_DTYPES = (_dt.bool_, _dt.int8, _dt.int16, _dt.int32, _dt.int64, _dt.uint8, _dt.uint16,
               _dt.uint32, _dt.uint64, _dt.float32, _dt.float64, _dt.complex64, _dt.complex128)

_KINDS = {
    "bool": "b",
    "signed integer": "i",
    "unsigned integer": "u",
    "integral": "iu",
    "real floating": "f",
    "complex floating": "c",
    "numeric": "iufc",
}


class Info:
    """The inspection namespace (a class instance, which the standard allows)."""

    __module__ = "tensorlib"

    def capabilities(self) -> dict:
        # Boolean masks and nonzero/unique give data-dependent shapes; shapes/strides are tuples
        # without a fixed rank limit, so "max dimensions" is None (no limit).
        return {"boolean indexing": True, "data-dependent shapes": True,
                "max dimensions": None}

    def default_device(self) -> Device:
        return CPU

    def default_dtypes(self, *, device=None) -> dict:
        self._check_device(device, "default_dtypes")
        return {"real floating": _dt.default_float(), "complex floating": _dt.default_complex(),
                "integral": _dt.default_int(), "indexing": _dt.default_index()}

    def dtypes(self, *, device=None, kind=None) -> dict:
        """Supported Array API dtypes by name; ``kind`` is a kind name, a dtype, or a tuple of
        those (as in ``isdtype``)."""
        self._check_device(device, "dtypes")
        if kind is None:
            return {d.name: d for d in _API_DTYPES}
        kinds = kind if isinstance(kind, tuple) else (kind,)
        wanted = set()
        for k in kinds:
            if isinstance(k, _dt.DType):
                wanted.add(k)
            elif isinstance(k, str) and k in _KINDS:
                wanted.update(d for d in _API_DTYPES if d.kind in _KINDS[k])
            else:
                raise ValueError(f"dtypes(): unknown kind {k!r}; expected a dtype or one of "
                                 f"{tuple(_KINDS)}")
        return {d.name: d for d in _API_DTYPES if d in wanted}

    def devices(self) -> list:
        out = [CPU]
        try:
            from . import cuda
            out += [Device("cuda", i) for i in range(cuda.device_count())]
        except Exception:  # a broken CUDA install must not break introspection
            pass
        return out

    @staticmethod
    def _check_device(device, op):
        if device is not None:
            to_device(device, op=op)  # validates; every device supports the same dtypes

    def __repr__(self):
        return "tensorlib.__array_namespace_info__()"


_INFO = Info()


def __array_namespace_info__() -> Info:
    return _INFO


def array_namespace(self, *, api_version=None):
    """``Tensor.__array_namespace__``: the tensorlib module (the Array API's namespace)."""
    if api_version not in (None, "2024.12", "2023.12", "2022.12", "2021.12"):
        raise ValueError(f"__array_namespace__(): unsupported api_version {api_version!r}")
    import tensorlib
    return tensorlib
