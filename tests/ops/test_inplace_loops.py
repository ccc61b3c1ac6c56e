"""In-place loops (issue 13): an operand that is the output itself (``x += y``, ``x *= 2.5``,
``add(y, x, out=x)``) is read through the output's own pointer, so LLVM's run-time overlap
check (which fails when the two pointers are equal) does not send the loop to its scalar form.
Every path must ask for those loops (the full path's flat and tile loops, the dense in-place
and out= runners, the layout runner, above the parallel grain) and give exactly the bits of
the same op computed out of place, writing nothing outside the tensor. Nothing here is timed."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlib as tl
from tensorlib.dispatch.registration import POINTWISE
from tensorlib.kernels.cpu import pointwise as kp, pointwise_fast as kf
from tensorlib.ops.pointwise import HOT_CALLS
from tensorlib.runtime.cpu import streams


@pytest.fixture
def requested(monkeypatch):
    # A user stream makes every later launch of the process take the slow path (sticky: its
    # tensors may have queued work); these tests synchronize theirs, so the process goes back
    # to the fast paths afterwards, as the other tests of its worker expect.
    monkeypatch.setattr(streams, "_streams_used", streams._streams_used)
    monkeypatch.setattr(streams, "_slow", streams._slow)
    """(op name, reads_out) of every flat loop and kernel module asked for."""
    asked = []

    def recording(real):
        def ask(info, kinds, dtypes, compute, out_dtype, reads_out=()):
            asked.append((info.name, reads_out))
            return real(info, kinds, dtypes, compute, out_dtype, reads_out)
        return ask
    for mod in (kp, kf):
        monkeypatch.setattr(mod, "flat_entry", recording(kp.flat_entry))
        monkeypatch.setattr(mod, "combination_module", recording(kp.combination_module))
    return asked


def _f32(shape, seed):
    return tl.asarray(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


@pytest.mark.parametrize("case, reads", [
    ("x += y", ("self",)),
    ("add(y, x, out=x)", ("other",)),
    ("x += x", ("self", "other")),
    ("x.T += y.T", ("self",)),  # a 2-D transposed view: one dense block, the flat loop
    ("x[:, ::2] += row", ("self",)),  # strided rows, a broadcast row: the tile loops
    ("x[:] += y", ("self",)),  # another Tensor object over the same memory
    ("add(x, y, out=z)", ()),
    ("x[:4] += x[2:6]", ("self",)),  # (the iterator copies the overlapping other first)
    ("add(x[2:6], y, out=x[:4])", ()),  # self overlaps the output without being it
])
def test_the_full_path_reads_the_output_itself_through_it(case, reads, requested):
    x, y, z = _f32((6, 8), 1), _f32((6, 8), 2), _f32((6, 8), 3)
    row = _f32((4,), 4)
    want = x.numpy().copy()
    yn, rown = y.numpy(), row.numpy()
    run = {
        "x += y": lambda: (x.__iadd__(y), np.add(want, yn, out=want)),
        "add(y, x, out=x)": lambda: (tl.add(y, x, out=x), np.add(yn, want, out=want)),
        "x += x": lambda: (x.__iadd__(x), np.add(want, want, out=want)),
        "x.T += y.T": lambda: (x.T.__iadd__(y.T), np.add(want.T, yn.T, out=want.T)),
        "x[:, ::2] += row": lambda: (x[:, ::2].__iadd__(row),
                                     np.add(want[:, ::2], rown, out=want[:, ::2])),
        "x[:] += y": lambda: (x[:].__iadd__(y), np.add(want, yn, out=want)),
        "add(x, y, out=z)": lambda: (tl.add(x, y, out=z), None),
        "x[:4] += x[2:6]": lambda: (x[:4].__iadd__(x[2:6]),
                                    np.add(want[:4], want[2:6].copy(), out=want[:4])),
        "add(x[2:6], y, out=x[:4])": lambda: (tl.add(x[2:6], y[:4], out=x[:4]),
                                              np.add(want[2:6].copy(), yn[:4], out=want[:4])),
    }[case]
    s = tl.Stream(device="cpu")
    with tl.stream(s):  # (on a user stream the fast runners decline: the full path)
        run()
    s.synchronize()
    assert ("add", reads) in requested
    assert all(r == reads for name, r in requested if name == "add")
    if case != "add(x, y, out=z)":
        np.testing.assert_array_equal(x.numpy(), want)


def test_the_dense_runners_ask_for_the_loops_their_call_needs(requested):
    """inplace_runner reads self through the output; out_runner picks per call."""
    add = POINTWISE["add"]
    a, b, d = _f32((50,), 5), _f32((50,), 6), _f32((50,), 7)
    an, bn = a.numpy().copy(), b.numpy().copy()
    run = kf.inplace_runner(add, tl.float32, (2,))  # (alpha: args[2])
    assert run(a, b, (a, b, 1)) is a
    np.testing.assert_array_equal(a.numpy(), an + bn)
    assert set(requested) == {("add", ("self",))}
    out = kf.out_runner(add, tl.float32, tl.float32, (2,))
    requested.clear()
    out(d, a, b, (a, b, 1))
    out(b, a, b, (a, b, 1))
    out(a, a, a, (a, a, 1))
    asked = [r for name, r in requested if name == "add"]
    assert list(dict.fromkeys(asked)) == [(), ("other",), ("self", "other")]
    np.testing.assert_array_equal(b.numpy(), (an + bn) + bn)
    np.testing.assert_array_equal(a.numpy(), (an + bn) * 2)


_OPS = {
    "add": (lambda x, y: x.__iadd__(y), lambda x, y: x + y),
    "mul 2.5": (lambda x, y: x.__imul__(2.5), lambda x, y: x * 2.5),
    "pow 2.5": (lambda x, y: x.__ipow__(2.5), lambda x, y: x ** 2.5),  # block forms by value
    "pow 2": (lambda x, y: x.__ipow__(2), lambda x, y: x ** 2),  # a value form
    "pow y": (lambda x, y: x.__ipow__(y), lambda x, y: x ** y),  # block forms by data
    "sin": (lambda x, y: tl.sin(x, out=x), lambda x, y: tl.sin(x)),  # float32: a block guard on data
    "exp": (lambda x, y: x.exp_(), lambda x, y: tl.exp(x)),
    "sub self": (lambda x, y: x.__isub__(x), lambda x, y: x - x),
    "max": (lambda x, y: tl.maximum(y, x, out=x), lambda x, y: tl.maximum(y, x)),
    # selects of the operand read through the output (through a scratch: no masked stores)
    "min 1": (lambda x, y: tl.minimum(x, 1, out=x), lambda x, y: tl.minimum(x, 1)),
    "where": (lambda x, y: tl.where(y > 1, x, y, out=x), lambda x, y: tl.where(y > 1, x, y)),
    "where other": (lambda x, y: tl.where(y > 1, y, x, out=x), lambda x, y: tl.where(y > 1, y, x)),
}
_LAYOUTS = ("dense", "offset", "transposed", "strided 2-D", "broadcast other", "big")


def _operands(layout, dtype, seed):
    rng = np.random.default_rng(seed)
    shape = {"big": (kp.GRAIN + 1000,)}.get(layout, (9, 13))

    def make(s):
        vals = rng.standard_normal(s) * 2
        if dtype.kind == "i":
            vals = rng.integers(-20, 20, s)
        return tl.asarray(vals).astype(dtype)
    base = make((shape[0] + 2,) + shape[1:]) if layout == "offset" else None
    x = {"offset": lambda: base[1:-1],
         "transposed": lambda: make(shape[::-1]).T,
         "strided 2-D": lambda: make((shape[0], 2 * shape[1]))[:, ::2]}.get(
        layout, lambda: make(shape))()
    y = make(shape[1:]) if layout == "broadcast other" else make(shape)
    if dtype.kind == "f":  # positive bases for pow
        x, y = abs(x) + 0.5, abs(y) * 0.5
    else:
        x, y = abs(x) + 1, abs(y) % 3
    return base, x, y


def _bits(t):
    return np.ascontiguousarray(t.astype(tl.float64).numpy()).view(np.uint64)


@settings(max_examples=40, deadline=None)
@given(op=st.sampled_from(sorted(_OPS)), layout=st.sampled_from(_LAYOUTS),
       dtype=st.sampled_from([tl.float32, tl.float64, tl.float16, tl.int32]),
       seed=st.integers(0, 2 ** 16))
def test_in_place_gives_the_out_of_place_bits_on_every_path(op, layout, dtype, seed):
    """Each call of ``x op= y`` (full path first, the fast runners once hot) writes what
    ``x op y`` computes, bit for bit, and nothing around x."""
    inplace, functional = _OPS[op]
    if dtype.kind == "i" and op in ("sin", "exp", "pow 2.5", "mul 2.5"):
        return  # int -> float: not an in-place op on integers
    calls = 3 if layout == "big" else HOT_CALLS + 3
    for i in range(calls):
        base, x, y = _operands(layout, dtype, seed + i)
        around = None if base is None else base.numpy()[[0, -1]].copy()
        want = functional(x, y)
        got = inplace(x, y)
        assert got is x
        np.testing.assert_array_equal(_bits(x), _bits(want))
        if base is not None:
            np.testing.assert_array_equal(base.numpy()[[0, -1]], around)


def test_in_place_selects_are_computed_through_a_scratch():
    """An in-place loop whose expression selects an operand (where, maximum, minimum, clip)
    computes into a stack scratch and copies it out: stored back where it read, the select
    became a masked store (microcoded on AMD Zen, ~3x the time); other in-place loops, and
    loops into another output, store directly."""
    for name in ("where", "maximum", "minimum", "clip_bounds"):
        assert kp._stores_a_select(POINTWISE[name], ("self",)), name
        assert not kp._stores_a_select(POINTWISE[name], ())
    for name in ("add", "multiply", "pow", "exp", "abs", "copysign"):
        assert not kp._stores_a_select(POINTWISE[name], ("self",)), name
