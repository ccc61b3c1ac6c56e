"""Cold start (issue 13, item 5): a first call compiles only the small kernel it needs.

Timings live in benchmarks/cold_start_cpu.py (a shared machine makes them flaky as tests);
these check the structure that keeps first calls cheap, and that the cheaper routes give
exactly what the full kernels give.
"""
import re
import sys
import types

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.kernels.cpu import pointwise as kpw
from tensorlib.kernels.cpu import vector_math
from tensorlib.runtime.cpu import cores


def _modules(prefix):
    return [m for n, m in sys.modules.items() if n.startswith(prefix)]


_FLAT_ONLY = r"""
import numpy as np
import tensorlib as tl
from tensorlib.kernels.cpu import pointwise as kpw

x = tl.asarray(np.linspace(-3, 3, 1000).astype(np.float32))
y = tl.copysign(x, -1.0)  # Python-scalar operand: the flat loop of its own module
np.testing.assert_array_equal(y.numpy(), np.copysign(x.numpy(), np.float32(-1.0)))
r = tl.asarray(x.numpy()[::-1].copy())
z = tl.nextafter(x, r)  # two dense tensors: the combination module's flat loop
np.testing.assert_array_equal(z.numpy(), np.nextafter(x.numpy(), r.numpy()))
key = ("nextafter", "TT", (tl.float32, tl.float32), tl.float32, tl.float32, ())  # (no reads_out)
mod = kpw._kernels[key]
assert mod.flat.signatures and not mod.serial.signatures
# a strided call runs the loop nest where Numba's disk cache holds it, else (a first process)
# dense copies through this flat loop (kernels/cpu/pointwise_cold.py): the same values
s = tl.nextafter(x[::2], x[1::2])
np.testing.assert_array_equal(s.numpy(), np.nextafter(x.numpy()[::2], x.numpy()[1::2]))
"""


def test_dense_full_path_runs_the_flat_loop_only():
    """A dense call on the full path (the dense fast path is not hot yet) runs the module's
    flat loop; the strided loop nest stays uncompiled until a strided call needs it. In a
    fresh process: an earlier strided float32 nextafter in this one (other tests use it)
    would have compiled the loop nest already."""
    import subprocess
    r = subprocess.run([sys.executable, "-c", _FLAT_ONLY], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]


_POW_ONE_FORM = r"""
import re
import sys
import numpy as np
import tensorlib as tl

def compiled(prefix, *names):
    mods = [m for n, m in sys.modules.items() if re.fullmatch(prefix + "_[0-9a-f]+", n)]
    assert len(mods) <= 1, [n for n in sys.modules if n.startswith("tl_pow")]
    loop = prefix.split("_")[2]
    return {f: bool(mods) and bool(getattr(mods[0], loop + f).signatures) for f in names}

x = tl.asarray(np.linspace(0, 3, 1000).astype(np.float32))
xd = x.numpy().astype(np.float64)
y = x ** 2.5  # the half-integer form alone
np.testing.assert_allclose(y.numpy(), xd ** 2.5, rtol=6e-8)
assert compiled("tl_pow_flat", "_fast", "_guard") == {"_fast": True, "_guard": False}
assert compiled("tl_pow_flat_rest", "", "_fast") == {"": False, "_fast": False}
for _ in range(40):  # the strided fast path of a compute-bound op: its gathering strided
    s = x[::2] ** 2.5  # loop, of the half-integer form alone
np.testing.assert_allclose(s.numpy(), xd[::2] ** 2.5, rtol=6e-8)
assert compiled("tl_pow_strided", "_fast", "_guard") == {"_fast": True, "_guard": False}
xp = x + 1.0
y = xp ** 2.7  # positive bases: the ordinary form's loop alone
e = float(np.float32(2.7))  # (the exponent in the compute dtype)
np.testing.assert_allclose(y.numpy(), xp.numpy().astype(np.float64) ** e, rtol=6e-8)
assert compiled("tl_pow_flat_rest", "", "_fast") == {"": False, "_fast": True}
y = x ** 2.7  # a zero base in the first block: now the loop of every form
np.testing.assert_allclose(y.numpy(), xd ** e, rtol=6e-8)
assert compiled("tl_pow_flat_rest", "", "_fast") == {"": True, "_fast": True}
y = x ** 2.0  # a value form (ops.yaml value_forms): x * x's loop, in a module of its own
np.testing.assert_array_equal(y.numpy(), (xd * xd).astype(np.float32))
(square,) = [m for n, m in sys.modules.items() if n.startswith("tl_pow_flat_v_")]
assert square.flat_v0.signatures
"""


def test_pow_by_a_python_scalar_compiles_the_form_its_value_needs():
    """float32 ``x ** 2.5``: pow's first block_fast guard reads only the exponent, so the flat
    loop with a Python-scalar exponent decides it once per call and compiles only the
    half-integer form (the guard itself in Python: small_halves.value_py, no compile; the
    strided fast path's gathering loop likewise);
    ``x ** 2.7`` then compiles the ordinary form alone on positive bases (its guard reads
    them: a split flat loop), the loop of every form once a block has a zero base; ``x ** 2.0``
    its value form's loop. In a fresh process (other tests here compile them all)."""
    import subprocess
    r = subprocess.run([sys.executable, "-c", _POW_ONE_FORM], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]


_SIN_FAST_FIRST = r"""
import sys
import numpy as np
import tensorlib as tl
from tensorlib.kernels.cpu import pointwise as kpw

x = tl.asarray(np.linspace(-50, 50, 5000).astype(np.float32))
y = tl.sin(x)  # ordinary data: the block form's loop alone
(fast_mod,) = [m for n, m in sys.modules.items() if n.startswith("tl_sin_flatfast")]
assert fast_mod.flat_fast.signatures
key = ("sin", "T", (tl.float32,), tl.float32, tl.float32, ())  # (no reads_out)
assert key not in kpw._kernels or not kpw._kernels[key].flat.signatures
h = x.numpy().copy()
h[3000] = 3e9  # a block the guard fails for: now the loop of both forms, from that block on
z = tl.sin(tl.asarray(h))
assert kpw._kernels[key].flat.signatures
np.testing.assert_array_equal(z.numpy()[:2048], y.numpy()[:2048])  # blocks before it
"""


def test_sin_first_call_compiles_the_block_form_only():
    """float32 sin (a block_fast guard reading tensor data): a first call on ordinary data
    compiles the flat loop of the block form alone; a block the guard fails for brings in the
    loop of both forms for the rest. In a fresh process (other tests compile both)."""
    import subprocess
    r = subprocess.run([sys.executable, "-c", _SIN_FAST_FIRST], capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]


@pytest.mark.parametrize("case", ["sin", "pow_tensor", "pow_scalar_base"])
@pytest.mark.parametrize("bad_blocks", [(), (0,), (2,), (5,), (0, 3, 5), (1, 2, 3, 4, 5)])
def test_block_split_gives_the_mixed_loops_bits(case, bad_blocks):
    """The split flat loop (block form up to the first failing block, then the loop of both
    forms from there) gives the bits of the loop of both forms over the whole, whichever
    blocks fail (the first, a middle one, the short last one, several, all but the first)."""
    from tensorlib.kernels.cpu.pointwise import BLOCK
    rng = np.random.default_rng(len(bad_blocks))
    n = 5 * BLOCK + 100
    a = rng.uniform(0.5, 3, n).astype(np.float32)
    e = np.full(n, 2.5, np.float32)
    for b in bad_blocks:
        i = b * BLOCK + int(rng.integers(0, min(BLOCK, n - b * BLOCK)))
        a[i] = 3e9
        e[i] = 2.7
    f32 = tl.float32
    if case == "sin":
        key, ops, got = ("sin", "T", (f32,), f32, f32), [a], tl.sin(tl.asarray(a))
    elif case == "pow_tensor":
        key, ops = ("pow", "TT", (f32, f32), f32, f32), [a, e]
        got = tl.pow(tl.asarray(a), tl.asarray(e))
    else:  # a Python-scalar base, the exponent a tensor: the guard reads tensor data
        key, ops, got = ("pow", "ST", (None, f32), f32, f32), [e], tl.pow(1.5, tl.asarray(e))
    want = np.empty(n, np.float32)
    if case == "pow_scalar_base":  # its loops' own module: the loop of both forms is `flat`
        # (by its source's header: the process may hold other pow flat modules, e.g. for
        # another dtype, depending on which tests ran in it before)
        (mod,) = [m for name, m in list(sys.modules.items()) if name.startswith("tl_pow_flat_")
                  and hasattr(m, "flat_fast")
                  and "pow ST ['scalar', 'float32'] -> float32" in open(m.__file__).read(400)]
        mod.flat(n, want.ctypes.data, e.ctypes.data, np.float32(1.5))
    else:
        from tensorlib.dispatch.registration import POINTWISE
        mod = kpw.combination_module(POINTWISE[key[0]], *key[1:])
        mod.flat(n, want.ctypes.data, *[o.ctypes.data for o in ops])
    assert np.array_equal(got.numpy().view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("nvalues", [0, 1])
def test_block_split_runs_the_mixed_loop_alone_once_it_exists(nvalues):
    """The split's calls: the block form's loop alone while its guard holds; from a block it
    fails for, the loop of both forms (made then) over the rest, the operands moved on; after
    that, the loop of both forms alone over every element (one call, the same blocks)."""
    from tensorlib.kernels.cpu.pointwise import _block_split
    calls, made = [], []

    def fast(n, *args):
        calls.append(("fast", n, args))
        return fail_at.get(n, n)

    def mixed():
        made.append(1)
        return lambda n, *args: calls.append(("mixed", n, args))

    values = (1.5,) * nvalues
    flat = _block_split(fast, mixed, (4, 4), nvalues)
    fail_at = {3000: 2048}
    flat(5000, 100, 200, *values)                      # all blocks pass
    flat(3000, 100, 200, *values)                      # the third block fails
    flat(5000, 100, 200, *values)
    assert calls == [("fast", 5000, (100, 200) + values),
                     ("fast", 3000, (100, 200) + values),
                     ("mixed", 952, (100 + 2048 * 4, 200 + 2048 * 4) + values),
                     ("mixed", 5000, (100, 200) + values)]
    assert made == [1]


def test_pow_by_changing_python_scalars_picks_the_form_per_value():
    """The choice follows each call's exponent (the same value object, an equal new one, a
    different one; nan, -0.0, beyond the half-integer range): the bits of the same exponent
    as a tensor, where the guard runs per block in the loop, on the fast, strided and full
    (out=) paths."""
    rng = np.random.default_rng(5)
    x = tl.asarray(rng.uniform(0, 3, 3000).astype(np.float32))
    exps = [2.0, 2.7, 2.0, float("2.0"), 0.5, float("nan"), -0.0, 0.0, 9.0, 8.0, -1.5, 2.5,
            2.5, 3]
    for _ in range(2):
        for e in exps:
            want = tl.pow(x, tl.full_like(x, e)).numpy()
            for got in (x ** e, x ** e, (x[::2] ** e), tl.pow(x, e, out=tl.empty_like(x))):
                w = want[::2] if got.shape[0] < x.shape[0] else want
                assert np.array_equal(got.numpy().view(np.uint32), w.view(np.uint32)), e


@pytest.mark.parametrize("dt", ["float32", "float64", "int64"])
def test_zero_d_operand_as_value(dt):
    """A 0-d tensor operand of the compute dtype is read once and served by the
    Python-scalar flat loop: same values, dtypes and errors as the strided loop."""
    xn = (np.arange(-50, 50) * 1.5).astype(dt)
    x = tl.asarray(xn)
    c = x[60]
    np.testing.assert_array_equal((x > c).numpy(), xn > xn[60])
    np.testing.assert_array_equal((x - c).numpy(), xn - xn[60])
    np.testing.assert_array_equal((c - x).numpy(), xn[60] - xn)
    np.testing.assert_array_equal(tl.where(x > c, x, c).numpy(),
                                  np.where(xn > xn[60], xn, xn[60]))
    # a 0-d operand of another dtype promotes: the strided loop (stride 0) casts it; the
    # same through a strided view of x
    xs = tl.asarray(np.repeat(xn, 2))[::2]
    for other in (tl.asarray(np.array(2, np.int32)), tl.asarray(np.array(2.5, np.float32)),
                  tl.asarray(np.array(True))):
        got, ref = x * other, xs * other
        assert got.dtype == ref.dtype
        np.testing.assert_array_equal(got.numpy(), ref.numpy())
        got, ref = tl.maximum(other, x), tl.maximum(other, xs)
        assert got.dtype == ref.dtype
        np.testing.assert_array_equal(got.numpy(), ref.numpy())


def test_vector_math_helpers_inline_by_llvm():
    """vector_math helpers compile once on their own and LLVM inlines them (alwaysinline):
    a loop calling one keeps no call to it and vectorizes."""
    import numba

    @numba.njit(error_model="numpy")
    def loop(a, o):
        for i in range(a.size):
            o[i] = vector_math.sin_f64(a[i])

    a = np.linspace(-4, 4, 64)
    o = np.empty_like(a)
    loop(a, o)
    np.testing.assert_allclose(o, np.sin(a), rtol=1e-15, atol=1e-16)
    llvm = loop.inspect_llvm(loop.signatures[0])
    assert re.search(r"<\d+ x double>", llvm)
    assert "sin_f64" not in " ".join(re.findall(r"call [^\n]*", llvm))
    (cres,) = vector_math.sin_f64.overloads.values()
    fn = cres.library._get_module_for_linking().get_function(cres.fndesc.mangled_name)
    assert any(b"alwaysinline" in a for a in fn.attributes)


_REDUCTION_MODES = """
import sys
import numpy as np
import tensorlib as tl
from tensorlib.kernels.cpu import reduction
reduction.COLD = False  # the full kernels (a cold first call would run reduction_cold)

def _modules(prefix):
    return [m for n, m in sys.modules.items() if n.startswith(prefix)]

x = tl.asarray(np.arange(24, dtype=np.float64).reshape(4, 6) * 0.5)
np.testing.assert_allclose(tl.sum(x).item(), 138.0)
mod = [m for m in _modules("tl_red_sum_") if "sum float64 -> float64 -> float64" in
       open(m.__file__).read()][0]
assert mod.serial_rows.signatures and not mod.serial_outer.signatures
np.testing.assert_array_equal(tl.mean(x, axis=1).numpy(), x.numpy().mean(axis=1))
np.testing.assert_array_equal(tl.sum(x[:, ::2], axis=1).numpy(), x.numpy()[:, ::2].sum(axis=1))
assert mod.serial_inner.signatures and not mod.serial_outer.signatures
np.testing.assert_array_equal(tl.sum(x, axis=0).numpy(), x.numpy().sum(axis=0))
assert mod.serial_outer.signatures
# sum and mean share the module: mean divides in float64, sum by 1.0 (exact)
xn = np.random.default_rng(0).random(1000).astype(np.float32)
t = tl.asarray(xn)
assert tl.sum(t).dtype == tl.float32
np.testing.assert_allclose(tl.sum(t).item(), xn.sum(dtype=np.float64), rtol=1e-6)
np.testing.assert_allclose(tl.mean(t).item(), xn.mean(dtype=np.float64), rtol=1e-6)
"""


def test_reduction_compiles_only_its_mode():
    """A reduction compiles the kernel of its layout only: contiguous rows (serial_rows), the
    general inner mode (serial_inner) or the outer mode (serial_outer). In a fresh process: any
    earlier float64 axis-0 sum in this one would have compiled the outer mode already."""
    import subprocess
    r = subprocess.run([sys.executable, "-c", _REDUCTION_MODES], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]


@pytest.mark.parametrize("dt", ["float32", "float64", "int64", "int8"])
def test_unique_values_and_mask_paths(dt):
    rng = np.random.default_rng(1)
    for n in (1, 7, 1000, 70000):
        if dt.startswith("float"):
            xn = np.round(rng.standard_normal(n), 1).astype(dt)
            xn[:: max(1, n // 5)] = np.nan
            xn[1:: max(2, n // 3)] = -0.0
        else:
            xn = rng.integers(-20, 20, n).astype(dt)
        x = tl.asarray(xn)
        u = tl.unique_values(x).numpy()
        srt = np.sort(xn, kind="stable")
        keep = np.concatenate(([True], srt[1:] != srt[:-1]))  # nan != nan: each its own
        np.testing.assert_array_equal(u.view(np.uint8), srt[keep].view(np.uint8))
        m = x > x[n // 2]
        np.testing.assert_array_equal(x[m].numpy(), xn[xn > xn[n // 2]])
        np.testing.assert_array_equal(tl.nonzero(m)[0].numpy(), np.nonzero(xn > xn[n // 2])[0])
    # 2-D mask (multi-index and offsets through NumPy's nonzero), strided source
    a = rng.random((30, 40)).astype(dt if dt.startswith("float") else "float32")
    t = tl.asarray(a)
    mask = t > 0.5
    np.testing.assert_array_equal(t[mask].numpy(), a[a > 0.5])
    np.testing.assert_array_equal(t.T[mask.T].numpy(), a.T[(a > 0.5).T])
    got = tl.nonzero(mask)
    for g, w in zip(got, np.nonzero(a > 0.5)):
        np.testing.assert_array_equal(g.numpy(), w)


def test_parallel_ready_waits_for_real_work(monkeypatch):
    """With ``work`` given, the parallel variant compiles only once the serial one processed
    PARALLEL_WORK elements over at least two big calls."""
    from numba import njit, prange

    @njit(nogil=True)
    def serial(out, x):
        for i in range(x.size):
            out[i] = x[i] + 1.0

    @njit(nogil=True, parallel=True)
    def parallel(out, x):
        for i in prange(x.size):
            out[i] = x[i] + 1.0

    mod = types.SimpleNamespace(serial=serial, parallel=parallel)
    monkeypatch.setattr(cores, "DEFER_PARALLEL_COMPILE", True)
    monkeypatch.setattr(cores, "threads", lambda own=False: 2)  # a team would run it (whatever the load)
    x = np.arange(8.0)
    out = np.empty_like(x)
    step = cores.PARALLEL_WORK // 3
    for _ in range(3):  # 3 calls, 3 * step < PARALLEL_WORK: nothing compiles
        assert not cores.parallel_ready(mod, (out, x), step)
    assert parallel not in cores._compiling
    assert not cores.parallel_ready(mod, (out, x), step)  # now past the budget: it starts
    cores._compiling[parallel].join(120)  # compiled from the argument types, serial unused
    assert not serial.signatures
    assert cores.parallel_ready(mod, (out, x), step)


@pytest.mark.parametrize("op", ["sum", "mean", "max", "min", "std", "prod", "any", "argmax",
                                "argmin"])
@pytest.mark.parametrize("dt", ["float32", "float64", "int64", "float16"])
def test_rows_kernel_matches_general_kernel(op, dt, monkeypatch):
    """serial_rows (contiguous rows) gives bit for bit what serial_inner gives."""
    from tensorlib.kernels.cpu import reduction as kred
    from tensorlib.ops import reduction as ored
    rng = np.random.default_rng(3)
    fn = getattr(tl, op)
    for shape, axis in (((5000,), None), ((13, 2100), -1), ((3, 1), -1), ((0, 4), -1)):
        xn = (rng.standard_normal(shape) * 3).astype(dt)
        if dt.startswith("float") and xn.size:
            xn.reshape(-1)[7 % xn.size] = np.nan if op == "max" else xn.reshape(-1)[0]
        x = tl.asarray(xn)
        kw = {} if axis is None else {"axis": axis}
        ored._plans.clear()
        try:
            got = fn(x, **kw).numpy()
        except Exception as e:  # noqa: BLE001 - what the op refuses, both refuse
            with pytest.raises(type(e)):
                monkeypatch.setattr(kred, "ROWS_KERNEL", False)
                fn(x, **kw)
            monkeypatch.setattr(kred, "ROWS_KERNEL", True)
            continue
        ored._plans.clear()  # (a small-call plan would repeat the first call's kernel)
        monkeypatch.setattr(kred, "ROWS_KERNEL", False)
        want = fn(x, **kw).numpy()
        monkeypatch.setattr(kred, "ROWS_KERNEL", True)
        ored._plans.clear()
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(np.atleast_1d(got).view(np.uint8),
                                      np.atleast_1d(want).view(np.uint8))


@pytest.mark.parametrize("dt", ["float32", "float64", "float16"])
def test_normalization_rows_kernel_matches_general_kernel(dt, monkeypatch):
    """serial_rows (rows contiguous in and out) gives bit for bit what serial gives."""
    from tensorlib.kernels.cpu import normalization as knorm
    rng = np.random.default_rng(4)
    for shape in ((100, 1000), (7, 33), (5, 6, 40), (1, 1), (6, 17)):
        xn = (rng.standard_normal(shape) * 4).astype(dt)
        xn.reshape(-1)[0] = np.inf if shape[-1] > 1 else xn.reshape(-1)[0]
        if shape == (6, 17):
            # nan, an all -inf row, zeros of both signs as the max (log_softmax's -0.0 - 0.0
            # keeps the max's sign), a row whose other exps underflow (sum exactly 1)
            xn[1, 3] = np.nan
            xn[2] = -np.inf
            xn[3] = -np.abs(xn[3]) - 1
            xn[3, [2, 16]] = -0.0
            xn[3, 9] = 0.0
            xn[4] = -200.0
            xn[4, 5] = -0.0
            xn[5, ::2] = -0.0
        x = tl.asarray(xn)
        w = tl.asarray(rng.standard_normal(shape[-1]).astype(dt))
        b = tl.asarray(rng.standard_normal(shape[-1]).astype(dt))
        calls = [lambda: tl.softmax(x, axis=-1), lambda: tl.log_softmax(x, axis=-1),
                 lambda: tl.layer_norm(x, (shape[-1],), w, b),
                 lambda: tl.layer_norm(x, (shape[-1],))]
        for call in calls:
            got = call().numpy()
            monkeypatch.setattr(knorm, "ROWS_KERNEL", False)
            want = call().numpy()
            monkeypatch.setattr(knorm, "ROWS_KERNEL", True)
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_softmax_cold_route_matches_the_rows_kernel(dt, monkeypatch):
    """A softmax / log_softmax / layer_norm whose serial_rows is not compiled runs cold
    (kernels/cpu/normalization_cold.py: NumPy steps and the module's row_sum / row_sqdev) and
    gives bit for bit the kernel's result: magnitudes over five decades, -inf entries, all -inf
    rows and rows with +inf, single elements, 3-D rows, rows narrower than their stride and a
    negative row stride, layer_norm with and without weight and bias; a row holding a nan and
    half types go to the kernel."""
    from tensorlib.kernels.cpu import normalization as knorm
    served = []
    real = knorm.run_cold
    monkeypatch.setattr(knorm, "run_cold", lambda *a: (served.append(1), real(*a)))
    monkeypatch.setattr(knorm, "ROWS_KERNEL", True)
    monkeypatch.setattr(knorm.cores, "threads", lambda own=False: 1)  # (serial_rows, not its twin)
    # (a user stream used earlier in the worker sends launches down the slow path, which
    # skips the cold route; this test's tensors have no queued work)
    monkeypatch.setattr(knorm._streams, "_slow", False)
    rng = np.random.default_rng(5)
    cases = 0
    for shape in ((1, 1), (3, 1), (7, 33), (5, 6, 40), (2, 17), (1, 5000), (40, 200)):
        for variant in ("plain", "-inf", "rows"):
            xn = (rng.standard_normal(shape) * 10.0 ** rng.uniform(-3, 2, shape)).astype(dt)
            if variant == "-inf":
                xn[rng.random(shape) < 0.2] = -np.inf
            elif variant == "rows" and shape[-1] > 2:
                xn.reshape(-1, shape[-1])[0] = -np.inf
                xn.reshape(-1, shape[-1])[-1, 1] = np.inf
            x = tl.asarray(xn)
            views = [x] + ([x[:, 1:-1], x[::-1]] if len(shape) == 2 and shape[1] > 2 else [])
            n = shape[-1]
            w = tl.asarray(rng.standard_normal(n).astype(dt))
            b = tl.asarray(rng.standard_normal(n).astype(dt))
            calls = [lambda v: tl.softmax(v, axis=-1), lambda v: tl.log_softmax(v, axis=-1),
                     lambda v: tl.layer_norm(v, (v.shape[-1],), eps=0.1)]
            if variant == "plain":  # (layer_norm of an inf is nan either way)
                calls.append(lambda v: tl.layer_norm(v, (n,), w, b))
            for v in views:
                for i, call in enumerate(calls):
                    if i == 3 and v.shape[-1] != n:
                        continue
                    monkeypatch.setattr(knorm, "COLD", "always")
                    before = len(served)
                    got = call(v).numpy()
                    assert len(served) == before + 1, (shape, variant, v.shape, i)
                    monkeypatch.setattr(knorm, "COLD", False)
                    want = call(v).numpy()
                    np.testing.assert_array_equal(
                        got.view(np.uint8), want.view(np.uint8),
                        err_msg=f"call {i} {dt} {shape} {variant} {v.shape}")
                    cases += 1
    assert cases > 100
    monkeypatch.setattr(knorm, "COLD", "always")
    xn = rng.standard_normal((4, 9)).astype(dt)
    xn[2, 3] = np.nan
    before = len(served)
    for call in (lambda: tl.softmax(tl.asarray(xn), axis=-1),
                 lambda: tl.log_softmax(tl.asarray(xn), axis=-1),
                 lambda: tl.layer_norm(tl.asarray(xn), (9,)),
                 lambda: tl.softmax(tl.asarray(xn[:1] * 0 + 1).astype(tl.float16), axis=-1)):
        call()
    assert len(served) == before  # the kernel served each of them


_RED_NANS = np.array([0x7FC00000, 0xFFC00000, 0x7FC00123, 0xFF800001, 0x7F800001],
                     np.uint32).view(np.float32)


def _red_data(rng, shape, dt, variant):
    if dt == "bool":
        return rng.random(shape) < (0.5 if variant == "plain" else 0.01)
    if not dt.startswith("float"):
        info = np.iinfo(dt)
        xn = rng.integers(max(info.min, -300), min(info.max, 300), shape).astype(dt)
        if variant != "plain" and xn.size:
            xn.reshape(-1)[rng.integers(0, xn.size, 5)] = info.max if variant == "nan" \
                else info.min  # ties at the extremes
        return xn
    # magnitudes over 7 decades: the order of the additions shows in the bits
    xn = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)).astype(dt)
    flat = xn.reshape(-1)
    k = flat.size
    if variant == "nan" and k:
        with np.errstate(invalid="ignore"):
            flat[rng.integers(0, k, 3)] = _RED_NANS[rng.integers(0, 5, 3)].astype(dt)
    elif variant == "zeros" and k:
        # max is a zero: signs mixed, in and across blocks (of 1024 elements for sums, 16384
        # for float max / min)
        flat[:] = -np.abs(flat) - 1
        flat[rng.integers(0, k, 4)] = -0.0
        flat[rng.integers(0, k, 2)] = 0.0
    elif variant == "negzeros" and k:
        flat[:] = -np.abs(flat) - 1
        flat[rng.integers(0, k, 3)] = -0.0
    elif variant == "inf" and k:
        flat[rng.integers(0, k, 2)] = np.inf
        flat[rng.integers(0, k, 2)] = -np.inf
    return xn


_RED_CASES = [((100000,), None), ((3000,), None), ((1,), None), ((100, 1000), 1),
              ((100, 1000), 0), ((7, 5, 300), 1), ((7, 5, 300), 2), ((66, 3), 0),
              ((5, 2100), -1), ((2, 40000), -1), ((2100, 5), 0), ((4, 3, 2), (0, 2)), ((0, 5), 1),
              ((5, 0), 1)]


@pytest.mark.parametrize("dt", ["float32", "float64", "int64", "int8", "uint16", "bool",
                                "float16"])
def test_reduction_cold_paths_match_kernels(dt, monkeypatch):
    """The cold route (kernels/cpu/reduction_cold.py: NumPy's exact reductions, the module's
    block kernel folded in NumPy, serial_outer's order in NumPy, scans as NumPy's accumulate
    from the kernel's initial value) gives bit for bit what the
    full kernels give: nan payloads, zero signs, ties, inf, empty, strided and transposed
    inputs, keepdims and out=, every layout it takes (and the ones it declines)."""
    from tensorlib.kernels.cpu import reduction as kred
    from tensorlib.kernels.cpu import reduction_cold
    from tensorlib.ops import reduction as ored
    served = []
    for name in ("value_cold", "arg_cold", "scan_cold"):
        real = getattr(reduction_cold, name)
        monkeypatch.setattr(kred, name, lambda *a, _real=real, _n=name: (served.append(_n),
                                                                         _real(*a)))
    rng = np.random.default_rng(11)
    ops = ["sum", "mean", "max", "min", "argmax", "argmin", "prod", "any", "all", "std", "var",
           "cumsum", "cumprod"]
    for shape, axis in _RED_CASES:
        for variant in ("plain", "nan", "zeros", "negzeros", "inf"):
            if variant != "plain" and (dt == "bool" or len(shape) > 2):
                continue
            xn = _red_data(rng, shape, dt, variant)
            views = [tl.asarray(xn)]
            if len(shape) == 2 and variant == "plain":
                views += [tl.asarray(np.ascontiguousarray(xn.T)).T,  # transposed layout
                          tl.asarray(np.repeat(xn, 2, axis=-1))[..., ::2]]  # strided
            for x in views:
                for op in ops:
                    if op in ("argmax", "argmin") and isinstance(axis, tuple):
                        continue
                    fn = getattr(tl, op)
                    for kw in ({} if axis is None else {"axis": axis},
                               {"axis": axis, "keepdims": True}):
                        got = want = None
                        try:
                            monkeypatch.setattr(kred, "COLD", "always")
                            ored._plans.clear()
                            got = fn(x, **kw).numpy()
                        except Exception as e:  # noqa: BLE001 - both refuse alike
                            monkeypatch.setattr(kred, "COLD", False)
                            with pytest.raises(type(e)):
                                fn(x, **kw)
                            continue
                        monkeypatch.setattr(kred, "COLD", False)
                        ored._plans.clear()
                        want = fn(x, **kw).numpy()
                        assert got.dtype == want.dtype and got.shape == want.shape
                        np.testing.assert_array_equal(
                            np.ascontiguousarray(np.atleast_1d(got)).view(np.uint8),
                            np.ascontiguousarray(np.atleast_1d(want)).view(np.uint8),
                            err_msg=f"{op} {dt} {shape} {kw} {variant}")
    ored._plans.clear()
    # out=: a strided output through the cold route
    xn = _red_data(rng, (30, 1100), dt, "plain")
    x = tl.asarray(xn)
    for op in ("sum", "max", "argmax"):
        res_dt = getattr(tl, op)(x, axis=1).dtype
        outs = []
        for cold in ("always", False):
            monkeypatch.setattr(kred, "COLD", cold)
            buf = tl.zeros((60,), dtype=res_dt)
            getattr(tl, op)(x, axis=1, out=buf[::2])
            outs.append(buf.numpy())
        np.testing.assert_array_equal(outs[0].view(np.uint8), outs[1].view(np.uint8))
    # many rows whose max / min is a zero: the sign of the first 1024-block holding a zero
    if dt in ("float32", "float64"):
        for shape in ((500, 7), (3, 2049), (2, 1025)):
            xn = -np.abs(rng.standard_normal(shape)).astype(dt) - 1
            pos = rng.integers(0, xn.size, xn.size // 3)
            xn.reshape(-1)[pos] = np.where(rng.random(pos.size) < 0.5, 0.0, -0.0)
            xn[0], xn[-1] = 0.0, -0.0
            for x, op in ((tl.asarray(xn), tl.max), (tl.asarray(-xn), tl.min)):
                outs = []
                for cold in ("always", False):
                    monkeypatch.setattr(kred, "COLD", cold)
                    ored._plans.clear()
                    outs.append(op(x, axis=1).numpy())
                np.testing.assert_array_equal(outs[0].view(np.uint8), outs[1].view(np.uint8))
    # a float sum into a wider dtype (half inputs read as raw bits), nan rows included: a
    # nan from input nans makes the cold route run the full kernel (the kernel's payload)
    if dt.startswith("float"):
        xn = _red_data(rng, (20, 3000), dt, "nan")
        xn[5, 7], xn[5, 9] = np.inf, -np.inf
        x = tl.asarray(xn)
        for kw in ({"axis": 1}, {"axis": 0}, {}):
            outs = []
            for cold in ("always", False):
                monkeypatch.setattr(kred, "COLD", cold)
                ored._plans.clear()
                outs.append(np.atleast_1d(tl.sum(x, dtype=tl.float64, **kw).numpy()))
            np.testing.assert_array_equal(outs[0].view(np.uint8), outs[1].view(np.uint8))
    # the cold route served: exact reductions of every dtype, block folds of the float ones
    # (a half scan has no cold route: its float32 accumulator is stored back as a half)
    assert set(served) == {"arg_cold", "value_cold"} | ({"scan_cold"} if dt != "float16" else set())


def test_reduction_cold_route_on_a_cpu_stream(monkeypatch):
    """On a user CPU stream the cold route is queued like the kernel it stands for: it reads
    the input after the queued work that writes it. Plans wait for a full-path call."""
    import threading
    from tensorlib.kernels.cpu import reduction as kred
    from tensorlib.ops import reduction as ored
    from tensorlib.runtime.cpu import streams as cs
    xn = np.random.default_rng(2).standard_normal((40, 1000)).astype(np.float32)
    a = tl.asarray(xn)
    ops = [lambda t: tl.sum(t), lambda t: tl.mean(t, axis=0), lambda t: tl.max(t, axis=1),
           lambda t: tl.argmax(t)]
    monkeypatch.setattr(kred, "COLD", False)
    ored._plans.clear()
    want = [f(a * 2).numpy() for f in ops]
    monkeypatch.setattr(kred, "COLD", "always")
    ored._plans.clear()
    s = tl.Stream(device="cpu")
    gate = threading.Event()
    with tl.stream(s):
        cs.launch(gate.wait, "gate", (), ())
        b = a * 2  # queued behind the gate
        got = [f(b) for f in ops]
    gate.set()
    s.synchronize()
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.atleast_1d(g.numpy()).view(np.uint8),
                                      np.atleast_1d(w).view(np.uint8))
    # off the stream: a cold call makes no plan (not even a "never" entry); the next full-path
    # call does, and the plan repeats the kernel
    ored._plans.clear()
    first = tl.sum(a).numpy()
    assert not ored._plans
    monkeypatch.setattr(kred, "COLD", False)
    second = tl.sum(a).numpy()
    assert len(ored._plans) == 1 and list(ored._plans.values())[0] is not None
    third = tl.sum(a).numpy()
    assert first.tobytes() == second.tobytes() == third.tobytes()
    ored._plans.clear()


_REDUCTION_FIRST_CALLS = """
import sys
import numpy as np
import tensorlib as tl
from tensorlib.kernels.cpu import reduction
from tensorlib.runtime.cpu import cores

cores.DEFER_PARALLEL_COMPILE = True
xn = (np.random.default_rng(0).standard_normal((100, 1000)) * 3).astype(np.float32)
x = tl.asarray(xn)


def calls():
    return [r.numpy() for r in (tl.sum(x), tl.mean(x, axis=0), tl.sum(x, axis=1), tl.max(x),
                                tl.argmax(x), tl.argmin(x, axis=0), tl.sum(x.astype(tl.int64)))]


first = calls()
mods = list(reduction._mods.values())
assert len(mods) == 5  # float32 sum (and mean), max, argmax, argmin, int64 sum


def full_compiled(m):
    return bool(m.serial_rows.signatures or m.outer.serial.signatures)


if sys.argv[1] == "empty":
    # a first call with empty caches compiles no full kernel, at most a block kernel (the
    # float sum's)
    assert not any(full_compiled(m) for m in mods)
    assert sum(bool(getattr(m, "block", None) and m.block.signatures) for m in mods) == 1
    cores.DEFER_PARALLEL_COMPILE = False  # now the full kernels (into the disk cache)
    second = calls()
    assert all(full_compiled(m) for m in mods)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(np.atleast_1d(a).view(np.uint8),
                                      np.atleast_1d(b).view(np.uint8))
else:
    # the full kernels are in the disk cache: loaded and run from the first call
    assert all(full_compiled(m) for m in mods)
"""


def test_reduction_first_call_compiles_no_full_kernel(tmp_path):
    """With empty caches first sum / mean along axis 0 / max / argmax / argmin / integer sum
    calls compile no serial_rows / serial_outer kernel (at most a block kernel) and give what
    the full kernels give; once those are in the disk cache, a new process loads them."""
    import os
    import subprocess
    env = dict(os.environ, TENSORLIB_CACHE_DIR=str(tmp_path / "tl"),
               NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    for state in ("empty", "cached"):
        r = subprocess.run([sys.executable, "-c", _REDUCTION_FIRST_CALLS, state], env=env,
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-3000:]


_SOFTMAX_FIRST_CALLS = """
import sys
import numpy as np
import tensorlib as tl
from tensorlib.kernels.cpu import normalization
from tensorlib.runtime.cpu import cores

rng = np.random.default_rng(2)
xs = [tl.asarray((rng.standard_normal((30, 400)) * 3).astype(dt))  # (below PAR_GRAIN)
      for dt in ("float32", "float64")]
def calls():
    return [f(x).numpy() for f in (lambda x: tl.softmax(x, axis=-1),
                                   lambda x: tl.log_softmax(x, axis=-1),
                                   lambda x: tl.layer_norm(x, (400,))) for x in xs]


first = calls()
mods = list(normalization._mods.values())
assert len(mods) == 6
if sys.argv[1] == "empty":
    # no serial_rows compiled: the cold route and the row helpers
    assert not any(m.serial_rows.signatures or m.parallel.signatures for m in mods)
    assert all(m.row_sum.signatures for m in mods)  # (and layer_norm's row_sqdev)
    cores.DEFER_PARALLEL_COMPILE = False  # now the kernels (into the disk cache)
    normalization.COLD = False
    second = calls()
    assert all(m.serial_rows.signatures for m in mods)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))
"""


def test_softmax_first_call_compiles_no_rows_kernel(tmp_path):
    """With empty caches a first float32 / float64 softmax / log_softmax / layer_norm compiles
    only the module's row helpers and gives what the kernel gives once it is compiled."""
    import os
    import subprocess
    env = dict(os.environ, TENSORLIB_CACHE_DIR=str(tmp_path / "tl"),
               NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    r = subprocess.run([sys.executable, "-c", _SOFTMAX_FIRST_CALLS, "empty"], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]


_SORT_NANS = np.array([0x7FC00000, 0xFFC00000, 0x7FC00123, 0xFF800001, 0x7F800001],
                      np.uint32).view(np.float32)


def _np_sort_desc(x):
    """Stable descending sort, bit for bit (nan first, ties in input order), and its indices."""
    n = x.shape[-1]
    idx = n - 1 - np.flip(np.argsort(np.flip(x, -1), axis=-1, kind="stable"), -1)
    return np.take_along_axis(x, idx, -1), idx


@pytest.mark.parametrize("dt", ["float32", "float64", "int64", "float16", "int8", "uint16",
                                "bool"])
def test_sort_cold_paths_match_numpy(dt, monkeypatch):
    """The cold path (kernels/cpu/sort_cold.py, run while the full kernels are not compiled)
    gives np.sort(kind="stable") / np.argsort bit for bit: nan payloads and -0.0 / 0.0 in input
    order, descending, one row (vrow's route), many short rows (the network's), other rows;
    and searchsorted (both sides, with a sorter) what NumPy gives."""
    from tensorlib.kernels.cpu import sorting
    monkeypatch.setattr(sorting, "_full_ready", lambda *a: False)
    for mod in list(sorting._mods.values()):  # routes earlier tests made warm: cold again
        monkeypatch.setattr(mod, "warm_paths", set())
    rng = np.random.default_rng(5)
    specials = np.concatenate([_SORT_NANS, np.array(
        [0.0, -0.0, np.inf, -np.inf, 1.5, -1.5, 1e-30, -1e-30], np.float32)])
    for shape in ((1,), (2000,), (40, 30), (3, 700), (9, 1)):
        if dt == "bool":
            xn = rng.random(shape) < 0.5
        elif dt.startswith("float"):
            with np.errstate(invalid="ignore"):  # nan payloads into float16
                pool = specials.astype(dt)
            xn = np.where(rng.random(shape) < 0.4, pool[rng.integers(0, pool.size, shape)],
                          rng.standard_normal(shape).astype(dt))
        else:
            info = np.iinfo(dt)
            xn = rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)
            xn[..., ::3] = info.min  # ties
        x = tl.asarray(xn)
        for desc in (False, True):
            want, widx = _np_sort_desc(xn) if desc else (np.sort(xn, -1, kind="stable"),
                                                        np.argsort(xn, -1, kind="stable"))
            got = tl.sort(x, axis=-1, descending=desc).numpy()
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
            np.testing.assert_array_equal(tl.argsort(x, axis=-1, descending=desc).numpy(), widx)
        if len(shape) == 1:
            srt = np.sort(xn, kind="stable")
            perm = np.argsort(xn, kind="stable")
            for side in ("left", "right"):
                np.testing.assert_array_equal(
                    tl.searchsorted(tl.asarray(srt), x, side=side).numpy(),
                    np.searchsorted(srt, xn, side=side))
                np.testing.assert_array_equal(
                    tl.searchsorted(x, x[::-1], side=side, sorter=tl.asarray(perm)).numpy(),
                    np.searchsorted(xn, xn[::-1], side=side, sorter=perm))


_SORT_FIRST_CALLS = """
import sys
import numpy as np
import tensorlib as tl
from tensorlib.kernels.cpu import sort_cold, sorting
from tensorlib.runtime.cpu import cores

cores.DEFER_PARALLEL_COMPILE = True
xn = np.random.default_rng(0).integers(-128, 128, 5000).astype(np.int8)
x = tl.asarray(xn)
mod = sorting._module(x.dtype)
full = (mod.vrow, mod.count_argsort, mod.search_serial)  # int8 argsort: a counting sort


def calls():
    srt = np.sort(xn, kind="stable")
    np.testing.assert_array_equal(tl.sort(x).numpy(), srt)
    np.testing.assert_array_equal(tl.argsort(x).numpy(), np.argsort(xn, kind="stable"))
    np.testing.assert_array_equal(tl.searchsorted(tl.asarray(srt), x[:100]).numpy(),
                                  np.searchsorted(srt, xn[:100]))


calls()
if sys.argv[1] == "empty":
    # a first call with empty caches compiles the cold path's small kernel only
    assert sort_cold.pair_pass.signatures and not any(k.signatures for k in full)
    cores.DEFER_PARALLEL_COMPILE = False  # now the full kernels (into the disk cache)
    calls()
    assert all(k.signatures for k in full)
else:
    # the full kernels are in the disk cache: loaded and run from the first call
    assert all(k.signatures for k in full) and not sort_cold.pair_pass.signatures
"""


def test_sort_first_call_compiles_only_the_cold_kernel(tmp_path):
    """With empty caches a first sort / argsort / searchsorted compiles only sort_cold.pair_pass
    (not vrow, count_argsort, search: up to 1-4 s each); once the full kernels are in the disk cache, a new process
    loads and runs them from its first call."""
    import os
    import subprocess
    env = dict(os.environ, TENSORLIB_CACHE_DIR=str(tmp_path / "tl"),
               NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    for state in ("empty", "cached"):
        r = subprocess.run([sys.executable, "-c", _SORT_FIRST_CALLS, state], env=env,
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-3000:]
