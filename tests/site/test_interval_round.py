"""A round that publishes the interval over environments: verify recomputes it by the method
the round names, and the pages say what it is. The round is the fixture ladder round (10
entrants, four of them deterministic), its standings recomputed as a round now publishes them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from grader.cli.main import main as arena
from grader.common.metrics import INTERVAL_ENVIRONMENTS_FLOOR
from grader.rounds.results import dump_yaml, load_games
from grader.site import build
from grader.verification.verify import recompute
from tests.site.goldens import DATA_COMMIT, FIXTURES

pytestmark = pytest.mark.timeout(120)
LADDER = "ladder-51a798c1f2"


def new_method_round(rounds: Path) -> dict:
    """The fixture ladder round in `rounds`, with standings as a round now writes them; `old`
    holds each agent's interval by the first arena's method (Wilson over the games)."""
    rounds.mkdir()
    shutil.copy(FIXTURES / "rounds" / f"{LADDER}.yaml", rounds)
    shutil.copytree(FIXTURES / "rounds" / LADDER, rounds / LADDER)
    doc = yaml.safe_load((rounds / f"{LADDER}.yaml").read_text())
    games = load_games(rounds / f"{LADDER}.yaml", doc)
    for a in doc["agents"]:
        a["standing"].pop("method", None)  # a round that names no method: Wilson over the games
    old = {a["name"]: a["standing"]["interval"] for a in recompute(doc, games)["agents"]}
    for a in doc["agents"]:
        a["standing"]["method"] = INTERVAL_ENVIRONMENTS_FLOOR
    fresh = {a["name"]: a["standing"] for a in recompute(doc, games)["agents"]}
    for a in doc["agents"]:
        a["standing"] = fresh[a["name"]]
    (rounds / f"{LADDER}.yaml").write_text(dump_yaml(doc), encoding="utf-8")
    return {"doc": doc, "old": old}


def test_verify_recomputes_the_interval_the_round_names(tmp_path, capsys):
    made = new_method_round(tmp_path / "rounds")
    doc, old = made["doc"], made["old"]
    widths = [
        (a["standing"]["interval"][1] - a["standing"]["interval"][0], old[a["name"]][1] - old[a["name"]][0])
        for a in doc["agents"]
    ]
    assert all(new >= was for new, was in widths), widths  # eight environments: wider than Wilson over games
    path = tmp_path / "rounds" / f"{LADDER}.yaml"
    assert arena(["verify", str(path)]) == 0
    # The old interval under the new method's name does not verify, and the message names it.
    doc["agents"][0]["standing"]["interval"] = old[doc["agents"][0]["name"]]
    path.write_text(dump_yaml(doc), encoding="utf-8")
    capsys.readouterr()
    assert arena(["verify", str(path)]) == 1
    assert "standing.interval" in capsys.readouterr().err


def test_the_pages_say_what_the_interval_is(tmp_path):
    new_method_round(tmp_path / "rounds")
    config = tmp_path / "site.yaml"
    config.write_text(
        f"schema_version: 1\nseries:\n  name: Small\n  rounds:\n    - {{id: {LADDER}, date: 2026-10-01}}\n"
    )
    out = tmp_path / "out"
    build(
        tmp_path / "rounds", out, docs_dir=FIXTURES / "docs", config=config, data_commit=DATA_COMMIT, log=lambda m: None
    )
    for page in (out / "index.html", out / "rounds" / f"{LADDER}.html"):
        text = page.read_text()
        assert "95% interval (over environments)" in text and "(Wilson)" not in text
        assert "each environment one observation" in text
        assert "copies of one game between deterministic agents count as one environment" in text
