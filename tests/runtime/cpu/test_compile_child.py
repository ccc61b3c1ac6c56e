"""Background compiles in a child process (runtime/cpu/compile_child.py): what the child
compiles reaches this process through Numba's disk cache; whatever it cannot do answers False
(the caller then compiles here, as before)."""
from __future__ import annotations

import importlib.util
import sys
import uuid

import numpy as np
import pytest
from numba import njit, types

from tensorlib.runtime.cpu import compile_child, cores

_SOURCE = """
from numba import njit, prange

@njit(cache=True, nogil=True)
def serial(out, x):
    for i in range(x.size):
        out[i] = x[i] * 3.0 + 1.0

@njit(cache=True, nogil=True, parallel=True)
def parallel(out, x):
    for i in prange(x.size):
        out[i] = x[i] * 3.0 + 1.0

@njit(cache=True)
def plus_one(a):
    return a + 1.0
"""


@pytest.fixture
def kernel_module(tmp_path):
    """A module of disk-cached kernels in a file of its own, as the kernel generators write
    them (a fresh name and file each test: nothing cached yet)."""
    name = f"tl_test_child_{uuid.uuid4().hex[:12]}"
    path = tmp_path / f"{name}.py"
    path.write_text(_SOURCE)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    yield mod
    sys.modules.pop(name, None)


_ARR = types.Array(types.float64, 1, "C")


def test_the_child_compiles_into_the_disk_cache(kernel_module):
    par = kernel_module.parallel
    sig = (_ARR, _ARR)
    assert compile_child.compile_in_child(par, [sig])
    assert not par.signatures  # nothing compiled in this process yet
    par.compile(sig)
    # loaded from the cache the child wrote, not compiled here (fails if it wrote nothing)
    assert sum(par.stats.cache_hits.values()) == 1
    assert not par.stats.cache_misses
    x = np.arange(1000.0)
    out = np.empty_like(x)
    par(out, x)
    np.testing.assert_array_equal(out, x * 3.0 + 1.0)


def test_a_failed_compile_answers_false_and_the_child_serves_on(kernel_module):
    # a str argument does not type (str + float): the child reports it, the parent compiles
    # (and raises) itself
    assert not compile_child.compile_in_child(kernel_module.plus_one, [(types.unicode_type,)])
    assert compile_child.compile_in_child(kernel_module.plus_one, [(types.float64,)])
    kernel_module.plus_one.compile((types.float64,))
    assert sum(kernel_module.plus_one.stats.cache_hits.values()) == 1


def test_what_a_child_cannot_reach_is_left_to_the_caller():
    @njit(cache=False)
    def no_disk_cache(a):
        return a + 1

    assert compile_child.locate(no_disk_cache) is None
    assert not compile_child.compile_in_child(no_disk_cache, [(types.int64,)])


def test_the_background_compile_goes_through_the_child(kernel_module, monkeypatch):
    """cores.parallel_ready's background compile: the child compiles the parallel variant and
    the thread loads it from the disk cache."""
    mod = kernel_module
    monkeypatch.setattr(cores, "DEFER_PARALLEL_COMPILE", True)
    monkeypatch.setattr(cores, "threads", lambda own=False: 2)  # a team would run it (whatever the load)
    x = np.arange(64.0)
    out = np.empty_like(x)
    assert not cores.parallel_ready(mod, (out, x))  # a first big call: the serial twin
    assert not cores.parallel_ready(mod, (out, x))  # the second starts the compile
    cores._compiling[mod.parallel].join(300)
    assert cores.parallel_ready(mod, (out, x))
    assert sum(mod.parallel.stats.cache_hits.values()) == 1  # loaded, not compiled here
    mod.parallel(out, x)
    np.testing.assert_array_equal(out, x * 3.0 + 1.0)


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_a_forked_process_gets_a_child_of_its_own(kernel_module):
    """A fork while a background thread holds the request lock (it waits on the child) must
    not leave the forked process's compiles waiting forever on a lock nobody releases."""
    import os
    compile_child._lock.acquire()  # as a waiting background thread holds it
    try:
        pid = os.fork()
        if pid == 0:  # the forked process: its own lock, its own child
            import signal
            signal.alarm(120)  # blocked on the inherited lock: killed, the test fails
            ok = compile_child.compile_in_child(kernel_module.plus_one, [(types.float64,)])
            os._exit(0 if ok else 3)
    finally:
        compile_child._lock.release()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_lines_a_child_prints_at_start_up_are_skipped(kernel_module, tmp_path, monkeypatch):
    """Answers carry their request's number: output of the child's start-up (a sitecustomize
    that prints) is not taken for an answer."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("print('hello from sitecustomize')\nprint('ok')\n")
    monkeypatch.setenv("PYTHONPATH", str(site))
    for name, value in (("_proc", None), ("_pid", None), ("_broken", False), ("_sent", 0)):
        monkeypatch.setattr(compile_child, name, value)  # a child of this test's own
    try:
        assert compile_child.compile_in_child(kernel_module.plus_one, [(types.float64,)])
        assert not compile_child.compile_in_child(kernel_module.plus_one,
                                                  [(types.unicode_type,)])
        assert compile_child.compile_in_child(kernel_module.plus_one, [(types.int64,)])
    finally:
        if compile_child._proc is not None:
            compile_child._proc.kill()
            compile_child._proc.wait()


def test_a_variant_already_on_disk_loads_on_the_thread(kernel_module, monkeypatch):
    """What Numba's disk cache holds is loaded by the background thread itself (milliseconds):
    no request to the child, whose start alone takes ~0.5 s (a warm machine's parallel
    variants served serially meanwhile: benchmarks/core_cpu.py's 1e7 add went 2.5 -> 5-10 ms)."""
    par = kernel_module.parallel
    sig = (_ARR, _ARR)
    assert compile_child.compile_in_child(par, [sig])  # now on disk, not loaded here

    def no_child(*args):
        raise AssertionError("the child was asked for what the disk cache holds")

    monkeypatch.setattr(compile_child, "compile_in_child", no_child)
    cores._compile(par, [sig])
    assert par.signatures == [sig]
    # loaded from the cache directly: Dispatcher.compile (which counts hits and misses) not run
    assert not par.stats.cache_hits and not par.stats.cache_misses


_EXITS_WHILE_COMPILING = """
import importlib.util, sys, time
import numpy as np
from tensorlib.runtime.cpu import compile_child, cores

spec = importlib.util.spec_from_file_location(sys.argv[1], sys.argv[2])
mod = importlib.util.module_from_spec(spec)
sys.modules[sys.argv[1]] = mod
spec.loader.exec_module(mod)
cores.DEFER_PARALLEL_COMPILE = True
cores.threads = lambda own=False: 2
x = np.arange(64.0)
out = np.empty_like(x)
cores.parallel_ready(mod, (out, x))
cores.parallel_ready(mod, (out, x))  # the second big call: the background compile starts
deadline = time.monotonic() + 120
while not compile_child._in_flight and time.monotonic() < deadline:
    time.sleep(0.005)
assert compile_child._in_flight, "no request reached the child"
print(compile_child._proc.pid, flush=True)
# the script ends here, its request in flight
"""


def test_a_compile_running_at_exit_finishes_in_the_child(kernel_module, tmp_path):
    """A script that ends while the child compiles what it asked for: the script exits (its
    waiting thread does not hold it), and the child finishes the compile into the disk cache,
    where the next process finds it (a killed child left nothing: each run of a short script
    went cold again)."""
    import os
    import subprocess
    import time

    script = tmp_path / "exits_while_compiling.py"
    script.write_text(_EXITS_WHILE_COMPILING)
    run = subprocess.run([sys.executable, str(script), kernel_module.__name__,
                          kernel_module.__file__], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    child = int(run.stdout.split()[-1])
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:  # the orphaned child exits once its compile is done
        try:
            with open(f"/proc/{child}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    break  # exited (not reaped yet: a container's init may not reap)
        except FileNotFoundError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the child did not exit after its compile")
    par = kernel_module.parallel
    par.compile((_ARR, _ARR))
    assert sum(par.stats.cache_hits.values()) == 1  # what the child wrote
    assert not par.stats.cache_misses


def test_no_child_starts_once_the_interpreter_is_shutting_down(kernel_module, monkeypatch):
    """A background thread asking for its first child while the script ends (threading's exit
    hooks already running) starts none: no exit hook could tell it to stop, and exit would wait
    for its whole compile."""
    import threading

    def shutting_down(func, *args, **kwargs):
        raise RuntimeError("can't register atexit after shutdown")

    for name, value in (("_proc", None), ("_pid", None), ("_broken", False), ("_sent", 0),
                        ("_hooked_pid", None), ("_closing", False)):
        monkeypatch.setattr(compile_child, name, value)  # no child yet in this "process"
    monkeypatch.setattr(threading, "_register_atexit", shutting_down)
    assert not compile_child.compile_in_child(kernel_module.plus_one, [(types.float64,)])
    assert compile_child._proc is None
    assert compile_child.closing()
