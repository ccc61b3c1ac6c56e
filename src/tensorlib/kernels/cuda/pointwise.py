"""Triton kernels generated from the ops.yaml pointwise expressions (and copy / fill / fill_range).

For one (op, operand dtypes, compute dtype, output dtype, which operands are Python scalars,
loop shape) the generator writes a small module with one ``@triton.jit`` kernel into the kernel
cache dir and imports it (see launch.generated_module). The loop shape is either

* ``contig``: one flat dimension with unit strides everywhere (the TensorIterator fast set-up):
  offsets are the linear index, so loads and stores vectorise; or
* ``nd<N>``: the iterator's coalesced layout (dim 0 innermost): each lane splits its linear
  index into N coordinates and dots them with each operand's strides (any sign, zero for
  broadcast).

Indices are int32 when ``TensorIterator.can_use_32bit_indexing()`` holds and int64 otherwise (a
constexpr of the same kernel). Base pointers are already advanced to each operand's offset.

Storage and values: bool is stored as bytes and read as ``!= 0``; bfloat16 as raw 16 bits with
explicit round-to-nearest-even conversion (the interpreter's own bf16 cast truncates); float16
natively. Half types compute in float32; conversions into a half type from wider types round to
odd first (as kernels/cpu/casting.py does) so the final rounding is single. Python scalars and
Scalar arguments travel as two int32 words of their bits in the compute dtype (Triton would
type a Python float as fp32). Complex tensors: copy and fill run on their real and imaginary
components; other complex ops raise UnsupportedKernelError.
"""
from __future__ import annotations

import ast
import math


from ... import dtypes as _dt
from ...dispatch.stub import UnsupportedKernelError
from ...tensor import Tensor
from . import launch as _launch
from ...ops.pointwise import scalar_to_compute

__all__ = ["run_pointwise", "fill_range", "kernel_source", "ElementwiseSpec",
           "VALUE_TL", "cast_code", "GPU_CONFIG"]

# (BLOCK, num_warps): 4 elements per thread contiguous (16-byte vectors of float32), 2 strided;
# more per thread made ptxas spill in libdevice's sin/cos and 64-bit index math (aot.py).
GPU_CONFIG = {"contig": (1024, 8), "nd": (512, 8)}
INTERPRET_MAX_BLOCK = 1 << 16   # interpreter: few, wide programs (each costs Python overhead)
_I32_MAX = 2 ** 31 - 1

# Triton type of each dtype's *value* inside a kernel (half types are float32 values).
VALUE_TL = {
    _dt.bool_: "tl.int1", _dt.int8: "tl.int8", _dt.int16: "tl.int16", _dt.int32: "tl.int32",
    _dt.int64: "tl.int64", _dt.uint8: "tl.uint8", _dt.uint16: "tl.uint16",
    _dt.uint32: "tl.uint32", _dt.uint64: "tl.uint64", _dt.float16: "tl.float32",
    _dt.bfloat16: "tl.float32", _dt.float32: "tl.float32", _dt.float64: "tl.float64",
}
_HALF = (_dt.float16, _dt.bfloat16)


# ---- code fragments ----------------------------------------------------------------------------
def load_code(dt, expr: str) -> str:
    """Loaded storage value -> the dtype's value in the kernel."""
    if dt is _dt.bool_:
        return f"({expr} != 0)"
    if dt is _dt.float16:
        return f"({expr}).to(tl.float32)"
    if dt is _dt.bfloat16:
        return f"bf16_bits_to_f32({expr})"
    return expr


def store_code(dt, expr: str) -> str:
    """A value of dtype ``dt`` in the kernel -> what is stored."""
    if dt is _dt.bool_:
        return f"({expr}).to(tl.uint8)"
    if dt is _dt.float16:
        return f"({expr}).to(tl.float16)"
    if dt is _dt.bfloat16:
        return f"f32_to_bf16_bits({expr})"
    return expr


def cast_code(src, dst, expr: str) -> str:
    """Value of ``src`` -> value of ``dst``, with NumPy's conversion rules (casting.py's)."""
    if src is dst or (src in _HALF and dst in _HALF) or (src in _HALF and dst is _dt.float32) \
            or (src is _dt.float32 and dst in _HALF):
        return expr  # the same float32 value; a half destination rounds once when stored
    if dst is _dt.bool_:
        return f"to_bool({expr})"
    if src is _dt.bool_:
        return f"({expr}).to({VALUE_TL[dst]})"
    if dst in _HALF:
        # values wider than float32's significand round to odd first (no double rounding)
        if src is _dt.float64:
            return f"f64_to_f32_odd({expr})"
        if src is _dt.int64:
            return f"i64_to_f32_odd({expr})"
        if src is _dt.uint64:
            return f"u64_to_f32_odd({expr})"
        if src in (_dt.int32, _dt.uint32):
            return f"f64_to_f32_odd(({expr}).to(tl.float64))"
        return f"({expr}).to(tl.float32)"
    if src.kind == "f" and dst.kind in "iu":
        if dst is _dt.uint64:
            return f"f2u64({expr})"
        return f"f2i64({expr}).to({VALUE_TL[dst]})"
    return f"({expr}).to({VALUE_TL[dst]})"


def scalar_code(dt, lo: str, hi: str) -> str:
    """Rebuilds a scalar of ``dt`` from its two int32 bit words (launch.pack_scalar)."""
    if dt is _dt.bool_:
        return f"({lo} != 0)"
    if dt in (_dt.int8, _dt.int16, _dt.uint8, _dt.uint16, _dt.int32):
        return f"{lo}.to({VALUE_TL[dt]})"
    if dt is _dt.uint32:
        return f"{lo}.to(tl.uint32, bitcast=True)"
    if dt is _dt.float32:
        return f"{lo}.to(tl.float32, bitcast=True)"
    if dt is _dt.int64:
        return f"join64({lo}, {hi})"
    if dt is _dt.uint64:
        return f"join64({lo}, {hi}).to(tl.uint64, bitcast=True)"
    if dt is _dt.float64:
        return f"join64({lo}, {hi}).to(tl.float64, bitcast=True)"
    raise UnsupportedKernelError(f"no CUDA scalar argument of dtype {dt}")


def translate(expr: str, names: dict, bool_arith: bool) -> str:
    """ops.yaml expression -> Triton: names renamed to kernel locals, ``a if c else b`` ->
    tl.where; with bool compute, + - * run on int32 (NumPy's bool + is a logical or, the
    kernel's store then tests != 0, as the Numba kernel's int arithmetic does)."""
    tree = ast.parse(expr, mode="eval")

    class _T(ast.NodeTransformer):
        def visit_Name(self, node):
            return ast.copy_location(ast.Name(names.get(node.id, node.id), ast.Load()), node)

        def visit_IfExp(self, node):
            self.generic_visit(node)
            fn = ast.Attribute(ast.Name("tl", ast.Load()), "where", ast.Load())
            return ast.copy_location(ast.Call(fn, [node.test, node.body, node.orelse], []), node)

        def visit_BinOp(self, node):
            self.generic_visit(node)
            if bool_arith and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
                node.left = ast.parse(f"({ast.unparse(node.left)}).to(tl.int32)",
                                      mode="eval").body
                node.right = ast.parse(f"({ast.unparse(node.right)}).to(tl.int32)",
                                       mode="eval").body
            return node

    return ast.unparse(ast.fix_missing_locations(_T().visit(tree)))


# ---- kernel specs and sources ------------------------------------------------------------------
class ElementwiseSpec:
    """What one generated kernel computes. ``inputs``: (name, kind, dtype, target) with kind
    'T' (tensor; dtype = storage dtype) or 'S' (scalar passed by value; dtype = target);
    ``scalar_args``: (name, dtype) of Scalar arguments; ``ndim``: 0 = contiguous path."""

    __slots__ = ("name", "expr", "inputs", "scalar_args", "compute", "result", "out", "ndim",
                 "key")

    def __init__(self, name, expr, inputs, scalar_args, compute, result, out, ndim):
        self.name = name
        self.expr = expr
        self.inputs = tuple(inputs)
        self.scalar_args = tuple(scalar_args)
        self.compute = compute
        self.result = result
        self.out = out
        self.ndim = ndim
        self.key = (name, expr, self.inputs, self.scalar_args, compute, result, out, ndim)


def kernel_source(spec: ElementwiseSpec) -> str:
    nd = spec.ndim
    tensor_names = [n for n, kind, _, _ in spec.inputs if kind == "T"]
    scalar_names = [n for n, kind, _, _ in spec.inputs if kind == "S"]
    scalar_names += [n for n, _ in spec.scalar_args]
    words = [w for n in scalar_names for w in (f"{n}_lo", f"{n}_hi")]
    params = ["p_out"] + [f"p_{n}" for n in tensor_names] + words + ["n"]
    ops = ["out"] + tensor_names
    if nd:
        params += [f"size{d}" for d in range(nd)]
        params += [f"st_{o}_{d}" for o in ops for d in range(nd)]
    params += ["BLOCK: tl.constexpr", "IDX64: tl.constexpr"]
    desc = ", ".join(f"{n}:{k}:{d.name}->{t.name}" for n, k, d, t in spec.inputs)
    lines = [
        f"# Generated by tensorlib.kernels.cuda.pointwise for: {spec.name}({desc}) "
        f"compute {spec.compute.name} -> {spec.result.name} -> {spec.out.name}, "
        f"{'contig' if not nd else f'nd{nd}'}",
        "",
        "",
        f"@jit(do_not_specialize={words!r})",
        f"def kernel({', '.join(params)}):",
        "    pid = tl.program_id(0)",
        "    if IDX64:",
        "        lin = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)",
        "    else:",
        "        lin = pid * BLOCK + tl.arange(0, BLOCK)",
        "    mask = lin < n",
    ]
    if not nd:
        offs = {o: "lin" for o in ops}
    else:
        lines.append("    rem = lin")
        for d in range(nd - 1):
            lines.append(f"    i{d} = rem % size{d}")
            lines.append(f"    rem = rem // size{d}")
        lines.append(f"    i{nd - 1} = rem")
        offs = {}
        for o in ops:
            lines.append(f"    o_{o} = " + " + ".join(f"i{d} * st_{o}_{d}" for d in range(nd)))
            offs[o] = f"o_{o}"
    names = {}
    for n, kind, dt, target in spec.inputs:
        v = f"v_{n}"
        names[n] = v
        if kind == "T":
            val = load_code(dt, f"tl.load(p_{n} + {offs[n]}, mask=mask)")
            lines.append(f"    {v} = {cast_code(dt, target, val)}")
        else:
            lines.append(f"    {v} = {scalar_code(target, f'{n}_lo', f'{n}_hi')}")
    for n, dt in spec.scalar_args:
        names[n] = f"v_{n}"
        lines.append(f"    v_{n} = {scalar_code(dt, f'{n}_lo', f'{n}_hi')}")
    bool_arith = spec.compute is _dt.bool_
    lines.append(f"    r = {translate(spec.expr, names, bool_arith)}")
    if bool_arith and spec.result is _dt.bool_:
        lines.append("    r = to_bool(r)")
    val = store_code(spec.out, cast_code(spec.result, spec.out, "r"))
    if not tensor_names:
        val = f"tl.broadcast_to({val}, (BLOCK,))"  # every input a scalar (fill)
    lines.append(f"    tl.store(p_out + {offs['out']}, {val}, mask=mask)")
    return "\n".join(lines) + "\n"


def _kernel_for(spec, mode):
    return _launch.cached_module(spec.key, spec.name, lambda: kernel_source(spec), mode).kernel


def _block(numel, path, mode):
    """(BLOCK, num_warps). The interpreter runs each program in Python: few, wide ones."""
    if mode == "interpret":
        return min(_launch.next_pow2(numel), INTERPRET_MAX_BLOCK), 4
    return GPU_CONFIG[path]


# ---- launching ---------------------------------------------------------------------------------
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
    # lanes of the last block run past numel: keep their linear index in int32 too
    if math.prod(shape) > _I32_MAX - INTERPRET_MAX_BLOCK:
        return False
    for op in operands:
        lo = hi = 0
        for n, s in zip(shape, op.strides):
            if s > 0:
                hi += (n - 1) * s
            else:
                lo += (n - 1) * s
        if max(-lo, hi) > _I32_MAX:
            return False
    return True


def _launch_elementwise(name, expr, out: _Operand, inputs, scalar_args, compute, result,
                        shape, device: int):
    """inputs: (name, _Operand | NumPy scalar, target dtype); scalar_args: (name, NumPy scalar
    of the compute dtype). Launches one generated kernel over ``shape`` (dim 0 innermost)."""
    tensors = [out] + [x for _, x, _ in inputs if isinstance(x, _Operand)]
    contig = len(shape) == 1 and all(op.strides == (1,) for op in tensors)
    ndim = 0 if contig else len(shape)
    spec_inputs, words, targs = [], [], []
    for n, x, target in inputs:
        if isinstance(x, _Operand):
            spec_inputs.append((n, "T", x.dtype, target))
            targs.append(x.arg)
        else:
            spec_inputs.append((n, "S", target, target))
            words += _launch.pack_scalar(x, target)
    for n, v in scalar_args:
        words += _launch.pack_scalar(v, compute)
    spec = ElementwiseSpec(name, expr, spec_inputs, [(n, compute) for n, _ in scalar_args],
                           compute, result, out.dtype, ndim)
    mode = _launch.current_mode()
    kernel = _kernel_for(spec, mode)
    numel = math.prod(shape)
    args = [out.arg] + targs + words + [numel]
    if ndim:
        args += list(shape)
        for op in tensors:
            args += list(op.strides)
    block, warps = _block(numel, "nd" if ndim else "contig", mode)
    idx64 = not _fits_32bit(shape, tensors)
    _launch.launch(kernel, (_launch.cdiv(numel, block),), args, device, BLOCK=block,
                   IDX64=idx64, num_warps=warps, enable_fp_fusion=False)


def _device_index(it):
    return it.device.index


def run_pointwise(it, info, scalar_values):
    """CUDA stub kernel for every pointwise op, copy and fill."""
    ops = it.operands
    compute = it.compute_dtype
    out = ops[0]
    complex_involved = compute.kind == "c" or out._dtype.kind == "c" or any(
        isinstance(x, Tensor) and x._dtype.kind == "c" for x in ops[1:])
    if complex_involved:
        if info.name == "copy":
            return _complex_copy(it)
        if info.name == "fill":
            return _complex_fill(it, info)
        raise UnsupportedKernelError(f"{info.name}(): complex dtypes are not supported by the "
                                     f"CUDA kernels yet (compute dtype {compute})")
    lay = it.layout()
    outop = _operand(out, lay.strides[0], lay.offsets[0])
    inputs, k = [], 1
    for name, x in zip(info.tensor_args, ops[1:]):
        target = _dt.bool_ if name in info.bool_args else compute
        if isinstance(x, Tensor):
            inputs.append((name, _operand(x, lay.strides[k], lay.offsets[k]), target))
            k += 1
        else:
            inputs.append((name, scalar_to_compute(x, target, info.name, name), target))
    scalars = [(arg, scalar_to_compute(v, compute, info.name, arg))
               for arg, v in zip(info.scalar_args, scalar_values)]
    _launch_elementwise(info.name, info.expr, outop, inputs, scalars, compute,
                        info.result_dtype(compute), lay.shape, _device_index(it))


def _parts(t, strides, offset):
    """A complex tensor's (real, imaginary) component operands; a real tensor alone."""
    if t._dtype.kind != "c":
        return [_operand(t, strides, offset)]
    comp = _dt.real_for(t._dtype)
    return [_operand(t, strides, offset, comp, 2, 0), _operand(t, strides, offset, comp, 2, 1)]


def _complex_copy(it):
    out, src = it.operands[0], it.operands[1]
    lay = it.layout()
    dev = _device_index(it)
    o = _parts(out, lay.strides[0], lay.offsets[0])
    s = _parts(src, lay.strides[1], lay.offsets[1])
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
    for part, x in zip(_parts(out, lay.strides[0], lay.offsets[0]), (v.real, v.imag)):
        comp = part.dtype
        _launch_elementwise("fill", "value", part, [("value", comp.np_dtype.type(x), comp)], [],
                            comp, comp, lay.shape, _device_index(it))


# ---- fill_range (arange / linspace) ------------------------------------------------------------
_RANGE_SOURCE = """\
# Generated by tensorlib.kernels.cuda.pointwise: fill_range {acc} -> {dtype}


@jit(do_not_specialize=["s_lo", "s_hi", "d_lo", "d_hi"])
def kernel(p_out, s_lo, s_hi, d_lo, d_hi, n, stride, BLOCK: tl.constexpr, IDX64: tl.constexpr):
    pid = tl.program_id(0)
    if IDX64:
        lin = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    else:
        lin = pid * BLOCK + tl.arange(0, BLOCK)
    mask = lin < n
    start = {start}
    step = {step}
    v = start + lin.to({acc_tl}) * step
    tl.store(p_out + lin * stride, {store}, mask=mask)
"""


def _range_kernel(acc, dtype, mode):
    def source():
        return _RANGE_SOURCE.format(acc=acc.name, dtype=dtype.name, acc_tl=VALUE_TL[acc],
                                    start=scalar_code(acc, "s_lo", "s_hi"),
                                    step=scalar_code(acc, "d_lo", "d_hi"),
                                    store=store_code(dtype, cast_code(acc, dtype, "v")))
    return _launch.cached_module((acc, dtype), "range", source, mode).kernel


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
