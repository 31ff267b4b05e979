"""The staff's season commands and guards: the final's date, a round's dispatch inputs checked
before its field is taken, and a final that ranks nobody refused unless forced."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from grader.cli.main import main
from grader.season.competition import load_competition
from tests.github.conftest import CONFIG, REGISTRY, STAFF

pytestmark = pytest.mark.timeout(60)
FIXTURES = Path(__file__).resolve().parents[1] / "site" / "fixtures" / "rounds"


def config_file(tmp_path, **changes) -> Path:
    path = tmp_path / "competition.yaml"
    path.write_text("# kept\n" + yaml.safe_dump(CONFIG | changes, sort_keys=False))
    return path


def test_set_the_final_date(tmp_path, capsys):
    path = config_file(tmp_path, final_at=None)
    base = ["competition", "--config", str(path), "--now", "2026-12-01T12:00:00Z", "set", "--final-at"]
    assert main(base + ["2026-12-14T09:00:00Z"]) == 0
    assert "final_at: 2026-12-14T09:00:00Z" in capsys.readouterr().out
    assert load_competition(path).final_at.isoformat() == "2026-12-14T09:00:00+00:00"
    assert path.read_text().startswith("# kept\n")
    assert main(base + ["2026-12-14 09:00"]) == 1
    assert "has no time zone" in capsys.readouterr().err
    assert main(base + ["2026-12-02T12:00:00Z"]) == 1  # its freeze (48 h before) has passed
    assert "the field would freeze at 2026-11-30T12:00:00Z" in capsys.readouterr().err
    frozen = [
        "competition",
        "--config",
        str(path),
        "--now",
        "2026-12-13T00:00:00Z",
        "set",
        "--final-at",
        "2026-12-24T09:00:00Z",
    ]
    assert main(frozen) == 1
    assert "the field froze at 2026-12-12T09:00:00Z" in capsys.readouterr().err
    assert load_competition(path).final_at.isoformat() == "2026-12-14T09:00:00+00:00"


def test_dispatch_inputs_checked_before_the_field(tmp_path, capsys):
    path = config_file(tmp_path)
    base = ["dispatch", "--config", str(path), "--now", "2026-12-15T00:00:00Z"]
    assert main(base + ["--tier", "ladder", "--budget", "2000", "--shards", "4"]) == 0
    assert (
        capsys.readouterr().out.strip() == "round inputs: OK: ladder tier, budget 2000, 28 environments over 4 shards"
    )
    assert main(base + ["--tier", "final", "--budget", "10.0", "--envs", "final-01,final-02", "--shards", "2"]) == 0
    capsys.readouterr()
    assert main(base + ["--tier", "finals", "--budget", "2000", "--shards", "4"]) == 1
    assert "tier: 'finals' is not one round.yml plays" in capsys.readouterr().err
    assert (
        main(
            base + ["--tier", "ladder", "--budget", "2e3.5", "--envs", "ladder-01,ladder-40,ladder-01", "--shards", "0"]
        )
        == 1
    )
    err = capsys.readouterr().err
    for expected in (
        "budget: expected a positive integer, got '2e3.5'",
        "envs: 'ladder-40' is not the id or name",
        "envs: 'ladder-01' is listed twice",
        "shards: expected a positive integer, got '0'",
    ):
        assert expected in err
    assert main(base + ["--tier", "public", "--budget", "10", "--envs", "3", "--shards", "4"]) == 1
    assert "shards: 4 shards for 3 environments" in capsys.readouterr().err
    early = ["dispatch", "--config", str(path), "--now", "2026-12-13T00:00:00Z"]
    assert main(early + ["--tier", "final", "--budget", "2000", "--shards", "4"]) == 1
    assert "tier: the final is at 2026-12-14T09:00:00Z" in capsys.readouterr().err


def test_the_round_workflow_checks_its_inputs_before_taking_the_field():
    workflow = (Path(__file__).resolve().parents[2] / ".github" / "workflows" / "round.yml").read_text()
    steps = yaml.safe_load(workflow)["jobs"]["field"]["steps"]
    runs = [step.get("run", "") for step in steps]
    check = next(i for i, r in enumerate(runs) if 'arena" dispatch' in r)
    field = next(i for i, r in enumerate(runs) if 'arena" field' in r)
    assert check < field and '--shards "$SHARDS"' in runs[check]


@pytest.mark.parametrize(
    "fixture, refused, reasons",
    [
        ("public-ad9894db26", True, ["is private (played on 2 environments", "has no standing (a field of 3"]),
        ("ladder-6ee91850e0", True, ["has no standing (a field of 1"]),
        ("final-2148ae60c8", False, []),
    ],
)
def test_a_final_that_ranks_nobody_needs_force(tmp_path, capsys, fixture, refused, reasons):
    rounds = tmp_path / "rounds"
    rounds.mkdir()
    round_id = "final-" + fixture.partition("-")[2]  # the fixture's data under a final's id
    data = yaml.safe_load((FIXTURES / f"{fixture}.yaml").read_text())
    data["round"]["tier"] = "final"  # publish-final reads the tier, its privacy and its standing
    (rounds / f"{round_id}.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    final = {"status": "pending_review", "round_id": round_id, "published_at": None, "published_by": None}
    path = config_file(tmp_path, final=final)
    registry = tmp_path / "accounts.yaml"
    registry.write_text(yaml.safe_dump(REGISTRY))
    publish = [
        "competition",
        "--config",
        str(path),
        "--now",
        "2026-12-15T12:00:00Z",
        "publish-final",
        "--rounds",
        str(rounds),
        "--actor-id",
        str(STAFF[0]),
        "--accounts",
        str(registry),
    ]
    assert main(publish) == (1 if refused else 0)
    err = capsys.readouterr().err
    for reason in reasons:
        assert reason in err
    if refused:
        assert "publish it anyway with --force" in err
        assert load_competition(path).final.status == "pending_review"
        assert main(publish + ["--force"]) == 0
        assert "publishing with --force although" in capsys.readouterr().err
    assert load_competition(path).final.status == "published"
