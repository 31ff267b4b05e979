"""A pairing's two agents share one core and take turns: the agent not to move is stopped,
every process of its sandbox, from its reply to its next request (docs/rules.md, "Your
sandbox runs on a core of its own"). So an opponent that spins while you are to move gets
nothing done and takes nothing from you, and a game holds one core (the capacity plan)."""

from __future__ import annotations

import os

import pytest

from engine import public_tier
from grader.common.policy import PAIRING
from grader.play.match import env_info, play_game
from grader.sandbox import pinning

from .conftest import TEST_LIMITS

pytestmark = pytest.mark.timeout(300)
SPEC = public_tier()[0]


@pytest.fixture
def one_core():
    """The sandboxes started here on one core (a container: its CPU set), as a pairing's are."""
    core = sorted(os.sched_getaffinity(0))[0]
    pinning.set_core(core)
    try:
        yield core
    finally:
        pinning.set_core(None)


def _frozen(launch, name):
    handle = launch(name, limits=TEST_LIMITS)
    assert handle.prepare(env_info(SPEC, 0)) is None
    assert handle.freeze() is None
    handle.enter_phase(PAIRING)
    return handle


def _cpu(handle) -> float:
    seconds = handle.transport.cpu_seconds()
    assert seconds is not None, "the sandbox's CPU time is not readable here: nothing can be tested"
    return seconds


class OnItsTurns:
    """The CPU time (each sandbox's own, from its cgroup) that `mover` and `opponent` use while
    `mover` is asked for its moves: what the opponent takes of the mover's turns. Counted from
    the agents' own accounting, so other work on the machine changes neither figure's share."""

    def __init__(self, mover, opponent):
        self.mover_cpu = self.opponent_cpu = 0.0
        act = mover.act

        def counted(obs, mask):
            mine, theirs = _cpu(mover), _cpu(opponent)
            try:
                return act(obs, mask)
            finally:
                self.mover_cpu += _cpu(mover) - mine
                self.opponent_cpu += _cpu(opponent) - theirs

        mover.act = counted


def test_an_opponent_that_spins_on_your_turns_is_stopped_and_costs_you_nothing(launch, one_core):
    # Two processes spinning from prepare (one in a session of its own) against 10 ms of work a
    # move, both sandboxes on one core.
    spinner, worker = _frozen(launch, "idle_spinner"), _frozen(launch, "fixed_work")
    for handle in (spinner, worker):
        assert handle.begin_pairing() is None
    turns = OnItsTurns(worker, spinner)
    for seed in range(2):
        play_game(SPEC, spinner, worker, seed)
        play_game(SPEC, worker, spinner, seed)
    work = worker.phase_stats[PAIRING]
    assert spinner.alive and worker.alive and work.count > 50
    # The spinner's pairing fork started its spinning processes (those of prepare ended at freeze).
    assert len(spinner.process.pids()) > 2, "the spinner's pairing started no processes: nothing is tested"
    # Without turns, the spinner's group would take as much of the one core as the worker's.
    assert turns.mover_cpu >= work.count * 0.010
    assert turns.opponent_cpu < 0.05 * turns.mover_cpu, vars(turns)
    # The worker is charged its own 10 ms a move (whatever delay the host's other work caused).
    assert work.mean_seconds < 0.015, work.to_dict()
    for handle in (spinner, worker):
        assert handle.end_pairing() is None
    # Between pairings nothing of the pairing runs: its spinning processes ended with it, and
    # the sandbox holds its init and the frozen agent alone.
    assert len(spinner.process.pids()) == 2, spinner.process.pids()


def test_a_pairing_plays_the_same_games_with_turns_as_one_process_would(launch, one_core):
    """Stopping and continuing the sandbox at every turn changes no move."""
    runs = []
    for _ in range(2):
        a, b = _frozen(launch, "random_agent"), _frozen(launch, "stateful_counter")
        for handle in (a, b):
            assert handle.begin_pairing() is None
        runs.append([play_game(SPEC, a, b, seed).moves for seed in range(3)])
        for handle in (a, b):
            assert handle.end_pairing() is None
            handle.close()
    assert runs[0] == runs[1] and all(len(moves) > 20 for moves in runs[0])


@pytest.mark.parametrize("stop", ["freezer", "signals"])
def test_an_opponent_that_escapes_the_stop_costs_you_no_verdict(launch, one_core, stop):
    """tests/agents/suspend_escaper forks children that SIGCONT every process they can reach.
    The freezer's stop is not undone by a signal: the escaper runs nothing on the worker's
    turns. Where a sandbox has no freezer the turn's stop is one signal a process, which such
    a child can undo: the escaper then computes on the mover's core, and the pace still
    charges the mover its own work only (its run-queue delay is not charged)."""
    import dataclasses

    limits = dataclasses.replace(
        TEST_LIMITS, pace_seconds_per_cell=0.015 / 64, pace_min_acts=20, pace_stop_factor=100.0, act_hard_seconds=5.0
    )
    escaper = _frozen(launch, "suspend_escaper")
    group = escaper.process.cgroup
    if group is None:
        pytest.skip("the sandbox has no cgroup here: its turns are signals to its process group")
    if stop == "signals":
        group._no_freezer = True  # as on a host whose cgroups have no freezer
    elif not group.freeze(False):
        pytest.skip("this host gives the sandbox no freezer")
    worker = launch("fixed_work", limits=limits)
    assert worker.prepare(env_info(SPEC, 0)) is None and worker.freeze() is None
    worker.enter_phase(PAIRING)
    for handle in (escaper, worker):
        assert handle.begin_pairing() is None
    turns = OnItsTurns(worker, escaper)
    for seed in range(2):
        play_game(SPEC, escaper, worker, seed)
    work = worker.phase_stats[PAIRING]
    assert worker.alive and work.count > 20
    if stop == "freezer":
        assert turns.mover_cpu >= work.count * 0.010
        assert turns.opponent_cpu < 0.05 * turns.mover_cpu, vars(turns)
    elif work.queued_seconds < 0.05:
        pytest.skip("the escaper's children did not wake it on the worker's turns here: nothing was tested")
    assert work.mean_seconds < limits.pace_seconds(8, 8)
    assert worker.end_session(8, 8) is None
