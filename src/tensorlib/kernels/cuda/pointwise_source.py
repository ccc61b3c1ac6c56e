"""Triton source of the pointwise kernels generated from the ops.yaml expressions (and copy /
fill / fill_range); kernels/cuda/pointwise.py builds their specs, caches and launches them.

For one (op, operand dtypes, compute dtype, output dtype, which operands are Python scalars,
loop shape) ``kernel_source`` writes a small module with one ``@triton.jit`` kernel. The loop
shape is either

* ``contig``: one flat dimension with unit strides everywhere (the TensorIterator fast set-up):
  offsets are the linear index, so loads and stores vectorise; or
* ``nd<N>``: the iterator's coalesced layout (dim 0 innermost): each lane splits its linear
  index into N coordinates and dots them with each operand's strides (any sign, zero for
  broadcast).

Indices are int32 or int64 (the ``IDX64`` constexpr of the same kernel). Base pointers are
already advanced to each operand's offset.

Storage and values: bool is stored as bytes and read as ``!= 0``; bfloat16 as raw 16 bits with
explicit round-to-nearest-even conversion (the interpreter's own bf16 cast truncates); float16
natively. Half types compute in float32; conversions into a half type from wider types round to
odd first (as kernels/cpu/casting.py does) so the final rounding is single. Python scalars and
Scalar arguments travel as two int32 words of their bits in the compute dtype (Triton would
type a Python float as fp32).

Complex (Triton has no complex type): a complex value is a pair of blocks (re, im) in the
component dtype, loaded / stored through a component-typed pointer at element offset * 2 and
* 2 + 1. With a complex compute dtype every operand becomes a pair (real ones with a zero
imaginary part); the expression is translated into straight-line statements whose values are
pairs or real blocks (``+ - * == !=`` inline, helpers as the ``c_*`` functions of
complex_math.py, which mirror the CPU kernels). Real or bool results (abs, real, isnan,
equal...) and complex outputs of a real computation are stored as such.

The generated text is the kernel cache's key: its header still names kernels.cuda.pointwise
(where these templates lived before the split), so the text is unchanged.
"""
from __future__ import annotations

import ast

from ... import dtypes as _dt
from ...dispatch.stub import UnsupportedKernelError
from . import launch as _launch

__all__ = ["ElementwiseSpec", "kernel_source", "complex_kernel_source", "is_complex_spec",
           "range_source", "VALUE_TL", "load_code", "store_code", "cast_code", "scalar_code",
           "translate"]


# Triton type of each dtype's *value* inside a kernel (half types are float32 values).
VALUE_TL = {
    _dt.bool_: "tl.int1", _dt.int8: "tl.int8", _dt.int16: "tl.int16", _dt.int32: "tl.int32",
    _dt.int64: "tl.int64", _dt.uint8: "tl.uint8", _dt.uint16: "tl.uint16",
    _dt.uint32: "tl.uint32", _dt.uint64: "tl.uint64", _dt.float16: "tl.float32",
    _dt.bfloat16: "tl.float32", _dt.float32: "tl.float32", _dt.float64: "tl.float64",
}
_HALF = (_dt.float16, _dt.bfloat16)


# ---- code fragments -----------------------------------------------------------------------------
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

        def visit_UnaryOp(self, node):
            self.generic_visit(node)
            if isinstance(node.op, ast.USub) and not isinstance(node.operand, ast.Constant):
                # scalar_math.neg: Triton's own -x gives +0.0 for +0.0 before 3.7
                return ast.copy_location(ast.Call(ast.Name("neg", ast.Load()), [node.operand],
                                                  []), node)
            return node

        def visit_BinOp(self, node):
            self.generic_visit(node)
            if bool_arith and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
                node.left = ast.parse(f"({ast.unparse(node.left)}).to(tl.int32)",
                                      mode="eval").body
                node.right = ast.parse(f"({ast.unparse(node.right)}).to(tl.int32)",
                                       mode="eval").body
            return node

    return ast.unparse(ast.fix_missing_locations(_T().visit(tree)))


# ---- kernel specs and sources -------------------------------------------------------------------
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


def _kernel_head(spec: ElementwiseSpec, ops, words, tag: str, imports=()) -> list:
    """The generated module's first lines: a comment saying what it computes, ``imports``,
    the kernel's signature (output and tensor pointers ``ops``, scalar bit ``words``, sizes and
    strides on the N-d path) and the lanes' linear index and mask."""
    nd = spec.ndim
    params = [f"p_{o}" for o in ops] + words + ["n"]
    if nd:
        params += [f"size{d}" for d in range(nd)]
        params += [f"st_{o}_{d}" for o in ops for d in range(nd)]
    params += ["BLOCK: tl.constexpr", "IDX64: tl.constexpr"]
    desc = ", ".join(f"{n}:{k}:{d.name}->{t.name}" for n, k, d, t in spec.inputs)
    return [
        f"# Generated by tensorlib.kernels.cuda.pointwise for: {spec.name}({desc}) "
        f"compute {spec.compute.name} -> {spec.result.name} -> {spec.out.name}, "
        f"{'contig' if not nd else f'nd{nd}'}{tag}",
        *imports,
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


def _offsets(nd: int, ops):
    """(statements, {operand: offset expression}): the contiguous path's offset is the linear
    index; the N-d path splits it into coordinates (dim 0 innermost) dotted with strides."""
    if not nd:
        return [], {o: "lin" for o in ops}
    lines = ["rem = lin"]
    for d in range(nd - 1):
        lines += [f"i{d} = rem % size{d}", f"rem = rem // size{d}"]
    lines.append(f"i{nd - 1} = rem")
    for o in ops:
        lines.append(f"o_{o} = " + " + ".join(f"i{d} * st_{o}_{d}" for d in range(nd)))
    return lines, {o: f"o_{o}" for o in ops}


def kernel_source(spec: ElementwiseSpec, mode: str = "compiled") -> str:
    if is_complex_spec(spec):
        return complex_kernel_source(spec, mode)
    nd = spec.ndim
    tensor_names = [n for n, kind, _, _ in spec.inputs if kind == "T"]
    scalar_names = [n for n, kind, _, _ in spec.inputs if kind == "S"]
    scalar_names += [n for n, _ in spec.scalar_args]
    words = [w for n in scalar_names for w in (f"{n}_lo", f"{n}_hi")]
    ops = ["out"] + tensor_names
    lines = _kernel_head(spec, ops, words, "")
    index, offs = _offsets(nd, ops)
    lines += ["    " + x for x in index]
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


# ---- complex kernels ----------------------------------------------------------------------------
def is_complex_spec(spec: ElementwiseSpec) -> bool:
    """Whether any operand, the computation or the output of ``spec`` is complex."""
    return (spec.compute.kind == "c" or spec.out.kind == "c" or spec.result.kind == "c"
            or any(d.kind == "c" or t.kind == "c" for _, _, d, t in spec.inputs))


def _word_names(name, dt):
    """Kernel parameters carrying scalar ``name`` of dtype ``dt`` (two int32 words per part)."""
    if dt.kind == "c":
        return [f"{name}_re_lo", f"{name}_re_hi", f"{name}_im_lo", f"{name}_im_hi"]
    return [f"{name}_lo", f"{name}_hi"]


# ops.yaml helper -> (complex_math function, what it returns: c pair, r real, b bool)
_COMPLEX_CALLS = {
    "true_div": ("c_div", "c"), "power": ("c_pow", "c"), "scale": ("c_scale", "c"),
    "negative": ("c_negative", "c"), "absolute": ("c_abs", "r"), "sign": ("c_sign", "c"),
    "reciprocal": ("c_reciprocal", "c"), "square": ("c_square", "c"),
    "conj": ("c_conj", "c"), "real_part": ("c_real", "r"), "imag_part": ("c_imag", "r"),
    "isnan": ("c_isnan", "b"), "isinf": ("c_isinf", "b"), "isfinite": ("c_isfinite", "b"),
    "logical_and": ("c_logical_and", "b"), "logical_or": ("c_logical_or", "b"),
    "logical_xor": ("c_logical_xor", "b"), "logical_not": ("c_logical_not", "b"),
    "round_half_even": ("c_round", "c"),
}
for _f in ("exp exp2 expm1 log log2 log10 log1p sqrt rsqrt sin cos tan asin acos atan sinh "
           "cosh tanh asinh acosh atanh").split():
    _COMPLEX_CALLS[_f] = (f"c_{_f}", "c")
_COMPLEX_BINOPS = {ast.Add: ("+", "c_add"), ast.Sub: ("-", "c_sub"), ast.Mult: ("*", "c_mul")}


class _ComplexTranslator:
    """ops.yaml expression -> straight-line statements over complex pairs. A value is
    ("c", re, im) (names of two component blocks), ("r", expr) (a real / bool block) or
    ("k", literal)."""

    def __init__(self, op, names, comp_tl):
        self.op = op
        self.names = names
        self.comp = comp_tl
        self.lines = []
        self.count = 0

    def _fresh(self):
        self.count += 1
        return f"t{self.count}"

    def _unsupported(self, what):
        return UnsupportedKernelError(f"{self.op}(): {what} has no complex CUDA kernel")

    def pair(self, v):
        """A value as a pair (a real one gets a zero imaginary part)."""
        if v[0] == "c":
            return v
        t = self._fresh()
        if v[0] == "k":
            self.lines.append(f"{t}_re = tl.full((BLOCK,), {v[1]}, {self.comp})")
        else:
            self.lines.append(f"{t}_re = tl.broadcast_to(({v[1]}).to({self.comp}), (BLOCK,))")
        self.lines.append(f"{t}_im = tl.full((BLOCK,), 0.0, {self.comp})")
        return ("c", f"{t}_re", f"{t}_im")

    def call(self, fn, kind, args):
        parts = [x for a in args for x in self.pair(a)[1:]]
        t = self._fresh()
        if kind == "c":
            self.lines.append(f"{t}_re, {t}_im = {fn}({', '.join(parts)})")
            return ("c", f"{t}_re", f"{t}_im")
        self.lines.append(f"{t} = {fn}({', '.join(parts)})")
        return ("r", t)

    def visit(self, node):
        if isinstance(node, ast.Name):
            if node.id not in self.names:
                raise self._unsupported(f"name {node.id!r}")
            return self.names[node.id]
        if isinstance(node, ast.Constant) and isinstance(node.value, (bool, int, float)):
            return ("k", repr(node.value))
        if isinstance(node, ast.BinOp) and type(node.op) in _COMPLEX_BINOPS:
            sym, fn = _COMPLEX_BINOPS[type(node.op)]
            a, b = self.visit(node.left), self.visit(node.right)
            if a[0] != "c" and b[0] != "c":
                return ("r", f"({a[1]} {sym} {b[1]})")
            return self.call(fn, "c", [a, b])
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            a = self.visit(node.operand)
            if isinstance(node.op, ast.UAdd):
                return a
            if a[0] != "c":
                return ("r", f"neg({a[1]})")  # scalar_math.neg: -(+0.0) is -0.0
            return self.call("c_negative", "c", [a])
        if (isinstance(node, ast.Compare) and len(node.ops) == 1
                and isinstance(node.ops[0], (ast.Eq, ast.NotEq))):
            a, b = self.visit(node.left), self.visit(node.comparators[0])
            eq = isinstance(node.ops[0], ast.Eq)
            if a[0] != "c" and b[0] != "c":
                return ("r", f"({a[1]} {'==' if eq else '!='} {b[1]})")
            return self.call("c_eq" if eq else "c_ne", "b", [a, b])
        if isinstance(node, ast.IfExp):
            c = self.visit(node.test)
            if c[0] == "c":
                c = self.call("c_truth", "b", [c])
            a, b = self.visit(node.body), self.visit(node.orelse)
            if a[0] != "c" and b[0] != "c":
                return ("r", f"tl.where({c[1]}, {a[1]}, {b[1]})")
            a, b = self.pair(a), self.pair(b)
            t = self._fresh()
            self.lines.append(f"{t}_re = tl.where({c[1]}, {a[1]}, {b[1]})")
            self.lines.append(f"{t}_im = tl.where({c[1]}, {a[2]}, {b[2]})")
            return ("c", f"{t}_re", f"{t}_im")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            if node.func.id not in _COMPLEX_CALLS:
                raise self._unsupported(f"helper {node.func.id}()")
            fn, kind = _COMPLEX_CALLS[node.func.id]
            return self.call(fn, kind, [self.visit(a) for a in node.args])
        raise self._unsupported(f"expression {ast.unparse(node)!r}")


def complex_kernel_source(spec: ElementwiseSpec, mode: str = "compiled") -> str:
    """The kernel of a spec with complex operands, computation or output (module docstring)."""
    nd = spec.ndim
    tensors = [(n, dt) for n, kind, dt, _ in spec.inputs if kind == "T"]
    words = [w for n, kind, _, t in spec.inputs if kind == "S" for w in _word_names(n, t)]
    words += [w for n, dt in spec.scalar_args for w in _word_names(n, dt)]
    ops = ["out"] + [n for n, _ in tensors]
    lines = _kernel_head(spec, ops, words, ", complex",
                         [f"from {_launch.COMPLEX_HELPERS[mode]} import *"])
    body, offs = _offsets(nd, ops)

    def blk(expr):
        return f"tl.broadcast_to({expr}, (BLOCK,))"

    names = {}
    for n, kind, dt, target in spec.inputs:
        v = f"v_{n}"
        if kind == "S":
            if target.kind == "c":
                comp = _dt.real_for(target)
                body.append(f"{v}_re = {blk(scalar_code(comp, f'{n}_re_lo', f'{n}_re_hi'))}")
                body.append(f"{v}_im = {blk(scalar_code(comp, f'{n}_im_lo', f'{n}_im_hi'))}")
                names[n] = ("c", f"{v}_re", f"{v}_im")
            else:
                body.append(f"{v} = {blk(scalar_code(target, f'{n}_lo', f'{n}_hi'))}")
                names[n] = ("r", v)
            continue
        if dt.kind == "c":
            src = _dt.real_for(dt)
            re = f"tl.load(p_{n} + {offs[n]} * 2, mask=mask)"
            im = f"tl.load(p_{n} + {offs[n]} * 2 + 1, mask=mask)"
            if target.kind == "c":
                comp = _dt.real_for(target)
                body.append(f"{v}_re = {cast_code(src, comp, re)}")
                body.append(f"{v}_im = {cast_code(src, comp, im)}")
                names[n] = ("c", f"{v}_re", f"{v}_im")
            elif target is _dt.bool_:  # a complex condition: NumPy truthiness
                body.append(f"{v} = c_truth({re}, {im})")
                names[n] = ("r", v)
            else:
                raise UnsupportedKernelError(f"{spec.name}(): complex operand {n!r} in a "
                                             f"{target} computation")
            continue
        val = load_code(dt, f"tl.load(p_{n} + {offs[n]}, mask=mask)")
        if target.kind == "c":
            comp = _dt.real_for(target)
            body.append(f"{v}_re = {cast_code(dt, comp, val)}")
            body.append(f"{v}_im = tl.full((BLOCK,), 0.0, {VALUE_TL[comp]})")
            names[n] = ("c", f"{v}_re", f"{v}_im")
        else:
            body.append(f"{v} = {cast_code(dt, target, val)}")
            names[n] = ("r", v)
    for n, dt in spec.scalar_args:
        v = f"v_{n}"
        if dt.kind == "c":
            comp = _dt.real_for(dt)
            body.append(f"{v}_re = {blk(scalar_code(comp, f'{n}_re_lo', f'{n}_re_hi'))}")
            body.append(f"{v}_im = {blk(scalar_code(comp, f'{n}_im_lo', f'{n}_im_hi'))}")
            names[n] = ("c", f"{v}_re", f"{v}_im")
        else:
            body.append(f"{v} = {blk(scalar_code(dt, f'{n}_lo', f'{n}_hi'))}")
            names[n] = ("r", v)

    if spec.compute.kind == "c":
        tr = _ComplexTranslator(spec.name, names, VALUE_TL[_dt.real_for(spec.compute)])
        res = tr.visit(ast.parse(spec.expr, mode="eval").body)
        body += tr.lines
    else:  # a real computation stored into a complex output
        bool_arith = spec.compute is _dt.bool_
        body.append(f"r = {translate(spec.expr, {n: v[1] for n, v in names.items()}, bool_arith)}")
        if bool_arith and spec.result is _dt.bool_:
            body.append("r = to_bool(r)")
        res = ("r", "r")
    if (res[0] == "c") != (spec.result.kind == "c"):
        raise UnsupportedKernelError(f"{spec.name}(): the expression {spec.expr!r} does not "
                                     f"give a {spec.result} value on the CUDA kernels")
    if spec.out.kind == "c":
        comp = _dt.real_for(spec.out)
        if res[0] == "c":
            src = _dt.real_for(spec.result)
            re, im = cast_code(src, comp, res[1]), cast_code(src, comp, res[2])
        else:
            r = res[1]
            if spec.result in _HALF:  # a half result rounds to its dtype before widening
                r = load_code(spec.result, store_code(spec.result, r))
            re = cast_code(spec.result, comp, r)
            im = f"tl.full((BLOCK,), 0.0, {VALUE_TL[comp]})"
        body.append(f"tl.store(p_out + {offs['out']} * 2, {re}, mask=mask)")
        body.append(f"tl.store(p_out + {offs['out']} * 2 + 1, {im}, mask=mask)")
    else:
        if res[0] == "c":
            raise UnsupportedKernelError(f"{spec.name}(): cannot store {spec.result} into "
                                         f"{spec.out}")
        val = store_code(spec.out, cast_code(spec.result, spec.out, res[1]))
        body.append(f"tl.store(p_out + {offs['out']}, {val}, mask=mask)")
    lines += ["    " + b for b in body]
    return "\n".join(lines) + "\n"


# ---- fill_range (arange / linspace) -------------------------------------------------------------
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


def range_source(acc, dtype) -> str:
    """fill_range's kernel: out[i * stride] = start + i * step, computed in ``acc`` and stored
    as real ``dtype``."""
    return _RANGE_SOURCE.format(acc=acc.name, dtype=dtype.name, acc_tl=VALUE_TL[acc],
                                start=scalar_code(acc, "s_lo", "s_hi"),
                                step=scalar_code(acc, "d_lo", "d_hi"),
                                store=store_code(dtype, cast_code(acc, dtype, "v")))
