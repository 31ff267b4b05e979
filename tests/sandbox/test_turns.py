"""An agent's turn, the one path: the reply the host reads by its bytes is exactly the runner's
own action frame, every other reply takes the general path to the same result, and the pace
and the CPU check are made after every reply."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from engine import public_tier
from grader.common import protocol
from grader.common.faults import FaultKind
from grader.play.match import env_info, play_game
from grader.sandboxed import runner

from .conftest import TEST_LIMITS

pytestmark = pytest.mark.timeout(180)
SPEC = public_tier()[3]


def _frame(text: bytes) -> bytes:
    return protocol.PREFIX.pack(len(text), 0) + text


@pytest.mark.parametrize(
    "text, cell",
    [
        (b'{"op":"action","action":0}', 0),
        (b'{"op":"action","action":37}', 37),
        (b'{"op":"action","action":1023}', 1023),
        (b'{"op":"action","action":1024}', None),
        (b'{"op":"action","action":07}', None),
        (b'{"op":"action","action":-1}', None),
        (b'{"op":"action","action": 7}', None),
        (b'{"action":7,"op":"action"}', None),
        (b'{"op":"Action","action":7}', None),
        (b'{"op":"action","action":true}', None),
        (b'{"op":"action","action":7.0}', None),
    ],
)
def test_only_the_runners_own_action_frame_is_read_by_its_bytes(text, cell):
    assert protocol.ACTION_OF.get(_frame(text)) == cell
    if cell is not None:
        assert runner.action_frame(cell) == _frame(text)  # what the runner sends for that cell


@pytest.mark.parametrize("value", [0, 5, 63, np.int64(9), 2000, -3, True, 7.0, None, (4, 3)])
def test_every_action_reply_reads_as_the_general_parser_reads_it(value):
    """The fast lookup and the frame reader agree on every reply the runner makes."""
    frame = runner.action_frame(value)
    reader = protocol.FrameReader(protocol.REPLY_MAX_HEADER, protocol.REPLY_MAX_BODY)
    reader.feed(frame)
    header = reader.pop()[0]
    fast = protocol.ACTION_OF.get(frame)
    if fast is not None:
        assert header == {"op": "action", "action": fast}
    else:
        assert header["op"] == "bad_action" or not 0 <= header["action"] < len(protocol.ACTION_OF)


def _games(handle, seeds, opponent=None):
    out = []
    for seed in seeds:
        record = play_game(SPEC, handle, opponent or handle, seed)
        out.append(
            (
                record.moves,
                record.winner,
                record.forfeit,
                {c: (s.acts, s.illegal, [f.kind for f in s.faults]) for c, s in record.sides.items()},
            )
        )
    return out


@pytest.mark.parametrize("name", ["always_illegal", "stderr_chatty"])
def test_an_agent_off_the_fast_reply_plays_the_games_a_plain_one_plays(launch, name):
    """An agent that writes output with every move (each reply then comes with another
    descriptor ready) or plays illegal cells gets the games and accounting of the general path,
    the same in two fresh sessions."""
    runs = []
    for _ in range(2):
        handle = launch(name)
        handle.prepare(env_info(SPEC, 0))
        runs.append((_games(handle, range(3)), handle.act_stats.count, handle.conduct.illegal_total))
        handle.close()
    assert runs[0] == runs[1] and runs[0][1] > 0


def test_games_in_the_sandbox_are_the_games_in_process(launch):
    """The same agent in the sandbox and in this process (no wire) plays the same games."""
    import importlib.util

    from grader.play.agent_handle import AgentHandle

    from .conftest import AGENTS

    handle = launch("random_agent")
    assert handle.prepare(env_info(SPEC, 0)) is None
    played = _games(handle, range(5)) + _games(handle, range(5, 8), "greedy")
    spec = importlib.util.spec_from_file_location("random_agent_here", AGENTS / "random_agent" / "agent.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    local = AgentHandle.in_process(module.Agent(), TEST_LIMITS, "random_agent")
    assert local.prepare(env_info(SPEC, 0)) is None
    assert _games(local, range(5)) + _games(local, range(5, 8), "greedy") == played
    assert handle.act_stats.count == local.act_stats.count > 100


def test_the_pace_stop_is_made_after_every_reply(launch):
    """A pace so tight that every agent is far over it: the agent is stopped right after
    pace_min_acts replies, whatever path each reply took."""
    limits = dataclasses.replace(TEST_LIMITS, pace_seconds_per_cell=1e-9, pace_min_acts=30)
    handle = launch("random_agent", limits=limits)
    handle.prepare(env_info(SPEC, 0))
    record = play_game(SPEC, handle, handle, 1)
    faults = [f for s in record.sides.values() for f in s.faults]
    assert [f.kind for f in faults] == [FaultKind.TIMEOUT] and "pace" in faults[0].detail
    assert handle.act_stats.count == limits.pace_min_acts


@pytest.mark.parametrize("stop_factor, when", [(100.0, "end"), (3.0, "early")])
def test_time_banked_in_self_play_cannot_be_spent_in_the_pairings(launch, stop_factor, when):
    """Instant self-play, then 30 ms a move after freeze on an 8x8 board (pace 6.4 ms): the
    session's mean is under the pace, the pairing phase's is not, and the phase is what is
    judged, at the end of the session or (over 3x the pace) as soon as it has enough acts."""
    from grader.common.policy import PAIRING, SELF_PLAY
    from grader.play.match import outcome_for
    from grader.play.self_play import SELF_PLAY_COLOR

    limits = dataclasses.replace(TEST_LIMITS, pace_min_acts=10, pace_stop_factor=stop_factor)
    handle = launch("slow_after_freeze", limits=limits)
    assert handle.prepare(env_info(SPEC, 0)) is None
    handle.enter_phase(SELF_PLAY)
    for seed in range(20):
        record = play_game(SPEC, handle, handle, seed)
        assert handle.observe_outcome(outcome_for(record, SELF_PLAY_COLOR)) is None
    assert handle.freeze() is None
    handle.enter_phase(PAIRING)
    assert handle.begin_pairing() is None  # the frozen agent plays only in a pairing
    pace = limits.pace_seconds(8, 8)
    play_game(SPEC, handle, "random", 100)
    pairing = handle.phase_stats[PAIRING]
    if when == "end":
        assert handle.alive and handle.act_stats.mean_seconds < pace < pairing.mean_seconds
        fault = handle.end_session(8, 8)
    else:
        fault = handle.fault
        assert pairing.count == limits.pace_min_acts  # stopped as soon as the phase was judged
    assert fault is not None and fault.kind is FaultKind.TIMEOUT and "in the pairing games" in fault.detail


def test_an_act_past_the_environment_ceiling_times_out_at_once(launch):
    """The ceiling already passed when act starts: the act ends with the ceiling's timeout,
    however long the agent would take (here: for ever; a wait with no end is the test's
    timeout)."""
    import time

    handle = launch("sleep_forever")
    handle.prepare(env_info(SPEC, 0))
    handle.clock.env_deadline = time.monotonic() - 1.0
    obs, mask = np.zeros((3, 8, 8), dtype=np.float32), np.ones(64, dtype=np.int8)
    action, fault = handle.act(obs, mask)
    assert action is None and fault.kind is FaultKind.TIMEOUT and "ceiling" in fault.detail
