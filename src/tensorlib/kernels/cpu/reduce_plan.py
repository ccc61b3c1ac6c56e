"""Reduction and scan plans (the small-call fast path of ops/reduction.py): ``capture`` records
what one full-path call launched (kernels/cpu/reduction.py reports each launch through
``_captured`` while ``_cap.on``), and ``_make_plan`` repeats it for later calls of the same key.
"""
from __future__ import annotations

import threading

import numpy as np

from ... import dtypes as _dt
from ...runtime.cpu import streams as _streams
from ...shape import is_contiguous
from ...storage import Storage
from ...tensor import Tensor

__all__ = ["capture"]


# ops/reduction.py caches, per (op, input dtype/shape/strides, axis, keepdims, dtype), what one
# full-path call launched: the serial kernels and their meta. A later call with the same key
# allocates the result and calls those kernels directly (with its input's offset in a copy of the
# meta where it differs), skipping TensorIterator.reduce and the meta packing. Planned: one launch
# (a value, arg or scan kernel), or var / std's two (the mean into a scratch result, then the
# squared deviations reading it as their aux operand), each below the parallel grain (their meta
# does not depend on the thread count). A plan declines while a user CPU stream is current or the
# profiler records (the full path launches then).
class _Capture(threading.local):
    def __init__(self):
        self.on = False
        self.got = []
        self.later = False


_cap = _Capture()


def _captured(out, aux, inp, kind, fn, unplannable, meta, div, in_at):
    """A launch during a capture: ``out`` / ``aux`` / ``inp`` the output, aux (None: none) and
    input operands (views of their storages), ``kind`` the kernel's signature (value: meta,
    out, aux, inp, div; arg: meta, out, inp), ``in_at`` where ``meta`` holds the input's
    offset; None is recorded for an unplannable launch."""
    _cap.got.append(None if unplannable else (out, aux, inp, kind, fn, meta, div, in_at))


def _captured_later():
    """A call served without its kernel (kernels/cpu/reduction_cold.py): plan a later call."""
    _cap.later = True


class capture:
    """``with capture() as c: res = <full-path call>`` then ``c.runner(x, res)``: a plan
    ``run(x) -> result or None`` repeating that call for inputs of x's key, None when the call
    can't be planned, False when it can't be planned now (try again on a later call)."""

    def __enter__(self):
        self.prev = (_cap.on, _cap.got, _cap.later)
        _cap.on, _cap.got, _cap.later = True, [], False
        return self

    def __exit__(self, *exc):
        self.got, self.later = _cap.got, _cap.later
        _cap.on, _cap.got, _cap.later = self.prev
        return False

    def runner(self, x, res):
        if self.later or (_streams._slow and _declines()):
            return False  # no plan now (a cold call, a user stream, the profiler): ask later
        got = self.got
        if not got or len(got) > 2 or None in got:
            return None
        st = res._storage if type(res) is Tensor else None
        if (st is None or res._offset or st._owner is not None or st.device.type != "cpu"
                or not all(_reads_x(g, x) for g in got)):
            return None
        for *_, meta, _, in_at in got:
            if meta[in_at] != x._offset:
                return None  # (the input's offset is not where the launch said: no plan)
        out, aux, _, kind, fn, meta, div, in_at = got[-1]
        if out._storage is not st or out._offset or out._dtype is not res._dtype:
            return None  # e.g. the result is not fresh
        in_np = input_np(x._dtype)
        if len(got) == 1:
            if aux is not None:
                return None
            return _make_plan(kind, fn, meta, div, st.nbytes, res._shape, res._strides,
                              res._dtype, _kernel_np(res._dtype), in_np, in_at)
        m_out, m_aux, _, m_kind, m_fn, m_meta, m_div, m_in_at = got[0]
        m_st = m_out._storage
        if (kind != "value" or m_kind != "value" or m_aux is not None or aux is None
                or aux._storage is not m_st or m_out._offset or aux._offset
                or m_st._owner is not None or m_st is st):
            return None
        return _make_two_plan(m_fn, m_meta, m_div, m_st.nbytes, _kernel_np(m_out._dtype), fn,
                              meta, div, st.nbytes, res._shape, res._strides, res._dtype,
                              _kernel_np(res._dtype), in_np, m_in_at, in_at)


def _reads_x(launch, x):
    inp = launch[2]
    return (inp._storage is x._storage and inp._offset == x._offset
            and inp._dtype is x._dtype)  # not a copy of x made first


def _declines():
    """Once CPU streams were used or the profiler runs: a plan runs only on the default stream
    (the input's queued writers are waited for by Storage.typed(), as on the full path) and
    not under the profiler (launch() records kernels)."""
    return _streams._prof is not None or _streams.tls.queue is not _streams.DEFAULT


def _kernel_np(dt):
    return np.uint16 if dt.itemsize == 2 and dt.kind == "f" else dt.storage_np_dtype


def input_np(dt):
    """The NumPy dtype the reduction and scan kernels read an input of ``dt`` as: the kernel
    array's, bool as its bytes (reduce_common.load_code)."""
    return np.uint8 if dt is _dt.bool_ else _kernel_np(dt)


def _entry(fn, args):
    """The compiled function behind Numba dispatcher ``fn`` for exactly the types of ``args``
    (calling it skips the dispatcher's per-call type resolution), or ``fn`` itself when none is
    compiled for them."""
    overloads = getattr(fn, "overloads", None)
    cres = overloads and overloads.get(tuple(fn.typeof_pyval(a) for a in args))
    return fn if cres is None else getattr(cres, "entry_point", fn)


# A plan's arrays: the result's storage viewed whole (a fresh block, 64-byte aligned, a
# multiple of the itemsize: cheaper than Storage.typed, which caches a view on a storage that
# is used once) and the input's typed view. The compiled entry point is taken for exactly the
# types of the first call's arrays; an input storage at an address that is not a multiple of
# its itemsize (borrowed memory) types differently and goes through the dispatcher.

def _at_offset(meta, in_at, offset):
    """A copy of ``meta`` for an input at element ``offset`` (its entry ``in_at``): the plans'
    key leaves the input's offset out (ops/reduction.py), so a sliding window's views share one
    plan. (Callers test the offset against the captured one first: a plain int compare.)"""
    meta = meta.copy()
    meta[in_at] = offset
    return meta


def _make_plan(kind, fn, meta, div, nbytes, shape, strides, dtype, out_np, in_np, in_at):
    allocate = Storage.allocate
    make = Tensor._make
    contiguous = is_contiguous(shape, strides)  # (every result: this layout)
    out_dt, in_item = np.dtype(out_np), np.dtype(in_np).itemsize
    sample_out = np.empty(1, out_dt)
    at = int(meta[in_at])  # the captured input's offset
    if kind == "value":
        d = np.float64(div)
        ep = _entry(fn, (meta, sample_out, sample_out, np.empty(1, in_np), d))

        def run(x):
            if _streams._slow and _declines():
                return None
            st = allocate(nbytes)
            out = st.buffer.view(out_dt)
            xs = x._storage
            (fn if xs._ptr % in_item else ep)(
                meta if x._offset == at else _at_offset(meta, in_at, x._offset), out, out,
                xs.typed(in_np), d)
            return make(st, shape, strides, 0, dtype, contiguous)
    else:
        ep = _entry(fn, (meta, sample_out, np.empty(1, in_np)))

        def run(x):
            if _streams._slow and _declines():
                return None
            st = allocate(nbytes)
            xs = x._storage
            (fn if xs._ptr % in_item else ep)(
                meta if x._offset == at else _at_offset(meta, in_at, x._offset),
                st.buffer.view(out_dt), xs.typed(in_np))
            return make(st, shape, strides, 0, dtype, contiguous)
    return run


def _make_two_plan(m_fn, m_meta, m_div, m_nbytes, m_np, fn, meta, div, nbytes, shape, strides,
                   dtype, out_np, in_np, m_in_at, in_at):
    """var / std: the mean into scratch memory, then the squared deviations from it."""
    allocate = Storage.allocate
    make = Tensor._make
    contiguous = is_contiguous(shape, strides)
    m_d, d = np.float64(m_div), np.float64(div)
    m_dt, out_dt, in_item = np.dtype(m_np), np.dtype(out_np), np.dtype(in_np).itemsize
    sm, so, si = np.empty(1, m_dt), np.empty(1, out_dt), np.empty(1, in_np)
    at = int(meta[in_at])  # the captured input's offset (runner(): m_meta's too)
    m_ep, ep = _entry(m_fn, (m_meta, sm, sm, si, m_d)), _entry(fn, (meta, so, sm, si, d))

    def run(x):
        if _streams._slow and _declines():
            return None
        xs = x._storage
        inp = xs.typed(in_np)
        odd = xs._ptr % in_item
        # (m_st held until both kernels ran: its array alone would not keep the block allocated)
        m_st = allocate(m_nbytes)
        m = m_st.buffer.view(m_dt)
        moved = x._offset != at
        (m_fn if odd else m_ep)(_at_offset(m_meta, m_in_at, x._offset) if moved else m_meta, m,
                                m, inp, m_d)
        st = allocate(nbytes)
        (fn if odd else ep)(_at_offset(meta, in_at, x._offset) if moved else meta,
                            st.buffer.view(out_dt), m, inp, d)
        del m_st
        return make(st, shape, strides, 0, dtype, contiguous)
    return run
