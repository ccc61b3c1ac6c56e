"""CUDA kernels (Triton): importing this package registers them in the DispatchStub tables.

Registration is cheap: each stub gets a thin wrapper that imports the Triton module on first
call, because importing Triton kernels fixes the interpret/compiled mode (see launch.py), which
needs the CUDA backend to have been chosen. Files: ``launch.py`` (arguments, streams, modes,
generated-module cache), ``scalar_math.py`` (Triton helpers named as the CPU ones),
``pointwise.py`` (ops.yaml expressions, copy, fill, fill_range), ``matmul.py``,
``reduction.py`` (sum, prod, mean, max, min, any, all, var, std), ``flags.py``
(``backends.matmul.allow_tf32``), ``aot.py`` (ahead-of-time compile check).
"""
from ...dispatch.registration import POINTWISE
from ...dispatch.stub import register


def _pointwise(it, info, scalar_values):
    from .pointwise import run_pointwise
    return run_pointwise(it, info, scalar_values)


def _fill_range(t, start, step):
    from .pointwise import fill_range
    return fill_range(t, start, step)


def _matmul(a, b, out, conj_a=False):
    from .matmul import matmul_kernel
    return matmul_kernel(a, b, out, conj_a)


def _reduction(name):
    def kernel(it, *args):
        from . import reduction
        return getattr(reduction, f"{name}_kernel")(it, *args)
    kernel.__name__ = f"{name}_kernel"
    return kernel


for _name in POINTWISE:
    register(_name, "cuda", _pointwise)
register("copy", "cuda", _pointwise)
register("fill", "cuda", _pointwise)
register("fill_range", "cuda", _fill_range)
register("matmul", "cuda", _matmul)
for _name in ("sum", "prod", "mean", "max", "min", "any", "all", "var", "std"):
    register(_name, "cuda", _reduction(_name))
