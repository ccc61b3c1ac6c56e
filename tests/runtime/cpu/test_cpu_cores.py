"""Parallel CPU kernels drop to one thread after a stall (runtime/cpu/cores.py), and several
Python threads running big ops at once get right answers."""
import threading
import time

import numba
import numpy as np
import pytest

import tensorlib as tl
from tensorlib.runtime.cpu import cores


@pytest.fixture
def fresh_cores(monkeypatch):
    monkeypatch.setattr(cores, "_until", 0.0)
    monkeypatch.setattr(cores, "_cooldown", cores.FIRST_COOLDOWN_S)
    monkeypatch.setattr(cores, "_recent", {})
    yield
    cores.use_threads(cores.team_size())


def _stalling_kernel(seen):
    def kernel():
        seen.append(numba.get_num_threads())
        time.sleep(3 * cores.STALL_S)  # off the CPU, as a thread waiting at the barrier
    return kernel


def _busy_kernel(seen):
    spin = cores.STALL_S / 4  # (on the CPU: no stall)

    def kernel():
        seen.append(numba.get_num_threads())
        t = time.perf_counter()
        while time.perf_counter() - t < spin:
            pass
    return kernel


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs a team of 2 threads")
def test_a_stall_switches_to_one_thread_for_a_cooldown(fresh_cores, monkeypatch):
    seen = []
    assert not cores.busy() and cores.threads() == cores.team_size()
    cores.call(_stalling_kernel(seen), ())
    assert seen == [cores.team_size()]
    assert cores.busy() and cores.threads() == 1
    cores.call(_busy_kernel(seen), ())
    assert seen[-1] == 1  # during the cool-down: one thread
    assert cores._cooldown == 2 * cores.FIRST_COOLDOWN_S  # a recurring stall waits longer
    monkeypatch.setattr(cores, "_until", time.monotonic() - 1)  # the cool-down is over
    # (a clean run: on a loaded CI machine the calling thread itself can be descheduled for
    # over STALL_S, which would count as a stall; it is not what this step checks)
    clean = _busy_kernel(seen)
    monkeypatch.setattr(cores, "STALL_S", 1.0)
    cores.call(clean, ())
    assert seen[-1] == cores.team_size() and not cores.busy()
    assert cores._cooldown == cores.FIRST_COOLDOWN_S  # a clean run resets it


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs a team of 2 threads")
def test_cooldown_is_capped(fresh_cores, monkeypatch):
    for _ in range(12):
        monkeypatch.setattr(cores, "_until", 0.0)
        cores.call(_stalling_kernel([]), ())
    assert cores._cooldown == cores.MAX_COOLDOWN_S


def test_kernels_choose_serial_work_splits_while_busy(fresh_cores, monkeypatch):
    monkeypatch.setattr(cores, "_until", time.monotonic() + 60)
    x = np.random.default_rng(0).standard_normal((300, 400)).astype(np.float32)
    t = tl.asarray(x)
    np.testing.assert_allclose(tl.sum(t, axis=1).numpy(), x.sum(axis=1), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(tl.softmax(t, axis=1).numpy(),
                               np.exp(x) / np.exp(x).sum(axis=1, keepdims=True), rtol=1e-5)
    np.testing.assert_array_equal(tl.sort(t.reshape(-1)).numpy(), np.sort(x.reshape(-1)))
    np.testing.assert_array_equal((t + 1).numpy(), x + np.float32(1))


@pytest.fixture
def follow_load(monkeypatch):
    """The load rule on, over a fake machine of 2 CPUs whose busy time the test sets."""
    clock = {"now": 1000.0, "busy": 0.0, "own": 0.0}
    monkeypatch.setattr(cores, "FOLLOW_LOAD", True)
    monkeypatch.setattr(cores, "_CPUS", 2)
    monkeypatch.setattr(cores, "_mono", lambda: clock["now"])
    monkeypatch.setattr(cores, "_machine_busy_s", lambda: clock["busy"])
    monkeypatch.setattr(cores, "_proc", lambda: clock["own"])
    monkeypatch.setattr(cores, "_sample", [float("-inf"), None, None, 0])
    monkeypatch.setattr(cores, "_runnable_others", lambda: clock.get("runnable", 0))
    monkeypatch.setattr(cores, "team_size", lambda: 2)
    monkeypatch.setattr(cores, "_until", 0.0)
    # (no other Python thread's earlier ask: on the fake clock an entry from the real one
    # would count as a thread asking now and halve the team)
    monkeypatch.setattr(cores, "_recent", {})
    yield clock
    cores.use_threads(numba.config.NUMBA_NUM_THREADS)


def _window(clock, seconds, others, own=0.0):
    clock["now"] += seconds
    clock["busy"] += (others + own) * seconds
    clock["own"] += own * seconds


def test_team_leaves_cores_taken_by_other_processes(follow_load):
    clock = follow_load
    assert cores.taken_cores() == 0 and cores.threads() == 2  # first sample: nothing known
    _window(clock, 0.2, others=1.0, own=0.3)   # a busy loop beside this process
    assert cores.taken_cores() == 1 and cores.threads() == 1
    _window(clock, 0.05, others=0.0)           # within SAMPLE_S: the last window's figure
    assert cores.threads() == 1
    _window(clock, 0.2, others=0.3, own=2.0)   # this process's own threads never count
    assert cores.taken_cores() == 0 and cores.threads() == 2
    _window(clock, 0.2, others=0.6)            # more than TAKEN_SHARE of a core: taken
    assert cores.threads() == 1
    _window(clock, 0.2, others=3.0)            # every core taken: still one thread
    assert cores.taken_cores() == 3 and cores.threads() == 1


def test_the_first_sample_counts_the_threads_runnable_now(follow_load):
    """The process's first load sample has no window to measure a rate over: it counts the
    other threads runnable now (/proc/loadavg), so a busy neighbour takes its core from the
    first call on (a loop of products beside one had taken both cores for the first SAMPLE_S
    and stalled); the next window's rate replaces it."""
    clock = follow_load
    clock["runnable"] = 1                      # a busy loop beside this process
    assert cores.taken_cores() == 1 and cores.threads() == 1
    _window(clock, 0.2, others=0.0, own=1.0)   # it ended: the measured rate
    assert cores.taken_cores() == 0 and cores.threads() == 2
    clock["runnable"] = 5                      # never more than the other cores
    cores._sample[:] = [float("-inf"), None, None, 0]
    assert cores.taken_cores() == 1


def test_runnable_others_reads_the_running_count(tmp_path, monkeypatch):
    """/proc/loadavg's fourth field is running/total scheduling entities; the caller is one
    of the running ones. A file that is missing or reads otherwise counts none."""
    f = tmp_path / "loadavg"
    monkeypatch.setattr(cores, "_LOADAVG", str(f))
    for text, others in (("0.50 0.40 0.30 3/120 4567\n", 2), ("1.0 1.0 1.0 1/99 7\n", 0),
                         ("0 0 0 0/5 1\n", 0), ("garbled\n", 0)):
        f.write_text(text)
        assert cores._runnable_others() == others, text
    f.unlink()
    assert cores._runnable_others() == 0


def test_own_threads_sample_the_load_while_team_calls_rent(follow_load, monkeypatch):
    """While a team call would rent (the team asleep: it runs on one thread whatever the
    load), threads() skips the load sample; work that starts threads of its own (sort_split's
    two Python threads) asks threads(own=True), which samples, and gets one thread beside a
    busy process instead of two that wait for it."""
    clock = follow_load
    monkeypatch.setattr(cores, "IDLE_SERIAL", True)
    monkeypatch.setattr(cores, "_wake_loses", True)
    monkeypatch.setattr(cores, "_tls", threading.local())  # no team call yet: renting
    assert cores.threads(own=True) == 2                   # the first sample: nothing known
    _window(clock, 0.2, others=1.0, own=1.0)               # a busy loop beside this process
    assert cores.threads() == 2                            # rents: no sample taken
    assert cores._sample[3] == 0
    assert cores.threads(own=True) == 1 and cores._sample[3] == 1


def test_blas_calls_sample_the_load_while_team_calls_rent(follow_load, monkeypatch):
    """A BLAS call is no team call and never rents, so it samples the load even while a team
    call would not: beside a busy process a loop of products got two OpenBLAS threads on
    every call (316 x 316 float32 matmul under one busy loop: p90 3-4.7 ms, max 8-16, NumPy's
    0.8 / 1.9) and stalled."""
    clock = follow_load
    monkeypatch.setattr(cores, "IDLE_SERIAL", True)
    monkeypatch.setattr(cores, "_wake_loses", True)
    monkeypatch.setattr(cores, "_tls", threading.local())  # no team call yet: renting
    teams = []
    monkeypatch.setattr(cores, "_set_blas_threads", teams.append)
    monkeypatch.setattr(cores, "_timed", lambda fn, args: fn(*args))
    work = cores.BLAS_PARALLEL_WORK
    assert cores.blas_call(lambda: "done", (), work) == "done"  # the first sample: nothing known
    _window(clock, 0.2, others=1.0, own=1.0)                     # a busy loop beside this process
    assert cores.threads() == 2 and cores._sample[3] == 0       # (a team call would rent)
    cores.blas_call(lambda: None, (), work)
    assert teams == [2, 1] and cores._sample[3] == 1


def test_sort_split_asks_for_threads_of_its_own(monkeypatch):
    from tensorlib.kernels.cpu import sort_split
    asked = []
    monkeypatch.setattr(sort_split.cores, "threads", lambda own=False: asked.append(own) or 1)
    x = np.random.default_rng(0).random(sort_split.MIN_N, dtype=np.float32)
    assert not sort_split.sort_into(x, np.empty_like(x))
    assert not sort_split.sort_rows(np.empty((4, sort_split.ROWS_MIN), np.float32))
    assert asked == [True, True]


def test_team_follows_load_in_call_and_blas_call(follow_load, monkeypatch):
    clock = follow_load
    cores.taken_cores()
    _window(clock, 0.2, others=1.0)
    seen = []
    cores.call(_busy_kernel(seen), ())
    assert seen == [1]
    blas = []
    monkeypatch.setattr(cores, "_set_blas_threads", blas.append)
    cores.blas_call(lambda: None, (), work=cores.BLAS_PARALLEL_WORK)
    assert blas == [1]
    monkeypatch.setattr(cores, "FOLLOW_LOAD", False)
    cores.blas_call(lambda: None, (), work=cores.BLAS_PARALLEL_WORK)
    assert blas == [1, 2]


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs a team of 2 threads")
def test_following_load_a_wait_with_no_busy_neighbour_is_no_stall(follow_load, monkeypatch):
    clock = follow_load
    monkeypatch.setattr(cores, "_CPUS", 4)     # 4 CPUs, 2 taken: the team of 2 still runs
    cores.taken_cores()
    _window(clock, 0.2, others=0.0)
    cores.call(_stalling_kernel([]), ())
    assert not cores.busy()                    # nobody else busy: a slow team thread, no stall
    _window(clock, 0.2, others=2.0)
    seen = []
    cores.call(_stalling_kernel(seen), ())
    assert seen == [2] and cores.busy()        # others busy: the stall starts the cool-down


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs a team of 2 threads")
def test_python_threads_calling_at_once_split_the_team(fresh_cores, monkeypatch):
    inside = threading.Barrier(2, timeout=30)
    seen = []

    def kernel():
        seen.append(numba.get_num_threads())
        inside.wait()  # both callers are inside call() now

    def caller():
        cores.call(kernel, ())
        cores.use_threads(cores.team_size())

    threads = [threading.Thread(target=caller) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # each caller joins the set before it counts it, so whichever counted last saw both
    # inside and took one thread (the appends may come in either order)
    assert len(seen) == 2 and 1 in seen
    assert not cores._active
    # (a first caller that got the team waited at the barrier, off its CPU, with another
    # caller inside: that counts as a stall and may have started a cool-down)
    monkeypatch.setattr(cores, "_until", 0.0)
    alone = []
    cores.call(_busy_kernel(alone), ())
    assert alone == [cores.team_size()]  # alone again: the whole team


def test_a_busy_loop_beside_counts_as_a_taken_core():
    import subprocess
    import sys
    cores.taken_cores()
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)
        cores.taken_cores()           # a window that may start before the loop ran
        time.sleep(2 * cores.SAMPLE_S + 0.1)
        assert cores.taken_cores() >= 1
    finally:
        proc.kill()
        proc.wait()


def test_threads_running_big_ops_at_once_get_right_answers():
    rng = np.random.default_rng(1)
    data = [rng.standard_normal(1 << 17).astype(np.float32) for _ in range(4)]
    errors = []

    def work(x):
        try:
            t = tl.asarray(x)
            for _ in range(5):
                np.testing.assert_array_equal((t * 2.0 + 1.0).numpy(),
                                              x * np.float32(2) + np.float32(1))
                np.testing.assert_allclose(float(tl.sum(t)), float(x.sum(dtype=np.float64)),
                                           rtol=1e-4, atol=1e-2)
                np.testing.assert_array_equal(tl.cumsum(t[:1000], axis=0).numpy(),
                                              np.cumsum(x[:1000]))
                assert int(tl.argmax(t)) == int(np.argmax(x))
        except BaseException as e:  # noqa: BLE001 - re-raised in the main thread
            errors.append(e)
    threads = [threading.Thread(target=work, args=(x,)) for x in data]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    assert not any(th.is_alive() for th in threads)
    if errors:
        raise errors[0]


def test_parallel_variant_compiles_in_the_background(monkeypatch):
    """First big call: the serial twin; once it has compiled, the parallel variant compiles on
    a background thread and serves later calls."""
    import types
    from numba import njit, prange

    @njit(nogil=True)
    def serial(out, x):
        for i in range(x.size):
            out[i] = x[i] * 2.0

    @njit(nogil=True, parallel=True)
    def parallel(out, x):
        for i in prange(x.size):
            out[i] = x[i] * 2.0

    mod = types.SimpleNamespace(serial=serial, parallel=parallel)
    monkeypatch.setattr(cores, "DEFER_PARALLEL_COMPILE", True)
    monkeypatch.setattr(cores, "threads", lambda own=False: 2)  # a team would run it (whatever the load)
    x = np.arange(10.0)
    out = np.empty_like(x)
    assert not cores.parallel_ready(mod)  # nothing compiled yet: run serial
    serial(out, x)
    assert not cores.parallel_ready(mod)  # a first big call: serial, nothing compiles
    assert parallel not in cores._compiling
    assert not cores.parallel_ready(mod)  # the second starts the background compile
    cores._compiling[parallel].join(120)
    assert cores.parallel_ready(mod)
    parallel(out, x)
    np.testing.assert_array_equal(out, x * 2.0)
    monkeypatch.setattr(cores, "DEFER_PARALLEL_COMPILE", False)
    mod2 = types.SimpleNamespace(serial=serial, parallel=njit(parallel=True)(parallel.py_func))
    assert cores.parallel_ready(mod2)  # not deferred: the caller compiles it now


def test_background_loads_hand_the_gil_over_promptly(monkeypatch):
    """A background compile's loads from the disk cache run with the GIL's switch interval at
    most cores.LOAD_SWITCH_S (each llvmlite call releases the GIL; taking it back from a busy
    user thread waited up to the whole interval); the interval before is put back after the
    last of several overlapping loads, whatever order they end in."""
    import sys
    from tensorlib.runtime.cpu import compile_child, numba_cache_load
    before = sys.getswitchinterval()
    assert before > cores.LOAD_SWITCH_S
    seen = []

    class Dispatcher:
        def compile(self, sig):
            seen.append(("compile", sys.getswitchinterval()))

    def load_cached(disp, sig):
        seen.append(("load", sys.getswitchinterval()))
        return False
    monkeypatch.setattr(numba_cache_load, "load_cached", load_cached)
    monkeypatch.setattr(compile_child, "compile_in_child",
                        lambda disp, sigs: seen.append(("child", sys.getswitchinterval())))
    cores._compile(Dispatcher(), [("sig",)])
    short = pytest.approx(cores.LOAD_SWITCH_S, abs=1e-6)  # (kept in whole microseconds)
    assert seen == [("load", short), ("child", before), ("compile", short)]
    assert sys.getswitchinterval() == before
    a, b = cores.prompt_handoffs(), cores.prompt_handoffs()
    a.__enter__()
    b.__enter__()
    a.__exit__(None, None, None)
    assert sys.getswitchinterval() == short  # b still loading
    b.__exit__(None, None, None)
    assert sys.getswitchinterval() == before


def test_one_thread_now_means_the_serial_twin(fresh_cores, monkeypatch):
    """A parallel variant on one thread does the serial twin's work plus the team's overhead
    (and the strided loop nest instead of the flat loop): team_ready says no while a launch
    would get one thread, compiled or not; parallel_ready (also the readiness rule of serial
    kernels compiled in the background) does not ask."""
    import types
    from numba import njit, prange

    @njit(nogil=True, parallel=True)
    def parallel(out, x):
        for i in prange(x.size):
            out[i] = x[i] * 3.0

    x = np.arange(10.0)
    parallel(np.empty_like(x), x)  # compiled
    mod = types.SimpleNamespace(serial=parallel.py_func, parallel=parallel)
    monkeypatch.setattr(cores, "threads", lambda own=False: 2)
    assert cores.team_ready(mod)
    monkeypatch.setattr(cores, "threads", lambda own=False: 1)
    assert not cores.team_ready(mod) and cores.parallel_ready(mod)


def test_threads_are_shared_with_other_python_threads_running_kernels(fresh_cores,
                                                                     monkeypatch):
    """threads() divides the free cores among the Python threads that asked within RECENT_S
    (each runs kernels: a team launched beside them would wait for a core); threads that went
    quiet stop counting and are forgotten."""
    clock = [1000.0]
    monkeypatch.setattr(cores, "_mono", lambda: clock[0])
    monkeypatch.setattr(cores, "_free_team", lambda n, sample=False: 4)
    monkeypatch.setattr(cores, "_recent", {})
    assert cores.threads() == 4          # alone
    cores._recent[-1] = clock[0]         # another Python thread asked just now
    assert cores.threads() == 2
    cores._recent.update({-2: clock[0], -3: clock[0]})
    assert cores.threads() == 1
    clock[0] += cores.RECENT_S * 2       # they went quiet
    assert cores.threads() == 4
    assert list(cores._recent) == [threading.get_ident()]
    cores._recent[-1] = clock[0]
    monkeypatch.setattr(cores, "_until", clock[0] + 60)  # a cool-down: one thread anyway
    assert cores.threads() == 1


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs a team of 2 threads")
def test_four_python_threads_run_big_ops_serially(fresh_cores, monkeypatch):
    """With four Python threads running big pointwise ops back to back on two cores, the
    kernels they launch are (nearly all) the serial ones: a 2-thread team would wait for a
    core another thread's kernel holds. Values are right throughout."""
    monkeypatch.setattr(cores, "FOLLOW_LOAD", False)
    monkeypatch.setattr(cores, "team_size", lambda: 2)
    # no thread goes quiet in the test's eyes (on a loaded machine a thread may wait >10 ms for
    # the GIL, and the last one running alone rightly gets the team): the going-quiet rule has
    # its own test above
    monkeypatch.setattr(cores, "RECENT_S", 60.0)
    launched = []
    real_call = cores.call
    monkeypatch.setattr(cores, "call", lambda fn, args, team=0, serial=None: (
        launched.append(1), real_call(fn, args, team, serial))[1])
    n = 1 << 19
    xs = [tl.asarray(np.full(n, float(i), np.float32)) for i in range(4)]
    errors, counts = [], [0] * 4
    start = threading.Barrier(4)

    def work(i):
        try:
            start.wait()
            for _ in range(30):
                y = xs[i] + xs[i]
                counts[i] += 1
                assert float(y[n - 1]) == 2.0 * i
        except Exception as e:  # noqa: BLE001
            errors.append(e)
    ths = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for th in ths:
        th.start()
    for th in ths:
        th.join(120)
    assert not errors and counts == [30] * 4
    assert len(launched) <= 12, f"{len(launched)} of 120 calls launched a thread team"


@pytest.fixture
def idle_rule(monkeypatch):
    """The after-a-pause rule on, over a fake clock that the fake kernels advance (times in
    powers of two: the rent's sums are exact); returns the clock, the log of what ran
    (("team", n) or ("serial",)) and a maker of kernels."""
    clock = {"now": 1000.0}
    ran = []
    threads = {"n": 0}
    monkeypatch.setattr(cores, "IDLE_SERIAL", True)
    monkeypatch.setattr(cores, "FOLLOW_LOAD", False)
    monkeypatch.setattr(cores, "team_size", lambda: 2)
    monkeypatch.setattr(cores, "STALL_S", float("inf"))
    monkeypatch.setattr(cores, "_until", 0.0)
    monkeypatch.setattr(cores, "_mono", lambda: clock["now"])
    monkeypatch.setattr(cores, "_perf", lambda: clock["now"])
    monkeypatch.setattr(cores, "use_threads", lambda n: threads.__setitem__("n", n))
    for name, value in (("_tls", threading.local()), ("_wake_loses", True),
                        ("_wake_cost", 2.0 ** -9), ("_waking", None), ("_awake", {})):
        monkeypatch.setattr(cores, name, value)

    def kernel(seconds, wake=0.0):
        """A parallel kernel taking ``seconds`` (plus ``wake`` when it wakes a sleeping
        team), and its serial twin (twice the time)."""
        def par():
            asleep = clock["now"] - cores._tls.burst.team_end >= cores.IDLE_S
            clock["now"] += seconds + (wake if asleep and threads["n"] > 1 else 0.0)
            ran.append(("team", threads["n"]))

        def ser():
            clock["now"] += 2 * seconds
            ran.append(("serial",))
        return par, ser
    return clock, ran, kernel


def test_after_a_pause_calls_run_serially_until_they_spent_a_wake(idle_rule):
    clock, ran, kernel = idle_rule
    par, ser = kernel(2.0 ** -12, wake=2.0 ** -7)  # awake 0.24 ms, one thread 0.49, wake 7.8
    for _ in range(6):
        cores.call(par, (), serial=ser)
    # the first wake cost is taken as 2**-9 s: four serial calls, then the team wakes (its
    # verdict at the next call, awake: 7.8 ms lost against 2 x 0.24 ms)
    assert ran == [("serial",)] * 4 + [("team", 2)] * 2
    assert cores._wake_loses and cores._wake_cost == 2.0 ** -7
    ran.clear()
    clock["now"] += 0.1                            # a pause: the team sleeps
    for _ in range(18):
        cores.call(par, (), serial=ser)
    assert ran == [("serial",)] * 16 + [("team", 2)] * 2  # 7.8 ms of serial calls first
    ran.clear()
    clock["now"] += 0.1
    cores.call(par, ())                            # no serial twin: the kernel on one thread
    assert ran == [("team", 1)]


def test_a_wake_that_pays_turns_the_rule_off_until_one_loses(idle_rule):
    clock, ran, kernel = idle_rule
    par, ser = kernel(2.0 ** -9, wake=2.0 ** -13)  # a long kernel, a cheap wake
    for _ in range(3):
        cores.call(par, (), serial=ser)            # serial (rent spent), wake, awake
    assert ran == [("serial",), ("team", 2), ("team", 2)] and not cores._wake_loses
    clock["now"] += 0.1
    cores.call(par, (), serial=ser)                # after a pause the team wakes: it pays
    assert ran[-1] == ("team", 2) and not cores._wake_loses
    slow, slow_ser = kernel(2.0 ** -9, wake=2.0 ** -7)
    cores.call(slow, (), serial=slow_ser)          # awake: this kernel's awake time
    clock["now"] += 0.1
    cores.call(slow, (), serial=slow_ser)          # a wake of 9.8 ms against 2 x 2 ms: it loses
    assert ran[-1] == ("team", 2) and cores._wake_loses and cores._wake_cost == 2.0 ** -7
    clock["now"] += 0.1
    cores.call(slow, (), serial=slow_ser)
    assert ran[-1] == ("serial",)


def test_each_python_thread_wakes_its_own_team(idle_rule):
    """OpenMP gives each calling thread its own team: one awake in this thread says nothing
    of another thread's, whose first call after its pause rents."""
    clock, ran, kernel = idle_rule
    par, ser = kernel(2.0 ** -9, wake=2.0 ** -7)
    for _ in range(3):
        cores.call(par, (), serial=ser)   # serial (the rent of 2**-9 s), then the team
    assert ran[-1] == ("team", 2)
    other = threading.Thread(target=cores.call, args=(par, ()), kwargs={"serial": ser})
    other.start()
    other.join()
    assert ran[-1] == ("serial",)
    cores.call(par, (), serial=ser)       # this thread's team is still awake
    assert ran[-1] == ("team", 2)


def test_the_rule_off_always_launches_the_team(idle_rule, monkeypatch):
    clock, ran, kernel = idle_rule
    monkeypatch.setattr(cores, "IDLE_SERIAL", False)
    par, ser = kernel(2.0 ** -12, wake=2.0 ** -7)
    for _ in range(2):
        clock["now"] += 0.1
        cores.call(par, (), serial=ser)
    assert ran == [("team", 2), ("team", 2)]


def test_rented_calls_take_no_load_sample(idle_rule, monkeypatch):
    """With the load rule on too: calls after a pause that run on one thread read no load
    sample (a cold /proc/stat read cost 40-50 us of them); the call that wakes the team does,
    and runs on the cores the load leaves (here one taken: one thread, the team not woken)."""
    clock, ran, kernel = idle_rule
    samples = []
    monkeypatch.setattr(cores, "FOLLOW_LOAD", True)
    monkeypatch.setattr(cores, "_CPUS", 2)
    # another process keeps one core busy: machine busy seconds grow with the clock (the
    # last sample a second before the calls)
    monkeypatch.setattr(cores, "_sample", [clock["now"] - 1.0, -1.0, 0.0, 0])
    monkeypatch.setattr(cores, "_proc", lambda: 0.0)

    def busy_s():
        samples.append(clock["now"])
        return clock["now"] - 1000.0
    monkeypatch.setattr(cores, "_machine_busy_s", busy_s)
    par, ser = kernel(2.0 ** -12, wake=2.0 ** -7)
    for _ in range(4):
        cores.call(par, (), serial=ser)  # the rent of 2**-9 s: four serial calls
    assert ran == [("serial",)] * 4 and samples == []
    clock["now"] += 0.5
    cores.call(par, (), serial=ser)      # the rent starts again after the pause
    assert ran[-1] == ("serial",) and samples == []
    for _ in range(4):
        cores.call(par, (), serial=ser)  # three more to spend the rent, then the wake's turn
    assert ran[-5:] == [("serial",)] * 4 + [("team", 1)]
    assert len(samples) == 1             # the rent spent: sampled, one core free


def test_a_rented_first_call_still_takes_the_first_load_sample(idle_rule, monkeypatch):
    """Skipping the sample needs one to count from: the process's first call samples even
    when it rents (the wake that follows then has a rate, not a lone baseline)."""
    clock, ran, kernel = idle_rule
    samples = []
    monkeypatch.setattr(cores, "FOLLOW_LOAD", True)
    monkeypatch.setattr(cores, "_CPUS", 2)
    monkeypatch.setattr(cores, "_sample", [float("-inf"), None, None, 0])
    monkeypatch.setattr(cores, "_runnable_others", lambda: 0)
    monkeypatch.setattr(cores, "_proc", lambda: 0.0)
    monkeypatch.setattr(cores, "_machine_busy_s",
                        lambda: samples.append(clock["now"]) or clock["now"] - 1000.0)
    par, ser = kernel(2.0 ** -12, wake=2.0 ** -7)
    cores.call(par, (), serial=ser)
    assert ran == [("serial",)] and len(samples) == 1
    clock["now"] += 0.5                  # a pause: rented again, and now with a baseline
    cores.call(par, (), serial=ser)
    assert ran[-1] == ("serial",) and len(samples) == 1


def test_big_ops_after_pauses_get_right_answers(fresh_cores, monkeypatch):
    """The rule on with real time: a pointwise op above the parallel grain after a pause runs
    the serial twin (the team stays asleep), the next one the team, with the same bits."""
    monkeypatch.setattr(cores, "IDLE_SERIAL", True)
    monkeypatch.setattr(cores, "FOLLOW_LOAD", False)
    monkeypatch.setattr(cores, "_wake_loses", True)
    monkeypatch.setattr(cores, "_wake_cost", 1e-9)  # one call's rent: the next wakes the team
    monkeypatch.setattr(cores, "_tls", threading.local())
    n = 1 << 19
    x = np.linspace(-3, 3, n, dtype=np.float32)
    t = tl.asarray(x)
    time.sleep(2 * cores.IDLE_S)
    first = tl.exp(t).numpy()
    assert cores._tls.burst.team_end == float("-inf")  # no team launched
    second = tl.exp(t).numpy()
    if cores.team_size() > 1:
        assert cores._tls.burst.team_end > float("-inf")
    np.testing.assert_array_equal(first, second)
    np.testing.assert_allclose(first, np.exp(x), rtol=4e-7)  # (NumPy: ~1 ulp)
