"""Numba CPU kernels: importing this package registers them in the DispatchStub tables."""
from ...runtime.cpu import (compile_gc as _compile_gc, numba_cache_load as _numba_cache_load,
                            vector_width as _vector_width)

_vector_width.configure()  # before this package's first Numba compile or cache load
_vector_width.install()  # per-kernel 512-bit vectors for the modules that ask for them
from .. import codegen as _codegen

# a cache load initializes Numba's runtime only, not its compiler; the runtime's compiled
# module is kept beside the kernels
_numba_cache_load.install(runtime_dir=_codegen.cache_dir)
_compile_gc.install()  # compiles run with the cyclic garbage collector paused
from ...dispatch.stub import register
from . import creation
from .pointwise import run_pointwise
from . import pointwise_fast  # noqa: F401  (attaches the fast paths' runners to run_pointwise)

register("pointwise", "cpu", run_pointwise)  # every ops.yaml pointwise op, copy and fill
register("fill_range", "cpu", creation.fill_range)
from .matmul import matmul_kernel  # noqa: E402
register("matmul", "cpu", matmul_kernel)
from . import indexing as _indexing  # noqa: E402  (advanced indexing: gather/scatter/nonzero)
register("index", "cpu", _indexing.index)
register("index_put", "cpu", _indexing.index_put)
register("nonzero", "cpu", _indexing.nonzero)
from . import reduction as _reduction  # noqa: E402  (reductions and scans)
for _name in ("sum", "prod", "mean", "max", "min", "any", "all", "var", "std", "argmax",
              "argmin", "cumsum", "cumprod", "count_nonzero"):
    register(_name, "cpu", getattr(_reduction, f"{_name}_kernel"))
for _name in ("sum", "prod", "mean", "max", "min", "any", "all", "var", "std", "argmax",
              "argmin", "cumsum", "cumprod", "count_nonzero"):
    getattr(_reduction, f"{_name}_kernel").capture = _reduction.capture  # plans (ops/reduction.py)
from . import random as _random  # noqa: E402  (Philox random streams)
register("random_uniform", "cpu", _random.uniform_kernel)
register("random_normal", "cpu", _random.normal_kernel)
register("random_integers", "cpu", _random.integers_kernel)
register("random_bernoulli", "cpu", _random.bernoulli_kernel)
register("random_multinomial", "cpu", _random.multinomial_kernel)
from . import sorting as _sorting  # noqa: E402  (radix sort rows, binary search)
register("sort", "cpu", _sorting.sort_kernel)
register("searchsorted", "cpu", _sorting.searchsorted_kernel)
from . import normalization as _normalization  # noqa: E402  (fused softmax / layer_norm rows)
register("softmax", "cpu", _normalization.softmax_kernel)
register("log_softmax", "cpu", _normalization.log_softmax_kernel)
register("layer_norm", "cpu", _normalization.layer_norm_kernel)


def _norm_bwd(name):
    # their fused input gradients (autograd), imported at the first backward: setting up the
    # module's kernels costs ~50 ms that a forward-only program need not pay
    def kernel(*args):
        from . import normalization_backward
        return getattr(normalization_backward, name)(*args)
    kernel.__name__ = name
    return kernel


for _name in ("softmax_backward", "log_softmax_backward", "layer_norm_backward",
              "layer_norm_grad_xhat"):
    register(_name, "cpu", _norm_bwd(f"{_name}_kernel"))


def _xent(name):
    # cross_entropy's fused pair (nn.functional's plain case), imported at the first call
    fn = []

    def kernel(*args):
        if not fn:
            from . import cross_entropy
            fn.append(getattr(cross_entropy, name))
        return fn[0](*args)
    kernel.__name__ = name
    return kernel


for _name in ("cross_entropy", "cross_entropy_backward"):
    register(_name, "cpu", _xent(f"{_name}_kernel"))
