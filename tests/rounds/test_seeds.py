"""Publishing the ladder and final seeds after the competition ended, and `arena verify`
checking a round's seed commitment against them: what staff and an auditor read."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from grader.cli.main import main
from tests.site.make_fixtures import FINAL_TIER_SEED, LADDER_TIER_SEED

pytestmark = pytest.mark.timeout(120)
FIXTURES = Path(__file__).resolve().parents[1] / "site" / "fixtures"
SEEDS = {"ARENA_LADDER_SEED": LADDER_TIER_SEED, "ARENA_FINAL_SEED": FINAL_TIER_SEED}


def ladder_round(tmp_path: Path) -> Path:
    rounds = tmp_path / "rounds"
    rounds.mkdir()
    path = next(
        p
        for p in sorted((FIXTURES / "rounds").glob("ladder-*.yaml"))
        if yaml.safe_load(p.read_text())["round"]["standing_published"]
    )
    shutil.copy(path, rounds / path.name)
    shutil.copytree(FIXTURES / "rounds" / path.stem, rounds / path.stem)
    return rounds / path.name


def publish(tmp_path, state: str, monkeypatch, seeds=SEEDS) -> int:
    for name, value in seeds.items():
        monkeypatch.setenv(name, value)
    return main(
        [
            "competition",
            "--config",
            str(FIXTURES / f"competition-{state}.yaml"),
            "--now",
            "2026-12-26T03:17:00Z",
            "publish-seeds",
            "--out",
            str(tmp_path / "seeds" / "published.yaml"),
        ]
    )


def test_the_seeds_stay_secret_until_the_competition_has_ended(tmp_path, monkeypatch, capsys):
    assert publish(tmp_path, "running", monkeypatch) == 1
    assert (
        "seeds: the competition has not ended (the final has not been published): the seeds stay secret until it has"
    ) in capsys.readouterr().err
    assert not (tmp_path / "seeds").exists()


def test_published_seeds_let_verify_check_the_commitment(tmp_path, monkeypatch, capsys):
    results = ladder_round(tmp_path)
    assert publish(tmp_path, "ended", monkeypatch) == 0
    out = capsys.readouterr().out
    assert "seeds: published the final and ladder seeds to" in out
    doc = yaml.safe_load((tmp_path / "seeds" / "published.yaml").read_text())
    assert doc["tier_seeds"] == {"ladder": LADDER_TIER_SEED, "final": FINAL_TIER_SEED}
    assert main(["verify", str(results)]) == 0
    err = capsys.readouterr().err
    assert "verify: note: the tier seed commitment matches the published ladder seed" in err
    assert "the ladder round withholds its environments: they are checked against the seed with --private" in err


def test_a_published_seed_binds_an_open_ladder_rounds_environments(tmp_path):
    """An open-rules ladder round states its environments: the published seed must draw them
    (from the round's generator pool), and a seed that draws others is a difference naming
    the first environment."""
    from grader.rounds.orchestrate import run_round
    from grader.verification.verify import Difference, check_published_seed_tier
    from tests.rounds.conftest import field, small_plan

    plan = small_plan(
        field(references=("random", "greedy")),
        envs="1",
        tier="ladder",
        tier_seed="8301",
        budget=2,
        checkpoints=(0, 2),
        ladder_rules="public",
    )
    outcome = run_round(plan, tmp_path / "rounds", tmp_path / "private", command="test")
    data = yaml.safe_load(outcome.public_path.read_text())
    assert check_published_seed_tier(data, "8301") == (
        "its 1 environments are ones the published ladder seed draws from generator pool 2"
    )
    with pytest.raises(
        Difference,
        match=r"environments\[0\] \(E01\): env-\w+ is not an environment of the "
        r"ladder tier that the published seed draws from generator pool 2",
    ):
        check_published_seed_tier(data, "8302")


def test_a_seed_that_does_not_match_the_commitment_is_a_difference(tmp_path, monkeypatch, capsys):
    results = ladder_round(tmp_path)
    assert publish(tmp_path, "ended", monkeypatch, {**SEEDS, "ARENA_LADDER_SEED": "not-the-seed"}) == 0
    capsys.readouterr()
    assert main(["verify", str(results)]) == 1
    err = capsys.readouterr().err
    assert "DIFFERENT: provenance.tier_seed_commitment: the file says sha256:" in err
    assert "the published ladder seed commits to sha256:" in err


def test_a_missing_secret_is_named(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("ARENA_FINAL_SEED", raising=False)
    assert publish(tmp_path, "ended", monkeypatch, {"ARENA_LADDER_SEED": "x"}) == 1
    assert "seeds: ARENA_FINAL_SEED not set: the seeds come from the workflow's secrets" in capsys.readouterr().err


def test_the_daily_step_before_the_end_says_so_and_changes_nothing(tmp_path, monkeypatch, capsys):
    for name, value in SEEDS.items():
        monkeypatch.setenv(name, value)
    code = main(
        [
            "competition",
            "--config",
            str(FIXTURES / "competition-running.yaml"),
            "publish-seeds",
            "--if-ended",
            "--out",
            str(tmp_path / "seeds" / "published.yaml"),
        ]
    )
    assert code == 0 and not (tmp_path / "seeds").exists()
    assert "seeds: not published: the competition has not ended" in capsys.readouterr().err


def test_the_workflow_publishes_the_seeds_in_one_step_after_closing():
    workflow = yaml.safe_load(
        (Path(__file__).resolve().parents[2] / ".github" / "workflows" / "competition.yml").read_text()
    )
    steps = workflow["jobs"]["update"]["steps"]
    names = [s.get("name") for s in steps]
    close = names.index("Close the competition when the appeal window has closed")
    publish_step = steps[close + 1]
    assert publish_step["run"] == "arena competition publish-seeds --if-ended"
    assert set(publish_step["env"]) == {"ARENA_LADDER_SEED", "ARENA_FINAL_SEED"}
    seeds = ("secrets.ARENA_LADDER_SEED", "secrets.ARENA_FINAL_SEED")
    assert sum(any(seed in str(s) for seed in seeds) for s in steps) == 1  # no other step sees a seed
    assert "git add -- seeds" in steps[close + 2]["run"]
