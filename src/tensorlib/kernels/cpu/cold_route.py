"""When a first call takes a cold route instead of compiling its kernel (the sorts, the
reductions, the integer matmul, the row ops of normalization.py): the rules they share.

A serial kernel that is neither compiled in this process nor in Numba's disk cache costs
0.5-4 s to compile; the cold routes (NumPy steps, at most a small kernel; the same bits)
serve meanwhile. The kernel compiles on a background thread once the combination evidently
repeats, by cores.parallel_ready's rule (two calls and PARALLEL_WORK elements; at once where
cores.DEFER_PARALLEL_COMPILE is off: tests, warmup, benchmarks). A cold call costs ~4x the
kernel's time per element and a fixed ~50 us, so it counts COLD_COST times its work, and at
least COLD_CALL_WORK.

A cold route that costs far more than that (``once``: the row ops', 12-15x their kernel) serves
only the first call; the second compiles the kernel in the foreground. A loop of calls in a
fresh process then reaches the kernel as soon as it would without a cold route (with the
background compile, softmax's reached it ~0.6 s later, after ~430 slow calls), and a script
calling the op once never compiles it.
"""
from __future__ import annotations

from ...runtime.cpu import cores
from ...runtime.cpu.numba_cache_load import load_cached

__all__ = ["COLD_COST", "COLD_CALL_WORK", "READY", "loaded", "kernel_ready", "ready_once",
           "ready_every", "go_cold"]

COLD_COST = 4
COLD_CALL_WORK = 1 << 16
_disk_tried: set = set()


def loaded(disp, args) -> bool:
    """Whether dispatcher ``disp`` is compiled for ``args``' types, loading it from Numba's
    disk cache if it is there (tried once per signature: a miss costs an index read)."""
    sig = tuple(disp.typeof_pyval(a) for a in args)
    if sig in disp.overloads:
        return True
    if (disp, sig) in _disk_tried:
        return False
    _disk_tried.add((disp, sig))
    return load_cached(disp, sig)


def kernel_ready(disp, args, work, calls=1) -> bool:
    """Whether a call of serial kernel ``disp`` on ``args`` (``work`` elements) runs it: yes
    once it is compiled or on disk; otherwise it starts compiling in the background when the
    rule above says so (counting ``calls`` such calls: those a caller did not check), and
    this call goes cold."""
    return loaded(disp, args) or cores.parallel_ready(
        cores.twins(disp), args, calls * max(COLD_COST * work, COLD_CALL_WORK))


READY: set = set()  # ready_once's keys whose kernel was found ready (hot callers test it first)


def ready_once(key, work, make, calls=1) -> bool:
    """kernel_ready(*make(), work) (``make``: the kernel and its arguments, built only while
    the answer is not known), remembered under the caller's ``key`` (what fixes the kernel's
    argument types: a dtype pair, an element width...) once true: kernel_ready types every
    argument (~37 us for a gather's eleven), too much for a hot call."""
    if key in READY:
        return True
    disp, args = make()
    if kernel_ready(disp, args, work, calls):
        READY.add(key)
        return True
    return False


_unchecked: dict = {}  # ready_every's keys found not ready -> calls since their last check
CHECK_EVERY = 16


def ready_every(key, work, make) -> bool:
    """ready_once for a kernel whose callers run often while it may be compiling (the
    pointwise loop nests behind their cold route): while it is not ready, only every
    CHECK_EVERY-th call checks (the check types every argument: ~40 us of a 1000-element
    cold call's ~100), counting the calls between checks too, so the background compile
    starts after as many calls as with a check per call."""
    if key in READY:
        return True
    unchecked = _unchecked.get(key)
    if unchecked is not None and unchecked < CHECK_EVERY - 1:
        _unchecked[key] = unchecked + 1
        return False
    if ready_once(key, work, make, 1 if unchecked is None else unchecked + 1):
        _unchecked.pop(key, None)
        return True
    _unchecked[key] = 0
    return False


_not_ready_until: dict = {}  # ready_soon's keys found not ready -> when to ask again
RECHECK_S = 0.5


def ready_soon(key, work, make) -> bool:
    """ready_once for calls too small to pay its check each time (a few us of work): a
    negative answer stands for RECHECK_S seconds (a kernel on disk is found at the first call;
    one compiling meanwhile at a later check)."""
    if key in READY:
        return True
    until = _not_ready_until.get(key)
    now = cores._mono()
    if until is not None and now < until:
        return False
    if ready_once(key, work, make):
        return True
    _not_ready_until[key] = now + RECHECK_S
    return False


_served_once: set = set()  # ``once`` kernels whose one cold call has run


def go_cold(mode, disp, args, work, once=False) -> bool:
    """Whether this call of ``disp`` takes its cold route, under a module's switch ``mode``:
    True (the rule), False (never) or "always" (tests); ``once``: the rule for costly cold
    routes (see above)."""
    if mode == "always":
        return True
    if not mode:
        return False
    if not once:
        return not kernel_ready(disp, args, work)
    if not cores.DEFER_PARALLEL_COMPILE or disp in _served_once or loaded(disp, args):
        return False
    _served_once.add(disp)
    return True
