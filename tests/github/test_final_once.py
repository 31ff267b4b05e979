"""The final is played once, and staff invalidate a result with a reason: the commands as staff
run them, and what a student who tries them gets."""

from __future__ import annotations

import pytest
import yaml

from grader.cli.main import main
from grader.season.competition import load_competition, load_invalidations
from tests.github.conftest import ALICE, CONFIG, REGISTRY, STAFF

pytestmark = pytest.mark.timeout(60)
PENDING = {"status": "pending_review", "round_id": "final-0123456789", "published_at": None, "published_by": None}
DISPATCH = ["--now", "2026-12-14T10:00:00Z", "--tier", "final", "--budget", "2000", "--envs", "", "--shards", "4"]


@pytest.fixture
def files(tmp_path):
    (tmp_path / "accounts.yaml").write_text(yaml.safe_dump(REGISTRY))
    path = tmp_path / "competition.yaml"
    path.write_text(yaml.safe_dump(CONFIG | {"final": PENDING}, sort_keys=False))
    return tmp_path


def test_a_second_final_is_refused_before_the_field_naming_the_pending_one(files, capsys):
    config = str(files / "competition.yaml")
    assert main(["dispatch", "--config", config, *DISPATCH]) == 1
    err = capsys.readouterr().err
    assert "round final-0123456789 is pending review; it is run once" in err, err
    assert "arena competition rerun-final --reason" in err  # what staff do when it failed
    # And the merge job's record of a final refuses another round over the pending one.
    with pytest.raises(Exception, match="final-0123456789 is pending review"):
        load_competition(files / "competition.yaml").final_committed("final-fedcba9876")
    # The same round recorded again (a re-run merge job) is not a second final.
    again = load_competition(files / "competition.yaml").final_committed("final-0123456789")
    assert again.final.status == "pending_review"


def test_staff_set_a_failed_final_aside_with_a_reason_recorded(files, capsys):
    config = str(files / "competition.yaml")
    base = [
        "competition",
        "--config",
        config,
        "--now",
        "2026-12-14T12:00:00Z",
        "rerun-final",
        "--accounts",
        str(files / "accounts.yaml"),
    ]
    assert main(base + ["--reason", "runner lost power", "--actor-id", str(ALICE[0])]) == 1
    assert "is not staff" in capsys.readouterr().err
    assert main(base + ["--reason", "  ", "--actor-id", str(STAFF[0])]) == 1
    assert "say why" in capsys.readouterr().err
    assert load_competition(files / "competition.yaml").final.status == "pending_review"  # unchanged
    assert main(base + ["--reason", "runner lost power", "--actor-id", str(STAFF[0])]) == 0
    assert "dispatch round.yml with tier=final" in capsys.readouterr().out
    competition = load_competition(files / "competition.yaml")
    assert competition.final.status == "not_run"
    assert competition.final.reruns == (
        {"round_id": "final-0123456789", "reason": "runner lost power", "by": STAFF[0], "at": "2026-12-14T12:00:00Z"},
    )
    assert main(["dispatch", "--config", config, *DISPATCH]) == 0  # now it may be played again
    # The record survives the next final's recording and its publication.
    recorded = competition.final_committed("final-fedcba9876")
    assert recorded.final.reruns == competition.final.reruns
    # A published final is never set aside.
    published = CONFIG | {
        "final": PENDING | {"status": "published", "published_at": "2026-12-15T00:00:00Z", "published_by": STAFF[0]}
    }
    (files / "competition.yaml").write_text(yaml.safe_dump(published, sort_keys=False))
    assert main(base + ["--reason", "second thoughts", "--actor-id", str(STAFF[0])]) == 1
    assert "a published final is never run again" in capsys.readouterr().err


def test_staff_invalidate_a_result_with_a_reason(files, tmp_path, capsys):
    rounds = tmp_path / "rounds"
    rounds.mkdir()
    (rounds / "ladder-0123456789.yaml").write_text(yaml.safe_dump({"field": [{"name": "alice"}, {"name": "bob"}]}))
    record = tmp_path / "config" / "invalidations.yaml"
    base = [
        "competition",
        "--config",
        str(files / "competition.yaml"),
        "--now",
        "2026-12-01T10:00:00Z",
        "invalidate",
        "--round",
        "ladder-0123456789",
        "--rounds",
        str(rounds),
        "--invalidations",
        str(record),
        "--accounts",
        str(files / "accounts.yaml"),
    ]
    assert main(base + ["--handle", "alice", "--reason", "read the rules", "--actor-id", str(ALICE[0])]) == 1
    assert "only staff invalidate" in capsys.readouterr().err
    assert main(base + ["--handle", "zed", "--reason", "x", "--actor-id", str(STAFF[0])]) == 1
    assert "'zed' is not an entrant" in capsys.readouterr().err
    assert main(base + ["--handle", "alice", "--reason", "read the rules", "--actor-id", str(STAFF[0])]) == 0
    assert "the site strikes the result through" in capsys.readouterr().out
    (item,) = load_invalidations(record)
    assert (item.round, item.handle, item.reason, item.by) == (
        "ladder-0123456789",
        "alice",
        "read the rules",
        STAFF[0],
    )
    assert main(base + ["--handle", "alice", "--reason", "again", "--actor-id", str(STAFF[0])]) == 1
    assert "already invalidated" in capsys.readouterr().err
