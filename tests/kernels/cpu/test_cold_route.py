"""kernels/cpu/cold_route.py: ready_soon's memory of a kernel's readiness (no kernel is
compiled here: kernel_ready and the clock are stand-ins)."""
from tensorlib.kernels.cpu import cold_route


def test_ready_soon_asks_again_only_after_its_recheck_time(monkeypatch):
    asked, answer, now = [], [False], [100.0]
    monkeypatch.setattr(cold_route, "kernel_ready",
                        lambda disp, args, work, calls=1: asked.append(work) or answer[0])
    monkeypatch.setattr(cold_route.cores, "_mono", lambda: now[0])
    key = ("test ready_soon", 1)
    make = lambda: ("kernel", ())  # noqa: E731
    assert not cold_route.ready_soon(key, 10, make) and len(asked) == 1
    now[0] += cold_route.RECHECK_S / 2
    assert not cold_route.ready_soon(key, 10, make) and len(asked) == 1  # the answer stands
    answer[0] = True
    assert not cold_route.ready_soon(key, 10, make) and len(asked) == 1
    now[0] += cold_route.RECHECK_S
    assert cold_route.ready_soon(key, 10, make) and len(asked) == 2     # asked again: ready
    now[0] += 10 * cold_route.RECHECK_S
    answer[0] = False
    assert cold_route.ready_soon(key, 10, make) and len(asked) == 2     # ready stays known
    cold_route.READY.discard(key)
    cold_route._not_ready_until.pop(key, None)


def test_ready_every_checks_every_nth_call_and_counts_the_others(monkeypatch):
    """While its kernel is not ready, ready_every types the arguments (kernel_ready) on every
    CHECK_EVERY-th call only, handing the calls it skipped to the compile rule's count; once
    ready, never again."""
    checks = []

    def fake_ready(disp, args, work, calls=1):
        checks.append(calls)
        return len(checks) >= 3
    monkeypatch.setattr(cold_route, "kernel_ready", fake_ready)
    key = ("test ready_every", object())
    every = cold_route.CHECK_EVERY
    answers = [cold_route.ready_every(key, 10, lambda: (None, ())) for _ in range(3 * every)]
    assert checks == [1, every, every]            # the first call, then every CHECK_EVERY-th
    assert answers[:2 * every] == [False] * (2 * every)
    assert all(answers[2 * every:])
    assert key in cold_route.READY
    cold_route.READY.discard(key)
