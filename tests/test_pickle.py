"""Pickling tensors (tensorlib.serialization): every dtype and layout round-trips bit for bit
(NumPy's own pickling is the oracle), protocol 5 hands out zero-copy out-of-band buffers,
CUDA tensors come back on their device, corrupt pickles raise typed errors naming the field,
copy.copy / copy.deepcopy give independent tensors, dtypes and devices unpickle to themselves."""
from __future__ import annotations

import copy
import io
import pickle

import numpy as np
import pytest
from hypothesis import given, strategies as st

import tensorlib as tl
from tensorlib import serialization
from helpers import ALL_DTYPES, arrays, to_numpy

PROTOCOLS = [2, 4, "5-in-band", "5-out-of-band"]


def round_trip(t, protocol):
    if protocol == "5-out-of-band":
        bufs = []
        data = pickle.dumps(t, protocol=5, buffer_callback=bufs.append)
        return pickle.loads(data, buffers=bufs)
    return pickle.loads(pickle.dumps(t, protocol=5 if protocol == "5-in-band" else protocol))


def bits(a: np.ndarray) -> np.ndarray:
    """Raw bytes of the values in C order (NaN payloads and -0.0 included)."""
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8)


def source(dtype, arr):
    """(tensor in arr's layout, the NumPy values it holds)."""
    if dtype == "bfloat16":
        t = tl.from_numpy(arr).astype(tl.bfloat16)
        return t, to_numpy(t)
    return tl.from_numpy(arr), arr


def assert_same(got, t, values):
    assert got.dtype is t.dtype and got.shape == t.shape and got.device == t.device
    assert got.is_contiguous() and got.storage_offset() == 0
    back = to_numpy(got)
    oracle = pickle.loads(pickle.dumps(values))  # NumPy's own round trip
    assert back.dtype == oracle.dtype and back.shape == oracle.shape
    np.testing.assert_array_equal(bits(back), bits(oracle))


@pytest.fixture(params=["cpu", "cuda"])
def device(request):
    if request.param == "cuda":
        request.getfixturevalue("cuda_interpret")  # conftest.py: host-memory CUDA, 2 devices
    return request.param


# ---------------------------------------------------------------- round trips
@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@given(data=st.data())
def test_every_dtype_and_layout_round_trips(dtype, protocol, data):
    np_dtype = "float32" if dtype == "bfloat16" else dtype
    arr = data.draw(arrays(np_dtype))  # contiguous, transposed, negative / zero strides, 0-d, empty
    t, values = source(dtype, arr)
    assert_same(round_trip(t, protocol), t, values)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_views_and_special_shapes(protocol):
    base = tl.asarray(np.arange(60, dtype=np.float64).reshape(3, 4, 5))
    views = {
        "slice": base[1:, ::2, 1:4], "neg-stride": base[::-1, :, ::-2], "transpose": base.T,
        "0-d": base[1, 2, 3], "empty": base[:, 0:0], "expand": base[:, :1, :].expand(3, 6, 5),
        "broadcast": tl.broadcast_to(tl.asarray(np.float64(7.0)), (4, 3)),
        "offset-row": base[2],
    }
    for name, v in views.items():
        got = round_trip(v, protocol)
        assert_same(got, v, to_numpy(v))


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_special_values(protocol):
    f = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-45, 3.4e38], np.float32)
    c = np.array([complex(np.nan, -0.0), complex(-np.inf, 1e-300), 1 + 2j], np.complex128)
    b = np.array([True, False, True])
    u = np.array([0, 2**64 - 1, 2**63], np.uint64)
    for arr in (f, c, b, u):
        t = tl.from_numpy(arr)
        assert_same(round_trip(t, protocol), t, arr)
    h = tl.from_numpy(f).astype(tl.bfloat16)
    assert_same(round_trip(h, protocol), h, to_numpy(h))


@pytest.mark.usefixtures("cuda_interpret")
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_cuda_tensors_come_back_on_their_device(protocol):
    for index in (0, 1):
        dev = f"cuda:{index}"
        for dtype in ("float32", "bfloat16", "complex64", "bool", "int64"):
            t = tl.asarray(np.arange(-3, 9).reshape(3, 4) % 5, device=dev).astype(dtype)
            for v in (t, t.T, t[::-1, 1:]):
                got = round_trip(v, protocol)
                assert got.device == tl.Device(dev)
                assert got.dtype is v.dtype and got.shape == v.shape
                np.testing.assert_array_equal(to_numpy(got), to_numpy(v))


def test_loaded_tensors_are_independent(device):
    t = tl.asarray(np.arange(6.0, dtype=np.float32), device=device)
    for protocol in PROTOCOLS:
        got = round_trip(t, protocol)
        assert got.data_ptr() != t.data_ptr()
        got[0] = 100.0
        assert t.tolist()[0] == 0.0
    for clone in (copy.copy(t), copy.deepcopy(t)):
        assert clone.device == t.device and clone.tolist() == t.tolist()
        clone[1] = -1.0
        assert t.tolist()[1] == 1.0


def test_identity_is_kept_within_one_pickle():
    t = tl.arange(4)
    a, b = pickle.loads(pickle.dumps([t, t], protocol=5))
    assert a is b
    x, y = copy.deepcopy((t, t))
    assert x is y and x is not t


# ---------------------------------------------------------------- protocol 5
def test_protocol5_buffers_are_zero_copy_views():
    t = tl.asarray(np.arange(1 << 18, dtype=np.float32))  # 1 MiB
    bufs = []
    data = pickle.dumps(t, protocol=5, buffer_callback=bufs.append)
    assert len(data) < 300 and len(bufs) == 1  # the elements are not in the pickle
    view = np.asarray(bufs[0])
    assert view.ctypes.data == t.data_ptr() and view.nbytes == t.nbytes
    assert bufs[0].raw().readonly  # pickling never writes the tensor
    t[5] = -1.0
    assert np.frombuffer(bufs[0], np.float32)[5] == -1.0  # a view, not a snapshot
    assert pickle.loads(data, buffers=bufs).tolist()[5] == -1.0
    # a view at an offset: the buffer starts at its first element
    v = t[1000:2000]
    bufs = []
    pickle.dumps(v, protocol=5, buffer_callback=bufs.append)
    assert np.asarray(bufs[0]).ctypes.data == v.data_ptr()


def test_buffers_keep_the_memory_alive():
    t = tl.asarray(np.arange(1000, dtype=np.int64))
    bufs = []
    data = pickle.dumps(t, protocol=5, buffer_callback=bufs.append)
    del t
    import gc
    gc.collect()
    tl.zeros(1000, dtype=tl.int64)  # would reuse the block were it freed
    assert pickle.loads(data, buffers=bufs).tolist() == list(range(1000))


def test_in_band_protocols_carry_the_data():
    t = tl.asarray(np.arange(1000, dtype=np.float64))
    for protocol in (0, 1, 2, 3, 4, 5):
        data = pickle.dumps(t, protocol=protocol)
        assert len(data) >= t.nbytes
        assert pickle.loads(data).tolist() == t.tolist()


def test_out_of_band_buffers_may_come_back_as_any_buffer():
    # e.g. read from a file or a socket: bytes, bytearray, memoryview, an ndarray
    t = tl.asarray(np.arange(12, dtype=np.complex64).reshape(3, 4))
    bufs = []
    data = pickle.dumps(t, protocol=5, buffer_callback=bufs.append)
    raw = bytes(bufs[0].raw())
    for b in (raw, bytearray(raw), memoryview(raw), np.frombuffer(raw, np.complex64)):
        got = pickle.loads(data, buffers=[b])
        np.testing.assert_array_equal(to_numpy(got), to_numpy(t))


# ---------------------------------------------------------------- format
def test_pickle_names_only_the_reconstructor():
    class Recorder(pickle.Unpickler):
        def find_class(self, module, name):
            found.add(f"{module}.{name}")
            return super().find_class(module, name)

    t = tl.asarray(np.ones((2, 3), np.float32))
    for protocol in range(0, pickle.HIGHEST_PROTOCOL + 1):
        found = set()
        Recorder(io.BytesIO(pickle.dumps(t, protocol=protocol))).load()
        # (protocols < 3 spell bytes as _codecs.encode(str, 'latin1'))
        assert found - {"_codecs.encode", "__builtin__.bytes", "builtins.bytes"} == {
            "tensorlib.serialization._rebuild_tensor"}, (protocol, found)


def test_reduction_fields():
    t = tl.asarray(np.arange(6, dtype=np.int16).reshape(2, 3)).T
    fn, args = t.__reduce_ex__(4)
    assert fn is serialization._rebuild_tensor
    version, dev, dtype_name, shape, data, readonly = args
    assert (version, dev, dtype_name, shape, readonly) == (serialization.FORMAT_VERSION, "cpu",
                                                          "int16", (3, 2), False)
    assert data == np.arange(6, dtype="<i2").reshape(2, 3).T.tobytes()  # C order, compact


# A protocol-2 pickle of tl.asarray([[1.5, -2.0, 3.25]], dtype=float32) written by format
# version 1: later versions of tensorlib must keep loading it.
GOLDEN_V1 = (b"\x80\x02ctensorlib.serialization\n_rebuild_tensor\nq\x00(K\x01X\x03\x00\x00\x00"
             b"cpuq\x01X\x07\x00\x00\x00float32q\x02K\x01K\x03\x86q\x03c_codecs\nencode\nq\x04"
             b"X\x0e\x00\x00\x00\x00\x00\xc3\x80?\x00\x00\x00\xc3\x80\x00\x00P@q\x05X\x06\x00"
             b"\x00\x00latin1q\x06\x86q\x07Rq\x08\x89tq\tRq\n.")


def test_golden_pickle_of_format_version_1_loads():
    t = pickle.loads(GOLDEN_V1)
    assert t.dtype is tl.float32 and t.shape == (1, 3) and t.tolist() == [[1.5, -2.0, 3.25]]


# ---------------------------------------------------------------- corrupt pickles
GOOD = (1, "cpu", "float32", (2, 3), bytes(24), False)


def rebuild_with(**changes):
    names = ("version", "device", "dtype_name", "shape", "data", "readonly")
    args = dict(zip(names, GOOD))
    args.update(changes)
    return serialization._rebuild_tensor(*(args[n] for n in names))


@pytest.mark.parametrize("field, value, kind, match", [
    ("version", 2, ValueError, "version 2 is not supported"),
    ("version", 0, ValueError, "version"),
    ("version", "1", TypeError, "version"),
    ("device", "tpu:0", ValueError, "device"),
    ("device", "cpu:3", ValueError, "device"),
    ("device", None, TypeError, "device"),
    ("dtype_name", "float99", ValueError, "unknown dtype 'float99'"),
    ("dtype_name", "float32 ", ValueError, "unknown dtype"),
    ("dtype_name", np.float32, TypeError, "dtype_name"),
    ("shape", (2, -3), ValueError, r"\[0, 2\*\*62\]"),
    ("shape", (-2, -3), ValueError, "shape"),
    ("shape", (2, 3.0), TypeError, "shape"),
    ("shape", (2, True, 3), TypeError, "shape"),
    ("shape", "23", TypeError, "shape"),
    ("shape", (1 << 63, 0), ValueError, "shape"),
    ("data", bytes(23), ValueError, "23 bytes, the shape and dtype need 24"),
    ("data", bytes(25), ValueError, "25 bytes"),
    ("data", b"", ValueError, "0 bytes"),
    ("data", [0] * 24, TypeError, "bytes-like"),
    ("data", None, TypeError, "data"),
    ("data", np.zeros((4, 12), np.uint8)[:, ::2], ValueError, "contiguous"),
    ("readonly", 1, TypeError, "readonly"),
])
def test_corrupt_fields_raise_typed_errors(field, value, kind, match):
    with pytest.raises(kind, match=match) as e:
        rebuild_with(**{field: value})
    assert "_rebuild_tensor()" in str(e.value) and f"'{field}'" in str(e.value)


def test_shape_and_buffer_mismatch_never_reads_outside_the_buffer():
    # a huge claimed shape with a tiny buffer is refused before anything is allocated
    with pytest.raises(ValueError, match="data"):
        rebuild_with(shape=(1 << 40, 1 << 20), data=bytes(8))
    # an empty shape with a huge dimension is consistent with an empty buffer
    assert rebuild_with(shape=(0, 1 << 40), data=b"").shape == (0, 1 << 40)


@given(shape=st.lists(st.integers(0, 4), max_size=3), extra=st.integers(-8, 8),
       dtype=st.sampled_from(ALL_DTYPES))
def test_buffer_size_must_match_exactly(shape, extra, dtype):
    need = int(np.prod(shape)) * getattr(tl, dtype if dtype != "bool" else "bool_").itemsize
    size = need + extra
    if size < 0:
        return
    data = bytes(range(256)) * (size // 256 + 1)
    args = dict(dtype_name=dtype, shape=tuple(shape), data=data[:size])
    if extra:
        with pytest.raises(ValueError, match="'data'"):
            rebuild_with(**args)
    else:
        t = rebuild_with(**args)
        assert t.shape == tuple(shape) and t.dtype.name == dtype


def test_corrupt_pickle_streams():
    t = tl.asarray(np.arange(6, dtype=np.float32))
    data = pickle.dumps(t, protocol=2)
    with pytest.raises(ValueError, match="unknown dtype 'float99'"):
        pickle.loads(data.replace(b"float32", b"float99"))
    with pytest.raises(ValueError, match="version 7"):
        pickle.loads(data.replace(b"(K\x01X", b"(K\x07X"))
    for cut in (10, len(data) // 2, len(data) - 1):
        with pytest.raises((pickle.UnpicklingError, EOFError, ValueError)):
            pickle.loads(data[:cut])
    bufs = []
    data5 = pickle.dumps(t, protocol=5, buffer_callback=bufs.append)
    with pytest.raises(ValueError, match="20 bytes, the shape and dtype need 24"):
        pickle.loads(data5, buffers=[bytes(bufs[0].raw())[:20]])
    with pytest.raises(pickle.UnpicklingError):
        pickle.loads(data5)  # out-of-band buffers not given


# ---------------------------------------------------------------- devices at load time
@pytest.mark.usefixtures("cuda_interpret")
def test_missing_cuda_device_is_named(monkeypatch):
    t = tl.asarray(np.arange(4.0, dtype=np.float32), device="cuda:1")
    data = pickle.dumps(t, protocol=5)
    forged = pickle.dumps(t, protocol=2).replace(b"cuda:1", b"cuda:7")
    with pytest.raises(RuntimeError, match=r"'cuda:7'.*2 CUDA device"):
        pickle.loads(forged)
    from tensorlib.runtime.cuda import context
    monkeypatch.setattr(context, "is_available", lambda: False)
    monkeypatch.setattr(context, "device_count", lambda: 0)
    with pytest.raises(RuntimeError, match=r"pickled on 'cuda:1', but no CUDA device") as e:
        pickle.loads(data)
    assert "map_location" in str(e.value)
    with serialization.map_location("cpu"):
        got = pickle.loads(data)
    assert got.device == tl.Device("cpu") and got.tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(RuntimeError):
        pickle.loads(data)  # the override ended with the block


@pytest.mark.usefixtures("cuda_interpret")
def test_map_location_moves_cpu_pickles_to_cuda():
    t = tl.asarray(np.arange(3, dtype=np.int32))
    with serialization.map_location("cuda:1"):
        got = pickle.loads(pickle.dumps(t))
    assert got.device == tl.Device("cuda:1") and got.tolist() == [0, 1, 2]


# ---------------------------------------------------------------- read-only
def test_read_only_survives_a_round_trip():
    ro = np.arange(6.0).reshape(2, 3)
    ro.flags.writeable = False
    t = tl.from_numpy(ro)
    assert t.is_readonly
    for protocol in PROTOCOLS:
        got = round_trip(t, protocol)
        assert got._storage.readonly and got.tolist() == t.tolist()
        assert got.data_ptr() != t.data_ptr()
    assert not round_trip(tl.asarray(np.arange(3.0)), 5)._storage.readonly
    assert copy.deepcopy(t)._storage.readonly


def test_requires_grad_survives_a_round_trip():
    leaf = tl.asarray(np.arange(3.0)).requires_grad_()
    non_leaf = leaf * 2.0
    for t in (leaf, non_leaf):
        for protocol in PROTOCOLS:
            got = round_trip(t, protocol)
            assert got.requires_grad and got.is_leaf and got.grad is None
            assert got.tolist() == t.tolist()
        got = copy.deepcopy(t)
        assert got.requires_grad and got.is_leaf
    # a tensor that needs no grad pickles exactly as format version 1 always did
    _, args = tl.asarray(np.arange(3.0)).__reduce_ex__(5)
    assert len(args) == 6
    with pytest.raises(ValueError, match="requires_grad"):
        serialization._rebuild_tensor(1, "cpu", "int64", (1,), bytes(8), False, True)
    with pytest.raises(TypeError, match="requires_grad"):
        serialization._rebuild_tensor(1, "cpu", "float64", (1,), bytes(8), False, 1)


# ---------------------------------------------------------------- dtypes and devices
@pytest.mark.parametrize("protocol", range(0, pickle.HIGHEST_PROTOCOL + 1))
def test_dtypes_and_devices_unpickle_to_themselves(protocol):
    for name in ALL_DTYPES:
        d = getattr(tl, name if name != "bool" else "bool_")
        assert pickle.loads(pickle.dumps(d, protocol=protocol)) is d
        assert copy.copy(d) is d and copy.deepcopy(d) is d
    for spec in ("cpu", "cuda", "cuda:0", "cuda:3"):
        dev = tl.Device(spec)
        back = pickle.loads(pickle.dumps(dev, protocol=protocol))
        assert back == dev and str(back) == spec
    fi = pickle.loads(pickle.dumps(tl.finfo(tl.bfloat16), protocol=protocol))
    assert fi.dtype is tl.bfloat16 and fi.eps == tl.finfo(tl.bfloat16).eps


@pytest.mark.parametrize("protocol", [2, 5])
def test_generators_pickle_and_continue_the_same_stream(protocol):
    g = tl.Generator().manual_seed(1234)
    tl.rand((10,), generator=g)  # advance the offset
    g2 = pickle.loads(pickle.dumps(g, protocol=protocol))
    assert g2.device == g.device and g2.initial_seed() == 1234 and g2.offset == g.offset
    np.testing.assert_array_equal(tl.rand((50,), generator=g2).numpy(),
                                  tl.rand((50,), generator=g).numpy())
    g2.manual_seed(5)  # independent state, own lock
    assert g.initial_seed() == 1234


def test_corrupt_generator_pickle_raises_typed_errors():
    from tensorlib.random import _rebuild_generator
    with pytest.raises(ValueError, match="_rebuild_generator"):
        _rebuild_generator("cpu", 1 << 70, 0)
    with pytest.raises(ValueError, match="offset"):
        _rebuild_generator("cpu", 1, -1)
