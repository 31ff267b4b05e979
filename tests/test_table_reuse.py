"""A table is laid out once per environment and restarted for each game (grader.play.match.Table):
every game it plays must be the game a fresh table plays, whatever the last one left behind
(a forfeit, a lost turn, a player's stream kept in its memory), and the conduct counts a
side's legal moves as judging them one by one would."""

from __future__ import annotations

import numpy as np
import pytest

from engine import public_tier
from engine.opponents import make_opponent
from grader.common.limits import DEFAULT_LIMITS
from grader.common.policy import Conduct
from grader.play import match
from grader.play.agent_handle import AgentHandle

pytestmark = pytest.mark.timeout(120)


class Scripted:
    """An in-process agent: every `illegal_every`-th act an occupied cell (illegal), else the
    first legal cell, or a random one from its own stream."""

    def __init__(self, illegal_every: int = 0, seed: int = 0):
        self.illegal_every, self.calls = illegal_every, 0
        self.rng = np.random.default_rng(seed)

    def prepare(self, env_info):
        pass

    def act(self, obs, mask):
        self.calls += 1
        if self.illegal_every and self.calls % self.illegal_every == 0:
            return int(np.flatnonzero(obs[0].reshape(-1) + obs[1].reshape(-1))[0])  # a disc is there
        return int(self.rng.choice(np.flatnonzero(mask)))

    def observe_outcome(self, outcome):
        pass


def games(fresh: bool) -> list[dict]:
    """Games of every kind one after the other: an agent against itself, against an opponent
    kept across games, a forfeiting agent, then ordinary games again; with `fresh`, each at
    a new table."""
    spec = public_tier()[0]
    kept = make_opponent("greedy", spec, 11)  # its stream lives in the last game's memory
    steady = AgentHandle.in_process(Scripted(seed=1), DEFAULT_LIMITS, "steady")
    sloppy = AgentHandle.in_process(Scripted(illegal_every=2, seed=2), DEFAULT_LIMITS, "sloppy")
    seatings = [
        (steady, steady),
        (steady, kept),
        (kept, steady),
        (sloppy, "random"),
        (sloppy, sloppy),
        ("random", steady),
        (steady, steady),
        (kept, "minimax"),
    ]
    out = []
    for seed, (black, white) in enumerate(seatings):
        if fresh:
            match._SPARE_TABLES.clear()
        record = match.play_game(spec, black, white, seed)
        out.append(record.to_dict())
    out.append({"conduct": [vars(h.conduct) | {"limits": None} for h in (steady, sloppy)]})
    return out


def test_a_restarted_table_plays_the_games_a_fresh_one_plays():
    reused, fresh = games(fresh=False), games(fresh=True)
    assert reused == fresh
    assert any(g.get("forfeit") for g in reused[:-1])  # a forfeit did come before ordinary games


def test_legal_moves_counted_at_once_are_the_moves_judged_one_by_one():
    spec = public_tier()[0]
    handle = AgentHandle.in_process(Scripted(illegal_every=3, seed=4), DEFAULT_LIMITS, "agent")
    record = match.play_game(spec, handle, handle, 9)
    sides = record.sides.values()
    legal = sum(1 for m in record.moves if isinstance(m, int))
    assert sum(s.acts for s in sides) == handle.act_stats.count == legal + sum(s.illegal for s in sides)
    by_one = Conduct(DEFAULT_LIMITS)
    for move in record.moves:
        if move != "pass":
            by_one.judge(move != "lost", 0)
    if record.forfeit:  # the last act was an illegal one that forfeited
        by_one.judge(False, 0)
    assert (handle.conduct.attempts, handle.conduct.illegal_total, handle.conduct.legal_seen) == (
        by_one.attempts,
        by_one.illegal_total,
        by_one.legal_seen,
    )
