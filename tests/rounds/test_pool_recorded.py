"""A generated tier's round records the generator pool it was drawn from, and the published
tier seed with that pool lists the round's environments again."""

from __future__ import annotations

import dataclasses

import pytest

from engine.tiers import POOL_VERSION
from grader.cli.main import main
from grader.play.session import parse_entrant
from grader.rounds.orchestrate import make_plan
from grader.rounds.plan import RoundPlan
from grader.rounds.publish import config_of


def plan(tier: str, tier_seed: str | None) -> RoundPlan:
    return make_plan(
        tier, [parse_entrant("random"), parse_entrant("greedy")], "3", 2, [0, 2], 2, 2, "s", tier_seed, "local"
    )


def test_a_ladder_plan_and_its_results_name_the_pool():
    ladder = plan("ladder", "7")
    assert ladder.pool == POOL_VERSION and config_of(ladder)["pool"] == POOL_VERSION
    assert RoundPlan.from_dict(ladder.to_dict()) == ladder


@pytest.mark.parametrize("tier", ["public", "paper"])
def test_a_fixed_tier_has_no_pool(tier):
    fixed = plan(tier, None)
    assert fixed.pool is None and "pool" not in config_of(fixed) and "pool" not in fixed.to_dict()


def test_the_pool_is_not_in_the_round_id_the_environments_are():
    """What a pool decides is which environments were drawn, and those are hashed already: a
    plan of an older arena (no pool) keeps its id."""
    ladder = plan("ladder", "7")
    assert dataclasses.replace(ladder, pool=None).key() == ladder.key()


def test_arena_envs_lists_the_rounds_environments_from_its_seed_and_pool(capsys):
    ladder = plan("ladder", "7")
    assert (
        main(
            ["envs", "--tier", "ladder", "--seed", "7", "--count", "3", "--pool", str(ladder.pool), "--format", "json"]
        )
        == 0
    )
    listed = capsys.readouterr().out
    assert all(e.spec.id in listed for e in ladder.envs)


def test_an_unknown_pool_is_refused(capsys):
    assert main(["envs", "--tier", "ladder", "--seed", "7", "--pool", "99"]) == 1  # a usage error: bad input
    assert "--pool: invalid choice: 99" in capsys.readouterr().err
