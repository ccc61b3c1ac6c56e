"""The structured kernel shared by every pointwise op declared with ``pointwise:`` in ops.yaml.

meta: a TensorIterator over the op's tensor arguments (broadcast, promotion, output);
impl: the op's DispatchStub for the iterator's device, which picks the per-dtype kernel.
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import dtypes as _dt
from ..dispatch.iterator import TensorIterator
from ..dispatch.stub import UnsupportedKernelError, get_stub

__all__ = ["PointwiseInfo", "make_pointwise_kernel", "DTYPE_CLASSES"]

# Compute-dtype classes an op may accept (ops.yaml `dtypes:`).
DTYPE_CLASSES = {
    "all": "biufc",
    "numeric": "iufc",
    "real": "biuf",
    "real_numeric": "iuf",
    "integral": "biu",
    "integer": "iu",
    "float": "f",
    "float_complex": "fc",
}


@dataclass(frozen=True)
class PointwiseInfo:
    name: str                    # op base name, e.g. "add"
    expr: str                    # element expression over argument names
    tensor_args: tuple           # schema names of tensor operands, in order
    scalar_args: tuple           # schema names of Scalar arguments (e.g. alpha)
    kinds: str = "biufc"         # accepted compute-dtype kinds
    int_to_float: bool = False
    output: str = "same"         # same | bool | real
    bool_args: tuple = ()

    def result_dtype(self, compute):
        """The dtype the expression yields for a given compute dtype."""
        if self.output == "bool":
            return _dt.bool_
        if self.output == "real":
            return _dt.real_for(compute)
        return compute


def make_pointwise_kernel(info: PointwiseInfo, schema):
    """Returns ``kernel(*schema_args, out)``, registered for the functional, in-place and out ops."""
    names = [a.name for a in schema.arguments if not a.is_out]
    tensor_pos = [names.index(n) for n in info.tensor_args]
    scalar_pos = [names.index(n) for n in info.scalar_args]
    skip = tuple(info.tensor_args.index(n) for n in info.bool_args)
    stub = get_stub(info.name)
    if info.output == "bool":
        out_dtype = _dt.bool_
    elif info.output == "real":
        out_dtype = _dt.real_for
    else:
        out_dtype = None

    def kernel(*args):
        out = args[-1]
        inputs = [args[i] for i in tensor_pos]
        it = TensorIterator.build(info.name, [out], inputs, int_to_float=info.int_to_float,
                                  output_dtype=out_dtype, promote_skip=skip)
        if it.common_dtype.kind not in info.kinds:
            raise UnsupportedKernelError(f"{info.name}(): not supported for dtype "
                                         f"{it.common_dtype}")
        if it.numel:
            stub.kernel_for(it.device.type, it.common_dtype)(it, info,
                                                             [args[i] for i in scalar_pos])
        return it.output()

    kernel.__name__ = kernel.__qualname__ = f"{info.name}_structured"
    return kernel
