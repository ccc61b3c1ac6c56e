"""CUDA stub kernels of every pointwise op, copy, fill and fill_range: the launch side of the
generated Triton kernels (their source: pointwise_source.py).

``run_pointwise`` keeps a plan per (op, dtypes, scalar types, layout, mode) (``_Prepared``:
the kernel, grid, launch options and size / stride arguments, all fixed by dtypes and layout);
a call adds only its pointers and the scalars' bits. Indices are int32 when
``TensorIterator.can_use_32bit_indexing()`` holds (``_fits_32bit``) and int64 otherwise. Each
spec's module is generated once (launch.cached_module).

A complex tensor is addressed through component-typed pointers at element offset * 2 and
* 2 + 1 (``component_operands``); copy and fill of complex tensors run on their components.
"""
from __future__ import annotations

import math

from ... import dtypes as _dt
from ...dispatch.stub import UnsupportedKernelError
from ...tensor import Tensor
from . import launch as _launch
from ...dtype_scalars import scalar_to_compute
from .pointwise_source import (_HALF, VALUE_TL, ElementwiseSpec, cast_code, is_complex_spec,
                               kernel_source, range_source)

__all__ = ["run_pointwise", "fill_range", "full_1d", "kernel_source", "ElementwiseSpec",
           "VALUE_TL", "cast_code", "GPU_CONFIG", "gpu_config", "is_complex_spec",
           "component_operands"]


# (BLOCK, num_warps): 4 elements per thread contiguous (16-byte vectors of float32), 2 strided;
# more per thread made ptxas spill in libdevice's sin/cos and 64-bit index math (aot.py).
# Complex kernels evaluate every branch of the special-value code: one element per thread.
GPU_CONFIG = {"contig": (1024, 8), "nd": (512, 8), "complex": (256, 8)}
INTERPRET_MAX_BLOCK = 1 << 16   # interpreter: few, wide programs (each costs Python overhead)
_I32_MAX = 2 ** 31 - 1


# ---- kernels and their configurations -----------------------------------------------------------
def _kernel_for(spec, mode):
    def source():
        if is_complex_spec(spec):
            _launch.complex_helpers(mode)  # the generated module imports it by name
        return kernel_source(spec, mode)
    return _launch.cached_module(spec.key, spec.name, source, mode).kernel


def _block(numel, path, mode):
    """(BLOCK, num_warps). The interpreter runs each program in Python: few, wide ones."""
    if mode == "interpret":
        return min(_launch.next_pow2(numel), INTERPRET_MAX_BLOCK), 4
    return GPU_CONFIG[path]


def gpu_config(spec: ElementwiseSpec):
    """(BLOCK, num_warps) of ``spec``'s kernel on a GPU."""
    if is_complex_spec(spec):
        return GPU_CONFIG["complex"]
    return GPU_CONFIG["nd" if spec.ndim else "contig"]


def _scalar_words(value, dt):
    """The kernel words of scalar ``value`` of ``dt`` (four for a complex one: re, then im)."""
    if dt.kind == "c":
        comp = _dt.real_for(dt)
        return [*_launch.pack_scalar(comp.np_dtype.type(value.real), comp),
                *_launch.pack_scalar(comp.np_dtype.type(value.imag), comp)]
    return list(_launch.pack_scalar(value, dt))


# ---- launching ----------------------------------------------------------------------------------
class _Operand:
    """One tensor operand of a launch: the DeviceArg (base pointer at its offset), the dtype
    as stored (a complex tensor's component dtype for its parts) and element strides."""

    __slots__ = ("arg", "dtype", "strides")

    def __init__(self, arg, dtype, strides):
        self.arg = arg
        self.dtype = dtype
        self.strides = tuple(strides)


def _operand(t: Tensor, strides, offset, dtype=None, scale=1, extra=0):
    dtype = dtype or t._dtype
    return _Operand(_launch.arg_for(t._storage.data_ptr(), dtype, offset * scale + extra),
                    dtype, [s * scale for s in strides])


def _fits_32bit(shape, operands):
    # lanes of the last block run past numel: keep their linear index in int32 too; complex
    # operands are addressed in components (element offset * 2, + 1)
    scale = 2 if any(op.dtype.kind == "c" for op in operands) else 1
    if math.prod(shape) * scale > _I32_MAX - INTERPRET_MAX_BLOCK * scale:
        return False
    for op in operands:
        lo = hi = 0
        for n, s in zip(shape, op.strides):
            if s > 0:
                hi += (n - 1) * s
            else:
                lo += (n - 1) * s
        k = 2 if op.dtype.kind == "c" else 1
        if max(-lo, hi) * k + (k - 1) > _I32_MAX:
            return False
    return True


class _Prepared:
    """What a launch of one generated kernel needs besides pointers and scalar values: the
    kernel, grid, launch options and the size / stride arguments (all fixed by dtypes and
    layout, so run_pointwise caches it per layout)."""

    __slots__ = ("kernel", "grid", "tail", "options")

    def __init__(self, kernel, grid, tail, options):
        self.kernel, self.grid, self.tail, self.options = kernel, grid, tail, options


def _prepare(name, expr, out: _Operand, inputs, scalar_args, compute, result, shape):
    """inputs: (name, _Operand | None for a scalar, target dtype); scalar_args: (name,)."""
    tensors = [out] + [x for _, x, _ in inputs if x is not None]
    contig = len(shape) == 1 and all(op.strides == (1,) for op in tensors)
    ndim = 0 if contig else len(shape)
    spec_inputs = [(n, "T", x.dtype, target) if x is not None else (n, "S", target, target)
                   for n, x, target in inputs]
    spec = ElementwiseSpec(name, expr, spec_inputs, [(n, compute) for n in scalar_args],
                           compute, result, out.dtype, ndim)
    mode = _launch.current_mode()
    numel = math.prod(shape)
    tail = [numel]
    if ndim:
        tail += list(shape)
        for op in tensors:
            tail += list(op.strides)
    path = "complex" if is_complex_spec(spec) else "nd" if ndim else "contig"
    block, warps = _block(numel, path, mode)
    options = dict(BLOCK=block, IDX64=not _fits_32bit(shape, tensors), num_warps=warps,
                   enable_fp_fusion=False)
    return _Prepared(_kernel_for(spec, mode), (_launch.cdiv(numel, block),), tail, options)


def _launch_elementwise(name, expr, out: _Operand, inputs, scalar_args, compute, result,
                        shape, device: int):
    """inputs: (name, _Operand | NumPy scalar, target dtype); scalar_args: (name, NumPy scalar
    of the compute dtype). Launches one generated kernel over ``shape`` (dim 0 innermost)."""
    prep = _prepare(name, expr, out,
                    [(n, x if isinstance(x, _Operand) else None, t) for n, x, t in inputs],
                    [n for n, _ in scalar_args], compute, result, shape)
    targs = [x.arg for _, x, _ in inputs if isinstance(x, _Operand)]
    words = []
    for _, x, target in inputs:
        if not isinstance(x, _Operand):
            words += _scalar_words(x, target)
    for _, v in scalar_args:
        words += _scalar_words(v, compute)
    _launch.launch(prep.kernel, prep.grid, [out.arg] + targs + words + prep.tail, device,
                   **prep.options)


_plans: dict = {}   # run_pointwise's launches, per (op, dtypes, scalar types, layout, mode)
_PLANS_MAX = 4096
_int_words: dict = {}  # (value, type, dtype, op, arg) -> kernel words of a Python int / bool


def _words_of(value, dtype, op, arg):
    """The kernel words of Python scalar ``value`` as ``dtype`` (checked: errors name ``op``
    and ``arg``). Ints and bools (alpha=1, x * 2) are remembered, per op and argument (whether
    a value is allowed can depend on them: pow's exponent); floats are not, as 0.0 and -0.0
    would share a key."""
    kind = type(value)
    if kind is int or kind is bool:
        key = (value, kind, dtype, op, arg)
        words = _int_words.get(key)
        if words is None:
            words = _scalar_words(scalar_to_compute(value, dtype, op, arg), dtype)
            if len(_int_words) < 1024:
                _int_words[key] = words
        return words
    return _scalar_words(scalar_to_compute(value, dtype, op, arg), dtype)


def _device_index(it):
    return it.device.index


def run_pointwise(it, info, scalar_values):
    """CUDA stub kernel for every pointwise op, copy and fill."""
    ops = it.operands
    compute = it.compute_dtype
    out = ops[0]
    if info.name in ("copy", "fill") and (compute.kind == "c" or out._dtype.kind == "c" or any(
            isinstance(x, Tensor) and x._dtype.kind == "c" for x in ops[1:])):
        return _complex_copy(it) if info.name == "copy" else _complex_fill(it, info)
    lay = it.layout()
    mode = _launch.current_mode()
    key = (info.name, info.expr, compute, tuple(lay.shape), tuple(lay.strides), mode,
           tuple(x._dtype if isinstance(x, Tensor) else type(x) for x in ops))
    plan = _plans.get(key)
    if plan is None:
        outop = _operand(out, lay.strides[0], lay.offsets[0])
        inputs, k = [], 1
        for name, x in zip(info.tensor_args, ops[1:]):
            target = _dt.bool_ if name in info.bool_args else compute
            if isinstance(x, Tensor):
                inputs.append((name, _operand(x, lay.strides[k], lay.offsets[k]), target))
                k += 1
            else:
                inputs.append((name, None, target))
        plan = _prepare(info.name, info.expr, outop, inputs, info.scalar_args, compute,
                        info.result_dtype(compute), lay.shape)
        if len(_plans) >= _PLANS_MAX:
            _plans.pop(next(iter(_plans)))
        _plans[key] = plan
    # per call: pointers at this call's offsets and the scalars' bits
    offsets = lay.offsets
    arg_for = _launch.arg_for
    args = [arg_for(out._storage.data_ptr(), out._dtype, offsets[0])]
    words, k = [], 1
    for name, x in zip(info.tensor_args, ops[1:]):
        if isinstance(x, Tensor):
            args.append(arg_for(x._storage.data_ptr(), x._dtype, offsets[k]))
            k += 1
        else:
            target = _dt.bool_ if name in info.bool_args else compute
            words += _words_of(x, target, info.name, name)
    for arg, v in zip(info.scalar_args, scalar_values):
        words += _words_of(v, compute, info.name, arg)
    _launch.launch(plan.kernel, plan.grid, args + words + plan.tail, it.device.index,
                   **plan.options)


def component_operands(t, strides, offset):
    """A complex tensor's (real, imaginary) component operands; a real tensor alone."""
    if t._dtype.kind != "c":
        return [_operand(t, strides, offset)]
    comp = _dt.real_for(t._dtype)
    return [_operand(t, strides, offset, comp, 2, 0), _operand(t, strides, offset, comp, 2, 1)]


def _complex_copy(it):
    out, src = it.operands[0], it.operands[1]
    lay = it.layout()
    dev = _device_index(it)
    o = component_operands(out, lay.strides[0], lay.offsets[0])
    s = component_operands(src, lay.strides[1], lay.offsets[1])
    sdt = s[0].dtype
    cdt = sdt if sdt not in _HALF else _dt.float32
    if len(o) == 2 and len(s) == 2:
        for od, sd in zip(o, s):
            _launch_elementwise("copy", "self", od, [("self", sd, cdt)], [], cdt, cdt,
                                lay.shape, dev)
    elif len(o) == 2:  # real -> complex: imaginary part 0
        _launch_elementwise("copy", "self", o[0], [("self", s[0], cdt)], [], cdt, cdt,
                            lay.shape, dev)
        zero = o[1].dtype.np_dtype.type(0)
        _launch_elementwise("fill", "value", o[1], [("value", zero, o[1].dtype)], [],
                            o[1].dtype, o[1].dtype, lay.shape, dev)
    elif out._dtype is _dt.bool_:  # NumPy: true when either part is non-zero
        _launch_elementwise("copy_c2b", "logical_or(re, im)", o[0],
                            [("re", s[0], cdt), ("im", s[1], cdt)], [], cdt, _dt.bool_,
                            lay.shape, dev)
    else:  # complex -> real: the real part
        _launch_elementwise("copy", "self", o[0], [("self", s[0], cdt)], [], cdt, cdt,
                            lay.shape, dev)


def _complex_fill(it, info):
    out, value = it.operands[0], it.operands[1]
    compute = it.compute_dtype
    v = scalar_to_compute(value, compute, "fill_", "value")
    if out._dtype.kind != "c":  # a real output with a complex compute dtype cannot happen
        raise UnsupportedKernelError(f"fill_(): cannot fill {out._dtype} from {compute}")
    lay = it.layout()
    parts = component_operands(out, lay.strides[0], lay.offsets[0])
    for part, x in zip(parts, (v.real, v.imag)):
        comp = part.dtype
        _launch_elementwise("fill", "value", part, [("value", comp.np_dtype.type(x), comp)], [],
                            comp, comp, lay.shape, _device_index(it))


# ---- fill_range (arange / linspace) -------------------------------------------------------------
def _range_kernel(acc, dtype, mode):
    return _launch.cached_module((acc, dtype), "range", lambda: range_source(acc, dtype),
                                 mode).kernel


def full_1d(n: int, value, dtype, device):
    """A new 1-d tensor of ``n`` elements of ``value`` (real ``dtype``) on CUDA ``device``:
    the kernels' own scratch buffers, without going up to the creation ops."""
    from ...allocation import empty
    t = empty((n,), dtype=dtype, device=device)
    if n:
        _launch_elementwise("fill", "value", _operand(t, (1,), 0),
                            [("value", dtype.np_dtype.type(value), dtype)], [], dtype, dtype,
                            (n,), device.index)
    return t


def fill_range(t, start, step):
    """CUDA stub kernel: out[i] = start + i * step over the 1-D tensor t, computed in int64
    when everything is an integer, else float64 (per component for complex)."""
    if t._numel == 0:
        return
    dtype = t._dtype
    exact_int = dtype.kind in "iu" and all(isinstance(v, int) for v in (start, step))
    acc = _dt.int64 if exact_int else _dt.float64
    if dtype.kind == "c":
        start, step = complex(start), complex(step)
        comp = _dt.real_for(dtype)
        jobs = [(_operand(t, t._strides, t._offset, comp, 2, j), comp, s, d)
                for j, (s, d) in enumerate(((start.real, step.real), (start.imag, step.imag)))]
    else:
        jobs = [(_operand(t, t._strides, t._offset), dtype, start, step)]
    n = t._numel
    mode = _launch.current_mode()
    for op, dt, s, d in jobs:
        kernel = _range_kernel(acc, dt, mode)
        words = list(_launch.pack_scalar(acc.np_dtype.type(s), acc))
        words += _launch.pack_scalar(acc.np_dtype.type(d), acc)
        block, warps = _block(n, "contig", mode)
        idx64 = not _fits_32bit((n,), [op])
        _launch.launch(kernel, (_launch.cdiv(n, block),), [op.arg] + words + [n, op.strides[0]],
                       t.device.index, BLOCK=block, IDX64=idx64, num_warps=warps,
                       enable_fp_fusion=False)
