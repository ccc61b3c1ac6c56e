"""CUDA kernels (Triton): importing this package registers them in the DispatchStub tables.

Registration is cheap: each stub gets a thin wrapper that imports the Triton module on first
call, because importing Triton kernels fixes the interpret/compiled mode (see launch.py), which
needs the CUDA backend to have been chosen. Files: ``launch.py`` (arguments, streams, modes,
generated-module cache), ``scalar_math.py`` (Triton helpers named as the CPU ones; parts ``scalar_*.py``),
``complex_math.py`` (their (re, im) pair versions; parts ``complex_*.py``),
``pointwise.py`` (ops.yaml expressions, copy, fill, fill_range; their Triton source in
``pointwise_source.py``), ``matmul.py`` (with
``autotune.py``: event benchmarker and per-shape-class config choice),
``reduction.py`` (sum, prod, mean, max, min, any, all, var, std, argmax, argmin; source in
``reduce_source.py``, launch plans and the split policy in ``reduce_plan.py``),
``scan.py`` (cumsum, cumprod), ``normalization.py`` (softmax, log_softmax, layer_norm), ``indexing.py`` (index, index_put,
nonzero), ``sorting.py`` (sort, searchsorted), ``random.py`` (Philox streams),
``flags.py``
(``backends.matmul.allow_tf32``), ``aot.py`` (ahead-of-time compile check).
"""
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


register("pointwise", "cuda", _pointwise)  # every ops.yaml pointwise op, copy and fill
register("fill_range", "cuda", _fill_range)
register("matmul", "cuda", _matmul)
for _name in ("sum", "prod", "mean", "max", "min", "any", "all", "var", "std", "argmax",
              "argmin"):
    register(_name, "cuda", _reduction(_name))


def _scan(name):
    def kernel(it, n, out_stride, in_stride):
        from . import scan
        return getattr(scan, f"{name}_kernel")(it, n, out_stride, in_stride)
    kernel.__name__ = f"{name}_kernel"
    return kernel


for _name in ("cumsum", "cumprod"):  # cumulative_sum / cumulative_prod use these stubs too
    register(_name, "cuda", _scan(_name))


def _lazy(module, name):
    # imports kernels/cuda/<module>.py on first call (see the module docstring)
    def kernel(*args, **kwargs):
        import importlib
        return getattr(importlib.import_module(f"{__name__}.{module}"), name)(*args, **kwargs)
    kernel.__name__ = name
    return kernel


register("sort", "cuda", _lazy("sorting", "sort_kernel"))  # sort / argsort / unique_*
register("searchsorted", "cuda", _lazy("sorting", "searchsorted_kernel"))
register("index", "cuda", _lazy("indexing", "index"))  # advanced indexing: gather
register("index_put", "cuda", _lazy("indexing", "index_put"))  # scatter
register("nonzero", "cuda", _lazy("indexing", "nonzero"))

for _name in ("softmax", "log_softmax", "layer_norm"):  # fused row-wise normalizations
    register(_name, "cuda", _lazy("normalization", f"{_name}_kernel"))
for _name in ("softmax_backward", "log_softmax_backward", "layer_norm_backward",
              "layer_norm_grad_xhat"):
    register(_name, "cuda", _lazy("normalization_backward", f"{_name}_kernel"))

for _name in ("uniform", "normal", "integers", "bernoulli", "multinomial"):  # Philox streams
    register(f"random_{_name}", "cuda", _lazy("random", f"{_name}_kernel"))
