"""The pace is the agent's own time: the run-queue delay the host's contention causes is not
charged (grader.common.policy.own_act_seconds), and the hard limit still stops an agent that hangs.

Contention is made certain, not hoped for: the sandbox is started on one core (it inherits
this process's affinity; a container, its CPU set) and processes spinning on that same core take turns with it."""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import re
import time

import pytest

from grader.common.faults import FaultKind
from grader.common.limits import DEFAULT_LIMITS
from grader.common.policy import hard_extension, own_act_seconds
from grader.sandbox import pinning, schedstat

from .conftest import ENV_INFO, board

pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.skipif(not schedstat.available(), reason="this kernel keeps no schedstat"),
]


def test_the_time_charged_is_wall_less_the_delay_but_never_less_than_the_cpu():
    assert own_act_seconds(0.030, ran=0.010, queued=0.020) == pytest.approx(0.010)
    assert own_act_seconds(0.030, ran=0.030, queued=0.030) == pytest.approx(0.030)  # its own threads queued
    assert own_act_seconds(0.030, ran=0.0, queued=0.0) == 0.030  # asleep: all of it
    assert own_act_seconds(0.030, ran=0.060, queued=0.0) == 0.030  # never more than the wall time
    assert own_act_seconds(0.030, ran=0.0, queued=0.050) == 0.0


def test_the_hard_limit_is_extended_by_the_delay_at_most_once_more():
    limits = dataclasses.replace(DEFAULT_LIMITS, act_hard_seconds=2.0)
    assert hard_extension(0.5, limits) == 0.5
    assert hard_extension(30.0, limits) == 2.0
    assert hard_extension(-1.0, limits) == 0.0


def _spin() -> None:
    while True:
        pass


@pytest.fixture
def one_busy_core():
    """This process and its sandboxes on one core, with two processes spinning on it."""
    core = sorted(os.sched_getaffinity(0))[0]
    saved = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {core})
    pinning.set_core(core)  # a container gets it as its CPU set
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(2)]
    for p in spinners:
        p.start()
        os.sched_setaffinity(p.pid, {core})
    try:
        yield core
    finally:
        for p in spinners:
            p.kill()
            p.join()
        pinning.set_core(None)
        os.sched_setaffinity(0, saved)


def test_the_sched_clock_sees_a_contended_process_wait(one_busy_core):
    child = multiprocessing.Process(target=_spin, daemon=True)
    child.start()
    try:
        clock = schedstat.SchedClock(lambda: [child.pid])
        before = clock.sample()
        # Until it has run a while, however long other work on the machine makes that take.
        deadline = time.monotonic() + 60
        ran = waited = 0.0
        while ran < 0.2 and time.monotonic() < deadline:
            time.sleep(0.1)
            ran, waited = clock.delta(before, clock.sample())
    finally:
        child.kill()
        child.join()
        clock.close()
    # Three spinners on one core: each runs about a third of the time and waits the rest (any
    # other work on the core only makes it wait more).
    assert ran >= 0.2 and waited > ran


def test_a_contended_agent_is_charged_its_own_time(launch, one_busy_core):
    # A pace the agent's 10 ms of work keeps, and its wall time beside two spinners does not.
    limits = dataclasses.replace(
        DEFAULT_LIMITS,
        pace_seconds_per_cell=0.015 / 64,
        pace_min_acts=20,
        pace_stop_factor=100.0,
        act_hard_seconds=5.0,
        prepare_seconds=20.0,
    )
    handle = launch("fixed_work", limits=limits)
    assert handle.prepare(ENV_INFO) is None
    obs, mask = board()
    wall = time.monotonic()
    for _ in range(30):
        action, fault = handle.act(obs, mask)
        assert fault is None, fault
    wall = (time.monotonic() - wall) / 30
    stats = handle.phase_stats["session"]
    assert wall > limits.pace_seconds(8, 8), "the spinners took no time from the agent: nothing was tested"
    assert stats.mean_seconds < limits.pace_seconds(8, 8) and stats.queued_seconds > 0
    assert handle.end_session(8, 8) is None  # no pace fault: the delay was the host's


def test_an_agent_that_hangs_spinning_on_a_busy_core_is_still_stopped(launch, one_busy_core):
    limits = dataclasses.replace(DEFAULT_LIMITS, act_hard_seconds=1.0, act_soft_seconds=0.5, prepare_seconds=20.0)
    handle = launch("busy_loop", limits=limits)
    assert handle.prepare(ENV_INFO) is None
    obs, mask = board()
    action, fault = handle.act(obs, mask)
    assert action is None and fault is not None and fault.kind is FaultKind.TIMEOUT
    # It waited behind the spinners: the limit was extended, but at most once more the hard limit.
    extended = re.search(r"extended by ([0-9.]+) s of run-queue delay", fault.detail)
    assert extended is not None, fault.detail
    assert 0 < float(extended.group(1)) <= limits.act_hard_seconds
