"""Checkpoints, shards, pairings and seeds: the schedule of a round."""

from __future__ import annotations

import pytest

from engine import Color
from grader.common.schedule import (
    ScheduleError,
    checkpoint_color,
    checkpoint_seed,
    default_checkpoints,
    games_per_env,
    pairing_games,
    pairs,
    parse_checkpoints,
    parse_shard,
    shard_indices,
)

pytestmark = pytest.mark.timeout(30)


def test_checkpoints():
    assert parse_checkpoints(None, 2000) == [0, 100, 500, 1000, 2000]
    assert default_checkpoints(200) == [0, 100, 200]
    assert parse_checkpoints("0,20,60", 60) == [0, 20, 60]
    for bad in ("10,60", "0,60,20", "0,x", "0,20"):
        with pytest.raises(ScheduleError):
            parse_checkpoints(bad, 60)


def test_shards_cover_every_environment_once():
    for n in (1, 2, 3, 7):
        seen = sorted(i for k in range(1, n + 1) for i in shard_indices(10, (k, n)))
        assert seen == list(range(10))
    assert parse_shard("2/4") == (2, 4) and parse_shard(None) is None
    for bad in ("0/2", "3/2", "a/b", "1"):
        with pytest.raises(ScheduleError):
            parse_shard(bad)


def test_pairings_half_each_colour_and_colours_alternate_at_checkpoints():
    games = pairing_games("a", "b", 20)
    assert sum(g.black == "a" for g in games) == 10 and sum(g.white == "a" for g in games) == 10
    assert pairs(["c", "a", "b"]) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert [checkpoint_color(i) for i in range(4)] == [Color.BLACK, Color.WHITE, Color.BLACK, Color.WHITE]
    with pytest.raises(ScheduleError):
        pairing_games("a", "b", 3)


def test_seeds_depend_on_place_only():
    assert checkpoint_seed("7", "env-x", 100, 3) == checkpoint_seed("7", "env-x", 100, 3)
    assert len({checkpoint_seed("7", "env-x", b, i) for b in (0, 100) for i in range(20)}) == 40


def test_games_per_env():
    # 4 agents: 4 x (5 x 20 + 2000) learning games, then 6 pairs x 20.
    assert games_per_env(4, [0, 100, 500, 1000, 2000], 20, 20, 2000) == 4 * 2100 + 120
