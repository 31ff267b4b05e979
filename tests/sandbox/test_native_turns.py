"""Native turns: an agent's moves played by grader.native_turns give exactly the games, faults
and accounting that `AgentHandle.act` gives, and every way out of the kernel ends as `act` would."""

from __future__ import annotations

import dataclasses

import numba
import numpy as np
import pytest

import grader.agent_handle as agent_handle
import grader.native_turns as native
from engine import public_tier
from grader import protocol
from grader.faults import FaultKind
from grader.match import env_info, play_game
from grader.native_turns import ACTION_PREFIX, parse_action
from grader.runner.runner import OK
from grader.self_play import SELF_PLAY_COLOR, played_in_python, played_natively
from .conftest import TEST_LIMITS

pytestmark = pytest.mark.timeout(180)
SPEC = public_tier()[3]


def _header(text: bytes) -> np.ndarray:
    return np.frombuffer(b"\0" * 8 + text, dtype=np.uint8)


@pytest.mark.parametrize("text, cell", [
    (b'{"op":"action","action":0}', 0), (b'{"op":"action","action":37}', 37), (b'{"op":"action","action":63}', 63),
    (b'{"op":"action","action":64}', -1), (b'{"op":"action","action":07}', -1), (b'{"op":"action","action":-1}', -1),
    (b'{"op":"action","action": 7}', -1), (b'{"op":"action","action":7 }', -1), (b'{"op":"action","action":}', -1),
    (b'{"op":"action","action":7.0}', -1), (b'{"action":7,"op":"action"}', -1), (b'{"op":"Action","action":7}', -1),
    (b'{"op":"action","action":1234567890123}', -1), (b'{"op":"action","action":true}', -1),
])
def test_only_the_runners_own_action_reply_is_read_natively(text, cell):
    buf = _header(text)
    assert parse_action(buf, 8, len(buf), 64) == cell
    assert getattr(parse_action, "py_func", parse_action)(buf, 8, len(buf), 64) == cell  # without the JIT
    assert bytes(ACTION_PREFIX) == b'{"op":"action","action":'


def _games(handle, seeds, opponent=None):
    out = []
    for seed in seeds:
        record = play_game(SPEC, handle, opponent or handle, seed)
        out.append((record.moves, record.winner, record.forfeit, {c: (s.acts, s.illegal, [f.kind for f in s.faults])
                                                                  for c, s in record.sides.items()}))
    return out


def _python_only(monkeypatch) -> None:
    """play_game with the native driver switched off: every move through AgentHandle.act."""
    monkeypatch.setattr(native.NativeDriver, "for_game", classmethod(lambda cls, *args: None))


def test_native_games_are_the_games_act_plays(launch, monkeypatch):
    def session():
        handle = launch("random_agent")
        assert handle.prepare(env_info(SPEC, 0)) is None
        return handle

    runs = []
    run = native.NativeDriver.run
    monkeypatch.setattr(native.NativeDriver, "run", lambda self, sides: runs.append(1) or run(self, sides))
    native_handle = session()
    played = _games(native_handle, range(6)) + _games(native_handle, range(6, 9), "greedy")
    # About one kernel call a game (more when a CPU check falls due): its moves played natively.
    assert len(runs) < 20
    _python_only(monkeypatch)
    python_handle = session()
    expected = _games(python_handle, range(6)) + _games(python_handle, range(6, 9), "greedy")
    assert played == expected
    a, b = native_handle.act_stats, python_handle.act_stats
    assert a.count == b.count > 100 and a.total_seconds > 0 and a.max_seconds > 0
    assert (native_handle.conduct.attempts, native_handle.conduct.legal_seen) == \
        (python_handle.conduct.attempts, python_handle.conduct.legal_seen)


def test_the_kernel_without_the_jit_plays_the_same_games(launch, monkeypatch):
    """The system calls' pure-Python stand-ins (NUMBA_DISABLE_JIT) play the same games."""
    jit_handle = launch("random_agent")
    jit_handle.prepare(env_info(SPEC, 0))
    played = _games(jit_handle, range(3))
    monkeypatch.setattr(native, "agent_turns", getattr(native.agent_turns, "py_func", native.agent_turns))
    py_handle = launch("random_agent")
    py_handle.prepare(env_info(SPEC, 0))
    assert _games(py_handle, range(3)) == played


@pytest.mark.parametrize("name, kind", [
    ("crash_mid_game", FaultKind.AGENT_ERROR), ("exit_mid_game", FaultKind.EOF),
    ("out_of_range_action", FaultKind.PROTOCOL), ("non_integer_action", FaultKind.PROTOCOL),
    ("bool_action", FaultKind.PROTOCOL), ("sleep_forever", FaultKind.TIMEOUT), ("partial_frame", FaultKind.TIMEOUT),
    ("channel_spammer", FaultKind.PROTOCOL), ("huge_announce", FaultKind.PROTOCOL),
    ("stdout_flood", FaultKind.AGENT_ERROR),
])
def test_a_fault_in_a_native_game_is_the_fault_act_gives(launch, assert_unharmed, name, kind):
    handle = launch(name)
    assert handle.prepare(env_info(SPEC, 0)) is None
    faults = []
    for seed in range(12):
        record = play_game(SPEC, handle, handle, seed)
        faults += [f for s in record.sides.values() for f in s.faults]
        if faults:
            break
    assert [f.kind for f in faults] == [kind] and handle.fault == faults[0]
    handle.close()
    assert_unharmed()


@pytest.mark.parametrize("name", ["always_illegal", "stderr_chatty"])
def test_agents_that_leave_the_kernel_every_move_play_as_with_act(launch, monkeypatch, name):
    native_handle = launch(name)
    native_handle.prepare(env_info(SPEC, 0))
    played = _games(native_handle, range(3))
    _python_only(monkeypatch)
    python_handle = launch(name)
    python_handle.prepare(env_info(SPEC, 0))
    assert _games(python_handle, range(3)) == played
    assert native_handle.stderr_text()[:2000] == python_handle.stderr_text()[:2000]


def test_the_pace_stop_and_the_cpu_check_are_made_after_native_acts(launch):
    """A pace so tight that every agent is far over it: the kernel hands the act to Python,
    which stops the agent exactly where `act` would (after pace_min_acts replies)."""
    limits = dataclasses.replace(TEST_LIMITS, pace_seconds_per_cell=1e-9, pace_min_acts=30)
    handle = launch("random_agent", limits=limits)
    handle.prepare(env_info(SPEC, 0))
    record = play_game(SPEC, handle, handle, 1)
    faults = [f for s in record.sides.values() for f in s.faults]
    assert [f.kind for f in faults] == [FaultKind.TIMEOUT] and "pace" in faults[0].detail
    assert handle.act_stats.count == limits.pace_min_acts


# -- budget self-play with its outcomes (native_turns.self_play_turns) ----------------------
@pytest.mark.parametrize("winner, black, white", [(1, 33, 31), (-1, 0, 64), (0, 32, 32), (1, 7, 0), (-1, 100, 120)])
def test_a_native_outcome_frame_is_the_frame_observe_outcome_sends(winner, black, white):
    label = {1: "black", -1: "white", 0: "draw"}[winner]
    expected = protocol.encode({"op": protocol.OP_OUTCOME, "outcome": {
        "winner": label, "black_discs": black, "white_discs": white, "your_color": SELF_PLAY_COLOR}})
    for kernel in (native.outcome_frame, getattr(native.outcome_frame, "py_func", native.outcome_frame)):
        buf = np.zeros(native.OUTCOME_BYTES, dtype=np.uint8)
        assert bytes(buf[:kernel(buf, winner, black, white)]) == expected
    assert bytes(native.OK_REPLY) == OK


def _heard_games(games, handle) -> list:
    """Self-play as a round plays it: after each game and after its outcome, a fault ends it."""
    out = []
    for game in games:
        out.append((game.winner, game.plies))
        if handle.fault is None:
            game.hear()
            if handle.fault is None:
                continue
            out.append(("outcome", handle.fault.kind))
        else:
            out.append(("game", handle.fault.kind))
        break
    return out


def _both_ways(launch, name: str, seeds) -> tuple:
    native_handle = launch(name)
    python_handle = launch(name)
    for handle in (native_handle, python_handle):
        assert handle.prepare(env_info(SPEC, len(seeds))) is None
    played = _heard_games(played_natively(SPEC, native_handle, list(seeds)), native_handle)
    expected = _heard_games(played_in_python(SPEC, lambda color, seed: python_handle, python_handle.observe_outcome,
                                             list(seeds)), python_handle)
    return played, expected, native_handle, python_handle


def test_native_self_play_is_the_self_play_python_plays(launch, monkeypatch):
    """Games, outcomes heard (the agent's moves depend on them), accounting and output; and
    each way out of the kernel is taken: a game handed to Python (a CPU check due mid-game),
    an outcome call finished by Python (output on stderr), an outcome heard with the CPU
    check due."""
    statuses = []
    self_play = native.NativeDriver.self_play
    monkeypatch.setattr(native.NativeDriver, "self_play",
                        lambda self, *args: statuses.append(self_play(self, *args)) or statuses[-1])
    # A CPU check due every 25 ms: the agent's 30 ms over each outcome and over one move meet
    # it there, and a game (60 moves of tens of microseconds) ends well before it (without the
    # JIT a game alone takes longer: then only the stderr is counted on).
    monkeypatch.setattr(agent_handle, "CPU_CHECK_INTERVAL", 0.5 if numba.config.DISABLE_JIT else 0.025)
    played, expected, a, b = _both_ways(launch, "outcome_driven", range(24))
    assert played == expected and len(played) == 24 and a.alive and b.alive
    wanted = {native.HEARING} | (set() if numba.config.DISABLE_JIT else {native.ACTED, native.HEARD})
    assert wanted <= set(statuses), statuses
    assert (a.act_stats.count, a.conduct.attempts, a.conduct.legal_seen) == \
        (b.act_stats.count, b.conduct.attempts, b.conduct.legal_seen)
    assert a.call_seconds > 24 * 0.03 and b.call_seconds > 24 * 0.03
    assert a.stderr_text() == b.stderr_text() and "heard 24 outcomes" in a.stderr_text()


@pytest.mark.parametrize("name", ["random_agent", "outcome_raises", "crash_mid_game", "exit_mid_game", "always_illegal",
                                  "stderr_chatty"])
def test_native_self_play_ends_as_python_self_play_does(launch, assert_unharmed, name):
    played, expected, a, b = _both_ways(launch, name, range(5))
    assert played == expected
    assert (a.fault is None) == (b.fault is None) and (a.fault is None or a.fault.kind == b.fault.kind)
    for handle in (a, b):
        handle.close()
    assert_unharmed()


def test_native_self_play_of_a_frozen_agent_is_refused(launch):
    handle = launch("random_agent")
    handle.prepare(env_info(SPEC, 1))
    handle.freeze()
    with pytest.raises(ValueError, match="after freeze"):
        next(played_natively(SPEC, handle, [0]))
