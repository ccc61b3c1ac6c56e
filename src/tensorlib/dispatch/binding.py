"""Python argument binding: generated public functions that check and convert arguments by schema.

For each public name the generator writes a small Python function whose parameters are the
schema's (positional / keyword-only, defaults), converts every argument by its schema type (so
``dtype="float32"`` becomes a DType and ``axis=1`` becomes ``(1,)``) and calls the dispatcher
entry of the chosen overload (functional, or ``.out`` when ``out=`` is given).
"""
from __future__ import annotations

import numbers
import operator

import numpy as np

from .. import dtypes as _dt
from ..device import Device, to_device
from ..runtime.import_cache import compile_source
from ..tensor import Tensor
from .dispatcher import dispatch_lines
from .schema.function import Argument, FunctionSchema
from .schema.types import NO_DEFAULT

__all__ = ["make_function"]

_PY_SCALARS = (bool, int, float, complex)
_SCALAR_TYPES = frozenset(_PY_SCALARS)  # what conv_scalar returns unchanged (exact types)


def _fail(op, name, want, x):
    raise TypeError(f"{op}(): argument '{name}' must be {want}, got {type(x).__name__} ({x!r:.60})")


def _no_tensor(op, values, names):
    got = ", ".join(type(v).__name__ for v in values)
    which = (f"argument '{names[0]}'" if len(names) == 1 else
             f"at least one of {', '.join(repr(n) for n in names)}")
    raise TypeError(f"{op}(): {which} must be a Tensor, got {got}")


# NumPy arrays as Tensor operands: set by tensorlib.numpy_interop.install() to a zero-copy
# wrap (the conversion lives in the ops layer, above this one); None leaves them refused.
array_operand = None


def conv_tensor(x, op, name, allow_scalar):
    if isinstance(x, Tensor):
        return x
    if type(x) is np.ndarray and array_operand is not None:
        return array_operand(x, op, name)
    if allow_scalar:
        # NumPy scalars first: np.float64 / np.complex128 subclass float / complex and would
        # otherwise pass through and promote as strong dtypes, unlike np.float32 and the rest.
        if isinstance(x, np.generic) and x.dtype.kind in "biufc":
            return x.item()
        if isinstance(x, _PY_SCALARS):
            return x
    _fail(op, name, "a Tensor" + (" or a Python scalar" if allow_scalar else ""), x)


def conv_tensor_list(x, op, name):
    if not isinstance(x, (list, tuple)):
        _fail(op, name, "a sequence of Tensors", x)
    for t in x:  # the usual case in one loop: Tensors only
        if t.__class__ is not Tensor:
            break
    else:
        return x if x.__class__ is tuple else tuple(x)
    if array_operand is not None and any(type(t) is np.ndarray for t in x):
        x = [array_operand(t, op, f"{name}[{i}]") if type(t) is np.ndarray else t
             for i, t in enumerate(x)]
    for t in x:
        if not isinstance(t, Tensor):
            _fail(op, name, "a sequence of Tensors", t)
    return tuple(x)


def conv_scalar(x, op, name):
    if isinstance(x, np.generic) and x.dtype.kind in "biufc":
        return x.item()  # as a Python scalar, whatever its NumPy type (see conv_tensor)
    if isinstance(x, _PY_SCALARS):
        return x
    if isinstance(x, Tensor) and x.numel() == 1:
        return x.item()
    _fail(op, name, "a number", x)


def conv_int(x, op, name):
    if type(x) is int:
        return x
    try:
        return operator.index(x)
    except TypeError:
        _fail(op, name, "an int", x)


def conv_int_list(x, op, name):
    if type(x) is int:
        return (x,)  # a bare size (tl.zeros(n)): what conv_int gives it, without the tests
    if isinstance(x, (list, tuple)):
        for v in x:
            if type(v) is not int:
                break
        else:
            # plain ints (the common case): no per-item index() call; a tuple is kept
            return x if type(x) is tuple else tuple(x)
        try:
            return tuple([operator.index(v) for v in x])
        except TypeError:
            _fail(op, name, "an int or a sequence of ints", x)
    if isinstance(x, (Tensor, np.ndarray)) and x.ndim == 1 and x.dtype.kind in "iu":
        return tuple(x.tolist())  # a 1-D integer array of sizes / counts (NumPy accepts one)
    return (conv_int(x, op, name),)


def conv_float(x, op, name):
    if type(x) is float:
        return x  # (before the numbers.Real check, an ABC's: ~0.4 us)
    if isinstance(x, numbers.Real):
        return float(x)
    _fail(op, name, "a real number", x)


def conv_bool(x, op, name):
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    _fail(op, name, "a bool", x)


def conv_str(x, op, name):
    if isinstance(x, str):
        return x
    _fail(op, name, "a str", x)


def conv_dtype(x, op, name):
    return _dt.to_dtype(x, op=op, arg=name)


def conv_device(x, op, name):
    return to_device(x, op=op, arg=name)


_CONVERTERS = {
    "Scalar": "conv_scalar", "int": "conv_int", "SymInt": "conv_int", "float": "conv_float",
    "bool": "conv_bool", "str": "conv_str", "ScalarType": "conv_dtype", "Device": "conv_device",
}


# Types whose default value is converted once, when the function is generated: an argument
# left at its default (the same object) then skips its converter call.
_PRECONVERTED = {t: globals()[name] for t, name in _CONVERTERS.items()
                 if t not in ("ScalarType", "Device")}  # their defaults are None


def _conversion(arg: Argument, op: str, allow_scalar: bool, default_name=None) -> str | None:
    """One line of Python converting ``arg`` in place, or None when it needs no conversion.
    ``default_name``: the global holding the argument's preconverted default, if any."""
    t = arg.type
    n = arg.name
    if t.base == "Tensor":
        if t.is_list:
            call = f"conv_tensor_list({n}, {op!r}, {n!r})"
        else:
            # Fast path: a Tensor needs no work.
            line = (f"if not isinstance({n}, Tensor): "
                    f"{n} = conv_tensor({n}, {op!r}, {n!r}, {allow_scalar})")
            return f"if {n} is not None:\n        {line}" if t.optional else line
    elif t.is_list and t.base in ("int", "SymInt"):
        call = f"conv_int_list({n}, {op!r}, {n!r})"
    elif t.base in _CONVERTERS:
        call = f"{_CONVERTERS[t.base]}({n}, {op!r}, {n!r})"
        guard = _DONE.get(t.base)
        if guard is not None:
            # a value of the type the converter returns unchanged skips the call
            tests = ([f"{n} is not None"] if t.optional else
                     [f"{n} is not {default_name}"] if default_name is not None else [])
            return f"if {' and '.join(tests + [guard.format(n)])}: {n} = {call}"
    else:
        return None
    if t.optional:
        return f"if {n} is not None: {n} = {call}"
    if default_name is not None:
        return f"if {n} is not {default_name}: {n} = {call}"
    return f"{n} = {call}"


# Per converted type: the test (on the argument's name) false exactly for values its converter
# returns as they are (exact types only: subclasses such as np.float64 still convert).
_DONE = {"Scalar": "type({}) not in _SCALAR_TYPES", "int": "type({}) is not int",
         "SymInt": "type({}) is not int", "ScalarType": "type({}) is not DType",
         "Device": "type({}) is not Device"}


def _param(arg: Argument, defaults: dict, op: str, preconverted: dict) -> str:
    """The parameter's spelling. A default goes into ``defaults`` under a generated global name
    (so values like inf need no literal spelling), converted now where the type allows it;
    ``preconverted`` then maps the argument to that name."""
    if arg.default is NO_DEFAULT:
        return arg.name
    name = f"_d{len(defaults)}"
    value = arg.default
    conv = _PRECONVERTED.get(arg.type.base)
    if conv is not None and not arg.type.is_list and not arg.type.optional:
        value = conv(value, op, arg.name)
        preconverted[arg.name] = name
    defaults[name] = value
    return f"{arg.name}={name}"


def set_requires_grad(t, flag, op):
    """A factory's ``requires_grad=``: makes the new tensor an autograd leaf."""
    if not isinstance(flag, bool):
        raise TypeError(f"{op}(): argument 'requires_grad' must be a bool, got "
                        f"{type(flag).__name__}")
    if flag:
        if t.dtype.kind not in "fc":
            raise RuntimeError(f"{op}(): requires_grad=True needs a float or complex dtype, got "
                               f"{t.dtype}")
        t.requires_grad_()
    return t


def make_function(public_name: str, functional, out_op=None, *, allow_scalar=False,
                  requires_grad=False):
    """Builds the public function for ``functional`` (an OperatorHandle); with ``out_op`` the
    function also takes ``out=`` and routes to that overload; with ``requires_grad`` (factories)
    it takes ``requires_grad=False`` too."""
    schema: FunctionSchema = functional.schema
    args = schema.arguments
    positional = [a for a in args if not a.kwarg_only]
    kwonly = [a for a in args if a.kwarg_only]
    params, defaults, preconverted = [], {}, {}
    for i, a in enumerate(positional):
        params.append(_param(a, defaults, public_name, preconverted))
        if i == 0 and a.type.base == "Tensor" and not a.type.is_list:
            params.append("/")  # the first tensor is positional-only (x / self / input)
    if kwonly or out_op is not None:
        params.append("*")
        params.extend(_param(a, defaults, public_name, preconverted) for a in kwonly)
    if out_op is not None:
        params.append("out=None")
    if requires_grad:
        if not kwonly and out_op is None:
            params.append("*")
        params.append("requires_grad=False")
    body = []
    for a in args:
        line = _conversion(a, public_name, allow_scalar, preconverted.get(a.name))
        if line:
            body.append("    " + line)
    call_args = ", ".join(a.name for a in args)
    if out_op is not None:
        sep = ", " if call_args else ""
        body.append("    if out is not None:")
        body.append("        if not isinstance(out, Tensor):")
        body.append(f"            _fail({public_name!r}, 'out', 'a Tensor', out)")
        body.append(f"        return out_op.call({call_args}{sep}out)")
    tensors = [a.name for a in args if a.type.base == "Tensor" and not a.type.is_list]
    if allow_scalar and tensors:
        # All-scalar calls have nothing to dispatch on (or to take a device from): say so
        # here rather than as a missing kernel. Short-circuits on the usual Tensor first arg.
        test = " or ".join(f"isinstance({n}, Tensor)" for n in tensors)
        body.append(f"    if not ({test}):")
        body.append(f"        _no_tensor({public_name!r}, ({', '.join(tensors)},), "
                    f"{tuple(tensors)!r})")
    if requires_grad:
        body.append("    if requires_grad is not False:")
        body.append(f"        return set_requires_grad(op.call({call_args}), requires_grad, "
                    f"{public_name!r})")
    # the dispatcher's entry inlined (what op.call would run)
    dispatch, dispatch_scope = dispatch_lines(functional, [a.name for a in args])
    body.extend(dispatch)
    src = f"def {public_name}({', '.join(params)}):\n" + "\n".join(body) + "\n"
    scope = {**dispatch_scope,
        "Tensor": Tensor, "op": functional, "out_op": out_op,
        "_fail": _fail, "_no_tensor": _no_tensor, "conv_tensor": conv_tensor,
        "conv_tensor_list": conv_tensor_list,
        "conv_scalar": conv_scalar, "conv_int": conv_int, "conv_int_list": conv_int_list,
        "conv_float": conv_float, "conv_bool": conv_bool, "conv_str": conv_str,
        "conv_dtype": conv_dtype, "conv_device": conv_device,
        "set_requires_grad": set_requires_grad, "_SCALAR_TYPES": _SCALAR_TYPES,
        "DType": _dt.DType, "Device": Device, **defaults,
    }
    exec(compile_source(src, f"<tensorlib.{public_name}>"), scope)
    fn = scope[public_name]
    fn.__module__ = "tensorlib"
    fn.__qualname__ = public_name
    fn.__doc__ = f"{schema}" + (f"\n(out= variant: {out_op.schema})" if out_op else "")
    return fn
