"""How many threads a parallel CPU kernel uses: every core, unless the machine is busy.

Numba's OpenMP layer splits a parallel loop statically and waits at its end for every thread of
the team. When another process occupies a core, the team thread on it waits for a scheduler time
slice: measured on 2 cores with one busy process beside, a 2e6-element add (0.45 ms quiet)
took 8 ms in median and 20 ms at worst, while the same loop on one thread took 0.8 ms. So
:func:`call` times each parallel kernel: wall time the calling thread spent off its CPU (it
spins, then sleeps, at the end-of-loop barrier) means a team thread was not running. The
process then runs parallel kernels on one thread for a cool-down (0.25 s, doubling while stalls
recur, at most 8 s) and tries the whole team again after it. A quiet machine never pays more
than the two clock reads per parallel kernel.

Reacting to stalls leaves one stall per cool-down on a machine that stays busy, so the team is
also sized ahead of the launch from the cores other processes keep busy (:func:`taken_cores`:
the machine's CPU time from /proc/stat minus this process's own, over windows of at least
SAMPLE_S): with one busy loop on 2 cores a kernel runs on one thread and never waits for the
second. ``FOLLOW_LOAD = False`` (or TENSORLIB_CPU_FOLLOW_LOAD=0) turns that off.

A team left idle goes to sleep, and waking it can cost more than the call (ms on a VM): calls
after a pause run on one thread, up to what a wake was seen to cost (``IDLE_S`` below).

Compiling a parallel variant costs 2-10 s (a serial one 0.3-1 s), so a combination's first big
calls run a serial kernel and the parallel variant compiles in the background
(:func:`parallel_ready`: a thread that has a child process compile it when it can,
compile_child.py): a script that calls each op once never waits for a parallel compile.

Numba's thread count is per calling thread: each thread applies the count it needs before its
kernel (:func:`use_threads`). Only the standard library is imported; Numba is imported on first
use (parallel kernels imply it).
"""
from __future__ import annotations

import os
import sys
import threading
import time
from types import SimpleNamespace

__all__ = ["call", "run", "is_parallel", "threads", "use_threads", "team_size", "busy",
           "taken_cores", "FOLLOW_LOAD", "SAMPLE_S", "parallel_ready", "team_ready", "STALL_S",
           "IDLE_SERIAL", "IDLE_S",
           "PARALLEL_WORK", "blas_call", "BLAS_PARALLEL_WORK", "blas_team_spinning", "twins"]

STALL_S = 0.001          # off-CPU time during one parallel kernel that counts as a stall
FIRST_COOLDOWN_S = 0.25
MAX_COOLDOWN_S = 8.0

_until = 0.0             # monotonic time until which parallel kernels use one thread
_cooldown = FIRST_COOLDOWN_S
_numba = None
_tls = threading.local()
_perf = time.perf_counter
_cpu = time.thread_time
_mono = time.monotonic


def _nb():
    global _numba
    if _numba is None:
        import numba
        _numba = numba
    return _numba


def team_size() -> int:
    """The full team: Numba's configured thread count (NUMBA_NUM_THREADS)."""
    return _nb().config.NUMBA_NUM_THREADS


def busy() -> bool:
    """True while parallel kernels run on one thread after a stall."""
    return _mono() < _until


RECENT_S = 0.01  # a Python thread that asked within this long counts as running kernels


def threads(own: bool = False) -> int:
    """How many threads a parallel kernel launched now should use (kernels that size their
    work split or choose a serial variant ask this, before each kernel): one during a stall
    cool-down, else the cores other processes leave free, shared with the other Python threads
    that asked within RECENT_S (Dask's threaded scheduler, a thread pool: each thread's kernel,
    parallel or serial, holds a core; a team launched beside them waits for one).
    ``own``: the caller runs that many threads of its own, not a team through :func:`call`,
    so the idle-team rule does not make its work serial and the load is sampled after a
    pause too (sort_split's two Python threads beside a busy process: float32 sort of 2e6
    26-28 ms against one NumPy sort's 17-22)."""
    now = _mono()
    if now < _until:
        return 1
    n = _free_team(team_size(), own)
    recent = _recent
    me = _ident()
    recent[me] = now
    if len(recent) == 1:
        return n
    others = 0
    for thread, when in list(recent.items()):
        if thread != me:
            if now - when < RECENT_S:
                others += 1
            elif recent.get(thread) == when:
                recent.pop(thread, None)  # gone quiet (or ended)
    return max(1, n // (others + 1)) if others else n


# ---- cores taken by other processes
FOLLOW_LOAD = os.environ.get("TENSORLIB_CPU_FOLLOW_LOAD", "1").strip() != "0"
SAMPLE_S = 0.1           # shortest window the load is averaged over (/proc/stat counts in ticks)
TAKEN_SHARE = 0.5        # a core counts as taken when other processes used more than this of it
_CPUS = os.cpu_count() or 1
_proc = time.process_time
_sample = [float("-inf"), None, None, 0]  # _mono(), machine busy s, own CPU s, cores taken
try:
    _CLK_TCK = os.sysconf("SC_CLK_TCK")  # /proc/stat's unit
except (AttributeError, ValueError, OSError):
    _CLK_TCK = 100


_stat_fd = []  # /proc/stat's descriptor, kept open: a read after a pause cost 40 us, an
#               open and read 125 us (after 0.1 s idle on a 2-vCPU VM: every call then samples)


def _machine_busy_s():
    """CPU seconds all CPUs spent busy since boot (/proc/stat: user, nice, system, irq,
    softirq, steal), or None where there is no /proc/stat."""
    try:
        if not _stat_fd:
            _stat_fd.append(os.open("/proc/stat", os.O_RDONLY))
        fields = os.pread(_stat_fd[0], 256, 0).split(b"\n", 1)[0].split()[1:9]
        ticks = sum(map(int, fields)) - int(fields[3]) - int(fields[4])  # less idle, iowait
    except (OSError, ValueError, IndexError):
        return None
    return ticks / _CLK_TCK


_LOADAVG = "/proc/loadavg"


def _runnable_others() -> int:
    """Threads runnable on the machine right now besides the caller (/proc/loadavg's running
    count less one; 0 where unknown): the first sample's estimate, before two /proc/stat
    samples give a rate."""
    try:
        with open(_LOADAVG, "rb") as f:
            return max(0, int(f.read().split()[3].split(b"/")[0]) - 1)
    except (OSError, ValueError, IndexError):
        return 0


def taken_cores() -> int:
    """Cores other processes kept busy over the last window: the machine's busy CPU time less
    this process's own (every thread of it, Numba's included), per wall second, rounded at
    TAKEN_SHARE. Sampled at most once per SAMPLE_S. The process's first sample has no window:
    it counts the threads runnable now (a busy neighbour's; 0 where unknown), which held
    for the first SAMPLE_S (a loop of products beside a busy process had taken both cores
    and stalled there: 316^2 float32 matmul p90 4.5 ms in its first 0.1 s)."""
    now = _mono()
    t0, busy0, own0, taken = _sample
    if now - t0 < SAMPLE_S:
        return taken
    busy, own = _machine_busy_s(), _proc()
    if busy is not None and busy0 is not None:
        others = (busy - busy0 - (own - own0)) / (now - t0)
        taken = max(0, int(others + (1.0 - TAKEN_SHARE)))
    elif busy0 is None and busy is not None:
        taken = min(_CPUS - 1, _runnable_others())
    _sample[:] = [now, busy, own, taken]
    return taken


_ident = threading.get_ident
_active: set = set()     # threads inside call() now: Python threads (Dask's) split the team
_recent: dict = {}       # Python thread -> when it last asked threads()


def _free_team(n: int, sample: bool = False) -> int:
    """``n`` threads, fewer when other processes leave fewer cores free (at least one). Once
    the load has a first sample to count from, a call that will run on one thread after a
    pause (:func:`_renting`) samples nothing: the sample (/proc/stat read cold, 40-50 us) told
    it nothing it uses. (Without that first sample, the process's first rate came only from
    the call that woke the team, which saw no load for SAMPLE_S and woke it beside a busy
    neighbour: 3e5-element take after 1 ms pauses 7 ms a call.) ``sample``: sample even then
    (for work that does not rent: threads(own=True))."""
    if n > 1 and FOLLOW_LOAD:
        last = _sample  # (taken_cores's check inlined: this runs before every big kernel)
        now = _mono()
        if now - last[0] < SAMPLE_S:
            free = _CPUS - last[3]
        elif last[1] is not None and not sample and _renting(now):
            return n
        else:
            free = _CPUS - taken_cores()
        if free < n:
            return max(1, free)
    return n


def use_threads(n: int) -> None:
    """Sets Numba's thread count for the calling thread (a no-op when it is already ``n``)."""
    if getattr(_tls, "threads", 0) != n:
        try:
            _nb().set_num_threads(n)
        except Exception:  # noqa: BLE001 - keep Numba's count (e.g. n above the team size)
            return
        _tls.threads = n


def call(fn, args, team: int = 0, serial=None):
    """``fn(*args)`` for a parallel kernel ``fn``, on ``team`` threads (0: all), or on one
    thread while the machine is busy or after a pause that put the team to sleep (see
    IDLE_S; then ``serial(*args)`` where the caller gives ``fn``'s serial twin); a stall
    starts (or lengthens) the one-thread cool-down."""
    start = _mono()
    if start < _until:
        use_threads(1)
        return fn(*args)
    n = _free_team(team or team_size())
    me = _ident()
    _active.add(me)  # (set add / discard: atomic under the GIL, no count to drift)
    try:
        callers = len(_active)
        if callers > 1:
            n = max(1, n // callers)  # several Python threads share the free cores
        if n == 1:
            use_threads(1)
            return fn(*args)
        return _team_call(fn, args, n, start, serial)
    finally:
        _active.discard(me)


# ---- a team that went to sleep
# OpenMP's team threads spin for a while after a parallel region, then sleep. Waking them can
# cost far more than the region: on a 2-vCPU VM (libgomp's default wait policy) the first
# region after a pause of >= ~20 ms took 6-8 ms wherever the region was short (a 2e6-element
# add: 0.2 ms with the team awake; PyTorch's kernels on that VM the same; its length follows
# GOMP_SPINCOUNT; OMP_WAIT_POLICY=passive avoids it at 40-70 us more per region:
# benchmarks/idle_gaps_cpu.py), and after shorter pauses a wake still cost ~0.3 ms. So after
# a pause (no call through here for IDLE_S) calls run on one thread while waking the team is
# seen to lose, until they have spent what the last losing wake cost on one thread (ski
# rental: a loop pays at most about twice the wake once per burst; a script calling an op now
# and then, one op's kernels in a row included, pays their serial time, not the wake); then
# the team wakes. A wake loses when the call that woke the team took longer than its kernel's
# call with the team awake (its last one, else its next) times the threads: more than one
# thread alone would have. Until a wake is seen to pay, waking is assumed to lose, at
# WAKE_COST_S (a machine whose wakes are cheap loses that much speed-up per pause until then).
# Pauses are per Python thread (OpenMP gives each calling thread a team of its own).
# IDLE_SERIAL = False (TENSORLIB_CPU_IDLE_SERIAL=0) turns the rule off.
IDLE_SERIAL = os.environ.get("TENSORLIB_CPU_IDLE_SERIAL", "1").strip() != "0"
IDLE_S = 0.01            # a team idle this long counts as asleep (on that VM: stalls from 10-20 ms)
WAKE_COST_S = 0.002      # what a wake is taken to cost until one is measured
WAKE_COST_MAX_S = 0.01   # the most a measured wake is taken to cost (a call of another size
#                          or one that compiled meanwhile can measure far more)
_wake_loses = True       # what the last measured wake showed (none yet: assumed)
_wake_cost = WAKE_COST_S  # what the last losing wake cost beyond the awake call
_waking = None           # (kernel, seconds, threads) of a wake not measured yet
_awake: dict = {}        # kernel -> seconds of its last call with the team awake


class _Burst:
    """A Python thread's own team (OpenMP gives each calling thread its own) and calls."""
    team_end = float("-inf")  # when the last region with the team ended
    call_end = float("-inf")  # when the last call through _team_call ended (team or one thread)
    rent_left = 0.0           # one-thread seconds this burst still spends before waking it


def _team_call(fn, args, n, start, serial):
    """call()'s launch of ``fn(*args)`` on ``n`` > 1 threads, or on one after a pause while
    waking the team loses (see above); measures the wakes."""
    global _waking
    burst = getattr(_tls, "burst", None)
    if burst is None:
        burst = _tls.burst = _Burst()
    asleep = start - burst.team_end >= IDLE_S
    if asleep and _renting(start):
        if start - burst.call_end >= IDLE_S:
            burst.rent_left = _wake_cost  # a new burst
        if serial is None:
            use_threads(1)
        try:
            return (serial or fn)(*args)
        finally:
            burst.call_end = _mono()
            burst.rent_left -= burst.call_end - start
    use_threads(n)
    w0 = _perf()
    result = _timed(fn, args)
    took = _perf() - w0
    burst.team_end = burst.call_end = _mono()
    if asleep:
        awake = _awake.get(fn)
        if awake is None:
            _waking = (fn, took, n)
        else:
            _judge_wake(took, awake, n)
    else:
        _awake[fn] = took
        if _waking is not None and _waking[0] is fn:
            _judge_wake(_waking[1], took, _waking[2])
            _waking = None
    return result


def _renting(now) -> bool:
    """Whether a team call of the calling Python thread starting ``now`` runs on one thread:
    the rule on, waking seen to lose, the team asleep (a pause of IDLE_S) and rent left or a
    new burst (the calls themselves paused IDLE_S). _team_call rents by it; _free_team asks
    it before sampling the load."""
    if not (IDLE_SERIAL and _wake_loses):
        return False
    burst = getattr(_tls, "burst", None)
    if burst is None:
        return True  # (no call yet: the team has not started)
    return now - burst.team_end >= IDLE_S and (
        now - burst.call_end >= IDLE_S or burst.rent_left > 0.0)


def _judge_wake(woke, awake, n):
    """A wake's verdict: the call that woke the team took ``woke`` s, its kernel ``awake`` s
    with the team awake, on ``n`` threads."""
    global _wake_loses, _wake_cost
    _wake_loses = woke > awake * n
    if _wake_loses:
        _wake_cost = min(woke - awake, WAKE_COST_MAX_S)


_parallel_fns: dict = {}  # kernel -> whether it is a Numba parallel dispatcher


def is_parallel(fn) -> bool:
    """Whether ``fn`` is a Numba dispatcher compiled with parallel=True (cached per kernel)."""
    par = _parallel_fns.get(fn)
    if par is None:
        opts = getattr(fn, "targetoptions", None)
        par = _parallel_fns[fn] = bool(opts) and bool(opts.get("parallel"))
    return par


def run(fn, args):
    """``fn(*args)`` for any CPU kernel: a parallel one through :func:`call` (the team size it
    sets for the calling thread, stall detection), a serial one directly."""
    return call(fn, args) if is_parallel(fn) else fn(*args)


# NumPy's OpenBLAS threads its GEMM from small sizes on; on a busy machine a small product then
# waits for a descheduled BLAS thread (measured on 2 cores under load: 128x64 @ 64x64 took 21 ms
# with the default threads, 0.25 ms on one). BLAS calls below this many multiply-adds run on
# one thread; larger ones use the team unless the cool-down is on, and stalls are timed as for
# Numba's parallel kernels.
BLAS_PARALLEL_WORK = 1 << 20
_blas = None             # [set_num_threads function or None, current count]
_blas_lock = threading.Lock()


def _blas_setter():
    global _blas
    if _blas is None:
        fn = None
        try:
            import ctypes
            import re
            with open("/proc/self/maps") as f:
                libs = sorted(set(re.findall(r"(/\S*openblas\S*\.so\S*)", f.read())))
            for lib in libs:
                handle = ctypes.CDLL(lib)
                for name in ("scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_",
                             "scipy_openblas_set_num_threads", "openblas_set_num_threads"):
                    if hasattr(handle, name):
                        fn = getattr(handle, name)
                        fn.argtypes = [ctypes.c_int]
                        break
                if fn is not None:
                    break
        except Exception:  # noqa: BLE001 - no /proc, no OpenBLAS: BLAS keeps its own threads
            fn = None
        _blas = [fn, 0]
    return _blas


def _set_blas_threads(n: int) -> None:
    state = _blas_setter()
    if state[0] is not None and state[1] != n:
        with _blas_lock:
            state[0](n)
            state[1] = n


# After a multi-threaded call OpenBLAS's worker threads spin, without yielding, for 2**28
# cycles (OPENBLAS_THREAD_TIMEOUT's default: ~0.1 s at 2-3 GHz) before they sleep. A Numba
# parallel kernel launched meanwhile shares a core with a spinner: measured on 2 idle cores
# (the MLP step of benchmarks/autograd.py, Adam's parallel twin right after the last GEMM of
# the backward), its end-of-loop barrier waited one scheduler tick (~4 ms) on every step, and
# that stall put every parallel kernel and BLAS call on one thread (the cool-down above).
# Callers with a serial alternative ask blas_team_spinning() first.
BLAS_SPIN_S = 0.15
_blas_team_end = float("-inf")  # _mono() after the last BLAS call run by the team


def blas_call(fn, args, work: int):
    """``fn(*args)`` for a call into NumPy's BLAS doing ``work`` multiply-adds: one BLAS thread
    for small products or while the machine is busy, the team otherwise (timed for stalls)."""
    global _blas_team_end
    if work < BLAS_PARALLEL_WORK or _mono() < _until:
        if _blas is None or _blas[1] != 1:  # (set already for every small product after the
            _set_blas_threads(1)            # first: no setter call on this hot path)
        return fn(*args)
    n = _free_team(team_size(), True)  # (BLAS threads do not rent: sample the load)
    _set_blas_threads(n)
    if n == 1:
        return fn(*args)
    result = _timed(fn, args)
    _blas_team_end = _mono()
    return result


def blas_team_spinning() -> bool:
    """Whether OpenBLAS's worker threads may still be spinning after a multi-threaded call
    (see BLAS_SPIN_S): a memory-bound parallel kernel then runs faster on one thread."""
    return _mono() - _blas_team_end < BLAS_SPIN_S


def _timed(fn, args):
    """Runs a multi-threaded call; off-CPU time on the calling thread means a team thread was
    descheduled: start (or lengthen) the one-thread cool-down."""
    global _until, _cooldown
    c0 = _cpu()
    w0 = _perf()
    result = fn(*args)
    off_cpu = (_perf() - w0) - (_cpu() - c0)
    if off_cpu > STALL_S and (not FOLLOW_LOAD or taken_cores() or len(_active) > 1):
        # (following the load, a wait while no other process keeps a core busy is a team
        # thread still at work, e.g. on page faults of fresh memory: measured on 2 quiet
        # cores, eager GELU's kernels "stalled" so in ~1 of 5 runs of benchmarks/jit.py and
        # the cool-downs put the whole run on one thread)
        _until = _mono() + _cooldown
        _cooldown = min(_cooldown * 2, MAX_COOLDOWN_S)
    elif _cooldown != FIRST_COOLDOWN_S:
        _cooldown = FIRST_COOLDOWN_S  # a clean run with the whole team: the load has gone
    return result


DEFER_PARALLEL_COMPILE = True  # False: a parallel variant compiles at its first big call
_compiling: dict = {}    # parallel dispatcher -> its background compile thread
_big_calls: dict = {}    # parallel dispatcher -> big calls served by its serial twin so far
_big_work: dict = {}     # parallel dispatcher -> elements those calls processed
_compiling_lock = threading.Lock()


PARALLEL_WORK = 1 << 22  # elements served serially before a parallel compile pays off


def parallel_ready(mod, args=None, work=0) -> bool:
    """Whether ``mod.parallel`` (a Numba parallel dispatcher whose twin ``mod.serial`` takes the
    same arguments) should serve a big call now. False until it is compiled: the caller runs a
    serial kernel meanwhile. From the second big call on (the combination is evidently used
    more than once), and once the big calls served serially processed ``PARALLEL_WORK``
    elements (``work``: this call's element count; a compile holds the GIL for 1-3 s, worth
    it only for real work), the parallel variant compiles on a background thread (or loads
    from the disk cache) for the argument types of ``args`` (the call's arguments), or else
    for those ``mod.serial`` was compiled for; calls after that run in parallel."""
    par = mod.parallel
    if par.overloads or not DEFER_PARALLEL_COMPILE:  # (not .signatures: it hashes each one)
        return True
    if par in _compiling:
        return False
    if args is None:
        sigs = list(mod.serial.signatures)
        if not sigs:
            return False  # counted once the serial twin has compiled (its types are known)
    seen = _big_calls[par] = _big_calls.get(par, 0) + 1
    done = _big_work[par] = _big_work.get(par, 0) + work
    if seen < 2 or (work and done < PARALLEL_WORK):
        return False  # a one-off big call: no parallel compile competing with the next op
    if args is not None:
        sigs = [tuple(par.typeof_pyval(a) for a in args)]
    with _compiling_lock:
        if par not in _compiling:
            # Not a daemon: interpreter exit must not kill it inside LLVM (that aborts).
            t = threading.Thread(target=_compile, args=(par, sigs),
                                 name="tensorlib-parallel-compile")
            _compiling[par] = t
            t.start()
    return False


_twins: dict = {}  # (parallel, serial) -> their twins() pair


def twins(parallel, serial=None):
    """``parallel`` (a Numba parallel dispatcher, or a serial kernel compiled in the background)
    and its serial twin as the ``.parallel`` / ``.serial`` pair :func:`parallel_ready` and
    :func:`team_ready` take where no generated module holds both (one object per pair)."""
    pair = _twins.get((parallel, serial))
    if pair is None:
        pair = _twins[(parallel, serial)] = SimpleNamespace(parallel=parallel, serial=serial)
    return pair


def team_ready(mod, args=None, work=0) -> bool:
    """Whether a big call should launch ``mod.parallel`` now: a launch would get two threads
    or more (:func:`threads`; on one, the serial twin does the same work without the team's
    overhead: measured 2026-12-05, a 2**18-element float32 multiply into ``out=`` took 96 us
    in the strided parallel loop nest on one thread, 50 us in the dense flat loop) and
    :func:`parallel_ready` says so."""
    return threads() > 1 and parallel_ready(mod, args, work)


def _compile(dispatcher, sigs):
    from . import compile_child
    from .numba_cache_load import load_cached
    # What Numba's disk cache holds loads here (milliseconds); the rest compiles in a child
    # process when it can (this process's GIL and garbage collector stay the user's), and the
    # calls below then load what it wrote to the cache.
    with prompt_handoffs():
        sigs = [sig for sig in sigs if not load_cached(dispatcher, sig)]
    if not sigs:
        return
    compile_child.compile_in_child(dispatcher, sigs)
    if compile_child.closing():
        return  # the interpreter is exiting: no compile now
    with prompt_handoffs():
        for sig in sigs:
            try:
                dispatcher.compile(sig)
            except Exception:  # noqa: BLE001 - the next call compiles it and raises there
                return


# A load from Numba's disk cache is mostly llvmlite calls through ctypes, each of which
# releases the GIL; on a background thread, taking it back waits for the user's thread to
# hand it over, up to the switch interval (5 ms by default) per call. Measured 2026-12-07 on
# a Zen 3 VM, a rows loop's load beside a loop of small calls took 0.01-0.59 s of wall time
# for 0.01-0.06 s of CPU time (0.01-0.05 s with a 0.1 ms interval), and the calls ran cold
# (~60-100 us each instead of ~5) until it ended. So while a background load runs the
# interval is at most LOAD_SWITCH_S; the one before is put back when the last load ends.
LOAD_SWITCH_S = 1e-4
_loads = 0               # prompt_handoffs blocks running now (any thread)
_saved_switch = None     # the switch interval they replaced
_loads_lock = threading.Lock()


class prompt_handoffs:
    """Context manager: the GIL's switch interval at most LOAD_SWITCH_S inside (see above)."""

    def __enter__(self):
        global _loads, _saved_switch
        with _loads_lock:
            if not _loads:
                _saved_switch = sys.getswitchinterval()
                sys.setswitchinterval(min(_saved_switch, LOAD_SWITCH_S))
            _loads += 1

    def __exit__(self, *exc):
        global _loads
        with _loads_lock:
            _loads -= 1
            if not _loads:
                sys.setswitchinterval(_saved_switch)
