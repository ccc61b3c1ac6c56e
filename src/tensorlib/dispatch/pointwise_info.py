"""What a pointwise op is, as ops.yaml declares it: the PointwiseInfo the one ``pointwise``
DispatchStub hands each backend's pointwise kernel, and the infos of copy and fill (which run
on that kernel too). Data only: registration builds these, ops/ and kernels/ read them."""
from __future__ import annotations

from dataclasses import dataclass

from .. import dtypes as _dt

__all__ = ["PointwiseInfo", "DTYPE_CLASSES", "COPY", "FILL"]

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
    no_half: bool = False        # float16/bfloat16 refused (they compute in float32)
    wide_vectors: bool = False   # compute-bound: CPU kernels prefer 512-bit vectors
    # ops.yaml gathers (and every wide_vectors op): a scalar element costs more than gathering
    # strided operands, so the CPU loops gather them into a scratch and run vectorized
    gathers: bool = False
    # ops.yaml block_fast: ((when, expr), ...): CPU loops run the first form's expr (as
    # accurate, cheaper) whose guard ``when`` holds throughout a block of elements
    block_forms: tuple = ()
    # ops.yaml value_forms: ((when, expr, compute dtype names), ...): where ``when`` holds for
    # a call's Python-scalar values the op is ``expr``, bit for bit, in those dtypes
    value_forms: tuple = ()
    # the expression is one comparison of the two tensor operands (self < other, ...): a Python
    # int outside an integer compute dtype's range compares as the number it is (NumPy 2),
    # where every other op refuses it (dtype_scalars.ScalarOutOfRange)
    compares: bool = False

    def result_dtype(self, compute):
        """The dtype the expression yields for a given compute dtype."""
        if self.output == "bool":
            return _dt.bool_
        if self.output == "real":
            return _dt.real_for(compute)
        return compute


# copy_ and fill_ (ops/copy.py) as pointwise kernels
COPY = PointwiseInfo(name="copy", expr="self", tensor_args=("self",), scalar_args=())
# the fill value reaches the kernel as a Python scalar; errors name it 'value'
FILL = PointwiseInfo(name="fill", expr="value", tensor_args=("value",), scalar_args=())
