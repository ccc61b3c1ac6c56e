"""Process-wide switches of the CUDA kernels (PyTorch's ``torch.backends.cuda.matmul``).

``backends.matmul.allow_tf32`` (default False): float32 matmuls may use TF32 tensor cores
(10-bit mantissa inputs, float32 accumulation; about 8x the IEEE FMA throughput on Ampere and
Hopper). Off, float32 matmuls multiply in full IEEE precision. Read at every launch, so it can be
flipped at any time; no Triton import happens here.
"""
from __future__ import annotations

__all__ = ["backends"]


class _MatmulFlags:
    __slots__ = ("_allow_tf32",)

    def __init__(self):
        self._allow_tf32 = False

    @property
    def allow_tf32(self) -> bool:
        return self._allow_tf32

    @allow_tf32.setter
    def allow_tf32(self, value) -> None:
        if not isinstance(value, bool):
            raise TypeError(f"backends.matmul.allow_tf32 must be a bool, got {value!r}")
        self._allow_tf32 = value

    def __repr__(self):
        return f"backends.matmul(allow_tf32={self._allow_tf32})"


class _Backends:
    __slots__ = ("matmul",)

    def __init__(self):
        self.matmul = _MatmulFlags()

    def __repr__(self):
        return f"backends(matmul={self.matmul!r})"


backends = _Backends()
