"""Games through the sandbox: play_game, the illegal-move policy, faults as data."""

from __future__ import annotations

import pytest

from engine import Color, Game, public_tier, replay
from grader.common.faults import FaultKind
from grader.common.limits import DEFAULT_LIMITS
from grader.common.policy import Conduct, Verdict
from grader.play.match import env_info, outcome_for, play_game

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def spec():
    return public_tier()[0]  # 8x8 standard, most/standard


def test_conduct_rules():
    c = Conduct(DEFAULT_LIMITS)
    assert c.judge(False, 0) is Verdict.LOSE_TURN
    assert c.judge(False, 1) is Verdict.LOSE_TURN
    assert c.judge(False, 2) is Verdict.FORFEIT_GAME
    c = Conduct(DEFAULT_LIMITS)
    verdicts = [c.judge(False, i % 3) for i in range(DEFAULT_LIMITS.never_legal_attempts)]
    assert verdicts[-1] is Verdict.FORFEIT_ENV
    c = Conduct(DEFAULT_LIMITS)
    assert c.judge(True, 0) is Verdict.PLAY
    assert all(c.judge(False, 0) is Verdict.LOSE_TURN for _ in range(20))  # one legal move clears the rule


def test_agent_plays_a_reference_opponent_and_itself(launch, spec):
    handle = launch("random_agent")
    assert handle.prepare(env_info(spec, 0)) is None
    record = play_game(spec, handle, "greedy", seed=5)
    assert record.termination == "no_moves" and record.forfeit is None
    assert record.sides["black"].acts > 10 and record.sides["white"].acts == 0
    game = replay(spec, record.moves)
    assert (game.outcome().black_discs, game.outcome().white_discs) == (record.black_discs, record.white_discs)
    selfplay = play_game(spec, handle, handle, seed=6)
    assert selfplay.sides["black"].acts and selfplay.sides["white"].acts
    assert handle.observe_outcome(outcome_for(selfplay, Color.BLACK)) is None
    assert play_game(spec, "random", "random", 3).to_dict() == play_game(spec, "random", "random", 3).to_dict()


def test_illegal_moves_lose_turns_then_forfeit(launch, spec):
    handle = launch("always_illegal")
    assert handle.prepare(env_info(spec, 0)) is None
    # Self-play: each seat loses its turn twice; black's third illegal move forfeits the game.
    record = play_game(spec, handle, handle, seed=1)
    assert record.moves == ["lost"] * 4
    assert record.forfeit == "black" and record.winner == "white" and record.termination == "forfeit"
    assert [f.kind for f in record.sides["black"].faults] == [FaultKind.FORFEIT]
    assert record.sides["black"].illegal == 3 and record.sides["white"].illegal == 2
    assert handle.alive  # one forfeited game does not end the session
    replay(spec, record.moves, forfeit=Color.BLACK)
    # The 10th attempt of a session that never made a legal move ends the session.
    record = play_game(spec, handle, handle, seed=2)
    assert handle.fault.kind is FaultKind.FORFEIT and "all illegal" in handle.fault.detail
    assert record.forfeit == "black" and handle.conduct.attempts == DEFAULT_LIMITS.never_legal_attempts
    # Against an opponent, a dead agent forfeits its next game at its first move.
    record = play_game(spec, "random", handle, seed=3)
    assert record.forfeit == "white" and record.sides["white"].faults[0].kind is FaultKind.FORFEIT


def test_fault_mid_game_is_a_forfeit_not_an_exception(launch, assert_unharmed, spec):
    handle = launch("crash_mid_game")
    assert handle.prepare(env_info(spec, 0)) is None
    record = play_game(spec, "random", handle, seed=2)
    assert record.forfeit == "white" and record.winner == "black"
    assert [f.kind for f in record.sides["white"].faults] == [FaultKind.AGENT_ERROR]
    handle.close()
    assert_unharmed()


def test_launch_failure_is_the_arenas_fault(tmp_path, spec):
    from grader.documents.submission import load_submission
    from grader.play.agent_handle import AgentHandle
    from grader.sandbox.local import LocalSandbox

    from .conftest import AGENTS

    handle = AgentHandle.launch(
        LocalSandbox(bwrap=str(tmp_path / "no-bwrap")), load_submission(AGENTS / "random_agent")
    )
    assert handle.fault.kind is FaultKind.LAUNCH_FAILED and not handle.fault.is_agents_fault
    record = play_game(spec, handle, "random", seed=0)
    assert record.forfeit == "black" and record.sides["black"].faults[0].kind is FaultKind.LAUNCH_FAILED


class _Keeper:
    """A seat that keeps every view it is given, as an agent that learns from history may."""

    label = "keeper"

    def __init__(self):
        self.conduct = Conduct(DEFAULT_LIMITS)
        self.seen = []

    def act(self, obs, mask):
        self.seen.append((obs, mask))
        return int(mask.nonzero()[0][0]), None

    def fail(self, fault):
        return fault


def test_a_seat_keeps_the_views_it_was_given(spec):
    """The engine writes views in place; a seat that does not read views in place (and an in-process
    agent) must still get arrays of its own that later moves do not overwrite."""
    from grader.play.agent_handle import AgentHandle

    keeper = _Keeper()
    record = play_game(spec, keeper, "random", seed=3)
    game = Game(spec)
    for move in record.moves:
        if game.has_legal_move() and game.to_move is Color.BLACK:
            obs, mask = keeper.seen.pop(0)
            expected = game.agent_view()
            assert (obs == expected[0]).all() and (mask == expected[1]).all()
        if move == "pass":
            game.pass_turn()
        else:
            game.play(move)
    assert keeper.seen == []

    class Agent(_Keeper):
        def act(self, obs, mask):
            return super().act(obs, mask)[0]

    inner = Agent()
    handle = AgentHandle.in_process(inner, DEFAULT_LIMITS, "inner")
    play_game(spec, handle, handle, seed=4)
    assert len({id(obs) for obs, _ in inner.seen}) == len(inner.seen) > 10
    assert not all((obs == inner.seen[-1][0]).all() for obs, _ in inner.seen[:-1])
