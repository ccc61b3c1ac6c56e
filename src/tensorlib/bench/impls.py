"""The implementations a case runs on: tensorlib itself and the baselines.

Every implementation exposes the same small set of operations under the same names, so a case
is written once (``suites.py``) and bound to each implementation as a zero-argument callable.
Where a library has the operation as one function it is bound directly (``np.add``), so the
per-call overhead compared in the dispatch suite is the library's own, not an adapter's.

Baselines: NumPy on the CPU, plus PyTorch-CPU when it happens to be installed (loaded through
importlib only; never a requirement). On CUDA, CuPy for everything, with its cuBLAS GEMM, or
nvmath-python's planned cuBLASLt ``Matmul`` for GEMM when nvmath-python is installed too.
"""
from __future__ import annotations

import importlib
import importlib.util
from functools import partial

import numpy as np

__all__ = ["Skip", "Ours", "NumpyImpl", "TorchCpuImpl", "CupyImpl", "host_dtype",
           "cuda_baseline", "torch_cpu_baseline", "BaselineUnavailable"]

_UNAVAILABLE = "unavailable"


class Skip(Exception):
    """Raised while preparing a case that an implementation cannot run (the message says why)."""


class BaselineUnavailable(Exception):
    """No baseline library can run on the requested device (the message says what to install)."""


def host_dtype(name: str):
    """The NumPy dtype inputs are generated in (bfloat16, which NumPy lacks, as float32)."""
    return np.dtype(np.float32) if name == "bfloat16" else np.dtype("bool" if name == "bool"
                                                                     else name)


class _Impl:
    """Shared behaviour; subclasses bind the operations."""
    label = "?"
    device = "cpu"
    #: "events" when the implementation's GPU time is read from its own CUDA events.
    timer = "cpu"

    def supports(self, dtype: str):
        """None, or why this implementation cannot hold ``dtype``."""
        return None

    def bind(self, op: str, args: tuple, kwargs: dict):
        fn = getattr(self, op, None)
        if fn is None:
            raise Skip(f"{self.label} has no {op}")
        return partial(fn, *args, **kwargs) if (args or kwargs) else fn

    def sync(self):
        pass

    def release(self):
        """Drop per-case resources (plans, cached buffers)."""

    # Composite softmax over the last axis, shared by the namespaces that spell it alike.
    def _softmax(self, x, axis=-1):
        m = self.amax(x, axis=axis, keepdims=True)
        e = self.exp(self.subtract(x, m))
        return self.divide(e, self.sum(e, axis=axis, keepdims=True))


# ---- tensorlib ---------------------------------------------------------------------------------
class Ours(_Impl):
    """tensorlib on ``device``; operations bound straight to the public functions."""

    def __init__(self, device: str):
        import tensorlib as tl
        self.tl = tl
        self.device = device
        self.label = "tensorlib"
        self.timer = "events" if device == "cuda" else "cpu"
        for name in ("add", "subtract", "multiply", "divide", "exp", "sum", "matmul", "clone",
                     "reshape", "log", "sin", "tanh", "sqrt", "pow", "where", "maximum", "less",
                     "mean", "argmax", "std", "cumsum", "sort", "argsort", "take"):
            setattr(self, name, getattr(tl, name, None) or _missing("tensorlib", name))
        self.amax = tl.max
        if hasattr(tl, "softmax"):  # a native softmax, once one exists, is what to measure
            self.softmax = lambda x, axis=-1: tl.softmax(x, axis=axis)
        else:
            self.softmax = self._softmax
        self.softmax_kind = "native" if hasattr(tl, "softmax") else "composed"
        self._flush = None
        self._traced = {}

    # ---- the fusion suite: the same expressions traced (tl.jit) and eager
    def _jit(self, name, fn, args):
        tf = self._traced.get(name)
        if tf is None:
            tf = self._traced[name] = self.tl.jit.trace(fn, args, check_trace=False)
        return tf(*args)

    def gelu_eager(self, x):
        return gelu_tanh(self.tl, x)

    def gelu_traced(self, x):
        return self._jit("gelu", partial(gelu_tanh, self.tl), (x,))

    def rownorm_eager(self, x, w, b):
        return row_norm(self.tl, x, w, b)

    def rownorm_traced(self, x, w, b):
        return self._jit("rownorm", partial(row_norm, self.tl), (x, w, b))

    def supports(self, dtype):
        return None if hasattr(self.tl, dtype) else f"tensorlib has no dtype {dtype}"

    def dtype(self, name):
        return getattr(self.tl, name)

    def from_host(self, arr, dtype):
        tl = self.tl
        t = tl.asarray(arr)
        if dtype == "bfloat16":
            t = t.astype(tl.bfloat16)
        return t.to(self.device) if self.device != "cpu" else t

    def host_input(self, arr, dtype):
        """A host-resident tensor (source of a host -> device copy)."""
        t = self.tl.asarray(arr)
        return t.astype(self.tl.bfloat16) if dtype == "bfloat16" else t

    def to_host(self, x) -> np.ndarray:
        tl = self.tl
        if isinstance(x, np.ndarray):
            return x
        if x.device.type != "cpu":
            x = x.cpu()
        if x.dtype is tl.bfloat16:
            x = x.astype(tl.float32)
        return np.array(x.numpy(), copy=True)

    def sync(self):
        if self.device == "cuda":
            self.tl.cuda.synchronize()

    def transpose_copy(self, x):
        return x.T.contiguous()

    def copy_into(self, dst, src):
        return dst.copy_(src)

    def astype(self, x, dtype):
        return x.astype(getattr(self.tl, dtype))

    def empty(self, shape, dtype):
        return self.tl.empty(shape, dtype=getattr(self.tl, dtype), device=self.device)

    def randn(self, shape, dtype):
        return self.tl.randn(shape, dtype=getattr(self.tl, dtype), device=self.device)

    def zeros(self, shape, dtype):
        return self.tl.zeros(shape, dtype=getattr(self.tl, dtype), device=self.device)

    def linspace(self, num, dtype):
        return self.tl.linspace(0.0, 1.0, num, dtype=getattr(self.tl, dtype), device=self.device)

    def concat(self, a, b):
        return self.tl.concat([a, b])

    def mask_select(self, x, mask):
        return x[mask]

    def strided_multiply(self, a, b):
        return a[::2] * b[::2]

    def rand(self, shape, dtype):
        return self.tl.rand(shape, dtype=getattr(self.tl, dtype), device=self.device)

    def h2d(self, x):
        return x.to(self.device)

    def d2h(self, x):
        return x.cpu()

    # CUDA timing: tl.cuda events on the current stream; the L2 flush is a driver memset of a
    # buffer from the caching allocator, enqueued on that same stream before each call.
    def make_event(self):
        return self.tl.cuda.Event(enable_timing=True)

    def elapsed(self, start, end):
        return start.elapsed_time(end)

    def flush(self, nbytes):
        from ..runtime.cuda import context
        from ..runtime.cuda.streams import current_handle
        tc = self.tl.cuda
        if self._flush is None or self._flush[1] != nbytes:
            self.release_flush()
            self._flush = (tc.caching_allocator_alloc(nbytes), nbytes)
        idx = tc.current_device()
        context.require("bench").memset_async(self._flush[0], 0, nbytes, current_handle(idx))

    def release_flush(self):
        if self._flush is not None:
            self.tl.cuda.synchronize()
            self.tl.cuda.caching_allocator_delete(self._flush[0])
            self._flush = None


def gelu_tanh(m, x):
    """GELU, tanh form (9 pointwise ops), in namespace ``m`` (tensorlib or NumPy)."""
    return 0.5 * x * (1.0 + m.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


def row_norm(m, x, w, b, eps=1e-5):
    """Row normalization composed of ops: mean, variance, normalize, scale, shift."""
    mu = x.mean(axis=-1, keepdims=True)
    d = x - mu
    var = (d * d).mean(axis=-1, keepdims=True)
    return d / m.sqrt(var + eps) * w + b


def _missing(lib, name):
    def missing(*args, **kwargs):
        raise NotImplementedError(f"{lib} has no {name}")
    return missing


class _ArrayNamespace(_Impl):
    """Operations of the everyday suite spelled the NumPy way, on the namespace ``self.xp``
    (NumPy, CuPy); bound directly to the library's function where it has one."""

    def _bind_namespace(self, xp):
        self.xp = xp
        for name in ("log", "sin", "tanh", "sqrt", "maximum", "less", "where", "mean", "argmax",
                     "std", "cumsum", "sort", "argsort", "take"):
            setattr(self, name, getattr(xp, name))
        self.pow = xp.power

    def zeros(self, shape, dtype):
        return self.xp.zeros(shape, dtype)

    def linspace(self, num, dtype):
        return self.xp.linspace(0.0, 1.0, num, dtype=dtype)

    def concat(self, a, b):
        return self.xp.concatenate([a, b])

    def mask_select(self, x, mask):
        return x[mask]

    def strided_multiply(self, a, b):
        return a[::2] * b[::2]


# ---- NumPy ---------------------------------------------------------------------------------------
class NumpyImpl(_ArrayNamespace):
    def __init__(self, device="cpu"):
        self.device = device
        self.label = f"numpy {np.__version__}"
        self._bind_namespace(np)
        self.add, self.subtract, self.multiply, self.divide = (np.add, np.subtract, np.multiply,
                                                               np.divide)
        self.exp, self.sum, self.amax, self.matmul = np.exp, np.sum, np.max, np.matmul
        self.clone, self.reshape = np.copy, np.reshape
        self.softmax = self._softmax
        self._rng = np.random.default_rng(0)
        # the fusion suite: NumPy has no JIT; both forms are its composed expression
        self.gelu_traced = self.gelu_eager = partial(gelu_tanh, np)
        self.rownorm_traced = self.rownorm_eager = partial(row_norm, np)

    def supports(self, dtype):
        return "NumPy has no bfloat16" if dtype == "bfloat16" else None

    def from_host(self, arr, dtype):
        return np.array(arr, dtype=host_dtype(dtype), copy=True)

    host_input = from_host

    def to_host(self, x):
        return np.asarray(x)

    def transpose_copy(self, x):
        return np.ascontiguousarray(x.T)

    def copy_into(self, dst, src):
        np.copyto(dst, src)
        return dst

    def astype(self, x, dtype):
        return x.astype(dtype)

    def empty(self, shape, dtype):
        return np.empty(shape, dtype)

    def randn(self, shape, dtype):
        if dtype not in ("float32", "float64"):
            raise Skip(f"NumPy's standard_normal has no {dtype}")
        return self._rng.standard_normal(shape, dtype=dtype)

    def rand(self, shape, dtype):
        if dtype not in ("float32", "float64"):
            raise Skip(f"NumPy's random has no {dtype}")
        return self._rng.random(shape, dtype=dtype)

    # Used only where the "device" is host memory (the CUDA plumbing test on the interpret
    # backend): a host copy stands in for the transfer.
    def h2d(self, x):
        return np.copy(x)

    d2h = h2d


# ---- PyTorch on the CPU (optional, importlib only) ----------------------------------------------
def optional_module(name):
    """An optional baseline library (PyTorch, numexpr...) when installed, else None (never an
    error): benchmarks name it by string, it is no dependency of tensorlib."""
    if importlib.util.find_spec(name) is None:
        return None
    try:
        return importlib.import_module(name)
    except Exception:  # noqa: BLE001 - a broken optional install only loses the extra column
        return None


def torch_cpu_baseline():
    """A TorchCpuImpl when PyTorch is installed, else None (never an error)."""
    module = optional_module("torch")
    return None if module is None else TorchCpuImpl(module)


class TorchCpuImpl(_Impl):
    def __init__(self, torch):
        self.torch = torch
        self.label = f"torch {torch.__version__.split('+')[0]} (CPU)"
        self.add, self.subtract, self.multiply, self.divide = (torch.add, torch.sub, torch.mul,
                                                               torch.div)
        self.exp, self.matmul, self.clone = torch.exp, torch.matmul, torch.clone
        self.softmax = lambda x, axis=-1: torch.softmax(x, dim=axis)
        self.log, self.sin, self.tanh, self.sqrt = torch.log, torch.sin, torch.tanh, torch.sqrt
        self.pow, self.where, self.maximum, self.less = (torch.pow, torch.where, torch.maximum,
                                                         torch.lt)
        self.argmax, self.argsort, self.take = torch.argmax, torch.argsort, torch.take

    def _dt(self, name):
        return self.torch.bool if name == "bool" else getattr(self.torch, name)

    def supports(self, dtype):
        return None if hasattr(self.torch, "bool" if dtype == "bool" else dtype) else \
            f"torch has no {dtype}"

    def from_host(self, arr, dtype):
        t = self.torch.from_numpy(np.array(arr, copy=True))
        return t.to(self.torch.bfloat16) if dtype == "bfloat16" else t

    host_input = from_host

    def to_host(self, x):
        if x.dtype == self.torch.bfloat16:
            x = x.float()
        return x.numpy()

    def sum(self, x, axis=None, keepdims=False):
        return self.torch.sum(x) if axis is None else self.torch.sum(x, dim=axis,
                                                                     keepdim=keepdims)

    def amax(self, x, axis=None, keepdims=False):
        return self.torch.amax(x) if axis is None else self.torch.amax(x, dim=axis,
                                                                       keepdim=keepdims)

    def reshape(self, x, shape):
        return x.reshape(shape)

    def mean(self, x, axis=None):
        return self.torch.mean(x) if axis is None else self.torch.mean(x, dim=axis)

    def std(self, x):
        return self.torch.std(x, correction=0)

    def cumsum(self, x):
        return self.torch.cumsum(x, dim=0)

    def sort(self, x):
        return self.torch.sort(x).values

    def zeros(self, shape, dtype):
        return self.torch.zeros(shape, dtype=self._dt(dtype))

    def linspace(self, num, dtype):
        return self.torch.linspace(0.0, 1.0, num, dtype=self._dt(dtype))

    def concat(self, a, b):
        return self.torch.cat((a, b))

    def mask_select(self, x, mask):
        return x[mask]

    def strided_multiply(self, a, b):
        return a[::2] * b[::2]

    def transpose_copy(self, x):
        return x.T.contiguous()

    def copy_into(self, dst, src):
        return dst.copy_(src)

    def astype(self, x, dtype):
        return x.to(self._dt(dtype))

    def empty(self, shape, dtype):
        return self.torch.empty(shape, dtype=self._dt(dtype))

    def randn(self, shape, dtype):
        return self.torch.randn(shape, dtype=self._dt(dtype))

    def rand(self, shape, dtype):
        return self.torch.rand(shape, dtype=self._dt(dtype))


# ---- CUDA: CuPy, with nvmath-python for GEMM when present ----------------------------------------
def _try_import(name):
    if importlib.util.find_spec(name.split(".")[0]) is None:
        return None
    try:
        return importlib.import_module(name)
    except Exception:  # noqa: BLE001 - an unusable install counts as absent
        return None


def cuda_baseline():
    """The CUDA baseline for this machine, or BaselineUnavailable saying what to install."""
    cp = _try_import("cupy")
    if cp is None:
        hint = (" (nvmath-python is installed, but its GEMM needs CuPy arrays)"
                if _try_import("nvmath") is not None else "")
        raise BaselineUnavailable(
            "no CUDA baseline: install CuPy (pip install cupy-cuda12x), and optionally "
            f"nvmath-python for its cuBLASLt GEMM{hint}")
    try:
        if cp.cuda.runtime.getDeviceCount() < 1:
            raise BaselineUnavailable("no CUDA baseline: CuPy sees no GPU")
    except BaselineUnavailable:
        raise
    except Exception as e:  # noqa: BLE001
        raise BaselineUnavailable(f"no CUDA baseline: CuPy cannot use the GPU ({e})") from None
    return CupyImpl(cp, _try_import("nvmath.linalg.advanced"))


class CupyImpl(_ArrayNamespace):
    device = "cuda"
    timer = "events"

    def __init__(self, cp, nvmath_advanced=None):
        self.cp = cp
        self.nvmath = nvmath_advanced
        gemm = "cuBLAS"
        if nvmath_advanced is not None:
            nv = importlib.import_module("nvmath")
            gemm = f"nvmath-python {getattr(nv, '__version__', '?')} cuBLASLt"
        self.label = f"cupy {cp.__version__} + {gemm}"
        self._bind_namespace(cp)
        self.add, self.subtract, self.multiply, self.divide = (cp.add, cp.subtract, cp.multiply,
                                                               cp.divide)
        self.exp, self.sum, self.amax = cp.exp, cp.sum, cp.max
        self.clone, self.reshape = cp.copy, cp.reshape
        self.softmax = self._softmax
        self._plans = []
        self._flush = None

    def supports(self, dtype):
        return "CuPy has no bfloat16" if dtype == "bfloat16" else None

    def from_host(self, arr, dtype):
        return self.cp.asarray(np.asarray(arr, dtype=host_dtype(dtype)))

    def host_input(self, arr, dtype):
        return np.array(arr, dtype=host_dtype(dtype), copy=True)

    def to_host(self, x):
        return self.cp.asnumpy(x) if isinstance(x, self.cp.ndarray) else np.asarray(x)

    def sync(self):
        self.cp.cuda.get_current_stream().synchronize()

    def bind(self, op, args, kwargs):
        if op == "matmul" and self.nvmath is not None and not kwargs:
            # A planned Matmul: what a cuBLASLt user runs in a loop (planning once).
            mm = self.nvmath.Matmul(*args)
            mm.plan()
            self._plans.append(mm)
            return mm.execute
        return super().bind(op, args, kwargs)

    def release(self):
        for mm in self._plans:
            try:
                mm.free()
            except Exception:  # noqa: BLE001
                pass
        self._plans = []

    def matmul(self, a, b):
        return self.cp.matmul(a, b)

    def transpose_copy(self, x):
        return self.cp.ascontiguousarray(x.T)

    def copy_into(self, dst, src):
        self.cp.copyto(dst, src)
        return dst

    def astype(self, x, dtype):
        return x.astype(dtype)

    def empty(self, shape, dtype):
        return self.cp.empty(shape, dtype)

    def randn(self, shape, dtype):
        return self.cp.random.standard_normal(shape, dtype=dtype)

    def rand(self, shape, dtype):
        return self.cp.random.random(shape, dtype=dtype)

    def h2d(self, x):
        return self.cp.asarray(x)

    def d2h(self, x):
        return self.cp.asnumpy(x)

    # Timing on CuPy's current stream with CuPy's own events and its own L2-flush buffer.
    def make_event(self):
        return self.cp.cuda.Event()

    def elapsed(self, start, end):
        return self.cp.cuda.get_elapsed_time(start, end)

    def flush(self, nbytes):
        if self._flush is None or self._flush.nbytes != nbytes:
            self._flush = self.cp.empty(nbytes, dtype=np.uint8)
        self._flush.fill(0)
