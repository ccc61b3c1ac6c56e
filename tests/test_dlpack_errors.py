"""DLPack export when things go wrong (issue 12): a consumer that refuses a capsule (NumPy and
bfloat16) must see its own exception, not a SystemError, nothing may be reported as
"Exception ignored", and the export record must be released; deleters work from any thread
and with no lock a finalizer could deadlock on; read-only tensors export with the DLPack
read-only flag (versioned) or not at all (legacy) unless copied."""
from __future__ import annotations

import ctypes
import gc
import os
import subprocess
import sys
import threading
import weakref

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import dlpack


@pytest.fixture
def unraisable(monkeypatch):
    """Everything reported through sys.unraisablehook (ctypes callback errors among them)."""
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", seen.append)
    yield seen
    gc.collect()
    assert not seen, [f"{u.exc_type.__name__}: {u.exc_value} in {u.object!r}" for u in seen]


def bf16(values=(1.5, -2.0)):
    return tl.asarray(np.array(values, np.float32)).astype(tl.bfloat16)


def numpy_error(fn):
    """The exception NumPy raises (whatever it is), checked not to be a masked SystemError."""
    with pytest.raises(Exception) as e:
        fn()
    err = e.value
    assert not isinstance(err, SystemError), repr(err)
    assert not isinstance(err.__cause__, SystemError) and not isinstance(err.__context__,
                                                                          SystemError)
    return err


# ---------------------------------------------------------------- refused exports
@pytest.mark.parametrize("kwargs", [{}, {"copy": True}, {"copy": False}, {"device": "cpu"}],
                         ids=["plain", "copy", "no-copy", "device"])
def test_numpy_refusing_bfloat16_raises_its_own_error(kwargs, unraisable):
    t = bf16()
    before = len(dlpack._live)
    err = numpy_error(lambda: np.from_dlpack(t, **kwargs))
    assert "dtype" in str(err).lower()  # NumPy's "Unsupported dtype in DLTensor."
    gc.collect()
    assert len(dlpack._live) == before  # the unconsumed capsule released its record


def test_numpy_refusing_a_legacy_capsule(unraisable):
    # NumPy's fallback for producers without max_version= gets the legacy capsule
    class Legacy:
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, stream=None):
            return self.t.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    before = len(dlpack._live)
    numpy_error(lambda: np.from_dlpack(Legacy(bf16())))
    gc.collect()
    assert len(dlpack._live) == before


def test_refused_exports_do_not_keep_the_tensor(unraisable):
    t = bf16([0.5] * 64)
    ref = weakref.ref(t)
    for _ in range(20):
        numpy_error(lambda: np.from_dlpack(t))
    del t
    gc.collect()
    assert ref() is None


def test_no_exception_ignored_on_stderr():
    """The original report, end to end in a fresh interpreter: stderr stays clean."""
    code = (
        "import gc, numpy as np, tensorlib as tl\n"
        "from tensorlib import dlpack\n"
        "t = tl.asarray(np.array([1.5, -2.0], np.float32)).astype(tl.bfloat16)\n"
        "for kw in ({}, {'copy': True}):\n"
        "    try:\n"
        "        np.from_dlpack(t, **kw)\n"
        "    except SystemError as e:\n"
        "        raise SystemExit(f'SystemError: {e}')\n"
        "    except Exception as e:\n"
        "        print(type(e).__name__, e)\n"
        "gc.collect()\n"
        "print('live', len(dlpack._live))\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TENSORLIB_CUDA")}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=600, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Exception ignored" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert r.stdout.splitlines()[-1] == "live 0", r.stdout


def test_unconsumed_capsules_release_their_record(unraisable):
    t = tl.arange(5.0)
    before = len(dlpack._live)
    for mv in (None, (1, 0)):
        for copy in (None, True, False):
            cap = t.__dlpack__(max_version=mv, copy=copy)
            assert len(dlpack._live) == before + 1
            del cap
            gc.collect()
            assert len(dlpack._live) == before


@pytest.mark.usefixtures("cuda_interpret")
def test_export_errors_leave_no_record(unraisable):
    t = tl.ones(3, device="cuda")
    before = len(dlpack._live)
    err = numpy_error(lambda: np.from_dlpack(t))  # host memory of the interpret backend
    assert isinstance(err, BufferError) and "__dlpack__" in str(err)
    with pytest.raises(BufferError, match="copy=False"):
        t.__dlpack__(dl_device=(dlpack.DLDeviceType.kDLCPU, 0), copy=False)
    gc.collect()
    assert len(dlpack._live) == before
    # device=cpu asks the producer for a host copy, which NumPy then takes
    got = np.from_dlpack(t, device="cpu")
    np.testing.assert_array_equal(got, np.ones(3, np.float32))


# ---------------------------------------------------------------- deleters
def _take(capsule, versioned):
    """Consume a capsule as a C consumer would: (struct pointer, its deleter address)."""
    name, used = (dlpack._NAME_V, dlpack._USED_V) if versioned else (dlpack._NAME,
                                                                      dlpack._USED)
    ptr = dlpack._capsule_get_pointer(capsule, name)
    dlpack._capsule_set_name(capsule, used)
    struct = dlpack.DLManagedTensorVersioned if versioned else dlpack.DLManagedTensor
    return ptr, struct.from_address(ptr).deleter


@pytest.mark.parametrize("versioned", [False, True])
def test_deleter_may_run_on_another_thread_without_the_gil(versioned, unraisable):
    t = tl.arange(8.0)
    ref = weakref.ref(t)
    before = len(dlpack._live)
    cap = t.__dlpack__(max_version=(1, 0) if versioned else None)
    ptr, deleter = _take(cap, versioned)
    del t, cap
    gc.collect()
    assert ref() is not None and len(dlpack._live) == before + 1  # the consumer holds it
    # CFUNCTYPE releases the GIL around the call: the deleter must take it itself
    call = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(deleter)
    th = threading.Thread(target=call, args=(ptr,))
    th.start()
    th.join()
    gc.collect()
    assert ref() is None and len(dlpack._live) == before


def test_deleter_inside_a_finalizer(unraisable):
    """A consumer's finalizer calling the deleter while this thread is exporting (the GC can run
    anywhere): there is no lock to deadlock on."""
    assert not [n for n, v in vars(dlpack).items()
                if type(v).__name__ in ("lock", "RLock", "Lock")]
    t = tl.arange(4.0)
    ptr, deleter = _take(t.__dlpack__(max_version=(1, 0)), True)
    call = ctypes.PYFUNCTYPE(None, ctypes.c_void_p)(deleter)

    class Consumer:
        def __del__(self):
            call(ptr)

    c = Consumer()
    c.self = c  # a cycle: only the GC frees it
    del c
    before = len(dlpack._live)
    gc.disable()
    try:
        caps = [t.__dlpack__() for _ in range(3)]
        gc.collect()  # the finalizer runs between exports
        caps += [t.__dlpack__() for _ in range(3)]
    finally:
        gc.enable()
    assert len(dlpack._live) == before - 1 + 6
    del caps
    gc.collect()
    assert len(dlpack._live) == before - 1


def test_consumer_round_trip_through_tensorlib_deleter(unraisable):
    t = tl.arange(6, dtype=tl.int32)
    ref = weakref.ref(t)

    class Producer:
        def __init__(self, cap):
            self.cap = cap

        def __dlpack__(self, **kw):
            return self.cap

        def __dlpack_device__(self):
            return (1, 0)

    got = dlpack.from_dlpack(Producer(t.__dlpack__(max_version=(1, 0))))
    assert got.data_ptr() == t.data_ptr()
    del t
    gc.collect()
    assert ref() is not None  # kept by the import
    del got
    gc.collect()
    assert ref() is None


# ---------------------------------------------------------------- read-only tensors
@pytest.fixture
def readonly():
    a = np.arange(6.0).reshape(2, 3)
    a.flags.writeable = False
    t = tl.from_numpy(a)
    assert t.is_readonly
    return t, a


def _flags(capsule):
    ptr = dlpack._capsule_get_pointer(capsule, dlpack._NAME_V)
    return int(dlpack.DLManagedTensorVersioned.from_address(ptr).flags)


def test_read_only_versioned_export_sets_the_flag(readonly, unraisable):
    t, a = readonly
    cap = t.__dlpack__(max_version=(1, 0))
    assert _flags(cap) == dlpack.FLAG_READ_ONLY
    del cap
    cap = t.__dlpack__(max_version=(1, 0), copy=False)
    assert _flags(cap) == dlpack.FLAG_READ_ONLY
    del cap
    cap = t.__dlpack__(max_version=(1, 0), copy=True)  # a writable copy
    assert _flags(cap) == dlpack.FLAG_IS_COPIED
    del cap
    # NumPy (the oracle): what it makes of a read-only array of its own
    b = np.from_dlpack(t)
    assert b.flags.writeable == np.from_dlpack(a).flags.writeable is False
    assert b.ctypes.data == a.ctypes.data  # still zero-copy
    with pytest.raises(ValueError, match="read-only"):
        b[0, 0] = 1.0
    np.testing.assert_array_equal(b, a)
    c = np.from_dlpack(t, copy=True)
    assert c.flags.writeable and c.ctypes.data != a.ctypes.data
    np.testing.assert_array_equal(c, a)


def test_read_only_legacy_export_refuses_unless_copied(readonly, unraisable):
    t, a = readonly
    before = len(dlpack._live)
    for copy in (None, False):
        with pytest.raises(BufferError, match=r"__dlpack__\(\).*read-only.*legacy"):
            t.__dlpack__(copy=copy)
        with pytest.raises(BufferError, match="read-only"):
            t.__dlpack__(max_version=(0, 8), copy=copy)
    gc.collect()
    assert len(dlpack._live) == before
    cap = t.__dlpack__(copy=True)
    got = dlpack.from_dlpack(type("P", (), {"__dlpack__": lambda self, **kw: cap,
                                            "__dlpack_device__": lambda self: (1, 0)})())
    assert got.data_ptr() != a.ctypes.data and got.tolist() == a.tolist()
    got[0, 0] = 42.0  # the copy is writable, the original untouched
    assert a[0, 0] == 0.0


def test_read_only_views_and_writable_tensors(readonly, unraisable):
    t, a = readonly
    v = t[:, ::-1]
    assert not np.from_dlpack(v).flags.writeable
    w = tl.arange(3.0)
    cap = w.__dlpack__(max_version=(1, 0))
    assert _flags(cap) == 0
    del cap
    assert np.from_dlpack(w).flags.writeable
