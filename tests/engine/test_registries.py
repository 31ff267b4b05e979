"""The engine's registries: capture rules by explicit code, the kernels' copy of their table,
and the generator's versioned pool, with the environments a seed generates pinned."""

from __future__ import annotations

import pytest

from engine import Capture, TierError, Win, generate_tier, tier_specs
from engine import bitboard as bb
from engine.reference import capture_directions, max_run
from engine.rules import CAPTURE_RULES, capture_descriptions
from engine.tiers import GENERATOR_POOLS, POOL_VERSION, generator_pool
from tests.conftest import NO_JIT

# The ids each seed's tiers had when the pool was version 1: a new rule must not move them.
PINNED = {
    ("ladder", 28): ["env-0775ccf94e69", "env-19fd70a0739f", "env-76ea2a8c898d"],
    ("ladder", 7): ["env-3d6af4059aa6", "env-5e95d7ff061c", "env-25a267597866"],
    ("ladder", 2026): ["env-5d1696f4f422", "env-b912e4eda525", "env-e3ec45c803b3"],
    ("final", 28): ["env-36c253977cb8", "env-b47a9c42c628", "env-e20278d58f53"],
    ("final", 7): ["env-bccc93ae249a", "env-59dd0d6ea4c4", "env-58fb8e685a5f"],
    ("final", 2026): ["env-37a902f09df0", "env-2204f1c9da53", "env-6ae07b44c9d8"],
}
# Screening plays 400 random games per candidate: minutes in pure Python, where test_tiers
# already generates a tier; the draws pinned here do not depend on the JIT.
needs_jit = pytest.mark.skipif(NO_JIT, reason="generating six tiers needs the JIT (NUMBA_DISABLE_JIT=1)")


def test_every_rule_has_one_row_with_its_own_code():
    assert set(CAPTURE_RULES) == set(Capture)
    codes = [row.code for row in CAPTURE_RULES.values()]
    # Dense and unique: the kernels index their table by code.
    assert sorted(codes) == list(range(len(Capture)))
    assert all(c.code == CAPTURE_RULES[c].code for c in Capture)
    assert all(row.description for row in CAPTURE_RULES.values())


def test_published_codes_never_move():
    assert {c.value: c.code for c in Capture} == {
        "standard": 0,
        "orthogonal": 1,
        "diagonal": 2,
        "short-1": 3,
        "short-2": 4,
        "longest": 5,
    }
    assert {w.value: w.code for w in Win} == {"most": 0, "fewest": 1, "band": 2}


def test_kernels_table_is_the_rules_table():
    for capture, row in CAPTURE_RULES.items():
        assert bb.CAP_DIRECTIONS[row.code] == row.directions, capture
        assert bb.CAP_RUN_LIMIT[row.code] == (bb.NO_LIMIT if row.max_run is None else row.max_run), capture
        assert bool(bb.CAP_LONGEST[row.code]) == row.longest, capture
    assert len(bb.CAP_DIRECTIONS) == len(bb.CAP_RUN_LIMIT) == len(bb.CAP_LONGEST) == len(Capture)


def test_reference_reads_the_rows():
    assert len(capture_directions(Capture.ORTHOGONAL)) == 4 == len(capture_directions(Capture.DIAGONAL))
    assert (-1, 0) in capture_directions(Capture.ORTHOGONAL) and (-1, -1) in capture_directions(Capture.DIAGONAL)
    assert max_run(Capture.SHORT_2) == 2 and max_run(Capture.STANDARD) > 144


def test_site_describes_rules_from_the_table():
    from grader.site.model import rules_text

    assert capture_descriptions()["short-1"] == CAPTURE_RULES[Capture.SHORT_1].description
    text = rules_text({"win": "most", "capture": "orthogonal"})
    assert text == "more discs wins; a run flips only along rows and columns (N, S, W, E)"


def test_pool_one_is_frozen():
    pool = GENERATOR_POOLS[1]
    assert pool.wins == (Win.MOST, Win.FEWEST)
    assert [c.value for c in pool.captures] == ["standard", "orthogonal", "diagonal", "short-1", "short-2", "longest"]
    assert POOL_VERSION == max(GENERATOR_POOLS)


def test_unknown_pool_names_the_versions():
    with pytest.raises(TierError, match=r"generator pool version 9 is unknown \(this engine has 1, 2\)") as info:
        generator_pool(9)
    assert (info.value.field, info.value.value) == ("pool", 9)
    with pytest.raises(TierError, match="unknown tier 'secret'") as info:
        tier_specs("secret")
    assert info.value.field == "tier" and info.value.value == "secret"


@needs_jit
@pytest.mark.parametrize("tier,seed", list(PINNED))
def test_a_seed_keeps_its_environments(tier, seed):
    pinned = PINNED[tier, seed]
    generated = generate_tier(tier, seed, len(pinned), pool=1)
    assert [s.id for s in generated.specs] == pinned
    assert (generated.tier, generated.seed, generated.count, generated.pool) == (tier, seed, len(pinned), 1)
