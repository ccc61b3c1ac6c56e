"""Torch-free launch layer between tensorlib and Triton.

* Modes. On the interpret backend kernels run in Triton's interpreter, on a real GPU (and for
  ahead-of-time compiles) they are compiled. Triton normally picks one mode per process from
  ``TRITON_INTERPRET`` when ``@triton.jit`` runs; tensorlib instead builds every kernel with
  :func:`jit_for` (an explicit ``JITFunction`` or ``InterpretedFunction``) inside modules loaded
  once per mode (:func:`helpers`, :func:`generated_module`), so both backends work in one
  process (the test suite switches between them) and ``TRITON_INTERPRET`` is not needed.
  Kernels call only builtins of ``triton.language`` and this package's helpers, never the
  ``@triton.jit`` functions of Triton's standard library (``tl.zeros``, ``tl.cdiv``,
  ``tl.sum``...), whose mode was fixed when Triton was imported.
* Arguments. Triton takes any object with ``data_ptr()`` and a ``dtype`` string as a typed
  pointer; :class:`DeviceArg` is that object, plus the few storage hooks the interpreter calls to
  stage arguments to the host (device memory *is* host memory there, so they are identities).
  It holds a raw pointer only, never a Storage: stream work must not own tensor memory.
* Streams. Compiled launches go to tensorlib's current stream of the tensor's device
  (``triton.runtime.driver.active.get_current_stream`` is pointed at it). Interpreted launches
  are enqueued as work on the current interpret stream, so they are ordered with copies,
  events and waits exactly like GPU work; the interpreter patches ``triton.language`` globally
  while a kernel runs, so interpreted kernels are serialised by one process-wide lock. At
  exit, queued interpreted kernels are waited for (a daemon stream thread killed inside the
  interpreter's C++ code aborts the process).
* Caching. Generated kernel sources are written once under the tensorlib kernel cache dir and
  imported (Triton needs real source files); the modules are memoised per (source, mode).
  Compiled binaries are cached by Triton itself (its cache dir), keyed on the signature,
  constexprs and options of each launch.
"""
from __future__ import annotations

import atexit
import functools
import importlib
import importlib.util
import os
import sys
import threading
from functools import partial

import numpy as np

from ... import dtypes as _dt
from ...runtime.compile_lock import COMPILE_LOCK
from .. import codegen as _codegen
from ...runtime.cuda import context
from ...runtime.cuda.streams import current_handle

__all__ = ["current_mode", "force_compiled", "interpreting", "jit_for", "helpers",
           "complex_helpers", "helper_part", "helper_mode", "libdevice_for", "DeviceArg", "arg_for",
           "pack_scalar", "launch", "generated_module", "kernel_cache_dir", "next_pow2", "cdiv",
           "INTERPRETER_LOCK"]

# the interpreter's grid state and patches are global; the lock is also held while tensorlib
# compiles generated Python (runtime/compile_lock.py: Python 3.11's AST state is shared)
INTERPRETER_LOCK = COMPILE_LOCK
_forced = None                        # "compiled" when set by force_compiled (AOT, no device)
_hooks_installed = False


# ---- modes -------------------------------------------------------------------------------------
def current_mode() -> str:
    """'interpret' on the interpret backend, else 'compiled' (a real GPU, or AOT compiles)."""
    if _forced is not None:
        return _forced
    return "interpret" if context.backend_name() == "interpret" else "compiled"


def force_compiled() -> None:
    """Compiled mode without asking for a device (ahead-of-time compilation)."""
    global _forced
    _forced = "compiled"


def interpreting() -> bool:
    return current_mode() == "interpret"


def jit_for(mode: str):
    """``@triton.jit`` for one mode, whatever TRITON_INTERPRET says."""
    def decorator(fn=None, **kwargs):
        def wrap(f):
            if mode == "interpret":
                from triton.runtime.interpreter import InterpretedFunction
                return InterpretedFunction(f, **kwargs)
            from triton.runtime.jit import JITFunction
            return JITFunction(f, **kwargs)
        return wrap(fn) if fn is not None else wrap
    return decorator


_HELPERS = {"compiled": "tensorlib.kernels.cuda.scalar_math",
            "interpret": "tensorlib.kernels.cuda._scalar_math_interpret"}
# complex_math.py (pair-of-components helpers of complex kernels), loaded per mode the same way
COMPLEX_HELPERS = {"compiled": "tensorlib.kernels.cuda.complex_math",
                   "interpret": "tensorlib.kernels.cuda._complex_math_interpret"}
# Every file of the Triton helpers: scalar_math and complex_math are facades over the parts
# (each built per mode by helper_part). Their bytes key the generated modules (_helpers_digest).
HELPER_FILES = ("scalar_math.py", "scalar_bits.py", "scalar_arith.py", "scalar_transcend.py",
                "complex_math.py", "complex_base.py", "complex_arith.py", "complex_glibc.py",
                "complex_numba.py", "_interp_libdevice.py", "launch.py")
_load_lock = threading.RLock()


def helpers(mode: str):
    """scalar_math built for ``mode``: the package module for 'compiled', a second copy of the
    same file (its helpers interpreted, libdevice a NumPy shim) for 'interpret'."""
    return helper_part("scalar_math", mode)


def complex_helpers(mode: str):
    """complex_math built for ``mode``, as :func:`helpers` builds scalar_math."""
    return helper_part("complex_math", mode)


def helper_part(stem: str, mode: str):
    """The helper module ``kernels/cuda/<stem>.py`` built for ``mode``: imported as itself for
    'compiled', loaded again from the same file as ``_<stem>_interpret`` for 'interpret'. The
    helper files read their mode from ``__tl_mode__`` and fetch the parts they call through
    this function, so one mode's helpers only ever call helpers of that mode."""
    if mode == "compiled":
        name = f"tensorlib.kernels.cuda.{stem}"
    else:
        name = f"tensorlib.kernels.cuda._{stem}_interpret"
    return _helpers_module(name, stem + ".py", mode)


def helper_mode(module_globals):
    """(mode, ``jit`` decorator of that mode) for a helper file being executed: helper_part
    sets ``__tl_mode__`` in the copy it loads for 'interpret'; a plain import is 'compiled'."""
    mode = module_globals.get("__tl_mode__", "compiled")
    return mode, jit_for(mode)


def libdevice_for(mode: str):
    """CUDA libdevice for compiled helpers; in interpret mode its NumPy shim."""
    if mode == "interpret":
        from ._interp_libdevice import libdevice
    else:
        from triton.language.extra.cuda import libdevice
    return libdevice


def _helpers_module(name, filename, mode):
    mod = sys.modules.get(name)
    if mod is not None:
        return mod
    if mode == "compiled":
        return importlib.import_module(name)
    with _load_lock:
        mod = sys.modules.get(name)
        if mod is None:
            path = os.path.join(os.path.dirname(__file__), filename)
            spec = importlib.util.spec_from_file_location(name, path)
            mod = importlib.util.module_from_spec(spec)
            mod.__dict__["__tl_mode__"] = mode
            sys.modules[name] = mod
            try:
                with COMPILE_LOCK:
                    spec.loader.exec_module(mod)
            except BaseException:
                del sys.modules[name]
                raise
    return mod


# ---- arguments ---------------------------------------------------------------------------------
class _HostBytes:
    """The interpreter's view of an argument's storage: already host memory, so ``cpu()`` is
    itself and the copy back after the kernel is a no-op."""

    __slots__ = ("ptr",)

    def __init__(self, ptr):
        self.ptr = ptr

    def data_ptr(self):
        return self.ptr

    def cpu(self):
        return self

    def copy_(self, other):
        return self


class DeviceArg:
    """A typed pointer as Triton wants it: ``data_ptr()`` and ``dtype`` (a Triton type name such
    as 'float32', 'uint16'), plus the interpreter's storage hooks."""

    __slots__ = ("ptr", "dtype", "itemsize")

    def __init__(self, ptr: int, dtype: str, itemsize: int):
        self.ptr = ptr
        self.dtype = dtype
        self.itemsize = itemsize

    def data_ptr(self) -> int:
        return self.ptr

    # -- what GridExecutor._init_args_hst / _restore_args_dev call ---------------------------
    def untyped_storage(self):
        return _HostBytes(self.ptr)

    def storage_offset(self) -> int:
        return 0

    def size(self):
        return (0,)

    def stride(self):
        return (1,)

    def new_empty(self, *args, **kwargs):
        return DeviceArg(0, self.dtype, self.itemsize)

    def set_(self, storage, offset, size, stride):
        self.ptr = storage.data_ptr() + offset * self.itemsize
        return self

    def __repr__(self):
        return f"DeviceArg(0x{self.ptr:x}, {self.dtype})"


# Storage types kernels see: bool as bytes, bfloat16 as its raw 16 bits (the kernels convert
# explicitly so the interpreter and the GPU round the same way), complex as its component.
_ARG_DTYPE = {_dt.bool_: "uint8", _dt.bfloat16: "uint16", _dt.complex64: "float32",
              _dt.complex128: "float64"}


_ITEMSIZE = {"uint8": 1, "int8": 1, "int16": 2, "uint16": 2, "float16": 2, "bfloat16": 2,
             "int32": 4, "uint32": 4, "float32": 4, "int64": 8, "uint64": 8, "float64": 8}


def arg_for(storage_ptr: int, dtype, element_offset: int = 0, as_dtype: str | None = None):
    """A DeviceArg at element ``element_offset`` of a buffer of ``dtype`` elements, typed as
    ``as_dtype`` (a Triton type name; default: how kernels see ``dtype``)."""
    name = as_dtype or _ARG_DTYPE.get(dtype, dtype.name)
    return DeviceArg(storage_ptr + element_offset * dtype.itemsize, name, _ITEMSIZE[name])


def pack_scalar(value, dtype):
    """(lo, hi): the bits of NumPy scalar ``value`` of ``dtype`` as two signed int32 Python ints.
    Kernels rebuild the value from them (scalar_math.join64 & co.): Triton would otherwise type
    a Python float as fp32 and an int by its magnitude."""
    if dtype.itemsize == 8:
        bits = int(np.asarray(value, dtype.np_dtype).view(np.int64))
    elif dtype.kind == "f":
        bits = int(np.asarray(value, dtype.np_dtype).view(np.int32))
    else:
        bits = int(value)  # bool, and integers of <= 32 bits (their value, sign-extended)
    lo = ((bits & 0xFFFFFFFF) ^ 0x80000000) - 0x80000000
    hi = (bits >> 32) if dtype.itemsize == 8 else 0
    return lo, hi


# ---- launching ---------------------------------------------------------------------------------
def _install_stream_hooks():
    """Point Triton's CUDA driver at tensorlib's current device and stream; raises
    UnsupportedKernelError when Triton finds no GPU it can launch on (e.g. a CUDA driver
    that only pretends to be one), so callers with another path can take it."""
    global _hooks_installed
    if _hooks_installed:
        return
    import triton
    from ...dispatch.stub import UnsupportedKernelError
    try:
        triton.runtime.driver.active
    except RuntimeError as e:
        raise UnsupportedKernelError(f"CUDA kernels: Triton cannot launch on this machine "
                                     f"({e})") from None
    drv = triton.runtime.driver.active
    drv.get_current_device = context.current_device
    drv.set_current_device = context.set_device
    drv.get_current_stream = lambda device=None: current_handle(
        context.current_device() if device is None else device).id
    _hooks_installed = True


_inflight = 0                      # interpreted launches queued or running
_inflight_cv = threading.Condition()
_drain_registered = False


def kernel_name(kernel) -> str:
    return getattr(kernel, "__name__", None) or getattr(getattr(kernel, "fn", None),
                                                        "__name__", "triton_kernel")


def _launch_error(kernel, grid, args, kwargs, err):
    from ...runtime.cuda.driver import KernelLaunchError
    fn = getattr(kernel, "fn", kernel)
    where = getattr(fn, "__module__", "") or ""
    shown = ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])
    return KernelLaunchError(f"CUDA kernel {kernel_name(kernel)} ({where}) failed with grid "
                             f"{tuple(grid)} and arguments ({shown:.600}): "
                             f"{type(err).__name__}: {err}")


def _run_interpreted(kernel, grid, args, kwargs):
    global _inflight
    try:
        with INTERPRETER_LOCK, np.errstate(all="ignore"):
            kernel[grid](*args, **kwargs)
    except Exception as e:  # surfaces at the stream's next synchronize, named
        raise _launch_error(kernel, grid, args, kwargs, e) from e
    finally:
        with _inflight_cv:
            _inflight -= 1
            _inflight_cv.notify_all()


def _drain_at_exit():
    # Interpreted kernels run C++ code on daemon stream threads; Python finalization kills
    # daemon threads, which aborts the process if one is inside such code. Let them finish.
    with _inflight_cv:
        _inflight_cv.wait_for(lambda: _inflight == 0, timeout=600)


def _enqueue_interpreted(driver, stream, kernel, grid, args, kwargs):
    global _inflight, _drain_registered
    with _inflight_cv:
        _inflight += 1
        if not _drain_registered:
            atexit.register(_drain_at_exit)
            _drain_registered = True
    try:
        driver.launch_host_func(stream, partial(_run_interpreted, kernel, grid, args, kwargs))
    except BaseException:
        with _inflight_cv:
            _inflight -= 1
            _inflight_cv.notify_all()
        raise


_kernel_timer = None  # while a profiler runs: its timer of compiled launches


def set_kernel_timer(timer) -> None:
    """The running profiler hands its timer in here (None: off), as CPU streams get their
    sink, so this layer imports nothing above it. Compiled launches bypass the driver layer
    the profiler taps, so ``timer(stream_handle, name, fn)`` runs ``fn()`` and times the work
    it enqueues as kernel ``name``."""
    global _kernel_timer
    _kernel_timer = timer


def launch(kernel, grid, args, device: int, **kwargs):
    """Runs ``kernel[grid](*args, **kwargs)`` on the current stream of CUDA device ``device``.

    kwargs: constexprs and launch options (num_warps, num_stages, enable_fp_fusion); the
    interpreter ignores the options. Interpreted launches are asynchronous stream work; an
    error inside one surfaces at the stream's next synchronize, as a CUDA error would.
    """
    if current_mode() == "interpret":
        _enqueue_interpreted(context.state.driver, current_handle(device), kernel, grid, args,
                             kwargs)
        return
    _install_stream_hooks()
    prev = context.current_device()
    if prev != device:
        context.set_device(device)
    try:
        timer = _kernel_timer
        try:
            if timer is None:
                kernel[grid](*args, **kwargs)
            else:
                timer(current_handle(device), kernel_name(kernel),
                      partial(kernel[grid], *args, **kwargs))
        except Exception as e:  # compile errors, out of resources, bad arguments
            raise _launch_error(kernel, grid, args, kwargs, e) from e
    finally:
        if prev != device:
            context.set_device(prev)


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def next_pow2(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


# ---- generated kernel modules ------------------------------------------------------------------
def kernel_cache_dir() -> str:
    return _codegen.cache_dir("cuda")


@functools.lru_cache(maxsize=None)
def _helpers_digest() -> str:
    # read once per process: the helper files do not change under a running program
    here = os.path.dirname(__file__)
    return _codegen.files_digest([os.path.join(here, name) for name in HELPER_FILES], 12)


def module_header(mode: str) -> str:
    """Imports every generated kernel module starts with: triton.language, the helpers and
    the ``jit`` decorator of ``mode``."""
    return (f"import triton\n"
            f"import triton.language as tl\n"
            f"from {_HELPERS[mode]} import *\n"
            f"from tensorlib.kernels.cuda.launch import jit_for\n"
            f"jit = jit_for({mode!r})\n")


_built: dict = {}


def cached_module(key, prefix: str, make_source, mode: str):
    """The generated module for ``key`` (what identifies the text ``make_source()`` returns;
    unique per ``prefix``) in ``mode``: a hit is one dict lookup, the source is generated only
    on a miss. Racing misses build the same memoised module (generated_module locks)."""
    k = (prefix, key, mode)
    mod = _built.get(k)
    if mod is None:
        mod = _built[k] = generated_module(prefix, make_source(), mode)
    return mod


def generated_module(prefix: str, source: str, mode: str):
    """Writes ``module_header(mode) + source`` (once, atomically) under the cache dir and
    imports it; memoised. Triton reads kernel source from files, so generated kernels must
    live in one."""
    helpers(mode)
    source = (f"# tensorlib.kernels.cuda {mode} kernels, helpers {_helpers_digest()}\n"
              + module_header(mode) + source)
    return _codegen.load_module(_codegen.module_name(f"tlcuda_{prefix}_{mode[0]}", source),
                                source, kernel_cache_dir())


# ---- ahead-of-time compile jobs (aot.py compiles what each kernel module lists) ------------
class Job:
    """One (kernel, configuration): ``build()`` returns (JITFunction, signature, constexprs,
    attrs, options) in this process."""

    def __init__(self, kernel, config, build):
        self.kernel = kernel
        self.config = config
        self.build = build


def triton_type(name: str) -> str:
    """Triton's signature name of a storage type name (``float32`` -> ``fp32``)."""
    return {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64",
            "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
            "uint16": "u16", "uint32": "u32", "uint64": "u64"}[name]
