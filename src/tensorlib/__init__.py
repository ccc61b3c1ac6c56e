"""tensorlib: a torch-free, GPU-first tensor and kernel library.

The public functions and Tensor methods are generated from ops.yaml at import (see
dispatch/registration.py); Numba and Triton are imported only when a kernel first runs.
"""
from . import dtypes as _dtypes_mod
from .device import Device
from .dtypes import (bfloat16, bool_, can_cast, complex64, complex128, finfo, float16, float32,
                     float64, iinfo, int8, int16, int32, int64, isdtype, result_type, uint8,
                     uint16, uint32, uint64)
from .tensor import Tensor
from .ops.creation import asarray, from_numpy, tensor
from .dispatch import registration as _registration
from .dispatch import stub as _stub


def _load_cpu_kernels():
    from .kernels import cpu  # noqa: F401  (importing it registers its kernels)


def _load_cuda_kernels():
    from .kernels import cuda  # noqa: F401


# The backends, found by the stub table on a device type's first kernel lookup: the table sits
# below the kernels and imports none of them (tests/test_layering.py).
_stub.add_backend("cpu", _load_cpu_kernels)
_stub.add_backend("cuda", _load_cuda_kernels)
from . import dispatch, cpu, cuda
from .streams import Event, Stream, stream, synchronize
from . import profiler
from .array_api_info import __array_namespace_info__
from . import random
from .random import (Generator, default_generator, manual_seed, seed, initial_seed,
                     get_rng_state, set_rng_state)
from .dlpack import from_dlpack
from .autograd.grad_mode import (enable_grad, inference_mode, is_grad_enabled,
                                 is_inference_mode_enabled, no_grad, set_grad_enabled)

bool = bool_  # noqa: A001  (the Array API spells the dtype `bool`)

__array_api_version__ = "2024.12"
__version__ = "0.1.0"  # pyproject.toml's version (tests/test_numpy_names.py keeps them equal)

e = 2.718281828459045
pi = 3.141592653589793
inf = float("inf")
nan = float("nan")
newaxis = None


def _install():
    from .ops import copy as _copy
    from .ops.indexing import getitem, setitem

    from .ops.pointwise import make_pointwise_kernel
    functions, methods = _registration.load(make_pointwise_kernel)
    from . import dlpack as _dlpack
    Tensor.__dlpack__ = _dlpack.tensor_dlpack
    Tensor.__dlpack_device__ = _dlpack.tensor_dlpack_device
    from .ops import manipulation as _manipulation
    functions["meshgrid"] = _manipulation.meshgrid_varargs  # Array API f(*arrays)
    functions["broadcast_arrays"] = _manipulation.broadcast_arrays_varargs
    functions["concatenate"] = functions["concat"]  # NumPy's name
    for _name in ("concat", "concatenate", "stack"):  # an empty list has nothing to dispatch on
        functions[_name] = _manipulation.nonempty_list_op(_name, functions[_name])
    globals().update(functions)
    for name, fn in methods.items():
        setattr(Tensor, name, fn)
    Tensor._fill_range = _copy.fill_range
    from . import array_api_info as _info, serialization as _serialization
    Tensor.__reduce_ex__ = _serialization.reduce_tensor
    Tensor.__array_namespace__ = _info.array_namespace
    Tensor.zero_ = _copy.zero_
    Tensor.astype = functions["astype"]
    Tensor.__getitem__ = getitem
    Tensor.__setitem__ = setitem
    from .ops import transfer
    from .streams import record_stream
    Tensor.to = transfer.tensor_to
    Tensor.cuda = transfer.cuda
    Tensor.cpu = transfer.cpu
    Tensor.pin_memory = transfer.pin_memory
    Tensor.is_pinned = transfer.is_pinned
    Tensor.record_stream = record_stream
    from .ops.composite import to_device as _to_device
    Tensor.to_device = _to_device
    from . import numpy_interop, numpy_names  # NumPy's protocols and day-one names
    numpy_interop.install()
    for _name in ("dot", "unique", "isin", "broadcast_shapes"):
        functions[_name] = globals()[_name] = getattr(numpy_names, _name)
    Tensor.copy = numpy_names.tensor_copy
    Tensor.sort = numpy_names.tensor_sort
    from .dispatch import namespace as _namespace
    _namespace.fill({**functions, **_registration.INTERNAL, "asarray": asarray, "tensor": tensor,
                     "from_numpy": from_numpy})
    from . import autograd as _autograd
    _autograd.install(functions, Tensor)
    return sorted(functions)


_FUNCTIONS = _install()
from .runtime import import_cache as _import_cache  # noqa: E402
_import_cache.save()  # what _install parsed and compiled, for the next process's import
from .kernels.cuda.flags import backends  # noqa: E402  (tl.backends.matmul.allow_tf32)
from . import linalg  # noqa: E402  (after _install: composed from the generated ops)
tensordot = linalg.tensordot  # takes the Array API's pair of axis sequences too

# Imported on first use (tl.jit, tl.nn, tl.optim): together they cost ~45 ms of every import.
_LAZY_SUBMODULES = ("jit", "nn", "optim")


def __getattr__(name):
    if name in _LAZY_SUBMODULES:
        import importlib
        module = importlib.import_module(f".{name}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module 'tensorlib' has no attribute {name!r}")

__all__ = (["Device", "Tensor", "backends", "cuda", "synchronize", "profiler", "Generator",
            "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state",
            "default_generator", "from_dlpack", "autograd", "no_grad", "enable_grad",
            "set_grad_enabled", "inference_mode", "is_grad_enabled", "is_inference_mode_enabled", "__array_namespace_info__", "Stream", "Event", "stream", "asarray", "from_numpy", "tensor", "can_cast", "result_type",
            "finfo", "iinfo", "isdtype", "e", "pi", "inf", "nan", "newaxis", "linalg"]
           + [d.name for d in _dtypes_mod.ALL_DTYPES] + _FUNCTIONS)

# tensorlib tensors as dask.array chunks: registered with dask when (or once) dask.array is
# imported; this imports no dask itself
from .dask_backend import install_import_hook as _dask_hook  # noqa: E402
_dask_hook()
del _dask_hook
