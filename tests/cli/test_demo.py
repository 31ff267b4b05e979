"""`arena demo`: its round is one the site's board shows (a field and environments the rules
let stand, a ladder round of the series). The demo itself takes minutes: `make demo` runs it."""

from __future__ import annotations

from pathlib import Path

from grader.cli.commands.demo import DEMO_ENVS, DEMO_TIER, demo_field, demo_site_config
from grader.rounds.aggregates import MIN_ENVS_FOR_PUBLIC, MIN_FIELD_FOR_STANDING
from grader.site.builder import can_lead, in_series
from grader.site.data import RoundSource

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_the_demo_field_is_large_enough_for_a_standing():
    field = demo_field()
    names = [e.name for e in field]
    assert len(field) == 8 >= MIN_FIELD_FOR_STANDING
    assert len(set(names)) == len(names), names
    # Every example plays, an example named like a reference player under another name.
    examples = sorted(d.name for d in EXAMPLES.iterdir() if (d / "agent.py").is_file())
    assert {
        "example-random",
        "example-greedy",
        "positional",
        "learner",
        "adaptive",
        "random",
        "greedy",
        "minimax",
    } == set(names)
    assert len(examples) == 5


def test_a_round_shaped_like_the_demos_leads_the_board(tmp_path):
    """The demo's round: ladder tier, not requested, complete, on DEMO_ENVS environments."""
    assert int(DEMO_ENVS) >= MIN_ENVS_FOR_PUBLIC
    rid = f"{DEMO_TIER}-0123456789"
    summary = {
        "round": {
            "id": rid,
            "tier": DEMO_TIER,
            "status": "complete",
            "private": False,
            "research": False,
            "standing_published": True,
        },
        "provenance": {"config": {"environments": int(DEMO_ENVS)}},
        "field": [{"name": e.name} for e in demo_field()],
    }
    r = RoundSource(rid, tmp_path / f"{rid}.yaml", "sha256:0", summary)
    assert in_series(r) and can_lead(r)
    # The same round shaped as practice (public tier) is listed but never leads (the rules).
    practice = RoundSource(rid, r.path, r.sha256, summary | {"round": summary["round"] | {"tier": "public"}})
    assert in_series(practice) and not can_lead(practice)
    requested = RoundSource(rid, r.path, r.sha256, summary | {"provenance": {"config": {"requested": True}}})
    assert not in_series(requested)
    assert demo_site_config(tmp_path, rid).is_file()
