"""Bad input gets the same typed error on every device.

Each case misuses one op; it runs on the CPU and on CUDA (interpret backend) and must raise the
same exception type with the same message there (device names aside), a message that names
the op. Checks run before any kernel, so a CUDA tensor must never reach a kernel launch with
arguments the CPU would refuse, nor be refused differently.
"""
from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl


class Inputs:
    """The operands of the cases, on one device."""

    def __init__(self, device):
        self.device = device

        def T(a, dtype=None):
            return tl.asarray(np.asarray(a, dtype=dtype), device=device)
        self.T = T
        self.f = T([1.0, 2.0, 3.0])
        self.i = T([1, 2, 3])
        self.b = T([True, False, True])
        self.m = T(np.ones((2, 3), np.float32))
        self.c = T(np.array([1 + 1j, 2j]))
        self.empty = T(np.zeros((0,), np.float32))


# (op named in the message, exception type, the misuse)
CASES = {
    "bitwise_and on float": ("bitwise_and", TypeError, lambda x: tl.bitwise_and(x.f, x.f)),
    "shift of bool": ("bitwise_left_shift", TypeError,
                      lambda x: tl.bitwise_left_shift(x.b, x.b)),
    "less of complex": ("less", TypeError, lambda x: tl.less(x.c, x.c)),
    "subtract bool": ("subtract", TypeError, lambda x: tl.subtract(x.b, x.b)),
    "shapes do not broadcast": ("add", ValueError, lambda x: tl.add(x.m, x.T([1.0, 2.0]))),
    "operand not a tensor": ("add", TypeError, lambda x: tl.add(x.f, "x")),
    "bad alpha": ("add", TypeError, lambda x: tl.add(x.f, x.f, alpha="x")),
    "out of the wrong shape": ("add", ValueError, lambda x: tl.add(x.f, x.f, out=x.T([1.0, 2.0]))),
    "out of a narrower kind": ("add", TypeError, lambda x: tl.add(x.f, x.f, out=x.T([1, 2, 3]))),
    "in-place int by float": ("add", TypeError, lambda x: x.i.add_(x.f)),
    "sum axis out of range": ("sum", IndexError, lambda x: tl.sum(x.m, axis=2)),
    "sum duplicate axes": ("sum", ValueError, lambda x: tl.sum(x.m, axis=(0, 0))),
    "negative correction": ("var", ValueError, lambda x: tl.var(x.m, correction=-1)),
    "max of empty": ("max", ValueError, lambda x: tl.max(x.empty)),
    "argmax of empty": ("argmax", ValueError, lambda x: tl.argmax(x.empty)),
    "cumulative_sum axis": ("cumulative_sum", IndexError,
                            lambda x: tl.cumulative_sum(x.m, axis=3)),
    "cumulative_sum 2-d without axis": ("cumulative_sum", ValueError,
                                        lambda x: tl.cumulative_sum(x.m)),
    "reshape to a wrong size": ("reshape", ValueError, lambda x: x.m.reshape(4, 2)),
    "reshape copy=False": ("reshape", ValueError,
                           lambda x: tl.reshape(x.m.mT, (6,), copy=False)),
    "permute duplicate axes": ("permute", ValueError, lambda x: tl.permute_dims(x.m, (0, 0))),
    "squeeze of size 2": ("squeeze", ValueError, lambda x: tl.squeeze(x.m, axis=0)),
    "expand incompatible": ("expand", ValueError, lambda x: x.m.expand(3, 3)),
    "flip axis": ("flip", IndexError, lambda x: tl.flip(x.f, axis=2)),
    "roll axis": ("roll", IndexError, lambda x: tl.roll(x.f, 1, axis=3)),
    "negative repeats": ("repeat", ValueError, lambda x: tl.repeat(x.f, -1)),
    "negative tile": ("tile", ValueError, lambda x: tl.tile(x.f, (-1,))),
    "concat shapes": ("concat", ValueError, lambda x: tl.concat([x.m, x.f])),
    "stack shapes": ("stack", ValueError, lambda x: tl.stack([x.f, x.T([1.0])])),
    "matmul contraction": ("matmul", ValueError, lambda x: tl.matmul(x.m, x.m)),
    "matmul 0-d": ("matmul", ValueError, lambda x: tl.matmul(x.T(1.0), x.m)),
    "vecdot shapes": ("vecdot", ValueError, lambda x: tl.vecdot(x.f, x.T([1.0, 2.0]))),
    "tensordot axes": ("tensordot", ValueError, lambda x: tl.tensordot(x.m, x.m, axes=3)),
    "take out of range": ("take", IndexError, lambda x: tl.take(x.f, x.T([5]))),
    "take float indices": ("take", TypeError, lambda x: tl.take(x.f, x.T([0.0]))),
    "take_along_axis axis": ("take_along_axis", IndexError,
                             lambda x: tl.take_along_axis(x.m, x.T([[0]]), axis=3)),
    "index out of range": ("__getitem__", IndexError, lambda x: x.f[5]),
    "float index tensor": ("__getitem__", IndexError, lambda x: x.f[x.T([0.5])]),
    "too many indices": ("__getitem__", IndexError, lambda x: x.f[0, 0]),
    "setitem shapes": ("__setitem__", ValueError,
                       lambda x: x.f.__setitem__(slice(None), x.T([1.0, 2.0]))),
    "setitem index out of range": ("__setitem__", IndexError,
                                   lambda x: x.f.__setitem__(7, 1.0)),
    "nonzero of 0-d": ("nonzero", ValueError, lambda x: tl.nonzero(x.T(1.0))),
    "searchsorted 2-d": ("searchsorted", ValueError, lambda x: tl.searchsorted(x.m, x.f)),
    "astype unknown dtype": ("astype", TypeError, lambda x: tl.astype(x.f, "float33")),
    "full with a str": ("full", TypeError, lambda x: tl.full((2,), "x", device=x.device)),
    "zeros negative size": ("zeros", ValueError, lambda x: tl.zeros((-1,), device=x.device)),
    "arange zero step": ("arange", ValueError, lambda x: tl.arange(0, 10, 0, device=x.device)),
    "linspace negative num": ("linspace", ValueError,
                              lambda x: tl.linspace(0, 1, -1, device=x.device)),
    "eye negative": ("eye", ValueError, lambda x: tl.eye(-1, device=x.device)),
    "softmax of int": ("softmax", TypeError, lambda x: tl.softmax(x.i)),
    "layer_norm shape": ("layer_norm", ValueError, lambda x: tl.layer_norm(x.m, (4,))),
    "clip with a str": ("clip", TypeError, lambda x: tl.clip(x.f, "a", 1)),
    "diff negative n": ("diff", ValueError, lambda x: tl.diff(x.f, n=-1)),
    "randint empty range": ("randint", ValueError,
                            lambda x: tl.randint(5, 5, (2,), device=x.device)),
    "rand of int": ("rand", TypeError, lambda x: tl.rand((2,), dtype="int32", device=x.device)),
    "multinomial negative": ("multinomial", ValueError,
                             lambda x: tl.multinomial(x.T([0.5, -1.0]), 1)),
    "item of many": ("item", ValueError, lambda x: x.f.item()),
    "bool of many": ("bool", ValueError, lambda x: bool(x.f)),
}


def _error(device, misuse):
    with pytest.raises(Exception) as e:
        misuse(Inputs(device))
    return e.value


@pytest.mark.usefixtures("cuda_interpret")
@pytest.mark.parametrize("case", list(CASES))
def test_same_typed_error_on_cpu_and_cuda(case):
    op, kind, misuse = CASES[case]
    errors = {d: _error(d, misuse) for d in ("cpu", "cuda")}
    for device, err in errors.items():
        assert isinstance(err, kind), f"{device}: {type(err).__name__}: {err}"
        assert f"{op}()" in str(err), f"{device}: the message does not name {op}(): {err}"
    cpu, cuda = (str(errors[d]) for d in ("cpu", "cuda"))
    assert type(errors["cpu"]) is type(errors["cuda"])
    assert cpu == cuda.replace("cuda:0", "cpu"), f"cpu: {cpu}\ncuda: {cuda}"


@pytest.mark.usefixtures("cuda_interpret")
def test_operands_on_two_devices_are_refused():
    x = tl.asarray([1.0, 2.0], device="cuda")
    with pytest.raises(RuntimeError, match=r"add\(\): expected all tensors on one device"):
        tl.add(x, tl.asarray([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="one device"):
        tl.matmul(x, tl.asarray([1.0, 2.0]))
