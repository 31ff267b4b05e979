"""The registry, the competition config and the request log: validated, every problem by path."""

from __future__ import annotations

import copy
import datetime as dt
import os
from pathlib import Path

import pytest
import yaml

from grader.cli.main import main
from grader.documents.submission import load_submission
from grader.documents.yaml_io import DocumentError
from grader.season.accounts import check_change, parse_registry, registry_from_text
from grader.season.competition import load_competition, parse_competition
from grader.season.quota import parse_log
from tests.github.conftest import ALICE, CONFIG, REGISTRY, STAFF

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(30)


def test_registry_lists_every_problem_by_path():
    bad = {
        "schema_version": 2,
        "extra": 1,
        "accounts": {
            "abc": {"login": "x", "handle": "x", "approved": True, "staff": False},
            5: {"login": "bad login!", "handle": "Upper", "approved": "yes"},
            6: {"login": "ok", "handle": "dup", "approved": True, "staff": False},
            7: {"login": "ok2", "handle": "dup", "approved": True, "staff": False},
        },
    }
    with pytest.raises(DocumentError) as err:
        parse_registry(bad)
    problems = err.value.problems
    for expected in (
        "schema_version: must be 1",
        "extra: unknown field",
        "accounts.abc: the key must be",
        "accounts.5.staff: missing",
        "accounts.5.login: 'bad login!'",
        "accounts.5.handle: 'Upper'",
        "accounts.5.approved: expected boolean",
        "accounts.7.handle: 'dup' is already",
    ):
        assert any(p.startswith(expected) for p in problems), (expected, problems)


def test_registry_refuses_a_repeated_id():
    text = (
        "schema_version: 1\naccounts:\n  1001: {login: a, handle: a, approved: true, staff: false}\n"
        "  1001: {login: b, handle: b, approved: true, staff: false}\n"
    )
    with pytest.raises(DocumentError, match="appears twice"):
        registry_from_text(text, "accounts.yaml")


def test_the_committed_registry_and_config_are_valid():
    assert main(["accounts", "check", str(ROOT / "accounts.yaml")]) == 0
    assert load_competition(ROOT / "config" / "competition.yaml").final_at is None


def test_staff_may_approve_but_never_change_a_handle_or_remove_an_account():
    base = parse_registry(REGISTRY)
    head = copy.deepcopy(REGISTRY)
    head["accounts"][1003]["approved"] = True
    assert check_change(base, parse_registry(head), STAFF[0]) == []
    assert "only staff may edit" in check_change(base, parse_registry(head), ALICE[0])[0]
    del head["accounts"][ALICE[0]]
    assert "removed" in check_change(base, parse_registry(head), STAFF[0])[0]


def test_accounts_check_cli_against_base(tmp_path, capsys):
    base, head = tmp_path / "base.yaml", tmp_path / "head.yaml"
    base.write_text(yaml.safe_dump(REGISTRY))
    changed = copy.deepcopy(REGISTRY)
    changed["accounts"][ALICE[0]]["handle"] = "alicia"
    head.write_text(yaml.safe_dump(changed))
    assert main(["accounts", "check", str(head), "--base", str(base), "--author-id", str(STAFF[0])]) == 1
    assert "a handle is chosen once and never changes" in capsys.readouterr().err
    assert main(["accounts", "require-staff", "--id", str(STAFF[0]), "--registry", str(base)]) == 0
    assert main(["accounts", "require-staff", "--id", str(ALICE[0]), "--registry", str(base)]) == 1


def test_config_problems_by_path():
    bad = copy.deepcopy(CONFIG) | {"final_at": "2026-12-14T09:00:00", "freeze_hours": -1, "ended": True}
    bad["final"] = {"status": "published", "round_id": None, "published_at": None, "published_by": "prof"}
    with pytest.raises(DocumentError) as err:
        parse_competition(bad)
    text = "\n".join(err.value.problems)
    for expected in (
        "final_at: '2026-12-14T09:00:00' has no time zone",
        "freeze_hours: must be > 0",
        "final.round_id: a final that is published names its round",
        "final.published_by: expected",
        "final: a published final records",
    ):
        assert expected in text


def test_final_review_appeals_and_end(tmp_path):
    path = tmp_path / "competition.yaml"
    path.write_text("# kept comment\n" + yaml.safe_dump(CONFIG, sort_keys=False))
    now = "2026-12-15T12:00:00Z"
    rounds = tmp_path / "rounds"
    rounds.mkdir()
    (rounds / "final-0123abcdef.yaml").write_text(
        yaml.safe_dump({"schema_version": 1, "round": {"tier": "final"}, "field": []})
    )
    (rounds / "ladder-0123abcdef.yaml").write_text(
        yaml.safe_dump(
            {"schema_version": 1, "round": {"tier": "ladder"}, "field": [{"name": "alice", "account": "alice"}]}
        )
    )
    pending = ["competition", "--config", str(path), "--now", now, "final-pending", "--rounds", str(rounds)]
    # The final is only a final-tier round that exists, after its date.
    assert main(pending + ["--round", "ladder-0123abcdef"]) == 1
    assert main(pending + ["--round", "final-99999999"]) == 1
    assert (
        main(
            [
                "competition",
                "--config",
                str(path),
                "--now",
                "2026-12-13T12:00:00Z",
                "final-pending",
                "--rounds",
                str(rounds),
                "--round",
                "final-0123abcdef",
            ]
        )
        == 1
    )
    assert load_competition(path).final.status == "not_run"
    assert main(pending + ["--round", "final-0123abcdef", "--repo-dir", str(tmp_path / "no-repo")]) == 1  # no history
    assert main(pending + ["--round", "final-0123abcdef", "--repo-dir", str(_frozen_repo(tmp_path))]) == 1  # no field
    (rounds / "final-0123abcdef.yaml").write_text(
        yaml.safe_dump(
            {
                "schema_version": 1,
                "round": {"tier": "final"},
                "field": [{"name": "alice", "account": "alice", "digest": "sha256:x"}],
            }
        )
    )
    assert main(pending + ["--round", "final-0123abcdef", "--repo-dir", str(_frozen_repo(tmp_path))]) == 1  # digest
    digest = load_submission(_frozen_repo(tmp_path) / "submissions" / "alice").digest
    (rounds / "final-0123abcdef.yaml").write_text(
        yaml.safe_dump(
            {
                "schema_version": 1,
                "round": {"tier": "final"},
                "field": [{"name": "alice", "account": "alice", "digest": digest}],
            }
        )
    )
    assert main(pending + ["--round", "final-0123abcdef", "--repo-dir", str(_frozen_repo(tmp_path))]) == 0
    publish = ["competition", "--config", str(path), "--now", now, "publish-final", "--rounds", str(rounds)]
    assert main(publish + ["--actor-id", str(ALICE[0]), "--accounts", str(ROOT / "accounts.yaml")]) == 1  # not staff
    registry = tmp_path / "accounts.yaml"
    registry.write_text(yaml.safe_dump(REGISTRY))
    # The final on 0 environments with a field of 1 is private and ranks nobody: refused, unless forced.
    assert main(publish + ["--actor-id", str(STAFF[0]), "--accounts", str(registry)]) == 1
    assert load_competition(path).final.status == "pending_review"
    assert main(publish + ["--actor-id", str(STAFF[0]), "--accounts", str(registry), "--force"]) == 0
    competition = load_competition(path)
    assert competition.final.status == "published" and competition.phase(dt.datetime.now(dt.UTC)) == "appeals"
    assert main(["competition", "--config", str(path), "--now", "2026-12-22T11:59:59Z", "close"]) == 0
    assert not load_competition(path).ended
    assert main(["competition", "--config", str(path), "--now", "2026-12-22T12:00:00Z", "close"]) == 0
    assert load_competition(path).ended and path.read_text().startswith("# kept comment\n")


def test_check_frozen(tmp_path):
    path = tmp_path / "competition.yaml"
    path.write_text(yaml.safe_dump(CONFIG))
    assert main(["competition", "--config", str(path), "--now", "2026-12-12T08:59:59Z", "check-frozen"]) == 0
    assert main(["competition", "--config", str(path), "--now", "2026-12-12T09:00:00Z", "check-frozen"]) == 1


def test_request_log_problems_by_path():
    bad = {
        "schema_version": 1,
        "requests": [
            {
                "id": "x",
                "account_id": 0,
                "handle": "a",
                "pull_request": 1,
                "commit": "abc",
                "requested_at": "yesterday",
                "status": "done",
                "round_id": None,
            }
        ],
    }
    with pytest.raises(DocumentError) as err:
        parse_log(bad)
    text = "\n".join(err.value.problems)
    for expected in (
        "requests[0].id",
        "requests[0].account_id",
        "requests[0].commit",
        "requests[0].status",
        "requests[0].requested_at",
    ):
        assert expected in text


def _frozen_repo(tmp_path):
    """A main whose history has alice's submission before the freeze (2026-12-12T09:00Z)."""
    import subprocess

    root = tmp_path / "frozen"
    if root.exists():
        return root
    (root / "submissions").mkdir(parents=True)
    (root / "accounts.yaml").write_text(yaml.safe_dump(REGISTRY))
    from tests.github.conftest import agent_files

    for rel, data in agent_files("alice").items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    env = {
        "GIT_AUTHOR_DATE": "2026-12-10T10:00:00Z",
        "GIT_COMMITTER_DATE": "2026-12-10T10:00:00Z",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@x",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@x",
    }
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-q", "-m", "before the freeze"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=os.environ | env)
    return root


def test_a_rerun_by_someone_not_staff_is_refused(tmp_path, hub, capsys, monkeypatch):
    """GITHUB_ACTOR_ID survives a re-run: the triggering actor (resolved by the API) is checked too."""
    monkeypatch.setenv("GITHUB_API_URL", hub.api)
    hub.users.update({STAFF[0]: STAFF[1], ALICE[0]: ALICE[1]})
    registry = tmp_path / "accounts.yaml"
    registry.write_text(yaml.safe_dump(REGISTRY))
    check = ["accounts", "require-staff", "--registry", str(registry), "--id", str(STAFF[0])]
    assert main(check + ["--triggering-actor", STAFF[1]]) == 0
    assert main(check + ["--triggering-actor", ALICE[1]]) == 1
    assert "started by alice-gh (id 1001), who is not staff" in capsys.readouterr().err
    assert main(check + ["--triggering-actor", "nobody-here"]) == 1
    assert main(check + ["--triggering-actor", ""]) == 1
