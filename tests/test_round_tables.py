"""scripts/round_tables.py: the tables the adaptive agent's README is made from."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import yaml

from tests.site.goldens import FIXTURES

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("round_tables", ROOT / "scripts" / "round_tables.py")
round_tables = importlib.util.module_from_spec(spec)
spec.loader.exec_module(round_tables)

PUBLIC = FIXTURES / "rounds" / "public-ad9894db26.yaml"


def test_groups_average_their_environments():
    doc = yaml.safe_load(PUBLIC.read_text())
    doc["environments"].append(yaml.safe_load(yaml.safe_dump(doc["environments"][0])))
    doc["environments"][-1]["agents"][0]["curve"][-1]["win_rate"] = 0.5  # alice: 0.0 before
    text = round_tables.tables(doc, "alice", "rules")
    assert "| majority / standard | 2 | 100.0% | 50.0% | 25.0% | 50.0% | 0.250 |" in text
    assert "| random-2 fewest/short-1 | ok | 50.0% | 50.0% | 50.0% | 0.0% | 0.500 |" in text


@pytest.mark.parametrize(
    "rules,label",
    [
        ({"win": "most", "capture": "standard"}, "majority"),
        ({"win": "band", "k": -0.01, "capture": "standard"}, "minority (K = -0.01)"),
        ({"win": "band", "k": 0.6, "capture": "standard", "turn_limit": 10}, "K = 0.6, 10 placements"),
    ],
)
def test_conditions_are_named_as_the_paper_names_them(rules, label):
    assert round_tables.condition(rules) == label


def test_an_agent_not_in_the_round_is_named(capsys):
    with pytest.raises(SystemExit, match="'zed' did not play"):
        round_tables.main([str(PUBLIC), "--agent", "zed"])


def test_rounds_of_other_seeds_are_compared_group_by_group():
    doc = yaml.safe_load(PUBLIC.read_text())
    other = yaml.safe_load(yaml.safe_dump(doc))
    other["provenance"]["config"]["seed"] = "other-seed"
    for env in other["environments"]:
        if env["name"] == "random-2 fewest/short-1":
            env["agents"][0]["curve"][-1]["win_rate"] = 1.0  # alice: 0.5 in the first round
    text = round_tables.compare([doc, other], "alice", "rules")
    seed = doc["provenance"]["config"]["seed"]
    rows = [line for line in text.splitlines() if line.startswith("| minority / short-1 |")]
    assert [r.split(" | ")[1] for r in rows] == [str(seed), "other-seed", "mean (spread)"]
    assert "| mean (spread) | 50.0% (0.0) | 50.0% (0.0) | 75.0% (50.0) |" in rows[2]


def test_rounds_of_other_environments_are_not_compared():
    doc = yaml.safe_load(PUBLIC.read_text())
    other = yaml.safe_load(yaml.safe_dump(doc))
    other["environments"] = other["environments"][1:]
    with pytest.raises(SystemExit, match="not play the same environments"):
        round_tables.compare([doc, other], "alice", "rules")
