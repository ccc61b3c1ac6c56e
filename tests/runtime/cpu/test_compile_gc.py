"""runtime/cpu/compile_gc.py: Numba compiles run with the cyclic garbage collector paused."""
import gc

import numba
from numba.core import dispatcher
from numba.extending import overload

import tensorlib.kernels.cpu  # noqa: F401  (installs the wrapper)
from tensorlib.runtime.cpu import compile_gc


def test_paused_nests_and_turns_the_collector_back_on():
    assert gc.isenabled()
    with compile_gc.paused():
        with compile_gc.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer one still open
    assert gc.isenabled()


def test_a_collector_the_program_turned_off_stays_off():
    gc.disable()
    try:
        with compile_gc.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def _probe(x):
    pass


_seen = []


@overload(_probe)
def _probe_typing(x):
    _seen.append(gc.isenabled())  # runs while the function calling _probe compiles
    return lambda x: None


def test_a_numba_compile_runs_with_the_collector_off():
    assert compile_gc.install() and hasattr(dispatcher.Dispatcher.compile, "__wrapped__")

    @numba.njit
    def f(x):
        _probe(x)
        return x + 1

    assert f(41) == 42
    assert _seen and not any(_seen)
    assert gc.isenabled()
