import os
import sys

import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, os.path.dirname(__file__))

# Kernel compiles dominate first runs; property tests keep example counts modest.
settings.register_profile("tensorlib", max_examples=25, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow,
                                                 HealthCheck.data_too_large])
settings.load_profile("tensorlib")

# Tests check the parallel variants too: compile them at their first big call (users' scripts
# defer that compile to a background thread, see runtime/cpu/cores.py).
from tensorlib.runtime.cpu import cores  # noqa: E402

cores.DEFER_PARALLEL_COMPILE = False
# ... and run them whatever the other test worker on the machine does (the suite runs two
# workers on two cores: each would see the other as a busy neighbour and go serial). The rule
# that sizes the team by the cores left free has tests of its own (test_cpu_cores.py).
cores.FOLLOW_LOAD = False
# ... nor after a pause (a test starting after another's set-up would get one thread): that
# rule's tests turn it on.
cores.IDLE_SERIAL = False


@pytest.fixture
def whole_team(monkeypatch):
    """Parallel kernels run on the whole team for the test: no one-thread cool-down from an
    earlier test's stall, and none started by this test's (the other worker's load makes a
    big kernel "stall" at times: a test that asserts its parallel twin ran would then fail)."""
    monkeypatch.setattr(cores, "_until", 0.0)
    monkeypatch.setattr(cores, "STALL_S", float("inf"))
    monkeypatch.setattr(cores, "_recent", {})  # no Python thread of an earlier test counts


@pytest.fixture
def kernel_sort_routes(monkeypatch):
    """Small sorts take the sort kernel's own routes, not NumPy's sorts along an axis
    (kernels/cpu/sort_small.py), so tests of those routes keep exercising them at test sizes."""
    from tensorlib.kernels.cpu import sort_small
    monkeypatch.setattr(sort_small, "SMALL_VALUES", 0)
    monkeypatch.setattr(sort_small, "SMALL_INDICES", 0)


def pytest_collection_modifyitems(config, items):
    from tensorlib.runtime.cuda.probe import cuda_gpu_present
    if cuda_gpu_present():
        return
    skip = pytest.mark.skip(reason="needs a real CUDA GPU (none present)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def _cuda_backend(backend, **env):
    """CUDA on ``backend`` with environment ``env``, default allocator settings, the context
    reset before and after."""
    from tensorlib.runtime.cuda import context
    mp = pytest.MonkeyPatch()
    mp.setenv("TENSORLIB_CUDA_BACKEND", backend)
    for name, value in env.items():
        mp.setenv(name, value)
    mp.delenv("TENSORLIB_CUDA_ALLOC_CONF", raising=False)
    context.reset()
    yield
    context.reset()
    mp.undo()
    context.reset()


@pytest.fixture(scope="module")
def cuda_interpret():
    """CUDA on the interpret backend (host memory, Triton's interpreter) for a test module:
    two devices, a 1 GiB cap, default allocator settings. Modules use it with
    ``pytestmark = pytest.mark.usefixtures("cuda_interpret")`` or request it per test."""
    yield from _cuda_backend("interpret", TENSORLIB_CUDA_DEVICE_COUNT="2",
                             TENSORLIB_CUDA_MEMORY=str(1 << 30))


@pytest.fixture(scope="module")
def cuda_real():
    """CUDA on the real driver (a GPU; tests using it are marked ``gpu``) for a test module,
    default allocator settings."""
    yield from _cuda_backend("real")


@pytest.fixture(params=["cpu", "cuda"])
def device(request):
    """One test body on every device: "cpu", and "cuda" on the interpret backend (no GPU needed;
    keep such tests small, the Triton interpreter is slow)."""
    if request.param == "cuda":
        request.getfixturevalue("cuda_interpret")
    return request.param


@pytest.fixture
def team_launches(monkeypatch):
    """The names of the kernels launched through runtime/cpu/cores.call during the test, with
    a team of two threads on offer (cores.threads patched to 2)."""
    from tensorlib.runtime.cpu import cores
    names = []
    real = cores.call

    def call(fn, args, team=0, serial=None):
        names.append(getattr(fn, "__name__", repr(fn)))
        return real(fn, args, team, serial)

    monkeypatch.setattr(cores, "threads", lambda own=False: 2)
    monkeypatch.setattr(cores, "call", call)
    return names

