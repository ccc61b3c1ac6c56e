"""Numba CPU kernels: importing this package registers them in the DispatchStub tables."""
from ...dispatch.registration import POINTWISE
from ...dispatch.stub import register
from . import creation
from .pointwise import run_pointwise

for _name in POINTWISE:
    register(_name, "cpu", run_pointwise)
register("copy", "cpu", run_pointwise)
register("fill", "cpu", run_pointwise)
register("fill_range", "cpu", creation.fill_range)
from .matmul import matmul_kernel  # noqa: E402
register("matmul", "cpu", matmul_kernel)
