"""The shipped conformance harness over every environment of every tier."""

from __future__ import annotations

import pytest

from engine import paper_tier, public_tier, tier_specs
from engine.conformance import check_environment
from tests.conftest import NO_JIT

GAMES = 1 if NO_JIT else 2
TIERS = {
    "public": public_tier(),
    "paper": paper_tier(),
    "ladder": tier_specs("ladder", seed=28, count=2 if NO_JIT else 28),
    "final": tier_specs("final", seed=5, count=1 if NO_JIT else 28),
}


@pytest.mark.parametrize("tier", list(TIERS))
def test_every_environment_conforms(tier):
    problems = [p for spec in TIERS[tier] for p in check_environment(spec, games=GAMES)]
    assert not problems, "\n".join(problems[:20])
