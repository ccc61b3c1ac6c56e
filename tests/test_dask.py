"""tensorlib tensors as dask.array chunks (tensorlib/dask_backend.py).

Every pipeline runs twice, on tensorlib chunks and on NumPy chunks of the same values: the
tensorlib one must keep ``type(x._meta) is tl.Tensor``, compute to tensorlib tensors and agree
with the NumPy one. Most run on the synchronous scheduler (fast); a few on the threaded one; the
tests marked ``cluster`` share one ``distributed.LocalCluster`` with two worker processes.
"""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
import dask  # noqa: E402

import tensorlib as tl  # noqa: E402
from tensorlib import dask_backend  # noqa: E402

SHAPE, CHUNKS = (10, 12), (4, 5)


@pytest.fixture(scope="module")
def data():
    a = np.random.default_rng(17).standard_normal(SHAPE).astype(np.float32)
    return a, da.from_array(tl.asarray(a), chunks=CHUNKS), da.from_array(a, chunks=CHUNKS)


def host(r):
    """NumPy values of a computed result (a tensor, or a NumPy scalar/array)."""
    return r.numpy() if isinstance(r, tl.Tensor) else np.asarray(r)


def check(y_tl, y_np, scheduler="sync", rtol=2e-5, atol=1e-5):
    assert type(y_tl._meta) is tl.Tensor, type(y_tl._meta)
    r = y_tl.compute(scheduler=scheduler)
    ref = y_np.compute(scheduler="sync")
    assert type(r) is tl.Tensor, type(r)
    assert tuple(r.shape) == ref.shape
    assert np.dtype(r.dtype) == ref.dtype, (r.dtype, ref.dtype)
    np.testing.assert_allclose(host(r), ref, rtol=rtol, atol=atol)
    return r


PIPELINES = {
    "elementwise": lambda x: (x + 1) * 2 - x / 3 + x ** 2,
    "ufuncs": lambda x: np.exp(np.sin(x)) + np.sqrt(np.abs(x)) - np.maximum(x, 0.5),
    "compare": lambda x: (x > 0.25) & (x < 1.5),
    "sum": lambda x: x.sum(),
    "sum_axis": lambda x: x.sum(axis=0),
    "mean": lambda x: x.mean(axis=1),
    "mean_all": lambda x: x.mean(),
    "std": lambda x: x.std(),
    "var_axis": lambda x: x.var(axis=0, ddof=1),
    "max": lambda x: x.max(axis=1),
    "min_all": lambda x: x.min(),
    "argmax": lambda x: x.argmax(axis=0),
    "argmax_all": lambda x: x.argmax(),
    "matmul": lambda x: x @ x.T,
    "tensordot": lambda x: da.tensordot(x, x, axes=((0,), (0,))),
    "slicing": lambda x: x[1:9:2, ::-3],
    "int_index_rows": lambda x: x[[0, 7, 3, 9, 3]],
    "int_index_cols": lambda x: x[:, np.array([11, 0, 5, 6])],
    "concatenate": lambda x: da.concatenate([x, x * 2], axis=1),
    "stack": lambda x: da.stack([x, x + 1], axis=0),
    "rechunk": lambda x: x.rechunk((3, 7)) + 0,
    "reshape": lambda x: x.rechunk((5, 6)).reshape(10, 2, 6),
    "reshape_flat": lambda x: x.reshape(120),
    "transpose": lambda x: x.transpose(),
    "cumsum": lambda x: x.cumsum(axis=1),
    "where": lambda x: da.where(x > 0, x, -2 * x),
    "astype": lambda x: (x * 10).astype(np.int32),
    "map_blocks": lambda x: x.map_blocks(lambda b: b * 2 + 1),
    "blockwise": lambda x: da.blockwise(lambda a, b: a * b + a, "ij", x, "ij", x.T.T, "ij",
                                        dtype=x.dtype),
}


@pytest.mark.parametrize("name", list(PIPELINES))
def test_pipeline_matches_numpy_chunks(data, name):
    _, x_tl, x_np = data
    f = PIPELINES[name]
    check(f(x_tl), f(x_np))


@pytest.mark.parametrize("name", ["elementwise", "std", "matmul", "int_index_rows", "cumsum"])
def test_threaded_scheduler(data, name):
    _, x_tl, x_np = data
    f = PIPELINES[name]
    check(f(x_tl), f(x_np), scheduler="threads")


def test_from_array_keeps_tensor_meta_and_chunks(data):
    a, x_tl, _ = data
    assert type(x_tl._meta) is tl.Tensor
    assert x_tl.chunks == ((4, 4, 2), (5, 5, 2))
    block = x_tl.blocks[1, 2].compute(scheduler="sync")
    assert type(block) is tl.Tensor
    np.testing.assert_array_equal(block.numpy(), a[4:8, 10:12])


def test_mixed_operands_stay_tensorlib(data):
    a, x_tl, _ = data
    w = np.linspace(-1, 1, SHAPE[1], dtype=np.float32)
    y = x_tl * tl.asarray(w) + w  # a dask array with a tensor and a NumPy array
    r = y.compute(scheduler="sync")
    assert type(y._meta) is tl.Tensor and type(r) is tl.Tensor
    np.testing.assert_allclose(r.numpy(), a * w + w, rtol=1e-6)


def test_to_backend_round_trip(data):
    a, x_tl, x_np = data
    back = x_tl.to_backend("numpy")
    assert type(back._meta) is np.ndarray
    np.testing.assert_array_equal(back.compute(scheduler="sync"), a)
    there = x_np.to_backend("tensorlib")
    assert type(there._meta) is tl.Tensor
    r = there.compute(scheduler="sync")
    assert type(r) is tl.Tensor
    np.testing.assert_array_equal(r.numpy(), a)


def test_tokenize_hashes_contents():
    from dask.base import tokenize
    a = tl.arange(6, dtype=tl.float32)
    assert tokenize(a) == tokenize(tl.arange(6, dtype=tl.float32))
    assert tokenize(a) != tokenize(tl.arange(1, 7, dtype=tl.float32))
    bits = tl.zeros((4,), dtype=tl.uint16)  # the same bytes as a bfloat16 tensor of zeros
    assert tokenize(bits) != tokenize(tl.zeros((4,), dtype=tl.bfloat16))
    assert tokenize(a.reshape((2, 3))) != tokenize(a.reshape((3, 2)))


def test_sizeof_counts_tensor_bytes():
    from dask.sizeof import sizeof
    assert sizeof(tl.zeros((1000, 3), dtype=tl.float64)) == 24000


# ---------------------------------------------------------------- the "tensorlib" backend
@pytest.fixture
def tensorlib_backend():
    with dask.config.set({"array.backend": "tensorlib"}):
        yield


CREATIONS = {
    "ones": lambda: da.ones((7, 5), chunks=3),
    "zeros_int32": lambda: da.zeros(10, chunks=4, dtype=np.int32),
    "full": lambda: da.full((4, 6), 2.5, chunks=(3, 4)),
    "full_int": lambda: da.full((5,), 7, chunks=2),
    "arange": lambda: da.arange(3, 40, 3, chunks=4),
    "arange_float": lambda: da.arange(0.5, 4.0, 0.25, chunks=5),
}


@pytest.mark.parametrize("name", list(CREATIONS))
def test_backend_creation(name):
    with dask.config.set({"array.backend": "tensorlib"}):
        y_tl = CREATIONS[name]()
    y_np = CREATIONS[name]()
    assert type(y_np._meta) is np.ndarray  # the config only applied inside the block
    assert y_tl.chunks == y_np.chunks
    check(y_tl, y_np, rtol=0, atol=0)


def test_backend_empty(tensorlib_backend):
    x = da.empty((6, 4), chunks=(4, 3), dtype="float32")
    assert type(x._meta) is tl.Tensor
    r = x.compute(scheduler="sync")
    assert type(r) is tl.Tensor and r.dtype == tl.float32 and tuple(r.shape) == (6, 4)


def test_backend_random_legacy(tensorlib_backend):
    x = da.random.random((300, 200), chunks=(100, 100))
    assert type(x._meta) is tl.Tensor
    r = x.compute(scheduler="sync").numpy()
    assert r.dtype == np.float64 and r.min() >= 0 and r.max() < 1
    assert abs(r.mean() - 0.5) < 0.01
    # every chunk draws its own numbers
    assert not np.array_equal(r[:100, :100], r[100:200, :100])
    n = da.random.normal(1.0, 2.0, size=(40000,), chunks=10000).compute(scheduler="sync")
    assert type(n) is tl.Tensor
    assert abs(float(n.numpy().mean()) - 1.0) < 0.05 and abs(float(n.numpy().std()) - 2) < 0.05
    k = da.random.randint(3, 9, size=1000, chunks=300).compute(scheduler="sync").numpy()
    assert k.dtype == np.int64 and set(np.unique(k)) == set(range(3, 9))


def test_backend_random_state_is_reproducible(tensorlib_backend):
    one = da.random.RandomState(5).uniform(-2, 3, size=(50, 40), chunks=(20, 20))
    two = da.random.RandomState(5).uniform(-2, 3, size=(50, 40), chunks=(20, 20))
    other = da.random.RandomState(6).uniform(-2, 3, size=(50, 40), chunks=(20, 20))
    a = one.compute(scheduler="sync").numpy()
    np.testing.assert_array_equal(a, two.compute(scheduler="threads").numpy())
    assert not np.array_equal(a, other.compute(scheduler="sync").numpy())
    assert a.min() >= -2 and a.max() < 3


def test_backend_default_rng(tensorlib_backend):
    rng = da.random.default_rng(42)
    x = rng.random((300, 200), chunks=(100, 100))
    assert type(x._meta) is tl.Tensor
    a = x.compute(scheduler="sync")
    assert type(a) is tl.Tensor
    a = a.numpy()
    assert a.min() >= 0 and a.max() < 1 and abs(a.mean() - 0.5) < 0.01
    again = da.random.default_rng(42).random((300, 200), chunks=(100, 100))
    np.testing.assert_array_equal(again.compute(scheduler="sync").numpy(), a)
    z = rng.standard_normal((20000,), chunks=5000).compute(scheduler="sync").numpy()
    assert abs(z.mean()) < 0.05 and abs(z.std() - 1) < 0.05


def test_backend_bad_input(tensorlib_backend):
    with pytest.raises(ValueError, match="fill_value"):
        da.full((4,), np.ones(2), chunks=2)
    with pytest.raises(TypeError, match="da.ones.*dtype.*tensorlib has no dtype"):
        da.ones((4,), chunks=2, dtype="U3")
    with pytest.raises(TypeError, match="order"):
        da.zeros((4,), chunks=2, order="F")
    with pytest.raises(TypeError, match="uniform.*'low'.*scalar"):
        dask_backend.RandomState(1).uniform(np.zeros(3), 1.0, size=3)
    with pytest.raises(AttributeError, match="no sampler 'beta'"):
        dask_backend.RandomState(1).beta(1.0, 2.0, size=3)
    with pytest.raises(TypeError, match="RandomState.*seed"):
        dask_backend.RandomState("not a seed")


# ---------------------------------------------------------------- registration, pickling
_IMPORT_ORDER = r"""
import sys
first = sys.argv[1]
if first == "dask":
    import dask.array as da
    import distributed.protocol
import tensorlib as tl
if first == "tensorlib":
    assert "dask" not in sys.modules, "import tensorlib imported dask"
    import dask.array as da
from dask.array.dispatch import concatenate_lookup
from tensorlib import dask_backend
assert concatenate_lookup.dispatch(tl.Tensor) is dask_backend._concatenate
x = da.from_array(tl.arange(10, dtype=tl.float32), chunks=3)
r = da.concatenate([x, x]).compute(scheduler="sync")
assert type(x._meta) is tl.Tensor and type(r) is tl.Tensor and r.shape == (20,)
from distributed.protocol import serialize
assert serialize(tl.ones((2,)))[0]["serializer"] == "dask"
print("ok")
"""


@pytest.mark.parametrize("first", ["tensorlib", "dask"])
def test_registered_whatever_the_import_order(first):
    env = dict(os.environ)
    src = os.path.join(os.path.dirname(__file__), "..", "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", _IMPORT_ORDER, first], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]


def test_distributed_frames_are_zero_copy():
    """distributed sends a CPU tensor as one frame that is the tensor's own memory, and the
    receiver's tensor is built over the received frame: no copy on either side."""
    pytest.importorskip("distributed")
    from distributed.protocol import deserialize, serialize
    t = tl.arange(1 << 14, dtype=tl.float32).reshape((128, 128))
    header, frames = serialize(t)
    assert header["serializer"] == "dask"
    (frame,) = frames
    assert np.frombuffer(frame, np.uint8).__array_interface__["data"][0] == t.data_ptr()
    received = bytearray(frame)  # what a receiving worker holds: a buffer of its own
    back = deserialize(header, [received])
    assert type(back) is tl.Tensor and back.dtype == tl.float32 and back.shape == (128, 128)
    assert back.data_ptr() == np.frombuffer(received, np.uint8).__array_interface__["data"][0]
    np.testing.assert_array_equal(back.numpy(), t.numpy())
    back += 1  # writable, as the sender's was; the sender's tensor is not touched
    assert float(back.numpy()[0, 0]) == 1 and float(t.numpy()[0, 0]) == 0


@pytest.mark.parametrize("dtype", ["bfloat16", "bool", "complex64", "int8"])
def test_distributed_serializer_dtypes_and_layouts(dtype):
    pytest.importorskip("distributed")
    from distributed.protocol import deserialize, serialize
    base = tl.asarray(np.arange(24).reshape(4, 6) % 3 == 1) if dtype == "bool" else \
        tl.arange(24, dtype=tl.float32).reshape((4, 6)).astype(getattr(tl, dtype))
    for t in (base, base.T[::-1], base[1:3, ::2]):  # contiguous, transposed and strided views
        header, frames = serialize(t)
        back = deserialize(header, [bytearray(f) for f in frames])
        assert back.dtype == t.dtype and back.shape == t.shape
        np.testing.assert_array_equal(back.astype(tl.float32).numpy() if dtype == "bfloat16"
                                      else back.numpy(),
                                      t.astype(tl.float32).numpy() if dtype == "bfloat16"
                                      else t.numpy())
    ro = tl.from_numpy(np.frombuffer(bytes(16), dtype=np.float32))
    header, frames = serialize(ro)
    assert deserialize(header, [bytearray(f) for f in frames]).is_readonly


def test_distributed_deserialize_bad_input():
    pytest.importorskip("distributed")
    from distributed.protocol import serialize
    header, frames = serialize(tl.zeros((3, 4)))
    loads = dask_backend._dask_deserialize_tensor
    sub = header["sub-header"]
    with pytest.raises(ValueError, match="field 'dtype'"):
        loads({**sub, "dtype": "float128"}, frames)
    with pytest.raises(ValueError, match="field 'shape'"):
        loads({**sub, "shape": [3, -4]}, frames)
    with pytest.raises(ValueError, match="field 'data'.*truncated"):
        loads(sub, [bytes(47)])
    with pytest.raises(ValueError, match="one data frame"):
        loads(sub, [])


# ---------------------------------------------------------------- on a LocalCluster
@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        yield c


def _make_chunk(seed):
    import os as _os
    rng = np.random.default_rng(seed)
    return tl.asarray(rng.standard_normal((256, 64)).astype(np.float32)), _os.getpid()


def _consume_chunk(made):
    import os as _os
    t, made_in = made
    return type(t).__name__, t.dtype.name, float(tl.sum(t * t)), made_in, _os.getpid()


@pytest.mark.cluster
def test_cluster_chunks_move_between_worker_processes(client):
    first, second = sorted(client.scheduler_info()["workers"])
    made = client.submit(_make_chunk, 3, workers=[first], pure=False)
    got = client.submit(_consume_chunk, made, workers=[second], pure=False).result(timeout=120)
    kind, dtype, total, made_in, used_in = got
    assert kind == "Tensor" and dtype == "float32"
    assert made_in != used_in  # two processes: the tensor was pickled from one to the other
    ref = np.random.default_rng(3).standard_normal((256, 64)).astype(np.float32)
    np.testing.assert_allclose(total, float((ref * ref).sum()), rtol=1e-5)


@pytest.mark.cluster
def test_cluster_pipeline_matches_numpy(client):
    a = np.random.default_rng(4).standard_normal((600, 300)).astype(np.float32)
    x_tl = da.from_array(tl.asarray(a), chunks=(150, 100))
    x_np = da.from_array(a, chunks=(150, 100))
    for f in (lambda x: (np.exp(-x * x) + 2 * x).sum(axis=0),
              lambda x: da.tensordot(x, x, axes=((0,), (0,))),
              lambda x: x[::7].T.rechunk((50, 40)).std(axis=1)):
        y_tl, y_np = f(x_tl), f(x_np)
        assert type(y_tl._meta) is tl.Tensor
        r = client.compute(y_tl).result(timeout=120)
        assert type(r) is tl.Tensor
        np.testing.assert_allclose(r.numpy(), y_np.compute(scheduler="sync"), rtol=1e-4,
                                   atol=1e-4)


@pytest.mark.cluster
def test_cluster_tensorlib_backend_random(client):
    with dask.config.set({"array.backend": "tensorlib"}):
        x = da.random.random((400, 300), chunks=(100, 100))
        ones = da.ones((400, 300), chunks=(100, 100), dtype=np.float32)
    y = (x * ones).mean(axis=0)
    r = client.compute(y).result(timeout=120)
    assert type(r) is tl.Tensor and tuple(r.shape) == (300,)
    np.testing.assert_allclose(r.numpy(), x.compute(scheduler="sync").numpy().mean(axis=0),
                               rtol=1e-6)


def test_index_conversions_dask_uses_bad_input():
    """argmax over all axes unravels and re-ravels chunk indices through NumPy's functions."""
    with pytest.raises(ValueError, match="unravel_index.*out of bounds"):
        np.unravel_index(tl.asarray(12), (3, 4))
    with pytest.raises(ValueError, match="ravel_multi_index.*out of bounds"):
        np.ravel_multi_index([tl.asarray(3), tl.asarray(0)], (3, 4))
    with pytest.raises(TypeError, match="unravel_index.*'indices' must hold integers"):
        np.unravel_index(tl.asarray(1.5), (3, 4))
    with pytest.raises(TypeError, match="ravel_multi_index.*'mode'"):
        np.ravel_multi_index([tl.asarray(1), tl.asarray(0)], (3, 4), mode="clip")


def test_rng_out_keyword():
    """dask's Generator passes NumPy's ``out=`` to random / standard_normal."""
    rng = tl.random.default_rng(3)
    out = tl.empty((4, 5), dtype=tl.float32)
    assert rng.random(out=out) is out
    assert 0 <= float(out.numpy().min()) and float(out.numpy().max()) < 1
    assert rng.standard_normal(size=(4, 5), out=out) is out
    with pytest.raises(ValueError, match="random.*'size'.*'out'"):
        rng.random(size=3, out=out)
    with pytest.raises(TypeError, match="standard_normal.*'out'"):
        rng.standard_normal(out=np.empty(3))
