"""Reduction and scan plans (the small-call fast path of ops/reduction.py): ``capture`` records
what one full-path call launched (kernels/cpu/reduction.py reports each launch through
``_captured`` while ``_cap.on``), and ``_make_plan`` repeats it for later calls of the same key.
"""
from __future__ import annotations

import threading

import numpy as np

from ...runtime.cpu import streams as _streams
from ...storage import Storage
from ...tensor import Tensor

__all__ = ["capture"]


# ops/reduction.py caches, per (op, input dtype/shape/strides/offset, axis, keepdims, dtype),
# what one full-path call launched: the serial kernel and its meta. A later call with the same
# key allocates the result and calls that kernel directly, skipping TensorIterator.reduce and
# the meta packing. Only single-launch reductions below the parallel grain are planned (their
# meta does not depend on the thread count), and a plan declines while a user CPU stream is
# current or the profiler records (the full path launches then).
class _Capture(threading.local):
    def __init__(self):
        self.on = False
        self.got = None
        self.count = 0
        self.later = False


_cap = _Capture()


def _captured(out, inp, kind, fn, unplannable, meta, div):
    """A launch during a capture: ``out`` / ``inp`` the output and input operands (views of the
    result and input storages), ``kind`` the kernel's signature (value: meta, out, aux, inp,
    div; arg: meta, out, inp)."""
    _cap.count += 1
    _cap.got = None if unplannable else (out, inp, kind, fn, meta, div)


def _captured_later():
    """A call served without its kernel (kernels/cpu/reduction_cold.py): plan a later call."""
    _cap.count += 1
    _cap.later = True


class capture:
    """``with capture() as c: res = <full-path call>`` then ``c.runner(x, res)``: a plan
    ``run(x) -> result or None`` repeating that call for inputs of x's key, None when the call
    can't be planned, False when it can't be planned now (try again on a later call)."""

    def __enter__(self):
        self.prev = (_cap.on, _cap.got, _cap.count, _cap.later)
        _cap.on, _cap.got, _cap.count, _cap.later = True, None, 0, False
        return self

    def __exit__(self, *exc):
        self.got, self.count, self.later = _cap.got, _cap.count, _cap.later
        _cap.on, _cap.got, _cap.count, _cap.later = self.prev
        return False

    def runner(self, x, res):
        if self.later or (_streams._slow and _declines()):
            return False  # no plan now (a cold call, a user stream, the profiler): ask later
        if self.count != 1 or self.got is None:
            return None
        out, inp, kind, fn, meta, div = self.got
        st = res._storage if type(res) is Tensor else None
        if (st is None or out._storage is not st or res._offset or out._offset
                or inp._storage is not x._storage or inp._offset != x._offset
                or st._owner is not None or st.device.type != "cpu"
                or out._dtype is not res._dtype or inp._dtype is not x._dtype):
            return None  # e.g. the input was copied first, or the result is not fresh
        return _make_plan(kind, fn, meta, div, st.nbytes, res._shape, res._strides,
                          res._dtype, _kernel_np(res._dtype), _kernel_np(x._dtype))


def _declines():
    """Once CPU streams were used or the profiler runs: a plan runs only on the default stream
    (the input's queued writers are waited for by Storage.typed(), as on the full path) and
    not under the profiler (launch() records kernels)."""
    return _streams._prof is not None or _streams.tls.queue is not _streams.DEFAULT


def _kernel_np(dt):
    return np.uint16 if dt.itemsize == 2 and dt.kind == "f" else dt.storage_np_dtype


def _make_plan(kind, fn, meta, div, nbytes, shape, strides, dtype, out_np, in_np):
    allocate = Storage.allocate
    make = Tensor._make
    if kind == "value":
        d = np.float64(div)

        def run(x):
            if _streams._slow and _declines():
                return None
            st = allocate(nbytes)
            out = st.typed(out_np)
            fn(meta, out, out, x._storage.typed(in_np), d)
            return make(st, shape, strides, 0, dtype)
    else:
        def run(x):
            if _streams._slow and _declines():
                return None
            st = allocate(nbytes)
            fn(meta, st.typed(out_np), x._storage.typed(in_np))
            return make(st, shape, strides, 0, dtype)
    return run

