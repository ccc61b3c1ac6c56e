"""Random ops, device-generic: argument checks, the generator's counter reservation, output
allocation, then the device kernel behind a DispatchStub.

The values for a (seed, offset) are defined in tensorlib/random.py; the stubs (and what each
device kernel receives) are:
    random_uniform(out, seed, block, low, high)        out: contiguous, real floating
    random_normal(out, seed, block, mean, std)         out: contiguous, real floating
    random_integers(out, seed, block, low, span)       out: contiguous, real or bool
    random_bernoulli(out, probs | None, p, seed, block)
    random_multinomial(out, probs_f64, num_samples, replacement, seed, block)
Element i of an op is the i-th element of its result in C order. In-place ops on a
non-contiguous tensor draw into a contiguous buffer and copy it in.
"""
from __future__ import annotations

import math
import operator

from .. import dtypes as _dt
from ..dispatch.stub import get_stub
from ..allocation import empty, normalize_shape, resolve_device as _resolve_device
from ..random import blocks_needed, generator_for
from ..tensor import Tensor

__all__ = ["rand", "randn", "randint", "uniform_", "normal_", "random_", "bernoulli",
           "randperm", "multinomial"]

_FLOATS = (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64)


def _device(device, op, generator):
    if device is None and generator is not None and hasattr(generator, "device"):
        return generator.device  # the generator says where the result lives
    return _resolve_device(device, op)


def _reserve(gen, n, per_block):
    return gen._reserve(blocks_needed(n, per_block))


def _real_view(t: Tensor) -> Tensor:
    """A contiguous complex tensor as a 1-D tensor of its real dtype (re, im interleaved)."""
    return Tensor._make(t._storage, (t._numel * 2,), (1,), t._offset * 2, _dt.real_for(t.dtype))


def _float_dtype(op, dtype, allow_complex=True):
    dtype = _dt.default_float() if dtype is None else dtype
    if dtype.kind == "c" and allow_complex:
        return dtype
    if dtype not in _FLOATS:
        raise TypeError(f"{op}(): argument 'dtype' must be a floating-point dtype"
                        f"{' or complex' if allow_complex else ''}, got {dtype}")
    return dtype


def _into(self, op, fill):
    """Runs ``fill(dense_tensor)`` on self, or on a contiguous buffer copied into self."""
    if not isinstance(self, Tensor):
        raise TypeError(f"{op}(): argument 'self' must be a Tensor, got {type(self).__name__}")
    if self._numel == 0:
        return self
    if self.is_contiguous():
        fill(self)
    else:
        buf = empty(self.shape, dtype=self.dtype, device=self.device)
        fill(buf)
        self.copy_(buf)
    return self


# ---------------------------------------------------------------- uniform
def _uniform_fill(t, op, low, high, generator):
    gen = generator_for(generator, t.device, op)
    target = _real_view(t) if t.dtype.kind == "c" else t
    n = target._numel
    seed, block = _reserve(gen, n, 2 if target.dtype is _dt.float64 else 4)
    get_stub("random_uniform").kernel_for(t.device.type, t.dtype)(target, seed, block, low,
                                                                  high)


def _check_range(op, low, high):
    for v, name in ((low, "low"), (high, "high")):
        if not math.isfinite(v):
            raise ValueError(f"{op}(): argument '{name}' must be finite, got {v}")
    if not low <= high:
        raise ValueError(f"{op}(): expects low <= high, got low={low}, high={high}")


def _new_float_samples(op, fill, shape, dtype, device, generator, a, b) -> Tensor:
    """rand / randn: a new floating tensor filled by ``fill(t, op, a, b, generator)``."""
    shape = normalize_shape(shape, op)
    dtype = _float_dtype(op, dtype)
    out = empty(shape, dtype=dtype, device=_device(device, op, generator))
    if out._numel:
        fill(out, op, a, b, generator)
    return out


def _float_samples_into(self, op, fill, a, b, generator) -> Tensor:
    """uniform_ / normal_: fill ``self``, which must be floating."""
    if isinstance(self, Tensor) and self.dtype.kind not in "fc":
        raise TypeError(f"{op}(): expects a floating-point tensor, got {self.dtype}")
    return _into(self, op, lambda t: fill(t, op, a, b, generator))


def rand(shape, dtype=None, device=None, generator=None) -> Tensor:
    """Uniform [0, 1) samples (complex: real and imaginary parts each uniform)."""
    return _new_float_samples("rand", _uniform_fill, shape, dtype, device, generator, 0.0, 1.0)


def uniform_(self, low=0.0, high=1.0, generator=None) -> Tensor:
    _check_range("uniform_", low, high)
    return _float_samples_into(self, "uniform_", _uniform_fill, low, high, generator)


# ---------------------------------------------------------------- normal
def _normal_fill(t, op, mean, std, generator):
    gen = generator_for(generator, t.device, op)
    if t.dtype.kind == "c":
        # Complex normal: real and imaginary parts each N(0, std**2 / 2); mean on the real part.
        target = _real_view(t)
        std = std * math.sqrt(0.5)
    else:
        target = t
    n = target._numel
    seed, block = _reserve(gen, n, 2 if target.dtype is _dt.float64 else 4)
    kernel = get_stub("random_normal").kernel_for(t.device.type, t.dtype)
    if t.dtype.kind == "c":
        kernel(target, seed, block, 0.0, std)
        if mean != 0:
            target[0::2].add_(mean)
    else:
        kernel(target, seed, block, mean, std)


def _check_normal(op, mean, std):
    if not math.isfinite(mean):
        raise ValueError(f"{op}(): argument 'mean' must be finite, got {mean}")
    if not (std >= 0 and math.isfinite(std)):
        raise ValueError(f"{op}(): argument 'std' must be finite and >= 0, got {std}")


def randn(shape, dtype=None, device=None, generator=None) -> Tensor:
    """Standard normal samples (complex: E|z|^2 = 1, real and imaginary parts independent)."""
    return _new_float_samples("randn", _normal_fill, shape, dtype, device, generator, 0.0, 1.0)


def normal_(self, mean=0.0, std=1.0, generator=None) -> Tensor:
    _check_normal("normal_", mean, std)
    return _float_samples_into(self, "normal_", _normal_fill, mean, std, generator)


# ---------------------------------------------------------------- integers
def _integers_fill(t, op, low, span, generator):
    gen = generator_for(generator, t.device, op)
    seed, block = _reserve(gen, t._numel, 4 if span <= (1 << 32) else 2)
    get_stub("random_integers").kernel_for(t.device.type, t.dtype)(t, seed, block, low, span)


def _int_bounds(dtype):
    """[min, max] of the integers a dtype holds exactly (floats: up to 2**digits)."""
    if dtype is _dt.bool_:
        return 0, 1
    if dtype.kind in "iu":
        info = _dt.iinfo(dtype)
        return info.min, info.max
    digits = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}[dtype.name]
    return -(1 << digits), 1 << digits


def randint(low, high, shape, dtype=None, device=None, generator=None) -> Tensor:
    """Integers uniform in [low, high) (default dtype int64)."""
    shape = normalize_shape(shape, "randint")
    dtype = _dt.default_int() if dtype is None else dtype
    if dtype.kind == "c":
        raise TypeError(f"randint(): argument 'dtype' must be a real dtype, got {dtype}")
    if not low < high:
        raise ValueError(f"randint(): expects low < high, got low={low}, high={high}")
    lo, hi = _int_bounds(dtype)
    if low < lo or high - 1 > hi:
        raise ValueError(f"randint(): [low, high) = [{low}, {high}) is out of the range "
                         f"[{lo}, {hi}] of {dtype}")
    out = empty(shape, dtype=dtype, device=_device(device, "randint", generator))
    if out._numel:
        _integers_fill(out, "randint", low, high - low, generator)
    return out


def random_(self, low=0, high=None, generator=None) -> Tensor:
    """Integers uniform in [low, high); high defaults to one past the dtype's largest
    integer (for floats 2**digits + 1, so every float integer in [0, 2**digits] can occur)."""
    if not isinstance(self, Tensor):
        raise TypeError(f"random_(): argument 'self' must be a Tensor, got "
                        f"{type(self).__name__}")
    if self.dtype.kind == "c":
        raise TypeError(f"random_(): expects a real tensor, got {self.dtype}")
    lo, hi = _int_bounds(self.dtype)
    if high is None:
        high = hi + 1
    if not low < high:
        raise ValueError(f"random_(): expects low < high, got low={low}, high={high}")
    if low < lo or high - 1 > hi:
        raise ValueError(f"random_(): [low, high) = [{low}, {high}) is out of the range "
                         f"[{lo}, {hi}] of {self.dtype}")
    return _into(self, "random_",
                 lambda t: _integers_fill(t, "random_", low, high - low, generator))


# ---------------------------------------------------------------- bernoulli
def bernoulli(self, p=None, generator=None) -> Tensor:
    """0/1 samples of self's dtype and shape: with probability ``self`` elementwise, or ``p``
    everywhere when given."""
    if not isinstance(self, Tensor):
        raise TypeError(f"bernoulli(): argument 'self' must be a Tensor, got "
                        f"{type(self).__name__}")
    if self.dtype.kind == "c":
        raise TypeError(f"bernoulli(): expects a real tensor, got {self.dtype}")
    if p is not None and not 0.0 <= p <= 1.0:
        raise ValueError(f"bernoulli(): argument 'p' must be in [0, 1], got {p}")
    if p is None and self.dtype.kind != "f":
        raise TypeError(f"bernoulli(): probabilities must be floating point, got "
                        f"{self.dtype} (or pass p=)")
    gen = generator_for(generator, self.device, "bernoulli")
    out = empty(self.shape, dtype=self.dtype, device=self.device)
    if out._numel == 0:
        return out
    probs = None if p is not None else self.contiguous()
    seed, block = _reserve(gen, out._numel, 4)
    get_stub("random_bernoulli").kernel_for(self.device.type, self.dtype)(
        out, probs, 0.0 if p is None else float(p), seed, block)
    return out


# ---------------------------------------------------------------- randperm
def randperm(n, dtype=None, device=None, generator=None) -> Tensor:
    """A random permutation of 0..n-1: the stable argsort of n 64-bit random keys."""
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"randperm(): argument 'n' must be non-negative, got {n}")
    dtype = _dt.int64 if dtype is None else dtype
    if dtype.kind == "c" or dtype is _dt.bool_:
        raise TypeError(f"randperm(): argument 'dtype' must be a real numeric dtype, got "
                        f"{dtype}")
    lo, hi = _int_bounds(dtype)
    if n - 1 > hi:
        raise ValueError(f"randperm(): n={n} values do not fit in {dtype}")
    dev = _device(device, "randperm", generator)
    keys = empty((n,), dtype=_dt.uint64, device=dev)
    if n:
        _integers_fill(keys, "randperm", 0, 1 << 64, generator)
    from .sorting import argsort
    perm = argsort(keys, axis=-1, descending=False, stable=True)
    return perm if dtype is _dt.int64 else perm.astype(dtype)


# ---------------------------------------------------------------- multinomial
def multinomial(self, num_samples, replacement=False, generator=None) -> Tensor:
    """Category indices (int64) drawn from each row of the non-negative weights ``self``
    (1-D or 2-D); without replacement each row's samples are distinct."""
    op = "multinomial"
    if not isinstance(self, Tensor):
        raise TypeError(f"{op}(): argument 'self' must be a Tensor, got {type(self).__name__}")
    if self.ndim not in (1, 2):
        raise ValueError(f"{op}(): argument 'self' must be 1-D or 2-D, got shape {self.shape}")
    if self.dtype.kind != "f":
        raise TypeError(f"{op}(): argument 'self' must be floating point, got {self.dtype}")
    ncat = self.shape[-1]
    if ncat == 0:
        raise ValueError(f"{op}(): argument 'self' has no categories (shape {self.shape})")
    if num_samples <= 0:
        raise ValueError(f"{op}(): argument 'num_samples' must be positive, got {num_samples}")
    if not replacement and num_samples > ncat:
        raise ValueError(f"{op}(): can't draw num_samples={num_samples} > {ncat} categories "
                         f"without replacement")
    gen = generator_for(generator, self.device, op)
    rows = 1 if self.ndim == 1 else self.shape[0]
    probs = self.reshape((rows, ncat)).astype(_dt.float64, copy=False).contiguous()
    out = empty((rows, num_samples), dtype=_dt.int64, device=self.device)
    if rows == 0:
        return out if self.ndim == 2 else out.reshape((num_samples,))
    per_row = num_samples if replacement else ncat
    seed, block = _reserve(gen, rows * per_row, 2)
    get_stub("random_multinomial").kernel_for(self.device.type, self.dtype)(
        out, probs, num_samples, bool(replacement), seed, block)
    return out if self.ndim == 2 else out.reshape((num_samples,))

