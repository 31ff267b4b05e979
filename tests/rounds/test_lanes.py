"""The pairing queue hands out each agent's pairings in the canonical order, one at a time,
as many at once as are ready; a dead agent's pairings are done without being played."""

from __future__ import annotations

import threading

from grader.common.schedule import pairs
from grader.rounds.lanes import Lanes, PairQueue, each_on_a_core, pairing_cores

NAMES = [f"a{i}" for i in range(6)]


def _drain(queue: PairQueue, at_once: int) -> list[list[int]]:
    """Take pairings in waves of up to `at_once` (all taken before any is done)."""
    waves = []
    while True:
        wave = []
        while len(wave) < at_once and queue.ready:
            wave.append(queue.take())
        if not wave:
            assert queue.take() is None  # nothing left
            return waves
        waves.append(wave)
        for index in wave:
            queue.done(index)


def test_every_pairing_once_each_agent_in_canonical_order_and_several_at_once():
    order = pairs(NAMES)
    waves = _drain(PairQueue(order, lambda name: True), 3)
    played = [i for wave in waves for i in wave]
    assert sorted(played) == list(range(len(order)))
    for name in NAMES:
        mine = [i for i in played if name in order[i]]
        assert mine == sorted(mine), name  # its own pairings in the canonical order
    for wave in waves:  # no agent twice in one wave
        agents = [n for i in wave for n in order[i]]
        assert len(agents) == len(set(agents))
    assert max(len(w) for w in waves) == 3  # three pairings at once, six agents
    assert len(waves) < len(order)


def test_a_dead_agents_later_pairings_are_void():
    order = pairs(NAMES)
    dead: set[str] = set()
    queue = PairQueue(order, lambda name: name not in dead)
    played = []
    while (index := queue.take()) is not None:
        played.append(order[index])
        if order[index] == ("a0", "a2"):
            dead.add("a2")  # it died in this pairing
        queue.done(index)
    assert ("a0", "a2") in played
    assert [p for p in played if "a2" in p] == [("a0", "a2")]  # (a1, a2) came after (a0, a2) for a2
    assert len(played) == len(order) - (len(NAMES) - 2)


def test_an_agent_dead_before_the_pairings_plays_none():
    order = pairs(NAMES)
    queue = PairQueue(order, lambda name: name != "a3")
    played = _drain(queue, 2)
    assert not [i for wave in played for i in wave if "a3" in order[i]]
    assert sum(len(w) for w in played) == len(order) - (len(NAMES) - 1)


def test_lanes_run_on_their_cores_and_a_failure_stops_them_all():
    seen: dict[int, str] = {}
    each_on_a_core(Lanes(), [0, 0, 0], range(30), lambda i: seen.setdefault(i, threading.current_thread().name))
    assert sorted(seen) == list(range(30))
    lanes = Lanes()
    done = []

    def work(i: int) -> None:
        if i == 3:
            raise RuntimeError("lane failed")
        done.append(i)
        lanes.check()

    try:
        each_on_a_core(lanes, [0, 0], range(1000), work)
    except RuntimeError as exc:
        assert "lane failed" in str(exc)
    else:
        raise AssertionError("the failure was not raised")
    assert len(done) < 1000


def test_pairing_cores():
    assert pairing_cores([5]) == [(5, 5)]
    assert pairing_cores([0, 1]) == [(0, 0), (1, 1)]  # a game's agents take turns on one core
