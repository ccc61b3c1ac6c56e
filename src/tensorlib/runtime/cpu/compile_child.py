"""Background compiles in a child process: the parallel variants that
:func:`cores.parallel_ready` compiles behind a serial twin's calls hold neither this process's GIL
nor its garbage collector.

Compiled on a thread here, a parallel variant (1-3 s) took the GIL from the user's thread for
its Python phases, and the garbage it made set off full collections on that thread: measured on
2 cores (2026-12-05), a loop of 1,000-element adds beside the compile of ``sin``'s parallel
variant saw 150-165 calls over 1 ms and one of 47-51 ms (a generation-2 collection of Numba's
objects, run on the compile thread with the GIL held). The variants are disk-cached Numba
dispatchers defined at module level in a file (the generated kernel modules), so a child
process can compile them: ``python -m tensorlib.runtime.cpu.compile_child``, started at the first
request and kept for the process's life, imports the dispatcher's file under the same module
name, compiles the signatures, which writes them to Numba's disk cache, and answers; the
waiting thread (no GIL held while it waits) then loads them with ``dispatcher.compile``, which
finds them in that cache. One request at a time. Anything the child cannot do (a dispatcher
without a disk cache or not reachable by name, a failed compile, a child that did not start or
died) answers False and the caller compiles in this process, as before.

At interpreter exit a compile the child is running is left to finish: the waiting thread stops
waiting (a byte on a wake-up pipe ends its wait at once), and the child, its request done and
its stdin closed, writes the kernel to the disk cache and exits, so the next process loads what
this one asked for. Killing it had lost every compile still running when a short script ended:
a script whose small broadcast adds ran on the cold route (~50 us a call against the compiled
loop nest's ~8) ran it again on every run. An idle child is killed.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import pickle
import select
import struct
import subprocess
import sys
import threading

__all__ = ["compile_in_child", "locate", "closing", "ENABLED"]

ENABLED = os.environ.get("TENSORLIB_COMPILE_IN_CHILD", "1") != "0"
_HEAD = struct.Struct("<Q")  # request length
_ANSWER = b"tensorlib-compile "  # an answer's line: this, the request's number, ok / failed

_lock = threading.Lock()
_proc = None       # the child (Popen), started by this process (_pid)
_pid = None
_broken = False    # the child could not start or died: compile here from now on
_sent = 0          # requests sent (their numbers)
_closing = False   # set at interpreter exit: waiting threads give up instead of compiling
_in_flight = False  # a request sent and its answer not read yet
_wake = None       # (read fd, write fd) of the pipe whose byte ends a wait at exit
_unread = b""      # what was read from the child past the last answer line


def closing() -> bool:
    """True once the interpreter is exiting: a background compile should not start now."""
    return _closing


def locate(dispatcher):
    """(module name, file, qualified name) by which a child finds ``dispatcher``, or None when
    it has no disk cache (what the child compiles would not reach this process) or is not
    reachable by name from its module's file (defined inside a function)."""
    from numba.core.caching import FunctionCache
    if not isinstance(getattr(dispatcher, "_cache", None), FunctionCache):
        return None
    fn = dispatcher.py_func
    if "<" in fn.__qualname__:
        return None
    path = getattr(sys.modules.get(fn.__module__), "__file__", None)
    if not path or not os.path.isfile(path):
        return None
    return fn.__module__, path, fn.__qualname__


def compile_in_child(dispatcher, sigs) -> bool:
    """Has the child compile ``dispatcher`` for each of ``sigs`` (tuples of Numba types) into
    Numba's disk cache; True when it did (``dispatcher.compile(sig)`` then loads from there),
    False when the caller must compile here (see the module docstring)."""
    where = locate(dispatcher) if ENABLED else None
    if where is None or _broken or _closing:
        return False
    global _sent, _in_flight
    with _lock:
        if _closing:
            return False  # (exit began while this thread waited for the lock)
        proc = _child()
        if proc is None:
            return False
        _sent += 1
        try:
            payload = pickle.dumps((_sent, where, [tuple(s) for s in sigs]))
        except Exception:  # noqa: BLE001 - a type that does not pickle: compiled here
            return False
        answer = _ANSWER + b"%d " % _sent
        try:
            proc.stdin.write(_HEAD.pack(len(payload)) + payload)
            proc.stdin.flush()
            _in_flight = True
            line = _await_answer(proc, answer)
        except (OSError, ValueError):
            line = b""
        _in_flight = False
        if _closing:  # (line is None: woken by _close)
            return False  # the interpreter is exiting: the child finishes the compile alone
        if not line:
            _give_up()
        return line == answer + b"ok\n"


def _await_answer(proc, answer):
    """The child's line answering request ``answer`` (lines its start-up printed are skipped),
    waited for without the GIL; b"" when the child died, None once the interpreter exits."""
    global _unread
    fd = proc.stdout.fileno()
    buf = _unread
    while True:
        nl = buf.find(b"\n")
        if nl >= 0:
            line, buf = buf[:nl + 1], buf[nl + 1:]
            if line.startswith(answer):
                _unread = buf
                return line
            continue
        if _closing:
            return None
        ready = select.select([fd, _wake[0]], [], [])[0]
        if fd not in ready:
            return None  # woken by _close
        data = os.read(fd, 1 << 16)
        if not data:
            _unread = b""
            return b""
        buf += data


def _child():
    """The running child, started if need be; None when there is none to be had."""
    global _proc, _pid, _wake, _unread
    if _proc is not None and _pid == os.getpid():
        if _proc.poll() is None:
            return _proc
        _give_up()
        return None
    # none yet, or one this process inherited through fork() (its pipes are the parent's)
    from numba.core import config

    from ..cache_files import cache_root
    env = dict(os.environ, TENSORLIB_CACHE_DIR=cache_root())
    if config.CACHE_DIR:
        env["NUMBA_CACHE_DIR"] = config.CACHE_DIR
    # the child imports the tensorlib this process runs, wherever it was found
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    if not _exit_hook():
        return None  # the interpreter is exiting: no child now
    if _wake is None:
        _wake = os.pipe()
    _unread = b""
    try:
        # -P (3.11+): no module of the working directory shadows what the child imports
        safe_path = ["-P"] if sys.version_info >= (3, 11) else []
        _proc = subprocess.Popen([sys.executable, *safe_path, "-m", __name__],
                                 stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    except OSError:
        _give_up()
        return None
    _pid = os.getpid()
    return _proc


_hooked_pid = None  # the process whose exit runs _close


def _exit_hook() -> bool:
    """Has _close run at this process's exit, before non-daemon threads are joined (threading's
    exit hooks), registered before a child starts: registered after, a child started as the
    script ended was never told, and its waiting thread held the exit for the whole compile.
    False (and ``closing()`` from now on) once the interpreter is shutting down."""
    global _hooked_pid, _closing
    if _hooked_pid == os.getpid():
        return True
    register = getattr(threading, "_register_atexit", None)
    if register is not None:
        try:
            register(_close)
        except RuntimeError:  # the interpreter is already shutting down
            _closing = True
            return False
    _hooked_pid = os.getpid()
    return True


def _after_fork_in_child():
    """A forked process has its own child to start: the parent's pipes are not its own, and a
    background thread of the parent may have held the lock at the fork (nothing in this
    process would ever release it)."""
    global _lock, _proc, _pid, _broken, _sent, _in_flight, _wake, _unread
    _lock = threading.Lock()
    _proc = _pid = None
    _broken = _in_flight = False
    _sent = 0
    _wake = None  # (the parent's pipe would wake the parent's thread)
    _unread = b""


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _give_up():
    global _broken
    _broken = True
    if _proc is not None and _proc.poll() is None:
        _proc.kill()


def _close():
    """At interpreter exit: threads waiting on the child return at once (and do not compile here
    instead: see :func:`closing`); a compile the child is running finishes there (see the
    module docstring), an idle child is stopped."""
    global _closing
    _closing = True
    if _proc is None or _pid != os.getpid() or _proc.poll() is not None:
        return
    if not _in_flight:
        _proc.kill()
        return
    try:
        os.write(_wake[1], b"x")
        _proc.stdin.close()  # (EOF once the request is done: the child exits)
    except (OSError, ValueError):
        pass


# ---- the child ----------------------------------------------------------------------------
def _find(modname, path, qualname):
    mod = sys.modules.get(modname)
    if mod is None or getattr(mod, "__file__", None) != path:
        try:
            mod = importlib.import_module(modname)
        except ImportError:
            mod = None
        if mod is None or getattr(mod, "__file__", None) != path:
            # a generated module: its file, under the name the parent gave it
            spec = importlib.util.spec_from_file_location(modname, path)
            mod = importlib.util.module_from_spec(spec)
            sys.modules[modname] = mod
            spec.loader.exec_module(mod)
    obj = mod
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _serve(requests, replies):
    # (a kernel module imports tensorlib.kernels.cpu, which installs the Numba hooks the parent
    # compiles with: vector width, runtime module)
    while True:
        head = requests.read(_HEAD.size)
        if len(head) < _HEAD.size:
            return  # the parent closed the pipe
        number, (modname, path, qualname), sigs = pickle.loads(
            requests.read(_HEAD.unpack(head)[0]))
        answer = _ANSWER + b"%d " % number
        try:
            dispatcher = _find(modname, path, qualname)
            for sig in sigs:
                dispatcher.compile(sig)
            replies.write(answer + b"ok\n")
        except Exception:  # noqa: BLE001 - the parent compiles it and reports the error
            replies.write(answer + b"failed\n")
        try:
            replies.flush()
        except BrokenPipeError:
            return  # the parent exited while this compile ran (it is in the disk cache)


if __name__ == "__main__":
    # answers go through a private copy of stdout; anything printed goes to stderr
    _replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    _serve(sys.stdin.buffer, _replies)
